"""Explorer figures follow JupyterLab's theme: dark page, dark figure with light text, and back.

For one lesson with explorers (or each, with -k): Run All, switch JupyterLab to its dark theme
from the Settings menu, and check every explorer's canvas: its corner (the figure's face) is
dark and some of its pixels (text, axes) are light. Switching back makes the corner light
again. Screenshots of the first explorer in both themes go to artifacts/browser/.

The lesson's static figures (matplotlib PNGs, drawn for the light page when the cells ran) are
checked on the same switch, as the page shows them (a screenshot of the first one): light
before; after the switch not a white block but a dark face with text that reads on it (issue
41: they stayed white); light again after switching back.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import a11y
import lab_harness as lab
import numpy as np
import pytest

pytestmark = pytest.mark.browser

LESSONS = [path for path in lab.discover_lessons() if "Explorer(" in path.read_text()]
LESSON_PARAMS = [pytest.param(path.name, id=path.stem) for path in LESSONS] or [
    pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason="no lesson has explorers"))
]
THEME_S = 30

# per explorer figure (not lesson 0's self-test bar, raw pixels): luminance of the top-left
# pixel, and the share of light pixels (text, lines)
CANVAS_JS = """() => [...document.querySelectorAll('.attnlab-explorer canvas.attnlab-figure')]
  .map(c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const lum = i => 0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2];
    let light = 0, n = 0;
    for (let i = 0; i < d.length; i += 4 * 7) { n++; light += lum(i) > 200; }
    return {corner: lum(4 * (2 * c.width + 2)), light: light / n};
})"""


STATIC_FIGURE = "img.attnlab-static-figure"
STATIC_SHOWN = 1  # static figures looked at per lesson (each a scroll and a screenshot)
STATIC_SECONDS: list[float] = []  # what looking at them took, printed with the dark check


def static_figures_shown(page: lab.LessonPage, save_to: Path | None = None) -> list[dict]:
    """The first STATIC_SHOWN static figures as the page shows them: the face's luminance (the
    median of a 3 px ring inside the edge), the share of near-white pixels, and the contrast
    of the lightest (dark face) or darkest (light face) 0.5 % of pixels against the face.
    The first one's screenshot goes to ``save_to`` if given."""
    from PIL import Image

    started = time.perf_counter()
    found = []
    figures = page.page.locator(STATIC_FIGURE)
    for index in range(min(figures.count(), STATIC_SHOWN)):
        png = figures.nth(index).screenshot(animations="disabled", timeout=30_000)
        if save_to is not None and index == 0:
            save_to.write_bytes(png)
        rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))  # (h, w, 3)
        lum = a11y.relative_luminance(rgb)  # (h, w)
        ring = np.concatenate(
            [lum[:3].ravel(), lum[-3:].ravel(), lum[:, :3].ravel(), lum[:, -3:].ravel()]
        )
        face = float(np.median(ring))
        ink = float(np.percentile(lum, 99.5 if face < 0.5 else 0.5))
        contrast = (max(face, ink) + 0.05) / (min(face, ink) + 0.05)
        found.append(
            {
                "face": round(face, 3),
                "white": round(float((lum > 0.8).mean()), 3),
                "contrast": round(contrast, 1),
            }
        )
    STATIC_SECONDS.append(time.perf_counter() - started)
    return found


def wait_for_canvases(page: lab.LessonPage, dark: bool) -> list[dict]:
    """Canvas measures once every figure matches the theme (or after THEME_S seconds)."""
    canvases = page.js(CANVAS_JS)
    for _ in range(THEME_S * 4):
        if canvases and all((c["corner"] < 40) == dark for c in canvases):
            break
        page.page.wait_for_timeout(250)
        canvases = page.js(CANVAS_JS)
    return canvases


@pytest.mark.parametrize("name", LESSON_PARAMS)
def test_figures_follow_the_dark_theme(name, lesson_pages, artifacts_dir: Path) -> None:
    stem = Path(name).stem
    page = lesson_pages("lab", name)
    try:
        light = wait_for_canvases(page, dark=False)
        assert light and all(c["corner"] > 200 for c in light), light
        page.explorer(0).screenshot(path=str(artifacts_dir / f"{stem}--theme-light.png"))
        statics = static_figures_shown(page)
        assert all(f["face"] > 0.8 and f["contrast"] > 4.5 for f in statics), statics

        lab.set_theme(page, "JupyterLab Dark")
        page.page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")
        dark = wait_for_canvases(page, dark=True)
        page.explorer(0).screenshot(path=str(artifacts_dir / f"{stem}--theme-dark.png"))
        assert all(c["corner"] < 40 for c in dark), f"figure faces stayed light: {dark}"
        assert all(c["light"] > 0.002 for c in dark), f"no light text on a dark figure: {dark}"
        statics = static_figures_shown(page, artifacts_dir / f"{stem}--static-figure-dark.png")
        print(
            f"{stem}: static figures on the dark page: {statics} "
            f"({sum(STATIC_SECONDS):.1f} s on static figures so far)"
        )
        assert all(
            f["face"] < 0.05 and f["white"] < 0.25 and f["contrast"] > 4.5 for f in statics
        ), f"static figures drawn before the switch are not dark with legible text: {statics}"

        lab.set_theme(page, "JupyterLab Light")
        page.page.wait_for_function("document.body.dataset.jpThemeLight === 'true'")
        back = wait_for_canvases(page, dark=False)
        assert all(c["corner"] > 200 for c in back), f"figures stayed dark: {back}"
        statics = static_figures_shown(page)
        assert all(f["face"] > 0.8 for f in statics), f"static figures stayed dark: {statics}"
    finally:
        if page.js("() => document.body.dataset.jpThemeLight") == "false":
            lab.set_theme(page, "JupyterLab Light")  # the theme is a user setting: leave it light
            page.page.wait_for_timeout(1000)
