"""What every exercise shows besides its verdict: hints, the help panel, the worked solution and
the wording of its messages.

* a hint renders as the hint and one italic line saying what to do next, in the words of where
  it was asked for (``.hint()`` or the panel's buttons), with no stray bullet or asterisk;
* the panel's "Next hint" goes through the tiers once, says "that was the last hint" once and
  is then switched off;
* the worked solution defines the very function the lesson's check cell passes to the check;
* every reason a check gives (for every wrong answer of the lesson test tables, and for answers
  that crash or return junk) ends a sentence, so the "Stuck?" tip follows a full stop;
* code spans in a message are ``<code>`` in the notebook's HTML and backticks in plain text.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import mistune
import pytest
from answer_tables import ENDS_A_SENTENCE
from test_exercises_contract import EXERCISES, by_title, crashes

from attnlab.course import lesson
from attnlab.exercises import Feedback, Outcome
from attnlab.exercises.kit.exercise import _PANEL
from attnlab.exercises.kit.feedback import joined
from attnlab.exercises.kit.outcomes import NotAttempted, Recorded, Wrong
from attnlab.exercises.rules.forbidden import _FORBIDDEN
from attnlab.exercises.solutions import defined_names

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def rendered_text(markdown: str) -> tuple[str, str]:
    """(HTML, the text a reader sees without code spans) of ``markdown`` as Jupyter shows it."""
    page = mistune.html(markdown)
    prose = re.sub(r"<code>.*?</code>", "", page)
    return page, re.sub(r"<[^>]+>", "", prose)


@by_title
@pytest.mark.parametrize("asked", ["call", "panel"])
def test_hints_render_without_a_stray_bullet_or_asterisk(exercise, asked):
    exercise = copy.copy(exercise)
    for level in range(1, len(exercise.hints) + 1):
        text = (exercise.hint(level) if asked == "call" else exercise._hint(level, _PANEL)).markdown
        page, prose = rendered_text(text)
        assert "<li>" not in page and "*" not in prose, text
        last_line = re.findall(r"<em>(.*?)</em>", page)[-1]  # what to do next, in italics
        assert ("last hint" in last_line) == (level == len(exercise.hints)), page
        if asked == "call":
            assert "<code>.hint()</code>" in last_line or "last hint" in last_line, page
        else:
            assert ".hint()" not in text and "press" in last_line.lower(), page


@by_title
def test_the_help_panel_goes_through_the_hints_once(exercise, capsys):
    """Outside a kernel the panel's Output prints what it would show, so it can be read."""
    exercise = copy.copy(exercise)
    panel = exercise.help_panel()
    next_hint = panel.children[0].children[0]
    for _ in range(len(exercise.hints) + 2):  # clicks past the last one do nothing
        next_hint.click()
    shown = capsys.readouterr().out
    assert [int(n) for n in re.findall(r"Hint (\d) of", shown)] == list(
        range(1, len(exercise.hints) + 1)
    ), shown
    assert shown.count("That was the last hint") == 1
    assert ".hint()" not in shown and "Press Next hint" in shown
    assert next_hint.disabled and next_hint.description == "No more hints"


def _learner_cells(exercise) -> list[dict]:
    """The code cells of the learner notebook of ``exercise``'s lesson."""
    path = NOTEBOOKS / f"{lesson(exercise.lesson).notebook}.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if c["cell_type"] == "code"]


@by_title
def test_every_exercise_is_checked_in_its_lesson_notebook(exercise):
    """The learner notebook has the exercise's grade cell, as the course's map says it."""
    checks = [
        "".join(c["source"])
        for c in _learner_cells(exercise)
        if c["metadata"].get("nbgrader", {}).get("grade_id") == exercise.grade_id
    ]
    assert checks == [exercise.check_call()]


@by_title
def test_the_solution_defines_the_function_the_check_cell_passes(exercise):
    code = re.search(r"```python\n(.*)\n```", exercise.solution().markdown, re.S).group(1)
    assert exercise.answer in defined_names(code), code  # `def softmax_row(` for softmax_row
    defined = set().union(*(defined_names("".join(c["source"])) for c in _learner_cells(exercise)))
    assert exercise.answer in defined  # and the learner's exercise cell defines that name too


def _generic_answers():
    """(exercise, answer) for answers that crash (with and without a message) or return junk,
    for every exercise. (The wrong answers of the lesson test tables are held to the same rule
    where they are judged, by ``answer_tables.assert_wrong``.)"""

    def silent_crash(*args, **kwargs):
        raise ValueError()

    for exercise in EXERCISES:
        for answer in (crashes, silent_crash, lambda *a, **k: "weights", 12345.678):
            yield exercise, answer


def test_every_reason_a_check_gives_ends_a_sentence():
    unfinished, seen = [], 0
    for exercise, answer in _generic_answers():
        token = _FORBIDDEN.set(exercise.forbidden)
        try:
            exercise.checker(answer)
        except Wrong as exc:
            seen += 1
            if not ENDS_A_SENTENCE.search(str(exc).rstrip()):
                unfinished.append(f"{exercise.title}: …{str(exc)[-80:]}")
        except (NotAttempted, Recorded):
            pass
        finally:
            _FORBIDDEN.reset(token)
    assert seen > 60 and unfinished == [], unfinished


@by_title
def test_the_stuck_tip_follows_a_full_stop(exercise):
    message = copy.copy(exercise).check(crashes).message
    assert re.search(r"[^.!?]\. Stuck\? Press Next hint", message) or re.search(
        r"[.!?][)'\"]? Stuck\?", message
    ), message
    assert ".. Stuck" not in message


def test_the_tip_joiner_adds_a_full_stop_only_where_one_is_missing():
    assert joined("name 'x' is not defined", "Stuck?") == "name 'x' is not defined. Stuck?"
    assert joined("Expected 3.", "Stuck?") == "Expected 3. Stuck?"
    assert joined("Is it 3?", "Stuck?") == "Is it 3? Stuck?"
    assert joined("(see above.)", "Stuck?") == "(see above.) Stuck?"


def test_code_spans_are_code_in_html_and_backticks_in_text():
    feedback = Feedback("Exercise 1.1", Outcome.WRONG, "Did you forget `return`? (a < b)")
    page = feedback._repr_html_()
    assert "<code>return</code>" in page and "`" not in page and "a &lt; b" in page
    assert "`return`" in str(feedback)
