"""The nbgitpuller link, followed by nbgitpuller itself, twice and more, into a student's home.

The link's own query (repo, branch, targetPath) is handed to nbgitpuller's ``GitPuller`` as its
``/git-pull`` handler does (``GitPuller(repo, <server root>/<targetPath>, branch=...)``), against a
local course repository (``file://``, no network). A branch pulls on every click: new lessons
arrive and a file the student changed keeps the student's version. A tag, which the guide used to
suggest, clones on the first click and fails on the second (``git diff ..origin/<tag>``), so the
link tool refuses one.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import in_ci

ROOT = Path(__file__).resolve().parents[2]
BRANCH, TAG = "term-2026", "v2026.1"


@pytest.fixture
def git_puller():
    """nbgitpuller's puller (pinned in deploy/hub-requirements.txt; the tests need it too):
    missing, these tests skip, except in CI, where they fail."""
    try:
        from nbgitpuller.pull import GitPuller
    except ImportError:
        if in_ci():
            pytest.fail("nbgitpuller is not installed: requirements-dev.txt must pin it")
        pytest.skip("nbgitpuller is not installed (pip install nbgitpuller==1.3.0)")
    return GitPuller


def link_tool():
    spec = importlib.util.spec_from_file_location("link", ROOT / "deploy" / "nbgitpuller_link.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Course", "-c", "user.email=course@example.org", *args],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def course(tmp_path) -> Path:
    """The course repository: lesson 0 on the branch and under a tag."""
    repo = tmp_path / "course"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "notebooks" / "00-start-here.ipynb").write_text("lesson 0\n")
    (repo / "notebooks" / "01-dot-product-scores.ipynb").write_text("lesson 1, first draft\n")
    git(repo, "init", "-q", "-b", BRANCH)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "term starts")
    git(repo, "tag", TAG)
    return repo


def click(git_puller, link: str, home: Path) -> list[str]:
    """What a click on ``link`` makes nbgitpuller do in ``home`` (the server's root)."""
    query = {key: values[0] for key, values in parse_qs(urlsplit(link).query).items()}
    puller = git_puller(
        query["repo"], str(home / query["targetPath"]), branch=query["branch"], depth=None
    )
    return list(puller.pull())


def new_commit(course: Path) -> None:
    (course / "notebooks" / "02-softmax.ipynb").write_text("lesson 2\n")
    (course / "notebooks" / "01-dot-product-scores.ipynb").write_text("lesson 1, fixed\n")
    git(course, "add", ".")
    git(course, "commit", "-q", "-m", "lesson 2; lesson 1 fixed")


def test_a_branch_link_pulls_on_every_click(git_puller, course, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # nbgitpuller's own commits, not our git config
    tool = link_tool()
    link = tool.nbgitpuller_link("https://hub.example.org", course.as_uri(), branch=BRANCH)
    assert tool.branch_problem(course.as_uri(), BRANCH) is None
    home = tmp_path / "home"
    home.mkdir()
    click(git_puller, link, home)  # first click: clone
    mine = home / "attnlab" / "notebooks" / "00-start-here.ipynb"
    assert mine.read_text() == "lesson 0\n"
    mine.write_text("lesson 0, my answers\n")  # the student works
    click(git_puller, link, home)  # second click, nothing new upstream
    new_commit(course)
    click(git_puller, link, home)  # third click: the new lesson and the fix arrive
    lessons = home / "attnlab" / "notebooks"
    assert (lessons / "02-softmax.ipynb").read_text() == "lesson 2\n"
    assert (lessons / "01-dot-product-scores.ipynb").read_text() == "lesson 1, fixed\n"
    assert mine.read_text() == "lesson 0, my answers\n", "the student's edit was overwritten"


def test_a_tag_link_breaks_on_the_second_click_and_the_tool_refuses_it(
    git_puller,
    course,
    tmp_path,
    monkeypatch,
):
    monkeypatch.setenv("HOME", str(tmp_path))
    tool = link_tool()
    link = tool.nbgitpuller_link("https://hub.example.org", course.as_uri(), branch=TAG)
    home = tmp_path / "home"
    home.mkdir()
    click(git_puller, link, home)  # a tag clones...
    assert (home / "attnlab" / "notebooks" / "00-start-here.ipynb").exists()
    with pytest.raises(Exception, match=f"origin/{TAG}"):
        click(git_puller, link, home)  # ...and fails from the second click on
    problem = tool.branch_problem(course.as_uri(), TAG)
    assert problem and "is a tag" in problem
    assert "has no branch" in tool.branch_problem(course.as_uri(), "no-such-branch")
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "deploy" / "nbgitpuller_link.py"),
            "https://hub.example.org",
            course.as_uri(),
            "--branch",
            TAG,
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "is a tag" in result.stderr, result
