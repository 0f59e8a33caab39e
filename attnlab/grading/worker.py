"""The kernel side of grading: call one of the student's functions and write what happened.

The grading process (:mod:`attnlab.grading.remote`) imports this module in a fresh kernel
before any student code runs there, then, for every call a check makes, runs
``serve(name, request, response)``: the arguments are read from ``request`` (a pickle the
grading process wrote), the function named ``name`` in the kernel's namespace is called, and
the outcome is written to ``response`` as JSON (:mod:`attnlab.grading.wire`): the value, or
the exception's type and message, whether the inputs were changed, the warnings raised,
whether a function the exercise forbids was called on the way and, when asked, the bytes the
call allocated (``tracemalloc``).
"""

from __future__ import annotations

import copy
import json
import pickle
import sys
import tracemalloc
import warnings

import numpy as np

from attnlab.exercises.core import forbidden_code_objects
from attnlab.grading.wire import encode


def _namespace() -> dict:
    from IPython import get_ipython

    return get_ipython().user_ns


class _Tripwire:
    """Notes the first forbidden code object entered while the student's function runs."""

    def __init__(self, codes: dict):
        self.codes = codes
        self.hit = None

    def __call__(self, frame, event, arg):
        if event == "call" and self.hit is None:
            self.hit = self.codes.get(frame.f_code)


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def serve(name: str, request: str, response: str) -> None:
    """Call ``name(*args, **kwargs)`` with the arguments in ``request``; write ``response``."""
    with open(request, "rb") as file:
        args, kwargs, errstate, forbidden, measure = pickle.load(file)
    namespace = _namespace()
    function = namespace.get(name)
    out: dict = {"status": "ok"}
    if function is None or not callable(function):
        out = {"status": "missing", "type": type(function).__name__}
    else:
        before = copy.deepcopy((args, kwargs))
        codes = forbidden_code_objects(forbidden, namespace)
        tripwire = _Tripwire(codes)
        with warnings.catch_warnings(record=True) as caught, np.errstate(**errstate):
            warnings.simplefilter("always")
            previous = sys.getprofile()
            sys.setprofile(tripwire if codes else previous)
            if measure:  # the bytes the call allocates, as tracemalloc counts them
                tracemalloc.start()
                tracemalloc.reset_peak()
                start = tracemalloc.get_traced_memory()[0]
            try:
                result = function(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - reported, never re-raised here
                out = {
                    "status": "raised",
                    "type": type(exc).__name__,
                    "message": str(exc)[:2000],
                    "not_implemented": isinstance(exc, NotImplementedError),
                }
            finally:
                sys.setprofile(previous)
                if measure:
                    peak = tracemalloc.get_traced_memory()[1] - start
                    tracemalloc.stop()
        if out["status"] == "ok":
            try:
                out["result"] = encode(result)
            except ValueError as exc:
                out = {"status": "raised", "type": "ValueError", "message": str(exc)}
            except BaseException as exc:  # noqa: BLE001 - RecursionError, MemoryError …
                out = {
                    "status": "raised",
                    "type": "ValueError",
                    "message": f"the value could not be read back ({type(exc).__name__})",
                }
        out["forbidden"] = tripwire.hit
        try:
            out["mutated"] = not _same((args, kwargs), before)
            if out["mutated"]:
                out["args"] = encode((list(args), kwargs))
        except BaseException as exc:  # noqa: BLE001 - inputs turned into something unreadable
            out = {
                "status": "raised",
                "type": "ValueError",
                "not_implemented": False,
                "message": f"it changed its inputs into something that cannot be read back "
                f"({type(exc).__name__})",
                "mutated": False,
            }
        if measure:
            out["peak"] = peak
        out["warnings"] = [[w.category.__name__, str(w.message)[:500]] for w in caught]
    with open(response, "w", encoding="utf-8") as file:
        json.dump(out, file)
