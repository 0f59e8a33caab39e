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

The kit every explorer builds from: :func:`stops_slider`, :func:`score_sliders` and
:func:`temperature_slider` make the recurring controls, :func:`scores_of` reads the score
sliders back, and :func:`one_of` checks a value against a control's options. Colours
come from :mod:`attnlab.plots.colours`, weight heatmaps from
:func:`attnlab.plots.heatmap.weights_heatmap`.
"""

from __future__ import annotations

import base64
import html
import io
import re
import traceback
from contextlib import contextmanager

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from attnlab.controls import Readout, SelectionSlider, Slider
from attnlab.live import LiveFigure
from attnlab.widget_lifetime import adopt

FALLBACK_TEXT = (
    "Here was the {name} explorer: sliders and a live figure. Its widgets are not live here.\n"
    "To bring it back, run this cell again (Shift+Enter) with the course open in JupyterLab "
    "(`./run.sh lab` in the attnlab folder), or Kernel > Restart Kernel and Run All Cells.\n"
    "Lesson 0 has a widget self-test that says what to fix."
)
# Roughly log-spaced, so the sharp end (T < 0.5) gets as many stops as the flat end.
TEMPERATURES = (
    0.05,
    0.06,
    0.08,
    0.1,
    0.12,
    0.15,
    0.2,
    0.25,
    0.3,
    0.4,
    0.5,
    0.6,
    0.8,
    1.0,
    1.2,
    1.5,
    2.0,
    2.5,
    3.0,
    4.0,
    5.0,
)
SLIDER_WIDTH = "330px"


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
    state : object
        What the last successful :meth:`compute` returned: a frozen dataclass of the
        explorer's module (e.g. :class:`attnlab.explorers.heatmap.HeatmapState`).
    """

    name = "explorer"
    figsize = (7.0, 3.2)
    dpi = 100
    #: Whether the page draws the moving artists as vector shapes (:mod:`attnlab.page_layer`)
    #: instead of the kernel drawing their pixels: set where that costs the kernel less per
    #: step (``python benchmarks/explorers.py`` prints both).
    page_draws_moving = False

    def __init__(self, **initial):
        self.controls = self.make_controls()
        for key, value in initial.items():
            self._control(key).value = value
        self.view = LiveFigure(self.figsize, self.dpi, self.page_draws_moving)
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
        adopt(self.widget)  # a new run of this cell closes the explorer its last run made
        self.update()

    # ----------------------------------------------------------------- to override
    def make_controls(self) -> dict:
        """Return the controls, a dict of name -> widget with a ``value``."""
        raise NotImplementedError

    def compute(self, **values):
        """Return everything the view shows, from the control values alone (a frozen dataclass)."""
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
            readout = self.describe(state)
            # Pixels and readout in one message: one painted frame. Where the page sets the
            # Readout model from that message, its value needs no message of its own.
            carried = self.view.render(readout, self.readout.model_id)
            self.readout.show(readout, carried=carried)  # what the kernel and later views read
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
        nbviewer show the figure as it was, and plain text says to re-run the cell. A lesson
        saved through the course's server saves there the picture the view last showed (its
        canvas' ``initial_png``), once: :func:`attnlab.save_hook.compact_pictures`.
        """
        self.view.widget.prepare_display()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        png = self.view.widget.initial_png
        if png:
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
        bundle["text/plain"] = FALLBACK_TEXT.format(name=self.name)
        return bundle

    def picture_alt(self) -> str:
        """What the explorer's picture shows, in words: its alt text where it is a picture.

        The explorer's name, the values its controls are at and the figure's own words
        (:func:`attnlab.plots.display.alt_text`: titles, axis labels, legends).

        Examples
        --------
        >>> from attnlab.explorers.temperature import TemperatureExplorer
        >>> TemperatureExplorer().picture_alt()[:48]
        'The temperature explorer at score of key 1 = 1.0'
        """
        from attnlab.plots.display import alt_text

        settings = ", ".join(
            f"{_plain_label(control.description)} = {_plain_label(_shown_value(control))}"
            for control in self.controls.values()
            if getattr(control, "description", "")
        )
        words = alt_text(self.figure).removeprefix("Figure: ").removeprefix("Figure.")
        head = f"The {self.name.replace('_', ' ')} explorer" + (
            f" at {settings}" if settings else ""
        )
        return f"{head}. Figure: {words}" if words else f"{head}."

    def _ipython_display_(self) -> None:
        """Show the bundle of :meth:`_repr_mimebundle_` with the picture's alt text as the
        ``image/png`` metadata (``{"alt": ...}``), which static renderers of a saved or built
        lesson (tools/build_site.py) use; JupyterLab shows the live widget."""
        from IPython.display import display

        bundle = self._repr_mimebundle_()
        metadata = {"image/png": {"alt": self.picture_alt()}} if "image/png" in bundle else {}
        display(bundle, raw=True, metadata=metadata)


def _shown_value(control) -> str:
    """A control's value as its slider shows it (a selection slider's label), else ``str``."""
    label = getattr(control, "label", None)
    return str(label) if isinstance(label, str) and label else str(control.value)


def _plain_label(text: str) -> str:
    """A control's label as plain words: HTML tags and entities out, spaces squeezed."""
    text = html.unescape(re.sub(r"<[^>]+>", "", str(text)))
    return " ".join(text.split())


def one_of(value, options, name: str):
    """The option that ``value`` equals, or a ValueError naming ``name`` and the options.

    What every explorer's pure function checks its choice arguments with. A bool never
    matches a number (Python has ``True == 1``), and a number matches the option it
    equals, so the option itself is returned (``4.0`` among ints gives ``4``).

    Parameters
    ----------
    value : object
    options : sequence
        The allowed values, e.g. a control's stops.
    name : str
        The argument's name, for the message.

    Returns
    -------
    object
        The element of ``options`` equal to ``value``.

    Raises
    ------
    ValueError
        If no option equals ``value``: "<name> must be one of [...]; got <value>".

    Examples
    --------
    >>> one_of(4.0, (1, 2, 4), "heads")
    4
    >>> one_of(True, (1, 2, 4), "heads")
    Traceback (most recent call last):
    ...
    ValueError: heads must be one of [1, 2, 4]; got True
    """
    for option in options:
        if _same(option, value):
            return option
    raise ValueError(f"{name} must be one of {list(options)}; got {value!r}")


def _same(option, value) -> bool:
    if isinstance(option, bool | np.bool_) != isinstance(value, bool | np.bool_):
        return False
    try:
        return bool(option == value)
    except (TypeError, ValueError):  # e.g. an array compared with a number
        return False


def stops_slider(
    stops, value, description: str, *, label=str, width: str = SLIDER_WIDTH, **kwargs
) -> SelectionSlider:
    """A slider over fixed ``stops``, each shown as ``label(stop)``, ``width`` wide.

    Examples
    --------
    >>> slider = stops_slider((1, 2, 4), 2, "head size d_k", label="{:,}".format)
    >>> slider.description, slider.value, slider.options
    ('head size d_k', 2, (('1', 1), ('2', 2), ('4', 4)))
    """
    return SelectionSlider(
        options=[(label(stop), stop) for stop in stops],
        value=value,
        description=description,
        layout=widgets.Layout(width=width),
        **kwargs,
    )


def temperature_slider() -> SelectionSlider:
    """The "temperature T" slider over :data:`TEMPERATURES`, starting at 1.

    Examples
    --------
    >>> slider = temperature_slider()
    >>> slider.description, slider.value, slider.options[0]
    ('temperature T', 1.0, ('0.05', 0.05))
    """
    return stops_slider(TEMPERATURES, 1.0, "temperature T", label="{:g}".format)


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
        layout=widgets.Layout(width=SLIDER_WIDTH),
    )


def score_sliders(scores, limits=(-5.0, 5.0)) -> dict:
    """``score_1`` … ``score_n``: one :func:`score_slider` per score, starting at ``scores``.

    Examples
    --------
    >>> sliders = score_sliders([1.0, -0.5])
    >>> list(sliders), sliders["score_2"].value
    (['score_1', 'score_2'], -0.5)
    """
    return {f"score_{j + 1}": score_slider(j, float(s), limits) for j, s in enumerate(scores)}


def scores_of(values: dict) -> list:
    """The values of the :func:`score_sliders`, ``score_1`` first (other keys are ignored).

    Examples
    --------
    >>> scores_of({"score_2": 0.5, "temperature": 1.0, "score_1": 2.0})
    [2.0, 0.5]
    """
    n = sum(key.startswith("score_") for key in values)
    return [values[f"score_{j + 1}"] for j in range(n)]


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
