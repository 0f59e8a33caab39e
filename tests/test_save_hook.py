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
