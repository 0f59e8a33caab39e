"""JupyterLab as the course starts it: ``./run.sh lab`` and the browser tests read this file.

They put this folder on ``JUPYTER_CONFIG_PATH``. A learner's own settings (Settings menu)
still win over everything here.

* ``default_url``: the printed URL, and ``/``, open lesson 0 rather than the Launcher.
* ``app_settings_dir``: ``lab/settings/overrides.d/attnlab.json`` beside this file gives
  JupyterLab's settings new defaults: widget state is saved with the notebook (a reopened
  lesson shows each explorer's last picture and says to re-run its cell, instead of
  "Error displaying widget: model not found"), no "Jupyter news?" pop-up, and no execution
  indicator in the notebook toolbar (the status bar still says "Busy"/"Idle"): its re-render
  on every kernel busy/idle made JupyterLab's toolbar recompute its focusable buttons with a
  forced layout, twice per slider step (``benchmarks/README.md``, about 2.5 ms median and
  3.5 ms p90 of a step in an interleaved A/B). A
  ``pip install .`` (Binder, the hub images) copies that file into the environment's own
  settings folder instead (pyproject.toml, data-files).
  The same file shuts a notebook's kernel down when its tab is closed (``kernelShutdown``:
  six lessons opened one after the other kept six kernels) and hides the file browser's Last
  Modified column, which left the lesson names too little room.
* ``attnlab/lab_custom/custom.css`` (served, and ``LabApp.custom_css`` turned on, by the server
  extension ``attnlab/lab_style.py``) opens the left sidebar at 280 px instead of
  250 px, so every lesson's file name shows whole at 1366 x 768.
* no news feed and no update checks: nothing is fetched from the network.
* ``labconfig/page_config.json`` beside this file switches off one JupyterLab plugin,
  ``@jupyterlab/application-extension:faviconbusy``, which swaps the browser tab's icon for a
  "busy" one whenever a kernel is busy. Every slider step makes the kernel busy and idle once,
  so the page swapped two ``<link rel="icon">`` elements per step and Chromium fetched and
  decoded the icon and updated the tab, on the page's main thread and in the browser
  process, while the step's pixels were on their way. Interleaved A/B in
  ``benchmarks/latency.py``: the floor's median 24.6 / 24.7 → 23.1 / 23.0 ms, lesson 0's
  24.4 / 25.0 → 22.5 / 23.2 ms. The status bar still says "Busy"/"Idle" and a running cell
  still shows ``[*]``. Found in a Chrome trace of slider steps (``benchmarks/README.md``).
  ``JUPYTER_CONFIG_PATH`` (``./run.sh lab``, the tests, the hub) reads it in place;
  ``pip install .`` copies it into the environment's ``etc/jupyter/labconfig``.
"""

from pathlib import Path

c = get_config()  # noqa: F821 (provided by traitlets when it runs this file)
c.LabApp.default_url = "/lab/tree/00-start-here.ipynb"
c.LabApp.app_settings_dir = str(Path(__file__).resolve().with_name("lab") / "settings")
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
