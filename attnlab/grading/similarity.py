"""An offline similarity report over the students' answer cells.

Run in the course folder after ``nbgrader collect``::

    python -m attnlab.grading.similarity 03-softmax --csv similarity.csv --html similarity.html

For every answer cell (an nbgrader cell with ``solution: true``) of every notebook in
``submitted/<student>/<lesson>/``, each student's code is normalised: the lines the course gave
everyone (the stub: what the source cell holds outside ``### BEGIN SOLUTION`` … ``### END
SOLUTION``, and ``raise NotImplementedError()``) are dropped, then comments, blank lines and
layout go (Python's ``tokenize``), and every name the student chose is renamed by order of first
use (``v0``, ``v1`` …; keywords, builtins, attributes after a dot and the modules ``np``,
``numpy``, ``math``, ``scipy`` keep theirs). A cell left as the stub, or with fewer than
``MIN_TOKENS`` tokens left, is not compared. Every pair of students is scored by the
``difflib`` ratio of their token sequences (1 = the same code up to names and layout) and the
Jaccard index of their token 3-grams. The report lists, per answer cell, the most similar pairs
with both scores, the median score of all pairs of that cell (what is usual for a short
exercise with one natural answer) and the two answers side by side (HTML). A high score is a
reason to look, not a verdict: short exercises have few ways to be right.

Nothing is sent anywhere; the module is for the instructor's machine and nothing a learner runs
imports it.
"""

from __future__ import annotations

import argparse
import builtins
import csv
import difflib
import html
import io
import itertools
import json
import keyword
import re
import statistics
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
CODE_STUB = "raise NotImplementedError()"  # nbgrader's default code stub for Python
KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"np", "numpy", "math", "scipy"}
MIN_TOKENS = 6  # fewer tokens than this once the stub is gone: nothing to compare
NGRAM = 3
SOLUTION = "[worked solution]"  # the source's answer, compared with --with-solution
_SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_FALLBACK = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|'[^'\n]*'|\"[^\"\n]*\"|\S")


def _meta(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def answer_cells(nb: dict) -> dict[str, str]:
    """grade_id -> code of every answer cell (nbgrader ``solution`` code cell) of ``nb``."""
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError("nb must be a notebook (a dict with a list of cells)")
    return {
        str(_meta(c).get("grade_id")): _text(c)
        for c in nb["cells"]
        if c.get("cell_type") == "code" and _meta(c).get("solution") and _meta(c).get("grade_id")
    }


def _line_key(line: str) -> str:
    """A line as compared with the stub: no comment, no surrounding blanks."""
    if "#" in line and not any(q in line for q in "'\""):
        line = line.split("#", 1)[0]
    return line.strip()


def stub_lines(source_nb: dict) -> dict[str, frozenset[str]]:
    """grade_id -> the lines everyone was given in that answer cell (outside the markers)."""
    stubs = {}
    for grade_id, code in answer_cells(source_nb).items():
        given, inside = {CODE_STUB, "pass", ""}, False
        for line in code.splitlines():
            if line.strip() == BEGIN:
                inside = True
            elif line.strip() == END:
                inside = False
            elif not inside:
                given.add(_line_key(line))
        stubs[grade_id] = frozenset(given)
    return stubs


def worked_answers(source_nb: dict) -> dict[str, str]:
    """grade_id -> the worked solution (the source cell without nbgrader's markers)."""
    return {
        grade_id: "\n".join(l for l in code.splitlines() if l.strip() not in (BEGIN, END))
        for grade_id, code in answer_cells(source_nb).items()
    }


def normalise(code: str, stub: frozenset[str] = frozenset()) -> list[str]:
    """The tokens of ``code`` once the stub's lines, comments, layout and chosen names are gone.

    Parameters
    ----------
    code : str
        One answer cell.
    stub : frozenset of str
        Lines (``_line_key``) given to everyone, dropped first.

    Returns
    -------
    list of str
        Tokens; names the student chose become ``v0``, ``v1`` … in order of first use.
    """
    if not isinstance(code, str):
        raise ValueError(f"code must be a str, not {type(code).__name__}")
    kept = "\n".join(line for line in code.splitlines() if _line_key(line) not in stub)
    try:
        raw = [
            (tok.type, tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(kept + "\n").readline)
            if tok.type not in _SKIPPED
        ]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        raw = [
            (tokenize.NAME if m[0].isalpha() or m[0] == "_" else tokenize.OP, m)
            for m in _FALLBACK.findall(re.sub(r"#[^\n]*", "", kept))
        ]
    names: dict[str, str] = {}
    tokens = []
    previous = ""
    for kind, text in raw:
        if kind == tokenize.NAME and text not in KEPT_NAMES and previous != ".":
            text = names.setdefault(text, f"v{len(names)}")
        tokens.append(text)
        previous = text
    return tokens


def scores(a: list[str], b: list[str]) -> tuple[float, float]:
    """(difflib ratio of the token sequences, Jaccard index of their token 3-grams)."""
    ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    grams_a = {tuple(a[i : i + NGRAM]) for i in range(max(1, len(a) - NGRAM + 1))}
    grams_b = {tuple(b[i : i + NGRAM]) for i in range(max(1, len(b) - NGRAM + 1))}
    union = grams_a | grams_b
    return ratio, (len(grams_a & grams_b) / len(union) if union else 0.0)


@dataclass(frozen=True)
class Pair:
    """Two students' answers to one answer cell, and how alike they are."""

    lesson: str
    cell: str  # "<notebook> <grade_id>"
    student_a: str
    student_b: str
    score: float
    ngram_jaccard: float
    median: float  # of every pair of this cell
    compared: int  # students whose answer was compared
    code_a: str
    code_b: str


def compare(answers: dict[str, str], stub: frozenset[str], lesson: str, cell: str) -> list[Pair]:
    """Every pair of ``answers`` (student -> code) for one cell, most similar first.

    Answers that are the stub (or nearly nothing once it is dropped) are left out.
    """
    tokens = {s: normalise(code, stub) for s, code in answers.items()}
    tokens = {s: t for s, t in tokens.items() if len(t) >= MIN_TOKENS}
    scored = [
        (a, b, *scores(tokens[a], tokens[b])) for a, b in itertools.combinations(sorted(tokens), 2)
    ]
    if not scored:
        return []
    median = statistics.median(s[2] for s in scored)
    scored.sort(key=lambda s: (-s[2], -s[3], s[0], s[1]))
    return [
        Pair(lesson, cell, a, b, ratio, jac, median, len(tokens), answers[a], answers[b])
        for a, b, ratio, jac in scored
    ]


def lesson_report(
    course: Path, lesson: str, top: int = 10, with_solution: bool = False
) -> list[Pair]:
    """The ``top`` most similar pairs of each answer cell of ``lesson``'s submissions.

    Parameters
    ----------
    course : pathlib.Path
        The course folder (holds ``source/`` and ``submitted/``).
    lesson : str
        The assignment (``03-softmax``).
    top : int
        Pairs kept per answer cell (>= 1).
    with_solution : bool
        Compare the source's worked solution too, as the student ``[worked solution]``.
    """
    if top < 1:
        raise ValueError(f"top must be >= 1, not {top}")
    course = Path(course)
    source = course / "source" / lesson
    if not source.is_dir():
        raise ValueError(f"lesson: no folder {source}")
    pairs = []
    for source_path in sorted(source.glob("*.ipynb")):
        source_nb = json.loads(source_path.read_text(encoding="utf-8"))
        stubs = stub_lines(source_nb)
        by_cell: dict[str, dict[str, str]] = {g: {} for g in stubs}
        for path in sorted(course.glob(f"submitted/*/{lesson}/{source_path.name}")):
            student = path.parent.parent.name
            try:
                cells = answer_cells(json.loads(path.read_text(encoding="utf-8")))
            except (ValueError, UnicodeDecodeError) as error:
                print(f"skipped {path}: {error}", file=sys.stderr)
                continue
            for grade_id, code in cells.items():
                if grade_id in by_cell:  # cells the course defines only
                    by_cell[grade_id][student] = code
        if with_solution:
            for grade_id, code in worked_answers(source_nb).items():
                by_cell[grade_id][SOLUTION] = code
        for grade_id, answers in by_cell.items():
            name = f"{source_path.stem} {grade_id}"
            pairs += compare(answers, stubs[grade_id], lesson, name)[:top]
    return pairs


CSV_HEADER = [
    "lesson",
    "answer cell",
    "rank",
    "student a",
    "student b",
    "score",
    "3-gram jaccard",
    "median score of the cell",
    "students compared",
]


def write_csv(pairs: list[Pair], dest) -> None:
    """The report as CSV, one row per pair (``CSV_HEADER``)."""
    with open(dest, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(CSV_HEADER)
        for cell, group in itertools.groupby(pairs, key=lambda p: (p.lesson, p.cell)):
            for rank, p in enumerate(group, 1):
                out.writerow(
                    [
                        *cell,
                        rank,
                        p.student_a,
                        p.student_b,
                        f"{p.score:.3f}",
                        f"{p.ngram_jaccard:.3f}",
                        f"{p.median:.3f}",
                        p.compared,
                    ]
                )


def write_html(pairs: list[Pair], dest, threshold: float = 0.85) -> None:
    """The report as one self-contained HTML page: a table per answer cell and the code of
    each pair side by side; pairs scoring ``threshold`` or more are marked."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Similarity report</title>",
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
        "tr.high{background:#fde2e2}pre{margin:0;font-size:12px;white-space:pre-wrap}</style>",
        "</head><body><h1>Similarity of answer cells</h1>",
        f"<p>Score: difflib ratio of the normalised tokens (1 = the same code up to names, "
        f"comments and layout). Marked: score &ge; {threshold:g}. A high score is a reason to "
        "look, not a verdict.</p>",
    ]
    for (lesson, cell), group in itertools.groupby(pairs, key=lambda p: (p.lesson, p.cell)):
        group = list(group)
        parts.append(
            f"<h2>{esc(lesson)}: {esc(cell)}</h2><p>{group[0].compared} students compared; "
            f"median score of all pairs {group[0].median:.3f}</p><table><tr><th>#</th>"
            "<th>students</th><th>score</th><th>3-gram jaccard</th><th>answer a</th>"
            "<th>answer b</th></tr>"
        )
        for rank, p in enumerate(group, 1):
            mark = " class='high'" if p.score >= threshold else ""
            parts.append(
                f"<tr{mark}><td>{rank}</td><td>{esc(p.student_a)}<br>{esc(p.student_b)}</td>"
                f"<td>{p.score:.3f}</td><td>{p.ngram_jaccard:.3f}</td>"
                f"<td><pre>{esc(p.code_a)}</pre></td><td><pre>{esc(p.code_b)}</pre></td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    Path(dest).write_text("\n".join(parts), encoding="utf-8")


def main(argv=None) -> int:
    """The command line (``python -m attnlab.grading.similarity --help``)."""
    parser = argparse.ArgumentParser(
        prog="python -m attnlab.grading.similarity",
        description="Most similar pairs of students' answer cells (run in the course folder).",
    )
    parser.add_argument("lessons", nargs="*", help="lessons (default: every one submitted)")
    parser.add_argument("--course-dir", default=".", type=Path)
    parser.add_argument("--top", type=int, default=10, help="pairs per answer cell")
    parser.add_argument("--threshold", type=float, default=0.85, help="score marked in HTML")
    parser.add_argument("--csv", default="similarity.csv", help="CSV report to write")
    parser.add_argument("--html", default="similarity.html", help="HTML report to write")
    parser.add_argument(
        "--with-solution", action="store_true", help="compare the worked solution too"
    )
    args = parser.parse_args(argv)
    lessons = args.lessons or sorted(
        {p.name for p in args.course_dir.glob("submitted/*/*") if p.is_dir()}
    )
    try:
        pairs = [
            p
            for lesson in lessons
            for p in lesson_report(args.course_dir, lesson, args.top, args.with_solution)
        ]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    write_csv(pairs, args.csv)
    write_html(pairs, args.html, args.threshold)
    high = [p for p in pairs if p.score >= args.threshold]
    print(
        f"{len(pairs)} pairs over {len({(p.lesson, p.cell) for p in pairs})} answer cells "
        f"written to {args.csv} and {args.html}; {len(high)} score >= {args.threshold:g}"
    )
    for p in high:
        print(f"  {p.lesson} {p.cell}: {p.student_a} ~ {p.student_b} {p.score:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
