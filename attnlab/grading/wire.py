"""Plain data between the grading process and the kernel that runs a student's answers.

Values travel as JSON: numbers, strings, lists, tuples, dicts and numeric numpy arrays, nothing
that runs code when it is read. What the kernel sends back is decoded with :func:`decode`,
which builds only those types, so an answer can influence the values a check sees and nothing
else.

Examples
--------
>>> import numpy as np
>>> value = {"w": np.array([0.5, 0.5], dtype=np.float32), "n": (3, None)}
>>> back = decode(encode(value))
>>> back["w"].dtype, back["w"].tolist(), back["n"]
(dtype('float32'), [0.5, 0.5], (3, None))
>>> type(decode(encode(np.float64(-4.0)))).__name__  # numpy scalars stay numpy scalars
'float64'

"""

from __future__ import annotations

import base64
import json

import numpy as np

#: numpy dtype kinds that may travel: bool, ints, floats, complex, fixed strings.
_KINDS = "biufcU"
#: The most data one value may hold (bytes); a larger one is refused.
LIMIT = 64 * 2**20


class Opaque:
    """Stands for a value of a type that does not travel (a class instance, a generator …).

    Its ``repr`` is the type's name, so a check's reason can say what came back.
    """

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def _enc(value, budget: list[int]):
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in _KINDS:
        array = np.asarray(value)
        budget[0] -= array.nbytes
        if budget[0] < 0:
            raise ValueError("the value is too large to check")
        return {
            "array": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode(),
            "dtype": array.dtype.str,
            "shape": list(array.shape),
            "scalar": isinstance(value, np.generic),
        }
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, complex):
        return {"complex": [repr(value.real), repr(value.imag)]}
    if type(value) is Ellipsis.__class__:
        return {"ellipsis": True}
    if type(value) in (list, tuple):
        return {type(value).__name__: [_enc(v, budget) for v in value]}
    if type(value) is dict:
        return {"dict": [[_enc(k, budget), _enc(v, budget)] for k, v in value.items()]}
    return {"opaque": type(value).__name__}


def encode(value) -> str:
    """``value`` as JSON text; types that do not travel become :class:`Opaque`."""
    return json.dumps(_enc(value, [LIMIT]))


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
