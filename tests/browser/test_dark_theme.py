"""Explorer figures follow JupyterLab's theme: dark page, dark figure with light text, and back.

For one lesson with explorers (or each, with -k): Run All, switch JupyterLab to its dark theme
from the Settings menu, and check every explorer's canvas: its corner (the figure's face) is
dark and some of its pixels (text, axes) are light. Switching back makes the corner light
again. Screenshots of the first explorer in both themes go to artifacts/browser/.
"""

from __future__ import annotations

from pathlib import Path

import lab_harness as lab
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

        lab.set_theme(page, "JupyterLab Dark")
        page.page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")
        dark = wait_for_canvases(page, dark=True)
        page.explorer(0).screenshot(path=str(artifacts_dir / f"{stem}--theme-dark.png"))
        assert all(c["corner"] < 40 for c in dark), f"figure faces stayed light: {dark}"
        assert all(c["light"] > 0.002 for c in dark), f"no light text on a dark figure: {dark}"

        lab.set_theme(page, "JupyterLab Light")
        page.page.wait_for_function("document.body.dataset.jpThemeLight === 'true'")
        back = wait_for_canvases(page, dark=False)
        assert all(c["corner"] > 200 for c in back), f"figures stayed dark: {back}"
    finally:
        if page.js("() => document.body.dataset.jpThemeLight") == "false":
            lab.set_theme(page, "JupyterLab Light")  # the theme is a user setting: leave it light
            page.page.wait_for_timeout(1000)
