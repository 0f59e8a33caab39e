"""A fresh kernel that holds a student's answers, and functions that call into it.

:class:`CleanKernel` starts a kernel no student code has touched, imports
:mod:`attnlab.grading.worker` there first, then runs the cells it is given (the lesson's own
cells and the student's linted answer cells). :class:`RemoteFunction` looks like the student's
function to a check: calling it sends the arguments to the kernel and brings back the value,
or raises what the function raised, re-emits its warnings and copies back any change it made
to its inputs, so every check works on it unchanged.
"""

from __future__ import annotations

import builtins
import os
import pickle
import tempfile
import warnings
from pathlib import Path

import numpy as np

from attnlab.exercises.core import Forbidden, forbidden_now
from attnlab.grading.wire import decode

#: Longest a single call of a student's function may take (seconds).
CALL_TIMEOUT = 20.0
#: Longest one cell may take while the kernel is set up (seconds).
CELL_TIMEOUT = 120.0


class RemoteError(Exception):
    """An exception raised inside the student's function whose type is not a builtin."""


def _exception(type_name: str, message: str) -> BaseException:
    kind = getattr(builtins, type_name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except TypeError:  # an exception class that wants other arguments
            pass
    return type(type_name, (RemoteError,), {})(message)


def _copy_back(original, changed) -> None:
    """Make ``original`` (an argument the check still holds) equal ``changed``, in place."""
    if isinstance(original, np.ndarray) and isinstance(changed, np.ndarray):
        if original.shape == changed.shape:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.copyto(original, changed, casting="unsafe")
        elif original.size > 0:
            original.flat[0] = original.flat[0] + 1  # shape changed: mark it changed
    elif isinstance(original, list) and isinstance(changed, list):
        original[:] = changed
    elif isinstance(original, dict) and isinstance(changed, dict):
        original.clear()
        original.update(changed)


#: Environment variables the grading kernel keeps (numerics and locale); everything else,
#: the course's paths to its sources and answer keys included, stays out of its reach.
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV",
                  "SYSTEMROOT", "TMPDIR", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                  "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "MKL_NUM_THREADS")


def kernel_environment(home: Path) -> dict[str, str]:
    """The grading kernel's environment: :data:`KEPT_VARIABLES`, an empty home, Agg plots.

    Examples
    --------
    >>> env = kernel_environment(Path("/tmp/empty"))
    >>> env["HOME"], env["MPLBACKEND"], "ATTNLAB_ANSWER_KEYS" in env
    ('/tmp/empty', 'agg', False)
    """
    env = {name: os.environ[name] for name in KEPT_VARIABLES if name in os.environ}
    env.update(HOME=str(home), MPLBACKEND="agg", MPLCONFIGDIR=_matplotlib_cache(home))
    return env


def _matplotlib_cache(home: Path) -> str:
    """Matplotlib's font cache of the grading user (nothing secret in it; rebuilding it would
    cost every grading kernel seconds), else a folder in ``home``."""
    try:
        import matplotlib

        return matplotlib.get_cachedir()
    except Exception:  # noqa: BLE001 - no matplotlib or no writable cache: start afresh
        return str(home / ".matplotlib")


class CleanKernel:
    """A kernel started for grading one notebook; use as a context manager.

    Parameters
    ----------
    cwd : path
        The assignment's folder in the instructor's course. The kernel does not run there: it
        runs in an empty folder of its own, with an environment that names no course path
        (:func:`kernel_environment`), so an answer has nothing near it to read.
    """

    def __init__(self, cwd):
        self.cwd = Path(cwd)
        self._folder = tempfile.TemporaryDirectory(prefix="attnlab-grading-")
        self._calls = 0

    def __enter__(self) -> CleanKernel:
        from jupyter_client.manager import start_new_kernel

        home = Path(self._folder.name) / "home"
        home.mkdir()
        self.manager, self.client = start_new_kernel(
            kernel_name="python3", cwd=str(home), env=kernel_environment(home))
        status, error = self.run("import attnlab.grading.worker as __attnlab_worker__")
        if status != "ok":
            self.__exit__(None, None, None)
            raise RuntimeError(f"the grading kernel could not import its worker: {error}")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.client.stop_channels()
            self.manager.shutdown_kernel(now=True)
        finally:
            self._folder.cleanup()

    def run(self, code: str, timeout: float = CELL_TIMEOUT) -> tuple[str, str]:
        """Run ``code``; return ``("ok", "")`` or ``("error", "Type: message")``.

        Output is discarded; a cell that runs past ``timeout`` is interrupted.
        """
        try:
            reply = self.client.execute_interactive(
                code, timeout=timeout, store_history=False, allow_stdin=False,
                output_hook=lambda message: None)
        except TimeoutError:
            self.manager.interrupt_kernel()
            try:  # collect the interrupted reply so the next request starts clean
                self.client.get_shell_msg(timeout=10)
            except Exception:  # noqa: BLE001 - nothing to collect
                pass
            return "error", f"TimeoutError: still running after {timeout:.0f} s"
        content = reply["content"]
        if content["status"] == "ok":
            return "ok", ""
        return "error", f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"

    def call(self, name: str, args: tuple, kwargs: dict, forbidden=()) -> dict:
        """Call the kernel's ``name(*args, **kwargs)``; the worker's report, as a dict."""
        self._calls += 1
        folder = Path(self._folder.name)
        request = folder / f"request-{self._calls}.pickle"
        response = folder / f"response-{self._calls}.json"
        with open(request, "wb") as file:
            pickle.dump((args, kwargs, np.geterr(), tuple(forbidden)), file)
        status, error = self.run(
            f"__attnlab_worker__.serve({name!r}, {str(request)!r}, {str(response)!r})",
            timeout=CALL_TIMEOUT)
        if error.startswith("TimeoutError"):
            return {"status": "raised", "type": "TimeoutError",
                    "message": f"it was still running after {CALL_TIMEOUT:.0f} s",
                    "not_implemented": False}
        if not response.exists():
            return {"status": "raised", "type": "RuntimeError",
                    "message": f"the call could not be made ({error or 'no report'})",
                    "not_implemented": False}
        import json

        return json.loads(response.read_text(encoding="utf-8"))


class RemoteFunction:
    """The student's function ``name`` in a :class:`CleanKernel`, callable from a check.

    Parameters
    ----------
    kernel : CleanKernel
    name : str
        The function's name in the kernel (the name the grade cell passes to ``check``).
    forbidden : sequence of str
        Functions the exercise forbids (``"attnlab.softmax"``, or a notebook name); calling one
        raises :class:`~attnlab.exercises.core.Forbidden`. By default, the list of the
        exercise being checked when the call is made.
    """

    def __init__(self, kernel: CleanKernel, name: str, forbidden=None):
        self.kernel = kernel
        self.__name__ = name
        self.forbidden = forbidden

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args, **kwargs):
        forbidden = forbidden_now() if self.forbidden is None else self.forbidden
        report = self.kernel.call(self.__name__, args, kwargs, forbidden)
        if report["status"] == "missing":
            raise NameError(f"name {self.__name__!r} is not defined (its cell did not run)")
        for category, message in report.get("warnings", []):
            kind = getattr(builtins, category, None)
            if not (isinstance(kind, type) and issubclass(kind, Warning)):
                kind = UserWarning
            warnings.warn(message, kind, stacklevel=2)
        if report.get("mutated"):
            changed_args, changed_kwargs = decode(report["args"])
            for original, changed in zip(args, changed_args, strict=False):
                _copy_back(original, changed)
            for key, original in kwargs.items():
                _copy_back(original, changed_kwargs.get(key))
        if report.get("forbidden"):
            raise Forbidden(report["forbidden"])
        if report["status"] == "raised":
            if report.get("not_implemented"):
                raise NotImplementedError(report["message"])
            raise _exception(report["type"], report["message"])
        return decode(report["result"])
