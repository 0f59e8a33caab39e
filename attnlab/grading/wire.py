"""Plain data between the grading process and the kernel that runs a student's answers.

Values travel as JSON: numbers, strings, lists, tuples, dicts and numeric numpy arrays, nothing
that runs code when it is read. What the kernel sends back is decoded with :func:`decode`,
which builds only those types, so an answer can influence the values a check sees and nothing
else. What an object array becomes (:class:`~attnlab.exercises.rules.received.Opaque`, or
float64 when it holds real numbers only) is decided in
:mod:`attnlab.exercises.rules.received`, which the learner's check reads too.

Examples
--------
>>> import numpy as np
>>> value = {"w": np.array([0.5, 0.5], dtype=np.float32), "n": (3, None)}
>>> back = decode(encode(value))
>>> back["w"].dtype, back["w"].tolist(), back["n"]
(dtype('float32'), [0.5, 0.5], (3, None))
>>> type(decode(encode(np.float64(-4.0)))).__name__  # numpy scalars stay numpy scalars
'float64'
>>> decode(encode(np.array([0.25, 1, np.float32(0.5)], dtype=object)))  # real numbers: floats
array([0.25, 1.  , 0.5 ])

"""

from __future__ import annotations

import base64
import binascii
import fractions
import json
import json.encoder

import numpy as np

from attnlab.exercises.rules.received import OBJECTS, Opaque, fraction_parts, real_numbers

# Everything the kernel side uses to turn a value into text is taken here, when the grading
# kernel imports this module and before any student code runs there: rebinding a library name
# later (``np.asarray = ...``, ``json.encoder.c_make_encoder = ...``) changes nothing below.
_ndarray, _generic = np.ndarray, np.generic
_asarray, _contiguous = np.asarray, np.ascontiguousarray
_tobytes = np.ndarray.tobytes
_b2a = binascii.b2a_base64
_escape = json.encoder.encode_basestring_ascii  # the C function, not a module lookup
_isinstance, _type, _len, _str = isinstance, type, len, str
_float_repr, _int_repr = float.__repr__, int.__repr__
_real, _imag = complex.real.__get__, complex.imag.__get__  # the C fields, no property of a subclass
_dict_items, _tuple, _list = dict.items, tuple, list

#: numpy dtype kinds that may travel: bool, ints, floats, complex, fixed strings.
_KINDS = "biufcU"
#: The most data one value may hold (bytes: an array's own, a string's characters, and
#: :data:`ITEM` for every value in it); a larger one is refused. The course's largest values
#: (8.4's arguments and output, 9.1's long row) are a few MB; a red team's answer returning a
#: 60 MB string took the grading process to 2.9 GB before strings and items were counted.
LIMIT = 16 * 2**20
#: What each value in a returned value counts towards :data:`LIMIT` (bytes), so ten million
#: ``None`` in a list are as large as ten million floats.
ITEM = 8


def _enc(value, budget: list[int]):
    budget[0] -= ITEM + (_str.__len__(value) if _isinstance(value, str) else 0)
    if budget[0] < 0:
        raise ValueError("the value is too large to check")
    if _isinstance(value, (_ndarray, _generic)):
        array = _asarray(value)  # a plain ndarray, whatever subclass came back
        if array.dtype.kind == "O" and array.size * ITEM <= budget[0]:
            array = real_numbers(array)
            if array is None:
                return {"opaque": OBJECTS}
        if array.dtype.kind in _KINDS:
            budget[0] -= array.nbytes
            if budget[0] < 0:
                raise ValueError("the value is too large to check")
            return {
                "array": _b2a(_tobytes(_contiguous(array)), newline=False).decode(),
                "dtype": array.dtype.str,
                "shape": [int(n) for n in array.shape],
                "scalar": _isinstance(value, _generic),
            }
    if value is None or _type(value) in (bool, str):
        return value
    if _isinstance(value, bool):
        return bool(value)
    if _isinstance(value, str):
        return _str.__str__(value)
    if _isinstance(value, int):
        return {"int": _int_repr(value)}
    if _isinstance(value, float):
        return {"float": _float_repr(value)}
    if _isinstance(value, complex):
        return {"complex": [_float_repr(_real(value)), _float_repr(_imag(value))]}
    # An exact number is a number (1/2 is 0.5), but only a Fraction itself with whole-number
    # parts: reading a subclass's numerator runs its code after the call was timed and watched
    # (a red team's lazy result computed a forbidden core there, 2026-12-07).
    parts = fraction_parts(value)
    if parts is not None:
        return {"fraction": [_int_repr(parts[0]), _int_repr(parts[1])]}
    if value is Ellipsis:
        return {"ellipsis": True}
    # a namedtuple is a tuple, an OrderedDict or a defaultdict a dict: they travel as such
    if _isinstance(value, (list, tuple)):
        kind = "tuple" if _isinstance(value, tuple) else "list"
        items = _tuple.__iter__(value) if kind == "tuple" else _list.__iter__(value)
        return {kind: [_enc(v, budget) for v in items]}
    if _isinstance(value, dict):
        return {"dict": [[_enc(k, budget), _enc(v, budget)] for k, v in _dict_items(value)]}
    return {"opaque": _type(value).__name__}


def dumps(data) -> str:
    """JSON text of plain data (dicts with string keys, lists, strings, ints, bools, None),
    written with the functions taken at import only (see the top of this module).

    >>> dumps({"a": [1, "x", None, True]})
    '{"a": [1, "x", null, true]}'
    """
    if data is None:
        return "null"
    if data is True or data is False:
        return "true" if data else "false"
    if _type(data) is str:
        return _escape(data)
    if _type(data) is int:
        return _int_repr(data)
    if _type(data) is float:
        return _float_repr(data)
    if _type(data) in (list, tuple):
        return "[" + ", ".join([dumps(v) for v in data]) + "]"
    if _type(data) is dict:
        return "{" + ", ".join([_escape(k) + ": " + dumps(v) for k, v in _dict_items(data)]) + "}"
    raise ValueError(f"cannot write {_type(data).__name__}")


def encode(value) -> str:
    """``value`` as JSON text; types that do not travel become :class:`Opaque`."""
    return dumps(_enc(value, [LIMIT]))


def _dec(data):
    if data is None or isinstance(data, (bool, str)):
        return data
    if not isinstance(data, dict) or len(data) not in (1, 4):
        raise ValueError("malformed value")
    if "array" in data:
        dtype = np.dtype(data["dtype"])
        if dtype.kind not in _KINDS:
            raise ValueError("malformed array")
        shape = tuple(int(n) for n in data["shape"])
        raw = base64.b64decode(data["array"])
        array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        return array[()] if data["scalar"] else array
    ((kind, body),) = data.items()
    if kind == "int":
        return int(body)
    if kind == "float":
        return float(body)
    if kind == "complex":
        return complex(float(body[0]), float(body[1]))
    if kind == "fraction":
        return fractions.Fraction(int(body[0]), int(body[1]))
    if kind == "ellipsis":
        return Ellipsis
    if kind == "list":
        return [_dec(v) for v in body]
    if kind == "tuple":
        return tuple(_dec(v) for v in body)
    if kind == "dict":
        return {_dec(k): _dec(v) for k, v in body}
    if kind == "opaque":
        return Opaque(str(body))
    raise ValueError(f"malformed value of kind {kind!r}")


def decode(text: str):
    """The value that :func:`encode` wrote; only plain data and numeric arrays are built."""
    return _dec(json.loads(text))
