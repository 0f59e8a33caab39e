"""Figures on a HiDPI screen, static figures' alt text, and static figures in the dark theme.

* Every static figure (an ``<img>`` in an output) of every lesson has alt text (axe's
  ``image-alt``): checked on the page every browser check of a lesson shares.
* HiDPI and the dark page are how the course's figure code draws, the same in every lesson, so
  they are checked on the lesson that stands for them (lesson 3: explorers and static figures),
  opened in JupyterLab and in Notebook 7 in a browser context with ``device_scale_factor=2`` (a
  HiDPI laptop screen, devicePixelRatio 2), on private servers of this module's own (so their
  kernels and theme are nobody else's), and run with Run All as a learner does:

  * every explorer's canvas holds two device pixels per CSS pixel each way (``canvas.width ==
    2 x`` its CSS width): drawn at 1x and stretched, its text was soft beside the crisp HTML;
    the figure is not blank;
  * (JupyterLab) after switching to JupyterLab Dark and running the lesson again, every static
    figure is drawn for the dark page like the explorers: a dark face with light text on it;
    switched back to JupyterLab Light, the first is shown light with legible text (issue 41).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import a11y
import lab_harness as lab
import pytest
from test_dark_theme import static_figures_shown

pytestmark = pytest.mark.browser

LESSONS = lab.discover_lessons()
ALL_LESSONS = [pytest.param(path.name, id=path.stem) for path in LESSONS] or [
    pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason="no lessons found"))
]
#: The lesson that stands for the figure code: it has explorers and static figures.
HIDPI_LESSON = "03-softmax.ipynb"
LESSON_PARAMS = [
    pytest.param((front, path.name), id=f"{front}-{path.stem}")
    for front in ("lab", "nb7")
    for path in LESSONS
    if path.name == HIDPI_LESSON
] or [pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason=f"no {HIDPI_LESSON}"))]
RATIO = 2
WAIT_S = 60

CANVASES = """() => [...document.querySelectorAll('.attnlab-explorer canvas.attnlab-figure')]
  .map(c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let ink = 0, n = 0;
    for (let i = 0; i < d.length; i += 4 * 97) { n++; ink += Math.abs(d[i] - d[0]) > 40; }
    return {width: c.width, height: c.height, cssWidth: parseFloat(c.style.width),
            shownWidth: c.getBoundingClientRect().width,
            shownHeight: c.getBoundingClientRect().height, ink: ink / n};
  })"""
STATIC_IMAGES = """() => [...document.querySelectorAll('.jp-OutputArea-output img')]
  .filter(img => !img.closest('.attnlab-explorer, .jupyter-widgets'))
  .map(img => {
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    const lum = i => 0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2];
    let light = 0, n = 0;
    for (let i = 0; i < d.length; i += 4 * 7) { n++; light += d[i + 3] > 0 && lum(i) > 200; }
    return {alt: img.getAttribute('alt'), corner: lum(4 * (2 * c.width + 2)),
            opaque: d[4 * (2 * c.width + 2) + 3] === 255, light: light / n,
            cell: [...document.querySelectorAll('.jp-Cell')].indexOf(img.closest('.jp-Cell'))};
  })"""


class _HiDPIBrowser:
    """The shared Chromium, handing out contexts with devicePixelRatio 2."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_context(self, **options):
        return self._browser.new_context(device_scale_factor=RATIO, **options)


class _Servers:
    """This module's own servers, one per front end, started when first asked for."""

    def __init__(self) -> None:
        self._open: dict[str, lab.LabServer] = {}

    def __call__(self, front: str) -> lab.LabServer:
        if front not in self._open:
            from nb7_harness import NotebookServer

            kind = NotebookServer if front == "nb7" else lab.LabServer
            self._open[front] = kind(lab.notebook_dir()).__enter__()
        return self._open[front]

    def close(self) -> None:
        for server in self._open.values():
            server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def hidpi_servers() -> Iterator[_Servers]:
    """This module's own JupyterLab and Notebook 7 (kernels and theme are no other test's)."""
    servers = _Servers()
    yield servers
    servers.close()


@pytest.fixture(scope="module", params=LESSON_PARAMS)
def hidpi_lesson(request, chromium, hidpi_servers, artifacts_dir) -> Iterator[lab.LessonPage]:
    """A lesson run at devicePixelRatio 2 (1366 x 768 CSS pixels) in one front end."""
    front, name = request.param
    server = hidpi_servers(front)
    with lab.opened_lesson(_HiDPIBrowser(chromium), server, name, artifacts_dir) as page:
        page.front_end = f"{front}, devicePixelRatio 2"
        yield page


def test_explorer_canvases_are_drawn_at_device_pixels(hidpi_lesson, artifacts_dir: Path):
    page = hidpi_lesson
    assert page.js("() => window.devicePixelRatio") == RATIO
    canvases = page.js(CANVASES)
    for _ in range(WAIT_S * 4):
        if canvases and all(c["width"] == RATIO * c["cssWidth"] for c in canvases):
            break
        page.page.wait_for_timeout(250)
        canvases = page.js(CANVASES)
    problems = []
    for i, c in enumerate(canvases):
        if c["width"] != RATIO * c["cssWidth"]:
            problems.append(
                f"canvas {i}: {c['width']} device pixels wide for {c['cssWidth']} CSS pixels"
            )
        if abs(c["width"] / c["height"] - c["shownWidth"] / c["shownHeight"]) > 0.02:
            problems.append(f"canvas {i}: shown out of proportion: {c}")
        if c["ink"] < 0.005:
            problems.append(f"canvas {i}: blank ({c})")
    if not canvases:
        problems.append("no explorer canvas on the page")
    front = page.front_end.split(",")[0]
    shot = artifacts_dir / f"{Path(page.name).stem}--{front}--hidpi.png"
    page.explorer(0).screenshot(path=str(shot))
    a11y.fail_with(page, problems, artifacts_dir, "hidpi")


@pytest.fixture(params=ALL_LESSONS)
def lesson(request, lesson_pages) -> lab.LessonPage:
    """The lesson run in JupyterLab (the page every browser check of it shares)."""
    return lesson_pages("lab", request.param)


def test_static_figures_have_alt_text(lesson, artifacts_dir: Path) -> None:
    page = lesson
    images = page.js(STATIC_IMAGES)
    print(f"\n{page.name}: {len(images)} static figure(s): {[i['alt'] for i in images]}")
    problems = [
        f"static figure in cell {i['cell']} has no alt text"
        for i in images
        if not (i["alt"] or "").strip()
    ]
    a11y.fail_with(page, problems, artifacts_dir, "image-alt")


def test_static_figures_follow_the_dark_theme(hidpi_lesson, artifacts_dir: Path) -> None:
    page = hidpi_lesson
    if not page.front_end.startswith("lab"):
        pytest.skip("the theme is switched from JupyterLab's Settings menu")
    if not page.js(STATIC_IMAGES):
        pytest.skip(f"{page.name} shows no static figure")
    lab.set_theme(page, "JupyterLab Dark")
    try:
        page.page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")
        page.page.wait_for_timeout(1000)  # the explorers tell the kernel
        run = page.run_all()
        assert not run.problems(), run.problems()
        page.page.wait_for_timeout(1000)
        images = page.js(STATIC_IMAGES)
        problems = [
            f"static figure in cell {i['cell']} is not drawn for the dark page: {i}"
            for i in images
            if not (i["opaque"] and i["corner"] < 40 and i["light"] > 0.002)
        ]
        a11y.fail_with(page, problems, artifacts_dir, "static-dark")
        # Issue 41: switched back to the light theme, a figure drawn for the dark page is
        # shown for the light one (the course's CSS) until its cell runs again.
        lab.set_theme(page, "JupyterLab Light")
        page.page.wait_for_function("document.body.dataset.jpThemeLight === 'true'")
        shown = static_figures_shown(page)
        assert shown and all(f["face"] > 0.7 and f["contrast"] > 4.5 for f in shown), (
            f"a figure drawn for the dark page stays dark on the light page: {shown}"
        )
    finally:
        lab.set_theme(page, "JupyterLab Light")
        page.page.wait_for_timeout(500)
