"""Calling a learner's function: on copies of its inputs, stopped after :data:`CALL_LIMIT`,
watched for forbidden calls and numpy warnings, its failures turned into feedback."""

from __future__ import annotations

import contextlib
import contextvars
import copy
import threading
import time
import warnings

import numpy as np

from attnlab.exercises.kit.display import short
from attnlab.exercises.kit.feedback import NOT_ATTEMPTED_TEXT, finished
from attnlab.exercises.kit.outcomes import Forbidden, NotAttempted, Wrong
from attnlab.exercises.rules.forbidden import forbidden_codes, forbidden_now, watching
from attnlab.exercises.rules.received import as_received

#: Longest one call of a learner's function may take (seconds), in the learner's check and in
#: grading (:data:`attnlab.grading.remote.CALL_TIMEOUT` is this number).
CALL_LIMIT = 20.0


#: How long the call being made may run (seconds); see :func:`stop_now`.
_STOP: contextvars.ContextVar[float] = contextvars.ContextVar("stop", default=CALL_LIMIT)


def stop_now() -> float:
    """How long the call being made may run (seconds): :data:`CALL_LIMIT`, or the shorter
    limit its check set (``limit`` of :func:`call_watching`). A function timed where it runs
    (``timed_elsewhere``: grading's :class:`~attnlab.grading.remote.RemoteFunction`) stops
    the call there after this long, as the learner's check stops it here.

    Examples
    --------
    >>> stop_now()
    20.0
    """
    return _STOP.get()


def is_stub(answer) -> bool:
    """True for answers that are still placeholders: ``None`` or ``...``."""
    return answer is None or answer is Ellipsis


class _OverCallLimit(BaseException):
    """A learner's call ran past :data:`CALL_LIMIT` (a BaseException: ``except Exception`` in
    the answer does not swallow it)."""


class OverTimeLimit(Wrong):
    """A call took longer than the shorter time limit its check set (``limit`` of
    :func:`call_watching`): in the learner's check it was stopped there, in grading it was
    timed (or stopped at :data:`CALL_LIMIT`). ``limit`` is that time (seconds); a check's
    ``failed`` says what should have cost less."""

    def __init__(self, message: str, limit: float):
        super().__init__(message)
        self.limit = float(limit)


@contextlib.contextmanager
def _stopped_after(seconds: float):
    """Stop the block with :class:`_OverCallLimit` after ``seconds``, as grading stops a call.

    Uses the real-time interval timer, so only in the main thread (where a notebook runs its
    cells) and only when no other timer is running; elsewhere the block runs to its end and
    :func:`call` says afterwards that it took too long.
    """
    try:
        import signal

        usable = (
            threading.current_thread() is threading.main_thread()
            and hasattr(signal, "setitimer")
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0
        )
    except (ImportError, ValueError):
        usable = False
    if not usable or seconds <= 0:
        yield
        return

    def over(signum, frame):
        raise _OverCallLimit

    previous = signal.signal(signal.SIGALRM, over)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


def call(function, *args, **kwargs):
    """Call a learner's function on copies of the inputs and turn its failures into feedback.

    Raises
    ------
    NotAttempted
        The function still raises ``NotImplementedError`` (the exercise stub).
    Wrong
        It is not callable, raised another exception, returned ``None``, or changed its inputs.
    """
    return _call(function, args, kwargs, None)


def _call(function, args, kwargs, limit):
    """:func:`call`; with a ``limit`` (seconds, below :data:`CALL_LIMIT`) a call that takes
    longer raises :class:`OverTimeLimit`: stopped there where the check times it, judged by
    its time (or grading's stop at :data:`CALL_LIMIT`) where it is timed elsewhere."""
    limit = None if limit is None or limit >= CALL_LIMIT else float(limit)
    stop = CALL_LIMIT if limit is None else limit
    if not callable(function):
        raise Wrong(f"Expected a function, got {type(function).__name__} {function!r}.")
    shown = ", ".join([short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()])
    before = copy.deepcopy((args, kwargs))
    # what the exercise forbids, found before the clock starts: the first check of an
    # exercise walks the course for it (about 1 s for 9.1), which is not the answer's time
    codes = forbidden_codes(forbidden_now())
    began = time.monotonic()
    timed_here = not getattr(function, "timed_elsewhere", False)
    stopping = _STOP.set(stop)
    try:
        with (
            _stopped_after(stop) if timed_here else contextlib.nullcontext(),
            watching(codes),
        ):
            result = function(*args, **kwargs)
    except _OverCallLimit:
        if limit is not None:
            raise _over(limit, shown) from None
        raise Wrong(
            f"Your function was still running after {CALL_LIMIT:g} s for ({shown}), so the "
            f"check stopped it: grading stops any call after {CALL_LIMIT:g} s and gives such "
            "an answer nothing, right numbers or not, so this check stops it at the same "
            "limit. Look for work done again and again in a loop, or a Python loop over "
            "single numbers that numpy could do on a whole row at once."
        ) from None
    except NotImplementedError as exc:
        raise NotAttempted(NOT_ATTEMPTED_TEXT) from exc
    except KeyboardInterrupt as exc:
        exc.in_answer = True  # the learner's function was running: the check's message says so
        raise
    except Forbidden as exc:
        raise Wrong(
            f"Your function calls {exc}, which this exercise asks you not to use: the point is "
            "to write that step yourself with numpy."
        ) from None
    except Exception as exc:
        stopped = isinstance(exc, TimeoutError) and not timed_here  # grading's stop
        if stopped and limit is not None and time.monotonic() - began > limit:
            raise _over(limit, shown) from None
        said = f": {exc}" if str(exc) else ""
        raise Wrong(
            finished(f"Calling your function with ({shown}) raised {type(exc).__name__}{said}")
        ) from exc
    finally:
        _STOP.reset(stopping)
    took = time.monotonic() - began
    ran = None if timed_here else getattr(function, "last_seconds", None)
    if ran is not None:  # the call alone, as the process that ran it timed it
        took = ran
    if limit is not None and took > limit:
        raise _over(limit, shown)
    if took > CALL_LIMIT and timed_here:  # where the check could not stop it (not the main thread)
        raise Wrong(
            f"Your function took {took:.0f} s for ({shown}). The right numbers are not enough "
            f"here: grading stops any call after {CALL_LIMIT:g} s, so this answer would earn "
            "nothing. Look for work done again and again in a loop, or a Python loop over "
            "single numbers that numpy could do on a whole row at once."
        )
    if result is None:
        raise Wrong(f"Your function returned None for ({shown}). Did you forget `return`?")
    if not _same((args, kwargs), before):
        raise Wrong(f"Your function changed its input ({shown}); compute a new array instead.")
    return as_received(result)  # an object array as grading receives it


def _over(limit: float, shown: str) -> OverTimeLimit:
    return OverTimeLimit(
        f"Your function took longer than {limit:.2g} s for ({shown}), the most this check "
        "allows it: the right numbers are not enough when the work takes far longer than it "
        "should.",
        limit,
    )


def call_watching(function, *args, limit: float | None = None):
    """:func:`call`, also returning the numpy warnings the learner's function caused.

    Divide-by-zero, invalid (``inf - inf``, ``0 · -inf``) and overflow are recorded,
    underflow is ignored (``exp(-1000) == 0`` is correct), and nothing escapes to the
    notebook: the checks report the messages in their reason (see :func:`warned`). A ``limit``
    (seconds) shorter than :data:`CALL_LIMIT` holds the call to that time, in the learner's
    check and in grading alike (:class:`OverTimeLimit`).

    Examples
    --------
    >>> result, messages = call_watching(lambda x: np.exp(x), np.array([1000.0]))
    >>> messages
    ['overflow encountered in exp']
    """
    with (
        warnings.catch_warnings(record=True) as caught,
        np.errstate(divide="warn", invalid="warn", over="warn", under="ignore"),
    ):
        warnings.simplefilter("always")
        result = _call(function, args, {}, limit)
    messages = sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})
    return result, messages


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b
