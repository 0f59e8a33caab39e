"""The course site's static forms (issue 40), without building it: what each kind of output
becomes where widgets cannot run, the build's output rewriting and its settings.

The site itself is built and opened in Chromium by tests/browser/test_site_in_browser.py.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import re
import sys
from pathlib import Path

import pytest
from matplotlib.image import imread

from attnlab.exercises import lesson1, lesson3
from attnlab.explorers.temperature import TemperatureExplorer
from attnlab.selftest import widget_selftest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import build_site  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_a_help_panel_shows_its_hints_folded_not_a_widget_repr(monkeypatch):
    monkeypatch.delenv("ATTNLAB_HIDE_SOLUTIONS", raising=False)
    exercise = copy.copy(lesson3.softmax_row)
    bundle = exercise.help_panel()._repr_mimebundle_()
    assert WIDGET_VIEW in bundle  # JupyterLab still gets the buttons
    assert not bundle["text/plain"].startswith("VBox(")
    markdown = bundle["text/markdown"]
    hints = re.findall(r'<details class="attnlab-hint">\n<summary>Hint (\d) of', markdown)
    assert hints == [str(n) for n in range(1, len(exercise.hints) + 1)]
    assert "<details open" not in markdown
    for hint in exercise.hints:
        assert hint in markdown and hint in bundle["text/plain"]
    assert '<details class="attnlab-solution">' in markdown
    assert "def softmax_row" in markdown


def test_an_instructors_build_leaves_the_solutions_out(monkeypatch):
    monkeypatch.setenv("ATTNLAB_HIDE_SOLUTIONS", "1")
    bundle = copy.copy(lesson1.dot).help_panel()._repr_mimebundle_()
    assert "attnlab-solution" not in bundle["text/markdown"]
    assert "def dot" not in bundle["text/markdown"] + bundle["text/plain"]
    assert "Hint 1 of" in bundle["text/markdown"]


def test_the_self_test_says_a_static_page_is_static_and_how_to_run_it_live():
    bundle = widget_selftest()._repr_mimebundle_()
    assert WIDGET_VIEW in bundle and "Widgets are NOT live" in bundle["text/plain"]
    page = bundle["text/html"]
    assert "This is a static page" in page and "./run.sh lab" in page
    assert "NOT live" not in page and "✗" not in page


def test_an_explorer_displays_its_picture_with_alt_text(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *objs, **kw: shown.append((objs, kw)))
    explorer = TemperatureExplorer()
    explorer._ipython_display_()
    (bundle,), options = shown[0]
    assert options["raw"] and WIDGET_VIEW in bundle
    alt = options["metadata"]["image/png"]["alt"]
    assert alt.startswith("The temperature explorer at ")
    assert "temperature T = 1.0" in alt and "softmax(x / T)" in alt
    picture = imread(io.BytesIO(base64.b64decode(bundle["image/png"])), format="png")
    assert picture.shape[:2] == explorer.view.figure.canvas.get_width_height()[::-1]


def _nb(*outputs) -> dict:
    return {
        "cells": [{"cell_type": "code", "source": "", "outputs": list(outputs)}],
        "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}}}},
    }


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-picture-").decode()


def test_static_outputs_turn_explorers_into_pictures_and_drop_widget_state(tmp_path):
    explorer = {
        "output_type": "display_data",
        "data": {WIDGET_VIEW: {"model_id": "m"}, "image/png": PNG, "text/plain": "Here was"},
        "metadata": {"image/png": {"alt": 'The x explorer at "a" < b'}},
    }
    panel = {
        "output_type": "display_data",
        "data": {WIDGET_VIEW: {"model_id": "p"}, "text/markdown": "hints", "text/plain": "h"},
        "metadata": {},
    }
    nb = _nb(explorer, panel)
    counts = build_site.static_outputs(nb, "00-x", tmp_path)
    assert counts["explorers"] == 1 and counts["help"] == 1
    shown, hints = nb["cells"][0]["outputs"]
    assert shown["data"] == {
        "text/html": '<figure class="attnlab-explorer-picture"><img src="pictures/00-x-0.png" '
        'alt="The x explorer at &quot;a&quot; &lt; b"></figure>'
    }
    assert (tmp_path / "00-x-0.png").read_bytes() == base64.b64decode(PNG)
    assert hints["data"] == {"text/markdown": "hints"}
    assert "widgets" not in nb["metadata"]


@pytest.mark.parametrize(
    "output, reason",
    [
        (
            {"output_type": "display_data", "data": {WIDGET_VIEW: {}, "text/plain": "IntSlider"}},
            "no static form",
        ),
        (
            {"output_type": "execute_result", "data": {"text/plain": "VBox(children=(Button("}},
            "widget repr",
        ),
        (
            {
                "output_type": "display_data",
                "data": {WIDGET_VIEW: {}, "image/png": PNG},
                "metadata": {},
            },
            "no alt text",
        ),
    ],
)
def test_the_build_stops_at_an_output_with_no_static_form(tmp_path, output, reason):
    with pytest.raises(build_site.SiteError, match=reason):
        build_site.static_outputs(_nb(output), "00-x", tmp_path)


SETTINGS = {"repository": "attnlab/attnlab", "branch": "main", "hub_repository": ""}


def test_each_lesson_links_binder_and_the_hub_through_nbgitpuller():
    settings = {**SETTINGS, "hub_url": "https://hub.example.org"}
    links = build_site.launch_links(settings, "03-softmax")
    assert links["binder"].startswith("https://mybinder.org/v2/gh/attnlab/attnlab/main?")
    assert links["hub"] == build_site._nbgitpuller_link()(
        "https://hub.example.org",
        "https://github.com/attnlab/attnlab",
        "main",
        open_path="notebooks/03-softmax.ipynb",
    )
    cell = build_site.launch_cell(settings, "03-softmax")["source"]
    assert links["hub"] in cell and "./run.sh lab" in cell and "./run.sh test --all" in cell


def test_a_graded_class_site_links_no_repository_with_solutions():
    graded = {**SETTINGS, "hub_url": "https://hub.example.org", "graded": True}
    for hub_repository in ("", "https://github.com/attnlab/attnlab.git"):
        with pytest.raises(build_site.SiteError, match="without source/"):
            build_site.check_settings({**graded, "hub_repository": hub_repository})
    with pytest.raises(build_site.SiteError, match="solutions"):
        build_site.check_settings(
            {**graded, "hub_repository": "https://github.com/a/class", "solutions": True}
        )
    build_site.check_settings({**graded, "hub_repository": "https://github.com/a/class"})


def test_the_shipped_settings_load():
    settings = build_site.load_settings()
    assert settings["repository"] == "attnlab/attnlab"


def test_the_readme_shows_the_explorer_picture_the_site_shows(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](site/explorer.png)" in readme and "./run.sh site" in readme
    fresh = tmp_path / "explorer.png"
    build_site.explorer_picture(fresh)
    committed = imread(build_site.README_PICTURE, format="png")
    assert committed.shape == imread(fresh, format="png").shape  # same figure, same size


def test_run_sh_names_the_site_command():
    text = (ROOT / "run.sh").read_text(encoding="utf-8")
    assert "#   ./run.sh site" in text and "\n    site)\n" in text


def test_a_saved_lesson_shows_each_explorers_picture_in_nbconvert():
    """Issue 40: a lesson saved after use, with its widget state (the course saves it), as
    nbconvert's HTML exporter (nbviewer) renders it: each explorer's PNG, not a widget view it
    cannot run. Before, nbconvert picked the view (its model is in the saved state) and showed
    no picture. The outputs and the state are what the kernel sends and JupyterLab saves."""
    import ipywidgets as widgets
    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert import HTMLExporter

    from attnlab import save_hook
    from attnlab.course import COURSE

    explorers, cells = [], []
    for name in [e for entry in COURSE for e in entry.explorers]:
        module, _, cls = name.rpartition(".")
        explorer = getattr(__import__(module, fromlist=[cls]), cls)()
        bundle = explorer._repr_mimebundle_()
        metadata = {"image/png": {"alt": explorer.picture_alt()}}
        output = nbformat.v4.new_output("display_data", data=bundle, metadata=metadata)
        cells.append(nbformat.v4.new_code_cell("explorer", outputs=[output]))
        explorers.append(bundle["image/png"])
    nb = nbformat.v4.new_notebook(cells=cells)
    state = widgets.Widget.get_manager_state(drop_defaults=True)
    nb.metadata["widgets"] = {save_hook.WIDGET_STATE: json.loads(json.dumps(state, default=str))}
    model = {"type": "notebook", "content": json.loads(json.dumps(nb))}
    save_hook.pre_save_hook(model, "03-softmax.ipynb")  # what the course's server writes
    saved = nbformat.from_dict(model["content"])
    page, _ = HTMLExporter().from_notebook_node(saved)
    prefix = "data:image/png;base64,"
    soup = BeautifulSoup(page, features="html.parser")
    images = soup.select("img")
    shown = [img["src"].removeprefix(prefix) for img in images if img["src"].startswith(prefix)]
    from attnlab.explorers import all_explorers

    assert len(explorers) == len(all_explorers()) and shown == explorers  # every explorer
    assert soup.select('script[type="application/vnd.jupyter.widget-view+json"]') == []


def test_the_build_scripts_examples_hold():
    """tools/ is not among the doctest paths: its examples are run here."""
    import doctest

    result = doctest.testmod(
        build_site, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted >= 4 and result.failed == 0
