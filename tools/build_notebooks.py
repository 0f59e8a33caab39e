"""Generate the learner notebooks in ``notebooks/`` from the nbgrader sources in ``source/``.

Each lesson has one source notebook, ``source/<lesson>/<lesson>.ipynb``, laid out as
an nbgrader course directory, with solutions between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` in cells that carry nbgrader metadata. The learner version is
made with nbgrader's own preprocessors (the ones ``nbgrader generate_assignment``
runs): solutions replaced by a stub, outputs cleared, grade cells locked.

Usage::

    python tools/build_notebooks.py          # write notebooks/
    python tools/build_notebooks.py --check  # exit 1 if notebooks/ is out of date

It also writes ``attnlab/exercises/lesson_names.json``: the names each lesson's own code cells
bind, which grading's kernel has whatever the learner did to those cells
(:mod:`attnlab.exercises.rules.unseen_names`), and ``attnlab/exercises/stubs.json``: every
exercise's answer cell as the learner notebook ships it, which "Get the stub back" gives
whatever the learner has saved since (:func:`attnlab.exercises.solutions.original_stub`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, ClearSolutions, LockCells

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "source"
LEARNER = ROOT / "notebooks"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def source_notebooks() -> list[Path]:
    """The lesson sources, ``source/<lesson>/<lesson>.ipynb``, in lesson order."""
    return sorted(path for path in SOURCE.glob("*/*.ipynb") if path.stem == path.parent.name)


def learner_version(source: Path) -> str:
    """The learner notebook for ``source``, as the text to write."""
    notebook = nbformat.read(source, as_version=4)
    resources = {"language": "python"}
    for preprocessor in (
        ClearSolutions(code_stub={"python": CODE_STUB}, enforce_metadata=True),
        ClearHiddenTests(),
        ClearMarkScheme(),
        LockCells(),
        ClearOutputPreprocessor(),
    ):
        notebook, resources = preprocessor.preprocess(notebook, resources)
    notebook.metadata.pop("widgets", None)
    return nbformat.writes(notebook) + "\n"


def lesson_names_text() -> str:
    """``attnlab/exercises/lesson_names.json`` as it should be: lesson number -> the sorted
    names bound by its code cells that are neither answer nor grade cells."""
    sys.path.insert(0, str(ROOT))
    from attnlab.exercises.rules.unseen_names import top_level_names

    table = {}
    for source in source_notebooks():
        notebook = nbformat.read(source, as_version=4)
        names: set[str] = set()
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and not (meta.get("solution") or meta.get("grade")):
                names |= top_level_names(cell.source)
        table[str(int(source.stem[:2]))] = sorted(names)
    return json.dumps(table, indent=1) + "\n"


def stubs_text() -> str:
    """``attnlab/exercises/stubs.json`` as it should be: exercise name -> its answer cell as the
    learner version of its lesson (:func:`learner_version`) gives it."""
    sys.path.insert(0, str(ROOT))
    from attnlab.exercises.solutions import answer_cells

    table = {}
    for source in source_notebooks():
        cells = json.loads(learner_version(source))["cells"]
        for name, code in answer_cells(cells, int(source.stem[:2])).items():
            table[name] = code.strip("\n")
    return json.dumps(table, indent=1) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale notebooks")
    args = parser.parse_args(argv)
    stale = []
    for source in source_notebooks():
        target = LEARNER / f"{source.stem}.ipynb"
        text = learner_version(source)
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        stale.append(target.relative_to(ROOT))
        if not args.check:
            target.write_text(text, encoding="utf-8")
    for name, write in (("lesson_names.json", lesson_names_text), ("stubs.json", stubs_text)):
        data_file = ROOT / "attnlab" / "exercises" / name
        text = write()
        if not data_file.exists() or data_file.read_text(encoding="utf-8") != text:
            stale.append(data_file.relative_to(ROOT))
            if not args.check:
                data_file.write_text(text, encoding="utf-8")
    expected = {f"{source.stem}.ipynb" for source in source_notebooks()}
    orphans = sorted(p.name for p in LEARNER.glob("*.ipynb") if p.name not in expected)
    if args.check:
        for path in stale:
            print(f"out of date: {path} (run: python tools/build_notebooks.py)")
        for name in orphans:
            print(f"no source for notebooks/{name}")
        return 1 if stale or orphans else 0
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
