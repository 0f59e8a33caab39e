"""An nbgitpuller link that puts the course's learner notebooks into each student's home.

    python deploy/nbgitpuller_link.py https://hub.example.org https://github.com/attnlab/attnlab
    python deploy/nbgitpuller_link.py HUB REPO --branch term-2026 --open notebooks/03-softmax.ipynb

The first click clones the repository into ``~/attnlab`` of the student's server and opens the
notebook in JupyterLab; later clicks pull new commits and merge them without overwriting the
student's own edits (nbgitpuller's rule: a file the student changed keeps the student's version).
nbgitpuller must be installed in the single-user environment (deploy/hub-requirements.txt).
"""

from __future__ import annotations

import argparse
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
    if not hub.startswith(("http://", "https://")) or not repo.startswith(("http", "git@")):
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hub", help="the hub's address, e.g. https://hub.example.org")
    parser.add_argument("repo", help="the course repository to clone")
    parser.add_argument("--branch", default="main", help="branch or tag pinned for the term")
    parser.add_argument("--open", default=START, help="notebook to open, relative to the repo")
    args = parser.parse_args(argv)
    print(nbgitpuller_link(args.hub, args.repo, args.branch, args.open))


if __name__ == "__main__":
    main()
