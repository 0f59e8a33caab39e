"""Tick labels for a log axis written 10³ and 10⁻², without mathtext.

Matplotlib labels a base-10 log axis with mathtext (``$\\mathdefault{10^{3}}$``). The first
mathtext string a kernel draws builds matplotlib's TeX-like parser, about 0.15 s on a quiet
machine and more while a browser competes for the CPU, and in lessons 3 and 9 the log axes
of their explorers were the only mathtext: they paid it before their first picture. The same
labels in Unicode superscripts (which DejaVu Sans, matplotlib's default font, has) look alike
and cost an ordinary text draw.
"""

from __future__ import annotations

import math

from matplotlib.ticker import FuncFormatter, NullFormatter

__all__ = ["power_of_ten", "power_of_ten_labels"]

_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(value: float, position=None) -> str:
    """``value`` as a tick label: ``10`` with a superscript exponent if it is a power of ten.

    Parameters
    ----------
    value : float
        The tick's value.
    position : int, optional
        Ignored (the tick's index, as :class:`~matplotlib.ticker.FuncFormatter` passes it).

    Returns
    -------
    str
        ``"10³"`` for 1000, ``"10⁻²"`` for 0.01, ``"10⁰"`` for 1; a value that is not a
        positive power of ten is written with ``{:g}`` (the true minus sign for negatives).

    Examples
    --------
    >>> [power_of_ten(v) for v in (1000, 0.01, 1, 1.0)]
    ['10³', '10⁻²', '10⁰', '10⁰']
    >>> power_of_ten(250.0), power_of_ten(-2.5)
    ('250', '−2.5')
    """
    if value > 0:
        exponent = round(math.log10(value))
        if math.isclose(value, 10.0**exponent, rel_tol=1e-9):
            return "10" + str(exponent).translate(_SUPERSCRIPTS)
    return f"{value:g}".replace("-", "\N{MINUS SIGN}")


def power_of_ten_labels(axis) -> None:
    """Label a base-10 log ``axis`` 10ⁿ at its decades and leave its minor ticks unlabelled.

    Parameters
    ----------
    axis : matplotlib.axis.Axis
        ``ax.xaxis`` or ``ax.yaxis`` of an axes already on a log scale.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> ax.set_xscale("log")
    >>> _ = ax.set_xlim(1, 1000)
    >>> power_of_ten_labels(ax.xaxis)
    >>> [ax.xaxis.get_major_formatter()(v) for v in ax.get_xticks()[1:-1]]
    ['10⁰', '10¹', '10²', '10³']
    """
    axis.set_major_formatter(FuncFormatter(power_of_ten))
    axis.set_minor_formatter(NullFormatter())
