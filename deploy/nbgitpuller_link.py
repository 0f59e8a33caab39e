"""An nbgitpuller link that puts the course's learner notebooks into each student's home.

    python deploy/nbgitpuller_link.py https://hub.example.org \\
        https://github.com/you/attnlab-students --branch term-2026
    python deploy/nbgitpuller_link.py https://hub.example.org \\
        file:///srv/attnlab-students.git --branch term-2026 --open notebooks/03-softmax.ipynb

Link to the **students' edition** (``deploy/students_edition.py``): the course repository holds
``source/`` (every worked solution) and ``answer_keys/``, and whatever the link names, every
student who clicks it gets. The tool fetches the branch's file list and refuses a branch that
holds ``source/`` or ``answer_keys/``; ``--with-solutions`` links to one anyway (self-study
learners, who should see the worked solutions).

The first click clones the repository into ``~/attnlab`` of the student's server and opens the
notebook in JupyterLab; later clicks pull new commits and merge them without overwriting the
student's own edits (nbgitpuller's rule: a file the student changed keeps the student's version).
nbgitpuller must be installed in the single-user environment (deploy/hub-requirements.txt).

Link to a **branch**, never a tag: nbgitpuller clones a tag fine, but every later click runs
``git diff ..origin/<name>``, which does not exist for a tag, and fails. To pin a term, make a
branch for it (``git branch term-2026 <tag> && git push origin term-2026``). The tool asks the
repository (``git ls-remote``) that the name is a branch; ``--no-check`` skips that.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from urllib.parse import urlencode

START = "notebooks/00-start-here.ipynb"
TARGET = "attnlab"  # the folder in the student's home


def nbgitpuller_link(
    hub: str, repo: str, branch: str = "main", open_path: str = START, target: str = TARGET
) -> str:
    """The ``/hub/user-redirect/git-pull`` link for ``repo`` on ``hub``.

    >>> nbgitpuller_link("https://hub.example.org/", "https://github.com/attnlab/attnlab")
    'https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Fattnlab%2Fattnlab&branch=main&targetPath=attnlab&urlpath=lab%2Ftree%2Fattnlab%2Fnotebooks%2F00-start-here.ipynb'
    """
    if not hub.startswith(("http://", "https://")) or not repo.startswith(
        ("http", "git@", "file://")
    ):
        raise ValueError(f"hub and repo must be URLs, got hub={hub!r} repo={repo!r}")
    query = urlencode(
        {
            "repo": repo,
            "branch": branch,
            "targetPath": target,
            "urlpath": f"lab/tree/{target}/{open_path}",
        }
    )
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def branch_problem(repo: str, branch: str) -> str | None:
    """Why ``branch`` of ``repo`` cannot back an nbgitpuller link, or None if it is a branch."""
    refs = subprocess.run(
        ["git", "ls-remote", "--heads", "--tags", "--", repo],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if refs.returncode:
        return f"cannot list the branches of {repo}: {refs.stderr.strip()}"
    names = {line.split()[1] for line in refs.stdout.splitlines() if line.strip()}
    if f"refs/heads/{branch}" in names:
        return None
    if f"refs/tags/{branch}" in names:
        return (
            f"{branch!r} is a tag of {repo}, not a branch: nbgitpuller clones it, then fails on "
            f"every later click (git diff ..origin/{branch}). Make a branch of it "
            f"(git branch {branch}-branch {branch} && git push origin {branch}-branch) and "
            "link to that."
        )
    return f"{repo} has no branch {branch!r}"


#: What a students' link must not bring: worked solutions and quiz keys.
WITHHELD = ("source", "answer_keys")


def solutions_problem(repo: str, branch: str) -> str | None:
    """Why ``branch`` of ``repo`` would hand students the solutions, or None if it holds none of
    :data:`WITHHELD` (its file list is fetched: one commit, no file contents where the server
    can filter them)."""
    with tempfile.TemporaryDirectory(prefix="attnlab-link-") as tmp:
        fetched = subprocess.run(
            ["git", "clone", "-q", "--bare", "--depth", "1", "--filter=blob:none"]
            + ["--branch", branch, "--", repo, f"{tmp}/repo"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if fetched.returncode:
            return f"cannot fetch branch {branch!r} of {repo}: {fetched.stderr.strip()}"
        names = subprocess.run(
            ["git", "ls-tree", "--name-only", "HEAD"],
            cwd=f"{tmp}/repo",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    held = [f"{name}/" for name in WITHHELD if name in names]
    if not held:
        return None
    return (
        f"branch {branch!r} of {repo} holds {' and '.join(held)} (worked solutions, quiz keys): "
        "every student who clicks the link gets them. Link to the students' edition instead "
        f"(python deploy/students_edition.py DEST --branch {branch}, then push DEST's branch to "
        "a repository of its own), or pass --with-solutions for self-study learners."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hub", help="the hub's address, e.g. https://hub.example.org")
    parser.add_argument("repo", help="the course repository to clone")
    parser.add_argument(
        "--branch", default="main", help="the branch (not a tag) the term is taught from"
    )
    parser.add_argument("--open", default=START, help="notebook to open, relative to the repo")
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="do not ask the repository anything (that it is a branch, that it has no solution)",
    )
    parser.add_argument(
        "--with-solutions",
        action="store_true",
        help="link to a branch that holds source/ or answer_keys/ (self-study, not a graded class)",
    )
    args = parser.parse_args(argv)
    problem = None if args.no_check else branch_problem(args.repo, args.branch)
    if not (problem or args.no_check or args.with_solutions):
        problem = solutions_problem(args.repo, args.branch)
    if problem:
        parser.exit(2, f"error: {problem}\n")
    print(nbgitpuller_link(args.hub, args.repo, args.branch, args.open))


if __name__ == "__main__":
    main()
