"""Lesson 0's widget self-test, used the way a learner uses it, in JupyterLab and Notebook 7.

After Run All, pressing the self-test slider's right arrow three times must make the kernel's
reply line say it received 3 and redraw the bar (the same canvas widget the explorers draw
their figures in) with new pixels, and leave the notebook's active cell where it was (the
key belongs to the slider, not to the notebook's shortcuts). The reply is a polite live region.
"""

from __future__ import annotations

import a11y
import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSON_0 = "00-start-here.ipynb"
SELFTEST = ".attnlab-selftest"
PIXELS = """root => {
    const canvas = root.querySelector('canvas.attnlab-figure');
    if (!canvas || !canvas.width) return null;
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let green = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i + 1] === 94 && data[i] === 19) green++;
    return green;
}"""


FRONT_ENDS = {"lab": "lab_server", "nb7": "nb7_server"}


@pytest.mark.skipif(
    not (lab.notebook_dir() / LESSON_0).exists(), reason=f"no {LESSON_0} in the lessons"
)
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_selftest_round_trip_reaches_the_kernel_and_the_canvas(front, lesson_pages, artifacts_dir):
    page = lesson_pages(front, LESSON_0)  # the first check made on lesson 0's shared page
    box = page.page.locator(SELFTEST)
    box.scroll_into_view_if_needed()
    root = box.element_handle()
    page.page.wait_for_function(f"root => ({PIXELS})(root) !== null", arg=root)
    assert root.evaluate(PIXELS) == 0, "the bar starts empty"
    slider = box.get_by_role("slider", name="drag me")
    slider.focus()  # (a click would also move it, to where it lands)
    cell = a11y.active_cell(page)
    for _ in range(3):
        page.page.keyboard.press("ArrowRight")
    reply = box.locator(".attnlab-selftest-reply")
    reply.filter(has_text="received 3").wait_for(timeout=lab.STEP_S * 1000)
    page.page.wait_for_function(f"root => ({PIXELS})(root) > 0", arg=root)
    assert "the round trip works" in reply.inner_text()
    assert slider.get_attribute("aria-valuetext") == "3"
    assert reply.locator("[role=status][aria-live=polite]").count() == 1
    assert a11y.active_cell(page) == cell, "the arrow keys moved the notebook's active cell"
    box.screenshot(path=str(artifacts_dir / f"00-start-here--selftest-{front}.png"))
