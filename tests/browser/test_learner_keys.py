"""The notebook's own keys work with an explorer's control focused, in JupyterLab and Notebook 7.

A control keeps only the keys it uses (arrows, Home/End, PageUp/PageDown, Tab, Space, Enter on
a button: ``test_keyboard`` checks those). With a slider or a button of an explorer focused, as a
learner leaves it after moving it:

* Ctrl+S saves the notebook (the file on the server changes) and its default is prevented (a
  desktop browser would otherwise open "Save page as");
* Escape leaves the control for command mode: the focus leaves the control, the notebook is in
  command mode, and ArrowDown then moves the active cell (not the slider);
* Shift+Enter runs the control's cell and moves on to the next cell.

Each lesson with an explorer, in both front ends, on the shared lesson page (``lesson_pages``).
"""

from __future__ import annotations

import time
from pathlib import Path

import a11y
import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSONS = [path for path in lab.discover_lessons() if "Explorer(" in path.read_text()]
CASES = [
    pytest.param((front, path.name), id=f"{front}-{path.stem}")
    for front in ("lab", "nb7")
    for path in LESSONS
] or [pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason="no explorers"))]
CONTROLS = {
    "slider": f"{lab.EXPLORER} input[type=range]",
    "button": f"{lab.EXPLORER} button",
}
SAVE_S = 20
RUN_S = 120

# The index of the cell holding an element, among its notebook's cells.
CELL_OF = """el => {
  const nb = el.closest('.jp-Notebook');
  const cells = [...nb.querySelectorAll('.jp-Cell')].filter(c => c.closest('.jp-Notebook') === nb);
  return cells.indexOf(el.closest('.jp-Cell'));
}"""
# Remember the next key press's event, to read whether its default was prevented.
RECORD_KEY = """() => {
  window.__attnlabKeyEvents = [];
  if (!window.__attnlabKeyRecorder) {
    window.__attnlabKeyRecorder = e => window.__attnlabKeyEvents.push(e);
    window.addEventListener('keydown', window.__attnlabKeyRecorder, true);
  }
}"""
KEY_PREVENTED = "() => window.__attnlabKeyEvents.map(e => [e.key, e.defaultPrevented])"


@pytest.fixture(params=CASES)
def lesson(request, lesson_pages) -> lab.LessonPage:
    """A lesson with an explorer, run in one front end (the page every check there shares)."""
    front, name = request.param
    return lesson_pages(front, name)


def controls_of(lesson: lab.LessonPage) -> dict:
    """{kind: locator of the first such control in an explorer}, for the kinds the lesson has."""
    found = {}
    for kind, selector in CONTROLS.items():
        locator = lesson.page.locator(selector)
        if locator.count():
            found[kind] = locator.first
    assert "slider" in found, f"{lesson.name}: no slider in an explorer"
    return found


def focus(lesson: lab.LessonPage, control) -> None:
    """Put the focus on a control as a learner leaves it (it scrolls into view first)."""
    control.scroll_into_view_if_needed()
    lesson.wait_quiet(0)
    control.focus()
    lesson.page.wait_for_timeout(100)
    assert control.evaluate("el => document.activeElement === el")


def saved_at(lesson: lab.LessonPage) -> str:
    """The notebook file's last_modified as the server reports it."""
    return lesson.server.api("GET", f"/api/contents/{lesson.name}?content=0")["last_modified"]


def test_ctrl_s_in_a_control_saves_the_notebook(lesson, artifacts_dir: Path) -> None:
    problems = []
    for kind, control in controls_of(lesson).items():
        focus(lesson, control)
        before = saved_at(lesson)
        lesson.js(RECORD_KEY)
        lesson.page.keyboard.press("Control+s")
        deadline = time.monotonic() + SAVE_S
        while saved_at(lesson) == before and time.monotonic() < deadline:
            lesson.page.wait_for_timeout(250)
        if saved_at(lesson) == before:
            problems.append(f"{kind}: Ctrl+S did not save the notebook within {SAVE_S} s")
        pressed = [p for k, p in lesson.js(KEY_PREVENTED) if k.lower() == "s"]
        if not pressed or not all(pressed):
            problems.append(f"{kind}: Ctrl+S left its default to the browser (Save page as)")
    a11y.fail_with(lesson, problems, artifacts_dir, "ctrl-s")


def test_escape_leaves_a_control_for_command_mode(lesson, artifacts_dir: Path) -> None:
    problems = []
    for kind, control in controls_of(lesson).items():
        focus(lesson, control)
        cell = control.evaluate(CELL_OF)
        value = control.evaluate("el => el.value")
        lesson.page.keyboard.press("Escape")
        lesson.page.wait_for_timeout(300)
        where = lesson.js(
            """() => { const a = document.activeElement;
                       return {control: a.hasAttribute('data-attnlab-control')
                                 || a.matches('.attnlab-explorer *'),
                               inNotebook: Boolean(a.closest('.jp-Notebook'))}; }"""
        )
        if where["control"] or not where["inNotebook"]:
            problems.append(f"{kind}: Escape left the focus at {where} (not the notebook)")
        mode = a11y.active_cell(lesson)
        if mode is None or mode["mode"] != "command" or mode["index"] != cell:
            problems.append(f"{kind}: after Escape the notebook is at {mode}, not cell {cell} ")
        lesson.page.keyboard.press("ArrowDown")
        lesson.page.wait_for_timeout(300)
        after = a11y.active_cell(lesson)
        if after is None or after["index"] != cell + 1:
            problems.append(
                f"{kind}: ArrowDown after Escape left the active cell at {after}, not {cell + 1}"
            )
        if control.evaluate("el => el.value") != value:
            problems.append(f"{kind}: ArrowDown after Escape still moved the control")
    a11y.fail_with(lesson, problems, artifacts_dir, "escape")


def test_shift_enter_in_a_control_runs_the_cell_and_moves_on(lesson, artifacts_dir) -> None:
    problems = []
    explorers = lesson.page.locator(lab.EXPLORER).count()
    for kind in controls_of(lesson):
        control = lesson.page.locator(CONTROLS[kind]).first  # the explorer is new after a run
        focus(lesson, control)
        cell = control.evaluate(CELL_OF)
        since = lesson.js("() => window.__attnlab.messages.length")
        lesson.page.keyboard.press("Shift+Enter")
        ran = lesson.js(
            """since => window.__attnlab.messages.slice(since)
                 .filter(m => m.type === 'execute_request').length""",
            since,
        )
        deadline = time.monotonic() + 5
        while not ran and time.monotonic() < deadline:
            lesson.page.wait_for_timeout(200)
            ran = lesson.js(
                """since => window.__attnlab.messages.slice(since)
                     .filter(m => m.type === 'execute_request').length""",
                since,
            )
        if not ran:
            problems.append(f"{kind}: Shift+Enter ran no cell")
            continue
        lesson.page.wait_for_function(
            "since => window.__attnlab.runFinished(since)",
            arg=since,
            timeout=RUN_S * 1000,
            polling=200,
        )
        after = a11y.active_cell(lesson)
        if after is None or after["index"] != cell + 1:
            problems.append(f"{kind}: after Shift+Enter the active cell is {after}, not {cell + 1}")
        # the cell's new explorer is on the page again before the next check
        lesson.page.wait_for_function(
            "n => document.querySelectorAll('.attnlab-explorer canvas.attnlab-figure').length >= n",
            arg=explorers,
            timeout=RUN_S * 1000,
        )
        lesson.wait_quiet(0)
    a11y.fail_with(lesson, problems, artifacts_dir, "shift-enter")
