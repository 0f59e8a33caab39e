"""Forbidden calls: which code objects a forbidden name stands for, and a watch that notices
when a learner's function enters one of them.

An exercise that asks the learner to write something the library already does forbids the
library's functions (``forbidden=``); :func:`forbidden_during` sets the list for one check and
:func:`forbidding` watches one call of the learner's function.

What a forbidden name stands for is read from the registry
(:mod:`attnlab.exercises.rules.forbidden_registry`): a whole forbidden module is the functions and
classes it lists for the module; a forbidden function also forbids the helpers it computes with
and what calls into them (:mod:`attnlab.exercises.rules.reach`).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import inspect
import sys
import types

from attnlab.exercises.kit.outcomes import Forbidden
from attnlab.exercises.rules.forbidden_registry import SOFTMAX_LIBRARY, WHOLE_MODULES
from attnlab.exercises.rules.reach import codes_within, reaching_codes

__all__ = [
    "SOFTMAX_LIBRARY",
    "forbidden_code_objects",
    "forbidden_codes",
    "forbidden_during",
    "forbidden_now",
    "forbidding",
    "watching",
]

#: The functions the exercise being checked forbids (set by :func:`forbidden_during`).
_FORBIDDEN: contextvars.ContextVar[tuple] = contextvars.ContextVar("forbidden", default=())


@contextlib.contextmanager
def forbidden_during(names):
    """Forbid ``names`` to every call of a learner's function inside the block (the list
    :func:`forbidden_now` gives)."""
    token = _FORBIDDEN.set(tuple(names))
    try:
        yield
    finally:
        _FORBIDDEN.reset(token)


def forbidden_now() -> tuple:
    """The names the exercise being checked forbids (``"attnlab.softmax"``, notebook names)."""
    return _FORBIDDEN.get()


def _forbidden_codes(names) -> dict:
    """The code objects of the forbidden functions that can be found, mapped to their names."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        notebook = shell.user_ns if shell is not None else {}
    except ImportError:
        notebook = {}
    return forbidden_code_objects(names, notebook)


def forbidden_code_objects(names, namespace) -> dict:
    """Code object -> forbidden name, for every function the names stand for.

    A name is a function (``"attnlab.softmax"``), a whole module (``"attnlab.online"``: every
    function and class the registry's ``WHOLE_MODULES`` lists for it and the module defines,
    with their methods) or a name in the notebook's ``namespace`` (``"softmax_steps"``).
    Functions nested in them count too. Names that cannot be found are skipped.

    Examples
    --------
    >>> codes = forbidden_code_objects(["attnlab.online", "attnlab.softmax"], {})
    >>> sorted(set(codes.values()))
    ['attnlab.online.online_normaliser', 'attnlab.online.online_softmax', \
'attnlab.online.online_softmax_update', 'attnlab.softmax']
    """
    codes, reach = {}, []
    for name in names:
        module, _, attr = name.rpartition(".")
        targets = []
        if module:
            try:
                whole = importlib.import_module(name)
            except ImportError:
                whole = None
            if isinstance(whole, types.ModuleType):
                for key in WHOLE_MODULES.get(name, ()):
                    value = getattr(whole, key, None)
                    members = vars(value).values() if isinstance(value, type) else [value]
                    targets += [
                        (f"{name}.{getattr(m, '__name__', '?')}", m)
                        for m in members
                        if getattr(m, "__module__", None) == whole.__name__
                    ]
        if not targets:
            try:
                target = (
                    getattr(importlib.import_module(module), attr) if module else namespace[name]
                )
            except (ImportError, AttributeError, KeyError):
                continue
            targets = [(name, target)]
        for shown, target in targets:
            code = getattr(inspect.unwrap(target), "__code__", None) if callable(target) else None
            own = codes_within(code) if code is not None else ()
            for inner in own:
                codes.setdefault(inner, shown)
            if own and module:
                reach.append((shown, set(own)))
    for shown, own in reach:  # the course functions that compute the same thing
        for inner in reaching_codes(own):
            codes.setdefault(inner, shown)
    return codes


def forbidden_codes(names) -> dict:
    """The code objects the forbidden ``names`` stand for (:func:`forbidden_code_objects`,
    with the notebook's own names), mapped to their names; ``{}`` for no names."""
    return _forbidden_codes(names) if names else {}


def forbidding(names):
    """Raise :class:`Forbidden` after the block if it entered one of the functions ``names``.

    Functions that call into other processes (the grader's remote answers) enforce the same
    list themselves; this guards a learner's own kernel.
    """
    return watching(forbidden_codes(names))


@contextlib.contextmanager
def watching(codes: dict):
    """:func:`forbidding` with the code objects found already (:func:`forbidden_codes`), so a
    timed call does not pay for finding them."""
    if not codes:
        yield
        return
    hits = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code in codes and not hits:
            hits.append(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield
    finally:
        sys.setprofile(previous)
    if hits:
        raise Forbidden(hits[0])
