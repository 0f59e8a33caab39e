"""What the lessons say matches what they show (issue 41, tried as a new learner would)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from attnlab.exercises.solutions import defined_names

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for p in (ROOT / "source").glob("*/*.ipynb") if p.stem == p.parent.name)


def cells(stem: str):
    (path,) = [p for p in SOURCES if p.stem.startswith(stem)]
    return nbformat.read(path, as_version=4).cells


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_a_name_said_to_be_above_is_defined_above(path):
    """ "`softmax_steps` above" (lesson 3's exercise 3.1, whose worked example came after it):
    a name a lesson's text places above is defined by a code cell before that text."""
    defined: set[str] = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            defined |= defined_names(cell.source)
            continue
        for name in re.findall(r"`(\w+)(?:\([^`]*\))?`\s+above", cell.source):
            assert name in defined, f"{path.stem}: `{name}` above, defined only below"


def test_lesson_0_lists_as_many_outcomes_as_it_says():
    """Lesson 0 said a check has "exactly three outcomes" and listed four under it."""
    from attnlab.exercises import lesson0

    shown = [feedback.outcome.value for feedback in lesson0.outcome_examples()]
    lesson = cells("00")
    (at,) = [n for n, c in enumerate(lesson) if "outcome_examples()" in c.source]
    said = re.search(r"has (?:exactly )?(\w+) outcomes", lesson[at - 1].source)
    assert said and said[1] == ["one", "two", "three", "four"][len(shown) - 1]
    listed = lesson[at + 1].source.split("\n\n")[0]  # the list right under the examples
    bullets = re.findall(r"^\* \*\*(.+?)\.?\*\*", listed, re.M)
    assert bullets == shown, bullets


def test_exercise_8_4_states_its_task_before_the_rules_of_its_check():
    """8.4's statement was mostly grading rules with the task buried in them: the task comes in
    a few short paragraphs, the rules in a "What the check measures" panel that opens."""
    (statement,) = [c.source for c in cells("08") if c.source.startswith("### Exercise 8.4")]
    task, opened, rules = statement.partition("<details>")
    assert opened and "</details>" in rules
    assert re.search(r"<summary>.*What the check measures", rules, re.S)
    assert "tiled_loop(q, k, v, block," in task and "Return `(output, tiles)`" in task
    assert len(task) < 2000, len(task)
    for rule in (
        "250,000 keys",
        "whatever its size",
        "fills them with NaN",
        "do not call a softmax",
    ):
        assert rule in rules and rule not in task, rule


def test_the_cost_lab_text_describes_the_picture():
    """The lab said the tile slides along the stripe while the picture stood still: the text
    names the arrow the picture draws for the tile's path, and says a small tile is drawn
    larger, as the caption does."""
    from attnlab.explorers.cost import CostExplorer

    (text,) = [c.source for c in cells("08") if "### Explorer: the cost lab" in c.source]
    lab = CostExplorer(n=16384, block_size=64)
    assert lab.artists["walk"].get_visible() and "arrow" in text
    assert "drawn larger" in lab.artists["caption"].texts[0] and "drawn larger" in text
