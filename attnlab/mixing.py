"""What attention does with its weights: mix the value vectors.

Each output row is a weighted average of the value vectors, ``output_i = Σ_j W[i, j] V[j]``
(:func:`weighted_values`). The weights are non-negative and sum to 1, so every output lies in
the **convex hull** of the values: between them, never beyond. :func:`barycentric` goes the
other way for three 2-D values: the weights that would produce a given point, all of them
non-negative exactly when the point can be an output. :func:`coordinate_bounds` gives the
simplest consequence: every coordinate of an output lies between the smallest and the
largest value of that coordinate.

Examples
--------
>>> import numpy as np
>>> values = np.array([[2.0, 0.5], [0.5, 2.0], [-1.0, -0.5]])   # three 2-D values
>>> weighted_values([0.5, 0.5, 0.0], values).tolist()           # half way from 1 to 2
[1.25, 1.25]
>>> barycentric([1.25, 1.25], values).round(6).tolist()         # and back
[0.5, 0.5, 0.0]
"""

import numpy as np

from attnlab import _validate

#: The course's API here (what a lesson may call and forbid by this module's name).
__all__ = ["barycentric", "coordinate_bounds", "weighted_values"]


def weighted_values(weights, values):
    r"""The attention output: each row of ``weights`` mixes the rows of ``values``.

    :math:`\text{output}_i = \sum_j W_{ij} V_j`, i.e. ``weights @ values``.

    Parameters
    ----------
    weights : array_like, shape (..., n_k) or (..., n_q, n_k)
        Attention weights, rows summing to 1 (softmax output). A 1-D row gives one
        output vector.
    values : array_like, shape (n_k, d_v) or (..., n_k, d_v)
        One value vector per key.

    Returns
    -------
    ndarray, shape (d_v,) for one row of weights, else (..., n_q, d_v)

    Raises
    ------
    ValueError
        If ``weights`` are not probabilities (negative, above 1, rows not summing to 1:
        pass softmax output, not scores), if ``values`` is not at least 2-D or holds NaN
        or inf, or if the number of weights per row differs from the number of value
        vectors. The message names both shapes.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([[1.0, 0.0], [0.0, 1.0]])                     # n_k = 2, d_v = 2
    >>> weighted_values([[1.0, 0.0], [0.25, 0.75]], v).tolist()    # n_q = 2
    [[1.0, 0.0], [0.25, 0.75]]
    """
    w, _ = _validate.probabilities(weights, "weights", axis=-1)
    v = _validate.as_float_array(values, "values", min_ndim=2, allow_inf=False)
    if w.shape[-1] != v.shape[-2]:
        raise ValueError(
            f"weights have {w.shape[-1]} weights per row but values has {v.shape[-2]} value "
            f"vectors (rows); weights shape {w.shape}, values shape {v.shape}"
        )
    return w @ v  # (d_v,) for one row of weights, else (..., n_q, d_v)


def barycentric(point, triangle):
    """The weights of three 2-D points that reproduce ``point``: ``w @ triangle == point``.

    They sum to 1. All three are non-negative exactly when ``point`` lies in the triangle
    (the convex hull of the three values), i.e. when some row of attention weights could
    produce it; a negative weight says the point is out of reach.

    Parameters
    ----------
    point : array_like, shape (2,)
    triangle : array_like, shape (3, 2)
        Three 2-D value vectors, not all on one line.

    Returns
    -------
    ndarray, shape (3,)

    Raises
    ------
    ValueError
        If the shapes are not (2,) and (3, 2), an entry is NaN or inf, or the three
        points lie on one line (no unique weights).

    Examples
    --------
    >>> tri = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    >>> barycentric([0.25, 0.25], tri).round(6).tolist()    # inside: all >= 0
    [0.5, 0.25, 0.25]
    >>> barycentric([1.0, 1.0], tri).round(6).tolist()      # outside: one is negative
    [-1.0, 1.0, 1.0]
    """
    p = _validate.as_float_array(point, "point", allow_inf=False)
    t = _validate.as_float_array(triangle, "triangle", allow_inf=False)
    if p.shape != (2,) or t.shape != (3, 2):
        raise ValueError(
            f"point must have shape (2,) and triangle shape (3, 2); got {p.shape} and {t.shape}"
        )
    system = np.vstack([t.T, np.ones(3)])  # (3, 3): x row, y row, sum-to-1 row
    extent = np.ptp(t, axis=0).max()
    if abs(np.linalg.det(system)) <= 1e-12 * max(extent, 1.0) ** 2:
        raise ValueError(f"triangle's three points lie on one line; got {t.tolist()}")
    return np.linalg.solve(system, np.append(p, 1.0))  # (3,)


def coordinate_bounds(values):
    """The smallest and largest value of every coordinate: where outputs can lie.

    Every output is a weighted average of the value vectors, so each of its coordinates
    lies between these bounds (a box around the convex hull).

    Parameters
    ----------
    values : array_like, shape (n_k, d_v)

    Returns
    -------
    low, high : ndarray, shape (d_v,) each

    Raises
    ------
    ValueError
        If ``values`` is not 2-D with at least one row, or holds NaN or inf.

    Examples
    --------
    >>> low, high = coordinate_bounds([[2.0, 0.5], [0.5, 2.0], [-1.0, -0.5]])
    >>> low.tolist(), high.tolist()
    ([-1.0, -0.5], [2.0, 2.0])
    """
    v = _validate.as_float_array(values, "values", min_ndim=2, allow_inf=False)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"values must be a matrix (n_k, d_v) with n_k >= 1; got shape {v.shape}")
    return v.min(axis=0), v.max(axis=0)  # (d_v,) each
