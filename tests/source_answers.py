"""The worked answers of the lesson sources, as functions the tests can pass to a check.

Each solution cell of ``source/NN-name/NN-name.ipynb`` is run after the lesson's own import
cell (its first code cell), the way it runs in the notebook.
"""

from __future__ import annotations

import json
from pathlib import Path

from attnlab.exercises.solutions import source_folder, worked_solutions

SOURCE = Path(__file__).resolve().parents[1] / "source"


def _import_cell(lesson: str) -> str:
    number = lesson.removeprefix("lesson").zfill(2)
    path = next(SOURCE.glob(f"{number}-*/{number}-*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def worked_answer(exercise):
    """The source notebook's worked answer to ``exercise``, defined and ready to check."""
    name = exercise.name
    code = worked_solutions(str(source_folder()))[name]
    namespace: dict = {}
    exec(_import_cell(name.split(".")[0]), namespace)  # noqa: S102 - the course's own cells
    exec(code, namespace)  # noqa: S102
    return namespace[exercise.answer]
