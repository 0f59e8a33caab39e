"""A minimal, fast PNG encoder for the first frame a figure canvas shows.

Slider steps send raw pixels (see :mod:`attnlab.figure_canvas`); this encoder
only packs the frame a new view paints before the kernel answers it. Pillow's
PNG writer tries every row filter to squeeze the file; here time matters more
than bytes: writing RGBA rows unfiltered and deflating at level 1 cost about
half as much on this machine (3.2 ms against 6-7.5 ms for a 700×320 frame) and
still shrinks a plot ~30×.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RGBA_8BIT = (8, 6, 0, 0, 0)  # bit depth, colour type RGBA, compression, filter, interlace


def _chunk(tag: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(tag + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)


def encode_png(rgba: np.ndarray, level: int = 1) -> bytes:
    """Encode an RGBA image as PNG bytes.

    Parameters
    ----------
    rgba : ndarray of uint8, shape (height, width, 4)
        The pixels, e.g. ``np.asarray(canvas.buffer_rgba())``.
    level : int, default 1
        zlib compression level, 0 (store) to 9 (smallest, slowest).

    Returns
    -------
    bytes
        A valid PNG file (8-bit RGBA, no interlacing, filter type 0 on every row).

    Examples
    --------
    >>> png = encode_png(np.zeros((2, 3, 4), dtype=np.uint8))
    >>> png[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """
    if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4:
        raise ValueError(
            f"rgba must be a uint8 array of shape (height, width, 4); "
            f"got dtype {rgba.dtype} and shape {rgba.shape}"
        )
    height, width, _ = rgba.shape
    rows = np.empty((height, 1 + 4 * width), dtype=np.uint8)  # (h, 1 + 4w)
    rows[:, 0] = 0  # filter type "None" for every row
    rows[:, 1:] = rgba.reshape(height, 4 * width)
    header = struct.pack(">II5B", width, height, *_RGBA_8BIT)
    return (
        _SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.data, level))
        + _chunk(b"IEND", b"")
    )
