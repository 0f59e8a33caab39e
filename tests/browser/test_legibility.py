"""Every explorer legible on a laptop screen: JupyterLab at 1366 × 768 (issue 16).

For each lesson notebook (discovered, as in ``test_explorers_in_browser.py``), opened in a
1366 × 768 viewport with all cells run, every ``.attnlab-explorer``:

* fits the visible notebook height with a readout line to spare: controls, figure and
  readout are on one screen, so the readout never drops off while a slider is dragged;
* shows its figure canvas at its natural width (canvas client width == canvas width): a
  squeezed canvas shrinks every label in it;
* cuts no control label (no element with ``text-overflow: ellipsis`` whose text overflows);
* overflows nothing sideways (the explorer's content is as wide as its box);
* still fits, and overflows nothing, with each slider pressed to its end and its start
  (readouts grow: more rows, "overflow" in a table, a warning line).

A screenshot of every explorer, as it sits on the laptop screen, goes to
``<artifacts>/legibility/<lesson>--NN-<name>.png``, and the measurements (px) are printed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSONS = lab.discover_lessons()
NO_LESSONS = pytest.mark.skip(reason=f"no {lab.LESSON_GLOB} lessons in {lab.notebook_dir()}")
LESSON_PARAMS = [pytest.param(path.name, id=path.stem) for path in LESSONS] or [
    pytest.param(None, id="no-lessons", marks=NO_LESSONS)
]

# A readout can grow by a line while a slider moves (the longest readouts, measured in the
# kernel over pairs of control values, have one line more than at the start): keep room for it.
READOUT_SLACK_PX = 20

# What a learner sees of explorer i: its box, the visible notebook, its canvas and any text
# cut short by an ellipsis. The notebook scrolls in .jp-WindowedPanel-outer (JupyterLab 4).
MEASURE_JS = """i => {
  const root = document.querySelectorAll(".attnlab-explorer")[i];
  const scroller = root.closest(".jp-WindowedPanel-outer") || root.closest(".jp-Notebook");
  const canvas = root.querySelector("canvas.attnlab-figure");
  // A text cut by an ellipsis is wider, in its own font, than its box's content width.
  const ctx = document.createElement("canvas").getContext("2d");
  const textWidth = (el, style) => {
    ctx.font = style.font;
    return ctx.measureText(el.textContent.trim()).width;
  };
  const contentWidth = (el, style) =>
    el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const cut = [...root.querySelectorAll("*")].filter((el) => {
    const style = getComputedStyle(el);
    return style.textOverflow === "ellipsis" && el.textContent.trim()
      && el.offsetParent !== null && textWidth(el, style) > contentWidth(el, style) + 1;
  }).map((el) => el.textContent.trim());
  return {
    height: Math.ceil(root.getBoundingClientRect().height),
    width: Math.ceil(root.getBoundingClientRect().width),
    contentWidth: root.scrollWidth,
    visibleHeight: scroller ? scroller.clientHeight : window.innerHeight,
    canvas: canvas ? {natural: canvas.width, shown: canvas.clientWidth} : null,
    cut,
  };
}"""


@pytest.fixture(scope="module")
def shots_dir(artifacts_dir: Path) -> Path:
    """``<artifacts>/legibility``, emptied at the start of the module."""
    folder = artifacts_dir / "legibility"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(params=LESSON_PARAMS)
def laptop_lesson(request, lesson_pages) -> lab.LessonPage:
    """The lesson in a 1366 × 768 browser context with all cells run (the shared page)."""
    return lesson_pages("lab", request.param)


def legibility_problems(measured: dict) -> list[str]:
    """What a learner at 1366 × 768 would find wrong with one explorer's measurements.

    >>> ok = {"height": 600, "width": 900, "contentWidth": 900, "visibleHeight": 646,
    ...       "canvas": {"natural": 700, "shown": 700}, "cut": []}
    >>> legibility_problems(ok)
    []
    >>> for problem in legibility_problems(
    ...         {**ok, "height": 700, "canvas": {"natural": 960, "shown": 934}}):
    ...     print(problem)
    700 px tall: with 20 px for a longer readout, more than the 646 px of visible notebook
    canvas squeezed: drawn 934 px wide, its natural width is 960 px
    """
    problems = []
    if measured["height"] + READOUT_SLACK_PX > measured["visibleHeight"]:
        problems.append(
            f"{measured['height']} px tall: with {READOUT_SLACK_PX} px for a longer readout, "
            f"more than the {measured['visibleHeight']} px of visible notebook"
        )
    canvas = measured["canvas"]
    if canvas is None:
        problems.append("no canvas.attnlab-figure")
    elif canvas["shown"] != canvas["natural"]:
        problems.append(
            f"canvas squeezed: drawn {canvas['shown']} px wide, its natural width is "
            f"{canvas['natural']} px"
        )
    problems += [f"label cut short: {text!r}" for text in measured["cut"]]
    if measured["contentWidth"] > measured["width"] + 1:
        problems.append(
            f"content {measured['contentWidth']} px wide overflows its {measured['width']} px box"
        )
    return problems


def test_every_explorer_fits_a_laptop_screen(
    laptop_lesson: lab.LessonPage, shots_dir: Path
) -> None:
    """Controls + figure + readout on one 1366 × 768 screen, figure at natural width."""
    page = laptop_lesson
    explorers = page.explorers()
    if not explorers:
        pytest.skip(f"{page.name} has no .attnlab-explorer")
    stem = Path(page.name).stem
    problems = []
    for info in explorers:
        index = info["index"]
        root = page.explorer(index)
        root.scroll_into_view_if_needed()
        page.wait_quiet(index)
        root.evaluate("el => el.scrollIntoView({block: 'start'})")
        measured = page.js(MEASURE_JS, index)
        print(f"{stem} #{index} {info['name']}: {measured}")
        root.screenshot(path=str(shots_dir / f"{stem}--{index:02d}-{info['name']}.png"))
        label = f"explorer {info['name']!r} (#{index})"
        problems += [f"{label}: {p}" for p in legibility_problems(measured)]
        problems += [f"{label}: {p}" for p in extreme_problems(page, index, info)]
    if problems:
        shot = shots_dir / f"{stem}--FAILED-legibility.png"
        page.page.screenshot(path=str(shot))
        details = "\n".join(f"  - {p}" for p in problems)
        pytest.fail(f"{page.name} at 1366 × 768:\n{details}\n  screenshot: {shot}", pytrace=False)


def extreme_problems(page: lab.LessonPage, index: int, info: dict) -> list[str]:
    """Drive each slider to its end and its start (End, Home); the explorer must still fit.

    Readouts change with the settings (more rows, "overflow" in a table, a warning line):
    the box is measured after each key, as a learner would see it while dragging.
    """
    problems, tallest = [], 0
    for s in range(len(info["sliders"])):
        for key in ("End", "Home"):
            target = page.handle(index, s)
            target.focus()
            page.page.keyboard.press(key)
            page.wait_quiet(index)
            measured = page.js(MEASURE_JS, index)
            name = info["sliders"][s]["label"] or f"slider {s}"
            tallest = max(tallest, measured["height"])
            if measured["height"] > measured["visibleHeight"]:
                problems.append(
                    f"after {key} on {name!r}: {measured['height']} px tall, more than the "
                    f"{measured['visibleHeight']} px of visible notebook"
                )
            if measured["contentWidth"] > measured["width"] + 1:
                problems.append(f"after {key} on {name!r}: content overflows sideways")
    print(f"  {info['name']}: tallest with sliders at their ends {tallest} px")
    return problems


# Static figures (matplotlib inline output) as the page shows them: shrunk when wider than
# the output area, which shrinks every number in them.
STATIC_FIGURES_JS = """() => [...document.querySelectorAll(".jp-OutputArea-output img")]
  .filter((img) => img.offsetParent !== null && !img.closest(".attnlab-explorer"))
  .map((img) => {
    const cell = img.closest(".jp-Cell");
    const cells = [...document.querySelectorAll(".jp-Notebook .jp-Cell")];
    return {cell: cells.indexOf(cell), natural: img.naturalWidth, shown: img.clientWidth};
  })"""


def test_static_figures_are_shown_at_natural_size(laptop_lesson: lab.LessonPage) -> None:
    """No inline figure is shrunk to fit the 1366 × 768 notebook (lesson 4's was at 66 %)."""
    page = laptop_lesson
    figures = page.js(STATIC_FIGURES_JS)
    print(f"{page.name}: static figures {figures}")
    shrunk = [f for f in figures if f["shown"] < f["natural"] - 1]
    assert not shrunk, (
        f"{page.name}: figures shrunk to fit (cell index, natural px, shown px): "
        + ", ".join(f"cell {f['cell']}: {f['natural']} -> {f['shown']}" for f in shrunk)
    )
