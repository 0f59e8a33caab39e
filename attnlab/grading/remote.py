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
import hashlib
import hmac
import json
import os
import pickle
import secrets
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from traitlets import Float
from traitlets.config import LoggingConfigurable

from attnlab.exercises.kit.calling import CALL_LIMIT, stop_now
from attnlab.exercises.kit.outcomes import Forbidden
from attnlab.exercises.rules.forbidden import forbidden_now
from attnlab.grading import sandbox
from attnlab.grading.wire import decode, encode

#: Longest a single call of a student's function may take (seconds): the default of
#: ``CleanKernel.call_timeout``.
CALL_TIMEOUT = CALL_LIMIT
#: What a call's round trip may add to the check's own limit (seconds) before the kernel is
#: interrupted: the request and the report written and read as files, the kernel's messages.
#: A check's limit is judged on the call alone, as the worker times it (``seconds`` in its
#: report, :attr:`RemoteFunction.last_seconds`): in a fresh-clone CI run on a busy machine a
#: right answer to 9.1 (one complex step, about 0.1 s with its round trip on the 200,000-long
#: row) was once stopped at the 2 s limit, which then held the round trip too.
TRANSPORT_ALLOWANCE = 10.0
#: Longest one cell may take while the kernel is set up (seconds): ``CleanKernel.cell_timeout``.
CELL_TIMEOUT = 120.0
#: Longest the whole grading of one notebook may take (seconds): an answer that loops and
#: swallows every interrupt costs at most this, and earns nothing. ``CleanKernel.notebook_budget``.
NOTEBOOK_BUDGET = 900.0


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


#: Environment variables the grading kernel keeps: the sandbox's (numerics and locale), and,
#: for a kernel run without the sandbox, the temporary folder and Windows' system root (the
#: sandbox has its own ``/tmp``); everything else, the course's paths to its sources and answer
#: keys included, stays out of its reach.
KEPT_VARIABLES = (*sandbox.KEPT_VARIABLES, "SYSTEMROOT", "TMPDIR")


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


class KernelDiedAtStart(RuntimeError):
    """The grading kernel's process ended before it first replied (:meth:`CleanKernel.__enter__`
    starts it once more)."""


class CleanKernel(LoggingConfigurable):
    """A kernel started for grading one notebook; use as a context manager.

    Parameters
    ----------
    cwd : path
        The assignment's folder in the instructor's course. The kernel does not run there: it
        runs in an empty folder of its own, with an environment that names no course path
        (:func:`kernel_environment`), inside the sandbox of :mod:`attnlab.grading.sandbox`
        where the course folder, the user's home and ``/tmp`` are hidden and nothing but its
        own scratch folder is writable.
    hidden : list of path, optional
        Folders the kernel must not see; by default the course folder (two levels above
        ``cwd``), the grading process's working folder and the user's home.
    sandbox : bool or None
        True: the sandbox or an error; False: a plain kernel; None (default): the sandbox
        where it can be made, else a plain kernel and a warning (unless
        ``ATTNLAB_REQUIRE_SANDBOX=1``).
    config : traitlets Config, optional
        nbgrader's configuration (``GradeOutsideKernel`` passes its own): the time limits
        below (``c.CleanKernel.call_timeout`` …) and the folders the sandbox hides
        (``Exchange.root``, ``CourseDirectory.root``) are read from it.

    Attributes
    ----------
    sandboxed : bool
        Whether the kernel runs in the sandbox.
    """

    call_timeout = Float(
        CALL_TIMEOUT,
        help="Longest one call of a student's function may take while it is checked (seconds); "
        "the call is then stopped and earns nothing. The learner's own check stops a call at "
        "attnlab.exercises.kit.calling.CALL_LIMIT (20 s) whatever this says.",
    ).tag(config=True)
    cell_timeout = Float(
        CELL_TIMEOUT,
        help="Longest one cell (a lesson cell or a student's answer cell) may run in the "
        "grading kernel (seconds); it is then stopped by restarting the kernel.",
    ).tag(config=True)
    notebook_budget = Float(
        NOTEBOOK_BUDGET,
        help="Longest the grading of one notebook may take in all (seconds); what is left "
        "after it earns nothing.",
    ).tag(config=True)

    def __init__(self, cwd, hidden=None, sandbox=None, **kwargs):
        super().__init__(**kwargs)
        self.cwd = Path(cwd)
        self.hidden = (
            [Path(h) for h in hidden]
            if hidden is not None
            else [self.cwd.resolve().parent.parent, Path.cwd(), Path.home()]
        )
        self.sandbox = sandbox
        self.sandboxed = False
        self._folder = tempfile.TemporaryDirectory(prefix="attnlab-grading-")
        self._calls = 0

    def __enter__(self) -> CleanKernel:
        self._start_time = time.monotonic()
        self._setup: list[str] = []  # the cells that ran, replayed after a restart
        self.sandboxed = sandbox.use(self.sandbox)
        try:
            try:
                self._launch()
            except KernelDiedAtStart as first:
                # once, in a fresh-clone CI run on a busy machine, a grading kernel died after
                # its banner and before its first reply (no traceback, no OOM kill): a new one
                # is started once, before any student code, so one student's grading does
                # not fail for it; a second death is reported with both logs
                try:
                    self._launch()
                except KernelDiedAtStart as second:
                    raise RuntimeError(f"{first}\nand again: {second}") from None
        except BaseException:
            self._folder.cleanup()
            raise
        return self

    def _launch(self) -> None:
        """Start the kernel and import the worker (the kernel's first and only own code)."""
        from jupyter_client.manager import KernelManager

        if self.sandboxed:
            self.manager = sandbox.SandboxedKernelManager(kernel_name="python3", config=self.config)
            self.manager.extra_hidden = [h for h in self.hidden if h != Path("/")]
            scratch = self.manager.scratch
        else:
            scratch = Path(self._folder.name)
            self.manager = KernelManager(
                kernel_name="python3",
                transport="ipc",
                ip=str(scratch / "kernel"),
                connection_file=str(scratch / "kernel.json"),
            )
        home, self._calls_dir = scratch / "home", scratch / "calls"
        for folder in (home, self._calls_dir):
            folder.mkdir(exist_ok=True)
        self._log = open(Path(self._folder.name) / "kernel.log", "wb")  # noqa: SIM115 - _stop
        self.manager.start_kernel(
            cwd=str(home), env=kernel_environment(home), stdout=self._log, stderr=subprocess.STDOUT
        )
        self.client = self.manager.client()
        self.client.start_channels()
        try:
            self.client.wait_for_ready(timeout=self.cell_timeout)
            status, error = self._execute(
                "import attnlab.grading.worker as __attnlab_worker__", self.cell_timeout
            )
            if status != "ok":
                raise RuntimeError(f"it could not import its worker: {error}")
        except (RuntimeError, TimeoutError) as problem:
            log = (Path(self._folder.name) / "kernel.log").read_text(errors="replace")[-2000:]
            self._stop()
            kind = KernelDiedAtStart if "died before replying" in str(problem) else RuntimeError
            raise kind(f"the grading kernel did not start: {problem}\n{log}") from None

    def _stop(self) -> None:
        # The kernel is shut down even when closing the channels fails: after a fresh-clone CI
        # run a sandboxed grading kernel (bwrap and its ipykernel) was found still running with
        # its scratch folder removed, so a cleanup had run without stopping it.
        try:
            try:
                self.client.stop_channels()
            finally:
                self.manager.shutdown_kernel(now=True)
        finally:
            self._log.close()

    def _restart(self) -> bool:
        """A fresh kernel with the cells that had run replayed; False if that fails too."""
        self._stop()
        try:
            self._launch()
        except RuntimeError:
            self.broken = "the grading kernel could not be restarted"
            return False
        for code in self._setup:
            status, error = self._execute(code, self._left(self.cell_timeout))
            if error.startswith("TimeoutError"):
                self.broken = "a cell that had run before got stuck when it ran again"
                return False
        return True

    def __exit__(self, *exc) -> None:
        try:
            self._stop()
        finally:
            self._folder.cleanup()

    #: Set to the reason once the kernel cannot be used any more; every later run fails.
    broken: str | None = None

    def _left(self, timeout: float) -> float:
        """``timeout``, cut to what is left of the whole notebook's :attr:`notebook_budget`."""
        return min(timeout, self.notebook_budget - (time.monotonic() - self._start_time))

    def _execute(self, code: str, timeout: float) -> tuple[str, str]:
        # silent: a cell's last expression is neither shown nor kept in IPython's output cache
        # (``_``, ``__``, ``___``, ``Out``; ``store_history=False`` alone still fills them),
        # which would count towards 8.4's memory as held: a red team's right tiled loop whose
        # answer cell ended with a try call on 4096 x 16 inputs scored 0 of 2 (552,841 bytes
        # held by ``_``) while the learner's check, which counts the names the answer cells
        # bind, said correct
        if timeout <= 0:
            return "error", "TimeoutError: the notebook's grading time is used up"
        try:
            reply = self.client.execute_interactive(
                code,
                timeout=timeout,
                silent=True,
                store_history=False,
                allow_stdin=False,
                output_hook=lambda message: None,
            )
        except TimeoutError:
            return "error", f"TimeoutError: still running after {timeout:.0f} s"
        content = reply["content"]
        if content["status"] == "ok":
            return "ok", ""
        return "error", f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"

    def run(
        self, code: str, timeout: float | None = None, remember: bool = False
    ) -> tuple[str, str]:
        """Run ``code``; return ``("ok", "")`` or ``("error", "Type: message")``.

        Output is discarded. Code still running after ``timeout`` (:attr:`cell_timeout` by
        default; or past the notebook's :attr:`notebook_budget`) is stopped by restarting the
        kernel — an interrupt can be caught, a restart cannot — and the cells run so far are
        replayed. ``remember``: this
        is a setup cell, to replay after a restart if it ran.
        """
        if self.broken:
            return "error", f"RuntimeError: {self.broken}"
        if timeout is None:
            timeout = self.cell_timeout
        status, error = self._execute(code, self._left(timeout))
        if error.startswith("TimeoutError"):
            self._restart()
        elif remember:
            self._setup.append(code)
        return status, error

    #: The key the worker signs its reports with (set by :func:`arm`); None until armed.
    report_key: str | None = None

    def call(
        self, name: str, args: tuple, kwargs: dict, forbidden=(), measure=False, timeout=None
    ) -> dict:
        """Call the kernel's ``name(*args, **kwargs)``; the worker's report, as a dict.

        The call is stopped once its round trip has taken ``timeout`` seconds (the check's
        own limit, 9.1's two seconds say) and :data:`TRANSPORT_ALLOWANCE` more, never later
        than :attr:`call_timeout`; the report's ``seconds`` is the call alone.

        The request and the response travel as files with names drawn afresh for each call,
        so an answer cannot write a report ahead of the call it would stand for; the report
        must carry the HMAC of the key given to the worker by :func:`arm` before any student
        code ran, else it is not believed. Whether the call changed its inputs is decided
        here, by comparing the arguments sent with the ones the worker read back.
        """
        if self.report_key is None:
            raise RuntimeError("arm(kernel) must run before any student code and any call")
        self._calls += 1
        folder = self._calls_dir
        nonce = secrets.token_hex(16)
        request = folder / f"request-{nonce}.pickle"
        response = folder / f"response-{nonce}.json"
        with open(request, "wb") as file:
            pickle.dump((args, kwargs, np.geterr(), tuple(forbidden), bool(measure)), file)
        limit = self.call_timeout
        if timeout is not None:
            limit = min(limit, timeout + TRANSPORT_ALLOWANCE)
        status, error = self.run(
            f"__attnlab_worker__.serve({name!r}, {str(request)!r}, {str(response)!r})",
            timeout=limit,
        )
        if error.startswith("TimeoutError"):
            return {
                "status": "raised",
                "type": "TimeoutError",
                "message": f"it was still running after {limit:g} s",
                "not_implemented": False,
            }
        try:
            report = _verified(response.read_text(encoding="utf-8"), self.report_key)
        except (OSError, ValueError) as problem:
            request.unlink(missing_ok=True)
            return {
                "status": "raised",
                "type": "RuntimeError",
                "message": f"the call could not be made ({error or problem or 'no report'})",
                "not_implemented": False,
            }
        for done in (request, response):  # each call's files go: they count towards the cap
            done.unlink(missing_ok=True)  # of files the kernel's folders may hold
        if report.get("status") != "missing":
            report["mutated"] = report.get("args") != encode((list(args), kwargs))
        return report


def _verified(text: str, key: str) -> dict:
    """The worker's report if its HMAC is right under ``key``; ValueError otherwise."""
    outer = json.loads(text)
    if not isinstance(outer, dict) or set(outer) != {"body", "mac"}:
        raise ValueError("the report is malformed")
    body, mac = outer["body"], outer["mac"]
    if not (isinstance(body, str) and isinstance(mac, str)):
        raise ValueError("the report is malformed")
    expected = hmac.new(bytes.fromhex(key), body.encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, mac):
        raise ValueError("the report was not written by the grading worker")
    report = json.loads(body)
    if not isinstance(report, dict) or report.get("status") not in ("ok", "raised", "missing"):
        raise ValueError("the report is malformed")
    return report


def arm(kernel: CleanKernel, forbidden=()) -> None:
    """Give the kernel's worker its report key and the names to forbid; run it **before any
    student code** (the worker records the forbidden functions as they are now)."""
    key = secrets.token_hex(32)
    names = sorted({str(name) for name in forbidden})
    status, error = kernel.run(
        f"__attnlab_worker__.start({key!r}, {names!r})", timeout=kernel.cell_timeout, remember=True
    )
    if status != "ok":
        raise RuntimeError(f"the grading worker could not be armed: {error}")
    kernel.report_key = key


def remember(kernel: CleanKernel, names) -> None:
    """Have the worker record the notebook functions ``names`` as a lesson cell defined them."""
    names = sorted({str(name) for name in names})
    if names:
        kernel.run(f"__attnlab_worker__.remember({names!r})", remember=True)


class RemoteFunction:
    """The student's function ``name`` in a :class:`CleanKernel`, callable from a check.

    Parameters
    ----------
    kernel : CleanKernel
    name : str
        The function's name in the kernel (the name the grade cell passes to ``check``).
    forbidden : sequence of str
        Functions the exercise forbids (``"attnlab.softmax"``, or a notebook name); calling one
        raises :class:`~attnlab.exercises.kit.outcomes.Forbidden`. By default, the list of the
        exercise being checked when the call is made.
    """

    #: Set to True to have the kernel count the bytes each call allocates (``last_peak``).
    measure = False
    #: The bytes the last call allocated, when :attr:`measure` was on, with what the student's
    #: code held when it began (:attr:`last_held`); else None.
    last_peak: int | None = None
    #: Of :attr:`last_peak`, the bytes the student's code held when the call began.
    last_held: int | None = None
    #: How long the last call ran, as the worker timed it (seconds; None when it did not
    #: say): what a check's limit is judged on (:func:`attnlab.exercises.kit.calling.call`).
    last_seconds: float | None = None
    #: Its calls are stopped where they run: after the check's limit (:func:`stop_now`) and
    #: the round trip's allowance, never later than the kernel's ``call_timeout``.
    timed_elsewhere = True

    def __init__(self, kernel: CleanKernel, name: str, forbidden=None):
        self.kernel = kernel
        self.__name__ = name
        self.forbidden = forbidden

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args, **kwargs):
        forbidden = forbidden_now() if self.forbidden is None else self.forbidden
        self.last_seconds = None
        report = self.kernel.call(
            self.__name__, args, kwargs, forbidden, self.measure, timeout=stop_now()
        )
        self.last_peak, self.last_held = report.get("peak"), report.get("held")
        seconds = report.get("seconds")
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            self.last_seconds = float(seconds)
        if report["status"] == "missing":
            raise NameError(f"name {self.__name__!r} is not defined (its cell did not run)")
        for category, message in report.get("warnings", []):
            kind = getattr(builtins, category, None)
            if not (isinstance(kind, type) and issubclass(kind, Warning)):
                kind = UserWarning
            warnings.warn(message, kind, stacklevel=2)
        if report.get("mutated") and report.get("args"):
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
