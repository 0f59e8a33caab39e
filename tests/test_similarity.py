"""attnlab.grading.similarity on synthetic submissions of lesson 3 (built here, no grading)."""

from __future__ import annotations

import copy
import csv
import json
import shutil
from pathlib import Path

import pytest

from attnlab.grading.similarity import (
    BEGIN,
    CODE_STUB,
    CSV_HEADER,
    END,
    SOLUTION,
    answer_cells,
    lesson_report,
    main,
    normalise,
    stub_lines,
)

ROOT = Path(__file__).resolve().parents[1]
LESSON = "03-softmax"
DOC = '    """Softmax of a 1-D row of scores x, shape (n,); returns weights of shape (n,)."""\n'
HEAD = "def softmax_row(x):\n" + DOC

ALICE = HEAD + (
    "    shifted = x - np.max(x)  # keeps exp from overflowing\n"
    "    weights = np.exp(shifted)\n"
    "    total = weights.sum()\n"
    "    return weights / total\n"
)
# alice's answer with other names, comments and layout
BOB = HEAD + (
    "    # take the max off first\n"
    "    z = x - np.max(x)\n"
    "    w = np.exp(z)\n"
    "\n"
    "    s = w.sum()    # the normaliser\n"
    "    return w / s\n"
)
CAROL = HEAD + (
    "    out = []\n"
    "    for value in x:\n"
    "        out.append(math.exp(value))\n"
    "    denominator = sum(out)\n"
    "    return np.array([o / denominator for o in out])\n"
)
ERIN = HEAD + (
    "    from scipy.special import softmax as sm\n"
    "    result = sm(np.asarray(x, dtype=float))\n"
    "    return result\n"
)
FRANK = HEAD + "    e = np.exp(x - x.max())\n    return e / e.sum()\n"
HOSTILE = HEAD + "    # </pre><script>alert(1)</script>\n" + FRANK[len(HEAD) :]


def release(source_nb: dict) -> dict:
    """What nbgrader generate_assignment makes of an answer cell: the markers' block stubbed."""
    nb = copy.deepcopy(source_nb)
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code" or not meta.get("solution"):
            continue
        lines, inside = [], False
        for line in "".join(cell["source"]).splitlines():
            if line.strip() == BEGIN:
                inside = True
                lines.append(line[: len(line) - len(line.lstrip())] + CODE_STUB)
            elif line.strip() == END:
                inside = False
            elif not inside:
                lines.append(line)
        cell["source"] = "\n".join(lines)
    return nb


def submit(course: Path, student: str, nb: dict, answers: dict[str, str]) -> None:
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    folder = course / "submitted" / student / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON}.ipynb").write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture
def course(tmp_path):
    shutil.copytree(ROOT / "source" / LESSON, tmp_path / "source" / LESSON)
    source_nb = json.loads((tmp_path / "source" / LESSON / f"{LESSON}.ipynb").read_text())
    released = release(source_nb)
    for student, code in [
        ("alice", ALICE),
        ("bob", BOB),
        ("carol", CAROL),
        ("erin", ERIN),
        ("frank", FRANK),
        ("mallory", HOSTILE),
    ]:
        submit(tmp_path, student, released, {"softmax-row": code})
    submit(tmp_path, "dave", released, {})  # the stub, untouched, in every cell
    return tmp_path


def test_normalising_forgets_names_comments_and_layout_not_operations():
    assert normalise("a = np.exp(x)  # hi\n\nreturn a / a.sum()") == normalise(
        "def_ = np.exp( q )\nreturn def_/def_.sum()"
    )
    # attributes and builtins keep their names: np.log is not np.exp
    assert normalise("a = np.exp(x)") != normalise("a = np.log(x)")
    assert normalise("y = sum(x)") == ["v0", "=", "sum", "(", "v1", ")"]
    assert normalise("for i in range(3:\n  pass")  # broken code still yields tokens
    with pytest.raises(ValueError, match="code"):
        normalise(None)


def test_the_stub_is_what_generate_assignment_leaves(course):
    source_nb = json.loads((course / "source" / LESSON / f"{LESSON}.ipynb").read_text())
    stub = stub_lines(source_nb)["softmax-row"]
    assert "def softmax_row(x):" in stub and CODE_STUB in stub
    released = answer_cells(release(source_nb))["softmax-row"]
    assert CODE_STUB in released and normalise(released, stub) == []
    assert normalise(ALICE, stub)[:3] == ["v0", "=", "v1"]


def test_copied_answer_ranks_top_and_stub_is_never_compared(course):
    pairs = [p for p in lesson_report(course, LESSON) if p.cell == f"{LESSON} softmax-row"]
    top = pairs[0]
    assert (top.student_a, top.student_b) == ("alice", "bob")
    assert top.score == pytest.approx(1.0) and top.ngram_jaccard == pytest.approx(1.0)
    others = {(p.student_a, p.student_b): p.score for p in pairs[1:]}
    independent = {k: v for k, v in others.items() if set(k) != {"frank", "mallory"}}
    assert max(independent.values()) < 0.75, independent
    assert others[("frank", "mallory")] == pytest.approx(1.0)  # a comment is no difference
    assert top.compared == 6 and all("dave" not in (p.student_a, p.student_b) for p in pairs)
    # cells everyone left as the stub: nothing to compare, nothing reported
    assert {p.cell for p in lesson_report(course, LESSON)} == {f"{LESSON} softmax-row"}


def test_worked_solution_can_join_and_top_limits(course):
    pairs = lesson_report(course, LESSON, top=3, with_solution=True)
    assert len(pairs) == 3
    assert any(
        SOLUTION in (p.student_a, p.student_b)
        for p in lesson_report(course, LESSON, top=100, with_solution=True)
    )
    with pytest.raises(ValueError, match="top"):
        lesson_report(course, LESSON, top=0)
    with pytest.raises(ValueError, match="lesson"):
        lesson_report(course, "99-nothing")


def test_command_line_writes_csv_and_escaped_html(course, capsys):
    out_csv, out_html = course / "s.csv", course / "s.html"
    code = main(["--course-dir", str(course), "--csv", str(out_csv), "--html", str(out_html)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "alice ~ bob 1.000" in printed
    with open(out_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == CSV_HEADER
    assert rows[1][:6] == [LESSON, f"{LESSON} softmax-row", "1", "alice", "bob", "1.000"]
    page = out_html.read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;alert(1)" in page
    assert "class='high'" in page
