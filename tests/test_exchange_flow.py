"""The instructor guide's whole flow, command by command, with stock nbgrader on one machine.

generate → release → fetch → submit → collect → autograde → feedback → fetch feedback →
export, through a real nbgrader exchange folder, as docs/instructors.md writes it. The student
submits twice (blank, then solved): the instructor collects and grades the latest. (The
multi-student version on a real JupyterHub is tests/hub/.)
"""

from __future__ import annotations

import csv
import getpass
import json
import subprocess
import sys
from pathlib import Path

import graded_course as gc
import pytest

pytestmark = pytest.mark.slow
LESSON = "01-dot-product-scores"


def run(cwd: Path, exchange: Path, *args: str) -> str:
    env = gc.nbgrader_env(ATTNLAB_EXCHANGE=str(exchange))
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"nbgrader {' '.join(args)}:\n{result.stderr[-3000:]}"
    return result.stdout + result.stderr


def test_the_documented_flow_moves_an_assignment_there_and_back(tmp_path):
    course = gc.make_course(tmp_path / "course")
    exchange, home = tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir(mode=0o777)
    home.mkdir()
    student = ["--course", "attnlab", f"--Exchange.root={exchange}"]

    run(course, exchange, "generate_assignment", LESSON)
    run(course, exchange, "release_assignment", LESSON)
    run(home, exchange, "fetch_assignment", LESSON, *student)
    fetched = home / LESSON / f"{LESSON}.ipynb"
    run(home, exchange, "submit", LESSON, *student)  # a blank first try, replaced below
    source_nb = gc.read(course / "source" / LESSON / f"{LESSON}.ipynb")
    answers = gc.worked(source_nb)
    nb = gc._with_answers(gc.read(fetched), answers)
    fetched.write_text(json.dumps(nb), encoding="utf-8")
    run(home, exchange, "submit", LESSON, *student)

    run(course, exchange, "collect", LESSON)
    me = getpass.getuser()
    assert (course / "submitted" / me / LESSON / f"{LESSON}.ipynb").exists()
    run(course, exchange, "autograde", LESSON, "--create")
    run(course, exchange, "generate_feedback", LESSON)
    run(course, exchange, "release_feedback", LESSON)
    run(home, exchange, "fetch_feedback", LESSON, *student)
    assert list((home / LESSON / "feedback").glob("*/*.html"))
    run(course, exchange, "export")
    rows = list(csv.DictReader((course / "grades.csv").open(encoding="utf-8")))
    mine = [r for r in rows if r["student_id"] == me and r["assignment"] == LESSON]
    total = sum(points for _, _, points in gc.graded_answers(source_nb))
    assert mine and float(mine[0]["score"]) == float(mine[0]["max_score"]) == total
