"""The figure canvas sends only changed pixels: the rectangles must cover every change, tightly.

The page paints each rectangle of the message over the frame it already shows
(``figure_canvas.js``), so a pixel left out of every rectangle would stay stale on screen.
These tests replay the messages the way the page does and compare with the kernel's frame.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from attnlab.figure_canvas import FigureCanvas, changed_rects


@st.composite
def frame_pairs(draw):
    """An old frame and a new one differing in a few random blocks (of any size, anywhere)."""
    height = draw(st.integers(1, 90))
    width = draw(st.integers(1, 160))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    old = rng.integers(0, 3, (height, width, 4), dtype=np.uint8)
    new = old.copy()
    for _ in range(draw(st.integers(0, 6))):
        y0, x0 = rng.integers(0, height), rng.integers(0, width)
        y1, x1 = y0 + rng.integers(1, 40), x0 + rng.integers(1, 70)
        new[y0:y1, x0:x1, rng.integers(0, 4)] += 1  # one channel changes
    return old, new


def paint(frame: np.ndarray, source: np.ndarray, rects) -> np.ndarray:
    """What the page does with a message: each rectangle of ``source`` over ``frame``."""
    painted = frame.copy()
    for x, y, w, h in rects:
        painted[y : y + h, x : x + w] = source[y : y + h, x : x + w]
    return painted


@given(frame_pairs(), st.sampled_from([1, 8, 32]), st.sampled_from([0, 5, 48, 10_000]))
def test_rectangles_cover_every_change_tightly_and_never_overlap(pair, band, gap):
    old, new = pair
    rects = changed_rects(old, new, band=band, gap=gap)
    np.testing.assert_array_equal(paint(old, new, rects), new)  # nothing stale
    changed = (old != new).any(axis=2)  # (height, width)
    covered = np.zeros(changed.shape, dtype=int)
    for x, y, w, h in rects:
        assert w > 0 and h > 0
        covered[y : y + h, x : x + w] += 1
        inside = changed[y : y + h, x : x + w]
        # tight: every edge row and column of a rectangle holds a changed pixel
        assert inside[0].any() and inside[-1].any() and inside[:, 0].any() and inside[:, -1].any()
        assert y // band == (y + h - 1) // band  # within one band
    assert covered.max(initial=0) <= 1  # no pixel sent twice
    assert not rects or changed.any()


def test_panels_that_change_side_by_side_travel_as_separate_rectangles():
    old = np.zeros((32, 400, 4), dtype=np.uint8)
    new = old.copy()
    new[4:20, 10:60] = 255  # a heatmap on the left
    new[8:12, 300:390] = 255  # bars on the right; 240 unchanged columns between them
    assert changed_rects(old, new) == [(10, 4, 50, 16), (300, 8, 90, 4)]
    assert changed_rects(old, new, gap=1000) == [(10, 4, 380, 16)]  # no split: one wide box


def test_replaying_the_messages_gives_the_kernels_frame():
    canvas = FigureCanvas()
    sent = []
    canvas.send = lambda content, buffers=None: sent.append((content, buffers))
    rng = np.random.default_rng(0)
    frame = np.full((70, 300, 4), 255, dtype=np.uint8)
    page = None
    for _ in range(6):
        frame = frame.copy()
        y, x = rng.integers(0, 60), rng.integers(0, 250)
        frame[y : y + 10, x : x + 50] = rng.integers(0, 256, 4, dtype=np.uint8)
        frame[rng.integers(0, 70), rng.integers(0, 300)] = 0
        canvas.show(frame, readout="<div>step</div>")
        content, buffers = sent[-1]
        assert content["kind"] == "tiles" and content["readout"] == "<div>step</div>"
        (payload,) = buffers
        rects = content["rects"]
        assert len(payload) == sum(w * h * 4 for _, _, w, h in rects)
        if page is None:
            page = np.zeros_like(frame)
        offset = 0
        for x0, y0, w, h in rects:  # the tiles' rows back to back, in the order of rects
            tile = np.frombuffer(payload, np.uint8, w * h * 4, offset).reshape(h, w, 4)
            page[y0 : y0 + h, x0 : x0 + w] = tile
            offset += w * h * 4
        np.testing.assert_array_equal(page, frame)
