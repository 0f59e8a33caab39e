"""The nbgrader preprocessor that grades outside the student's kernel.

Switched on by the course's ``nbgrader_config.py``; it runs inside ``nbgrader autograde``
after nbgrader has executed the submission (so the student still sees their own outputs in
the feedback) and before nbgrader reads the grades. For every grade cell it writes:

* on a right answer, the check's feedback as display data and nothing else (no result for
  nbgrader to coerce, no stderr), so the cell earns full points;
* on a partly right quiz, the points earned as the cell's result (nbgrader's partial credit);
* otherwise an error whose message is the check's reason, so the cell earns 0.

Grade cells the student deleted are put back first (the source notebook is the authority).

:class:`NormalizeCellMetadata` runs before nbgrader's own checks of a submission's cell
metadata, whose version errors stop the whole ``nbgrader autograde`` run, not one notebook.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from attnlab.exercises.kit.outcomes import Outcome
from attnlab.grading.grade import Result, grade_notebook


class NormalizeCellMetadata(NbGraderPreprocessor):
    """Every cell's nbgrader metadata in the version this nbgrader reads, before nbgrader checks
    it (the first of ``Autograde.sanitize_preprocessors`` in the course's config).

    A submission is the student's file: its cells' ``schema_version`` is whatever they wrote,
    and nbgrader's ``OverwriteCells`` restores a grade cell's source, points and checksum but
    not that. ``CheckCellMetadata`` then raises ``SchemaTooNewError`` (or ``...TooOld``),
    which ``nbgrader autograde`` treats as fatal for the *whole run*: a red team's
    ``"schema_version": 4`` in one answer cell left every student after it ungraded. Here the
    version is set to nbgrader's own, and metadata that is not a mapping is dropped (the cell
    is then an ordinary one); anything else wrong in it still fails that notebook alone.

    Examples
    --------
    >>> from nbgrader.nbgraderformat import SCHEMA_VERSION
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    >>> nb.cells[0].metadata["nbgrader"] = {"schema_version": 99, "solution": True}
    >>> nb, _ = NormalizeCellMetadata().preprocess(nb, {})
    >>> nb.cells[0].metadata["nbgrader"]["schema_version"] == SCHEMA_VERSION
    True
    """

    def preprocess_cell(self, cell, resources, index):
        from nbgrader.nbgraderformat import SCHEMA_VERSION

        meta = cell.metadata.get("nbgrader")
        if meta is None:
            return cell, resources
        if not isinstance(meta, dict):
            del cell.metadata["nbgrader"]
        elif meta.get("schema_version") != SCHEMA_VERSION:
            meta["schema_version"] = SCHEMA_VERSION
        return cell, resources


def _display(result: Result) -> dict:
    feedback = result.feedback
    return nbformat.v4.new_output(
        "display_data", data={"text/plain": str(feedback), "text/html": feedback._repr_html_()}
    )


def grade_cell_outputs(result: Result) -> list:
    """The outputs nbgrader will score ``result`` by (see the module docstring)."""
    if result.feedback.outcome is Outcome.CORRECT:
        return [_display(result)]
    if 0 < result.points < result.max_points:
        return [
            _display(result),
            nbformat.v4.new_output(
                "execute_result", data={"text/plain": repr(result.points)}, execution_count=None
            ),
        ]
    return [
        _display(result),
        nbformat.v4.new_output(
            "error", ename="NotYetRight", evalue=str(result.feedback), traceback=[]
        ),
    ]


class GradeOutsideKernel(NbGraderPreprocessor):
    """Re-grade every grade cell in a fresh kernel holding only the student's answers."""

    source_notebook = Unicode(
        "", help="Path of the source notebook; by default found through the course directory."
    ).tag(config=True)

    def _source_path(self, resources) -> Path:
        if self.source_notebook:
            return Path(self.source_notebook)
        coursedir = CourseDirectory(parent=self.parent, config=self.config)
        info = resources["nbgrader"]
        folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
        return folder / f"{info['notebook']}.ipynb"

    def preprocess(self, nb, resources):
        source_path = self._source_path(resources)
        source_nb = json.loads(source_path.read_text(encoding="utf-8"))
        graded = grade_notebook(source_nb, nb, source_path.parent, config=self.config)
        results = {r.grade_id: r for r in graded}
        present = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells}
        for index, cell in enumerate(source_nb["cells"]):
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id in results and grade_id not in present:
                restored = nbformat.from_dict(copy.deepcopy(cell))
                restored.outputs, restored.execution_count = [], None
                nb.cells.insert(min(index, len(nb.cells)), restored)
                self.log.warning("Grade cell %s was missing; put back from the source", grade_id)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in results and cell.metadata["nbgrader"].get("grade"):
                cell.source = next(
                    "".join(c["source"])
                    for c in source_nb["cells"]
                    if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id
                )
                cell.outputs = grade_cell_outputs(results[grade_id])
                result = results[grade_id]
                self.log.info("%s: %s of %s points", grade_id, result.points, result.max_points)
        return nb, resources
