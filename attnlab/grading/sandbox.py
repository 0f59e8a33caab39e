"""A sandbox for the grading kernel: what the student's answer cells can see and change.

The lint (:mod:`attnlab.exercises.rules.lint`) refuses the ways into the interpreter that it can
see, but Python is not a sandbox: a determined answer can always find a way to run arbitrary code
inside its own kernel. So the kernel that grades is started inside `bubblewrap
<https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian's package ``bubblewrap``),
where that code can do nothing that matters:

* it sees an **allow-list of the host's files**, read-only (:data:`SYSTEM_FOLDERS`, a few
  files of ``/etc`` (:data:`ETC_KEPT`), the Python runtime and the ``attnlab`` package): no
  ``/srv``, ``/var``, ``/opt``, ``/mnt``, no other course and no stray copy of the keys, wherever
  they lie; a source checkout the runtime reaches into (an editable install's folder on
  ``sys.path``) shows only its packages and its venv, never its ``.git``, keys, sources or
  tests (:func:`runtime_checkouts`); only the grading scratch folder is writable (the
  kernel's home, the request and response files, the kernel's sockets), and ``/etc/passwd``
  names only the grading user;
* the **course folder is hidden** (an empty tmpfs over it, should a runtime folder hold it),
  and so are the user's home, ``/tmp`` and the ``source/`` and ``answer_keys/`` folders beside
  the installed package;
* the kernel has **no network** (it talks to the grader over Unix sockets in the scratch
  folder) and its own **process namespace** (it cannot see or signal the grader, nor reach
  the course through ``/proc/<pid>/cwd``); it dies with the grader;
* its **environment is an allow-list** (``--clearenv``, then :func:`sandbox_environment`):
  nothing of the grader's (tokens, course paths) reaches it; the nbgrader exchange, ``/home``,
  ``/root`` and the course's ``release/ submitted/ autograded/ feedback/ source/`` are hidden;
* it has **caps** (:class:`Limits`, from ``ATTNLAB_GRADING_MEMORY``, ``_PROCESSES``, ``_DISK``,
  ``_FILES``): address space, processes (``RLIMIT_NPROC`` inside its own user namespace; a
  ``pids`` cgroup when the grader runs as root, which ``RLIMIT_NPROC`` does not bind), the size
  of any file, size-capped tmpfs for its home, ``/tmp`` and ``/dev/shm`` (the rest of ``/dev``
  is read-only), and a watchdog that kills it when its host-backed scratch folder (its
  sockets) and those tmpfs together hold more than the disk cap or more files than the files
  cap; as root it keeps no capabilities (``--cap-drop ALL``), so it cannot unmount what hides
  the course.

Where ``bwrap`` is missing or cannot make namespaces (some containers forbid it), grading
falls back to a plain kernel and logs why; ``ATTNLAB_REQUIRE_SANDBOX=1`` (or the nbgrader
option ``GradeOutsideKernel.require_sandbox``) makes that an error instead.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

#: Folders beside the installed package that hold what students must not read.
SECRET_SIBLINGS = ("source", "answer_keys", "release", "submitted", "autograded", "feedback")

#: Folders no grading kernel sees, wherever the course is: every user's home, root's home and
#: nbgrader's usual exchange (the configured one is added by :func:`hidden_folders`).
ALWAYS_HIDDEN = ("/home", "/root", "/srv/nbgrader/exchange")

#: Variables a grading kernel inherits from the grader when they are set (locale, Python's
#: own, numerics' threads); every other variable is dropped (``bwrap --clearenv``).
KEPT_VARIABLES = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "VIRTUAL_ENV",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "MKL_NUM_THREADS",
)

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def _size(text: str) -> int:
    """``"3G"`` -> 3221225472, ``"512M"``, ``"100000"``; ``"-1"`` for no cap.

    Examples
    --------
    >>> _size("3G"), _size("512m"), _size("-1")
    (3221225472, 536870912, -1)
    """
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1] if text and text[-1] in _UNITS else ""
    return int(float(text.removesuffix(unit) if unit else text) * _UNITS[unit])


@dataclass(frozen=True)
class Limits:
    """What one grading kernel may use; each from an environment variable, ``-1`` for no cap.

    Attributes
    ----------
    memory : int
        Address space in bytes (``RLIMIT_AS``; ``ATTNLAB_GRADING_MEMORY``, default ``3G``).
    processes : int
        Processes and threads (``ATTNLAB_GRADING_PROCESSES``, default 256).
    disk : int
        Bytes written: the largest file, each tmpfs (home, ``/tmp``, ``/dev/shm``), and all
        of them with the host-backed scratch folder together (``ATTNLAB_GRADING_DISK``,
        default ``256M``).
    files : int
        Files and folders made in all those places together (``ATTNLAB_GRADING_FILES``,
        default 10,000): a tmpfs caps bytes, not inodes, and an empty file takes no byte (a red
        team's 200,000 empty files passed the disk watchdog).
    """

    memory: int = 3 * 2**30
    processes: int = 256
    disk: int = 256 * 2**20
    files: int = 10_000

    @classmethod
    def from_environment(cls) -> Limits:
        """The limits set by ``ATTNLAB_GRADING_MEMORY``, ``_PROCESSES`` and ``_DISK``."""
        default = cls()
        return cls(
            *(
                _size(
                    os.environ.get(f"ATTNLAB_GRADING_{name.upper()}", str(getattr(default, name)))
                )
                for name in ("memory", "processes", "disk", "files")
            )
        )


#: Open files a kernel may hold: each pipe or socket holds kernel memory that no address-space
#: cap counts (a pipe up to 1 MiB), so their number is capped too (a kernel uses a few dozen).
OPEN_FILES = 1024

#: Sets the kernel's resource limits inside the sandbox (so ``RLIMIT_NPROC`` counts only the
#: processes of the sandbox's own user namespace), then becomes the kernel.
_LAUNCHER = (
    "import os, resource, sys\n"
    "a, n, f = (int(x) for x in sys.argv[1:4])\n"
    "for k, v in ((resource.RLIMIT_AS, a), (resource.RLIMIT_NPROC, n),"
    " (resource.RLIMIT_FSIZE, f), (resource.RLIMIT_CORE, 0)):\n"
    "    if v >= 0:\n"
    "        resource.setrlimit(k, (v, v))\n"
    "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
    f"most = {OPEN_FILES} if hard < 0 else min(hard, {OPEN_FILES})\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (most if soft < 0 else min(soft, most), most))\n"
    "os.execvp(sys.argv[4], sys.argv[4:])\n"
)


def limited(command: list[str], limits: Limits) -> list[str]:
    """``command`` run under ``limits`` (address space, processes, file size, no core file)."""
    caps = [str(limits.memory), str(limits.processes), str(limits.disk)]
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *caps, *command]


def sandbox_environment(home: Path, fonts: Path | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed kernel: :data:`KEPT_VARIABLES` that are set, an
    empty home, Agg plots, matplotlib's font list.

    Examples
    --------
    >>> env = sandbox_environment(Path("/tmp/k/home"))
    >>> env["HOME"], env["MPLBACKEND"], "ATTNLAB_ANSWER_KEYS" in env, "PATH" in env
    ('/tmp/k/home', 'agg', False, True)
    """
    env = {name: os.environ[name] for name in KEPT_VARIABLES if name in os.environ}
    env.setdefault("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update(HOME=str(home), MPLBACKEND="agg", PYTHONNOUSERSITE="1")
    # The kernel imports the attnlab the grader runs (nbgrader in a course folder that is a
    # checkout imports it from there, whatever the environment's own install points at); only
    # the package itself is visible in that folder (see bwrap_command).
    paths = [str(_package_dir().parent), *filter(None, env.get("PYTHONPATH", "").split(":"))]
    env["PYTHONPATH"] = ":".join(dict.fromkeys(paths))
    env["MPLCONFIGDIR"] = str(fonts if fonts is not None else home / ".matplotlib")
    return env


#: Variables that name the folders the grader reads keys and worked solutions from.
SECRET_VARIABLES = ("ATTNLAB_ANSWER_KEYS", "ATTNLAB_SOURCE")


def secret_folders() -> list[Path]:
    """The folders the grader reads answer keys and worked solutions from, and what holds them.

    Each folder named by :data:`SECRET_VARIABLES` (and the ones the grader falls back to, beside
    the package), its parent when that is a repository or a course (:func:`is_checkout`) below
    the top level, and the repository it lies in (the nearest folder above it with a ``.git``,
    whose history holds the keys too). Hiding them keeps a copy of the repository that sits
    outside the course folder out of a student's reach.

    Examples
    --------
    >>> import os, tempfile
    >>> repo = Path(tempfile.mkdtemp())
    >>> (repo / ".git").mkdir(); (repo / "course" / "answer_keys").mkdir(parents=True)
    >>> os.environ["ATTNLAB_ANSWER_KEYS"] = str(repo / "course" / "answer_keys")
    >>> found = secret_folders()
    >>> [p.relative_to(repo).as_posix() for p in found if _within(p, repo)]
    ['course/answer_keys', 'course', '.']
    >>> del os.environ["ATTNLAB_ANSWER_KEYS"]
    """
    from attnlab.exercises.keys import key_folder
    from attnlab.exercises.solutions import source_folder

    named = [os.environ.get(name) for name in SECRET_VARIABLES]
    folders = [Path(p) for p in named if p] + [f for f in (key_folder(), source_folder()) if f]
    found: list[Path] = []
    for folder in folders:
        folder = folder.resolve()
        found.append(folder)
        parent = folder.parent
        if len(parent.parts) > 2 and is_checkout(parent):
            found.append(parent)
        repository = next((p for p in folder.parents if (p / ".git").exists()), None)
        if repository is not None and repository != Path("/"):
            found += [repository, *_main_repository(repository)]
    return list(dict.fromkeys(found))


def _main_repository(repository: Path) -> list[Path]:
    """The repository a git worktree belongs to (its ``.git`` is a file naming a folder inside
    the main repository's ``.git``, which holds the whole history), else nothing."""
    try:
        text = (repository / ".git").read_text(encoding="utf-8")
    except OSError:  # a folder: the repository is its own
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = (repository / text.removeprefix("gitdir:").strip()).resolve()
    main = next((p.parent for p in [gitdir, *gitdir.parents] if p.name == ".git"), None)
    return [main] if main is not None and main != Path("/") else []


def hidden_folders(config=None) -> list[Path]:
    """Folders every grading kernel has hidden besides the course: :data:`ALWAYS_HIDDEN`, the
    nbgrader exchange (``Exchange.root`` in ``config``, ``ATTNLAB_EXCHANGE``), the grading
    process's working folder (nbgrader runs in the course folder), the user's home and the
    folders of answer keys and worked solutions with the repository that holds them
    (:func:`secret_folders`)."""
    found = [Path(p) for p in ALWAYS_HIDDEN] + [Path.cwd(), Path.home(), *secret_folders()]
    if os.environ.get("ATTNLAB_EXCHANGE"):
        found.append(Path(os.environ["ATTNLAB_EXCHANGE"]))
    root = _configured(config, "Exchange", "root")
    if root:
        found.append(Path(root))
    for name in ("CourseDirectory",):
        course = _configured(config, name, "root")
        if course:
            found.append(Path(course))
    return [p for p in dict.fromkeys(found) if p != Path("/")]


def _configured(config, section: str, name: str) -> str | None:
    """``config.<section>.<name>`` when ``config`` (a traitlets Config) sets it."""
    if config is None or section not in config:
        return None
    value = config[section].get(name)
    return value if isinstance(value, str) and value else None


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


#: The host's top-level folders a grading kernel sees, read-only: the system's programs and
#: libraries (on a merged-``/usr`` system ``/bin``, ``/lib`` … are links into ``/usr``, and
#: stay links). Nothing else of the host is there but :data:`ETC_KEPT` and the runtime.
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

#: What of ``/etc`` a grading kernel sees: the dynamic linker's cache and configuration, the
#: alternatives (Debian's BLAS), the time zone and the font configuration. ``passwd`` and
#: ``group`` are made for it, naming only the grading user (a hub's lists every student).
ETC_KEPT = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "timezone",
    "fonts",
    "nsswitch.conf",
)


def bwrap_command(
    scratch: Path,
    hidden: list[Path],
    env: dict[str, str] | None = None,
    limits: Limits | None = None,
) -> list[str]:
    """The ``bwrap`` arguments that put a command in the grading sandbox.

    The sandbox's root is empty; the host comes in by an allow-list, read-only:
    :data:`SYSTEM_FOLDERS`, :data:`ETC_KEPT`, the Python runtime (:func:`_runtime_binds`) and
    the ``attnlab`` package. Writes ``scratch/etc/passwd`` and ``group`` (the grading user
    only).

    Parameters
    ----------
    scratch : Path
        The only host-backed writable folder (bound at the same path inside); its ``home``
        and ``/tmp`` are size-capped tmpfs.
    hidden : list of Path
        Folders never shown (the course folder, the user's home …). A runtime folder inside
        one is mounted, unless it holds secrets or lies inside the course checkout (a
        repository's root is never mounted whole: only its ``attnlab`` package and virtual
        environment are); one that holds a hidden folder is not mounted; a hidden folder
        inside a system folder is covered by an empty tmpfs.
    env : dict, optional
        The command's whole environment (default :func:`sandbox_environment` of
        ``scratch/home``); nothing else of the caller's passes.
    limits : Limits, optional
        Size of the tmpfs (default :meth:`Limits.from_environment`).

    Returns
    -------
    list of str
        ``["bwrap", ..., "--"]``; append the command to run.

    Examples
    --------
    >>> import tempfile
    >>> cmd = bwrap_command(Path(tempfile.mkdtemp()), [Path("/home/teacher")])
    >>> cmd[:3], ("/", "/") in zip(cmd, cmd[1:]), "--clearenv" in cmd, cmd[-1]
    (['bwrap', '--ro-bind', '/usr'], False, True, '--')
    """
    package = _package_dir()
    limits = limits or Limits.from_environment()
    env = sandbox_environment(scratch / "home") if env is None else env
    hidden = [Path(h).resolve() for h in hidden] + [Path("/tmp")]
    checkout = package.parent if is_checkout(package.parent) else None
    if checkout is not None and checkout != Path("/"):
        hidden.append(checkout)  # its .git, tests, tools …: only the package comes back
    # every other checkout the runtime reaches into (an editable install's folder on sys.path,
    # a venv inside a repository): hidden whole; only its packages and the venv come back
    hidden += [c for c in runtime_checkouts() if c not in hidden]
    cmd = ["bwrap", *_system_binds(scratch)]
    # /tmp and what hides folders come before the runtime, which may lie inside them (a
    # checkout's venv in /tmp), so that the runtime is mounted over them, not hidden by them
    # /dev is read-only but its own size-capped /dev/shm: bwrap's /dev is an uncapped tmpfs
    # (half the machine's memory; a red team held 3.42 GiB there, past the memory cap)
    cmd += ["--dev", "/dev", *_tmpfs(Path("/dev/shm"), limits), "--remount-ro", "/dev"]
    cmd += ["--proc", "/proc", *_tmpfs(Path("/tmp"), limits)]
    system = [Path(f) for f in SYSTEM_FOLDERS if Path(f).is_dir() and not Path(f).is_symlink()]
    for folder in hidden:
        if folder.is_dir() and any(_within(folder, s) for s in system):
            cmd += ["--tmpfs", str(folder)]
    runtime = _runtime_binds(package, hidden, checkout)
    for folder in runtime:
        if not any(_within(folder, s) for s in system):
            cmd += ["--ro-bind", str(folder), str(folder)]
    for sibling in SECRET_SIBLINGS:
        if checkout is None and (package.parent / sibling).is_dir():
            cmd += ["--tmpfs", str(package.parent / sibling)]
    cmd += ["--unshare-all", "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:  # root in its namespace could unmount the tmpfs that hide the course
        cmd += ["--cap-drop", "ALL"]
    cmd += ["--bind", str(scratch), str(scratch)]
    cmd += [*_tmpfs(scratch / "home", limits), "--chdir", str(scratch / "home")]
    cmd += ["--clearenv"]
    for name, value in env.items():
        cmd += ["--setenv", name, value]
    return [*cmd, "--"]


def _system_binds(scratch: Path) -> list[str]:
    """:data:`SYSTEM_FOLDERS` (links kept as links), :data:`ETC_KEPT` and a ``passwd`` and
    ``group`` naming only the grading user (written under ``scratch/etc``)."""
    cmd: list[str] = []
    for name in SYSTEM_FOLDERS:
        folder = Path(name)
        if folder.is_symlink():
            cmd += ["--symlink", os.readlink(folder), name]
        elif folder.is_dir():
            cmd += ["--ro-bind", name, name]
    for name in ETC_KEPT:
        if (Path("/etc") / name).exists():
            cmd += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    etc = scratch / "etc"
    etc.mkdir(parents=True, exist_ok=True)
    uid, gid = os.getuid(), os.getgid()
    home = scratch / "home"
    (etc / "passwd").write_text(f"grader:x:{uid}:{gid}:grader:{home}:/bin/sh\n")
    (etc / "group").write_text(f"grader:x:{gid}:\n")
    for name in ("passwd", "group"):
        cmd += ["--ro-bind", str(etc / name), f"/etc/{name}"]
    return cmd


def _tmpfs(folder: Path, limits: Limits | None) -> list[str]:
    perms = ["--perms", "1777"] if folder in (Path("/tmp"), Path("/dev/shm")) else []
    if limits is not None and limits.disk > 0:
        return [*perms, "--size", str(limits.disk), "--tmpfs", str(folder)]
    return [*perms, "--tmpfs", str(folder)]


#: The sandbox's tmpfs (besides its home, ``scratch/home``) the disk watchdog counts.
SANDBOX_TMPFS = ("/tmp", "/dev/shm")


#: Files that make the package's parent folder a source checkout (with SECRET_SIBLINGS).
CHECKOUT_MARKS = (".git", "pyproject.toml", "setup.py", "setup.cfg")

#: Folders of a checkout never mounted back, even when a runtime path points into them.
CHECKOUT_SECRETS = (".git", "tests", "tools", "docs", "notebooks", *SECRET_SIBLINGS)


def is_checkout(folder: Path) -> bool:
    """Whether ``folder`` (the installed package's parent) is a source checkout: it has a
    ``.git``, a ``pyproject.toml`` … or any of :data:`SECRET_SIBLINGS` (an editable install);
    ``site-packages`` is not."""
    names = (*CHECKOUT_MARKS, *SECRET_SIBLINGS)
    return any((folder / name).exists() for name in names)


def _venv_in(checkout: Path) -> Path | None:
    """The virtual environment the grader runs from, when it lies inside ``checkout``."""
    prefix = Path(sys.prefix).resolve()
    if prefix == checkout or not _within(prefix, checkout):
        return None
    if prefix.relative_to(checkout).parts[0] in CHECKOUT_SECRETS:
        return None
    return prefix


def _checkout_of(folder: Path) -> Path | None:
    """The source checkout ``folder`` is or lies in (the nearest of it and its parents that
    :func:`is_checkout`, below the top level), else None. ``site-packages`` and
    ``dist-packages`` folders and what they hold are never checkouts."""
    for candidate in [folder, *folder.parents]:
        if candidate.name in ("site-packages", "dist-packages"):
            return None
        if len(candidate.parts) > 2 and is_checkout(candidate):
            return candidate
    return None


def runtime_checkouts() -> list[Path]:
    """The source checkouts the Python runtime reaches into: each folder of
    :func:`_runtime_dirs` that is one or lies in one (:func:`_checkout_of`): an editable
    install's folder on ``sys.path`` (a git checkout with its ``.git``, ``answer_keys/``,
    ``source/`` and ``tests/``), a virtual environment inside a repository.

    None of them is ever mounted whole in the sandbox (a red team read a second checkout's
    answer keys from a student's cell: the grader's editable install put it on ``sys.path``);
    :func:`_runtime_binds` mounts only its Python packages and the venv inside it."""
    found = [_checkout_of(folder) for folder in _runtime_dirs()]
    return list(dict.fromkeys(f for f in found if f is not None))


def _checkout_packages(checkout: Path) -> list[Path]:
    """The Python packages at the top of ``checkout`` (folders with an ``__init__.py``), but
    none of :data:`CHECKOUT_SECRETS` nor a hidden folder: what an editable install of it
    imports."""
    try:
        entries = sorted(checkout.iterdir())
    except OSError:
        return []
    return [
        e
        for e in entries
        if e.is_dir()
        and not e.is_symlink()
        and e.name not in CHECKOUT_SECRETS
        and not e.name.startswith(".")
        and (e / "__init__.py").is_file()
    ]


def _runtime_binds(package: Path, hidden: list[Path], checkout: Path | None = None) -> list[Path]:
    """The runtime folders to mount read-only, outermost first: the folders Python starts and
    imports from (:func:`_runtime_dirs`) and the package; inside a source ``checkout`` (the
    package's, or any the runtime reaches into: :func:`runtime_checkouts`) only its packages
    and the virtual environment the grader runs from. Never ``/``, nor a folder that holds a
    hidden one (a repository's root, the course, ``/tmp``), nor one inside a hidden folder
    that holds :data:`SECRET_SIBLINGS`."""
    found = []
    checkouts = [c for c in [checkout, *runtime_checkouts()] if c is not None]
    for place in dict.fromkeys(checkouts):
        venv = _venv_in(place)
        if venv is not None:
            found.append(venv)
    for folder in _runtime_dirs():
        place = next((c for c in checkouts if _within(folder, c)), None)
        if place is not None and folder != Path("/"):
            if place == checkout and folder.name not in ("site-packages", "dist-packages"):
                continue  # the package's own checkout: only the package and the venv
            if folder == place:  # an editable install's folder: only its packages
                found += _checkout_packages(place)
            elif folder.relative_to(place).parts[0] in CHECKOUT_SECRETS:
                pass
            elif not any((place / s).is_dir() for s in SECRET_SIBLINGS):
                found.append(folder)  # e.g. a Python inside a pyenv checkout
            elif folder.name in ("site-packages", "dist-packages") or (
                (venv := _venv_in(place)) is not None and _within(folder, venv)
            ):  # a venv's packages inside the course's checkout (the grader's, or one whose
                # site-packages another Python adds to its path, as a hub's shared one may)
                found.append(folder)
            # any other folder of a course's checkout on the path (a script folder a tool put
            # there, such as benchmarks/) stays hidden: only packages and the venv come in
            continue
        if folder == Path("/") or any(_within(h, folder) for h in hidden):
            continue
        inside = any(_within(folder, h) for h in hidden)
        if inside and any((folder / s).is_dir() for s in SECRET_SIBLINGS):
            continue
        found.append(folder)
    found.append(package)
    found = sorted(set(found), key=lambda p: len(p.parts))
    return [f for i, f in enumerate(found) if not any(_within(f, g) for g in found[:i])]


@functools.cache
def unavailable(
    userns_sysctl: str = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
) -> str | None:
    """Why the sandbox cannot be used here, or None when it can (checked once per process).

    Where bwrap fails and ``userns_sysctl`` reads 1 (Ubuntu 23.10 and later: AppArmor lets no
    unconfined program make a user namespace), the reason names that and the fix: the AppArmor
    profile for bwrap that ``deploy/tljh/setup.sh`` installs.
    """
    if shutil.which("bwrap") is None:
        return "bwrap (Debian's package bubblewrap) is not installed"
    probe = Path(tempfile.mkdtemp(prefix="attnlab-probe-"))
    (probe / "home").mkdir()
    try:
        result = subprocess.run(
            [
                *bwrap_command(probe, []),
                *limited([sys.executable, "-c", "import numpy, attnlab"], Limits()),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not start: {error}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if result.returncode != 0:
        why = f"bwrap could not start a sandboxed Python: {result.stderr.strip()[-500:]}"
        try:
            restricted = Path(userns_sysctl).read_text().strip() == "1"
        except OSError:
            restricted = False
        if restricted:
            bwrap = shutil.which("bwrap")
            why += (
                ". AppArmor restricts unprivileged user namespaces here "
                "(kernel.apparmor_restrict_unprivileged_userns = 1, as on "
                "Ubuntu 23.10 and later) and bwrap needs them. Give bwrap a profile that allows "
                "them (deploy/tljh/setup.sh does), as root: printf 'abi <abi/4.0>,\\n"
                f"include <tunables/global>\\nprofile bwrap {bwrap} flags=(unconfined) "
                "{\\n  userns,\\n}\\n' "
                "> /etc/apparmor.d/bwrap && apparmor_parser -r /etc/apparmor.d/bwrap"
            )
        return why
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


#: Where a ``pids`` cgroup can be made for a kernel (cgroup v1, then v2), when the grader runs
#: as root: ``RLIMIT_NPROC`` never binds root (its processes are the kernel's ``INIT_USER``).
PIDS_CGROUPS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def _pids_cgroup(name: str, processes: int) -> Path | None:
    """A new ``pids`` cgroup capped at ``processes``, or None where none can be made."""
    if os.geteuid() != 0 or processes < 0:
        return None
    for base in PIDS_CGROUPS:
        if not (base / "cgroup.procs").exists():
            continue
        if base.name != "pids" and "pids" not in _read(base / "cgroup.subtree_control"):
            continue
        try:
            folder = base / name
            folder.mkdir()
            (folder / "pids.max").write_text(str(processes))
        except OSError:
            shutil.rmtree(base / name, ignore_errors=True)
            continue
        return folder
    return None


#: Whether :func:`process_cap` has said that the process cap cannot be enforced (said once).
_SAID_NO_PIDS_CGROUP = False


def process_cap(name: str, processes: int, log=None) -> Path | None:
    """:func:`_pids_cgroup`, and when grading as root without one, a warning (once per
    grading process, on ``log``, else the ``attnlab.grading`` logger): the process cap is
    then not enforced, as ``RLIMIT_NPROC`` does not bind root."""
    global _SAID_NO_PIDS_CGROUP
    folder = _pids_cgroup(name, processes)
    if folder is None and os.geteuid() == 0 and processes >= 0 and not _SAID_NO_PIDS_CGROUP:
        _SAID_NO_PIDS_CGROUP = True
        places = ", ".join(str(p) for p in PIDS_CGROUPS)
        (log or logging.getLogger("attnlab.grading")).warning(
            "Grading as root without a pids cgroup (none could be made under %s): the cap of "
            "%d processes per grading kernel (ATTNLAB_GRADING_PROCESSES) is NOT enforced, "
            "because RLIMIT_NPROC does not bind root, so a fork bomb in a submission can use "
            "up the machine's processes. Grade as an ordinary user, or give this process a "
            "writable pids cgroup.",
            places,
            processes,
        )
    return folder


def threads_in_tree(root: int) -> int | None:
    """Threads of process ``root`` and of every process below it (read from ``/proc``, as the
    host sees them: nothing inside a sandbox can change that count), or None when ``root``
    is gone or ``/proc`` cannot be read.

    Examples
    --------
    >>> import os
    >>> threads_in_tree(os.getpid()) >= 1
    True
    """
    parents: dict[int, int] = {}
    threads: dict[int, int] = {}
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return None
    for name in entries:
        fields = _read(Path("/proc") / name / "stat").rsplit(")", 1)
        if len(fields) != 2 or len(fields[1].split()) < 18:
            continue  # gone meanwhile
        rest = fields[1].split()  # from the state on: state, ppid, … num_threads is the 18th
        parents[int(name)], threads[int(name)] = int(rest[1]), int(rest[17])
    if root not in threads:
        return None
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += threads.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _in_cgroup(folder: Path, command: list[str]) -> list[str]:
    """``command`` started inside the cgroup ``folder`` (it and all it forks stay there)."""
    join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
    return ["/bin/sh", "-c", join, str(folder), *command]


def _remove_cgroup(folder: Path | None) -> None:
    for _ in range(50):  # its processes are killed with the kernel; the folder empties soon
        if folder is None or not folder.exists():
            return
        try:
            folder.rmdir()
        except OSError:
            threading.Event().wait(0.1)


def _disk_used(folder: Path, most_files: int = -1) -> tuple[int, int]:
    """Bytes the files under ``folder`` take (symbolic links not followed) and how many files
    and folders there are; the count stops once past ``most_files`` (when not -1)."""
    total, files, stack = 0, 0, [folder]
    while stack and not 0 <= most_files < files:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        files += len(entries)
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total, files


def _in_sandbox(root: int) -> int | None:
    """A process below ``root`` that lives in another mount namespace (the sandbox's), whose
    ``/proc/<pid>/root`` is the sandbox's root as the host reaches it; None if none is."""
    try:
        own = os.readlink("/proc/self/ns/mnt")
        entries = [int(e.name) for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return None
    parents = {}
    for pid in entries:
        fields = _read(Path(f"/proc/{pid}/stat")).rsplit(")", 1)
        if len(fields) == 2 and len(fields[1].split()) > 1:
            parents[pid] = int(fields[1].split()[1])
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            if os.readlink(f"/proc/{pid}/ns/mnt") != own:
                return pid
        except OSError:
            pass
        stack += [child for child, parent in parents.items() if parent == pid]
    return None


def tmpfs_used(pid: int, places) -> tuple[int, int]:
    """Bytes and files (inodes but each root's own) the tmpfs mounted at ``places`` hold in
    the mount namespace of process ``pid`` (``statvfs`` through ``/proc/<pid>/root``)."""
    total = files = 0
    for place in places:
        try:
            stat = os.statvfs(f"/proc/{pid}/root{place}")
        except OSError:
            continue
        total += (stat.f_blocks - stat.f_bfree) * stat.f_frsize
        files += max(stat.f_files - stat.f_ffree - 1, 0)
    return total, files


def _matplotlib_cache() -> Path | None:
    """The grading user's matplotlib cache folder (its font list), if there is one."""
    try:
        import matplotlib

        folder = Path(matplotlib.get_cachedir())
    except Exception:  # noqa: BLE001 - no matplotlib, no cache: the kernel builds its own
        return None
    return folder if folder.is_dir() else None


try:
    from jupyter_client.manager import AsyncKernelManager as _AsyncKernelManager
    from jupyter_client.manager import KernelManager as _KernelManager
    from jupyter_core.utils import run_sync
except ImportError:  # pragma: no cover - grading needs jupyter_client; the numerics do not
    _KernelManager = _AsyncKernelManager = object

    def run_sync(coroutine):
        return coroutine


class _Sandboxed:
    """What both sandboxed kernel managers share: scratch folder, command, limits, watchdog."""

    #: Seconds between two looks at the scratch folder's size.
    watch_interval = 0.5

    def __init__(self, **kwargs):
        self.scratch = Path(tempfile.mkdtemp(prefix="attnlab-kernel-"))
        self.extra_hidden: list[Path] = []
        self.limits = Limits.from_environment()
        #: Why the kernel was killed by its limits (None while it was not).
        self.stopped_because: str | None = None
        self._cgroup: Path | None = None
        self._watching = threading.Event()
        kwargs.setdefault("transport", "ipc")  # no network in the sandbox: Unix sockets
        kwargs.setdefault("ip", str(self.scratch / "kernel"))
        kwargs.setdefault("connection_file", str(self.scratch / "kernel.json"))
        super().__init__(**kwargs)

    def running_threads(self) -> int | None:
        """Threads of the kernel and every process it started, or None when unknown
        (:func:`threads_in_tree`)."""
        process = getattr(getattr(self, "provisioner", None), "process", None)
        return None if process is None else threads_in_tree(process.pid)

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
        hidden = [*hidden_folders(getattr(self, "config", None)), *self.extra_hidden]
        env = sandbox_environment(home, fonts)
        prefix = bwrap_command(self.scratch, hidden, env, self.limits)
        command = [*prefix, *limited(cmd, self.limits)]
        _remove_cgroup(self._cgroup)
        self._cgroup = process_cap(self.scratch.name, self.limits.processes, self.log)
        if self._cgroup is not None:
            command = _in_cgroup(self._cgroup, command)
        self._watch()
        return command

    def _watch(self) -> None:
        """Kill the kernel once what it wrote holds more than the disk cap, or more files than
        the files cap: its host-backed scratch folder (its sockets; no tmpfs caps it) and the
        sandbox's tmpfs (home, ``/tmp``, ``/dev/shm``: each capped in bytes by its size, but
        not in files, nor all together), read from the host through ``/proc/<pid>/root``."""
        self._watching.set()
        stop = self._watching = threading.Event()
        if self.limits.disk < 0 and self.limits.files < 0:
            return
        places = [str(self.scratch / "home"), *SANDBOX_TMPFS]

        def watch():
            inside = None
            while not stop.wait(self.watch_interval):
                used, files = _disk_used(self.scratch, self.limits.files)
                process = getattr(getattr(self, "provisioner", None), "process", None)
                if inside is None and process is not None and self.sandboxed:
                    inside = _in_sandbox(process.pid)
                if inside is not None:
                    more_bytes, more_files = tmpfs_used(inside, places)
                    used, files = used + more_bytes, files + more_files
                why = None
                if 0 <= self.limits.disk < used - 64 * 2**20:  # + the font list and sockets
                    why = f"it wrote more than {self.limits.disk // 2**20} MiB to disk"
                elif 0 <= self.limits.files < files:
                    why = f"it made more than {self.limits.files:,} files"
                if why is not None:
                    self.stopped_because = why
                    if process is not None:
                        process.kill()
                    return

        threading.Thread(target=watch, name="attnlab-disk-watch", daemon=True).start()

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        # In the sandbox ``--clearenv`` leaves only the allow-list; without it (a grader that
        # set ATTNLAB_REQUIRE_SANDBOX=0) the kernel inherits the grader's environment, minus
        # at least the variables that say where the keys and worked solutions are.
        env = kw.get("env", os.environ)
        kw["env"] = {k: v for k, v in env.items() if k not in SECRET_VARIABLES}
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_interrupt_kernel(self) -> None:
        """Interrupt the kernel by asking it to (an ``interrupt_request`` on its control
        channel, which ipykernel answers by sending itself ``SIGINT``): ``bwrap`` passes no
        signal on to the kernel it runs, so the usual ``SIGINT`` never arrived and every cell
        past its time limit had its kernel killed, and the cells after it were not run."""
        if not (self.has_kernel and self.sandboxed):
            await super()._async_interrupt_kernel()
            return
        msg = self.session.msg("interrupt_request", content={})
        self._connect_control_socket()
        self.session.send(self._control_socket, msg)

    async def _async_cleanup_resources(self, restart=False):
        # jupyter_client's shutdown awaits this coroutine itself, never the synchronous
        # ``cleanup_resources`` wrapper: overriding only the wrapper left every scratch folder
        # (home, sockets, font list) behind in the temporary folder, hundreds per CI run.
        await super()._async_cleanup_resources(restart=restart)
        self._watching.set()
        _remove_cgroup(self._cgroup)
        self._cgroup = None
        if not restart:
            shutil.rmtree(self.scratch, ignore_errors=True)


class SandboxedKernelManager(_Sandboxed, _KernelManager):
    """A jupyter_client kernel manager whose kernel runs in the sandbox, with its limits.

    Used for the course's clean grading kernel (:class:`attnlab.grading.remote.CleanKernel`);
    nbgrader's ``Execute`` step, which is asynchronous, uses
    :class:`AsyncSandboxedKernelManager` (:class:`attnlab.grading.execute.LimitedExecute`).

    Each kernel gets a scratch folder of its own (its sockets, a copy of matplotlib's font
    list so no font cache is rebuilt; its home is a capped tmpfs inside), removed when the
    kernel is shut down. The folders it must not see are :func:`hidden_folders` (the grading
    process's working folder, homes, the exchange) and :attr:`extra_hidden`. Where the
    sandbox cannot be made, the kernel runs plainly with a warning, or not at all when
    ``ATTNLAB_REQUIRE_SANDBOX=1``.
    """

    cleanup_resources = run_sync(_Sandboxed._async_cleanup_resources)
    interrupt_kernel = run_sync(_Sandboxed._async_interrupt_kernel)


class AsyncSandboxedKernelManager(_Sandboxed, _AsyncKernelManager):
    """:class:`SandboxedKernelManager` for asynchronous clients (nbclient, nbgrader's Execute):
    with a synchronous manager nbclient's reads block its event loop, and its cell timeout
    never fires."""

    cleanup_resources = _Sandboxed._async_cleanup_resources
    interrupt_kernel = _Sandboxed._async_interrupt_kernel
