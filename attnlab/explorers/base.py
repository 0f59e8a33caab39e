"""What every explorer shares: controls, a pure computation, and a view updated in place.

An explorer is three things:

* ``controls`` — accessible sliders, dropdowns and toggles (:mod:`attnlab.controls`)
  keyed by name;
* ``compute(**values)`` — a pure function of the control values that returns
  everything the view shows (no drawing, so it is easy to test);
* a view — ``build(figure)`` makes the artists once, and ``draw(artists, state)``
  changes them in place (``set_data``, ``set_height``, ``set_text``).

Moving a slider, or setting ``explorer.controls[name].value`` from code, runs the
same ``observe`` handler. If it raises, the error is shown in the explorer and
kept in ``last_error``; it is never swallowed.
"""

from __future__ import annotations

import base64
import html
import io
import traceback
from contextlib import contextmanager
from types import SimpleNamespace

import ipywidgets as widgets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attnlab.controls import Readout, Slider
from attnlab.live import LiveFigure

FALLBACK_TEXT = (
    "Here was the {name} explorer: sliders and a live figure. Its widgets are not live here.\n"
    "To bring it back, run this cell again (Shift+Enter) with the course open in JupyterLab "
    "(`./run.sh lab` in the attnlab folder), or Kernel > Restart Kernel and Run All Cells.\n"
    "Lesson 0 has a widget self-test that says what to fix."
)


class Explorer:
    """Base class of the course's interactive explorers.

    Subclasses set ``name``, ``figsize`` and implement :meth:`make_controls`,
    :meth:`compute`, :meth:`build`, :meth:`draw` and optionally :meth:`describe`.
    Display an explorer by leaving it as the last expression of a cell.

    Attributes
    ----------
    controls : dict of str to attnlab.controls.Control
        Sliders, dropdowns, toggles (see :mod:`attnlab.controls`), each with ``value``.
    view : LiveFigure
        The figure; ``view.widget`` is the canvas widget that shows it.
    readout : attnlab.controls.Readout
        Numbers that go with the figure (class ``attnlab-readout``), announced by screen
        readers when they change (a polite live region).
    error : ipywidgets.HTML
        Empty, unless an update raised (class ``attnlab-error``).
    last_error : Exception or None
    state : SimpleNamespace
        What the last successful :meth:`compute` returned.
    """

    name = "explorer"
    figsize = (7.0, 3.2)
    dpi = 100

    def __init__(self, **initial):
        self.controls = self.make_controls()
        for key, value in initial.items():
            self._control(key).value = value
        self.view = LiveFigure(figsize=self.figsize, dpi=self.dpi)
        self.artists = self.build(self.view.figure)
        self.view.set_moving(self.artists)
        self.view.widget.alt = f"figure of the {self.name} explorer"
        self.readout = Readout().add_class("attnlab-readout")  # a polite live region
        self.error = widgets.HTML().add_class("attnlab-error")
        self.last_error = None
        self.state = None
        self._holding = False
        for control in self.controls.values():
            without_echo(control)
            control.observe(self._on_change, names="value")
        self.widget = self.layout()
        self.widget.add_class("attnlab-explorer")
        self.widget.add_class(f"attnlab-explorer-{self.name}")
        self.update()

    # ----------------------------------------------------------------- to override
    def make_controls(self) -> dict:
        """Return the controls, a dict of name -> widget with a ``value``."""
        raise NotImplementedError

    def compute(self, **values) -> SimpleNamespace:
        """Return everything the view shows, from the control values alone."""
        raise NotImplementedError

    def build(self, figure: Figure):
        """Draw the static parts on ``figure``; return the moving artists (any nesting)."""
        raise NotImplementedError

    def draw(self, artists, state) -> None:
        """Change the moving ``artists`` in place to show ``state``."""
        raise NotImplementedError

    def describe(self, state) -> str:
        """HTML for the readout under the figure."""
        return ""

    def layout(self) -> widgets.Box:
        """Arrange controls, figure, readout and error area."""
        controls = widgets.VBox(list(self.controls.values()))
        return widgets.VBox([controls, self.view.widget, self.readout, self.error])

    # ----------------------------------------------------------------- machinery
    @property
    def values(self) -> dict:
        """The current control values, by name."""
        return {key: control.value for key, control in self.controls.items()}

    def update(self) -> None:
        """Recompute from the controls and redraw; show any error instead of raising."""
        try:
            state = self.compute(**self.values)
            self.draw(self.artists, state)
            self.view.render()
            self.readout.value = self.describe(state)
        except Exception as exc:  # shown to the learner, kept for tests
            self.last_error = exc
            self.error.value = format_error(exc)
            return
        self.state = state
        self.last_error = None
        if self.error.value:
            self.error.value = ""

    def set(self, **values) -> None:
        """Set several controls at once and redraw once, as a learner's slider moves would."""
        with self.hold():
            for key, value in values.items():
                self._control(key).value = value
        self.update()

    @contextmanager
    def hold(self):
        """Suspend redraws while several controls change."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False

    def replot(self, **values) -> bytes:
        """The same figure built from scratch, as PNG (the slow path, for comparison)."""
        state = self.compute(**{**self.values, **values})
        figure = Figure(figsize=self.figsize, dpi=self.dpi, layout="constrained")
        FigureCanvasAgg(figure)
        self.draw(self.build(figure), state)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        return buffer.getvalue()

    def save(self, path, dpi=200) -> None:
        """Save the current figure, e.g. for slides."""
        self.view.figure.savefig(path, dpi=dpi)
        self.view.invalidate()

    @property
    def figure(self) -> Figure:
        """The matplotlib figure behind the explorer."""
        return self.view.figure

    def _control(self, key):
        if key not in self.controls:
            raise ValueError(
                f"{type(self).__name__} has no control {key!r}; it has {sorted(self.controls)}"
            )
        return self.controls[key]

    def _on_change(self, change) -> None:
        if not self._holding:
            self.update()

    def _repr_mimebundle_(self, **kwargs):
        """The widget view, with the figure as PNG and a note for where widgets are not live.

        JupyterLab shows the widget; a saved notebook keeps the PNG too, so GitHub and
        nbviewer show the figure as it was, and plain text says to re-run the cell.
        """
        self.view.widget.prepare_display()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        png = self.view.widget.initial_png
        if png:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        bundle["text/plain"] = FALLBACK_TEXT.format(name=self.name)
        return bundle


def score_slider(key: int, value: float, limits=(-5.0, 5.0)) -> Slider:
    """The slider for one key's score, "score of key <key + 1>", in steps of 0.1.

    Examples
    --------
    >>> slider = score_slider(0, 1.0)
    >>> slider.description, slider.min, slider.max, slider.step, slider.text
    ('score of key 1', -5.0, 5.0, 0.1, '1.0')
    """
    low, high = limits
    return Slider(
        value=value,
        min=low,
        max=high,
        step=0.1,
        description=f"score of key {key + 1}",
        layout=widgets.Layout(width="330px"),
    )


def without_echo(control: widgets.Widget) -> None:
    """Stop ipywidgets from echoing this control's moves back to the browser.

    ipywidgets 8 answers every change the browser sends with an ``echo_update`` message,
    sent *before* the explorer's own update, so the browser re-renders the slider before the
    new pixels can arrive; on this machine that cost 8-15 ms of each slider step
    (``benchmarks/latency.py``). The echo keeps several browser windows open on one kernel in
    step; without it a second window shows the new figure but not the moved slider. Only
    this control changes: traitlets reads ``_<trait>_metadata`` on the instance first.

    Examples
    --------
    >>> slider = widgets.FloatSlider()
    >>> without_echo(slider)
    >>> slider.trait_metadata("value", "echo_update", True), widgets.FloatSlider().trait_metadata(
    ...     "value", "echo_update", True)
    (False, True)
    """
    for name in ("value", "index"):
        if control.has_trait(name):
            setattr(control, f"_{name}_metadata", {"echo_update": False})


def format_error(exc: BaseException) -> str:
    """HTML that shows an exception plainly, with the traceback folded away."""
    summary = html.escape(f"{type(exc).__name__}: {exc}")
    details = html.escape("".join(traceback.format_exception(exc)))
    return (
        '<div style="color:#a40000;border-left:4px solid #a40000;padding:4px 8px">'
        f"<b>This explorer hit an error</b> — {summary}"
        f"<details><summary>traceback</summary><pre>{details}</pre></details></div>"
    )
