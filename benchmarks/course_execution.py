"""How long the whole course takes to execute, against the same number of empty notebooks.

Every lesson ``notebooks/NN-*.ipynb`` is executed headless with nbclient in a fresh kernel,
and so is an empty notebook (one empty code cell) for each lesson. Lesson and empty runs
alternate, and which of the pair goes first alternates too, so machine noise hits both sides
alike. Each timing covers kernel start, execution and an immediate kernel shutdown (a graceful
shutdown stalls for about 3 s in one run out of five with ipykernel 7 here, which would swamp
the comparison). The bar (issue 14) is a ratio of at most 2; this script prints the figures
and asserts nothing.

A second pass runs each lesson and empty notebook the way CI and ``jupyter nbconvert
--execute`` do, with nbclient's defaults (kernel start, all cells, graceful shutdown), and
prints that ratio too, from the best of two rounds per notebook.

A third notebook per lesson holds only the lesson's own import lines (every top-level
``import``/``from ... import`` of its code cells). Its time is the floor the lesson cannot go
below without dropping a library, so the report shows how much of the lesson's cost is its
imports and how much its content.

Notebooks run from a temp copy of the lesson folder (so nothing is written into the repo),
with the repo root on PYTHONPATH so ``import attnlab`` works, matplotlib on its default
(inline) backend as in JupyterLab.

Usage: ``python benchmarks/course_execution.py [--repeat N] [--timeout SECONDS]``.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

REPO_ROOT = Path(__file__).resolve().parents[1]
LESSON_GLOB = "[0-9][0-9]-*.ipynb"
BAR = 2.0
ANSI = re.compile(r"\x1b\[[0-9;]*m")
IMPORT_LINE = re.compile(r"^(import|from)\s+\S+")


@dataclass
class Timing:
    """Wall time of one lesson and of its paired empty notebook."""

    name: str
    lesson_s: float
    empty_s: float
    imports_s: float
    error: str = ""


def lesson_folder() -> Path:
    """``$ATTNLAB_NOTEBOOKS`` if set, else notebooks/ in the repo."""
    return Path(os.environ.get("ATTNLAB_NOTEBOOKS", REPO_ROOT / "notebooks")).resolve()


def empty_notebook() -> nbformat.NotebookNode:
    """A notebook with one empty code cell and the python3 kernel."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    return notebook


def imports_notebook(lesson: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """One code cell with every top-level import line of ``lesson``, in order, once each.

    >>> nb = nbformat.v4.new_notebook()
    >>> nb.cells = [nbformat.v4.new_code_cell("import numpy as np\\nx = 1\\n  import os"),
    ...             nbformat.v4.new_code_cell("from math import pi\\nimport numpy as np"),
    ...             nbformat.v4.new_code_cell("from math import (\\n    e,\\n    tau,\\n)")]
    >>> print(imports_notebook(nb).cells[0].source)
    import numpy as np
    from math import pi
    from math import (
        e,
        tau,
    )
    """
    lines = []
    for cell in lesson.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython syntax: read it line by line
            statements = [line for line in cell.source.splitlines() if IMPORT_LINE.match(line)]
        else:  # whole statements, so an import written over several lines stays whole
            statements = [
                ast.get_source_segment(cell.source, node)
                for node in tree.body
                if isinstance(node, (ast.Import, ast.ImportFrom))
            ]
        lines += [s for s in statements if s not in lines]
    notebook = empty_notebook()
    notebook.cells[0].source = "\n".join(lines)
    return notebook


def execute(
    notebook: nbformat.NotebookNode, cwd: Path, timeout: int, shutdown: str = "immediate"
) -> tuple[float, str]:
    """Run ``notebook`` in a fresh kernel started in ``cwd``; (seconds, error text or "").

    ``shutdown="graceful"`` is nbclient's default, as ``jupyter nbconvert --execute`` and
    nbval run notebooks; ``"immediate"`` kills the kernel as soon as the last cell is done.
    """
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        shutdown_kernel=shutdown,
    )
    start = time.perf_counter()
    try:
        client.execute(stderr=subprocess.DEVNULL)
        error = ""
    except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
        error = ANSI.sub("", str(exc)).strip().splitlines()[-1][:200]
    return time.perf_counter() - start, error


def time_trio(path: Path, cwd: Path, rotation: int, timeout: int) -> Timing:
    """Execute a lesson, an empty notebook and the lesson's imports, in a rotating order."""
    lesson = nbformat.read(path, as_version=4)
    runs = {"lesson": lesson, "empty": empty_notebook(), "imports": imports_notebook(lesson)}
    order = list(runs)[rotation % 3 :] + list(runs)[: rotation % 3]
    seconds, errors = {}, {}
    for kind in order:
        seconds[kind], errors[kind] = execute(runs[kind], cwd, timeout)
    return Timing(
        path.name,
        seconds["lesson"],
        seconds["empty"],
        seconds["imports"],
        errors["lesson"] or errors["imports"],
    )


def prepare_environment(workdir: Path) -> None:
    """Kernels inherit this: repo root on PYTHONPATH, private matplotlib/IPython dirs."""
    python_path = [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in python_path if p)
    for var, sub in [("MPLCONFIGDIR", "matplotlib"), ("IPYTHONDIR", "ipython")]:
        (workdir / sub).mkdir()
        os.environ[var] = str(workdir / sub)


def warm_up(cwd: Path, timeout: int) -> None:
    """Untimed: one empty kernel and one matplotlib import (font cache), so lesson 0 is fair."""
    execute(empty_notebook(), cwd, timeout)
    notebook = empty_notebook()
    notebook.cells[0].source = "import matplotlib.pyplot, numpy"
    execute(notebook, cwd, timeout)


def report(timings: list[Timing]) -> None:
    """Per-notebook rows, the totals and the ratio against the bar."""
    print(f"\n{'notebook':<32} {'lesson s':>9} {'empty s':>9} {'ratio':>7} {'imports s':>10}")
    for t in timings:
        flag = f"  FAILED: {t.error}" if t.error else ""
        ratio = t.lesson_s / t.empty_s
        print(
            f"{t.name:<32} {t.lesson_s:9.2f} {t.empty_s:9.2f} {ratio:7.2f} "
            f"{t.imports_s:10.2f}{flag}"
        )
    lessons = sum(t.lesson_s for t in timings)
    empties = sum(t.empty_s for t in timings)
    imports = sum(t.imports_s for t in timings)
    ratio = lessons / empties
    verdict = f"within the {BAR}× bar" if ratio <= BAR else f"ABOVE the {BAR}× bar"
    print(f"\ncourse: {lessons:.2f} s for {len(timings)} notebook executions")
    print(f"empty:  {empties:.2f} s for {len(timings)} empty-notebook executions")
    print(f"ratio:  {ratio:.2f}× ({verdict})")
    print(
        f"floor:  {imports / empties:.2f}× for the lessons' import lines alone "
        f"({imports:.2f} s); the lessons' content adds {lessons - imports:.2f} s"
    )
    if any(t.error for t in timings):
        print("note: some notebooks raised; their times cover execution up to the error")


def time_as_ci_runs(lessons: list[Path], cwd: Path, timeout: int, rounds: int) -> tuple:
    """(lesson s, empty s): each notebook run as nbclient runs it by default, best of rounds.

    Kernel start, every cell, then nbclient's graceful kernel shutdown: what a maintainer's
    ``jupyter nbconvert --execute`` or CI pays per notebook. Lesson and empty notebook
    alternate; the best of ``rounds`` of each is kept, since a graceful shutdown now and
    then stalls for seconds whichever notebook ran.
    """
    best_lesson = dict.fromkeys(lessons, float("inf"))
    best_empty = dict.fromkeys(lessons, float("inf"))
    for r in range(rounds):
        for path in lessons:
            pair = [("lesson", nbformat.read(path, as_version=4)), ("empty", empty_notebook())]
            for kind, notebook in pair[r % 2 :] + pair[: r % 2]:
                seconds, _ = execute(notebook, cwd, timeout, shutdown="graceful")
                best = best_lesson if kind == "lesson" else best_empty
                best[path] = min(best[path], seconds)
    return sum(best_lesson.values()), sum(best_empty.values())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="passes over the course")
    parser.add_argument("--timeout", type=int, default=600, help="per-cell timeout, seconds")
    parser.add_argument(
        "--ci-rounds", type=int, default=2, help="rounds of the as-CI-runs-them timing"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Time every lesson against an empty notebook, alternating, and print the ratio."""
    args = parse_args(argv)
    source = lesson_folder()
    lessons = sorted(source.glob(LESSON_GLOB))
    if not lessons:
        print(f"no {LESSON_GLOB} lessons in {source}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="attnlab-course-") as tmp:
        workdir = Path(tmp)
        cwd = workdir / "notebooks"
        shutil.copytree(source, cwd, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        prepare_environment(workdir)
        warm_up(cwd, args.timeout)
        timings = []
        for n in range(args.repeat * len(lessons)):
            path = cwd / lessons[n % len(lessons)].name
            timing = time_trio(path, cwd, rotation=n, timeout=args.timeout)
            print(
                f"  {timing.name}: {timing.lesson_s:.2f} s, empty {timing.empty_s:.2f} s, "
                f"imports only {timing.imports_s:.2f} s",
                flush=True,
            )
            timings.append(timing)
        report(timings)
        print(
            "\nAs CI runs notebooks (nbclient defaults: kernel start, all cells, graceful "
            f"shutdown), best of {args.ci_rounds} rounds per notebook:"
        )
        lessons_s, empties_s = time_as_ci_runs(
            [cwd / p.name for p in lessons], cwd, args.timeout, args.ci_rounds
        )
        ratio = lessons_s / empties_s
        verdict = f"within the {BAR}× bar" if ratio <= BAR else f"ABOVE the {BAR}× bar"
        print(f"course {lessons_s:.2f} s, empty {empties_s:.2f} s: {ratio:.2f}× ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
