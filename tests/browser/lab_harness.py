"""Run JupyterLab on a temp copy of the lessons and drive it from Chromium via Playwright.

Shared by the browser tests (``tests/browser``) and ``benchmarks/latency.py``. It knows:

* how to start a private JupyterLab (own PID, free port, token, temp HOME and Jupyter dirs,
  one OpenBLAS thread per kernel unless the environment sets OPENBLAS_NUM_THREADS,
  root_dir a temp copy of ``notebooks/``) and how to stop exactly that process and its kernels;
* how to launch Debian's Chromium (Playwright cannot download browsers here);
* how to open a notebook, run all cells the way a learner does (Run menu), and read the result
  from the kernel messages that ``hooks.js`` records in the page;
* the explorer DOM contract (``.attnlab-explorer`` roots, sliders ``.attnlab-slider`` with an
  ``input[type=range]``, ``canvas.attnlab-figure``, ``.attnlab-readout``, ``.attnlab-error``)
  and how to time one slider step in the page.

Playwright is imported lazily so that importing this module never needs it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from processes import free_port, stop_tree

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page, Playwright

REPO_ROOT = Path(__file__).resolve().parents[2]
HOOKS_JS = Path(__file__).with_name("hooks.js")
CHROMIUM = Path(os.environ.get("ATTNLAB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LESSON_GLOB = "[0-9][0-9]-*.ipynb"
EXPLORER = ".attnlab-explorer"
SLIDER = ".attnlab-slider"  # an attnlab.controls slider: label, input[type=range], readout
WIDGET_ERROR_TEXT = "Error displaying widget"
WIDGET_LOADING_TEXT = "Loading widget..."
VIEWPORT = {"width": 1400, "height": 1000}
LAPTOP_VIEWPORT = {"width": 1366, "height": 768}  # the laptop screen issue 16 was tried on

SERVER_START_S = 90
KERNEL_READY_S = 90
RUN_ALL_S = 300
RUN_ALL_START_S = 6
KERNEL_QUIET_MS = 500
WIDGETS_APPEAR_S = 30
STEP_S = 20
STEP_GRACE_MS = 2000
BURST_SETTLE_MS = 300


def notebook_dir() -> Path:
    """The lesson folder: ``$ATTNLAB_NOTEBOOKS`` if set (for trying things out), else notebooks/."""
    return Path(os.environ.get("ATTNLAB_NOTEBOOKS", REPO_ROOT / "notebooks")).resolve()


def discover_lessons(folder: Path | None = None) -> list[Path]:
    """Every lesson notebook ``NN-*.ipynb`` in ``folder``, sorted by name."""
    return sorted((folder or notebook_dir()).glob(LESSON_GLOB))


def chromium_available() -> bool:
    """Whether the Chromium binary the harness launches exists and is executable."""
    return CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)


# --------------------------------------------------------------------------- the server


def _write_lab_settings(config_dir: Path) -> None:
    """User settings for the private JupyterLab: no news, no update checks, no autosave."""
    settings = config_dir / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(
        '{"checkForUpdates": false, "fetchNews": "false"}'
    )
    # No autosave: a lesson left open by one test must not be saved (with its outputs and widget
    # state) into the copy the next test opens.
    docmanager = config_dir / "lab" / "user-settings" / "@jupyterlab" / "docmanager-extension"
    docmanager.mkdir(parents=True, exist_ok=True)
    (docmanager / "plugin.jupyterlab-settings").write_text('{"autosave": false}')


@dataclass
class LabServer:
    """A private JupyterLab serving a temp copy of a lesson folder.

    Use as a context manager: entering starts the server and waits until its REST API answers,
    leaving stops it and its kernels (by PID) and deletes the temp folder.
    """

    source: Path
    port: int = 0
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    process: subprocess.Popen | None = None
    workdir: Path | None = None
    #: OPENBLAS_NUM_THREADS of the kernels when the environment does not set it (None: unset)
    blas_threads: int | None = 1

    @property
    def root_dir(self) -> Path:
        """The temp copy of the lessons that JupyterLab serves."""
        return self.workdir / "notebooks"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def notebook_url(self, name: str) -> str:
        """URL that opens ``name`` in a freshly reset JupyterLab workspace."""
        return f"{self.base_url}/lab/tree/{name}?token={self.token}&reset"

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log, for error messages."""
        log = self.workdir / "jupyterlab.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def api(self, method: str, path: str) -> Any:
        """Call the Jupyter REST API with the token; returns the decoded JSON (or None)."""
        request = urllib.request.Request(
            f"{self.base_url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def __enter__(self) -> LabServer:
        self.workdir = Path(tempfile.mkdtemp(prefix="attnlab-lab-"))
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            self.stop()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _environment(self) -> dict[str, str]:
        """The server's (and so its kernels') environment, every state dir under workdir."""
        env = dict(os.environ)
        for var, sub in [
            ("HOME", "home"),
            ("JUPYTER_CONFIG_DIR", "jupyter-config"),
            ("JUPYTER_DATA_DIR", "jupyter-data"),
            ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
            ("MPLCONFIGDIR", "matplotlib"),
            ("IPYTHONDIR", "ipython"),
        ]:
            path = self.workdir / sub
            path.mkdir(parents=True, exist_ok=True)
            env[var] = str(path)
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTERLAB_SETTINGS_DIR", None)
        env.pop("JUPYTERLAB_WORKSPACES_DIR", None)
        python_path = [str(REPO_ROOT), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in python_path if p)
        # The course's server settings, as ./run.sh lab applies them (kernel websockets
        # without Nagle's delay: attnlab/kernel_websocket.py).
        env["JUPYTER_CONFIG_PATH"] = str(REPO_ROOT / "jupyter-config")
        # One OpenBLAS thread per kernel unless the environment says otherwise, as `./run.sh
        # test` sets it, so a suite started with plain pytest runs the lessons the same way.
        # OpenBLAS's threads spin while they wait for a core: with two busy processes on this
        # 2-core machine lesson 11 ran in 321 s (nbconvert; its training 187 s) with them and
        # in 26 s (9.9 s) with one thread, 16 s either way when idle. Lesson 11 limits its own
        # training through threadpoolctl (requirements.txt); in an environment without it, its
        # Run All outlasted RUN_ALL_S on a loaded machine.
        if self.blas_threads is not None:
            env.setdefault("OPENBLAS_NUM_THREADS", str(self.blas_threads))
        _write_lab_settings(Path(env["JUPYTER_CONFIG_DIR"]))
        return env

    def _command(self) -> list[str]:
        """The ``python -m jupyterlab`` command line."""
        return self._server_command(
            "jupyterlab",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        )

    def _server_command(self, module: str, *options: str) -> list[str]:
        """``python -m <module>`` serving this server's folder on 127.0.0.1, plus ``options``."""
        command = [
            sys.executable,
            "-m",
            module,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--IdentityProvider.token={self.token}",
            *options,
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")
        return command

    def _start(self) -> None:
        """Copy the lessons, launch the server and wait until /api/status answers."""
        ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        shutil.copytree(self.source, self.root_dir, ignore=ignore)
        self.port = self.port or free_port()
        env = self._environment()
        with open(self.workdir / "jupyterlab.log", "wb") as log:
            self.process = subprocess.Popen(
                self._command(),
                env=env,
                cwd=self.root_dir,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        """Poll the REST API until it answers; raise with the log if the server died."""
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {self.process.returncode}:\n{self.log_tail()}"
                )
            try:
                self.api("GET", "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
        message = f"JupyterLab did not answer within {SERVER_START_S} s"
        raise TimeoutError(f"{message}:\n{self.log_tail()}")

    def shutdown_kernels(self) -> None:
        """Ask the server to shut down every running kernel (best effort)."""
        try:
            for session in self.api("GET", "/api/sessions"):
                self.api("DELETE", f"/api/sessions/{session['id']}")
            for kernel in self.api("GET", "/api/kernels"):
                self.api("DELETE", f"/api/kernels/{kernel['id']}")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass

    def stop(self) -> None:
        """Stop this server and its kernels, by PID: SIGTERM, then SIGKILL what is left."""
        process, self.process = self.process, None
        if process.poll() is None:
            self._stop_running(process)

    def _stop_running(self, process: subprocess.Popen) -> None:
        """Shut kernels down via REST, terminate the server, kill any descendant left over."""
        self.shutdown_kernels()
        stop_tree(process, subprocess.Popen.terminate, wait_s=15)


# --------------------------------------------------------------------------- the browser


def launch_chromium(playwright: Playwright) -> Browser:
    """Launch Debian's Chromium headless with the flags that keep it off the network."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
    )


@dataclass
class RunResult:
    """What happened when all cells of a notebook were run."""

    requests: int
    errors: list[str]
    unexecuted: int
    widget_views: int
    attempts: int

    def problems(self) -> list[str]:
        """Human-readable failures: cells that raised and cells never run."""
        found = list(self.errors)
        if self.unexecuted:
            found.append(f"{self.unexecuted} code cell(s) were not executed (aborted or skipped)")
        return found


class LessonPage:
    """One notebook opened in JupyterLab in its own browser context."""

    def __init__(
        self, browser: Browser, server: LabServer, name: str, viewport: dict | None = None
    ) -> None:
        self.server = server
        self.name = name
        self.context = browser.new_context(viewport=viewport or VIEWPORT)
        self.context.add_init_script(path=str(HOOKS_JS))
        self.page: Page = self.context.new_page()
        self.page_errors: list[str] = []
        self.closed = False
        self.run: RunResult | None = None  # Run All's result, once run_all() has run
        self.run_all_clicks = 0
        self.run_all_clicked_at: float | None = None  # page ms, just before Run All's click
        self.page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))

    def close(self) -> None:
        """Close the browser context and shut down the notebook's kernel (once)."""
        if self.closed:
            return
        self.closed = True
        self.context.close()
        self.server.shutdown_kernels()

    def js(self, expression: str, arg: Any = None) -> Any:
        """Evaluate ``expression`` (a function of one argument) in the page."""
        return self.page.evaluate(expression, arg)

    # -- opening and running -----------------------------------------------------------

    def open(self) -> None:
        """Load the notebook and wait until its kernel is connected and quiet.

        Accepts a kernel-selection dialog if one appears. The toolbar's status reads "idle"
        briefly before the kernel connects, so readiness is taken from the kernel messages.
        """
        self.page.goto(self.server.notebook_url(self.name), wait_until="domcontentloaded")
        if not self.js("() => Boolean(window.__attnlab)"):
            raise RuntimeError(f"{HOOKS_JS} did not install window.__attnlab (a JS error?)")
        accept = self.page.locator(".jp-Dialog .jp-mod-accept")
        deadline = time.monotonic() + KERNEL_READY_S
        while not self.js("q => window.__attnlab.kernelReady(q)", KERNEL_QUIET_MS):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: kernel not ready after {KERNEL_READY_S} s")
            if accept.count():
                accept.first.click()
            self.page.wait_for_timeout(100)

    def _count(self, predicate: str) -> int:
        """How many recorded kernel messages satisfy the JS ``predicate`` (a function of m)."""
        return self.js(f"() => window.__attnlab.messages.filter({predicate}).length")

    def _click_run_all(self) -> None:
        """Run > Run All Cells, clicked again (up to 3 times) until an execute_request goes out.

        The first click after a page load sometimes starts nothing.
        """
        sent = self._count("m => m.type === 'execute_request'")
        for _ in range(3):
            self.run_all_clicks += 1
            self.page.locator("li.lm-MenuBar-item:has-text('Run')").click()
            self.run_all_clicked_at = self.js("() => performance.now()")
            self.page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()
            deadline = time.monotonic() + RUN_ALL_START_S
            while time.monotonic() < deadline:
                if self._count("m => m.type === 'execute_request'") > sent:
                    return
                self.page.wait_for_timeout(100)
            self.page.keyboard.press("Escape")
        raise TimeoutError(f"{self.name}: Run > Run All Cells started no cell after 3 clicks")

    def _wait_for_replies(self, since: int) -> None:
        """Wait until every execute_request after message ``since`` has its reply, kernel idle."""
        self.page.wait_for_function(
            "since => window.__attnlab.runFinished(since)",
            arg=since,
            timeout=RUN_ALL_S * 1000,
            polling=200,
        )

    def _summarise_run(self, since: int, attempts: int) -> RunResult:
        """Turn the kernel messages after ``since`` into a RunResult."""
        summary = self.js("since => window.__attnlab.runSummary(since)", since)
        return RunResult(
            requests=summary["requests"],
            errors=summary["errors"],
            unexecuted=summary["unexecuted"],
            widget_views=summary["widgetViews"],
            attempts=attempts,
        )

    def rendered_widgets(self) -> int:
        """How many widget outputs have a rendered ipywidgets view in the DOM."""
        return self.page.locator(".jp-OutputArea-output > .jupyter-widgets").count()

    def loading_widgets(self) -> int:
        """How many widget outputs still show the "Loading widget..." placeholder."""
        return len(self._widget_status_texts(WIDGET_LOADING_TEXT))

    def _widgets_appeared(self, expected: int) -> bool:
        """True once no widget is still loading and, if widgets were displayed, one rendered."""
        deadline = time.monotonic() + WIDGETS_APPEAR_S
        while self.loading_widgets() or (expected and not self.rendered_widgets()):
            if time.monotonic() > deadline:
                return False
            self.page.wait_for_timeout(250)
        return True

    def run_all(self) -> RunResult:
        """Run all cells from the Run menu and wait for the kernel to finish.

        Runs all once more if the kernel displayed widgets but none rendered (a first-run
        flake); the result is that of the last run.
        """
        for attempt in (1, 2):
            since = self.js("() => window.__attnlab.messages.length")
            self._click_run_all()
            self._wait_for_replies(since)
            result = self._summarise_run(since, attempt)
            if attempt == 2 or self._widgets_appeared(result.widget_views):
                self.run = result
                return result
        raise AssertionError("unreachable")

    def first_pictures(self) -> list[dict]:
        """Each explorer's ``name`` and ``at``, the page time of its figure's first picture."""
        return self.js("() => window.__attnlab.firstPictures()")

    def widget_render_errors(self) -> list[str]:
        """Texts of every "Error displaying widget" on the page."""
        return self._widget_status_texts(WIDGET_ERROR_TEXT)

    def _widget_status_texts(self, prefix: str) -> list[str]:
        """Texts of widget outputs whose whole content is a status starting with ``prefix``.

        The widget manager writes its status ("Loading widget...", "Error displaying
        widget...") as the only text of the output's own node; prose that merely mentions
        those words (a markdown cell, an explanation inside a widget) is not a status.
        """
        return self.js(
            """prefix => [...document.querySelectorAll('.jp-OutputArea-output')]
                .filter(el => el.childElementCount === 0
                    && el.textContent.trim().startsWith(prefix))
                .map(el => el.textContent.trim())""",
            prefix,
        )

    def screenshot(self, path: Path) -> None:
        """Full-page screenshot (for failures)."""
        self.page.screenshot(path=str(path), full_page=True)

    # -- explorers ---------------------------------------------------------------------

    def explorers(self) -> list[dict]:
        """Every explorer on the page: index, name, sliders, hasFigure, readouts count."""
        return self.js("() => window.__attnlab.explorers()")

    def explorer(self, index: int) -> Locator:
        """The root element of explorer ``index``."""
        return self.page.locator(EXPLORER).nth(index)

    def handle(self, explorer: int, slider: int, handle: int = 0) -> Locator:
        """The range input (role=slider) of slider ``slider`` inside an explorer."""
        return (
            self.explorer(explorer).locator(SLIDER).nth(slider).locator("input[type=range]")
        ).nth(handle)

    def snapshot(self, explorer: int) -> dict:
        """Frame id (changes with new pixels), readout texts, error text and slider states."""
        return self.js("i => window.__attnlab.snapshot(i)", explorer)

    def image_digest(self, explorer: int) -> str | None:
        """SHA-256 of the explorer's figure pixels as the page holds them."""
        return self.js("i => window.__attnlab.imageDigest(i)", explorer)

    def wait_quiet(self, explorer: int, quiet_ms: int = 300, timeout_ms: int = 10_000) -> bool:
        """Wait until the explorer stops changing and the kernel is idle; False on timeout."""
        return self.js(
            "([i, q, t]) => window.__attnlab.quiet(i, q, t)", [explorer, quiet_ms, timeout_ms]
        )

    def step(self, explorer: int, slider: int, key: str, handle: int = 0) -> dict:
        """Focus a slider handle, press ``key`` and time it until its last change is painted.

        Returns the page-time marks (ms) ``key``, ``drawn`` (first new pixels), ``load``,
        ``decoded``, ``last`` (the step's last change in the explorer: pixels, readout, ...;
        ``lastKind`` says which), ``paint`` (the end of the frame showing it) and ``outcome``:
        "changed", "unchanged" (the kernel handled the key and no new pixels came within
        STEP_GRACE_MS) or "timeout" (nothing settled within STEP_S).
        """
        target = self.handle(explorer, slider, handle)
        target.scroll_into_view_if_needed()
        target.focus()
        self.js("i => window.__attnlab.arm(i)", explorer)
        self.page.keyboard.press(key)
        return self.js("([t, g]) => window.__attnlab.collect(t, g)", [STEP_S * 1000, STEP_GRACE_MS])

    def burst(
        self, explorer: int, slider: int, presses: int = 20, interval_ms: float = 12.0
    ) -> dict:
        """Press arrow keys ``presses`` times, one every ``interval_ms``, like a held key.

        The keys go towards the slider's roomier side and turn back at its ends, so every
        press moves it. Returns the page's record (see ``collectBurst`` in hooks.js): the
        ``keys`` and ``inputs`` times, ``paint`` (the end of the frame showing the burst's
        last change), ``sent`` (messages the page sent for the slider), ``final`` (the last
        one, or None if the burst never settled), ``drewFinal`` and ``outcome``.
        """
        target = self.handle(explorer, slider)
        target.scroll_into_view_if_needed()
        target.focus()
        handle = self.snapshot(explorer)["sliders"][slider]["handles"][0]
        keys = burst_keys(handle, presses)
        self.js("([i, s]) => window.__attnlab.armBurst(i, s)", [explorer, slider])
        start = time.perf_counter()
        for n, key in enumerate(keys):
            delay = start + n * interval_ms / 1000 - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.page.keyboard.press(key)
        return self.js(
            "([t, s]) => window.__attnlab.collectBurst(t, s)", [STEP_S * 1000, BURST_SETTLE_MS]
        )

    def messages_since(self, t: float) -> list[dict]:
        """Kernel websocket messages recorded at page time >= ``t``."""
        return self.js("t => window.__attnlab.messages.filter(m => m.t >= t)", t)

    def clock_offset(self) -> float:
        """Date.now() minus (performance.timeOrigin + performance.now()), in ms."""
        return self.js("() => window.__attnlab.clockOffset()")

    def time_origin(self) -> float:
        """performance.timeOrigin (epoch ms of page time 0)."""
        return self.js("() => performance.timeOrigin")


def key_towards_free_side(state: dict, forward: bool = True) -> str:
    """ArrowRight unless the handle is at its max (or ``forward`` is False and it can go left).

    >>> key_towards_free_side({"now": 3.0, "min": 0.0, "max": 3.0})
    'ArrowLeft'
    >>> key_towards_free_side({"now": 0.0, "min": 0.0, "max": 3.0}, forward=False)
    'ArrowRight'
    """
    if forward:
        return "ArrowLeft" if state["now"] >= state["max"] else "ArrowRight"
    return "ArrowRight" if state["now"] <= state["min"] else "ArrowLeft"


def burst_keys(handle: dict, presses: int) -> list[str]:
    """Arrow keys for a burst: towards the roomier side, turning back at the ends.

    >>> burst_keys({"now": 1.0, "min": 0.0, "max": 4.0, "step": 1.0}, 6)
    ['ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowLeft', 'ArrowLeft', 'ArrowLeft']
    >>> burst_keys({"now": 0.5, "min": 0.0, "max": 0.5, "step": 0.1}, 2)
    ['ArrowLeft', 'ArrowLeft']
    """
    stops = round((handle["max"] - handle["min"]) / handle["step"])
    position = round((handle["now"] - handle["min"]) / handle["step"])
    step = 1 if stops - position >= position else -1
    keys = []
    for _ in range(presses):
        if not 0 <= position + step <= stops:
            step = -step
        position += step
        keys.append("ArrowRight" if step > 0 else "ArrowLeft")
    return keys


def kernel_breakdown(marks: dict, messages: list[dict], time_origin: float, offset: float) -> dict:
    """Split one step's latency into frontend, transfer, kernel, decode and paint (ms).

    The parts add up to ``paint - key``: "after_pixels" is the time from the new pixels to the
    step's last change in the explorer (e.g. its readout), "paint" from that change to the
    end of the frame that shows it. ``marks`` come from :meth:`LessonPage.step`; ``messages``
    are the websocket messages since the keydown; kernel header dates are epoch ms, mapped to
    page time with ``time_origin`` and the wall-clock ``offset``. Returns {} when the step's
    messages cannot be matched.
    """
    sent = next((m for m in messages if m["dir"] == "out" and m["type"] == "comm_msg"), None)
    if sent is None or marks.get("drawn") is None:
        return {}
    replies = [m for m in messages if m["dir"] == "in" and m["parent"] == sent["id"]]
    busy = next((m for m in replies if m.get("state") == "busy"), None)
    frame = next((m for m in replies if m["type"] == "comm_msg" and m["nbuf"] > 0), None)
    if busy is None or frame is None or busy["date"] is None or frame["date"] is None:
        return {}

    loaded = marks["load"] if marks.get("load") is not None else marks["decoded"]
    shown = max(marks["decoded"], marks.get("last") or marks["decoded"])  # the step's last change

    def page_time(epoch_ms: float) -> float:
        return epoch_ms - offset - time_origin

    return {
        "frontend_send": sent["t"] - marks["key"],
        "to_kernel": page_time(busy["date"]) - sent["t"],
        "kernel": frame["date"] - busy["date"],
        "to_page": frame["t"] - page_time(frame["date"]),
        "widget_update": marks["drawn"] - frame["t"],
        "load": loaded - marks["drawn"],
        "decode": marks["decoded"] - loaded,
        "after_pixels": shown - marks["decoded"],
        "paint": marks["paint"] - shown,
        "frame_bytes": frame["size"],
    }


@contextmanager
def opened_lesson(
    browser: Browser,
    server: LabServer,
    name: str,
    artifacts_dir: Path,
    viewport: dict | None = LAPTOP_VIEWPORT,
) -> Iterator[LessonPage]:
    """A lesson opened (at laptop size, 1366 x 768, unless told) with all cells run; closed after.

    ``server`` may be a JupyterLab or a Notebook 7 server (anything with ``notebook_url``).
    Fails (with a screenshot) if Run All leaves an error, as a learner would see it.
    """
    page = LessonPage(browser, server, name, viewport=viewport)
    try:
        page.open()
        run = page.run_all()
        problems = run.problems() + page.widget_render_errors()
        if problems:
            raise AssertionError(f"{name}: Run All failed: " + "; ".join(problems))
    except BaseException:
        stem = Path(name).stem
        page.screenshot(artifacts_dir / f"{stem}--{type(server).__name__}--FAILED-run-all.png")
        page.close()
        raise
    try:
        yield page
    finally:
        page.close()


def set_theme(page: LessonPage, theme: str) -> None:
    """Settings > Theme > ``theme`` from JupyterLab's menu."""
    page.page.locator("li.lm-MenuBar-item:has-text('Settings')").click()
    page.page.locator("li.lm-Menu-item:has-text('Theme')").first.hover()
    page.page.locator(
        f"li.lm-Menu-item[data-command='apputils:change-theme']:has-text('{theme}')"
    ).first.click()
    page.page.keyboard.press("Escape")
