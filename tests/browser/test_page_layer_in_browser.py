"""The page draws an explorer's moving artists as the kernel's Agg would (attnlab.page_layer).

For every explorer whose page draws its moving artists, in real Chromium, at devicePixelRatio
1 and 2, over a sweep of its controls: the background the kernel sends, with the shapes drawn
over it by ``figure_canvas.js``'s own ``drawShapes``, is compared with the whole frame Agg
draws for the same state (what a static figure, a saved notebook and ``pixels`` show). Edges
are antialiased a little differently, so a pixel counts as different only past a step of 64
in some channel. At most 0.5 % of all pixels may differ, the mean difference stays under 1
level of 255, and of the pixels where the moving artists change Agg's frame (their ink), at
most 5 % may be missed. The background alone misses all of that ink, so the bar can tell a
missing or misplaced artist.
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest

import attnlab
from attnlab import page_layer
from attnlab.explorers import all_explorers
from attnlab.explorers.sweep import control_values

pytestmark = pytest.mark.browser

JS = Path(attnlab.__file__).with_name("figure_canvas.js")
PAGED = [cls for cls in all_explorers() if cls.page_draws_moving]
FAR, MOST_FAR, MEAN, MOST_MISSED = 64, 0.005, 1.0, 0.05

PAINT = """([width, height, background, shapes]) => {
  const c = document.createElement('canvas');
  c.width = width; c.height = height;
  const ctx = c.getContext('2d');
  const bytes = Uint8ClampedArray.from(atob(background), (ch) => ch.charCodeAt(0));
  ctx.putImageData(new ImageData(bytes, width, height), 0, 0);
  window.attnlabDrawShapes(ctx, shapes);
  const out = ctx.getImageData(0, 0, width, height).data;
  let text = '';
  for (let i = 0; i < out.length; i += 8192) {
    text += String.fromCharCode.apply(null, out.subarray(i, i + 8192));
  }
  return btoa(text);
}"""


@pytest.fixture(scope="module")
def page(chromium):
    context = chromium.new_context()
    page = context.new_page()
    page.set_content("<html><body></body></html>")
    source = JS.read_text() + "\nwindow.attnlabDrawShapes = drawShapes;\n"
    page.add_script_tag(content=source, type="module")
    page.wait_for_function("() => typeof window.attnlabDrawShapes === 'function'")
    yield page
    context.close()


def differences(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Share of pixels differing by more than FAR in a channel, and the mean difference."""
    diff = np.abs(a.astype(int) - b.astype(int))  # (h, w, 4)
    return float((diff.max(axis=2) > FAR).mean()), float(diff.mean())


def spread(values: list, count: int) -> list:
    """At most ``count`` of ``values``, evenly spread, the first and the last among them.

    >>> spread(list(range(10)), 3)
    [0, 4, 9]
    """
    if len(values) <= count:
        return values
    return [values[round(i * (len(values) - 1) / (count - 1))] for i in range(count)]


def states(explorer, per_control: int):
    """The explorer set to a few values of each control in turn (as sliders drive it)."""
    yield "initial"
    for name, control in explorer.controls.items():
        for value in spread(control_values(control, max_steps=60), per_control):
            control.value = value
            yield f"{name}={value}"


#: Values per control: at ratio 2 each frame is four times the pixels to send and compare, and
#: the shapes' scaling to device pixels is what it adds, so its ends are enough.
PER_CONTROL = {1: 3, 2: 2}


@pytest.mark.parametrize("ratio", [1, 2])
@pytest.mark.parametrize("cls", PAGED, ids=[cls.name for cls in PAGED])
def test_page_draws_what_agg_draws(page, cls, ratio):
    explorer = cls()
    live = explorer.view
    live.set_pixel_ratio(ratio)
    texts: dict = {}
    checked = seen = 0
    worst = (0.0, 0.0, 0.0)
    for state in states(explorer, PER_CONTROL[ratio]):
        background = np.array(live.background())  # (h, w, 4)
        live.theme.follow(live._moving)
        shapes = page_layer.record(live._moving, live.figure, texts)
        whole = np.array(live.frame())  # (h, w, 4) Agg
        height, width = whole.shape[:2]
        sent = base64.b64encode(background.tobytes()).decode()
        back = page.evaluate(PAINT, [width, height, sent, shapes])
        painted = np.frombuffer(base64.b64decode(back), dtype=np.uint8).reshape(height, width, 4)
        far, mean = differences(painted, whole)
        ink = np.abs(whole.astype(int) - background.astype(int)).max(axis=2) > FAR  # (h, w)
        wrong = np.abs(painted.astype(int) - whole.astype(int)).max(axis=2) > FAR  # (h, w)
        inked = int(ink.sum())
        missed = float((ink & wrong).sum() / inked) if inked else 0.0
        assert far <= MOST_FAR and mean <= MEAN and missed <= MOST_MISSED, (
            f"{cls.name} at {state}, ratio {ratio}: {far:.2%} of pixels differ by more than "
            f"{FAR}, mean difference {mean:.2f}; {missed:.1%} of the moving artists' "
            f"{inked} pixels missed"
        )
        seen += inked > 0
        checked += 1
        worst = max(worst, (far, mean, missed))
    assert checked >= 3
    # Some states draw almost nothing that moves (a query of length 0): most draw something.
    assert seen >= checked / 2, f"the moving artists drew in {seen} of {checked} states only"
    print(f"{cls.name} ratio {ratio}: {checked} states, worst {worst}")
