"""Every explorer control operated from the keyboard, in JupyterLab and in Notebook 7.

For each lesson and each front end (JupyterLab 4 and Jupyter Notebook 7, each a private server)
the lesson is run as a learner runs it (Run All, 1366 x 768), then inside every
``.attnlab-explorer``:

* Tab walks from the first control to the last, in order, without leaving the explorer;
* every control reached with Tab shows a clear focus ring (the page's pixels around it change
  by at least a 2 px ring's worth; the faint 1 px default does not pass);
* every control is focused and given the key a learner would press (ArrowRight/ArrowLeft on a
  slider, ArrowDown on a dropdown, Space on a checkbox, Space or Enter on a button or toggle
  option not yet chosen): its value must change, the figure's pixels must change, and the
  notebook's active cell must stay where it was (the key belongs to the control, not to the
  notebook's shortcuts). A push button must at least reach the kernel.

Controls are found generically (input, select, button, ARIA roles, tabindex), so the test holds
for any widget library. Lesson 0 also tells learners to "press the right arrow" on the slider
*score of key 1*: that exact instruction is tested in both front ends. Each help panel's
"Next hint" button works with Enter or Space too.
"""

from __future__ import annotations

from pathlib import Path

import a11y
import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

FRONT_ENDS = {"lab": "lab_server", "nb7": "nb7_server"}
LESSONS = lab.discover_lessons()
CASES = [
    pytest.param((front, path.name), id=f"{front}-{path.stem}")
    for front in FRONT_ENDS
    for path in LESSONS
] or [pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason="no lessons found"))]
LESSON_0_SLIDER = "score of key 1"


@pytest.fixture(params=CASES)
def lesson(request, lesson_pages) -> lab.LessonPage:
    """A lesson run in one front end at 1366 x 768 (the page every check there shares)."""
    front, name = request.param
    return lesson_pages(front, name)


def test_tab_reaches_every_control(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """Tab moves through each explorer's controls in order, reaching every one of them."""
    problems = a11y.problems_in_every_explorer(lesson, a11y.tab_order_problems)
    a11y.fail_with(lesson, problems, artifacts_dir, "tab-order")


def test_focus_ring_is_visible(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """Every control reached with Tab shows a clear focus ring (not a faint 1 px outline)."""
    problems = a11y.problems_in_every_explorer(lesson, a11y.focus_ring_problems)
    a11y.fail_with(lesson, problems, artifacts_dir, "focus-ring")


def test_every_control_works_from_the_keyboard(lesson: lab.LessonPage, artifacts_dir: Path):
    """Each control's key changes its value and the figure, and never moves the active cell."""
    count = lesson.page.locator(a11y.EXPLORER).count()
    if not count:
        pytest.skip(f"{lesson.name} has no explorer")
    problems, pressed = [], 0
    for index in range(count):
        results = a11y.press_every_control(lesson, index)
        pressed += len(results)
        if not results:
            problems.append(f"{a11y.explorer_label(lesson, index)}: no keyboard-operable control")
        for result in results:
            problems += [f"{a11y.explorer_label(lesson, index)}: {p}" for p in result.problems()]
    print(
        f"\n{lesson.name} in {lesson.front_end}: {pressed} key presses on "
        f"{count} explorer(s), {len(problems)} problem(s)"
    )
    a11y.fail_with(lesson, problems, artifacts_dir, "keyboard")


def test_help_panels_work_from_the_keyboard(lesson: lab.LessonPage, artifacts_dir: Path):
    """Enter (or Space) on each help panel's "Next hint" shows a hint and leaves the notebook's
    active cell and mode alone."""
    count = lesson.page.locator(a11y.HELP_PANEL).count()
    if not count:
        pytest.skip(f"{lesson.name} has no help panel")
    problems = []
    for panel in range(count):
        problems += a11y.help_button_problems(lesson, panel, ("Enter", "Space")[panel % 2])
    a11y.fail_with(lesson, problems, artifacts_dir, "help-keyboard")


def test_lesson_0_right_arrow_instruction(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """Lesson 0: "click the slider *score of key 1* and press the right arrow" works."""
    if not Path(lesson.name).stem.startswith("00-"):
        pytest.skip("only lesson 0 gives this instruction")
    for index in range(lesson.page.locator(a11y.EXPLORER).count()):
        sliders = [
            c
            for c in a11y.controls(lesson, index)
            if c["kind"] == "slider" and LESSON_0_SLIDER in c["label"]
        ]
        if sliders:
            break
    else:
        pytest.fail(f"no slider labelled {LESSON_0_SLIDER!r} in lesson 0's explorers")
    state = a11y.control_state(lesson, sliders[0]["id"])
    if state["now"] >= state["max"]:
        pytest.fail(
            f"{LESSON_0_SLIDER!r} starts at its maximum {state['max']}: "
            "the right arrow cannot move it"
        )
    result = a11y.press_control(lesson, index, sliders[0], "ArrowRight")
    problems = result.problems()
    after = result.state_after or {}
    if result.value_changed and not after.get("now", 0) > state["now"]:
        problems.append(
            f"the right arrow moved {LESSON_0_SLIDER!r} from {state['now']} to "
            f"{after.get('now')}, not up"
        )
    a11y.fail_with(lesson, problems, artifacts_dir, "right-arrow")
