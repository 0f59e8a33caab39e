"""A sandbox for the grading kernel: what the student's answer cells can see and change.

The lint (:mod:`attnlab.grading.lint`) refuses the ways into the interpreter that it can see,
but Python is not a sandbox: a determined answer can always find a way to run arbitrary code
inside its own kernel. So the kernel that grades is started inside `bubblewrap
<https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian's package ``bubblewrap``),
where that code can do nothing that matters:

* the whole file system is **read-only**; only the grading scratch folder is writable (the
  kernel's home, the request and response files, the kernel's sockets);
* the **course folder is hidden** (an empty tmpfs over it), and so are the user's home, ``/tmp``
  and the ``source/`` and ``answer_keys/`` folders beside the installed package; the Python
  runtime and the ``attnlab`` package are mounted back read-only;
* the kernel has **no network** (it talks to the grader over Unix sockets in the scratch
  folder) and its own **process namespace** (it cannot see or signal the grader, nor reach
  the course through ``/proc/<pid>/cwd``); it dies with the grader.

Where ``bwrap`` is missing or cannot make namespaces (some containers forbid it), grading
falls back to a plain kernel and logs why; ``ATTNLAB_REQUIRE_SANDBOX=1`` (or the nbgrader
option ``GradeOutsideKernel.require_sandbox``) makes that an error instead.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

#: Folders beside the installed package that hold what students must not read.
SECRET_SIBLINGS = ("source", "answer_keys", "release", "submitted", "autograded", "feedback")


def _package_dir() -> Path:
    import attnlab

    return Path(attnlab.__file__).resolve().parent


def _runtime_dirs() -> list[Path]:
    """The folders Python needs to start and import numpy, IPython and attnlab."""
    found = []
    for entry in [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]:
        if entry and Path(entry).is_dir():
            found.append(Path(entry).resolve())
    return found


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def bwrap_command(scratch: Path, hidden: list[Path]) -> list[str]:
    """The ``bwrap`` arguments that put a command in the grading sandbox.

    Parameters
    ----------
    scratch : Path
        The only writable folder (bound at the same path inside).
    hidden : list of Path
        Folders to cover with an empty tmpfs (the course folder, the user's home …). Runtime
        folders inside them are mounted back read-only, except ones that lie inside the course
        itself or hold secrets (a repository's root is never mounted back whole: only its
        ``attnlab`` package is).

    Returns
    -------
    list of str
        ``["bwrap", ..., "--"]``; append the command to run.

    Examples
    --------
    >>> cmd = bwrap_command(Path("/tmp/g"), [Path("/home/teacher")])
    >>> cmd[:4], "--unshare-all" in cmd, cmd[-1]
    (['bwrap', '--ro-bind', '/', '/'], True, '--')
    """
    package = _package_dir()
    hidden = [Path(h).resolve() for h in hidden] + [Path("/tmp")]
    cmd = [
        "bwrap",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        # ipykernel exits when its parent's pid is gone, and in its own pid namespace the
        # grader's pid is never there: bwrap's --die-with-parent does that job instead
        "--unsetenv",
        "JPY_PARENT_PID",
    ]
    for folder in hidden:
        if folder.is_dir():
            cmd += ["--tmpfs", str(folder)]
    for sibling in SECRET_SIBLINGS:
        if (package.parent / sibling).is_dir():
            cmd += ["--tmpfs", str(package.parent / sibling)]
    remount = []
    for folder in _runtime_dirs():
        if not any(_within(folder, h) for h in hidden):
            continue  # still visible, read-only
        holds_secrets = any((folder / s).is_dir() for s in SECRET_SIBLINGS)
        if holds_secrets or any(_within(h, folder) for h in hidden if h != Path("/tmp")):
            continue  # a repository root or the course itself: never whole
        remount.append(folder)
    if any(_within(package, h) for h in hidden):
        remount.append(package)
    for folder in sorted(set(remount), key=lambda p: len(p.parts)):
        cmd += ["--ro-bind", str(folder), str(folder)]
    cmd += ["--bind", str(scratch), str(scratch), "--chdir", str(scratch), "--"]
    return cmd


@functools.cache
def unavailable() -> str | None:
    """Why the sandbox cannot be used here, or None when it can (checked once per process)."""
    if shutil.which("bwrap") is None:
        return "bwrap (Debian's package bubblewrap) is not installed"
    probe = Path(os.environ.get("TMPDIR", "/tmp"))
    try:
        result = subprocess.run(
            [*bwrap_command(probe, []), sys.executable, "-c", "import numpy, attnlab"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not start: {error}"
    if result.returncode != 0:
        return f"bwrap could not start a sandboxed Python: {result.stderr.strip()[-500:]}"
    return None


def required() -> bool:
    """``ATTNLAB_REQUIRE_SANDBOX=1``: refuse to grade without the sandbox."""
    return os.environ.get("ATTNLAB_REQUIRE_SANDBOX") == "1"


def use(wanted: bool | None = None) -> bool:
    """Whether a grading kernel runs in the sandbox.

    ``wanted``: True, the sandbox or a RuntimeError; False, a plain kernel; None, the sandbox
    where it can be made, else a plain kernel and a warning, or a RuntimeError when
    :func:`required`.
    """
    if wanted is False:
        return False
    why = unavailable()
    if why is None:
        return True
    if wanted or required():
        raise RuntimeError(
            f"the grading sandbox is required but {why} "
            "(ATTNLAB_REQUIRE_SANDBOX=0 grades without it)"
        )
    warnings.warn(f"grading without the sandbox: {why}", RuntimeWarning, stacklevel=3)
    return False


def _matplotlib_cache() -> Path | None:
    """The grading user's matplotlib cache folder (its font list), if there is one."""
    try:
        import matplotlib

        folder = Path(matplotlib.get_cachedir())
    except Exception:  # noqa: BLE001 - no matplotlib, no cache: the kernel builds its own
        return None
    return folder if folder.is_dir() else None


try:
    from jupyter_client.manager import KernelManager as _KernelManager
    from jupyter_core.utils import run_sync
except ImportError:  # pragma: no cover - grading needs jupyter_client; the numerics do not
    _KernelManager = object

    def run_sync(coroutine):
        return coroutine


class SandboxedKernelManager(_KernelManager):
    """A jupyter_client kernel manager whose kernel runs in the sandbox.

    Used for every kernel that runs a student's code while grading: the course's clean
    grading kernel (:class:`attnlab.grading.remote.CleanKernel`) and the kernel nbgrader's own
    ``Execute`` step runs the submission in (``c.Execute.kernel_manager_class`` in the
    course's ``nbgrader_config.py``) — that one runs *everything* the student wrote.

    Each kernel gets a scratch folder of its own (its home, its sockets, a copy of
    matplotlib's font list so no font cache is rebuilt), removed when the kernel is shut down.
    The folders it must not see are the grading process's working folder (nbgrader runs in
    the course folder), the user's home and :attr:`extra_hidden`. Where the sandbox cannot be
    made, the kernel runs plainly with a warning, or not at all when
    ``ATTNLAB_REQUIRE_SANDBOX=1``.
    """

    def __init__(self, **kwargs):
        self.scratch = Path(tempfile.mkdtemp(prefix="attnlab-kernel-"))
        self.extra_hidden: list[Path] = []
        kwargs.setdefault("transport", "ipc")  # no network in the sandbox: Unix sockets
        kwargs.setdefault("ip", str(self.scratch / "kernel"))
        kwargs.setdefault("connection_file", str(self.scratch / "kernel.json"))
        super().__init__(**kwargs)

    @property
    def sandboxed(self) -> bool:
        """Whether the kernel runs in the sandbox (see :func:`use`)."""
        return use()

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if not self.sandboxed:
            return cmd
        home, fonts = self.scratch / "home", self.scratch / "matplotlib"
        home.mkdir(exist_ok=True)
        cache = _matplotlib_cache()
        if cache is not None and not fonts.exists():
            shutil.copytree(cache, fonts, ignore=shutil.ignore_patterns("*.lock"))
        fonts.mkdir(exist_ok=True)
        hidden = [Path.cwd(), Path.home(), *self.extra_hidden]
        prefix = bwrap_command(self.scratch, [h for h in hidden if h != Path("/")])
        env = [
            "--setenv",
            "HOME",
            str(home),
            "--setenv",
            "MPLCONFIGDIR",
            str(fonts),
            "--setenv",
            "MPLBACKEND",
            "agg",
        ]
        for name in ("ATTNLAB_ANSWER_KEYS", "ATTNLAB_SOURCE", "ATTNLAB_EXCHANGE"):
            env += ["--unsetenv", name]
        return [*prefix[:-1], *env, "--", *cmd]

    async def _async_cleanup_resources(self, restart=False):
        # jupyter_client's shutdown awaits this coroutine itself, never the synchronous
        # ``cleanup_resources`` wrapper: overriding only the wrapper left every scratch folder
        # (home, sockets, font list) behind in the temporary folder, hundreds per CI run.
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self.scratch, ignore_errors=True)

    cleanup_resources = run_sync(_async_cleanup_resources)
