"""The Jupyter server as the course starts it (``./run.sh lab``, the browser tests): one fix.

JupyterLab (``/lab``) and Notebook 7 (``/tree``, ``/notebooks/...``) run in the same server and
both ship JupyterLab's MathJax fonts under the same hashed names (``1a10595a47bb3cf2.woff``,
...), each in its own static folder. jupyter_server's static handler (``FileFindHandler``)
remembers where it found a file in one table for the whole process, keyed by the file's name
alone: once a JupyterLab page has loaded a font, Notebook 7's ``/static/notebook/<font>`` is
looked up in that table, gets JupyterLab's copy, which lies outside Notebook 7's folder, and is
refused with 403 ("is not in root static directory"), and the other way round. Every formula
then renders with fallback fonts. Measured with ``./run.sh lab``: a lesson opened in
JupyterLab, then in Notebook 7, had four 403 font responses.

The fix: a remembered path that lies outside the folders the asking handler serves is looked
up again in those folders (and kept only for its own search path). Everything else, the 403 on
a path that really leaves the folder included, is jupyter_server's own code.
"""

import os

from jupyter_server.base.handlers import FileFindHandler
from jupyter_server.utils import filefind


def _roots(roots) -> list[str]:
    folders = [roots] if isinstance(roots, str) else list(roots)
    return [os.path.abspath(os.path.expanduser(folder)) + os.sep for folder in folders]


def _patch_static_lookup() -> None:
    if getattr(FileFindHandler, "_attnlab_per_root", False):
        return
    shared = FileFindHandler.get_absolute_path.__func__
    own: dict[tuple, str] = {}

    def get_absolute_path(cls, roots, path):
        found = shared(cls, roots, path)
        folders = _roots(roots)
        if not found or any((found + os.sep).startswith(folder) for folder in folders):
            return found
        key = (tuple(folders), path)
        with cls._lock:
            if key not in own:
                try:
                    own[key] = os.path.abspath(filefind(path, roots))
                except OSError:
                    own[key] = ""
            return own[key]

    FileFindHandler.get_absolute_path = classmethod(get_absolute_path)
    FileFindHandler._attnlab_per_root = True


_patch_static_lookup()
