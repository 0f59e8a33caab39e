"""Lesson cells marked for grading to leave out (``attnlab.exercises.rules.left_out.SKIP``) are
safe to leave out: no cell the grading kernel runs (lesson cells, answers, checks) uses a name
that only a skipped cell binds, and no answer or check cell is marked."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from attnlab.exercises.rules.left_out import SKIP
from attnlab.grading.grade import skipped

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(ROOT.glob("source/*/*.ipynb"))


def _code(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _bound(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
    return names


def _loaded(tree) -> set[str]:
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


@pytest.mark.parametrize("path", SOURCES, ids=[p.parent.name for p in SOURCES])
def test_no_cell_grading_runs_needs_a_skipped_cell(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    run_bound, skip_bound, needed = set(), set(), {}
    for index, cell in enumerate(cells):
        tree = ast.parse(_code(cell))
        nbgrader = cell.get("metadata", {}).get("nbgrader", {})
        marked = cell.get("metadata", {}).get(SKIP[0], {}).get(SKIP[1]) == SKIP[2]
        assert not (marked and (nbgrader.get("solution") or nbgrader.get("grade"))), (
            f"cell {index}: an answer or check cell cannot be left out of grading"
        )
        if skipped(cell):
            skip_bound |= _bound(tree)
            continue
        for name in _loaded(tree) - run_bound - _bound(tree):
            needed.setdefault(name, index)
        run_bound |= _bound(tree)
    missing = {name: index for name, index in needed.items() if name in skip_bound - run_bound}
    assert not missing, f"names only skipped cells bind, used by cells grading runs: {missing}"


def test_the_mark_is_read_and_a_cell_without_it_runs():
    marked = {"cell_type": "code", "source": "x = 1", "metadata": {"attnlab": {"grading": "skip"}}}
    plain = {"cell_type": "code", "source": "x = 1", "metadata": {}}
    assert skipped(marked) and not skipped(plain)
    assert skipped({"cell_type": "code", "source": "lesson1.dot.help_panel()", "metadata": {}})
