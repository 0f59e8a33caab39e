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


def edition_tool():
    spec = importlib.util.spec_from_file_location(
        "edition", ROOT / "deploy" / "students_edition.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bug_hunt_lines() -> set[str]:
    """Lesson 7's bug hunt shows its buggy functions to students: their lines are no solution."""
    import inspect

    from solution_lines import folded_lines

    from attnlab.exercises import lesson7

    return folded_lines(
        "\n".join(inspect.getsource(getattr(lesson7, f)) for f in dir(lesson7) if "buggy_" in f)
    )


def solutions_in(folder: Path) -> list[str]:
    """Everything in ``folder`` (a student's copy) that gives a worked solution or quiz key away."""
    from solution_lines import leaks, notebook_text, quiz_key_leaks

    found = [f"{name}/" for name in ("source", "answer_keys") if (folder / name).exists()]
    withheld = {
        p.read_bytes(): p.relative_to(ROOT).as_posix()
        for name in ("source", "answer_keys")
        for p in (ROOT / name).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    lessons, texts = {}, {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts):
        name = path.relative_to(folder).as_posix()
        if path.read_bytes() in withheld:
            found.append(f"{name} is {withheld[path.read_bytes()]}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        text = notebook_text(path) if name.endswith(".ipynb") else text
        if any(line.strip() == "### BEGIN SOLUTION" for line in text.splitlines()):
            found.append(f"{name}: a solution line")
        if name.startswith("notebooks/") and name.endswith(".ipynb"):
            lessons[path.name] = text  # released in order: see leaks()
        else:
            texts[name] = text
    shown = _bug_hunt_lines()
    found += [f"{n}: {line}" for n, _, line in leaks(lessons, in_order=True)]
    found += [f"{n}: {line}" for n, _, line in leaks(texts) if line not in shown]
    found += [f"{n}: quiz key {what}" for n, _, what in quiz_key_leaks({**lessons, **texts})]
    return found


@pytest.mark.slow  # 3-9 s: the edition built and pulled twice, the course pulled
def test_the_students_link_pulls_the_students_edition_and_no_solution(
    git_puller, tmp_path, monkeypatch
):
    """The guide's link, to the students' edition of this checkout, followed twice by nbgitpuller:
    the notebooks and the package arrive, no solution does. The link the guide used to give, to
    the course repository itself, brings source/ and answer_keys/ (the scan finds them)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    edition = tmp_path / "attnlab-students.git"
    assert edition_tool().build(edition, BRANCH) is not None
    assert edition_tool().build(edition, BRANCH) is None  # nothing new: no commit
    tool = link_tool()
    assert tool.branch_problem(edition.as_uri(), BRANCH) is None
    link = tool.nbgitpuller_link("https://hub.example.org", edition.as_uri(), branch=BRANCH)
    home = tmp_path / "home"
    home.mkdir()
    click(git_puller, link, home)
    copy = home / "attnlab"
    assert (copy / tool.START).is_file() and (copy / "attnlab" / "attention.py").is_file()
    assert sorted(p.name for p in (copy / "notebooks").glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "notebooks").glob("*.ipynb")
    )
    mine = copy / tool.START
    mine.write_text(
        mine.read_text().replace(
            '"cells": [',
            '"cells": [{"cell_type": "raw", "metadata": {}, "source": ["my notes"]},',
            1,
        )
    )
    click(git_puller, link, home)  # the second click merges, keeping the student's edit
    assert '"my notes"' in mine.read_text()
    assert not (copy / "tests").exists()
    assert solutions_in(copy) == []

    before = home / "before"
    course = git(ROOT, "rev-parse", "--abbrev-ref", "HEAD").strip()
    old = tool.nbgitpuller_link("https://hub.example.org", ROOT.as_uri(), branch=course)
    click(git_puller, old.replace("targetPath=attnlab", "targetPath=before"), home)
    found = solutions_in(before)
    assert "source/" in found and "answer_keys/" in found
    assert any("solution line" in hit for hit in found)
    # ...so the tool refuses to make that link, and makes the edition's.
    assert tool.solutions_problem(edition.as_uri(), BRANCH) is None
    for repo, branch, code in ((ROOT, course, 2), (edition, BRANCH, 0)):
        made = subprocess.run(
            [sys.executable, str(ROOT / "deploy" / "nbgitpuller_link.py")]
            + ["https://hub.example.org", repo.as_uri(), "--branch", branch],
            capture_output=True,
            text=True,
        )
        assert made.returncode == code, made
    assert "holds source/ and answer_keys/" in tool.solutions_problem(ROOT.as_uri(), course)


def test_the_edition_tool_refuses_a_solution(tmp_path):
    """Its own check names a worked notebook or a quiz key that got into the edition."""
    tool = edition_tool()
    edition = tmp_path / "edition"
    (edition / "notebooks").mkdir(parents=True)
    worked = next((ROOT / "source").glob("03-*/03-*.ipynb"))
    (edition / "notebooks" / "03-softmax.ipynb").write_bytes(worked.read_bytes())
    (edition / "keys.py").write_bytes(next((ROOT / "answer_keys").glob("*.py")).read_bytes())
    (edition / "answer_keys").mkdir()
    found = "\n".join(tool.problems(edition))
    assert "answer_keys/ is in the edition" in found
    assert f"notebooks/03-softmax.ipynb is source/{worked.parent.name}/{worked.name}" in found
    assert "keys.py is answer_keys/" in found
    assert "notebooks/03-softmax.ipynb has a '### BEGIN SOLUTION'" in found
    assert "notebooks/03-softmax.ipynb: worked solution line" in found
    stubbed = ROOT / "notebooks" / "03-softmax.ipynb"  # the learner version: stubs only
    (edition / "notebooks" / "03-softmax.ipynb").write_bytes(stubbed.read_bytes())
    (edition / "keys.py").unlink()
    (edition / "answer_keys").rmdir()
    assert tool.problems(edition) == []
