"""axe-core inside every explorer and help panel of every lesson, in JupyterLab at 1366 x 768.

For each lesson (discovered, so new lessons are covered): Run All as a learner does, then run
axe-core (every rule it runs by default: WCAG 2.x A/AA and best practices) on each
``.attnlab-explorer`` and ``.attnlab-help`` panel, and on the help panels once more after their
"Next hint" button was pressed (the hint text is part of the panel). The test fails on any
serious or critical violation, naming the rule, the nodes and their HTML.

Three things axe does not see are checked too: each control is named by exactly one label of
its own (duplicate ids make a ``<label for>`` name another control, which axe 4.12 accepts),
what a screen reader reads for each slider has no float noise ("0.7000000000000002"), and
each explorer's readout is a live region, announced when it changes.

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
        print(
            "\naxe-core violations inside explorers and help panels "
            f"(axe {axe_version()}, JupyterLab, 1366x768):"
        )
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


@pytest.fixture(params=LESSON_PARAMS)
def lesson(request, lesson_pages) -> lab.LessonPage:
    """The lesson run in JupyterLab at 1366 x 768 (the page every browser check shares)."""
    return lesson_pages("lab", request.param)


def test_no_serious_axe_violations(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """0 serious or critical axe violations inside every explorer and help panel."""
    name = lesson.name
    explorers = lesson.page.locator(a11y.EXPLORER).count()
    violations, passed = a11y.axe_results(lesson)
    if explorers and not {"label", "aria-input-field-name", "button-name"} & set(passed):
        pytest.fail(
            f"{name}: axe checked no control label inside the explorers (passed "
            f"rules: {sorted(passed)}): the test would see nothing",
            pytrace=False,
        )
    helps = press_next_hint(lesson)
    if helps:
        seen = {(v.rule, t) for v in violations for t in v.targets}
        for v in a11y.axe_violations(lesson, [a11y.HELP_PANEL]):
            v.targets = [t for t in v.targets if (v.rule, t) not in seen]
            if v.targets:
                violations.append(v)
    ROWS[Path(name).stem] = (explorers, helps, violations)
    blocking = [v.describe() for v in violations if v.impact in a11y.BLOCKING]
    a11y.fail_with(lesson, blocking, artifacts_dir, "axe")


def test_every_control_has_its_own_name(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """Each explorer control is named by exactly one label of its own; ids are unique."""
    problems = a11y.problems_in_every_explorer(lesson, a11y.name_problems)
    a11y.fail_with(lesson, problems, artifacts_dir, "control-names")


def test_slider_values_read_cleanly(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """What a screen reader says for each slider (aria-valuetext, else its value) has no float
    noise such as "0.7000000000000002", before and after one arrow key."""
    count = lesson.page.locator(a11y.EXPLORER).count()
    if not count:
        pytest.skip(f"{lesson.name} has no explorer")
    problems, read = [], 0
    for index in range(count):
        for control in a11y.controls(lesson, index):
            if control["kind"] != "slider":
                continue
            texts = [a11y.spoken_value(lesson, control["id"])]
            state = a11y.control_state(lesson, control["id"])
            a11y.press_control(lesson, index, control, lab.key_towards_free_side(state))
            texts.append(a11y.spoken_value(lesson, control["id"]))
            read += len(texts)
            problems += [
                f"slider {control['label']!r} reads {t!r}"
                for t in texts
                if a11y.FLOAT_NOISE.search(t or "") or not t
            ]
    assert read, f"{lesson.name}: no slider value was read in {count} explorer(s)"
    a11y.fail_with(lesson, problems, artifacts_dir, "slider-value-text")


def test_readouts_are_announced(lesson: lab.LessonPage, artifacts_dir: Path) -> None:
    """Each explorer's readout (the numbers under the figure) is in a polite live region, so a
    screen reader announces the new numbers after a control moves."""
    problems = a11y.problems_in_every_explorer(lesson, a11y.live_region_problems)
    a11y.fail_with(lesson, problems, artifacts_dir, "live-region")
