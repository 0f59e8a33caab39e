"""The course helpers that pass a check by themselves, handed in as the answer: each exercise
forbids them without naming them (``Exercise.forbidden``)."""

from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np

from attnlab.exercises.rules.forbidden import forbidden_during


def course_helpers() -> dict[str, object]:
    """Every function of the course's numerics (:data:`attnlab.course.NUMERICS`) and running
    examples (:mod:`attnlab.examples`), the modules an answer may import, that the registry
    lists for the module (``WHOLE_MODULES``) and does not keep from being tried
    (``NOT_TRIED_AS_ANSWERS``), by its qualified name (``"attnlab.softmax_family.softmax"``)."""
    from attnlab.course import NUMERICS
    from attnlab.exercises.rules.forbidden_registry import NOT_TRIED_AS_ANSWERS, WHOLE_MODULES

    found = {}
    for module_name in (*NUMERICS, "attnlab.examples"):
        module = importlib.import_module(module_name)
        for key, value in vars(module).items():
            if (
                key in WHOLE_MODULES[module_name]
                and inspect.isfunction(value)
                and value.__module__ == module_name
            ):
                found[f"{module_name}.{key}"] = value
    return {name: f for name, f in found.items() if name not in NOT_TRIED_AS_ANSWERS}


def _covered(name: str, function, declared) -> bool:
    """Whether ``declared`` already forbids ``function`` (by any of its names, or its module)."""
    short = name.rpartition(".")[2]
    module = name.rpartition(".")[0]
    for forbidden in declared:
        if forbidden in (name, module, f"attnlab.{short}"):
            return True
    return False


def helpers_that_pass(checker, declared=()) -> list[str]:
    """The course helpers that pass ``checker`` when handed in as the answer, unforbidden.

    Each public function of the numerics is tried as the learner's function on the check's
    own cases (quietly, without a forbidden list): one that is judged right computes what the
    exercise asks, so the exercise must forbid it. ``declared`` names already forbidden are
    not tried again.

    Examples
    --------
    >>> from attnlab.exercises.kit.calling import call
    >>> from attnlab.exercises.kit.judging import expect_close
    >>> def checker(answer):
    ...     expect_close(call(answer, np.array([0.0, 0.0])), [0.5, 0.5], "softmax")
    >>> [name for name in helpers_that_pass(checker) if name.endswith(".softmax")]
    ['attnlab.softmax_family.softmax']
    """
    found = []
    with forbidden_during(()):
        for name, function in course_helpers().items():
            if _covered(name, function, declared):
                continue
            if any(_passes(checker, way) for way in _ways_to_hand_in(function)):
                found.append(name)
    return found


def _ways_to_hand_in(function) -> list:
    """``function`` as an answer: as it is, and the first item of what it returns (a helper
    that returns ``(output, weights)`` answers an exercise that wants the output)."""

    def first(*args, **kwargs):
        got = function(*args, **kwargs)
        return got[0] if isinstance(got, tuple) and got else got

    return [function, first]


def _passes(checker, answer) -> bool:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            checker(answer)
    except Exception:  # noqa: BLE001 - Wrong, NotAttempted, Recorded …: not a pass
        return False
    return True
