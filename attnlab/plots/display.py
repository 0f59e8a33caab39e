"""How the course shows a static matplotlib figure: an image with alt text, drawn for the theme.

In a notebook a figure is shown by the inline backend (``plt.show()``, or the figure left open
at the end of a cell) as a bare ``image/png``, which JupyterLab and Notebook 7 put in an
``<img>`` without ``alt``: a screen reader says "image" and nothing more (axe's
``image-alt``). Importing :mod:`attnlab.plots` (every lesson that draws a static figure
imports one of its modules) calls :func:`install`, which gives IPython an ``text/html``
formatter for figures: the same PNG in an ``<img>`` whose ``alt`` is the figure's description,
which both front ends prefer to the bare PNG. The PNG stays in the output too (nbconvert,
other front ends), drawn once for both. A lesson saved through the course's server keeps the
PNG once, in the HTML, and the server puts the ``image/png`` back on load
(:func:`attnlab.save_hook.compact_pictures`); :data:`attnlab.save_hook.FIGURE_HTML` is the
HTML :func:`figure_html` writes, and must change with it.

The description is the one given with :func:`describe`, else one made from the figure's own
words (:func:`alt_text`: its title, each panel's title and axis labels), so every figure has
one without touching the lessons.

The theme: once an explorer's canvas has reported that the page is dark
(:func:`attnlab.figure_canvas.page_is_dark`), figures are drawn for a dark page, with the
restyling explorers use (:class:`attnlab.live.FigureTheme`: dark face, light text and axes,
data colours kept); before that, and on a light page, as matplotlib draws them (opaque white
face, dark text). A figure drawn for a dark page has the class ``attnlab-drawn-dark`` on its
``<img>``: when the page's theme is switched after a figure was drawn, the course's style
sheet (``attnlab/lab_custom/custom.css``) shows it inverted for the theme it was not drawn
for (issue 41: figures drawn before a switch to the dark theme stayed white blocks).
"""

from __future__ import annotations

import base64
import html
import re

from matplotlib.figure import Figure

__all__ = ["alt_text", "describe", "figure_html", "install"]

_ALT = "_attnlab_alt"
_PNG = "_attnlab_png"  # the PNG the html formatter drew, for the png formatter that follows


def describe(figure: Figure, text: str) -> Figure:
    """Give ``figure`` the alt text ``text`` (what a screen reader says for it); returns it.

    Examples
    --------
    >>> figure = describe(Figure(), "Bars of the softmax weights of four keys.")
    >>> alt_text(figure)
    'Bars of the softmax weights of four keys.'
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must be a non-empty string; got {text!r}")
    setattr(figure, _ALT, text.strip())
    return figure


def _plain(text: str) -> str:
    """Figure text as words: mathtext ``$...$`` without its markup, spaces squeezed.

    >>> _plain(r"raw score  $Q_i \\cdot K_j$")
    'raw score Q_i · K_j'
    """
    text = text.replace(r"\cdot", "·").replace(r"\top", "T").replace(r"\sqrt", "√")
    text = re.sub(r"\\(?:mathrm|mathbf|mathit|text)\{([^}]*)\}", r"\1", text)
    text = text.replace("$", "").replace("\\", "").replace("{", "").replace("}", "")
    return " ".join(text.split())


def alt_text(figure: Figure) -> str:
    """The figure's description: the one given with :func:`describe`, else its own words.

    Made from the figure's title and, for each panel, its title, axis labels and legend.

    Examples
    --------
    >>> figure = Figure()
    >>> ax = figure.subplots()
    >>> _ = ax.set_title("a query q and three keys"), ax.set_xlabel("x"), ax.set_ylabel("y")
    >>> _ = ax.plot([0, 1], label="$k_1$"), ax.legend()
    >>> alt_text(figure)
    'Figure: a query q and three keys (horizontal axis: x; vertical axis: y; legend: k_1).'
    >>> _ = ax.set_title("")
    >>> alt_text(figure)
    'Figure: horizontal axis: x; vertical axis: y; legend: k_1.'
    >>> alt_text(Figure())
    'Figure.'
    """
    given = getattr(figure, _ALT, None)
    if given:
        return given
    panels = []
    for axes in figure.get_axes():
        if not axes.get_visible() or axes.get_label() == "<colorbar>":
            continue
        title = _plain(f"{axes.get_title('left')} {axes.get_title()}")
        labels = [
            f"{side} axis: {_plain(label)}"
            for side, label in (("horizontal", axes.get_xlabel()), ("vertical", axes.get_ylabel()))
            if label.strip()
        ]
        legend = axes.get_legend()
        if legend is not None:
            keys = [_plain(t.get_text()) for t in legend.get_texts() if t.get_text().strip()]
            if keys:
                labels.append("legend: " + ", ".join(keys))
        if title and labels:
            words = f"{title} ({'; '.join(labels)})"
        else:
            words = title or "; ".join(labels)
        if words.strip():
            panels.append(words.strip())
    suptitle = figure.get_suptitle()
    head = _plain(suptitle)
    if len(panels) > 1:
        head = f"{head + ', ' if head else ''}{len(panels)} panels"
    text = "; ".join(p for p in [head, *panels] if p)
    return f"Figure: {text}." if text else "Figure."


def _draw_png(figure: Figure) -> bytes:
    """The PNG the inline backend would show (its print_figure options), for the page's theme."""
    from IPython.core.pylabtools import print_figure

    from attnlab.figure_canvas import page_is_dark
    from attnlab.live import FigureTheme

    try:
        from matplotlib_inline.config import InlineBackend

        options = dict(InlineBackend.instance().print_figure_kwargs)
    except Exception:  # pragma: no cover - no inline backend: IPython's own default
        options = {"bbox_inches": "tight"}
    if not page_is_dark():
        return print_figure(figure, "png", **options)
    theme = FigureTheme(figure)
    theme.apply(dark=True)
    try:
        return print_figure(figure, "png", **options)  # savefig facecolor "auto": the themed face
    finally:
        theme.apply(dark=False)


def figure_html(figure: Figure) -> str:
    """The figure as an ``<img>`` with its alt text (the PNG inline, as a data URL), in a
    ``jp-RenderedImage`` box as JupyterLab's own image outputs are.

    Examples
    --------
    >>> figure = Figure(figsize=(1, 1), dpi=20)
    >>> _ = figure.subplots().set_title("tiny")
    >>> figure_html(figure)[:84]
    '<div class="jp-RenderedImage"><img class="attnlab-static-figure" alt="Figure: tiny."'
    """
    from attnlab.figure_canvas import page_is_dark

    dark = " attnlab-drawn-dark" if page_is_dark() else ""  # the course's CSS reads it
    png = _draw_png(figure)
    setattr(figure, _PNG, png)
    data = base64.b64encode(png).decode("ascii")
    alt = html.escape(alt_text(figure), quote=True)
    return (  # in JupyterLab's image box, so it is laid out (and found) as its images are
        f'<div class="jp-RenderedImage"><img class="attnlab-static-figure{dark}" alt="{alt}" '
        f'src="data:image/png;base64,{data}" style="max-width: 100%; height: auto"></div>'
    )


def _png_for(figure: Figure) -> bytes:
    """The PNG the html formatter just drew for this display (else drawn now)."""
    png = getattr(figure, _PNG, None)
    if png is not None:
        setattr(figure, _PNG, None)
        return png
    return _draw_png(figure)


def install(shell=None) -> bool:
    """Show figures with alt text in this IPython kernel (see the module docstring).

    Returns False (and does nothing) outside IPython. Installing twice changes nothing.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is always there with Jupyter
            return False
        shell = get_ipython()
    if getattr(shell, "display_formatter", None) is None:
        return False
    # The inline backend, once loaded, sets the figure formatters afresh (IPython's
    # select_figure_formats drops every other): load it first, and set ours again before each
    # cell in case it runs again (``%config InlineBackend.figure_formats = ...``).
    import matplotlib.pyplot as plt

    plt._get_backend_mod()
    _register(shell)
    events = getattr(shell, "events", None)
    if events is not None and not getattr(shell, "_attnlab_figure_display", False):
        events.register("pre_execute", lambda: _register(shell))
        shell._attnlab_figure_display = True
    return True


def _register(shell) -> None:
    formatters = shell.display_formatter.formatters
    formatters["text/html"].for_type(Figure, figure_html)
    formatters["image/png"].for_type(Figure, _png_for)
