"""Browser-suite setup: when it runs, the JupyterLab server, Chromium, the artifacts folder.

The suite runs only when asked (``ATTNLAB_BROWSER=1``) or in CI (``CI=true``); elsewhere every
``browser`` test is skipped with a reason that says how to enable it. In CI a missing Chromium
is a failure, not a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import lab_harness as lab
import pytest

HOW_TO_ENABLE = (
    "install Debian's chromium (apt-get install chromium) and set ATTNLAB_BROWSER=1, "
    "or run in CI (CI=true)"
)
DEFAULT_ARTIFACTS = lab.REPO_ROOT / "artifacts" / "browser"
ARTIFACTS_KEY = pytest.StashKey[Path]()


def in_ci() -> bool:
    """Whether we run in CI (``CI=true``, as GitHub Actions and most CI services set)."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1"}


def skip_reason() -> str | None:
    """Why the browser suite must be skipped here, or None if it should run."""
    if not (in_ci() or os.environ.get("ATTNLAB_BROWSER") == "1"):
        return f"browser tests are off; to enable them {HOW_TO_ENABLE}"
    if not lab.chromium_available() and not in_ci():
        return f"no Chromium at {lab.CHROMIUM}; to enable the browser tests {HOW_TO_ENABLE}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every ``browser`` test unless the suite is enabled (see :func:`skip_reason`)."""
    reason = skip_reason()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Say where the explorer screenshots went, whether or not ``-s`` was given."""
    folder = config.stash.get(ARTIFACTS_KEY, None)
    if folder is not None:
        terminalreporter.write_sep("-", "browser artifacts")
        terminalreporter.write_line(f"explorer screenshots and failure pages: {folder}")


@pytest.fixture(scope="session")
def artifacts_dir(pytestconfig: pytest.Config) -> Path:
    """Folder for screenshots: ``$ATTNLAB_ARTIFACTS`` or artifacts/browser/ (emptied first)."""
    override = os.environ.get("ATTNLAB_ARTIFACTS")
    folder = Path(override).resolve() if override else DEFAULT_ARTIFACTS
    folder.mkdir(parents=True, exist_ok=True)
    if not override:
        for old in folder.glob("*.png"):
            old.unlink()
    pytestconfig.stash[ARTIFACTS_KEY] = folder
    return folder


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """A headless Debian Chromium driven by Playwright; fails (not skips) if CI lacks it."""
    if not lab.chromium_available():
        pytest.fail(
            f"CI=true but there is no Chromium at {lab.CHROMIUM}: the browser tests must run in "
            "CI; install it with `apt-get install chromium` (or point ATTNLAB_CHROMIUM at it)",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = lab.launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def lab_server() -> Iterator[lab.LabServer]:
    """A private JupyterLab serving a temp copy of the lessons; stopped by PID afterwards."""
    with lab.LabServer(lab.notebook_dir()) as server:
        yield server


@pytest.fixture(scope="session")
def nb7_server() -> Iterator[lab.LabServer]:
    """A private Jupyter Notebook 7 serving a temp copy of the lessons; stopped by PID after."""
    from nb7_harness import NotebookServer

    with NotebookServer(lab.notebook_dir()) as server:
        yield server
