"""Run a lesson in a hub user's kernel and move an explorer's sliders, as a front end would.

A learner's JupyterLab runs the notebook's code cells one by one and, when a slider moves,
sends the widget model a ``comm_msg`` ``{"method": "update", "state": {"value": ...}}``; the
explorer redraws and its figure canvas answers with a binary ``comm_msg`` holding the changed
pixels. :class:`LessonRun` does exactly that over the kernel's websocket, so a test or the
capacity benchmark can drive many learners without a browser each.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import hubrun

ROOT = Path(__file__).resolve().parents[2]
SLIDER_MODELS = {"FloatSliderModel", "IntSliderModel", "FloatLogSliderModel"}  # ipywidgets
SLIDER_KINDS = {"slider"}  # attnlab.controls: Slider and IntSlider (value, min, max, step)


def is_slider(state: dict) -> bool:
    """Whether a comm's widget state is a numeric slider a learner can move (and not disabled).

    >>> is_slider({"_model_name": "AnyModel", "kind": "slider", "disabled": False})
    True
    >>> is_slider({"_model_name": "AnyModel", "kind": "dropdown"})
    False
    """
    kind_ok = state.get("_model_name") in SLIDER_MODELS or state.get("kind") in SLIDER_KINDS
    return kind_ok and not state.get("disabled")


def copy_lesson(hub: hubrun.Hub, user: str, lesson: str) -> str:
    """Put ``notebooks/<lesson>.ipynb`` into ``user``'s home; returns its path there."""
    home = hub.home(user)
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "notebooks" / f"{lesson}.ipynb", home / f"{lesson}.ipynb")
    return f"{lesson}.ipynb"


def code_cells(lesson: str) -> list[str]:
    nb = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


class LessonRun:
    """One learner's kernel with a lesson run up to (and including) its first explorer."""

    def __init__(
        self,
        hub: hubrun.Hub,
        user: str,
        lesson: str,
        explorer: str,
        cells: list[str] | None = None,
    ) -> None:
        """``cells``: code to run instead of the lesson's code cells (e.g. one explorer's)."""
        self.hub, self.user, self.lesson, self.explorer = hub, user, lesson, explorer
        self.cells = cells
        self.kernel = hub.kernel(user)
        self.sliders: list[dict] = []
        self.canvas: str | None = None  # the comm of the explorer's figure canvas
        self.value_of: dict[str, float] = {}
        self.forward: dict[str, bool] = {}

    def run_until_explorer(self) -> list[hubrun.Execution]:
        """Execute the lesson's code cells in order up to the cell that shows the explorer.

        Raises AssertionError if a cell fails, LookupError if no cell shows it."""
        done = []
        for code in self.cells if self.cells is not None else code_cells(self.lesson):
            before = set(self.kernel.comms)
            result = self.kernel.execute(code)
            assert result.error is None, f"{self.user}: {result.error}"
            done.append(result)
            if code.strip().startswith(self.explorer):
                new = [c for c in self.kernel.comms if c not in before]
                self.sliders = [
                    {"comm": c, **self.kernel.comms[c]}
                    for c in new
                    if is_slider(self.kernel.comms[c])
                ]
                assert self.sliders, f"{self.explorer} opened no slider"
                canvases = [c for c in new if {"scale", "alt"} <= set(self.kernel.comms[c])]
                self.canvas = canvases[0] if canvases else None
                for s in self.sliders:
                    self.value_of[s["comm"]] = s["value"]
                    self.forward[s["comm"]] = True
                return done
        raise LookupError(f"no cell of {self.lesson} starts with {self.explorer}")

    def next_value(self, slider: dict) -> float:
        """One step of ``slider`` towards its far end, turning round at the ends."""
        comm, step = slider["comm"], slider.get("step") or 1
        value = self.value_of[comm] + (step if self.forward[comm] else -step)
        if not slider["min"] <= value <= slider["max"]:
            self.forward[comm] = not self.forward[comm]
            value = self.value_of[comm] + (step if self.forward[comm] else -step)
        return round(value, 10)

    def move(self, index: int = 0, timeout: float = 30) -> float | None:
        """Move slider ``index`` one step; returns the seconds until new pixels came back,
        or None if nothing came back within ``timeout`` (a dead or restarted kernel).

        A dropped websocket is reopened once, as JupyterLab does (counted in
        ``kernel.reconnects``)."""
        import websocket

        try:
            return self._move(index, timeout)
        except (ConnectionError, websocket.WebSocketConnectionClosedException):
            self.kernel.reconnects += 1
            self.kernel.connect()
            return self._move(index, timeout)

    def _move(self, index: int, timeout: float) -> float | None:
        slider = self.sliders[index % len(self.sliders)]
        value = self.next_value(slider)
        start = time.perf_counter()
        msg_id = self.kernel.send(
            "shell",
            "comm_msg",
            {
                "comm_id": slider["comm"],
                "data": {"method": "update", "state": {"value": value}, "buffer_paths": []},
            },
        )
        try:
            self.kernel.wait_for(
                msg_id,
                lambda m: (
                    m["msg_type"] == "comm_msg"
                    and m["content"]["comm_id"] != slider["comm"]
                    and m["content"]["data"].get("method") == "custom"
                ),
                timeout,
            )
        except TimeoutError:
            return None
        self.value_of[slider["comm"]] = value
        took = time.perf_counter() - start
        try:  # let the kernel finish the step (idle) before the next one
            self.kernel.wait_for(
                msg_id,
                lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
                timeout,
            )
        except TimeoutError:
            pass  # the pixels came; a lost status message changes nothing for the learner
        return took

    def set_pixel_ratio(self, ratio: float, timeout: float = 60) -> None:
        """Tell the explorer's figure canvas the screen's devicePixelRatio, as its view does
        when it appears (attnlab/figure_canvas.js): the kernel then draws at that ratio."""
        if self.canvas is None:
            raise LookupError(f"{self.explorer} opened no figure canvas")
        msg_id = self.kernel.send(
            "shell",
            "comm_msg",
            {
                "comm_id": self.canvas,
                "data": {"method": "custom", "content": {"kind": "screen", "ratio": ratio}},
            },
        )
        self.kernel.wait_for(
            msg_id,
            lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
            timeout,
        )

    def pid(self, timeout: float = 300) -> int:
        """The kernel's process id; TimeoutError if no reply within ``timeout``."""
        return int(self.kernel.execute("import os; print(os.getpid())", timeout).stdout)

    def close(self) -> None:
        self.kernel.close()
