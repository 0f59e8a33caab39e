"""An explorer says so, where it is, when its kernel is gone, and a saved lesson reopens cleanly.

For each lesson with explorers: Run All, move a slider, save (JupyterLab saves widget state:
the course's settings, jupyter-config/lab/settings), restart the kernel from the Kernel menu
and check that every explorer shows the "lost its kernel" banner; then close the page, reopen
the saved notebook and check that no output says "Error displaying widget" and that every
explorer shows its last picture (the moved one) under the same banner, and every static figure
its run showed is painted again with its alt text. Shutting the kernel down (Kernel menu) shows
the banner too. Screenshots go to artifacts/browser/.
"""

from __future__ import annotations

import json
from pathlib import Path

import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

BANNER = ".attnlab-kernel-lost"
BANNER_TEXT = "This explorer lost its kernel"
LESSONS = [
    path
    for path in lab.discover_lessons()
    if "attnlab.explorers" in path.read_text() or "Explorer(" in path.read_text()
]
LESSON_PARAMS = [pytest.param(path.name, id=path.stem) for path in LESSONS] or [
    pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason="no lesson has explorers"))
]
BANNER_S = 30

PAINTED_JS = """() => [...document.querySelectorAll('canvas.attnlab-figure')].map(c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let opaque = 0;
    for (let i = 3; i < d.length; i += 4 * 97) opaque += d[i] > 0;
    return c.width > 0 && opaque > 0;
})"""


def menu(page: lab.LessonPage, top: str, command: str) -> None:
    """Click a JupyterLab main-menu entry by its command id."""
    page.page.locator(f"li.lm-MenuBar-item:has-text('{top}')").click()
    page.page.locator(f"li.lm-Menu-item[data-command='{command}']").click()


def banners_shown(page: lab.LessonPage) -> list[bool]:
    """For each explorer root: is a visible banner with the text inside it?"""
    return page.js(
        """([root, banner, text]) => [...document.querySelectorAll(root)].map(el => {
            const b = el.querySelector(banner);
            return !!b && b.offsetParent !== null && b.textContent.includes(text)
                && el.classList.contains('attnlab-disconnected');
        })""",
        [lab.EXPLORER, BANNER, BANNER_TEXT],
    )


def wait_for_banners(page: lab.LessonPage, count: int) -> list[bool]:
    shown = banners_shown(page)
    for _ in range(BANNER_S * 4):
        if len(shown) == count and all(shown):
            break
        page.page.wait_for_timeout(250)
        shown = banners_shown(page)
    return shown


def explorers_rendered(page: lab.LessonPage, timeout_s: float = 30) -> int:
    """How many explorers the page shows once their number has held for a second.

    Run All returns when the kernel is idle and one widget has rendered; an explorer's view
    (and its anywidget children) may still be on the way, more so on a loaded machine.
    """
    counts = []
    for _ in range(int(timeout_s * 4)):
        counts.append(page.page.locator(lab.EXPLORER).count())
        if counts[-1] and counts[-4:] == [counts[-1]] * 4:
            break
        page.page.wait_for_timeout(250)
    return counts[-1]


STATIC_FIGURES_JS = """() => [...document.querySelectorAll('img.attnlab-static-figure')].map(
    img => ({alt: img.getAttribute('alt') || '', painted: img.complete && img.naturalWidth > 0}))"""


def static_figures(page: lab.LessonPage, count: int) -> list[dict]:
    """The page's static figures (alt text, painted), once ``count`` of them are painted."""
    figures = page.page.evaluate(STATIC_FIGURES_JS)
    for _ in range(BANNER_S * 4):
        if len(figures) >= count and all(f["painted"] for f in figures):
            break
        page.page.wait_for_timeout(250)
        figures = page.page.evaluate(STATIC_FIGURES_JS)
    return figures


def move_first_explorer(page: lab.LessonPage) -> str:
    """Move the first explorer's first slider one step; the digest of its new picture.

    Waits long enough for the view to keep the picture for a saved notebook.
    """
    before = page.image_digest(0)
    handle = page.explorer(0).locator("[role=slider], input[type=range]").first
    handle.scroll_into_view_if_needed()
    for key in ("ArrowRight", "ArrowLeft", "ArrowLeft"):
        handle.focus()
        page.page.keyboard.press(key)
        for _ in range(40):
            page.page.wait_for_timeout(100)
            if page.image_digest(0) != before:
                page.page.wait_for_timeout(2500)  # > KEEP_PICTURE_MS in figure_canvas.js
                return page.image_digest(0)
    raise AssertionError("the first explorer's figure did not change with its first slider")


def screenshot_figure(page: lab.LessonPage, path: Path, timeout: float = 90_000) -> None:
    """The first explorer's figure with whatever lies over it (waiting up to ``timeout`` ms for
    it: a fresh-clone CI once took more than Playwright's 30 s to show lesson 9's reopened
    figure frame, its banners already up)."""
    figure = page.explorer(0).locator(".attnlab-figure-frame").first
    figure.scroll_into_view_if_needed(timeout=timeout)
    page.page.wait_for_timeout(300)
    figure.screenshot(path=str(path))


def saved_notebook(server: lab.LabServer, name: str) -> dict:
    """The notebook as saved; ``{"metadata": {}}`` while a save is half-written (Jupyter writes
    the file in place: on a loaded machine the test read it empty)."""
    try:
        return json.loads((server.root_dir / name).read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {"metadata": {}, "cells": []}


def saved_widget_models(notebook: dict) -> dict:
    """The widget models a saved notebook holds (empty when saveState is off)."""
    state = notebook["metadata"].get("widgets", {})
    return state.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})


@pytest.mark.parametrize("name", LESSON_PARAMS)
def test_restart_shows_banner_and_reopened_lesson_shows_pictures(
    name, lesson_pages, chromium, lab_server, artifacts_dir: Path
) -> None:
    """The last check made on a lesson's shared page (it restarts the kernel and reloads)."""
    stem = Path(name).stem
    page = lesson_pages("lab", name)
    try:
        assert not page.run.errors, page.run.errors
        count = explorers_rendered(page)
        assert count > 0, f"{name}: no explorer rendered"
        assert not any(banners_shown(page)), "a banner shows while the kernel is alive"
        figures = len(page.page.evaluate(STATIC_FIGURES_JS))

        moved = move_first_explorer(page)
        menu(page, "File", "docmanager:save")
        for _ in range(60):  # the save lands within a few seconds, later on a loaded machine
            page.page.wait_for_timeout(250)
            notebook = saved_notebook(lab_server, name)
            models = saved_widget_models(notebook)
            if models and page.js("() => !document.querySelector('.jp-mod-dirty')"):
                break
        assert models, "the saved notebook holds no widget state (saveState is off?)"
        pngs = [
            o
            for c in notebook["cells"]
            for o in c.get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
            and "image/png" in o["data"]
        ]
        assert len(pngs) >= count, f"{len(pngs)} explorer outputs with image/png for {count}"

        menu(page, "Kernel", "kernelmenu:restart")
        accept = page.page.locator(".jp-Dialog .jp-mod-accept")
        accept.wait_for(timeout=10_000)
        accept.click()
        shown = wait_for_banners(page, count)
        screenshot_figure(page, artifacts_dir / f"{stem}--kernel-restarted.png")
        assert len(shown) == count and all(shown), f"banners after restart: {shown}"
    finally:
        lesson_pages.close("lab")

    reopened = lab.LessonPage(chromium, lab_server, name)
    try:
        reopened.open()
        shown = wait_for_banners(reopened, count)
        assert reopened.widget_render_errors() == []
        assert len(shown) == count and all(shown), f"banners after reopening: {shown}"
        screenshot_figure(reopened, artifacts_dir / f"{stem}--reopened.png")
        painted = reopened.page.evaluate(PAINTED_JS)
        assert painted and all(painted), f"figures painted after reopening: {painted}"
        for _ in range(BANNER_S * 4):
            if reopened.image_digest(0) == moved:
                break
            reopened.page.wait_for_timeout(250)
        assert reopened.image_digest(0) == moved, "the reopened figure is not its last picture"
        # Static figures are saved once, in their HTML (attnlab/save_hook.py): each comes back
        # painted, with its alt text.
        shown_figures = static_figures(reopened, figures)
        assert len(shown_figures) == figures, f"{len(shown_figures)} of {figures} static figures"
        assert all(f["painted"] and f["alt"].strip() for f in shown_figures), shown_figures
        print(f"{name} reopened: {count} explorer pictures, {figures} static figures painted")
    finally:
        reopened.close()
        lab_server.shutdown_kernels()


@pytest.mark.parametrize("name", LESSON_PARAMS[:1])
def test_kernel_shut_down_shows_banner(name, chromium, lab_server) -> None:
    page = lab.LessonPage(chromium, lab_server, name)
    try:
        page.open()
        page.run_all()
        count = explorers_rendered(page)
        assert count > 0, f"{name}: no explorer rendered"
        menu(page, "Kernel", "kernelmenu:shutdown")  # JupyterLab 4.6 asks nothing here
        shown = wait_for_banners(page, count)
        assert len(shown) == count and all(shown), f"banners after shutting down: {shown}"
    finally:
        page.close()
        lab_server.shutdown_kernels()
