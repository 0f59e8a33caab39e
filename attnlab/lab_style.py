"""The course's custom.css in every JupyterLab that has the package installed.

JupyterLab loads ``<base>/custom/custom.css`` when ``LabApp.custom_css`` is on and serves it
from the server's ``static_custom_path`` folders, which by default are only the learner's
``~/.jupyter/custom`` and Jupyter Server's own. ``./run.sh lab`` once added the course's
folder through a config file that ``pip install .`` does not install, so on Binder, a hub
image or a plain install the sidebar kept its 250 px and cut lesson 7's name short.

This Jupyter Server extension (enabled in ``jupyter-config/jupyter_server_config.d/attnlab.json``,
which ``pip install .`` puts in the environment's ``etc/jupyter``) turns ``LabApp.custom_css``
on when it is linked (extensions link in name order, so before ``jupyterlab`` reads its
config from the server's) and puts ``attnlab/lab_custom/`` first on that search path. A
learner's own ``~/.jupyter/custom/custom.css`` is then not read (the course's is found first).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CUSTOM_FOLDER", "use_course_css"]

#: The folder holding the course's ``custom.css`` (installed with the package).
CUSTOM_FOLDER = str(Path(__file__).resolve().with_name("lab_custom"))


def use_course_css(settings: dict) -> list[str]:
    """Put :data:`CUSTOM_FOLDER` first on ``settings["static_custom_path"]``, in place.

    In place, because JupyterLab's ``/custom/`` handler holds that very list.

    >>> settings = {"static_custom_path": ["/home/me/.jupyter/custom"]}
    >>> use_course_css(settings)[0] == CUSTOM_FOLDER, len(use_course_css(settings))
    (True, 2)
    """
    folders = settings.setdefault("static_custom_path", [])
    if CUSTOM_FOLDER not in folders:
        folders.insert(0, CUSTOM_FOLDER)
    return folders


def _jupyter_server_extension_points() -> list[dict]:
    """Jupyter Server's entry point: this module is the extension."""
    return [{"module": "attnlab.lab_style"}]


def _link_jupyter_server_extension(serverapp) -> None:
    """Turn ``LabApp.custom_css`` on: JupyterLab links after this and reads the server's config."""
    serverapp.config.LabApp.custom_css = True


def _load_jupyter_server_extension(serverapp) -> None:
    """Serve the course's custom.css as ``/custom/custom.css``."""
    use_course_css(serverapp.web_app.settings)
    serverapp.log.info("attnlab: JupyterLab's custom.css comes from %s", CUSTOM_FOLDER)
