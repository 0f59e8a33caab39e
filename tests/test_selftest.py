"""Lesson 0's widget self-test and environment report."""

from __future__ import annotations

import sys

import ipywidgets as widgets
import matplotlib
import numpy

import attnlab
from attnlab import selftest
from attnlab.controls import IntSlider, Readout
from attnlab.selftest import environment_report, release, version_problem, widget_selftest

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_live_front_ends_get_the_widget():
    test = widget_selftest()
    bundle = test._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == test.widget.model_id
    assert "attnlab-selftest" in test.widget._dom_classes
    headline = test.widget.children[0]
    assert isinstance(headline, widgets.HTML) and "Widgets are working" in headline.value
    assert isinstance(test.slider, IntSlider) and test.slider.description == "drag me"
    assert isinstance(test.reply, Readout) and "attnlab-selftest-reply" in test.reply._dom_classes


def test_text_plain_fallback_says_widgets_are_not_live_and_what_to_do():
    text = widget_selftest()._repr_mimebundle_()["text/plain"]
    assert "Widgets are NOT live here" in text
    assert "Widgets are working" not in text
    for advice in (
        "JupyterLab 4",
        "./run.sh lab",
        "Binder",
        "jupyterlab_widgets",
        "SAME environment",
        "VS Code",
        '"Jupyter" extension',
        "Reload",
        "Restart Kernel and Run All",
        "Error displaying widget",
        "pip install -r requirements.txt",
        ".hint()",
    ):
        assert advice in text, advice


def test_round_trip_driven_from_code():
    test = widget_selftest()
    assert "Waiting" in test.reply.value
    for value in (7, 3, 10):
        test.slider.value = value  # what a drag does: the front end sets the model's value
        assert "The kernel received" in test.reply.value
        assert f"received {value} —" in test.reply.value
        assert "the round trip works" in test.reply.value
    assert test.received == [7, 3, 10]
    green = test.bar.pixels[:, :, 1] == selftest.BAR_GREEN[1]  # (24, 300)
    assert green.all(axis=0).sum() == 300, "at the slider's max the bar is full"


def test_bar_follows_the_slider_and_reaches_the_page_as_changed_pixels():
    test = widget_selftest()
    sent = test.bar.messages_sent
    test.slider.value = 4
    assert test.bar.messages_sent == sent + 1
    assert (test.bar.pixels[:, :, 1] == selftest.BAR_GREEN[1]).all(axis=0).sum() == 120
    bundle = test._repr_mimebundle_()
    assert test.bar.initial_png[:4] == b"\x89PNG"  # what a new view paints at once
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_round_trip_message():
    assert selftest.round_trip_message(7) == "✓ The kernel received 7 — the round trip works."


def test_environment_report_lists_the_versions():
    report = environment_report()
    assert list(report.versions)[:6] == [
        "python",
        "numpy",
        "matplotlib",
        "ipywidgets",
        "anywidget",
        "attnlab",
    ]
    assert report.versions["numpy"] == numpy.__version__
    assert report.versions["matplotlib"] == matplotlib.__version__
    assert report.versions["ipywidgets"] == widgets.__version__
    assert report.versions["attnlab"] == attnlab.__version__
    assert report.executable == sys.executable
    assert report.ok, report.problems
    text = str(report)
    assert "numpy" in text and numpy.__version__ in text and "recent enough" in text
    assert "<table" in report._repr_html_()


def test_environment_report_names_missing_and_old_packages(monkeypatch):
    real = selftest.installed_version
    fake = {"ipywidgets": "7.7.0", "matplotlib": "not installed"}
    monkeypatch.setattr(selftest, "installed_version", lambda name: fake.get(name) or real(name))
    report = environment_report()
    assert not report.ok
    assert any("ipywidgets 7.7.0 is older than 8.1" in p for p in report.problems)
    assert any("matplotlib is not installed" in p for p in report.problems)
    assert "PROBLEM" in str(report) and "✗" in report._repr_html_()


def test_release_parsing():
    assert release("1.26.4") == (1, 26, 4)
    assert release("2.0.0rc2") == (2, 0, 0)
    assert release("8.1.dev0") == (8, 1)
    assert release("unknown") == ()
    assert version_problem("numpy", "1.26.0", (1, 26)) == ""
    assert "older" in version_problem("numpy", "1.9.3", (1, 26))


def test_the_selftest_leaves_no_widget_open_outside_its_tree():
    """Every model it makes is in the tree its cell shows: closing that tree closes them all,
    and none is saved with the lesson under no widget (its box's first layout once was)."""
    from ipywidgets.widgets.widget import _instances

    from attnlab.widget_lifetime import close_tree

    before = set(_instances)
    test = widget_selftest()
    made = set(_instances) - before
    close_tree(test.widget)
    left = [type(_instances[key]).__name__ for key in made if key in _instances]
    assert made and left == []
