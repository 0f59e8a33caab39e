"""The committed notebooks: clean (no outputs, no widget state), learner versions up to date."""

from __future__ import annotations

from pathlib import Path

import build_notebooks  # tools/build_notebooks.py (tools/ is on pytest's pythonpath)
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

SOURCES = build_notebooks.source_notebooks()
LEARNER = sorted((ROOT / "notebooks").glob("*.ipynb"))
ALL = SOURCES + LEARNER


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_there_are_lessons():
    if not SOURCES:
        pytest.skip("no lessons yet")
    assert SOURCES, "no source notebooks found under source/"
    assert [p.stem for p in SOURCES] == [p.stem for p in LEARNER]


@pytest.mark.parametrize("path", ALL, ids=_id)
def test_committed_without_outputs_or_widget_state(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert "widgets" not in notebook.metadata, "widget state is saved in the notebook metadata"
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} has saved outputs"
            assert cell.execution_count is None, f"cell {index} has an execution count"


@pytest.mark.parametrize("source", SOURCES, ids=_id)
def test_learner_notebook_is_up_to_date(source):
    target = ROOT / "notebooks" / f"{source.stem}.ipynb"
    assert target.exists(), f"{_id(target)} is missing: run ./run.sh build"
    assert target.read_text(encoding="utf-8") == build_notebooks.learner_version(source), (
        f"{_id(target)} is out of date with {_id(source)}: run ./run.sh build"
    )


def test_the_lesson_names_the_learners_check_reads_are_up_to_date():
    """attnlab/exercises/lesson_names.json: the names each lesson's own cells bind."""
    path = ROOT / "attnlab" / "exercises" / "lesson_names.json"
    assert path.read_text(encoding="utf-8") == build_notebooks.lesson_names_text(), (
        "attnlab/exercises/lesson_names.json is out of date: run ./run.sh build"
    )


@pytest.mark.parametrize("path", LEARNER, ids=_id)
def test_learner_notebooks_hold_no_solutions(path):
    text = path.read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text


@pytest.mark.parametrize("source", SOURCES, ids=_id)
def test_lesson_shape(source):
    """Carpentries shape: header with time, prerequisites and objectives; key points at the end."""
    notebook = nbformat.read(source, as_version=4)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown").lower()
    for heading in ("prerequisites", "objectives", "key points"):
        assert heading in markdown, f"{_id(source)} has no '{heading}'"
    assert "time" in markdown or "duration" in markdown
    grade_ids = [
        c.metadata["nbgrader"]["grade_id"] for c in notebook.cells if "nbgrader" in c.metadata
    ]
    assert len(grade_ids) == len(set(grade_ids)), "nbgrader grade_ids must be unique"


def test_every_solution_cell_has_a_locked_check_after_it():
    for source in SOURCES:
        cells = nbformat.read(source, as_version=4).cells
        for index, cell in enumerate(cells):
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("solution") and cell.cell_type == "code":
                following = [c.metadata.get("nbgrader", {}) for c in cells[index + 1 : index + 3]]
                assert any(m.get("grade") and m.get("locked") for m in following), (
                    f"{_id(source)} cell {index}: no locked grade cell after this solution"
                )
