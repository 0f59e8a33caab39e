"""*Get the stub back* gives the answer cell as the lesson shipped it, never the learner's own
saved answer (issue 41).

The learner edits ``notebooks/01-dot-product-scores.ipynb``, the very file a clone of the course
opens, so the stub cannot be read from there: it comes from ``attnlab/exercises/stubs.json``,
written from ``source/`` by ``tools/build_notebooks.py`` and kept up to date here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import build_notebooks  # tools/build_notebooks.py (tools/ is on pytest's pythonpath)

from attnlab.exercises.solutions import STUBS_FILE, answer_cells_in

ROOT = Path(__file__).resolve().parents[1]
LESSON_1 = "01-dot-product-scores.ipynb"
SAVED = "def dot(q, k):\n    # my own try, saved\n    return float(q @ k)\n"


def test_the_stubs_the_package_ships_are_up_to_date():
    assert STUBS_FILE.read_text(encoding="utf-8") == build_notebooks.stubs_text(), (
        "attnlab/exercises/stubs.json is out of date: run ./run.sh build"
    )


def test_a_saved_answer_does_not_come_back_as_the_stub(tmp_path):
    """A copy of the course as a learner has it (the package beside ``notebooks/``), whose
    lesson 1 notebook was saved with an answer typed into 1.1's cell."""
    shutil.copytree(ROOT / "attnlab", tmp_path / "attnlab", ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    shipped = answer_cells_in(ROOT / "notebooks" / LESSON_1)["lesson1.dot"].strip("\n")
    path = tmp_path / "notebooks" / LESSON_1
    notebook = json.loads(path.read_text(encoding="utf-8"))
    (cell,) = [c for c in notebook["cells"] if "".join(c["source"]) == shipped]
    cell["source"] = SAVED
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert answer_cells_in(path)["lesson1.dot"] == SAVED

    env = {k: v for k, v in os.environ.items() if k != "ATTNLAB_SOURCE"}
    env["PYTHONPATH"] = str(tmp_path)
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "from attnlab.exercises import lesson1; print(lesson1.dot.stub().markdown)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "my own try" not in shown
    assert f"```python\n{shipped}\n```" in shown
