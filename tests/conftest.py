"""Shared test setup."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def learner_mode(monkeypatch):
    """Checks report instead of raising, as in a learner's notebook, unless a test opts in.

    Tests that need grading mode set ``ATTNLAB_REQUIRE_CORRECT=1`` with ``monkeypatch``.
    """
    monkeypatch.delenv("ATTNLAB_REQUIRE_CORRECT", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


#: The slow test files that take longest, longest first (seconds in a fresh-clone CI of
#: 2026-12-06, beside the browser suite): graded use (687 for its fixture), the attack suite
#: (about 40 submissions, lesson 8's 16-33 s each), the class with a hanging, forking and
#: flooding student (237), the JupyterHub class (227) and the exchange (120).
#: ``./run.sh test --all`` runs them on three xdist workers, a file per worker, in collection
#: order (``--no-loadscope-reorder``): the longest start first.
LONGEST_FIRST = (
    "tests/test_graded_use.py",
    "tests/test_grading_attacks.py",
    "tests/test_grading_limits.py",
    "tests/hub/test_class_on_hub.py",
    "tests/test_exchange_flow.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Collect :data:`LONGEST_FIRST`'s files first, in that order; the rest keep theirs."""
    rank = {path: n for n, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture
def table_line(record_property):
    """``table_line(table, line)``: a line of a table printed at the end of the run (see
    :func:`pytest_terminal_summary`), e.g. what each attack scored."""

    def add(table: str, line: str) -> None:
        record_property(f"table:{table}", line)

    return add


def pytest_terminal_summary(terminalreporter) -> None:
    """Print the tables tests filled with :func:`table_line`, so CI's log shows every attack's
    score and the graded class's figures without ``-s``. The lines travel in each test
    report's ``user_properties``, so lines from xdist workers reach this process too."""
    tables: dict[str, list[str]] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for key, line in getattr(report, "user_properties", ()):
                if isinstance(key, str) and key.startswith("table:"):
                    tables.setdefault(key[len("table:") :], []).append(str(line))
    for name, lines in tables.items():
        terminalreporter.write_sep("-", name)
        for line in dict.fromkeys(lines):  # in the order the tests ended
            terminalreporter.write_line(line)
