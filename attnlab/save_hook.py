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
"""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["LESSON_FILES", "tidy_lesson_metadata", "pre_save_hook"]

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


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


def pre_save_hook(model: dict, path: str, **kwargs) -> None:
    """Jupyter Server's pre-save hook: tidy a lesson notebook's metadata before it is written.

    Other files and notebooks (a learner's own) are not touched.
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    if PurePosixPath(path).name in LESSON_FILES:
        tidy_lesson_metadata(model["content"])


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter Server's entry point: this module is the extension."""
    return [{"module": "attnlab.save_hook"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Register :func:`pre_save_hook` with the server's contents manager."""
    serverapp.contents_manager.register_pre_save_hook(pre_save_hook)
    serverapp.log.info("attnlab: lessons are saved without the kernel's language_info")
