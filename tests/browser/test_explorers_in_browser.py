"""Every lesson, run as a learner runs it in JupyterLab, and every explorer slider pressed.

For each lesson notebook ``notebooks/NN-*.ipynb`` (discovered, so new lessons are covered):

* Run > Run All Cells finishes with no cell raising, no cell left unexecuted and no
  "Error displaying widget";
* in every ``.attnlab-explorer``, one key press on every slider changes the figure's pixels, the
  slider's readout, and (for at least one slider of the explorer) its ``.attnlab-readout``
  texts, while ``.attnlab-error`` stays empty and the kernel prints no traceback; the slider's
  ``aria-valuetext`` is its readout as shown (no float noise such as 0.7000000000000002);
  after the explorer's first step, a step's readout travels once, in its frame: the kernel
  sends no state update of that Readout (the page sets the model from the frame).

Each explorer is screenshotted into the artifacts folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSONS = lab.discover_lessons()
NO_LESSONS = pytest.mark.skip(reason=f"no {lab.LESSON_GLOB} lessons in {lab.notebook_dir()}")
LESSON_PARAMS = [pytest.param(path.name, id=path.stem) for path in LESSONS] or [
    pytest.param(None, id="no-lessons", marks=NO_LESSONS)
]


@dataclass
class OpenLesson:
    """A lesson opened in JupyterLab after Run All."""

    page: lab.LessonPage
    run: lab.RunResult

    @property
    def stem(self) -> str:
        """The notebook name without .ipynb, used to name artifacts."""
        return Path(self.page.name).stem


@pytest.fixture(params=LESSON_PARAMS)
def lesson(request, lesson_pages) -> OpenLesson:
    """The lesson open in JupyterLab with all cells run (the page every browser check shares;
    a Run All that fails fails here, with a screenshot)."""
    page = lesson_pages("lab", request.param)
    return OpenLesson(page, page.run)


def fail_with(problems: list[str], lesson: OpenLesson, artifacts_dir: Path, what: str) -> None:
    """Screenshot the whole page and fail listing every problem, if there are any."""
    if not problems:
        return
    shot = artifacts_dir / f"{lesson.stem}--FAILED-{what}.png"
    lesson.page.screenshot(shot)
    details = "\n".join(f"  - {p}" for p in problems)
    if lesson.page.page_errors:
        details += "\n  page errors: " + "; ".join(lesson.page.page_errors[:5])
    pytest.fail(f"{lesson.page.name}: {what}:\n{details}\n  screenshot: {shot}", pytrace=False)


def test_run_all_without_errors(lesson: OpenLesson, artifacts_dir: Path) -> None:
    """Run All leaves no error output, no skipped cell and no widget that failed to render."""
    problems = lesson.run.problems()
    problems += [f"widget did not render: {text}" for text in lesson.page.widget_render_errors()]
    if lesson.page.loading_widgets():
        problems.append(
            f"{lesson.page.loading_widgets()} widget(s) still show 'Loading widget...' "
            f"{lab.WIDGETS_APPEAR_S} s after Run All"
        )
    if lesson.run.widget_views and not lesson.page.rendered_widgets():
        problems.append(
            f"the kernel displayed {lesson.run.widget_views} widget(s) but none rendered "
            f"(after {lesson.run.attempts} Run All attempts)"
        )
    fail_with(problems, lesson, artifacts_dir, "run-all")


def test_explorers_respond_to_every_slider(lesson: OpenLesson, artifacts_dir: Path) -> None:
    """Every explorer slider redraws the figure and updates readouts, without errors."""
    explorers = lesson.page.explorers()
    if not explorers:
        pytest.skip(f"{lesson.page.name} has no .attnlab-explorer (run-all checks still apply)")
    problems = []
    for info in explorers:
        problems += check_explorer(lesson, info, artifacts_dir)
    fail_with(problems, lesson, artifacts_dir, "explorers")


def check_explorer(lesson: OpenLesson, info: dict, artifacts_dir: Path) -> list[str]:
    """Press a key on every slider handle of one explorer; return what went wrong."""
    page, index = lesson.page, info["index"]
    label = f"explorer {info['name']!r} (#{index})"
    problems = structural_problems(info)
    page.explorer(index).scroll_into_view_if_needed()
    page.wait_quiet(index)
    initial_error = page.snapshot(index)["error"]
    if initial_error:
        problems.append(f"error area not empty after Run All: {initial_error}")
    readouts_moved = []
    steps = 0
    for s, slider in enumerate(info["sliders"]):
        for h in range(len(slider["handles"])):
            name = slider["label"] or f"slider {s}"
            found, moved, messages = press_once(page, index, s, h)
            if steps:  # the first step's frame is what makes the page find the model
                found += readout_sent_twice(messages)
            steps += 1
            problems += [f"slider {name!r}: {p}" for p in found]
            readouts_moved.append(moved)
    if info["readouts"] and readouts_moved and not any(readouts_moved):
        problems.append("no slider changed any .attnlab-readout text")
    shot = artifacts_dir / f"{lesson.stem}--{index:02d}-{info['name']}.png"
    page.explorer(index).screenshot(path=str(shot))
    return [f"{label}: {p}" for p in problems]


def structural_problems(info: dict) -> list[str]:
    """Contract checks that need no interaction: a figure and at least one slider."""
    problems = []
    if not info["hasFigure"]:
        problems.append("has no figure (canvas.attnlab-figure or .widget-image)")
    if not info["sliders"]:
        problems.append(f"has no slider ({lab.SLIDER})")
    return problems


def handle_state(snapshot: dict, slider: int, handle: int) -> dict:
    """now/min/max of one slider handle in an explorer snapshot."""
    return snapshot["sliders"][slider]["handles"][handle]


def readout_sent_twice(messages: list[dict]) -> list[str]:
    """A Readout whose frame carried its HTML but whose state the kernel sent as well.

    >>> frame = {"dir": "in", "type": "comm_msg", "method": "custom", "readoutModel": "r"}
    >>> update = {"dir": "in", "type": "comm_msg", "method": "update", "comm": "r"}
    >>> readout_sent_twice([frame]), len(readout_sent_twice([frame, update]))
    ([], 1)
    """
    carried = {m["readoutModel"] for m in messages if m.get("readoutModel") and m["dir"] == "in"}
    twice = {
        m["comm"]
        for m in messages
        if m["dir"] == "in"
        and m["type"] == "comm_msg"
        and m.get("method") == "update"
        and m.get("comm") in carried
    }
    back = {
        m["comm"]
        for m in messages
        if m["dir"] == "out" and m["type"] == "comm_msg" and m.get("comm") in carried
    }
    return [
        "the kernel sent the readout as a state update although its frame carried it "
        f"(one message more per step; Readout model {comm})"
        for comm in sorted(twice)
    ] + [
        f"the page sent the readout back to the kernel (a message more per step; {comm})"
        for comm in sorted(back)
    ]


def press_once(
    page: lab.LessonPage, index: int, slider: int, handle: int
) -> tuple[list, bool, list]:
    """One key press on a handle; returns (problems, whether .attnlab-readout texts changed,
    the kernel messages the page recorded from the key press on)."""
    page.wait_quiet(index)
    before = page.snapshot(index)
    digest_before = page.image_digest(index)
    key = lab.key_towards_free_side(handle_state(before, slider, handle))
    marks = page.step(index, slider, key, handle)
    settled = page.wait_quiet(index)
    after = page.snapshot(index)
    problems = []
    if handle_state(after, slider, handle)["now"] == handle_state(before, slider, handle)["now"]:
        problems.append(f"{key} did not move the slider")
    if marks["outcome"] == "timeout":
        problems.append(f"figure did not change within {lab.STEP_S} s of {key}")
    elif marks["outcome"] == "unchanged" or after["frame"] == before["frame"]:
        problems.append(f"figure did not change after {key} (the kernel had finished the update)")
    elif page.image_digest(index) == digest_before:
        problems.append("figure was redrawn but its pixels are identical")
    readout_before = before["sliders"][slider]["readout"]
    if readout_before is not None and after["sliders"][slider]["readout"] == readout_before:
        problems.append(f"slider readout stayed {readout_before!r} after {key}")
    problems += valuetext_problems(after["sliders"][slider], handle)
    if after["error"]:
        problems.append(f"error shown after {key}: {after['error']}")
    if not settled:
        problems.append("explorer kept changing (or the kernel stayed busy) for 10 s after a step")
    problems += kernel_tracebacks(page, marks)
    messages = page.messages_since(marks["key"]) if marks.get("key") is not None else []
    return problems, after["readouts"] != before["readouts"], messages


def valuetext_problems(slider: dict, handle: int) -> list[str]:
    """aria-valuetext must be what the readout shows, and never float noise.

    >>> valuetext_problems({"readout": "0.7", "handles": [{"text": "0.7"}]}, 0)
    []
    >>> valuetext_problems({"readout": "0.7", "handles": [{"text": "0.7000000000000002"}]}, 0)
    ["aria-valuetext '0.7000000000000002' is not the readout '0.7'", \
"aria-valuetext '0.7000000000000002' is float noise"]
    """
    text = slider["handles"][handle]["text"]
    problems = []
    if slider["readout"] is not None and text != slider["readout"]:
        problems.append(f"aria-valuetext {text!r} is not the readout {slider['readout']!r}")
    if text is None or re.search(r"\d\.\d*(0{6,}|9{6,})\d", text):
        problems.append(f"aria-valuetext {text!r} is float noise")
    return problems


def kernel_tracebacks(page: lab.LessonPage, marks: dict) -> list[str]:
    """Errors or tracebacks the kernel sent (to the log console) since the key press."""
    if marks.get("key") is None:
        return []
    found = []
    for message in page.messages_since(marks["key"]):
        if message["type"] == "error":
            found.append(f"kernel error in callback: {message['ename']}: {message['evalue']}")
        elif message.get("stream") == "stderr" and "Traceback" in message.get("text", ""):
            found.append("kernel traceback in callback: " + message["text"].strip()[-300:])
    return found


def test_chromium_is_installed() -> None:
    """Where the suite is enabled (always in CI) the browser must exist: fail, never skip."""
    assert lab.chromium_available(), (
        f"no Chromium at {lab.CHROMIUM}; install Debian's (apt-get install chromium) "
        "or point ATTNLAB_CHROMIUM at one"
    )


def test_a_new_view_shows_the_readout_of_the_last_step(lesson_pages, artifacts_dir: Path):
    """A view of an explorer made after slider steps shows the readout of the last step.

    The kernel no longer sends a step's readout as the Readout's state (the frame carries it,
    and the page sets the model from it), so this is what proves the page's model has it:
    JupyterLab's "Create New View for Cell Output" renders new views from the page's models.
    The new view then follows the next step as well.
    """
    page = lesson_pages("lab", "01-dot-product-scores.ipynb")
    if not page.explorers():
        pytest.skip("lesson 1 shows no explorer")
    problems = []
    for _ in range(2):  # the first step finds the Readout model; the second is handed over
        found, _moved, _messages = press_once(page, 0, 0, 0)
        problems += found
    original = page.explorer(0).locator(".attnlab-readout").first
    before = original.inner_text()
    page.explorer(0).locator(".attnlab-readout").first.click(button="right")
    page.page.get_by_text("Create New View for Cell Output", exact=True).click()
    linked = page.page.locator(".jp-LinkedOutputView .attnlab-readout").first
    try:
        linked.wait_for(timeout=15_000)
        shown = linked.inner_text()
        if shown != before:
            problems.append(f"the new view shows {shown!r}, the explorer {before!r}")
        found, _moved, _messages = press_once(page, 0, 0, 0)
        problems += found
        page.wait_quiet(0)
        after = original.inner_text()
        if after == before:
            problems.append("the step did not change the explorer's readout")
        elif linked.inner_text() != after:
            problems.append(
                f"after a step the new view shows {linked.inner_text()!r}, not {after!r}"
            )
    finally:
        close = page.page.locator(".lm-TabBar-tab:has-text('Output View') .lm-TabBar-tabCloseIcon")
        if close.count():
            close.first.click()
    if problems:
        page.screenshot(artifacts_dir / "01-dot-product-scores--FAILED-new-view.png")
    assert not problems, "\n".join(problems)
