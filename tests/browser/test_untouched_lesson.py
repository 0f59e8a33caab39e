"""A lesson opened and read, not changed, is not modified, and closing it asks nothing (issue 41).

A new learner opened a lesson, read it and closed its tab: JupyterLab asked "Save your work?",
and every lesson showed as modified (the dot on its tab) as soon as its kernel was idle. The
kernel's start wrote its ``language_info`` into the notebook's metadata, which marks the
document modified; the course's server now gives a lesson the ``language_info`` the kernel
reports, so JupyterLab has nothing to write (:mod:`attnlab.save_hook`).

Untouched means opened and read without running a cell: the kernel started and idle, cells
selected and the notebook scrolled with the keyboard, as a reader does. Running a cell
changes the notebook (outputs, execution counts, widget state), so it does mark the lesson
modified, and closing it then asks, as JupyterLab always does: not checked here.
"""

from __future__ import annotations

from pathlib import Path

import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSON = "01-dot-product-scores.ipynb"
TAB = f".lm-TabBar-tab:has-text('{LESSON}')"
#: How long the tab is watched after the kernel went quiet (the kernel's metadata came before).
WATCH_MS = 1500


def tab_classes(page: lab.LessonPage) -> list[str]:
    return page.page.locator(TAB).evaluate_all("tabs => tabs.map(t => t.className)")


def test_a_lesson_opened_and_read_is_not_modified_and_closes_without_a_question(
    chromium, lab_server, artifacts_dir: Path
) -> None:
    page = lab.LessonPage(chromium, lab_server, LESSON, viewport=lab.LAPTOP_VIEWPORT)
    try:
        page.open()  # the kernel connected, idle and quiet for 0.5 s
        page.page.locator(".jp-Notebook .jp-Cell").first.click()
        page.page.keyboard.press("Escape")  # command mode: select cells and scroll, as reading
        for _ in range(6):
            page.page.keyboard.press("j")
        page.page.wait_for_timeout(WATCH_MS)
        classes = tab_classes(page)
        assert classes, f"no tab for {LESSON}"
        if any("jp-mod-dirty" in c for c in classes):
            page.screenshot(artifacts_dir / "untouched-lesson--modified.png")
        assert not any("jp-mod-dirty" in c for c in classes), (
            f"{LESSON} shows as modified after opening and reading it: {classes}"
        )

        page.page.locator(f"{TAB} .lm-TabBar-tabCloseIcon").first.click()
        page.page.wait_for_timeout(1000)
        dialogs = page.page.locator(".jp-Dialog").all_text_contents()
        if dialogs:
            page.screenshot(artifacts_dir / "untouched-lesson--close-dialog.png")
        assert not dialogs, f"closing the untouched {LESSON} asked: {dialogs}"
        assert not tab_classes(page), f"{LESSON}'s tab did not close"
    finally:
        page.close()
