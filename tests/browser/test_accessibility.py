"""axe-core inside every explorer and help panel of every lesson, in JupyterLab at 1366 x 768.

For each lesson (discovered, so new lessons are covered): Run All as a learner does, then run
axe-core (every rule it runs by default: WCAG 2.x A/AA and best practices) on each
``.attnlab-explorer`` and ``.attnlab-help`` panel, and on the help panels once more after their
"Next hint" button was pressed (the hint text is part of the panel). The test fails on any
serious or critical violation, naming the rule, the nodes and their HTML.

With ``-s`` the per-lesson table is printed at the end: serious + critical nodes by rule, and
the moderate and minor findings by rule (reported, not failed on).
The JupyterLab chrome around the outputs is not ours and is not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import a11y
import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSONS = lab.discover_lessons()
LESSON_PARAMS = [pytest.param(path.name, id=path.stem) for path in LESSONS] or [
    pytest.param(None, id="no-lessons", marks=pytest.mark.skip(reason="no lessons found"))
]
ROWS: dict[str, tuple[int, int, list[a11y.Violation]]] = {}


@pytest.fixture(scope="module", autouse=True)
def print_table() -> Iterator[None]:
    """Print the per-lesson axe table once every lesson has been checked (visible with -s)."""
    yield
    if ROWS:
        print("\naxe-core violations inside explorers and help panels "
              f"(axe {axe_version()}, JupyterLab, 1366x768):")
        print(a11y.format_axe_table(dict(sorted(ROWS.items()))))


def axe_version() -> str:
    """The axe-core version in the bundled script's banner (``/*! axe v4.12.1``)."""
    head = a11y.axe_script_path().read_text(encoding="utf-8")[:40]
    return head.split("axe v", 1)[1].split()[0] if "axe v" in head else "?"


def press_next_hint(page: lab.LessonPage) -> int:
    """Press every help panel's first button (Next hint) and wait for the hint; count pressed."""
    panels = page.page.locator(a11y.HELP_PANEL)
    for i in range(panels.count()):
        button = panels.nth(i).locator("button").first
        button.scroll_into_view_if_needed()
        button.click()
    if panels.count():
        page.page.wait_for_timeout(500)
        page.page.wait_for_function(
            "() => [...document.querySelectorAll('.attnlab-help')]"
            ".every(p => p.querySelector('.jp-OutputArea-output'))",
            timeout=20_000,
        )
    return panels.count()


@pytest.mark.parametrize("name", LESSON_PARAMS)
def test_no_serious_axe_violations(name, chromium, lab_server, artifacts_dir: Path) -> None:
    """0 serious or critical axe violations inside every explorer and help panel."""
    with a11y.opened_lesson(chromium, lab_server, name, artifacts_dir) as page:
        explorers = page.page.locator(a11y.EXPLORER).count()
        violations, passed = a11y.axe_results(page)
        if explorers and not {"label", "aria-input-field-name", "button-name"} & set(passed):
            pytest.fail(f"{name}: axe checked no control label inside the explorers (passed "
                        f"rules: {sorted(passed)}): the test would see nothing", pytrace=False)
        helps = press_next_hint(page)
        if helps:
            seen = {(v.rule, t) for v in violations for t in v.targets}
            for v in a11y.axe_violations(page, [a11y.HELP_PANEL]):
                v.targets = [t for t in v.targets if (v.rule, t) not in seen]
                if v.targets:
                    violations.append(v)
        ROWS[Path(name).stem] = (explorers, helps, violations)
        violations = [v for v in violations if v.impact in a11y.BLOCKING]
        if violations:
            shot = artifacts_dir / f"{Path(name).stem}--FAILED-axe.png"
            page.screenshot(shot)
            details = "\n".join(f"  - {v.describe()}" for v in violations)
            pytest.fail(
                f"{name}: serious/critical axe violations in explorers or help panels:\n"
                f"{details}\n  screenshot: {shot}",
                pytrace=False,
            )
