"""What grading receives of an answer's result: a numpy array of objects travels from the
grading kernel as float64 when it holds real numbers only, else as an :class:`Opaque` stand-in
(:mod:`attnlab.grading.wire`). The learner's check reads a result through :func:`as_received`
so that it judges what grading judges.

Every function used here is taken when this module is imported (before any student code runs
in the grading kernel, which imports it with :mod:`attnlab.grading.wire`): rebinding a library
name later changes nothing below.
"""

from __future__ import annotations

import fractions

import numpy as np

_ndarray, _asarray = np.ndarray, np.asarray
_astype, _tolist, _ravel = np.ndarray.astype, np.ndarray.tolist, np.ndarray.ravel
_float64, _all, _tuple = np.float64, all, tuple
_isinstance, _type = isinstance, type
_dict_items = dict.items
_Fraction = fractions.Fraction
_fraction_parts = _Fraction.numerator.fget, _Fraction.denominator.fget

#: The types of the elements of an object array that travels, as float64: real numbers
#: (``np.frompyfunc(math.exp, 1, 1)`` gives an object array of floats; the learner's check reads
#: it as float64). Exact types only, so converting runs none of the student's code.
_REAL = frozenset(
    {float, int, bool, fractions.Fraction}
    | {t for t in set(np.sctypeDict.values()) if np.dtype(t).kind in "biuf"}
)


class Opaque:
    """Stands for a value of a type that does not travel (a class instance, a generator …).

    Its ``repr`` is the type's name, so a check's reason can say what came back.
    """

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        if " " in self.type_name:  # already says what it is (see OBJECTS)
            return f"<{self.type_name}>"
        return f"<{self.type_name} object>"


#: What an object array that does not travel stands for (:class:`Opaque`).
OBJECTS = "numpy array of objects that are not all real numbers"


def as_received(value, depth: int = 0):
    """``value`` as the grading process receives it from the grading kernel, as far as numpy
    arrays of objects go: one of real numbers becomes float64
    (:func:`attnlab.grading.wire.encode`), any other an :class:`Opaque`; in lists, tuples and
    dicts too.

    The learner's check reads an answer's result through this
    (:func:`attnlab.exercises.kit.calling.call`), so that it judges what grading judges: an
    object array of floats is right in both (it was 2 of 5 in grading while the learner's
    check said correct), one of strings wrong in both, with the same reason.

    >>> as_received([np.array([0.5, 1], dtype=object), 3])
    [array([0.5, 1. ]), 3]
    >>> as_received(np.array(["0.5"], dtype=object))
    <numpy array of objects that are not all real numbers>
    """
    if _isinstance(value, _ndarray) and value.dtype.kind == "O":
        array = real_numbers(_asarray(value))
        return Opaque(OBJECTS) if array is None else array
    if depth > 100:  # deeper than any answer's value: left as it is (the wire refuses it)
        return value
    if _type(value) in (list, tuple):
        items = [as_received(v, depth + 1) for v in value]
        if any(a is not b for a, b in zip(items, value, strict=True)):
            return _type(value)(items)
    elif _type(value) is dict:
        items = {k: as_received(v, depth + 1) for k, v in _dict_items(value)}
        if any(items[k] is not v for k, v in _dict_items(value)):
            return items
    return value


def fraction_parts(number):
    """A Fraction's ``(numerator, denominator)`` when it is a Fraction itself whose parts are
    exact ints, else None. ``Fraction(x)`` of a subclass ``x`` stores what its numerator
    property returned, and converting it to float (or reading a subclass's parts) ran a red
    team's code after the call was timed and watched (2026-12-07). The wire encodes a Fraction
    only from these parts.

    >>> from fractions import Fraction
    >>> fraction_parts(Fraction(1, 2)), fraction_parts(0.5)
    ((1, 2), None)
    """
    if _type(number) is not _Fraction:
        return None
    parts = _tuple([part(number) for part in _fraction_parts])
    return parts if _all([_type(part) is int for part in parts]) else None


def _plain(number) -> bool:
    """False only for a Fraction whose parts are not exact ints (:func:`fraction_parts`)."""
    return _type(number) is not _Fraction or fraction_parts(number) is not None


def real_numbers(array):
    """An object array whose elements are all real numbers (:data:`_REAL`) as float64, or
    None (it then travels as :class:`Opaque`, as any object array did before)."""
    elements = _tolist(_ravel(array))
    if not _all([_type(e) in _REAL and _plain(e) for e in elements]):
        return None
    try:
        return _astype(array, _float64)
    except (OverflowError, ValueError, TypeError):  # an int too large for a float
        return None
