"""A private Jupyter Notebook 7 server for the browser suite, run like the JupyterLab one.

Notebook 7 is built from JupyterLab's parts (same ``.jp-Notebook`` DOM, Run menu and widget
manager), so :class:`lab_harness.LessonPage` drives it unchanged; only the command line and
the URL of a notebook differ. The server gets the same isolation as :class:`LabServer`: its own
free port on 127.0.0.1, token, temp HOME and Jupyter dirs, a temp copy of the lessons, and it
is stopped by PID with its kernels.
"""

from __future__ import annotations

import lab_harness as lab


class NotebookServer(lab.LabServer):
    """A private Jupyter Notebook 7 serving a temp copy of a lesson folder."""

    def notebook_url(self, name: str) -> str:
        """URL that opens ``name`` in Notebook 7's single-document page."""
        return f"{self.base_url}/notebooks/{name}?token={self.token}"

    def _command(self) -> list[str]:
        """The ``python -m notebook`` command line (Notebook 7 has no news or update check)."""
        return self._server_command("notebook")
