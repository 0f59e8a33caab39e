"""The README's lesson map agrees with the course map (attnlab.course) and with notebooks/."""

from __future__ import annotations

import re
from pathlib import Path

from attnlab.course import COURSE

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(
    r"^\| (?P<number>\d+) \| \[(?P<title>[^\]]+)\]\(notebooks/(?P<notebook>[^)]+)\.ipynb\) "
    r"\| [^|]+ \| (?P<minutes>\d+) min \|$"
)


def readme_lessons() -> list[tuple]:
    """(number, title, notebook, minutes) for each row of the README's lesson table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [
        (int(m["number"]), m["title"], m["notebook"], int(m["minutes"]))
        for m in map(ROW.match, text.splitlines())
        if m
    ]


def test_readme_lists_every_ready_lesson_as_lesson_0_does():
    ready = [(x.number, x.title, x.notebook, x.minutes) for x in COURSE if x.ready]
    assert readme_lessons() == ready


def test_readme_links_point_at_notebooks_that_exist():
    rows = readme_lessons()
    assert rows, "README.md has no lesson table rows"
    for _, _, notebook, _ in rows:
        assert (ROOT / "notebooks" / f"{notebook}.ipynb").is_file(), notebook


def quick_start() -> str:
    """The README's Quick start section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Quick start", 1)[1].split("\n## ", 1)[0]


def test_readme_says_how_to_run_headless_and_tunnel_the_same_port():
    text = quick_start()
    lab = re.search(r"^\./run\.sh lab --no-browser --port (\d+)", text, re.M)
    tunnel = re.search(r"^ssh -N -L (\d+):127\.0\.0\.1:(\d+) ", text, re.M)
    assert lab and tunnel, "Quick start lacks the headless command or the ssh tunnel line"
    assert lab[1] == tunnel[1] == tunnel[2], (lab[0], tunnel[0])


def test_readme_own_environment_command_says_what_root_needs():
    text = quick_start()
    command = re.search(r"^JUPYTER_CONFIG_PATH=jupyter-config jupyter lab (\S+)$", text, re.M)
    assert command, "Quick start lacks the own-environment command"
    assert (ROOT / command[1]).is_file(), command[0]
    assert "--allow-root" in text, "running as root (containers) needs --allow-root: say so"
    assert "--allow-root" in (ROOT / "run.sh").read_text(), "run.sh must add --allow-root as root"


def test_every_stage_the_lanes_run_is_defined_in_run_sh():
    """Each command the two lanes of ``./run.sh test --all`` run is a function run.sh defines
    (a lane whose stage function is missing fails with 'command not found' in the background
    and, before this test, only the end-of-run table showed the stages were never run)."""
    text = (ROOT / "run.sh").read_text(encoding="utf-8")
    defined = set(re.findall(r"^(\w+)\(\) \{", text, flags=re.MULTILINE))
    called = set()
    for lane in ("browser_lane", "computing_lane"):
        body = re.search(rf"^{lane}\(\) \{{(.*?)\}}\s*$", text, flags=re.MULTILINE | re.DOTALL)
        assert body, f"run.sh defines no {lane}"
        for command in re.split(r"[;\n]", body.group(1)):
            words = command.split()
            if words:
                called.add(words[0])
    assert called and called <= defined, sorted(called - defined)
