"""Lesson 0's environment checks: a widget round-trip test and an environment report.

:func:`widget_selftest` shows a slider and a small figure canvas (the kind of
widget every explorer draws its figure in). If widgets are live, the learner
sees "Widgets are working" and, after dragging the slider, a line written **by
the kernel** ("the kernel received 7 — the round trip works") and a bar, drawn
by the kernel, that grows with the slider; together they prove both directions
of the widget connection and that explorer figures can appear. If widgets are
not live, front ends show the plain-text fallback instead, which says so and
lists what to do.

:func:`environment_report` lists the versions that matter for the course.

The course map lesson 0 shows next is :func:`attnlab.exercises.progress.course_map`.
"""

from __future__ import annotations

import html
import platform
import sys
from dataclasses import dataclass
from importlib import metadata

import ipywidgets as widgets
import numpy as np

from attnlab.controls import IntSlider, Readout
from attnlab.figure_canvas import FigureCanvas

#: What front ends without live widgets show instead of the self-test.
NOT_LIVE_TEXT = """\
✗ Widgets are NOT live here. You are reading this plain text because this front end cannot
show Jupyter widgets, so the course's sliders and hint buttons will not work. To fix it:

  1. Open the course in JupyterLab 4 or newer: in a terminal, go to the attnlab folder and run
         ./run.sh lab
     (or use the Binder link in the README). Plain file viewers, GitHub's notebook preview
     and nbviewer never run widgets.
  2. Make sure ipywidgets and jupyterlab_widgets are installed in the SAME environment
     as JupyterLab:   pip install -r requirements.txt   then restart JupyterLab.
  3. In VS Code, install the "Jupyter" extension (by Microsoft) and pick the course's
     Python environment as the kernel.
  4. Reload the browser page, then Kernel > Restart Kernel and Run All Cells.
  5. If a cell says "Error displaying widget", the front-end widget extension is missing or
     does not match ipywidgets: pip install -r requirements.txt, then restart JupyterLab.

Everything else in the course (text, code, checks with their messages) still works
without widgets; `exercise.hint()` and `exercise.solution()` replace the hint buttons."""

#: What a page that shows outputs but runs no widgets shows (HTML ranks below the widget view,
#: so JupyterLab and Notebook 7 show the live test): the course's static site, nbconvert's HTML,
#: nbviewer. It is not a failure there: it says this page is static and how to run it live.
STATIC_HTML = (
    '<div class="attnlab-selftest-static" style="border: 2px solid #555; padding: 6px 12px; '
    'max-width: 720px"><p><b>This is a static page</b>, so the widget self-test does not run '
    "here: it shows a slider and a bar that the kernel redraws, and only a live notebook can do "
    "that. To run it, open this lesson live: with the <b>Binder</b> or <b>JupyterHub</b> link "
    "on this page, or on your own computer, in the attnlab folder: "
    "<code>./run.sh lab</code>. There, this cell says whether widgets work and what to fix "
    "if they do not.</p></div>"
)

LIVE_HEADLINE = (
    "<b>✓ Widgets are working</b> — this front end can show the course's sliders. "
    "Now drag the slider to test the round trip to the kernel: the line under it should "
    "answer, and the green bar (drawn by the kernel, the way explorer figures are) should "
    "grow. If a box says <i>Error displaying widget</i> instead of the bar, the course's "
    "figure canvas is missing from JupyterLab: run <code>pip install -r requirements.txt</code> "
    "in JupyterLab's environment, restart JupyterLab and reload the page."
)
BAR_SIZE = (24, 300)  # (height, width) in pixels
BAR_GREEN = (19, 94, 30, 255)
WAITING_TEXT = (
    "Waiting for you to drag the slider… (if dragging does not change this line, the kernel is "
    "not connected: use Kernel &gt; Restart Kernel and Run All Cells)."
)


def round_trip_message(value: int) -> str:
    """The line the kernel writes when the slider reaches ``value``.

    Examples
    --------
    >>> round_trip_message(7)
    '✓ The kernel received 7 — the round trip works.'
    """
    return f"✓ The kernel received {value} — the round trip works."


class WidgetSelfTest:
    """A slider whose moves the kernel answers; shows plain advice where widgets are not live.

    Attributes
    ----------
    slider : attnlab.controls.IntSlider
        Drag it, or click it and press the arrow keys (or set ``slider.value`` from code). It
        is the explorers' own slider, so the keys work in JupyterLab and Notebook 7 alike.
    reply : attnlab.controls.Readout
        Written by the kernel on every slider change; screen readers announce it.
    bar : attnlab.figure_canvas.FigureCanvas
        A bar the kernel redraws on every slider change, filled in proportion to the value.
    widget : ipywidgets.VBox
        Everything, with class ``attnlab-selftest``.
    received : list of int
        Every value the kernel has received, in order.

    Examples
    --------
    >>> test = WidgetSelfTest()
    >>> test.slider.value = 7               # what dragging the slider does
    >>> test.received, round_trip_message(7) in test.reply.value
    ([7], True)
    >>> int((test.bar.pixels[12, :, 0] == BAR_GREEN[0]).sum())  # 7/10 of 300 pixels
    210
    >>> "Widgets are NOT live here" in test._repr_mimebundle_()["text/plain"]
    True
    """

    def __init__(self):
        self.received: list[int] = []
        headline = widgets.HTML(LIVE_HEADLINE)
        self.slider = IntSlider(
            value=0,
            min=0,
            max=10,
            step=1,
            description="drag me",
            layout=widgets.Layout(width="330px"),
        )
        self.reply = Readout(WAITING_TEXT).add_class("attnlab-selftest-reply")
        self.bar = FigureCanvas(alt="a bar that grows with the slider")
        self.bar.show(bar_pixels(0, self.slider.max))
        self.slider.observe(self._on_change, names="value")
        # The layout given when the box is made: set afterwards, it left the box's first
        # layout model open, and saved with the lesson, under no widget (issue 29).
        layout = widgets.Layout(border="2px solid #135e1e", padding="6px 12px", max_width="720px")
        self.widget = widgets.VBox([headline, self.slider, self.reply, self.bar], layout=layout)
        self.widget.add_class("attnlab-selftest")

    def _on_change(self, change) -> None:
        value = int(change["new"])
        self.received.append(value)
        self.reply.value = f"<b style='color:#135e1e'>{html.escape(round_trip_message(value))}</b>"
        self.bar.show(bar_pixels(value, self.slider.max))

    def _repr_mimebundle_(self, **kwargs):
        self.bar.prepare_display()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = NOT_LIVE_TEXT
        bundle["text/html"] = STATIC_HTML
        return bundle


def bar_pixels(value: int, maximum: int) -> np.ndarray:
    """RGBA pixels of the self-test bar: green for ``value / maximum`` of the width, grey after.

    Returns
    -------
    ndarray of uint8, shape (24, 300, 4)

    Examples
    --------
    >>> bar = bar_pixels(5, 10)
    >>> bar.shape, bar[0, 0].tolist(), bar[0, -1].tolist()
    ((24, 300, 4), [19, 94, 30, 255], [221, 221, 221, 255])
    """
    height, width = BAR_SIZE
    pixels = np.full((height, width, 4), 221, dtype=np.uint8)  # (24, 300, 4) light grey
    pixels[..., 3] = 255
    pixels[:, : round(width * value / maximum)] = BAR_GREEN
    return pixels


def widget_selftest() -> WidgetSelfTest:
    """The widget self-test of lesson 0; leave it as the last line of a cell to show it.

    Returns
    -------
    WidgetSelfTest
        Shows "Widgets are working" and a slider where widgets are live, and
        :data:`NOT_LIVE_TEXT` where they are not.

    Examples
    --------
    >>> "attnlab-selftest" in widget_selftest().widget._dom_classes
    True
    """
    return WidgetSelfTest()


#: The course needs at least these versions (the course's requirements pin tested ones).
MINIMUM_VERSIONS = {
    "python": (3, 10),
    "numpy": (1, 26),
    "matplotlib": (3, 8),
    "ipywidgets": (8, 1),
    "anywidget": (0, 9),
    "attnlab": (0, 1),
}


@dataclass(frozen=True)
class EnvironmentReport:
    """Versions of what the course runs on, in the kernel's environment.

    Attributes
    ----------
    versions : dict of str to str
        ``"python"``, ``"numpy"``, ``"matplotlib"``, ``"ipywidgets"``, ``"anywidget"``,
        ``"attnlab"`` (and ``"jupyterlab_widgets"``), each a version string or ``"not installed"``.
    executable : str
        The Python running this kernel (tells which environment it is).
    problems : tuple of str
        Anything missing or older than :data:`MINIMUM_VERSIONS`.
    """

    versions: dict
    executable: str
    problems: tuple

    @property
    def ok(self) -> bool:
        """True when nothing is missing or too old."""
        return not self.problems

    def __str__(self) -> str:
        width = max(map(len, self.versions))
        lines = [f"{name:<{width}}  {version}" for name, version in self.versions.items()]
        lines.append(f"{'kernel':<{width}}  {self.executable}")
        lines += [f"PROBLEM: {p}" for p in self.problems] or ["All versions are recent enough."]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(name)}</td><td><code>{html.escape(version)}</code></td></tr>"
            for name, version in self.versions.items()
        )
        rows += f"<tr><td>kernel</td><td><code>{html.escape(self.executable)}</code></td></tr>"
        if self.problems:
            verdict = "".join(
                f"<p style='color:#8a1c00'>✗ {html.escape(p)}</p>" for p in self.problems
            )
        else:
            verdict = "<p style='color:#135e1e'>✓ All versions are recent enough.</p>"
        return f"<table class='attnlab-environment'>{rows}</table>{verdict}"


def environment_report() -> EnvironmentReport:
    """Versions of Python, numpy, matplotlib, ipywidgets and attnlab in this kernel.

    Returns
    -------
    EnvironmentReport
        Prints as a small table; ``report.versions`` is a dict and
        ``report.ok`` says whether everything meets :data:`MINIMUM_VERSIONS`.

    Notes
    -----
    The report describes the kernel. JupyterLab itself may run in another
    environment; widget problems usually mean ``jupyterlab_widgets`` is missing
    *there* (see :data:`NOT_LIVE_TEXT`).

    Examples
    --------
    >>> report = environment_report()
    >>> list(report.versions)[:5]
    ['python', 'numpy', 'matplotlib', 'ipywidgets', 'anywidget']
    >>> report.versions["python"] == platform.python_version()
    True
    """
    versions = {"python": platform.python_version()}
    packages = ("numpy", "matplotlib", "ipywidgets", "anywidget", "attnlab", "jupyterlab_widgets")
    for package in packages:
        versions[package] = installed_version(package)
    problems = tuple(
        problem
        for name, minimum in MINIMUM_VERSIONS.items()
        if (problem := version_problem(name, versions[name], minimum))
    )
    return EnvironmentReport(versions=versions, executable=sys.executable, problems=problems)


def installed_version(package: str) -> str:
    """The installed version of ``package``, or ``"not installed"``.

    Examples
    --------
    >>> installed_version("no-such-package-for-attnlab")
    'not installed'
    """
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        module = sys.modules.get(package)
        return str(getattr(module, "__version__", "not installed"))


def version_problem(name: str, version: str, minimum: tuple) -> str:
    """A sentence saying what is wrong with ``version``, or ``""`` when it is fine.

    Examples
    --------
    >>> version_problem("ipywidgets", "7.8.1", (8, 1))
    'ipywidgets 7.8.1 is older than 8.1: pip install -r requirements.txt'
    >>> version_problem("numpy", "2.4.0rc1", (1, 26))
    ''
    """
    wanted = ".".join(map(str, minimum))
    if version == "not installed":
        return (
            f"{name} is not installed in this kernel's environment: pip install -r requirements.txt"
        )
    if release(version) < minimum:
        return f"{name} {version} is older than {wanted}: pip install -r requirements.txt"
    return ""


def release(version: str) -> tuple:
    """The leading numbers of a version string, e.g. ``"2.4.0rc1"`` -> ``(2, 4, 0)``.

    Examples
    --------
    >>> release("2.4.0rc1"), release("3.11.2"), release("8.1")
    ((2, 4, 0), (3, 11, 2), (8, 1))
    """
    numbers = []
    for part in version.split("."):
        digits = ""
        for char in part:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(numbers)
