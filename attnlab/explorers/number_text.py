"""How explorers write numbers in readouts and figure labels: one minus sign, never ``-0``.

Matplotlib writes negative tick labels with the true minus sign ``−`` (U+2212), so the
readouts do too: a figure and its readout never mix ``-`` and ``−``. A value that rounds
to zero is written without a sign (``0.00``, not ``-0.00``), and a negative factor inside
a product is put in parentheses (``0.87·(−1.00)``, not ``0.87·-1.00``).
"""

from __future__ import annotations

MINUS = "\N{MINUS SIGN}"


def signed_text(text: str) -> str:
    """``text`` with every ASCII hyphen-minus written as the true minus sign ``−``.

    Examples
    --------
    >>> signed_text("-1.5e-3")
    '−1.5e−3'
    """
    return text.replace("-", MINUS)


def num(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals, the true minus sign, and never a negative zero.

    Parameters
    ----------
    x : float
    digits : int, default 2
        Decimals after the point (0 gives an integer).

    Examples
    --------
    >>> num(-1.0), num(-0.001), num(0.871), num(-2.0, 0), num(float("-inf"))
    ('−1.00', '0.00', '0.87', '−2', '−inf')
    """
    text = f"{float(x):.{digits}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return signed_text(text)


def factor(x: float, digits: int = 2) -> str:
    """:func:`num`, in parentheses when negative, to stand inside a product.

    Examples
    --------
    >>> f"{factor(0.87)}·{factor(-1.0)}"
    '0.87·(−1.00)'
    >>> factor(-0.001)
    '0.00'
    """
    text = num(x, digits)
    return f"({text})" if text.startswith(MINUS) else text


def plus_minus(x: float, digits: int = 2) -> str:
    """:func:`num` with an explicit sign: ``+0.71``, ``−0.64``, ``+0.00``.

    Examples
    --------
    >>> plus_minus(0.705), plus_minus(-0.64), plus_minus(-0.0001)
    ('+0.70', '−0.64', '+0.00')
    """
    text = num(x, digits)
    return text if text.startswith(MINUS) else "+" + text


def general(x: float, digits: int = 3) -> str:
    """``x`` in ``g`` format with ``digits`` significant digits, true minus, no negative zero.

    Examples
    --------
    >>> general(-0.0), general(-1234.5, 3), general(2.5e-7)
    ('0', '−1.23e+03', '2.5e−07')
    """
    text = f"{float(x):.{digits}g}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return signed_text(text)


def signed_value(x: float, digits: int = 1) -> str:
    """:func:`plus_minus`, except that a small non-zero value keeps its sign and digits.

    Written to ``digits`` decimals, −0.02 would read ``+0.0``: it is written with two
    significant digits instead. Only an exact zero reads ``+0.0``.

    Examples
    --------
    >>> signed_value(-0.02), signed_value(0.004), signed_value(1.25), signed_value(0.0)
    ('−0.02', '+0.004', '+1.2', '+0.0')
    >>> signed_value(-3e-7)
    '−3e−07'
    """
    text = plus_minus(x, digits)
    if float(x) == 0 or float(text[1:]) != 0:
        return text
    return (MINUS if x < 0 else "+") + general(abs(x), 2)
