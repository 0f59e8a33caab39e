"""The instructor guide (docs/instructors.md) stays true: its points table and its commands.

* The points table is the one ``tools/points_table.py`` makes from the grade cells' metadata.
* Every ``nbgrader`` subcommand the guide tells an instructor or a student to run sits in a
  block that tests/test_exchange_flow.py runs as written, with the shipped configuration.
* The README links the guide.
"""

from __future__ import annotations

import re
from pathlib import Path

import points_table  # tools/points_table.py (tools/ is on pytest's pythonpath)

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "instructors.md"


def _between_markers(text: str) -> str:
    return text.split(points_table.BEGIN, 1)[1].split(points_table.END, 1)[0].strip()


def test_points_table_matches_the_notebooks():
    assert _between_markers(GUIDE.read_text(encoding="utf-8")) == points_table.table(), (
        "run: python tools/points_table.py --write"
    )


def test_points_table_counts_every_grade_cell():
    rows = points_table.rows()
    lessons = {row[0] for row in rows}
    assert len(lessons) == len(list((ROOT / "source").glob("*/*.ipynb")))
    assert all(points > 0 for *_, points in rows)


def guide_commands() -> set[str]:
    """The nbgrader subcommands in the guide's code blocks."""
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    return {m for block in blocks for m in re.findall(r"^nbgrader (\w+)", block, flags=re.M)}


def test_every_command_in_the_guide_is_run_by_a_test():
    """tests/test_exchange_flow.py runs the guide's blocks as written: every nbgrader line of the
    guide must sit in a block it runs (found by the same needles it uses)."""
    import test_exchange_flow as flow

    commands = guide_commands()
    assert {
        "generate_assignment",
        "release_assignment",
        "fetch_assignment",
        "submit",
        "collect",
        "autograde",
        "generate_feedback",
        "release_feedback",
        "fetch_feedback",
        "export",
        "validate",
    } <= commands
    run_blocks = [
        flow.block_with(needle)
        for needle in (
            "release_assignment",
            "nbgrader submit",
            "nbgrader collect",
            "fetch_feedback",
            "nbgrader validate",
        )
    ]
    ran = {argv[1] for block in run_blocks for argv in flow.nbgrader_lines(block, flow.Path("/x"))}
    assert sorted(commands - ran) == []


def test_readme_links_the_guide():
    assert "docs/instructors.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            pins[name.lower()] = version
    return pins


def test_the_graders_requirements_pin_what_the_tests_run():
    """requirements-grader.txt (the guide's install) pins nbgrader and its notebook runners at the
    versions requirements-dev.txt runs the grading tests with, and adds nothing else."""
    grader, dev = _pins(ROOT / "requirements-grader.txt"), _pins(ROOT / "requirements-dev.txt")
    assert grader and {name: dev.get(name) for name in grader} == grader
    assert "-r requirements.txt" in (ROOT / "requirements-grader.txt").read_text(encoding="utf-8")


def test_the_execute_limits_table_says_what_the_code_and_config_do():
    """The guide's table of nbgrader's Execute limits gives the defaults LimitedExecute has and
    the values nbgrader_config.py sets."""
    from attnlab.grading.execute import LimitedExecute

    text = GUIDE.read_text(encoding="utf-8")
    config = (ROOT / "nbgrader_config.py").read_text(encoding="utf-8")
    for option in ("student_cells_timeout", "notebook_timeout"):
        default = LimitedExecute.class_traits()[option].default_value
        assert f"| {default} s | `c.LimitedExecute.{option} = {default}` |" in text, option
        assert f"c.LimitedExecute.{option} = {default}\n" in config, option
