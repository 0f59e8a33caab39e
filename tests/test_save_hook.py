"""The pre-save hook keeps a lesson saved without changes byte for byte (issue 29).

Driven through Jupyter Server's own FileContentsManager (its ``save`` runs the registered
pre-save hooks and writes with nbformat), as the server the course starts does; the browser
test (tests/browser/test_saved_size.py) does the same through JupyterLab.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager

from attnlab import save_hook

ROOT = Path(__file__).resolve().parents[1]
LESSON = "00-start-here.ipynb"
# What JupyterLab sends once the kernel has started (measured in the browser, lesson 0).
KERNEL_LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": "3.11.7",
}
EMPTY_WIDGETS = {save_hook.WIDGET_STATE: {"state": {}, "version_major": 2, "version_minor": 0}}


def _manager(root: Path, hooked: bool) -> FileContentsManager:
    manager = FileContentsManager(root_dir=str(root))
    if hooked:
        manager.register_pre_save_hook(save_hook.pre_save_hook)
    return manager


def _save_as_lab_does(manager: FileContentsManager, name: str) -> bytes:
    model = manager.get(name, content=True)
    model["content"]["metadata"]["language_info"] = dict(KERNEL_LANGUAGE_INFO)
    model["content"]["metadata"]["widgets"] = copy.deepcopy(EMPTY_WIDGETS)
    manager.save({"type": "notebook", "format": "json", "content": model["content"]}, name)
    return (Path(manager.root_dir) / name).read_bytes()


@pytest.mark.parametrize("hooked", [False, True])
def test_a_lesson_saved_unchanged_keeps_its_bytes(tmp_path, hooked):
    shutil.copy(ROOT / "notebooks" / LESSON, tmp_path / LESSON)
    shipped = (tmp_path / LESSON).read_bytes()
    saved = _save_as_lab_does(_manager(tmp_path, hooked), LESSON)
    if hooked:
        assert saved == shipped
    else:  # the failure the hook fixes, seen through the same path
        assert saved != shipped and b'"version": "3.11.7"' in saved


def test_a_learners_own_notebook_is_not_touched(tmp_path):
    shutil.copy(ROOT / "notebooks" / LESSON, tmp_path / "my-notes.ipynb")
    saved = json.loads(_save_as_lab_does(_manager(tmp_path, True), "my-notes.ipynb"))
    assert saved["metadata"]["language_info"] == KERNEL_LANGUAGE_INFO
    assert saved["metadata"]["widgets"] == EMPTY_WIDGETS


def test_widget_state_with_widgets_is_kept(tmp_path):
    shutil.copy(ROOT / "notebooks" / LESSON, tmp_path / LESSON)
    manager = _manager(tmp_path, True)
    model = manager.get(LESSON, content=True)
    state = {save_hook.WIDGET_STATE: {"state": {"m1": {"model_name": "X"}}, "version_major": 2}}
    model["content"]["metadata"]["widgets"] = state
    manager.save({"type": "notebook", "format": "json", "content": model["content"]}, LESSON)
    assert json.loads((tmp_path / LESSON).read_text())["metadata"]["widgets"] == state


def test_every_lesson_is_known_to_the_hook():
    shipped = {path.name for path in (ROOT / "notebooks").glob("*.ipynb")}
    assert shipped == set(save_hook.LESSON_FILES)


# --- The course's widget code once, not once per model (issue 29, "saved lessons grow") ---


def _anywidget_model(widget) -> dict:
    """A widget's entry in the saved widget state, as JupyterLab writes it (binary traits
    left out: they are not what this is about)."""
    state = {k: v for k, v in widget.get_state().items() if not isinstance(v, bytes | memoryview)}
    return {
        "model_name": state["_model_name"],
        "model_module": state["_model_module"],
        "model_module_version": state["_model_module_version"],
        "state": state,
    }


def _course_widgets(n: int) -> list:
    from attnlab.controls import Readout, Slider
    from attnlab.figure_canvas import FigureCanvas

    kinds = [
        lambda i: Slider(description=f"s{i}", min=0.0, max=1.0, step=0.1, value=0.5),
        lambda i: Readout(f"<b>{i}</b>"),
        lambda i: FigureCanvas(),
    ]
    return [kinds[i % len(kinds)](i) for i in range(n)]


def _with_widget_state(notebook: dict, widgets: list, extra: dict | None = None) -> dict:
    models = {f"m{i:03d}": _anywidget_model(w) for i, w in enumerate(widgets)}
    models.update(extra or {})
    notebook["metadata"]["widgets"] = {
        save_hook.WIDGET_STATE: {"state": models, "version_major": 2, "version_minor": 0}
    }
    return json.loads(json.dumps(notebook))  # as JSON has it (tuples are lists)


def _save_and_load(tmp_path, name: str, content: dict) -> tuple[bytes, dict]:
    manager = _manager(tmp_path, True)
    save_hook.expand_on_load(manager)
    manager.save({"type": "notebook", "format": "json", "content": copy.deepcopy(content)}, name)
    return (tmp_path / name).read_bytes(), manager.get(name, content=True)["content"]


def _lesson_content() -> dict:
    """Lesson 0 as the course's contents API gives it (multi-line sources joined, the kernel's
    language_info filled in) and JupyterLab sends it back."""
    content = FileContentsManager(root_dir=str(ROOT / "notebooks")).get(LESSON)["content"]
    return save_hook.fill_language_info(content)


def test_the_assets_are_what_the_course_widgets_send():
    widgets = _course_widgets(3)
    sent = {w._esm for w in widgets} | {w._css for w in widgets if hasattr(w, "_css")}
    assert sent <= set(save_hook.assets().values())
    assert set(save_hook.assets().values()) <= sent


@pytest.mark.parametrize("n", [1, 30])
def test_a_lesson_saves_no_copy_of_the_widget_code_and_loads_it_back(tmp_path, n):
    content = _with_widget_state(_lesson_content(), _course_widgets(n))
    saved, loaded = _save_and_load(tmp_path, LESSON, content)
    for name, text in save_hook.assets().items():
        assert json.dumps(text).encode() not in saved, f"{name} saved as is"
    assert saved.count(b"attnlab-asset:") == sum(
        ("_esm" in m["state"]) + ("_css" in m["state"])
        for m in content["metadata"]["widgets"][save_hook.WIDGET_STATE]["state"].values()
    )
    assert loaded == content  # the round trip gives the notebook JSON back as it was sent
    unhooked = tmp_path / "plain"
    unhooked.mkdir()
    _manager(unhooked, False).save(
        {"type": "notebook", "format": "json", "content": copy.deepcopy(content)}, LESSON
    )
    full = (unhooked / LESSON).stat().st_size
    print(f"{n} course widgets: saved {len(saved)} B with markers, {full} B without")
    assert len(saved) < full - n * 3000


def test_a_learners_notebook_with_course_widgets_is_not_touched(tmp_path):
    content = _with_widget_state(_lesson_content(), _course_widgets(3))
    saved, loaded = _save_and_load(tmp_path, "my-notes.ipynb", content)
    assert b"attnlab-asset:" not in saved
    assert json.loads(saved)["metadata"]["widgets"] == content["metadata"]["widgets"]
    assert loaded == content


def test_values_that_are_not_the_assets_byte_for_byte_are_not_touched(tmp_path):
    esm = save_hook.assets()["figure_canvas.js"]
    own = {
        "model_name": "AnyModel",
        "model_module": "anywidget",
        "model_module_version": "~0.9.*",
        "state": {"_esm": "export default { render() {} };", "_css": ".mine { color: red; }"},
    }
    near = copy.deepcopy(own)
    near["state"].update(_esm=esm + "\n", _css=save_hook.assets()["controls.css"].strip())
    content = _with_widget_state(_lesson_content(), [], {"own": own, "near": near})
    saved, loaded = _save_and_load(tmp_path, LESSON, content)
    assert b"attnlab-asset:" not in saved
    assert json.loads(saved)["metadata"]["widgets"] == content["metadata"]["widgets"]
    assert loaded == content


def test_a_marker_from_an_older_package_expands_to_the_current_asset():
    current = save_hook.assets()["figure_canvas.js"]
    old = save_hook.asset_marker("figure_canvas.js", "an older figure_canvas.js")
    unknown = "attnlab-asset:gone.js#sha256:0123456789ab"
    models = {
        "a": {"state": {"_esm": old}},
        "b": {"state": {"_esm": unknown, "_css": "attnlab-asset: not a marker"}},
    }
    nb = {"metadata": {"widgets": {save_hook.WIDGET_STATE: {"state": models}}}}
    save_hook.expand_assets(nb)
    assert models["a"]["state"]["_esm"] == current
    assert models["b"]["state"] == {"_esm": unknown, "_css": "attnlab-asset: not a marker"}


def test_a_copied_lesson_loads_expanded(tmp_path):
    """Markers are expanded in any notebook: a lesson duplicated under another name (the
    file is copied as it is on disk) still loads with the widget code."""
    content = _with_widget_state(_lesson_content(), _course_widgets(3))
    _save_and_load(tmp_path, LESSON, content)
    shutil.copy(tmp_path / LESSON, tmp_path / "00-start-here-Copy1.ipynb")
    manager = _manager(tmp_path, True)
    save_hook.expand_on_load(manager)
    assert manager.get("00-start-here-Copy1.ipynb")["content"] == content


def test_the_server_extension_expands_through_the_async_contents_api(tmp_path):
    """The server's default manager is asynchronous: the wrapped ``get`` is awaited."""
    import asyncio

    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

    content = _with_widget_state(_lesson_content(), _course_widgets(3))
    manager = AsyncLargeFileManager(root_dir=str(tmp_path))
    manager.register_pre_save_hook(save_hook.pre_save_hook)
    save_hook.expand_on_load(manager)
    save_hook.expand_on_load(manager)  # a second wrap is a no-op

    async def round_trip():
        model = {"type": "notebook", "format": "json", "content": copy.deepcopy(content)}
        await manager.save(model, LESSON)
        return await manager.get(LESSON, content=True)

    loaded = asyncio.run(round_trip())["content"]
    assert b"attnlab-asset:" in (tmp_path / LESSON).read_bytes()
    assert loaded == content


@pytest.mark.parametrize("asynchronous", [False, True])
def test_trusting_a_saved_lesson_signs_the_file_as_stored(tmp_path, asynchronous):
    """Trust Notebook signs what ``get`` returns; the server checks the signature against the
    file on disk: with markers on disk, it must sign the markers, not the expanded code."""
    import asyncio

    import nbformat
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

    content = _with_widget_state(_lesson_content(), _course_widgets(3))
    stored = save_hook.compact_assets(copy.deepcopy(content))  # as saved, not yet signed
    nbformat.write(nbformat.from_dict(stored), tmp_path / LESSON)
    cls = AsyncLargeFileManager if asynchronous else FileContentsManager
    manager = cls(root_dir=str(tmp_path))
    manager.notary = nbformat.sign.NotebookNotary(db_file=":memory:", secret=b"test")
    manager.register_pre_save_hook(save_hook.pre_save_hook)
    save_hook.expand_on_load(manager)

    async def run(result):
        return await result if asynchronous else result

    async def trust_then_load():
        assert not manager.notary.check_signature(nbformat.read(tmp_path / LESSON, as_version=4))
        await run(manager.trust_notebook(LESSON))
        return await run(manager.get(LESSON))

    loaded = asyncio.run(trust_then_load())
    on_disk = nbformat.read(tmp_path / LESSON, as_version=4)
    assert b"attnlab-asset:" in (tmp_path / LESSON).read_bytes()
    assert manager.notary.check_signature(on_disk)
    assert loaded["content"]["metadata"]["widgets"] == content["metadata"]["widgets"]


# --- Each picture once (issue 29, "a saved lesson at most twice its shipped size") ---


def _png(colour) -> str:
    """A small real PNG (base64), one colour per picture so that two pictures differ."""
    import base64

    import numpy as np

    from attnlab._png import encode_png

    rgba = np.zeros((6, 8, 4), dtype=np.uint8)
    rgba[...] = (*colour, 255)
    return base64.b64encode(encode_png(rgba)).decode("ascii")


def _static_figure_output() -> dict:
    """A static figure's output as the kernel sends it: the course's HTML and the same PNG."""
    from matplotlib.figure import Figure

    from attnlab.plots import display

    figure = Figure(figsize=(1, 1), dpi=20)
    figure.subplots().set_title("tiny")
    html = display.figure_html(figure)
    png = save_hook.FIGURE_HTML.fullmatch(html).group(1)
    data = {"text/html": html, "image/png": png, "text/plain": "<Figure size 20x20 with 1 Axes>"}
    return {"output_type": "display_data", "data": data, "metadata": {}}


def _explorer(root: str, kernel_png: str, view_png: str | None) -> tuple[dict, dict]:
    """An explorer's output (the kernel's first frame as PNG) and its widget models, as
    JupyterLab saves them: a box holding a figure canvas whose ``initial_png`` is the picture
    its view kept (``view_png``; None: no picture)."""
    data = {
        save_hook.WIDGET_VIEW: {"model_id": root, "version_major": 2, "version_minor": 0},
        "image/png": kernel_png,
        "text/plain": "Here was the explorer.",
    }
    output = {"output_type": "execute_result", "data": data, "metadata": {}, "execution_count": 3}
    canvas = {
        "model_name": "AnyModel",
        "model_module": "anywidget",
        "model_module_version": "~0.11.*",
        "state": {"_anywidget_id": save_hook.CANVAS_ID, "width": 8, "height": 6, "alt": "f"},
    }
    if view_png is not None:
        canvas["buffers"] = [{"data": view_png, "encoding": "base64", "path": ["initial_png"]}]
    box = {
        "model_name": "VBoxModel",
        "model_module": "@jupyter-widgets/controls",
        "model_module_version": "2.0.0",
        "state": {"children": [f"IPY_MODEL_{root}-slider", f"IPY_MODEL_{root}-canvas"]},
    }
    slider = {"model_name": "IntSliderModel", "model_module": "@jupyter-widgets/controls",
              "model_module_version": "2.0.0", "state": {"value": 3}}  # fmt: skip
    models = {root: box, f"{root}-slider": slider, f"{root}-canvas": canvas}
    return output, models


def _lesson_with_pictures() -> tuple[dict, dict]:
    """Lesson 0 with a static figure and two explorers' outputs (pictures by name)."""
    pngs = {name: _png(c) for name, c in [("first", (250, 0, 0)), ("kept", (0, 250, 0)),
                                          ("other", (0, 0, 250))]}  # fmt: skip
    content = _lesson_content()
    code = [c for c in content["cells"] if c["cell_type"] == "code"]
    one, models_one = _explorer("aa11", pngs["first"], pngs["kept"])
    two, models_two = _explorer("bb22", pngs["other"], None)  # its view kept no picture
    code[0]["outputs"] = [_static_figure_output()]
    code[1]["outputs"], code[2]["outputs"] = [one], [two]
    content = _with_widget_state(content, [], {**models_one, **models_two})
    return content, pngs


def test_the_figure_html_the_hook_knows_is_what_the_course_writes():
    output = _static_figure_output()  # fullmatch above: None would fail there
    assert output["data"]["image/png"].startswith("iVBORw0KGgo")


def test_a_figure_drawn_for_a_dark_page_says_so_and_is_saved_once(monkeypatch):
    """Issue 41: the course's CSS shows a static figure inverted on the theme it was not drawn
    for; a figure drawn for a dark page carries the class it reads, and the hook still knows
    the HTML (its PNG is saved once and put back on load)."""
    from attnlab import figure_canvas

    monkeypatch.setitem(figure_canvas.PAGE, "dark", True)
    output = _static_figure_output()
    assert 'class="attnlab-static-figure attnlab-drawn-dark"' in output["data"]["text/html"]
    nb = {"cells": [{"outputs": [output]}]}
    png = output["data"]["image/png"]
    assert "image/png" not in save_hook.compact_pictures(nb)["cells"][0]["outputs"][0]["data"]
    assert save_hook.expand_pictures(nb)["cells"][0]["outputs"][0]["data"]["image/png"] == png
    monkeypatch.setitem(figure_canvas.PAGE, "dark", False)
    assert "attnlab-drawn-dark" not in _static_figure_output()["data"]["text/html"]


def test_a_static_figure_is_saved_once_and_loads_with_both(tmp_path):
    content, _ = _lesson_with_pictures()
    figure = next(c for c in content["cells"] if c.get("outputs"))["outputs"][0]
    png = figure["data"]["image/png"]
    saved, loaded = _save_and_load(tmp_path, LESSON, content)
    assert saved.count(png.encode()) == 1, "the figure's PNG is saved more than once"
    on_disk = next(c for c in json.loads(saved)["cells"] if c.get("outputs"))["outputs"][0]
    assert sorted(on_disk["data"]) == ["text/html", "text/plain"]  # the alt text is saved
    assert 'alt="Figure: tiny."' in "".join(on_disk["data"]["text/html"])
    assert next(c for c in loaded["cells"] if c.get("outputs"))["outputs"][0] == figure


def test_an_explorer_frame_is_saved_once_as_the_view_left_it(tmp_path):
    content, pngs = _lesson_with_pictures()
    saved, loaded = _save_and_load(tmp_path, LESSON, content)
    assert saved.count(pngs["kept"].encode()) == 1, "the explorer's frame is saved twice"
    assert pngs["first"].encode() not in saved  # the output shows the picture the view kept
    on_disk = json.loads(saved)
    models = on_disk["metadata"]["widgets"][save_hook.WIDGET_STATE]["state"]
    assert "buffers" not in models["aa11-canvas"]
    assert models["aa11-canvas"]["state"]["initial_png"] == "attnlab-frame:aa11"
    # A canvas whose view kept no picture: its output keeps the kernel's frame.
    assert saved.count(pngs["other"].encode()) == 1
    # Loaded: the model paints the kept picture again, and the output shows it too.
    canvas = loaded["metadata"]["widgets"][save_hook.WIDGET_STATE]["state"]["aa11-canvas"]
    assert canvas == content["metadata"]["widgets"][save_hook.WIDGET_STATE]["state"]["aa11-canvas"]
    shown = [o for c in loaded["cells"] for o in c.get("outputs", [])]
    assert shown[1]["data"]["image/png"] == pngs["kept"]
    assert shown[2]["data"]["image/png"] == pngs["other"]


def test_a_saved_lesson_reopened_and_saved_unchanged_keeps_its_bytes(tmp_path):
    content, _ = _lesson_with_pictures()
    saved, loaded = _save_and_load(tmp_path, LESSON, content)
    again, reloaded = _save_and_load(tmp_path, LESSON, loaded)
    assert again == saved
    assert reloaded == loaded


def test_pictures_in_a_learners_own_notebook_are_not_touched(tmp_path):
    content, pngs = _lesson_with_pictures()
    saved, loaded = _save_and_load(tmp_path, "my-notes.ipynb", content)
    assert saved.count(pngs["kept"].encode()) == 1 and pngs["first"].encode() in saved
    assert saved.count(pngs["first"].encode()) == 1 and b"attnlab-frame:" not in saved
    assert json.loads(saved)["metadata"]["widgets"] == content["metadata"]["widgets"]
    assert loaded == content


def test_a_canvas_in_no_output_with_a_picture_keeps_its_picture(tmp_path):
    """The self-test's bar: its output has no PNG, so its model's picture is the only one."""
    content, pngs = _lesson_with_pictures()
    for cell in content["cells"]:
        for output in cell.get("outputs", []):
            if save_hook.WIDGET_VIEW in output["data"]:
                del output["data"]["image/png"]
    saved, loaded = _save_and_load(tmp_path, LESSON, content)
    assert saved.count(pngs["kept"].encode()) == 1 and b"attnlab-frame:" not in saved
    assert loaded == content


def test_a_lesson_loads_with_the_kernels_language_info_and_saves_as_shipped(tmp_path):
    """Issue 41: JupyterLab marks a notebook modified when the kernel's ``language_info``
    differs from the notebook's; loaded through the course's server a lesson already has it,
    and saved back it is the shipped file again. Another language's notebook is left alone."""
    from ipykernel.ipkernel import IPythonKernel

    shutil.copy(ROOT / "notebooks" / LESSON, tmp_path / LESSON)
    shipped = (tmp_path / LESSON).read_bytes()
    manager = _manager(tmp_path, True)
    save_hook.expand_on_load(manager)
    content = manager.get(LESSON, content=True)["content"]
    assert content["metadata"]["language_info"] == IPythonKernel.language_info
    manager.save({"type": "notebook", "format": "json", "content": content}, LESSON)
    assert (tmp_path / LESSON).read_bytes() == shipped

    other = json.loads(shipped)
    other["metadata"]["language_info"] = {"name": "R"}
    (tmp_path / "mine.ipynb").write_text(json.dumps(other))
    assert manager.get("mine.ipynb")["content"]["metadata"]["language_info"] == {"name": "R"}
