"""Slider → painted frame latency of every explorer, measured in real JupyterLab (Chromium).

For every lesson ``notebooks/NN-*.ipynb``, every ``.attnlab-explorer`` and every slider in it,
the page records ``performance.now()`` at the key press (capture-phase keydown), when new
pixels reach the explorer's figure (the first ``putImageData`` into its
``canvas.attnlab-figure``), every later change of the step in the explorer (more pixels, the
readout's new text, an error; a DOM mutation or a draw), and the end of the frame that painted
the *last* of them (a task posted from the next ``requestAnimationFrame`` after that change
runs once that frame's style, layout and paint are done). A step is over once the kernel has
reported idle for the slider's message and nothing in the explorer has changed for 150 ms;
its time is key press → that last painted frame. Steps go round-robin over an explorer's
sliders, ``--steps`` per explorer per run, after one unmeasured warm-up step per slider.

The breakdown splits each step using the kernel websocket messages the page records and the
kernel's own message timestamps (same machine, same clock); the parts add up to the total:

    send      keydown → the widget message leaves the page
    →kernel   page → server → kernel starts handling it (its "busy" status)
    kernel    kernel handling until it sends the new pixels (compute, draw, diff)
    →page     kernel → server → page receives the pixel message (includes the transfer)
    widget    page receives the message → the first putImageData into the canvas
    load      (an ``<img>`` figure only: new src → load event; 0 for a canvas)
    decode    (an ``<img>`` figure only: load → decoded; 0 for a canvas)
    →last     new pixels → the step's last change (usually the readout's text), 0 if the
              pixels came last
    paint     the last change → the end of the frame that painted it

Bars (the course's targets): per explorer, median ≤ 25 ms and p90 ≤ 35 ms. The summary gives
each explorer's verdict, what changed last in its steps, and one overall "bars: ..." line.

Responsiveness while dragging fast: after the timed steps, 20 presses on the explorer's first
slider, one every ~12 ms (Playwright's own round trip can stretch that; the mean interval is
printed), turning back at the slider's ends so each press moves it. ipywidgets sends one value
at a time and keeps only the newest meanwhile; the burst is over when the value last sent is
the one the slider shows, the kernel is idle after it and the explorer has been still for
300 ms. Printed: last press → the painted frame of the last change, against a 100 ms bar.

Per lesson it also prints the time from clicking Run > Run All Cells to every explorer's figure
showing its first picture (the first draw into its canvas), against a 3 s target.

The floor, measured first in the same run: a minimal explorer (``FLOOR_CELL``, written into the
server's folder as ``FLOOR_NOTEBOOK``) built from the same parts as the course's (attnlab's
``Explorer``, slider, figure canvas and readout) whose one slider moves one dot and rewrites a
one-line readout. Its steps cost the kernel well under a millisecond and send a few hundred
pixels, so its time is what every step pays before an explorer does any work: the key press,
the trip through JupyterLab, Jupyter Server and the kernel's message loop, and the wait for the
next painted frame. Each explorer's summary then gives its own share: its median minus the
floor's median, against one frame (16.7 ms at 60 Hz), which is what "a slider step inside one
frame budget" asks of the part the course controls.

Usage: ``python benchmarks/latency.py [--steps 20] [--runs 3] [--lesson SUBSTRING]``.
It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS / "browser"), str(TESTS)]  # the browser harness and tests/processes.py

import lab_harness as lab  # noqa: E402

MEDIAN_BAR_MS = 25.0
P90_BAR_MS = 35.0
BURST_PRESSES = 20
BURST_INTERVAL_MS = 12.0  # a held arrow key's auto-repeat, or a fast drag
BURST_BAR_MS = 100.0
RUN_ALL_BAR_S = 3.0
FRAME_MS = 1000 / 60  # one frame at 60 Hz: the budget for an explorer's own share of a step
FLOOR_NOTEBOOK = "floor-minimal-explorer.ipynb"
FLOOR_CELL = '''\
from attnlab.controls import Slider
from attnlab.explorers import Explorer


class FloorExplorer(Explorer):
    """One slider moves one dot and rewrites one readout line: the least a step can do."""

    name = "floor"

    def make_controls(self):
        return {"x": Slider(value=0.5, min=0.0, max=1.0, step=0.05, description="x")}

    def compute(self, x):
        return x

    def build(self, figure):
        ax = figure.subplots()
        ax.set(xlim=(-0.05, 1.05), ylim=(-1.0, 1.0), title="floor: one moving dot")
        (dot,) = ax.plot([0.5], [0.0], "o", color="black")
        return dot

    def draw(self, dot, x):
        dot.set_xdata([x])

    def describe(self, x):
        return f"<div>x = <b>{x:.2f}</b></div>"


FloorExplorer()
'''
PARTS = [
    "frontend_send",
    "to_kernel",
    "kernel",
    "to_page",
    "widget_update",
    "load",
    "decode",
    "after_pixels",
    "paint",
]
PART_TITLES = [
    "send",
    "→kernel",
    "kernel",
    "→page",
    "widget",
    "load",
    "decode",
    "→last",
    "paint",
]


@dataclass
class Sample:
    """One measured step."""

    run: int
    slider: str
    total_ms: float
    parts: dict = field(default_factory=dict)
    last_kind: str = "figure"  # what changed last in the step: figure, readout, slider, other


@dataclass
class ExplorerResult:
    """All steps of one explorer in one lesson."""

    lesson: str
    name: str
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    burst: str = ""  # the burst line, see measure_burst


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile (inclusive method); the value itself for a single sample.

    >>> percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50)
    3.0
    """
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


class Stepper:
    """Presses keys on one explorer's sliders, going back and forth between their ends."""

    def __init__(self, page: lab.LessonPage, index: int, sliders: list[dict]) -> None:
        self.page, self.index, self.sliders = page, index, sliders
        self.forward = [True] * len(sliders)

    def label(self, slider: int) -> str:
        """The slider's description, or its position."""
        return self.sliders[slider]["label"] or f"slider {slider}"

    def step(self, slider: int) -> dict:
        """One key press on ``slider``; returns the page marks (see LessonPage.step)."""
        self.page.wait_quiet(self.index, quiet_ms=100)
        state = self.page.snapshot(self.index)["sliders"][slider]["handles"][0]
        key = lab.key_towards_free_side(state, self.forward[slider])
        self.forward[slider] = key == "ArrowRight"
        return self.page.step(self.index, slider, key)


def measure_explorer(
    page: lab.LessonPage,
    info: dict,
    steps: int,
    runs: int,
    clock: tuple[float, float],
    bursts: int = 0,
) -> ExplorerResult:
    """Warm up every slider once, time ``steps`` round-robin steps per run, then ``bursts``."""
    result = ExplorerResult(page.name, f"{info['name']}#{info['index']}")
    if not info["sliders"] or not info["hasFigure"]:
        result.failures.append("no slider or no figure: nothing to time")
        return result
    page.explorer(info["index"]).scroll_into_view_if_needed()
    stepper = Stepper(page, info["index"], info["sliders"])
    for slider in range(len(info["sliders"])):
        stepper.step(slider)
    for run in range(runs):
        for n in range(steps):
            slider = n % len(info["sliders"])
            marks = stepper.step(slider)
            if marks["outcome"] != "changed":
                result.failures.append(f"{stepper.label(slider)}: figure {marks['outcome']}")
                continue
            messages = page.messages_since(marks["key"])
            parts = lab.kernel_breakdown(marks, messages, *clock)
            total = marks["paint"] - marks["key"]
            sample = Sample(run, stepper.label(slider), total, parts, marks["lastKind"])
            result.samples.append(sample)
    if bursts:
        result.burst = measure_bursts(page, info["index"], stepper.label(0), bursts)
    return result


def measure_bursts(page: lab.LessonPage, index: int, label: str, bursts: int) -> str:
    """``bursts`` bursts (see :func:`measure_burst`): one burst's line, or their spread.

    One burst is one sample, and where its last press falls against the round trip in flight
    moves it by up to a step's time; ``--bursts`` gives the median of several.
    """
    lines, shown = [], []
    for _ in range(bursts):
        line, ms = measure_burst(page, index, label)
        lines.append(line)
        if ms is not None:
            shown.append(ms)
    if bursts == 1:
        return lines[0]
    unsettled = bursts - len(shown)
    if not shown:
        return f"{bursts} bursts on {label}: none settled ({lines[0]})"
    verdict = "met" if statistics.median(shown) <= BURST_BAR_MS else "NOT met"
    return (
        f"{bursts} bursts on {label}: last value shown after the last press median "
        f"{statistics.median(shown):.1f} ms, p90 {percentile(shown, 90):.1f} ms, "
        f"max {max(shown):.1f} ms (bar {BURST_BAR_MS:.0f} ms, median) {verdict}"
        + (f"; {unsettled} did not settle" if unsettled else "")
        + f"; each: {', '.join(f'{ms:.0f}' for ms in shown)}"
    )


def measure_burst(page: lab.LessonPage, index: int, label: str) -> tuple[str, float | None]:
    """20 quick key presses on the explorer's first slider: last press → final value painted.

    The burst is over when the value the page last sent for the slider is the value it shows
    (ipywidgets sends one message at a time and keeps only the newest value meanwhile), the
    kernel has reported idle for that message, and nothing changed for 300 ms; the time is
    from the last key press to the end of the frame that painted the last change. Returns
    the printed line and that time (None when the burst did not settle).
    """
    page.wait_quiet(index, quiet_ms=100)
    record = page.burst(index, 0, BURST_PRESSES, BURST_INTERVAL_MS)
    keys = record["keys"]
    if record["outcome"] != "settled" or not keys:
        line = f"burst on {label}: did not settle within {lab.STEP_S} s ({len(keys)} presses)"
        return line, None
    shown = record["paint"] - keys[-1]
    spread = keys[-1] - keys[0]
    verdict = "met" if shown <= BURST_BAR_MS else "NOT met"
    final = "" if record["drewFinal"] else " (the final value's picture needed no new pixels)"
    line = (
        f"burst on {label}: {len(keys)} presses, one every {spread / (len(keys) - 1):.0f} ms, "
        f"{record['sent']} values sent to "
        f"the kernel, last value shown {shown:.1f} ms after the last press "
        f"(bar {BURST_BAR_MS:.0f} ms) {verdict}{final}"
    )
    return line, shown


def run_all_drawn(page: lab.LessonPage, wait_s: float = 10.0) -> str:
    """Run All clicked → every explorer of the lesson shows its first picture, in seconds.

    Waits up to ``wait_s`` after Run All finished for explorers without a picture yet.
    """
    deadline = time.monotonic() + wait_s
    drawn = page.first_pictures()
    while any(d["at"] is None for d in drawn) and time.monotonic() < deadline:
        time.sleep(0.2)
        drawn = page.first_pictures()
    clicked = page.run_all_clicked_at
    label = f"{page.name}: Run All → all {len(drawn)} explorers drawn"
    missing = [d["name"] for d in drawn if d["at"] is None]
    if clicked is None:
        return f"{label}: NO MEASUREMENT (the Run All click was not seen)"
    if not drawn or missing:
        return f"{label}: NO MEASUREMENT (explorers without a picture: {missing or 'none found'})"
    seconds = (max(d["at"] for d in drawn) - clicked) / 1000
    verdict = "met" if seconds <= RUN_ALL_BAR_S else "NOT met"
    return f"{label}: {seconds:.2f} s (target {RUN_ALL_BAR_S:.0f} s) {verdict}"


def page_clock(page: lab.LessonPage) -> tuple[float, float]:
    """(performance.timeOrigin, median wall-clock offset) to map kernel dates to page time."""
    offsets = [page.clock_offset() for _ in range(15)]
    return page.time_origin(), statistics.median(offsets)


def write_floor_notebook(folder: Path) -> str:
    """Write the floor's notebook (one cell, :data:`FLOOR_CELL`) into ``folder``; its name."""
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOR_CELL)])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(notebook, folder / FLOOR_NOTEBOOK)
    return FLOOR_NOTEBOOK


def measure_lesson(
    browser,
    server: lab.LabServer,
    name: str,
    steps: int,
    runs: int,
    *,
    lesson: bool = True,
    bursts: int = 1,
) -> list:
    """Open one lesson (or, with ``lesson=False``, the floor), run all, time every explorer."""
    page = lab.LessonPage(browser, server, name)
    try:
        page.open()
        run = page.run_all()
        for problem in run.problems():
            print(f"  warning: {name}: {problem}", flush=True)
        if lesson:
            print(f"  {run_all_drawn(page)}", flush=True)
        clock = page_clock(page)
        results = []
        for info in page.explorers():
            print(f"  timing {name} / {info['name']} ...", flush=True)
            results.append(measure_explorer(page, info, steps, runs, clock, bursts))
        return results
    finally:
        page.close()


def part_medians(samples: list[Sample]) -> list[str]:
    """Median of each breakdown part over the samples that have one, formatted."""
    cells = []
    for part in PARTS:
        values = [s.parts[part] for s in samples if part in s.parts]
        cells.append(f"{statistics.median(values):7.1f}" if values else f"{'-':>7}")
    return cells


def print_table(
    results: list[ExplorerResult], runs: int, floor: ExplorerResult | None = None
) -> None:
    """Per-slider rows, then one verdict line per explorer and one overall line.

    With the ``floor``'s result, its rows come first, and every explorer's summary also
    gives its own share of a step (see :func:`share_line`).
    """
    columns = ["n", "median", "p90", "max"]
    header = f"{'lesson':<28} {'explorer':<22} {'slider':<16} " + " ".join(
        f"{c:>4}" if c == "n" else f"{c:>7}" for c in columns
    )
    breakdown = " ".join(f"{t:>7}" for t in PART_TITLES)
    print(f"\n{header} | {breakdown}   (ms; breakdown = medians)")
    print("-" * (len(header) + 3 + len(breakdown)))
    for result in ([floor] if floor else []) + results:
        by_slider = defaultdict(list)
        for sample in result.samples:
            by_slider[sample.slider].append(sample)
        for slider, samples in by_slider.items():
            totals = [s.total_ms for s in samples]
            print(
                f"{result.lesson:<28} {result.name:<22} {slider:<16} {len(totals):>4} "
                f"{statistics.median(totals):7.1f} {percentile(totals, 90):7.1f} "
                f"{max(totals):7.1f} | " + " ".join(part_medians(samples))
            )
    print()
    floor_ms = None
    if floor is not None and floor.samples:
        floor_ms = statistics.median(s.total_ms for s in floor.samples)
        totals = [s.total_ms for s in floor.samples]
        print(
            f"floor ({floor.name}, a minimal explorer: one slider moves one dot): "
            f"n={len(totals)} median={floor_ms:.1f} ms p90={percentile(totals, 90):.1f} ms"
        )
        if floor.burst:
            print(f"    {floor.burst}")
    elif floor is not None:
        print(f"floor: NO MEASUREMENT ({'; '.join(floor.failures[:3])})")
    for result in results:
        print(summary_line(result, runs))
        if floor_ms is not None and result.samples:
            print(f"    {share_line(result, floor_ms)}")
        if result.burst:
            print(f"    {result.burst}")
    print(overall_line(results))
    if floor_ms is not None:
        print(overall_share_line(results, floor_ms))


def meets_bars(totals: list[float]) -> bool:
    """Whether step times meet both bars: median <= 25 ms and p90 <= 35 ms.

    >>> meets_bars([20.0, 22.0, 24.0]), meets_bars([20.0, 22.0, 40.0]), meets_bars([])
    (True, False, False)
    """
    if not totals:
        return False
    return statistics.median(totals) <= MEDIAN_BAR_MS and percentile(totals, 90) <= P90_BAR_MS


def bars_text() -> str:
    """The bars, as printed in every verdict."""
    return f"median ≤ {MEDIAN_BAR_MS:.0f} ms and p90 ≤ {P90_BAR_MS:.0f} ms"


def summary_line(result: ExplorerResult, runs: int) -> str:
    """``lesson/explorer: n, median, p90, per-run medians, what changed last, verdict``."""
    label = f"{result.lesson} / {result.name}"
    totals = [s.total_ms for s in result.samples]
    if not totals:
        return f"{label}: NO MEASUREMENT ({'; '.join(result.failures[:3])})"
    per_run = [
        statistics.median([s.total_ms for s in result.samples if s.run == r])
        for r in range(runs)
        if any(s.run == r for s in result.samples)
    ]
    median, p90 = statistics.median(totals), percentile(totals, 90)
    verdict = "met" if meets_bars(totals) else "NOT met"
    failed = f", {len(result.failures)} step(s) without a new image" if result.failures else ""
    runs_text = ", ".join(f"{m:.1f}" for m in per_run)
    kinds = Counter(s.last_kind for s in result.samples)
    last = ", ".join(f"{kind} {count}" for kind, count in kinds.most_common())
    return (
        f"{label}: n={len(totals)} median={median:.1f} ms p90={p90:.1f} ms "
        f"per-run medians [{runs_text}] last change: {last}; bars ({bars_text()}) "
        f"{verdict}{failed}"
    )


def overall_line(results: list[ExplorerResult]) -> str:
    """``bars: ... met`` when every explorer meets both bars, else which ones do not."""
    missed = [
        f"{r.lesson} / {r.name}"
        for r in results
        if r.failures or not meets_bars([s.total_ms for s in r.samples])
    ]
    if not missed:
        return f"bars ({bars_text()} for every explorer): met by all {len(results)}"
    return (
        f"bars ({bars_text()} for every explorer): NOT met by {len(missed)} of "
        f"{len(results)}: {', '.join(missed)}"
    )


def own_share(result: ExplorerResult, floor_ms: float) -> float:
    """The explorer's median step time above the floor's median, in ms."""
    return statistics.median(s.total_ms for s in result.samples) - floor_ms


def share_line(result: ExplorerResult, floor_ms: float) -> str:
    """``own share: median − floor = x ms (one frame: 16.7 ms) inside / NOT inside``.

    >>> r = ExplorerResult("l", "e", [Sample(0, "s", 30.0), Sample(0, "s", 40.0)])
    >>> share_line(r, 24.0)
    'own share of a step: median 35.0 − floor 24.0 = 11.0 ms (one frame: 16.7 ms) inside'
    """
    median = statistics.median(s.total_ms for s in result.samples)
    share = own_share(result, floor_ms)
    verdict = "inside" if share <= FRAME_MS else "NOT inside"
    return (
        f"own share of a step: median {median:.1f} − floor {floor_ms:.1f} = {share:.1f} ms "
        f"(one frame: {FRAME_MS:.1f} ms) {verdict}"
    )


def overall_share_line(results: list[ExplorerResult], floor_ms: float) -> str:
    """Which explorers' own share of a step fits in one frame."""
    measured = [r for r in results if r.samples]
    over = [f"{r.lesson} / {r.name}" for r in measured if own_share(r, floor_ms) > FRAME_MS]
    label = (
        f"own share (median above the floor's {floor_ms:.1f} ms) ≤ one frame ({FRAME_MS:.1f} ms)"
    )
    if not over:
        return f"{label}: met by all {len(measured)}"
    return f"{label}: NOT met by {len(over)} of {len(measured)}: {', '.join(over)}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="steps per explorer per run")
    parser.add_argument("--runs", type=int, default=3, help="passes over each explorer")
    parser.add_argument("--lesson", default="", help="only lessons whose name contains this")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor explorer")
    parser.add_argument(
        "--bursts", type=int, default=1, help="bursts per explorer (their median is printed)"
    )
    args = parser.parse_args(argv)
    if args.steps < 1 or args.runs < 1 or args.bursts < 1:
        parser.error("--steps, --runs and --bursts must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure every explorer of every (selected) lesson and print the table."""
    args = parse_args(argv)
    if not lab.chromium_available():
        print(f"no Chromium at {lab.CHROMIUM}: apt-get install chromium", file=sys.stderr)
        return 2
    lessons = [p.name for p in lab.discover_lessons() if args.lesson in p.name]
    if not lessons:
        print(f"no {lab.LESSON_GLOB} lessons in {lab.notebook_dir()}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    results: list[ExplorerResult] = []
    floor = None
    with lab.LabServer(lab.notebook_dir()) as server, sync_playwright() as playwright:
        browser = lab.launch_chromium(playwright)
        try:
            if not args.no_floor:
                name = write_floor_notebook(server.root_dir)
                floor_results = measure_lesson(
                    browser, server, name, args.steps, args.runs, lesson=False, bursts=args.bursts
                )
                floor = floor_results[0] if floor_results else ExplorerResult(name, "floor")
            for name in lessons:
                results += measure_lesson(
                    browser, server, name, args.steps, args.runs, bursts=args.bursts
                )
        finally:
            browser.close()
    print_table(results, args.runs, floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
