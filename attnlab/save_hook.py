"""A lesson saved without changes keeps its bytes: the server drops what the kernel wrote.

As soon as a kernel starts, JupyterLab fills the notebook's ``language_info`` with the
kernel's details (its Python patch release among them) and, with widget state saved (the
course's setting), adds an empty widget state. Saved without any change, lesson 0 went from
19,833 to 20,194 bytes and a learner's clone showed every opened lesson as modified.

This Jupyter Server extension registers a pre-save hook (Jupyter Server's own mechanism,
``ContentsManager.register_pre_save_hook``) that, for the course's lesson notebooks only,
keeps ``language_info`` to its ``name`` (as the lessons ship) and drops a widget state that
holds no widget. Widget state that holds widgets (a lesson that was run) is kept: that is
what lets a reopened lesson show its explorers' last frames.

The course's own widget code once, not once per model (issue 29, "saved lessons grow"): the
course's widgets are anywidgets, and anywidget keeps its whole front-end code (``_esm``) and
style sheet (``_css``) in every model's state, so JupyterLab saved them with every model
(lesson 0 after a Run All, measured with nbclient: 329,766 B, of which 169,296 B ``_esm`` and
39,250 B ``_css`` in 43 models). For lesson notebooks the pre-save hook replaces a model's
``_esm`` / ``_css`` that is byte for byte one of this package's assets (``ASSETS``) by a
marker naming the asset and its hash (``attnlab-asset:figure_canvas.js#sha256:<12 hex>``);
any other value (a learner's own anywidget, an edited copy) is left as it is.

Jupyter Server has no pre-load hook, so the extension wraps its contents manager's ``get``
(the one method every reader of a notebook model goes through: the contents API JupyterLab
and Notebook 7 load from, ``copy``) to expand markers back to the current asset text:
:func:`expand_assets`. It expands markers in any notebook, not only files named like a
lesson: only this hook writes them, and a lesson copied or renamed (``Duplicate``) keeps
them on disk. The file on disk (``/files/...``, a download) carries the markers.

Each picture once, not twice (issue 29, "a saved lesson at most twice its shipped size"). Two
kinds of picture were saved twice (lesson 6 after three Run Alls: 388,647 B, of which 72,400
B a static figure's second copy and 84,752 B an explorer frame's second copy):

* a static figure (:mod:`attnlab.plots.display`) is one output with the PNG twice: in its
  ``text/html`` (an ``<img>`` with the alt text, which JupyterLab and Notebook 7 show) and as
  ``image/png`` (for front ends and exports without HTML). On save, ``image/png`` is dropped
  when the output's HTML is exactly the course's figure HTML carrying the same PNG
  (:data:`FIGURE_HTML`); on load it is put back from the HTML. The file on disk still shows
  the figure, with its alt text, wherever HTML outputs are shown (nbviewer, nbconvert's HTML);
* an explorer's output holds its frame as ``image/png`` (for viewers without widgets: GitHub,
  nbviewer) and its figure canvas model holds the picture its view last showed in
  ``initial_png`` (a reopened lesson paints it). On save, the canvas' picture becomes the
  output's ``image/png`` (so the file shows the explorer as the learner left it, not as it
  was first drawn) and the model keeps a marker naming the output (``attnlab-frame:<id of
  the output's widget>``); on load the model gets the output's PNG back.

A widget output with a static form (an explorer's PNG) is saved with its view naming a model the
saved state does not hold, so nbconvert and nbviewer show the PNG instead of a widget they cannot
run (:func:`compact_views`, issue 40).

All are undone on load by the same ``get`` wrapper, so JupyterLab gets the notebook as it
sent it, and a lesson reopened and saved again without changes keeps its bytes.

A lesson opened and only read is not modified (issue 41). JupyterLab writes the kernel's
``language_info`` into the notebook once the kernel has started, and any change to the
metadata marks the document modified: every lesson showed as modified as soon as its kernel
was idle, and closing one the learner had only read asked "Save your work?". JupyterLab
writes nothing when the value is already there (``setMetadata`` compares first), so the same
``get`` wrapper gives a notebook whose ``language_info`` is the shipped ``{"name": "python"}``
(a lesson, or a copy of one) the ``language_info`` the course's kernel reports
(:func:`kernel_language_info`: ipykernel's own, for the server's Python, which is the
kernel's in ``./run.sh lab`` and the hub images); the pre-save hook keeps only its ``name``
again. A kernel on another Python reports another version, and JupyterLab then marks the
lesson modified as before. Running a cell changes the notebook (outputs, execution counts,
widget state) and marks it modified, as it should.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import hashlib
import inspect
import json
import re
from pathlib import Path, PurePosixPath

__all__ = [
    "LESSON_FILES",
    "assets",
    "asset_marker",
    "compact_assets",
    "compact_pictures",
    "compact_views",
    "expand_views",
    "expand_assets",
    "expand_pictures",
    "fill_language_info",
    "kernel_language_info",
    "tidy_lesson_metadata",
    "pre_save_hook",
    "expand_on_load",
]

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PNG = "image/png"
HTML = "text/html"


def _lesson_files() -> frozenset[str]:
    from attnlab.course import COURSE

    return frozenset(f"{entry.notebook}.ipynb" for entry in COURSE)


#: The file names of the course's lessons (``00-start-here.ipynb``, ...).
LESSON_FILES = _lesson_files()


def tidy_lesson_metadata(notebook: dict) -> dict:
    """Drop the metadata a kernel start writes into ``notebook`` (in place; also returned).

    ``language_info`` keeps only its ``name``; ``metadata.widgets`` goes when its widget
    state holds no widget. Anything else is left as it is.

    Examples
    --------
    >>> nb = {"metadata": {"language_info": {"name": "python", "version": "3.11.7"},
    ...       "widgets": {WIDGET_STATE: {"state": {}, "version_major": 2}}}}
    >>> tidy_lesson_metadata(nb)["metadata"]
    {'language_info': {'name': 'python'}}
    >>> kept = {"metadata": {"widgets": {WIDGET_STATE: {"state": {"m1": {}}}}}}
    >>> tidy_lesson_metadata(kept)["metadata"]["widgets"][WIDGET_STATE]
    {'state': {'m1': {}}}
    """
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return notebook
    info = metadata.get("language_info")
    if isinstance(info, dict) and "name" in info:
        metadata["language_info"] = {"name": info["name"]}
    widgets = metadata.get("widgets")
    if isinstance(widgets, dict):
        state = widgets.get(WIDGET_STATE)
        if set(widgets) == {WIDGET_STATE} and isinstance(state, dict) and not state.get("state"):
            del metadata["widgets"]
    return notebook


#: The widget state keys anywidget keeps its front-end code and style sheet in.
ASSET_KEYS = ("_esm", "_css")
MARKER_PREFIX = "attnlab-asset:"
_MARKER = re.compile(r"attnlab-asset:([A-Za-z0-9_.-]+)#sha256:([0-9a-f]{12})")


@functools.cache
def assets() -> dict[str, str]:
    """The package's own widget code, by asset name: what its anywidgets put in ``_esm``/``_css``.

    Read as anywidget reads them (UTF-8 text of the ``.js`` files; the controls' ``CSS``
    string), once per process: the installed package's current assets.
    """
    from attnlab import controls

    here = Path(__file__).resolve().parent
    return {
        "controls.js": (here / "controls.js").read_text(encoding="utf-8"),
        "controls.css": controls.CSS,
        "figure_canvas.js": (here / "figure_canvas.js").read_text(encoding="utf-8"),
    }


def asset_marker(name: str, text: str) -> str:
    """The short marker saved in place of asset ``name`` whose text is ``text``.

    >>> asset_marker("figure_canvas.js", "")
    'attnlab-asset:figure_canvas.js#sha256:e3b0c44298fc'
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{MARKER_PREFIX}{name}#sha256:{digest}"


@functools.cache
def _markers() -> dict[str, str]:
    return {text: asset_marker(name, text) for name, text in assets().items()}


def _model_states(notebook: dict):
    """Each widget model's ``state`` dict in ``notebook``'s saved widget state."""
    metadata = notebook.get("metadata")
    widgets = metadata.get("widgets") if isinstance(metadata, dict) else None
    saved = widgets.get(WIDGET_STATE) if isinstance(widgets, dict) else None
    models = saved.get("state") if isinstance(saved, dict) else None
    if not isinstance(models, dict):
        return
    for model in models.values():
        state = model.get("state") if isinstance(model, dict) else None
        if isinstance(state, dict):
            yield state


def compact_assets(notebook: dict) -> dict:
    """Replace each model's ``_esm``/``_css`` that is exactly a package asset by its marker.

    In place; also returned. A value that is not byte for byte one of :func:`assets` (a
    learner's own anywidget, an older or edited copy) is left as it is.
    """
    markers = _markers()
    for state in _model_states(notebook):
        for key in ASSET_KEYS:
            value = state.get(key)
            if isinstance(value, str) and value in markers:
                state[key] = markers[value]
    return notebook


def expand_assets(notebook: dict) -> dict:
    """Put the package's current asset text back in place of each marker (in place; returned).

    A marker whose hash differs from the current asset's (the package was updated since the
    lesson was saved) is expanded to the current asset all the same: the saved state only
    shows the explorers' last frames until the kernel runs the lesson again and re-creates
    every widget with the current code, and the older code is not kept anywhere. A marker
    naming no known asset, and every other value, is left as it is.
    """
    current = None
    for state in _model_states(notebook):
        for key in ASSET_KEYS:
            value = state.get(key)
            if not (isinstance(value, str) and value.startswith(MARKER_PREFIX)):
                continue
            match = _MARKER.fullmatch(value)
            if match is None:
                continue
            current = assets() if current is None else current
            if match.group(1) in current:
                state[key] = current[match.group(1)]
    return notebook


#: A static figure's HTML exactly as :func:`attnlab.plots.display.figure_html` writes it; the
#: group is the PNG (base64) it carries.
FIGURE_HTML = re.compile(
    r'<div class="jp-RenderedImage"><img class="attnlab-static-figure(?: attnlab-drawn-dark)?" '
    r'alt="[^"<>]*" '
    r'src="data:image/png;base64,([A-Za-z0-9+/]+={0,2})" '
    r'style="max-width: 100%; height: auto"></div>'
)
#: The course's figure canvas, as anywidget names it in a model's state.
CANVAS_ID = "attnlab.figure_canvas.FigureCanvas"
FRAME_KEY = "initial_png"
FRAME_MARKER_PREFIX = "attnlab-frame:"
_MODEL_REF = re.compile(r"IPY_MODEL_([0-9A-Za-z_-]+)")


def _text(value) -> str | None:
    """A mime bundle's text value (a string, or nbformat's list of lines) as one string."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    return None


def _rich_outputs(notebook: dict):
    """Each ``display_data`` / ``execute_result`` output's ``data`` dict, in notebook order."""
    cells = notebook.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else []:
            if not isinstance(output, dict):
                continue
            if output.get("output_type") not in ("display_data", "execute_result"):
                continue
            data = output.get("data")
            if isinstance(data, dict):
                yield data


def _figure_png(data: dict) -> str | None:
    """The PNG a course figure's HTML in ``data`` carries (base64), else None."""
    html = _text(data.get(HTML))
    match = FIGURE_HTML.fullmatch(html) if html is not None else None
    return match.group(1) if match else None


def _models(notebook: dict) -> dict:
    metadata = notebook.get("metadata")
    widgets = metadata.get("widgets") if isinstance(metadata, dict) else None
    saved = widgets.get(WIDGET_STATE) if isinstance(widgets, dict) else None
    models = saved.get("state") if isinstance(saved, dict) else None
    return models if isinstance(models, dict) else {}


def _view_id(data: dict) -> str | None:
    view = data.get(WIDGET_VIEW)
    model_id = view.get("model_id") if isinstance(view, dict) else None
    return model_id if isinstance(model_id, str) else None


def _canvases_under(root: str, models: dict) -> list[str]:
    """The course figure canvases in the widget tree under model ``root`` (children, layout,
    ... : every ``IPY_MODEL_`` reference in a state), in the order they are found."""
    found, seen, stack = [], set(), [root]
    while stack:
        model_id = stack.pop()
        model = models.get(model_id)
        if model_id in seen or not isinstance(model, dict):
            continue
        seen.add(model_id)
        state = model.get("state")
        if not isinstance(state, dict):
            continue
        if state.get("_anywidget_id") == CANVAS_ID:
            found.append(model_id)
        refs = _MODEL_REF.findall(json.dumps(state))
        stack.extend(reversed(refs))
    return found


def _frame_buffer(model: dict) -> str | None:
    """The canvas model's picture (base64 PNG): its only buffer, a non-empty ``initial_png``."""
    buffers = model.get("buffers")
    if not (isinstance(buffers, list) and len(buffers) == 1 and isinstance(buffers[0], dict)):
        return None
    buffer = buffers[0]
    if buffer.get("path") != [FRAME_KEY] or buffer.get("encoding") != "base64":
        return None
    data = buffer.get("data")
    return data if isinstance(data, str) and data else None


def compact_pictures(notebook: dict) -> dict:
    """Keep each picture once in ``notebook`` (in place; also returned). See the module docstring.

    A static figure's ``image/png`` goes when its HTML is the course's figure HTML with the
    same PNG. An explorer output's ``image/png`` becomes the picture its figure canvas model
    holds, and the model keeps a marker instead (only a course canvas whose only buffer is
    its picture, one per output; a canvas shown by two outputs goes with the first). Anything
    else is left as it is.

    Examples
    --------
    >>> png = "iVBORw0KGgo="
    >>> html = ('<div class="jp-RenderedImage"><img class="attnlab-static-figure" alt="A." '
    ...         f'src="data:image/png;base64,{png}" style="max-width: 100%; height: auto"></div>')
    >>> nb = {"cells": [{"outputs": [{"output_type": "display_data",
    ...       "data": {"text/html": html, "image/png": png, "text/plain": "<Figure>"}}]}]}
    >>> sorted(compact_pictures(nb)["cells"][0]["outputs"][0]["data"])
    ['text/html', 'text/plain']
    >>> expand_pictures(nb)["cells"][0]["outputs"][0]["data"]["image/png"] == png
    True
    """
    models = _models(notebook)
    framed: set[str] = set()
    for data in _rich_outputs(notebook):
        png = data.get(PNG)
        if not isinstance(png, str):
            continue
        if _figure_png(data) == png:
            del data[PNG]
            continue
        root = _view_id(data)
        if root is None or root in framed:
            continue
        canvases = _canvases_under(root, models)
        if len(canvases) != 1:
            continue
        model = models[canvases[0]]
        frame = _frame_buffer(model)
        if frame is None or FRAME_KEY in model["state"]:
            continue
        data[PNG] = frame
        del model["buffers"]
        model["state"][FRAME_KEY] = f"{FRAME_MARKER_PREFIX}{root}"
        framed.add(root)
    return notebook


def expand_pictures(notebook: dict) -> dict:
    """Undo :func:`compact_pictures` (in place; also returned).

    A course figure output without ``image/png`` gets it back from its HTML; a canvas model
    whose ``initial_png`` is a marker gets the PNG of the output it names back as its buffer.
    A marker naming no output with a PNG is left as it is (the view then paints nothing until
    the kernel sends a frame).
    """
    models = _models(notebook)
    frames: dict[str, str] = {}
    for data in _rich_outputs(notebook):
        png = data.get(PNG)
        if png is None:
            figure = _figure_png(data)
            if figure is not None:
                data[PNG] = figure
            continue
        root = _view_id(data)
        if root is not None and isinstance(png, str):
            frames.setdefault(root, png)
    for model in models.values():
        state = model.get("state") if isinstance(model, dict) else None
        marker = state.get(FRAME_KEY) if isinstance(state, dict) else None
        if not (isinstance(marker, str) and marker.startswith(FRAME_MARKER_PREFIX)):
            continue
        frame = frames.get(marker[len(FRAME_MARKER_PREFIX) :])
        if frame is None or "buffers" in model:
            continue
        del state[FRAME_KEY]
        model["buffers"] = [{"data": frame, "encoding": "base64", "path": [FRAME_KEY]}]
    return notebook


#: What a saved output's widget view names instead of its model (see :func:`compact_views`).
VIEW_MARKER_PREFIX = "attnlab-static:"
#: The static forms a course widget's output carries: an explorer's picture, a help panel's
#: hints, the self-test's note.
STATIC_FORMS = (PNG, HTML, "text/markdown")


def compact_views(notebook: dict) -> dict:
    """On disk, the static form of a widget output wins where the widget cannot run (in
    place; also returned). Issue 40.

    nbconvert (nbviewer) renders an output's widget view whenever the notebook's saved widget
    state holds its model, and so shows nothing where an explorer was (its scripts come from
    a CDN and know nothing of the course's canvas). A widget output that also carries a
    static form (:data:`STATIC_FORMS`) and whose model the state holds is saved with its view
    naming ``attnlab-static:<model id>``: nbconvert, finding no such model, shows the
    explorer's PNG (a help panel's hints, the self-test's note). :func:`expand_views` puts the
    id back on load, so JupyterLab gets the live widget as before.

    Examples
    --------
    >>> nb = {"metadata": {"widgets": {WIDGET_STATE: {"state": {"m1": {}}}}},
    ...       "cells": [{"outputs": [{"output_type": "display_data",
    ...       "data": {WIDGET_VIEW: {"model_id": "m1"}, "image/png": "iVBO"}}]}]}
    >>> compact_views(nb)["cells"][0]["outputs"][0]["data"][WIDGET_VIEW]
    {'model_id': 'attnlab-static:m1'}
    >>> expand_views(nb)["cells"][0]["outputs"][0]["data"][WIDGET_VIEW]
    {'model_id': 'm1'}
    """
    models = _models(notebook)
    for data in _rich_outputs(notebook):
        root = _view_id(data)
        if root in models and any(key in data for key in STATIC_FORMS):
            data[WIDGET_VIEW]["model_id"] = f"{VIEW_MARKER_PREFIX}{root}"
    return notebook


def expand_views(notebook: dict) -> dict:
    """Undo :func:`compact_views` (in place; also returned)."""
    for data in _rich_outputs(notebook):
        root = _view_id(data)
        if root is not None and root.startswith(VIEW_MARKER_PREFIX):
            data[WIDGET_VIEW]["model_id"] = root[len(VIEW_MARKER_PREFIX) :]
    return notebook


def pre_save_hook(model: dict, path: str, **kwargs) -> None:
    """Jupyter Server's pre-save hook: tidy a lesson notebook before it is written.

    Its metadata (:func:`tidy_lesson_metadata`), the course's widget code as markers
    (:func:`compact_assets`) and each picture once (:func:`compact_pictures`). Other files
    and notebooks (a learner's own) are not touched.
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    if PurePosixPath(path).name in LESSON_FILES:
        tidy_lesson_metadata(model["content"])
        compact_assets(model["content"])
        compact_pictures(model["content"])
        compact_views(model["content"])


#: False while ``trust_notebook`` runs: it signs what ``get`` returns, and the signature must be
#: that of the file on disk (markers included), which the server checks on every load. A
#: context variable, so a concurrent request's ``get`` (another asyncio task) still expands.
_EXPANDING = contextvars.ContextVar("attnlab_expanding", default=True)


@functools.cache
def kernel_language_info() -> dict | None:
    """The ``language_info`` the course's Python kernel reports (ipykernel's, for this Python),
    or None without ipykernel. A copy is what callers put in a notebook."""
    try:
        from ipykernel.ipkernel import IPythonKernel
    except ImportError:  # pragma: no cover - ipykernel comes with JupyterLab
        return None
    return json.loads(json.dumps(IPythonKernel.language_info))


def fill_language_info(notebook: dict) -> dict:
    """Give ``notebook`` the kernel's ``language_info`` if it has the shipped ``{"name":
    "python"}`` (in place; also returned). See the module docstring.

    Examples
    --------
    >>> nb = {"metadata": {"language_info": {"name": "python"}}}
    >>> fill_language_info(nb)["metadata"]["language_info"] == kernel_language_info()
    True
    >>> own = {"metadata": {"language_info": {"name": "R"}}}
    >>> fill_language_info(own)["metadata"]["language_info"]
    {'name': 'R'}
    """
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("language_info") != {"name": "python"}:
        return notebook
    info = kernel_language_info()
    if info is not None:
        metadata["language_info"] = copy.deepcopy(info)
    return notebook


def _expand_model(model):
    if (
        _EXPANDING.get()
        and isinstance(model, dict)
        and model.get("type") == "notebook"
        and isinstance(model.get("content"), dict)
    ):
        expand_assets(model["content"])
        expand_views(model["content"])
        expand_pictures(model["content"])
        fill_language_info(model["content"])
    return model


def expand_on_load(contents_manager) -> None:
    """Wrap ``contents_manager.get`` (on this instance) so notebook models come back expanded.

    Works for synchronous managers and asynchronous ones (the server's default,
    ``AsyncLargeFileManager``) alike, whatever their class: wrapping the instance, rather than
    configuring a subclass as ``ServerApp.contents_manager_class``, keeps a deployment's own
    contents manager choice. Wrapping twice is a no-op. ``trust_notebook`` (File ▸ Trust
    Notebook) is wrapped too, so that it signs the notebook as stored (with markers): the
    server checks a notebook's signature against the file on disk when it loads it.
    """
    if getattr(contents_manager, "_attnlab_expands_assets", False):
        return
    get = contents_manager.get

    if inspect.iscoroutinefunction(get):

        @functools.wraps(get)
        async def expanding_get(*args, **kwargs):
            return _expand_model(await get(*args, **kwargs))

    else:

        async def _awaited(result):
            return _expand_model(await result)

        @functools.wraps(get)
        def expanding_get(*args, **kwargs):
            result = get(*args, **kwargs)
            if inspect.isawaitable(result):
                return _awaited(result)
            return _expand_model(result)

    contents_manager.get = expanding_get
    contents_manager.trust_notebook = _signing_what_is_on_disk(contents_manager.trust_notebook)
    contents_manager._attnlab_expands_assets = True


def _signing_what_is_on_disk(trust_notebook):
    """``trust_notebook`` with ``get`` not expanding: it signs the notebook as stored."""
    if inspect.iscoroutinefunction(trust_notebook):

        @functools.wraps(trust_notebook)
        async def trusting(*args, **kwargs):
            token = _EXPANDING.set(False)
            try:
                return await trust_notebook(*args, **kwargs)
            finally:
                _EXPANDING.reset(token)

    else:

        @functools.wraps(trust_notebook)
        def trusting(*args, **kwargs):
            token = _EXPANDING.set(False)
            try:
                return trust_notebook(*args, **kwargs)
            finally:
                _EXPANDING.reset(token)

    return trusting


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter Server's entry point: this module is the extension."""
    return [{"module": "attnlab.save_hook"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Register :func:`pre_save_hook` and make the contents manager expand asset markers."""
    serverapp.contents_manager.register_pre_save_hook(pre_save_hook)
    expand_on_load(serverapp.contents_manager)
    serverapp.log.info(
        "attnlab: lessons are saved without the kernel's language_info and with the course's"
        " widget code as markers (expanded on load)"
    )
