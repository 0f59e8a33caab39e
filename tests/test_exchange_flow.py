"""The instructor guide run as written: its setup and its whole flow, command by command.

docs/instructors.md is read, not paraphrased: its code blocks are found by what they hold and
their lines are run as they stand, with stock nbgrader on one machine. Only the placeholders a
reader fills in are filled in (the repository URL; the exchange folder, moved into a temporary
folder the way the guide says: ``ATTNLAB_EXCHANGE`` for the instructor, the same path for the
students' ``--Exchange.root``).

* Setup: ``git clone`` and the term branch run in a shell; the grader's ``pip install`` line is
  resolved (``pip install --dry-run --report``) to prove it brings nbgrader and the course and
  none of the maintainers' tools.
* Flow: generate → release → fetch → submit → collect → autograde → feedback → fetch feedback
  → export through a real exchange folder, in the clone as the course folder. The student runs
  in a home of their own with none of the course's configuration and submits twice (blank,
  then solved): the instructor collects and grades the latest. ``validate`` says Success.
* Local settings: the guide's ``nbgrader_config.local.py`` example takes effect with the course's
  configuration still in force; a local file that raises (the ``c.merge(load_subconfig(...))``
  line an earlier guide suggested) stops nbgrader with the file's name instead of grading with
  nbgrader's defaults.

(The multi-student version on a real JupyterHub is tests/hub/.)
"""

from __future__ import annotations

import csv
import getpass
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import graded_course as gc
import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "instructors.md"
GUIDE_EXCHANGE = "/srv/nbgrader/exchange"
#: Packages for maintaining the course, not for grading it.
MAINTAINER_TOOLS = {"pytest", "ruff", "playwright", "hypothesis", "jupyterhub", "nbval"}


def blocks(language: str) -> list[str]:
    """The guide's fenced code blocks in ``language``, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def block_with(needle: str, language: str = "bash") -> str:
    found = [b for b in blocks(language) if needle in b]
    assert len(found) == 1, f"the guide has {len(found)} {language} blocks with {needle!r}"
    return found[0]


def commands(block: str) -> list[str]:
    """The command lines of a block, comments and blank lines left out."""
    lines = (line.split(" #", 1)[0].strip() for line in block.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def nbgrader_lines(block: str, exchange: Path) -> list[list[str]]:
    """Each ``nbgrader …`` line of ``block`` as argv, the guide's exchange moved to ``exchange``."""
    return [
        shlex.split(line.replace(GUIDE_EXCHANGE, str(exchange)))
        for line in commands(block)
        if line.startswith("nbgrader ")
    ]


def run(argv: list[str], cwd: Path, env: dict, check: bool = True):
    """Run one guide line (``nbgrader …`` runs this Python's nbgrader)."""
    if argv[0] == "nbgrader":
        argv = [sys.executable, "-m", "nbgrader", *argv[1:]]
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert result.returncode == 0, f"{' '.join(argv)}:\n{result.stderr[-3000:]}"
    return result


def student_env(home: Path) -> dict[str, str]:
    """A student's shell: their own home, none of the course's variables or configuration."""
    env = gc.nbgrader_env(HOME=str(home))
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_CONFIG_PATH", "JUPYTER_DATA_DIR"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The guide's setup block, run in a shell: the course cloned and on the term's branch."""
    where = tmp_path_factory.mktemp("instructor")
    setup = block_with("git clone")
    lines = commands(setup)
    clone = next(line for line in lines if line.startswith("git clone"))
    branch = next(line for line in lines if line.startswith("git switch"))
    script = clone.replace("<the course repository>", shlex.quote(str(ROOT))) + " && " + branch
    subprocess.run(["bash", "-ec", script], cwd=where, check=True, capture_output=True)
    folder = where / "attnlab-course"
    head = subprocess.run(
        ["git", "branch", "--show-current"], cwd=folder, capture_output=True, text=True
    )
    assert head.stdout.strip() == branch.split()[-1]
    return folder


def test_the_graders_install_brings_no_maintainer_tools(course):
    setup = block_with("git clone")
    install = next(line for line in commands(setup) if line.startswith("pip install"))
    argv = shlex.split(install)[2:]  # the requirement options as the guide gives them
    report = course / "pip-report.json"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        + ["--report", str(report), *argv],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    names = {
        item["metadata"]["name"].lower()
        for item in json.loads(report.read_text(encoding="utf-8"))["install"]
    }
    assert {"nbgrader", "attnlab", "nbclient", "numpy"} <= names
    assert names & MAINTAINER_TOOLS == set()


def test_the_documented_flow_moves_an_assignment_there_and_back(course, tmp_path):
    exchange, home = tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir(mode=0o777)
    home.mkdir()
    teacher = gc.nbgrader_env(ATTNLAB_EXCHANGE=str(exchange))  # as the guide says
    pupil = student_env(home)
    release, student, collect = (
        nbgrader_lines(block_with(word), exchange)
        for word in ("release_assignment", "nbgrader submit", "nbgrader collect")
    )
    [fetch_feedback] = nbgrader_lines(block_with("fetch_feedback"), exchange)
    [validate] = nbgrader_lines(block_with("nbgrader validate"), exchange)
    lesson = release[0][2]

    for argv in release:
        run(argv, course, teacher)
    fetch, submit = student
    run(fetch, home, pupil)
    fetched = home / lesson / f"{lesson}.ipynb"
    run(submit, home, pupil)  # a blank first try, replaced below
    source_nb = gc.read(course / "source" / lesson / f"{lesson}.ipynb")
    nb = gc._with_answers(gc.read(fetched), gc.worked(source_nb))
    fetched.write_text(json.dumps(nb), encoding="utf-8")
    assert "Success" in run(validate, home, pupil).stdout
    run(submit, home, pupil)

    for argv in collect:
        run(argv, course, teacher)
    me = getpass.getuser()
    assert (course / "submitted" / me / lesson / f"{lesson}.ipynb").exists()
    run(fetch_feedback, home, pupil)
    assert list((home / lesson / "feedback").glob("*/*.html"))
    rows = list(csv.DictReader((course / "grades.csv").open(encoding="utf-8")))
    mine = [r for r in rows if r["student_id"] == me and r["assignment"] == lesson]
    total = sum(points for _, _, points in gc.graded_answers(source_nb))
    assert mine and float(mine[0]["score"]) == float(mine[0]["max_score"]) == total


def test_students_without_the_exchange_option_find_nothing(course, tmp_path):
    """Why the guide names the exchange in every student command."""
    home = tmp_path / "student"
    home.mkdir()
    fetch = nbgrader_lines(block_with("nbgrader submit"), Path("/nonexistent"))[0]
    bare = [arg for arg in fetch if not arg.startswith("--Exchange.root")]
    assert bare != fetch
    result = run(bare, home, student_env(home), check=False)
    assert result.returncode != 0


def test_local_settings_take_effect_and_a_broken_file_stops_nbgrader(course):
    local = course / "nbgrader_config.local.py"
    example = block_with("nbgrader_config.local.py", "python")
    lesson = "01-dot-product-scores"
    env = gc.nbgrader_env()
    try:
        local.write_text(example, encoding="utf-8")
        folder = re.search(r'release_directory = "(\w+)"', example)[1]
        run(["nbgrader", "generate_assignment", lesson, "--force"], course, env)
        assert (course / folder / lesson / f"{lesson}.ipynb").exists()
        # the course's own settings are still in force beside the local ones
        shown = run(
            [sys.executable, "-c", CONFIG_PROBE, str(course / "nbgrader_config.py")], course, env
        ).stdout
        probe = json.loads(shown)
        assert probe["timeout"] == 60 and "LimitedExecute" in probe["execute"], probe

        local.write_text('c.merge(load_subconfig("nbgrader_config.extra.py"))\n', "utf-8")
        result = run(["nbgrader", "autograde", lesson], course, env, check=False)
        assert result.returncode != 0
        assert "nbgrader_config.local.py could not be read" in result.stderr
    finally:
        local.unlink(missing_ok=True)


#: Loads a config file the way nbgrader's applications do (traitlets' Python config loader)
#: and prints two settings as JSON.
CONFIG_PROBE = """
import json, sys
from pathlib import Path
from traitlets.config.loader import PyFileConfigLoader
path = Path(sys.argv[1])
config = PyFileConfigLoader(path.name, str(path.parent)).load_config()
print(json.dumps({"timeout": config.Execute.timeout,
                  "execute": config.Autograde.autograde_preprocessors[0]}))
"""
