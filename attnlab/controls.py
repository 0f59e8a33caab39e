"""The explorers' controls: sliders, dropdowns, toggle buttons, checkboxes, buttons, readouts.

Each control is a small anywidget (the browser half is ``controls.js``, served from the
kernel, so nothing is fetched from the network) built on the browser's own form elements,
so it is accessible without extra work:

* every control has an accessible name: ``<input type="range">``, ``<select>`` and the
  checkbox have a ``<label for>``; toggle buttons are native radio buttons in a
  ``<fieldset>`` whose ``<legend>`` names the group; buttons carry their text;
* a slider's ``aria-valuetext`` is its readout as shown ("0.7", "64"), never float noise,
  because the value is rounded to the step in Python (:func:`snap`) and in the page;
* the keyboard works in JupyterLab and Notebook 7: arrow keys move a slider and the radio
  group, ↓/↑ change a dropdown, Space toggles the checkbox, Space and Enter press a button,
  and the notebook never takes those keys (the active cell does not move). Every other key
  reaches the notebook as from anywhere in the cell: Ctrl/Cmd+S saves, Shift+Enter runs the
  cell and moves on, and Escape leaves the control for command mode. ``controls.js`` puts
  ``data-lm-suppress-shortcuts`` (which tells Lumino, the toolkit of both front ends, to
  ignore a key press) on the focused element for the length of a key press it keeps, from a
  window listener that runs before Lumino's;
* every focusable element shows a 3 px focus ring in the theme's brand colour;
* :class:`Readout` is a polite live region (``role="status"``), so screen readers announce
  what changed;
* once the kernel behind a control is gone (restarted or stopped, or a lesson reopened from
  its saved widget state) the control is disabled, greyed, and its tooltip (and accessible
  description) says it is not live and to run the lesson's cells again: a slider that still
  moved left the figure and readout stale (issue 41).

The Python side mirrors ipywidgets where the course used it: every control has ``value``
(settable from code, firing ``observe(..., names="value")`` exactly as a move in the page
does) and ``description``; sliders have ``min``, ``max``, ``step``; choices have
``options`` (``(label, value)`` pairs) and ``index``. Moves made in the page are not echoed
back to the page (``echo_update=False``): the explorer's new pixels are the first answer.

Examples
--------
>>> slider = Slider(value=0.7, min=-5.0, max=5.0, step=0.1, description="score of key 1")
>>> slider.value = 0.7000000000000002          # float noise is rounded away
>>> slider.value, slider.text
(0.7, '0.7')
>>> choice = SelectionSlider(options=[("1", 1), ("8", 8), ("64", 64)], value=8,
...                          description="head size d_k")
>>> choice.index = 2                           # what a key press in the page does
>>> choice.value
64
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from pathlib import Path

import anywidget
import traitlets

__all__ = [
    "Button",
    "Checkbox",
    "Choice",
    "Control",
    "Dropdown",
    "Readout",
    "SelectionSlider",
    "Slider",
    "ToggleButtons",
    "decimals_of",
    "snap",
]

_ESM = Path(__file__).with_name("controls.js")

#: The kit's style sheet (anywidget puts it in the page once per control class). Colours
#: come from the JupyterLab theme, so the controls follow light and dark themes.
CSS = """
.attnlab-control {
  --attnlab-accent: var(--jp-brand-color1, #1976d2);
  --attnlab-focus: var(--jp-brand-color1, #1976d2);
  display: flex; align-items: center; gap: 8px; box-sizing: border-box;
  margin: 2px 0; padding-right: 12px; min-height: 30px; width: 100%;
  font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-widgets-font-size, 13px);
  color: var(--jp-widgets-color, var(--jp-ui-font-color1, #1f1f1f));
}
.attnlab-control-label {
  flex: 0 0 auto; white-space: nowrap; width: var(--attnlab-label-width, auto);
}
.attnlab-range {
  flex: 1 1 auto; min-width: 80px; margin: 0 4px; height: 22px; accent-color: var(--attnlab-accent);
  background: transparent; cursor: pointer;
}
.attnlab-control-readout {
  flex: 0 0 auto; text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap;
}
.attnlab-select {
  font: inherit; color: inherit; background: var(--jp-layout-color1, #fff);
  border: 1px solid var(--jp-border-color1, #8a8a8a); border-radius: 2px; padding: 2px 4px;
  min-height: 26px; max-width: 100%;
}
.attnlab-toggle { border: 0; padding: 0; flex-wrap: wrap; }
.attnlab-toggle legend { float: left; padding: 0; margin-right: 8px; white-space: nowrap; }
.attnlab-toggle-options { display: inline-flex; flex-wrap: wrap; gap: 4px; }
.attnlab-toggle-option { position: relative; display: inline-flex; }
.attnlab-toggle-option input {
  position: absolute; opacity: 0; width: 1px; height: 1px; margin: 0; pointer-events: none;
}
.attnlab-toggle-option span, .attnlab-button {
  display: inline-block; padding: 3px 10px; min-height: 26px; box-sizing: border-box;
  border: 1px solid var(--jp-border-color1, #8a8a8a); border-radius: 2px; cursor: pointer;
  font: inherit; color: inherit; background: var(--jp-layout-color2, #eeeeee); white-space: nowrap;
}
.attnlab-toggle-option input:checked + span {
  background: var(--attnlab-accent); border-color: var(--attnlab-accent);
  color: var(--jp-ui-inverse-font-color0, #fff);
}
.attnlab-button:hover, .attnlab-toggle-option:hover span { border-color: var(--attnlab-accent); }
.attnlab-checkbox input {
  width: 16px; height: 16px; margin: 0; accent-color: var(--attnlab-accent);
}
/* The ring is 3 px wide and 1 px away, so it fits in the 2 px a control leaves above and below
   its 26 px box plus its 2 px margin: the first and last control of a scrolling box keep it whole.
   The button selector outranks JupyterLab's `.jp-ThemedContainer button:focus-visible` (a
   2 px ring drawn 1 px inside the button, hard to see). */
.attnlab-control :focus-visible,
.attnlab-control .attnlab-button:focus-visible,
.attnlab-toggle-option input:focus-visible + span {
  outline: 3px solid var(--attnlab-focus); outline-offset: 1px;
}
.attnlab-button-box { padding: 0 4px; }  /* room for the ring beside a button in a row */
.attnlab-control.attnlab-disabled { opacity: 0.55; }
.attnlab-control.attnlab-disabled * { cursor: default; }
/* After a kernel restart ipywidgets marks every widget "jupyter-widgets-disconnected" and
   puts a broken-link icon before each (its ::before): one beside every control, which broke
   the explorers' rows. The explorer's banner says what happened; the help panel says it
   in words, in place of its icon. */
.attnlab-explorer.jupyter-widgets-disconnected::before,
.attnlab-explorer .jupyter-widgets-disconnected::before,
.attnlab-help .jupyter-widgets-disconnected::before { content: none; display: none; }
.attnlab-help.jupyter-widgets-disconnected::before {
  content: "The kernel restarted, so these buttons no longer answer. "
    "To bring them back, use Run \\25B8  Run All Cells.";
  display: block; font: inherit; font-weight: 600; color: #3d2e00; background: #fff4ce;
  border-left: 3px solid #c99400; padding: 4px 8px; margin-bottom: 4px;
}
.attnlab-help.jupyter-widgets-disconnected > * { opacity: 0.55; }
"""


# --------------------------------------------------------------------------- numbers


def decimals_of(step: float) -> int:
    """How many decimals it takes to write multiples of ``step`` exactly (at most 10).

    Parameters
    ----------
    step : float
        A slider step, > 0.

    Examples
    --------
    >>> decimals_of(1.0), decimals_of(0.1), decimals_of(0.05), decimals_of(2.5)
    (0, 1, 2, 1)
    """
    for places in range(11):
        if math.isclose(round(step, places), step, rel_tol=1e-9, abs_tol=0.0):
            return places
    return 10


def snap(value: float, low: float, high: float, step: float) -> float:
    """``value`` moved to the nearest ``low + k * step`` and clipped to ``[low, high]``.

    The result is rounded to the decimals of ``step`` (and ``low``), so it prints as a
    learner expects: ``0.7``, never ``0.7000000000000002``; ``-0.0`` becomes ``0.0``.

    Parameters
    ----------
    value, low, high, step : float
        ``low < high`` and ``step > 0``.

    Returns
    -------
    float

    Examples
    --------
    >>> snap(0.73, -5.0, 5.0, 0.1)
    0.7
    >>> snap(-5.0 + 57 * 0.1, -5.0, 5.0, 0.1)
    0.7
    >>> snap(-0.01, -5.0, 5.0, 0.1)
    0.0
    >>> snap(9.0, 0.0, 2.3, 0.05)   # clipped; the top end need not be on the grid
    2.3
    """
    places = max_decimals(step, low)
    k = round((value - low) / step)
    snapped = round(low + k * step, places)
    return min(max(snapped, low), high) + 0.0


def _text_of(value: float, places: int) -> str:
    """A slider value as its readout shows it, with the true minus sign as the readouts use.

    >>> _text_of(0.7, 1), _text_of(30.0, 0), _text_of(-0.0, 2), _text_of(-1.5, 1)
    ('0.7', '30', '0.00', '−1.5')
    """
    text = f"{value + 0.0:.{places}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text.replace("-", "\N{MINUS SIGN}")


def _number(value, name: str) -> float:
    """``value`` as a finite float; ValueError naming ``name`` otherwise (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number; got {value!r} ({type(value).__name__})")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return number


# --------------------------------------------------------------------------- the controls


class _AnyButNone(traitlets.Any):
    """Any value the control's own validator accepts; None goes to that validator too."""

    allow_none = False


class Control(anywidget.AnyWidget):
    """Base class of the kit: a labelled control drawn by ``controls.js``.

    Attributes
    ----------
    description : str
        The visible label, which is also the accessible name. Must not be empty.
    disabled : bool
        Greyed out and skipped by the keyboard while True.
    label_width : str
        CSS width of the label ("" = as wide as its text), to line up several sliders.
    """

    _esm = _ESM
    _css = CSS
    kind = traitlets.Unicode("control", read_only=True).tag(sync=True)
    description = traitlets.Unicode("").tag(sync=True)
    disabled = traitlets.Bool(False).tag(sync=True)
    label_width = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *, description: str, **kwargs):
        if not isinstance(description, str) or not description.strip():
            raise ValueError(
                f"description must be a non-empty string (the control's accessible name); "
                f"got {description!r}"
            )
        super().__init__(description=description, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(description={self.description!r}, value={self.value!r})"


class Slider(Control):
    """A number slider: ``<input type="range">`` with a label and a readout.

    Parameters
    ----------
    value, min, max, step : float
        ``min < max``, ``step > 0``; ``value`` in ``[min, max]``, snapped to the step.
    description : str
        The label (the accessible name).
    **kwargs
        Other widget traits (``layout``, ``disabled``, ``label_width``).

    Attributes
    ----------
    value : float
        On the grid ``min + k * step`` (or ``max``), rounded to the step's decimals: every
        value set from code or by a move in the page is snapped to it. Only the starting
        ``value`` given here is kept as it is (an explorer may start at a computed example
        such as 1/√2); the readout shows it to the step's decimals.
    decimals : int
        Decimals the readout and ``aria-valuetext`` show, from the step.
    text : str
        The readout as shown in the page (read-only).

    Raises
    ------
    ValueError
        If a bound, the step or the value is not a finite number, ``min >= max``,
        ``step <= 0`` or the value lies outside ``[min, max]``.

    Examples
    --------
    >>> s = Slider(value=1.0, min=0.0, max=2.0, step=0.05, description="query length |q|")
    >>> s.value = 1.234
    >>> s.value, s.text
    (1.25, '1.25')
    >>> s.value = 3
    Traceback (most recent call last):
    ...
    ValueError: value must be between 0 and 2 for 'query length |q|'; got 3
    """

    kind = traitlets.Unicode("slider", read_only=True).tag(sync=True)
    value = _AnyButNone(0.0).tag(sync=True, echo_update=False)
    min = traitlets.Float(0.0).tag(sync=True)
    max = traitlets.Float(1.0).tag(sync=True)
    step = traitlets.Float(0.1).tag(sync=True)
    decimals = traitlets.Int(1).tag(sync=True)

    def __init__(self, *, value, min, max, step, description: str, **kwargs):  # noqa: A002
        low, high, size = (_number(v, n) for v, n in ((min, "min"), (max, "max"), (step, "step")))
        if not low < high:
            raise ValueError(f"min must be below max; got min={min!r}, max={max!r}")
        if not size > 0:
            raise ValueError(f"step must be > 0; got {step!r}")
        super().__init__(
            min=low,
            max=high,
            step=size,
            decimals=max_decimals(size, low),
            description=description,
            **kwargs,
        )
        self._start = True  # the start may be off the grid (e.g. 1/√2); every later value snaps
        self.value = value
        self._start = False

    @traitlets.validate("value")
    def _valid_value(self, proposal):
        number = _number(proposal["value"], "value")
        if not self.min - 1e-9 * abs(self.step) <= number <= self.max + 1e-9 * abs(self.step):
            raise ValueError(
                f"value must be between {self.min:g} and {self.max:g} for "
                f"{self.description!r}; got {proposal['value']!r}"
            )
        if getattr(self, "_start", False):
            return self._kind(round(number, 12) + 0.0)
        return self._kind(snap(number, self.min, self.max, self.step))

    _kind = staticmethod(float)

    @property
    def text(self) -> str:
        """The readout (and ``aria-valuetext``) for the current value."""
        return _text_of(self.value, self.decimals)

    def grid(self, max_steps: int = 200) -> list:
        """The values a learner can reach, in order, subsampled to at most ``max_steps``.

        Examples
        --------
        >>> Slider(value=0, min=0, max=1, step=0.25, description="p").grid()
        [0.0, 0.25, 0.5, 0.75, 1.0]
        """
        count = math.floor((self.max - self.min) / self.step + 1e-9) + 1
        picks = range(count)
        if count > max_steps:
            picks = sorted({round(i * (count - 1) / (max_steps - 1)) for i in range(max_steps)})
        return [
            self._kind(snap(self.min + i * self.step, self.min, self.max, self.step)) for i in picks
        ]


def max_decimals(step: float, low: float) -> int:
    """Decimals a slider starting at ``low`` in steps of ``step`` needs.

    >>> max_decimals(0.1, -5.0), max_decimals(1.0, 0.0), max_decimals(0.5, 0.25)
    (1, 0, 2)
    """
    return max(decimals_of(step), decimals_of(low))


class IntSlider(Slider):
    """A :class:`Slider` whose values are ints (``step`` a whole number, default 1).

    Examples
    --------
    >>> s = IntSlider(value=4, min=0, max=6, description="real length")
    >>> s.value = 5.2
    >>> s.value, type(s.value).__name__, s.text
    (5, 'int', '5')
    """

    _kind = staticmethod(int)

    def __init__(self, *, value, min, max, step=1, description: str, **kwargs):  # noqa: A002
        for number, name in ((min, "min"), (max, "max"), (step, "step")):
            if float(_number(number, name)) != int(number):
                raise ValueError(f"{name} of an IntSlider must be a whole number; got {number!r}")
        super().__init__(
            value=value, min=min, max=max, step=step, description=description, **kwargs
        )


class Choice(Control):
    """One of a fixed list of ``(label, value)`` options; the page moves ``index``."""

    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    index = traitlets.Int(0).tag(sync=True, echo_update=False)
    value = traitlets.Any(None)

    def __init__(self, *, options: Iterable, value=None, description: str, **kwargs):
        pairs = _labelled(options)
        labels = [label for label, _ in pairs]
        super().__init__(labels=labels, description=description, **kwargs)
        self._options = pairs
        self.index = 0 if value is None else self._index_of(value)
        self.value = pairs[self.index][1]

    @property
    def options(self) -> tuple:
        """The ``(label, value)`` pairs, in order (read-only)."""
        return self._options

    @property
    def text(self) -> str:
        """The label of the current option, as the page shows it."""
        return self._options[self.index][0]

    def _index_of(self, value) -> int:
        for i, (_, option) in enumerate(self._options):
            if _same(option, value):
                return i
        shown = ", ".join(repr(option) for _, option in self._options)
        raise ValueError(
            f"value must be one of the options of {self.description!r} ({shown}); got {value!r}"
        )

    @traitlets.validate("index")
    def _valid_index(self, proposal):
        index = proposal["value"]
        if not 0 <= index < len(self.labels):
            raise ValueError(
                f"index must be in 0..{len(self.labels) - 1} for {self.description!r}; "
                f"got {index!r}"
            )
        return index

    @traitlets.validate("value")
    def _valid_value(self, proposal):
        if not hasattr(self, "_options"):  # during __init__, before the options are set
            return proposal["value"]
        return self._options[self._index_of(proposal["value"])][1]

    @traitlets.observe("index")
    def _index_moved(self, change):
        if hasattr(self, "_options"):
            option = self._options[change["new"]][1]
            if not _same(option, self.value):
                self.value = option

    @traitlets.observe("value")
    def _value_set(self, change):
        index = self._index_of(change["new"])
        if index != self.index:
            self.index = index

    def grid(self, max_steps: int = 200) -> list:
        """Every option's value, in order (choices are never subsampled)."""
        return [value for _, value in self._options]


def _same(a, b) -> bool:
    """Equal, and both bools or both not (so ``True`` never matches the option ``1``)."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _labelled(options: Iterable) -> tuple:
    """``(label, value)`` pairs from pairs or bare values (label ``str(value)``); ValueError if
    empty or if two labels are the same.

    >>> _labelled(["a", ("two", 2)])
    (('a', 'a'), ('two', 2))
    """
    pairs = tuple(
        (str(o[0]), o[1]) if isinstance(o, tuple) and len(o) == 2 else (str(o), o) for o in options
    )
    if not pairs:
        raise ValueError("options must not be empty")
    labels = [label for label, _ in pairs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"options must have distinct labels; got {labels}")
    return pairs


class SelectionSlider(Choice):
    """A slider over a list of options (``<input type="range">`` over their positions).

    Parameters
    ----------
    options : sequence of (label, value) pairs or of values
        What the slider steps through; a bare value is labelled ``str(value)``.
    value : optional
        The starting option's value (default: the first).
    description : str
        The label (the accessible name).

    Attributes
    ----------
    value
        The current option's value (set it from code like a learner's move).
    index : int
        Its position in ``options``; the page moves this.

    Examples
    --------
    >>> s = SelectionSlider(options=[("0.05", 0.05), ("1", 1.0)], value=1.0,
    ...                     description="temperature T")
    >>> s.index, s.text, s.options[0]
    (1, '1', ('0.05', 0.05))
    >>> s.value = 0.5
    Traceback (most recent call last):
    ...
    ValueError: value must be one of the options of 'temperature T' (0.05, 1.0); got 0.5
    """

    kind = traitlets.Unicode("selection-slider", read_only=True).tag(sync=True)


class Dropdown(Choice):
    """A native ``<select>`` with a label; ↓/↑ change it when it has the focus.

    Examples
    --------
    >>> d = Dropdown(options=["float64", "float32"], value="float32", description="dtype")
    >>> d.index, d.value
    (1, 'float32')
    """

    kind = traitlets.Unicode("dropdown", read_only=True).tag(sync=True)


class ToggleButtons(Choice):
    """Options shown side by side as buttons: a native radio group named by a ``<legend>``.

    Tab reaches the group, the arrow keys pick an option (the browser's radio-group
    behaviour), and the picked option is filled with the accent colour.

    Examples
    --------
    >>> t = ToggleButtons(options=[("on", True), ("off", False)], value=False,
    ...                   description="scaling")
    >>> t.index, t.text
    (1, 'off')
    """

    kind = traitlets.Unicode("toggle-buttons", read_only=True).tag(sync=True)


class Checkbox(Control):
    """A native checkbox with a ``<label for>``; Space toggles it.

    Examples
    --------
    >>> c = Checkbox(value=True, description="divide by √d_k")
    >>> c.value = False
    >>> c.value
    False
    >>> c.value = "yes"
    Traceback (most recent call last):
    ...
    ValueError: value must be True or False for 'divide by √d_k'; got 'yes'
    """

    kind = traitlets.Unicode("checkbox", read_only=True).tag(sync=True)
    value = _AnyButNone(False).tag(sync=True, echo_update=False)

    def __init__(self, *, value: bool, description: str, **kwargs):
        super().__init__(description=description, **kwargs)
        self.value = value

    @traitlets.validate("value")
    def _valid_value(self, proposal):
        value = proposal["value"]
        if type(value).__name__ not in ("bool", "bool_"):
            raise ValueError(f"value must be True or False for {self.description!r}; got {value!r}")
        return bool(value)

    @property
    def text(self) -> str:
        """ "on" or "off"."""
        return "on" if self.value else "off"

    def grid(self, max_steps: int = 200) -> list:
        """Both values, the current one last."""
        return [not self.value, self.value]


class Button(Control):
    """A native ``<button>``; ``on_click`` callbacks run when it is pressed (or :meth:`click`).

    Examples
    --------
    >>> pressed = []
    >>> b = Button(description="reset")
    >>> b.on_click(lambda button: pressed.append(button.description))
    >>> b.click()
    >>> pressed
    ['reset']
    """

    kind = traitlets.Unicode("button", read_only=True).tag(sync=True)

    def __init__(self, *, description: str, **kwargs):
        super().__init__(description=description, **kwargs)
        self._handlers: list[Callable] = []
        self.on_msg(self._on_page_message)

    def __repr__(self) -> str:
        return f"Button(description={self.description!r})"

    def on_click(self, callback: Callable) -> None:
        """Call ``callback(button)`` on every press."""
        if not callable(callback):
            raise ValueError(f"callback must be callable; got {callback!r}")
        self._handlers.append(callback)

    def click(self) -> None:
        """Press the button from code, exactly as a click in the page does."""
        for handler in list(self._handlers):
            handler(self)

    def _on_page_message(self, widget, content, buffers) -> None:
        if isinstance(content, dict) and content.get("event") == "click":
            self.click()


class Readout(anywidget.AnyWidget):
    """HTML that screen readers announce when it changes: a polite live region.

    The page keeps one root element with ``role="status"`` and ``aria-live="polite"`` and
    replaces only its content, so every change is read out once the learner pauses.

    Parameters
    ----------
    value : str
        HTML to show.

    Examples
    --------
    >>> r = Readout("<b>T = 1</b>").add_class("attnlab-readout")
    >>> r.value, r._dom_classes
    ('<b>T = 1</b>', ('attnlab-readout',))
    """

    _esm = _ESM
    _css = CSS
    kind = traitlets.Unicode("readout", read_only=True).tag(sync=True)
    value = traitlets.Unicode("").tag(sync=True)

    def __init__(self, value: str = "", **kwargs):
        super().__init__(value=value, **kwargs)

    def show(self, html: str, carried: bool = False) -> None:
        """Set ``value`` to ``html``; with ``carried``, without sending it to the page.

        ``carried`` says the page already has this HTML in the model: an explorer's frame
        message carried it, and the figure canvas' model-level handler on the page
        (``initialize`` in ``figure_canvas.js``, which runs with or without a view) set the
        Readout model from it (:meth:`attnlab.figure_canvas.FigureCanvas.show`). The state
        update would then only repeat it (one kernel message per slider step, relayed by the
        server). The kernel's ``value`` is set either way, through ipywidgets' own property
        lock, the mechanism that keeps a value the page sent from being echoed back.

        Examples
        --------
        >>> r = Readout("<b>T = 1</b>")
        >>> sent = []
        >>> r._send = lambda msg, buffers=None: sent.append(msg["state"])
        >>> r.show("<b>T = 2</b>", carried=True)
        >>> r.value, sent
        ('<b>T = 2</b>', [])
        >>> r.show("<b>T = 3</b>")
        >>> r.value, sent
        ('<b>T = 3</b>', [{'value': '<b>T = 3</b>'}])
        """
        if not carried:
            self.value = html
            return
        with self._lock_property(value=html):
            self.value = html
