"""Hypothesis strategies and settings shared by the numerics tests, and the call they judge with.

* ``FLOAT_DTYPES`` and ``BOUND``: the float dtypes every numerics function is tested in, and the
  largest |value| drawn in each (the brief: ±1e4 in float16, ±1e300 in float64).
* ``FAST``: the settings of a property test (60 examples, no deadline: the first call of a
  numpy function can be slow on a busy machine).
* :func:`float_arrays`: finite arrays of any of those dtypes.
* :func:`no_warnings`: a call with every warning raised as an error, whatever pytest's filters.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
# Largest |value| drawn per dtype.
BOUND = {np.float16: 1e4, np.float32: float(np.float32(1e30)), np.float64: 1e300}

FAST = settings(max_examples=60, deadline=None)


@st.composite
def float_arrays(
    draw, dtypes=tuple(FLOAT_DTYPES), bound=None, min_dims=1, max_dims=3, max_side=6, shape=None
):
    """Arrays of a drawn float dtype with finite values within the dtype's bound (or ``bound``).

    The shape is ``shape`` if given, else drawn with ``min_dims..max_dims`` dimensions of
    sizes ``1..max_side``.
    """
    dtype = draw(st.sampled_from(dtypes))
    b = BOUND[dtype] if bound is None else bound
    if shape is None:
        shape = draw(
            hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)
        )
    width = np.finfo(dtype).bits
    elements = st.floats(-b, b, allow_nan=False, allow_infinity=False, width=width)
    return draw(hnp.arrays(dtype, shape, elements=elements))


def no_warnings(fn, *args, **kwargs):
    """Call fn with every warning turned into an error (independent of pytest config)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)
