"""The students' edition: the branch a graded class's nbgitpuller link pulls, with no solution.

    python deploy/students_edition.py /srv/attnlab-students.git --branch term-2026
    python deploy/students_edition.py ../attnlab-students.git --branch term-2026 --rev v2026.1

The course repository holds ``source/`` (every worked solution) and ``answer_keys/`` (the quiz
keys), so a link to it hands both to every student. This tool takes a commit of the course
(``--rev``, default ``HEAD``) and commits, on ``--branch`` of the bare repository ``DEST`` (made
if missing), only what a student's copy needs: the learner notebooks (``notebooks/``, made from
``source/`` by nbgrader's own preprocessors, solutions stubbed), the package (``attnlab/``, which
holds no solution), ``requirements.txt``, ``pyproject.toml``, ``binder/``, ``jupyter-config/``
and a README for students. Before committing it checks that the edition holds no ``source/``,
``answer_keys/`` or ``tests/``, no line ``### BEGIN SOLUTION``/``### END SOLUTION``, no file
equal to one of ``source/`` or ``answer_keys/``, and no line of a worked solution in a solution
cell of a notebook; it stops (exit 1) naming what it found.

Each run adds one commit on top of the branch's last one (none when nothing changed), so the
students' nbgitpuller pulls merge as usual. Push the branch to a repository the students can
reach that holds nothing else (``git -C DEST push <url> <branch>``), or, on TLJH, link to
``file:///srv/attnlab-students.git`` (``deploy/tljh/setup.sh`` builds it there).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What the students' edition holds, from the course commit.
SHIPPED = (
    "notebooks",
    "attnlab",
    "requirements.txt",
    "pyproject.toml",
    "binder",
    "jupyter-config",
)
#: Never in the students' edition: solutions, quiz keys, tests that embed answers.
WITHHELD = ("source", "answer_keys", "tests", "release", "autograded", "submitted", "feedback")
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
README = """# attnlab: scaled dot-product attention, one lesson at a time

Your copy of the course. Open `notebooks/00-start-here.ipynb` and work through the lessons in
order; each exercise has a *Check* cell that tells you what is right and what is not yet.

Your own edits stay yours: when the course adds a lesson or a fix, clicking the course link again
brings it in without overwriting a notebook you have changed.
"""


def git(*args: str, cwd: Path = ROOT, env: dict | None = None, text: bool = True) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=text
    ).stdout


def solution_lines(text: str) -> set[str]:
    """The stripped lines between BEGIN and END SOLUTION of a notebook's text (its JSON)."""
    found = set()
    for cell in json.loads(text)["cells"]:
        inside = False
        for line in "".join(cell["source"]).splitlines():
            line = line.strip()
            if line == BEGIN:
                inside = True
            elif line == END:
                inside = False
            elif inside and len(line) >= 12 and not line.startswith("#"):
                found.add(line)
    return found


def problems(folder: Path, rev: str = "HEAD", repo: Path = ROOT) -> list[str]:
    """What in ``folder`` (an edition) would give away a solution of the course at ``rev``."""
    found = [f"{name}/ is in the edition" for name in WITHHELD if (folder / name).exists()]
    withheld = {}  # blob id -> path, of every file under source/ and answer_keys/
    worked = set()
    for line in git("ls-tree", "-r", rev, "--", "source", "answer_keys", cwd=repo).splitlines():
        meta, path = line.split("\t", 1)
        withheld[meta.split()[2]] = path
        if path.startswith("source/") and path.endswith(".ipynb"):
            worked |= solution_lines(git("show", f"{rev}:{path}", cwd=repo))
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts):
        name = path.relative_to(folder).as_posix()
        blob = git("hash-object", "--", str(path), cwd=repo).strip()
        if blob in withheld:
            found.append(f"{name} is {withheld[blob]}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        cells = json.loads(text)["cells"] if name.endswith(".ipynb") else []
        sources = ["".join(cell["source"]) for cell in cells] or [text]
        if any(line.strip() in (BEGIN, END) for s in sources for line in s.splitlines()):
            found.append(f"{name} has a {BEGIN!r} or {END!r} line")
        if name.endswith(".ipynb"):
            for cell in cells:
                if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                    lines = {line.strip() for line in "".join(cell["source"]).splitlines()}
                    found += [f"{name}: worked solution line {x!r}" for x in sorted(lines & worked)]
    return found


def build(dest: Path, branch: str, rev: str = "HEAD", repo: Path = ROOT) -> str | None:
    """Commit the students' edition of ``rev`` on ``branch`` of the bare repository ``dest``.

    Returns the new commit, or None when the branch already holds this edition. Raises
    ValueError naming what would give a solution away (nothing is committed then), or when
    ``dest`` is a folder that is neither empty nor a bare repository.
    """
    commit = git("rev-parse", "--verify", f"{rev}^{{commit}}", cwd=repo).strip()
    if not (dest / "HEAD").exists():
        if dest.exists() and any(dest.iterdir()):
            raise ValueError(f"dest: {dest} is not a bare repository and not empty")
        dest.mkdir(parents=True, exist_ok=True)
        git("init", "-q", "--bare", "-b", branch, str(dest), cwd=dest)
    with tempfile.TemporaryDirectory(prefix="attnlab-edition-") as tmp:
        folder = Path(tmp) / "edition"
        folder.mkdir()
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit, "--", *SHIPPED],
            cwd=repo,
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        (folder / "README.md").write_text(README)
        found = problems(folder, commit, repo)
        if found:
            raise ValueError(
                "the students' edition would give solutions away:\n" + "\n".join(found)
            )
        env = {
            **os.environ,
            "GIT_DIR": str(dest.resolve()),
            "GIT_WORK_TREE": str(folder),
            "GIT_INDEX_FILE": str(Path(tmp) / "index"),
            "GIT_AUTHOR_NAME": "attnlab",
            "GIT_AUTHOR_EMAIL": "attnlab@localhost",
            "GIT_COMMITTER_NAME": "attnlab",
            "GIT_COMMITTER_EMAIL": "attnlab@localhost",
        }
        git("add", "-A", ".", cwd=folder, env=env)
        tree = git("write-tree", cwd=folder, env=env).strip()
        tip = subprocess.run(
            ["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
            env=env,
            cwd=folder,
            capture_output=True,
            text=True,
        ).stdout.strip()
        if tip and git("rev-parse", f"{tip}^{{tree}}", cwd=folder, env=env).strip() == tree:
            return None
        parents = ["-p", tip] if tip else []
        message = f"students' edition of the course at {commit[:12]}"
        new = git("commit-tree", tree, *parents, "-m", message, cwd=folder, env=env).strip()
        git("update-ref", f"refs/heads/{branch}", new, *([tip] if tip else []), cwd=folder, env=env)
        return new


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "dest", type=Path, help="the bare repository to commit to (made if missing)"
    )
    parser.add_argument("--branch", required=True, help="the branch students' links pull")
    parser.add_argument("--rev", default="HEAD", help="the course commit to take (default HEAD)")
    args = parser.parse_args(argv)
    try:
        new = build(args.dest, args.branch, args.rev)
    except ValueError as error:
        parser.exit(1, f"error: {error}\n")
    where = f"{args.dest}, branch {args.branch}"
    print(f"{where}: {'committed ' + new[:12] if new else 'up to date, nothing committed'}")


if __name__ == "__main__":
    sys.exit(main())
