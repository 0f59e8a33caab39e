"""Browser-suite setup: when it runs, the servers, Chromium, the artifacts folder, the pages.

The suite runs only when asked (``ATTNLAB_BROWSER=1``) or in CI (``CI=true``); elsewhere every
``browser`` test is skipped with a reason that says how to enable it. In CI a missing Chromium
is a failure, not a skip.

**Each lesson is opened once per front end.** Opening a lesson and running all its cells is
most of a browser test's cost, so every check of a lesson is made on the same page: the
``lesson_pages`` fixture keeps one page open per front end (JupyterLab, Notebook 7) and opens
the next lesson only when a test asks for it, and the tests are ordered by front end, then
lesson, then check (:data:`CHECK_ORDER`: the checks that change the page most come last,
restart-and-reopen at the very end, since it restarts the kernel and reloads the page).
``ATTNLAB_BROWSER_SHARD=k/n`` keeps the k-th of n shards (whole lessons; see
:func:`_in_shard`), so CI can run two shards at once.
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


#: The order of the checks made on one open lesson: lesson 0's self-test needs its bar untouched;
#: the keyboard presses "Next hint" before the accessibility check presses it again; the
#: legibility check drives sliders to their ends; the theme is switched and back; the kernel
#: restart and the reopened page come last.
CHECK_ORDER = (
    "test_selftest_in_browser",
    "test_explorers_in_browser",
    "test_keyboard",
    "test_accessibility",
    "test_legibility",
    "test_learner_keys",
    "test_figures_hidpi",
    "test_dark_theme",
    "test_course_in_lab",
    "test_saved_size",
    "test_restart_reopen",
)
FRONT_ORDER = ("lab", "nb7")


def _page_key(item: pytest.Item) -> tuple | None:
    """(front end, lesson) of the page a browser test uses, from its parameters, or None."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    value = next((params[k] for k in ("lesson", "laptop_lesson", "name") if k in params), None)
    if isinstance(value, tuple):  # (front end, lesson)
        return value
    if isinstance(value, str):
        return (params.get("front", "lab"), value)
    if "front" in params:
        return (params["front"], "00-start-here.ipynb")
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every ``browser`` test unless the suite is enabled (see :func:`skip_reason`); order
    the enabled ones so each lesson opens once per front end (see the module docstring)."""
    reason = skip_reason()
    if reason is not None:
        for item in items:
            if item.get_closest_marker("browser"):
                item.add_marker(pytest.mark.skip(reason=reason))
        return

    def key(indexed: tuple[int, pytest.Item]) -> tuple:
        index, item = indexed
        page = _page_key(item) if item.get_closest_marker("browser") else None
        if page is None:
            return (0, index)
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        check = CHECK_ORDER.index(module) if module in CHECK_ORDER else len(CHECK_ORDER)
        return (1, FRONT_ORDER.index(page[0]), page[1], check, index)

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]
    shard = os.environ.get("ATTNLAB_BROWSER_SHARD", "")
    if shard:
        kept, dropped = [], []
        for index, item in enumerate(items):
            (kept if _in_shard(item, index, shard) else dropped).append(item)
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _in_shard(item: pytest.Item, index: int, shard: str) -> bool:
    """Whether ``item`` belongs to ``shard`` ("k/n", k from 1): a lesson's page checks all go
    to one shard (lesson number modulo n), in both front ends, so each lesson still opens once
    per front end; the other tests are dealt out in turn. Two shards run side by side in CI,
    each with its own JupyterLab, Notebook 7 and Chromium (``./run.sh test --all``)."""
    k, n = (int(part) for part in shard.split("/"))
    page = _page_key(item) if item.get_closest_marker("browser") else None
    number = int(page[1][:2]) if page and page[1][:2].isdigit() else index
    return number % n == k - 1


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
    shard = os.environ.get("ATTNLAB_BROWSER_SHARD", "").replace("/", "-of-")
    folder = Path(override).resolve() if override else DEFAULT_ARTIFACTS
    if shard and not override:  # shards run at once: each empties and fills its own folder
        folder = folder / f"shard-{shard}"
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


class LessonPages:
    """One open lesson page per front end, run once and shared by every check of that lesson.

    ``pages(front, name)`` returns the open :class:`lab_harness.LessonPage` (1366 x 768, all
    cells run, ``page.run`` holding Run All's result); asking for another lesson closes the one
    open in that front end (and shuts its kernel) first. A lesson whose Run All failed is not
    opened again: every later check of it fails with the same error.
    """

    def __init__(self, request: pytest.FixtureRequest, chromium, artifacts_dir: Path) -> None:
        self._request, self._chromium, self._artifacts = request, chromium, artifacts_dir
        self._open: dict[str, tuple[str, object, object]] = {}  # front -> (name, ctx, page)
        self._failed: dict[tuple[str, str], BaseException] = {}
        self.opened: list[tuple[str, str]] = []

    def __call__(self, front: str, name: str) -> lab.LessonPage:
        if (front, name) in self._failed:
            raise RuntimeError(f"{name} in {front}: Run All failed earlier") from self._failed[
                (front, name)
            ]
        current = self._open.get(front)
        if current and current[0] == name and not current[2].closed:
            return current[2]
        self.close(front)
        server = self._request.getfixturevalue(FRONT_ENDS[front])
        context = lab.opened_lesson(self._chromium, server, name, self._artifacts)
        try:
            page = context.__enter__()
        except BaseException as error:
            self._failed[(front, name)] = error
            raise
        page.front_end = front
        self._open[front] = (name, context, page)
        self.opened.append((front, name))
        return page

    def close(self, front: str) -> None:
        """Close the lesson open in ``front`` (if any) and shut its kernel down."""
        current = self._open.pop(front, None)
        if current is not None:
            current[1].__exit__(None, None, None)

    def close_all(self) -> None:
        for front in list(self._open):
            self.close(front)


FRONT_ENDS = {"lab": "lab_server", "nb7": "nb7_server"}


@pytest.fixture(scope="session")
def lesson_pages(request, chromium, artifacts_dir: Path) -> Iterator[LessonPages]:
    """The shared lesson pages (see :class:`LessonPages`); prints how often each lesson opened."""
    pages = LessonPages(request, chromium, artifacts_dir)
    yield pages
    pages.close_all()
    print(f"\nbrowser suite: {len(pages.opened)} lesson page loads: {pages.opened}")
