"""How many students one hub holds, measured open-loop: the load does not back off when it slows.

One private JupyterHub (tests/hub/hubrun.py: JupyterHub from PyPI, configurable-http-proxy from
npm, dummy login, local-process spawner, 127.0.0.1). For each N in ``--students`` the class
grows to N simulated students: each has its own server and runs lesson 1's code cells up to its
explorer in its own kernel (tests/hub/lesson_driver.py). Then, for ``--repeat`` windows per N,
every simulated student drags the explorer's sliders on a fixed, seeded schedule, whatever the
latency, through the hub's proxy and its own websocket, and every step's latency is timed from
the moment the schedule made it.

The schedule (what a learner does with an explorer). A drag lasts ``--drag`` seconds (uniform
between the two bounds) on one slider (picked at random); think time between drags is
``--think`` seconds (uniform); each student starts at a random point of a think time, so the
class does not drag in step. While dragging, the slider moves one step per animation frame
(``--drag-hz``, 60): attnlab/controls.js sends the value from the range input's ``input``
event with no throttle of its own, and Chromium fires ``input`` during a pointer drag at most
once per frame (pointer events are aligned to animation frames); lesson 1's angle slider has
360 steps over about 300 px, so a drag changes the value every frame.

What the front end does with those values, modelled here: attnlab's controls are anywidget
models, i.e. ipywidgets ``WidgetModel``s, and ipywidgets throttles every model to one update
in flight: ``save_changes`` sends at once when the model has no message pending, otherwise it
merges the new state into a buffer (the newest value wins) that it sends when the kernel's
``idle`` status for the pending message arrives (``_pending_msgs`` / ``_msg_buffer`` in
@jupyter-widgets/base, read in the installed jupyterlab_widgets 3.0). So each simulated
student has a sender on the schedule (a step never waits for a reply: it is sent, or
coalesced into the model's buffer) and a receiver that matches replies to steps: the pixels
of an update answer every step up to the one whose value it carried. A step's latency is its
scheduled time → the first pixel message that shows its value or a newer one (so the time a
step waits in the front end's buffer counts, and so does the benchmark's own lateness in
firing it: the time is from the schedule, not from the send).

Verdict per N, over all its windows: a step is *late* when its latency passes ``--bar``
(100 ms) and *lost* when nothing answers it within ``--lost-after`` seconds (a student whose
websocket dies and cannot be reopened is *dead*, and its steps keep being scheduled, so they are
lost too). N fails when any step is lost, any student dies, or more than ``--late-max``
per cent of its steps are late (10 %: a p90 within the bar). The *knee* is the first N that
fails; the run stops there. The sizing rule is the last N that passed, per core, at this
lesson's pace; the method line under it says what it rests on.

Printed per N: steps measured (the samples: every scheduled step of the measured part of each
window; the first ``--warmup`` seconds of each window run but are not counted), the updates
sent (after coalescing), p50/p90/p99, late %, lost, dead, the min–max of p90 over the repeats,
CPU (the machine's busy share of all cores; the kernels', the single-user servers' (without
their kernels), the hub's and proxy's, and this benchmark's own, each in cores), kernel CPU
per update sent, memory per student server (RSS of the server and its children, the kernel
included), and the 99th percentile of how late this benchmark fired its scheduled steps (if
that grows, the client itself is short of CPU, and its lateness is in the latencies).

``--browser`` adds one real learner in Chromium, logged in through the hub's login page, who
runs the lesson in JupyterLab and times key press → painted pixels on the same explorer
(benchmarks/latency.py's method, its own closed-loop steps) during each N's first window;
printed beside the simulated students' figures, not pooled with them (it includes the page's
paint), and not part of the verdict.

The simulated front end speaks what JupyterLab 4 speaks: the ``v1.kernel.websocket.jupyter.org``
websocket protocol (``--protocol json``: the legacy one, with which Jupyter Server parses and
re-encodes every message), and it hands each frame's readout to the Readout model as
attnlab/figure_canvas.js does (telling the kernel once, which then sends 3 messages per update
instead of 4). ``--pixel-ratio 2`` tells each student's figure canvas the screen's
devicePixelRatio, as its view does on a HiDPI screen (4 times the pixels drawn and diffed).
Printed per update besides kernel CPU: the single-user server's CPU, and the websocket bytes
and messages the students received; under the table, the load generator's own share of the
machine (it runs on the measured cores; a real class does that work in its browsers).
``--floor`` drags benchmarks/latency.py's minimal explorer instead: what every update costs
before an explorer does anything. ``--attnlab PATH`` runs the students' servers on another
checkout (e.g. ``git worktree add /tmp/before <commit>``): before and after on one machine.

Usage: ``python benchmarks/capacity.py`` (the defaults are the full run: about 10 minutes on
2 cores, never more than ``--time-cap``). Smoke test:
``python benchmarks/capacity.py --students 1,2 --repeat 1 --window 5 --min-samples 50``.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # tests/processes.py, which both harnesses use
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import hubrun  # noqa: E402
import lesson_driver as ld  # noqa: E402
import psutil  # noqa: E402

LESSON = "01-dot-product-scores"
EXPLORER = "DotProductExplorer("
EXPLORER_NAME = "dot-product"  # its .attnlab-explorer-<name> class in the page
LEARNER = "learner"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (inclusive method); nan for no values.

    >>> percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50)
    3.0
    """
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


# -- the schedule ---------------------------------------------------------------------------


@dataclass
class Step:
    """One scheduled slider step: when the schedule makes it, and on which slider."""

    at: float  # seconds from the window's start
    slider: int
    measured: bool  # False during the warm-up
    due: float = 0.0  # the loop's clock at ``at`` (set when the window starts)
    answered: float | None = None  # the loop's clock when pixels showed it (or a newer value)

    @property
    def latency(self) -> float:
        return self.answered - self.due


def schedule(
    rng: random.Random,
    sliders: int,
    drag: tuple[float, float],
    think: tuple[float, float],
    hz: float,
    warmup: float,
    until: float,
) -> list[Step]:
    """One student's steps from 0 to ``until`` seconds: drags at ``hz`` with think time between.

    >>> steps = schedule(random.Random(1), 2, (1.0, 1.0), (2.0, 2.0), 10, 0.0, 10.0)
    >>> len(steps) > 0 and all(0 <= s.at < 10 for s in steps)
    True
    """
    steps: list[Step] = []
    t = rng.uniform(0, think[1])  # somewhere in a think time
    while t < until:
        length = rng.uniform(*drag)
        slider = rng.randrange(sliders)
        n = max(1, round(length * hz))
        for i in range(n):
            at = t + i / hz
            if at >= until:
                break
            steps.append(Step(at, slider, at >= warmup))
        t += length + rng.uniform(*think)
    return steps


def schedules(args: argparse.Namespace, students: int, sliders: int, seed: int) -> list[list]:
    """Every student's steps for one window, long enough for ``--min-samples`` measured steps
    (but no longer than twice ``--window``)."""
    window = args.window
    while True:
        plans = [
            schedule(
                random.Random(seed * 1_000_003 + i),
                sliders,
                args.drag,
                args.think,
                args.drag_hz,
                args.warmup,
                args.warmup + window,
            )
            for i in range(students)
        ]
        measured = sum(s.measured for plan in plans for s in plan)
        if measured >= args.min_samples or window >= 2 * args.window or not students:
            return plans
        window += 1.0


# -- a simulated student ----------------------------------------------------------------------


@dataclass
class Student:
    """One simulated student's server and kernel, at the explorer."""

    user: str
    kernel_id: str
    sliders: list[dict]  # comm, min, max, step, value
    kernel_pid: int
    server_pid: int
    # per window
    steps: list[Step] = field(default_factory=list)
    sent: int = 0
    lag: list[float] = field(default_factory=list)  # how late each step was fired (s)
    dead: str = ""
    reconnects: int = 0
    bytes_in: int = 0  # websocket bytes received (every frame, status messages included)
    handed_over: set = field(default_factory=set)  # Readout models the page sets from frames
    frames_in: int = 0


V1 = "v1.kernel.websocket.jupyter.org"  # the protocol JupyterLab 4 speaks when the server has it


def encode_message(message: dict, protocol: str) -> str | bytes:
    """A kernel message as the front end writes it to the websocket: JSON (the legacy
    protocol) or v1's binary frame, made by Jupyter Server's own serializer."""
    if protocol != "v1":
        return json.dumps(message)
    from jupyter_server.services.kernels.connection.base import serialize_msg_to_ws_v1

    def pack(part: dict) -> bytes:
        return json.dumps(part).encode()

    return serialize_msg_to_ws_v1(message, message["channel"], pack)


def parse_frame(frame: str | bytes, protocol: str = "json") -> dict:
    """A kernel message from a websocket frame: header fields, parent header and content (the
    buffers are left out). ``protocol``: "json" (the legacy protocol: JSON text, or its binary
    form when there are buffers) or "v1" (Jupyter Server's binary v1 frame)."""
    if protocol == "v1":
        from jupyter_server.services.kernels.connection.base import deserialize_msg_from_ws_v1

        _channel, parts = deserialize_msg_from_ws_v1(frame)
        header = json.loads(parts[0])
        return {
            "msg_type": header.get("msg_type"),
            "header": header,
            "parent_header": json.loads(parts[1]),
            "content": json.loads(parts[3]),
        }
    if isinstance(frame, bytes):  # n, n offsets (big-endian), then the JSON and buffers
        count = int.from_bytes(frame[:4], "big")
        first = int.from_bytes(frame[4:8], "big")
        end = int.from_bytes(frame[8:12], "big") if count > 1 else len(frame)
        return json.loads(frame[first:end])
    return json.loads(frame)


class Driver:
    """Drives one student's window: a sender on the schedule and a receiver, both on one
    asyncio loop (all students share it), with ipywidgets' one-update-in-flight per model."""

    def __init__(
        self, hub: hubrun.Hub, student: Student, steps: list[Step], t0: float, protocol: str
    ) -> None:
        self.hub, self.s, self.t0, self.protocol = hub, student, t0, protocol
        self.s.steps, self.s.sent, self.s.lag = steps, 0, []
        self.s.bytes_in = self.s.frames_in = 0
        for step in steps:
            step.due = t0 + step.at
        self.values = {sl["comm"]: sl["value"] for sl in student.sliders}
        self.forward = {sl["comm"]: True for sl in student.sliders}
        self.pending: dict[str, str] = {}  # model (comm) -> msg_id in flight
        self.buffer: dict[str, int] = {}  # model -> newest step index waiting to be sent
        self.carries: dict[str, int] = {}  # msg_id -> the step index its value came from
        self.answered_upto = -1  # every step up to this index has its pixels
        self.fired = -1  # steps fired so far
        self.ws = None
        self.session = uuid.uuid4().hex

    async def connect(self) -> None:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = (
            f"ws://127.0.0.1:{self.hub.port}/user/{self.s.user}/api/kernels/"
            f"{self.s.kernel_id}/channels?session_id={self.session}"
        )
        request = HTTPRequest(url, headers={"Authorization": f"token {self.hub.token}"})
        self.ws = await websocket_connect(
            request,
            max_message_size=512 * 2**20,
            subprotocols=[V1] if self.protocol == "v1" else None,
        )
        if self.protocol == "v1" and self.ws.selected_subprotocol != V1:
            raise RuntimeError(f"the server did not take {V1}: {self.ws.selected_subprotocol}")

    def _next_value(self, slider: dict) -> float:
        comm, step = slider["comm"], slider.get("step") or 1
        value = self.values[comm] + (step if self.forward[comm] else -step)
        if not slider["min"] <= value <= slider["max"]:
            self.forward[comm] = not self.forward[comm]
            value = self.values[comm] + (step if self.forward[comm] else -step)
        self.values[comm] = round(value, 10)
        return self.values[comm]

    def _write_comm_msg(self, comm: str, data: dict) -> str | None:
        """Send a ``comm_msg`` with ``data`` to ``comm`` as the page would; its msg_id, or None
        when the websocket is closed (the receiver reopens it or declares it dead)."""
        msg_id = uuid.uuid4().hex
        message = {
            "header": {
                "msg_id": msg_id,
                "msg_type": "comm_msg",
                "username": self.s.user,
                "session": self.session,
                "date": "",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "content": {"comm_id": comm, "data": data},
            "channel": "shell",
            "buffers": [],
        }
        frame = encode_message(message, self.protocol)
        try:
            self.ws.write_message(frame, binary=isinstance(frame, bytes))
        except Exception:
            return None
        return msg_id

    def _send(self, comm: str, index: int) -> None:
        state = {"value": self.values[comm]}
        msg_id = self._write_comm_msg(
            comm, {"method": "update", "state": state, "buffer_paths": []}
        )
        if msg_id is None:
            return
        self.pending[comm] = msg_id
        self.carries[msg_id] = index
        self.s.sent += 1

    async def send_all(self) -> None:
        """Fire every step at its scheduled time, never waiting for a reply."""
        loop = asyncio.get_running_loop()
        for index, step in enumerate(self.s.steps):
            delay = step.due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self.s.lag.append(max(0.0, loop.time() - step.due))
            self.fired = index
            slider = self.s.sliders[step.slider]
            comm = slider["comm"]
            self._next_value(slider)  # the input moves whether or not anything answers
            if self.s.dead or self.ws is None:
                continue
            if comm in self.pending:  # ipywidgets: one update in flight; newest value waits
                self.buffer[comm] = index
            else:
                self._send(comm, index)

    def _answer(self, index: int, when: float) -> None:
        for i in range(self.answered_upto + 1, index + 1):
            self.s.steps[i].answered = when
        self.answered_upto = max(self.answered_upto, index)

    async def receive_all(self, stop: asyncio.Event) -> None:
        """Match replies to steps until ``stop``; reopen a dropped websocket once."""
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            reading = asyncio.ensure_future(self.ws.read_message())
            stopping = asyncio.ensure_future(stop.wait())
            done, _ = await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if reading not in done:
                reading.cancel()
                return
            stopping.cancel()
            frame = reading.result()
            when = loop.time()
            if frame is None:  # closed: reopen once, as JupyterLab does, else dead
                if self.s.reconnects >= 1:
                    self.s.dead = "websocket closed twice"
                    return
                self.s.reconnects += 1
                self.pending.clear()  # a reply to an update sent before can no longer come
                try:
                    await self.connect()
                except Exception as error:
                    self.s.dead = f"reconnect failed: {type(error).__name__}: {error}"
                    return
                for comm, index in list(self.buffer.items()):  # what waited goes now
                    del self.buffer[comm]
                    self._send(comm, index)
                continue
            self.s.frames_in += 1
            self.s.bytes_in += len(frame)
            message = parse_frame(frame, self.protocol)
            parent = message.get("parent_header", {}).get("msg_id")
            if parent not in self.carries:
                continue
            kind = message.get("msg_type")
            content = message.get("content", {})
            if kind == "comm_msg" and content.get("data", {}).get("method") == "custom":
                self._answer(self.carries[parent], when)
                self._hand_over_readout(content)
            elif kind == "status" and content.get("execution_state") == "idle":
                # The model's pending message is done: send what waited in its buffer.
                for comm, msg_id in list(self.pending.items()):
                    if msg_id == parent:
                        del self.pending[comm]
                        if comm in self.buffer:
                            self._send(comm, self.buffer.pop(comm))
                if self.carries[parent] > self.answered_upto:  # an update that drew nothing
                    self._answer(self.carries[parent], when)

    def _hand_over_readout(self, content: dict) -> None:
        """Do what the page's figure canvas does with the first frame that names a Readout
        model: it sets that model from the frames and tells the kernel once
        (attnlab/figure_canvas.js), which then stops sending the Readout's state."""
        readout = content.get("data", {}).get("content", {}).get("readout_model")
        if not isinstance(readout, str) or readout in self.s.handed_over:
            return
        handoff = {"kind": "readout-handoff", "model": readout}
        if self._write_comm_msg(content["comm_id"], {"method": "custom", "content": handoff}):
            self.s.handed_over.add(readout)

    def done(self) -> bool:
        return self.fired == len(self.s.steps) - 1 and self.answered_upto == self.fired


async def run_window(
    hub: hubrun.Hub,
    students: list[Student],
    plans: list[list[Step]],
    lost_after: float,
    protocol: str = "v1",
) -> None:
    """Every student's schedule from now; returns once every step is answered or lost."""
    loop = asyncio.get_running_loop()
    t0 = loop.time() + 1.0  # time to open the websockets
    drivers = [Driver(hub, s, plan, t0, protocol) for s, plan in zip(students, plans, strict=True)]
    for d in drivers:
        d.s.dead, d.s.reconnects = "", 0
    results = await asyncio.gather(*(d.connect() for d in drivers), return_exceptions=True)
    for d, result in zip(drivers, results, strict=True):
        if isinstance(result, BaseException):
            d.s.dead = f"no websocket: {type(result).__name__}: {result}"
    stop = asyncio.Event()
    receivers = [asyncio.ensure_future(d.receive_all(stop)) for d in drivers if d.ws is not None]
    await asyncio.gather(*(d.send_all() for d in drivers))
    deadline = loop.time() + lost_after
    while loop.time() < deadline and not all(d.done() or d.s.dead for d in drivers):
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.gather(*receivers, return_exceptions=True)
    for d in drivers:
        if d.ws is not None:
            d.ws.close()
        for step in d.s.steps:  # an answer after the limit is lost all the same
            if step.answered is not None and step.latency > lost_after:
                step.answered = None


# -- the class ----------------------------------------------------------------------------------


class Class:
    """The simulated students' servers and kernels."""

    def __init__(
        self, hub: hubrun.Hub, workers: int, pixel_ratio: float = 1.0, floor: bool = False
    ) -> None:
        self.hub, self.workers, self.pixel_ratio, self.floor = hub, workers, pixel_ratio, floor
        self.students: list[Student] = []
        self.attnlab_seen: set[str] = set()  # the folders the students' kernels import it from

    def _setup(self, user: str) -> Student:
        """A student at the explorer; a setup whose websocket drops (a busy machine while the
        class grows) is started again once, in a new kernel, and said so."""
        import websocket

        try:
            return self._setup_once(user)
        except (ConnectionError, websocket.WebSocketConnectionClosedException) as error:
            print(f"  {user}: setup lost its websocket ({error}); starting it again", flush=True)
            return self._setup_once(user)

    def _setup_once(self, user: str) -> Student:
        if self.floor:  # benchmarks/latency.py's minimal explorer: one slider moves one dot
            from latency import FLOOR_CELL

            definition, shown = FLOOR_CELL.rstrip().rsplit("\n", 1)  # the class; its display
            run = ld.LessonRun(self.hub, user, "floor", shown, cells=[definition, shown])
        else:
            ld.copy_lesson(self.hub, user, LESSON)
            run = ld.LessonRun(self.hub, user, LESSON, EXPLORER)
        run.run_until_explorer()
        if self.pixel_ratio != 1:
            run.set_pixel_ratio(self.pixel_ratio)
        pid = run.pid()
        where = run.kernel.execute("import attnlab; print(attnlab.__file__)").stdout.strip()
        self.attnlab_seen.add(str(Path(where).parent.parent))
        run.kernel.ws.close()  # the kernel stays; each window opens a websocket of its own
        sliders = [{k: s[k] for k in ("comm", "min", "max", "step", "value")} for s in run.sliders]
        return Student(user, run.kernel.id, sliders, pid, self.hub.server_pid(user))

    def grow_to(self, n: int) -> None:
        """Start servers and lesson kernels until there are ``n`` simulated students."""
        new = [f"sim{i:03d}" for i in range(len(self.students), n)]
        if not new:
            return
        for user in new:
            self.hub.api("POST", f"/users/{user}")
        self.hub.start_servers(new)
        with ThreadPoolExecutor(self.workers) as pool:
            self.students.extend(pool.map(self._setup, new))

    def memory_per_server(self) -> float | None:
        """Mean RSS (MiB) of a student's server with all its children (kernel included)."""
        sizes = []
        for s in self.students:
            try:
                sizes.append(tree_mib(s.server_pid))
            except psutil.NoSuchProcess:
                pass
        return statistics.mean(sizes) if sizes else None


def tree_mib(pid: int) -> float:
    """RSS (MiB) of a process and all its children."""
    root = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


@dataclass
class Meter:
    """CPU seconds of the machine and of each kind of process, between two readings."""

    hub: hubrun.Hub
    klass: Class

    def read(self) -> dict[str, float]:
        machine = psutil.cpu_times()
        hub_family = [self.hub.process.pid, *(c.pid for c in _children(self.hub.process.pid))]
        servers = {s.server_pid for s in self.klass.students}
        kernels = [s.kernel_pid for s in self.klass.students]
        me = psutil.Process().cpu_times()
        return {
            "wall": time.monotonic(),
            "busy": machine.user + machine.system + machine.nice + machine.irq + machine.softirq,
            "kernels": cpu_seconds(kernels),
            "servers": cpu_seconds(list(servers)),
            "hub": cpu_seconds([p for p in hub_family if p not in servers and p not in kernels]),
            "client": me.user + me.system,
        }


def _children(pid: int) -> list[psutil.Process]:
    """The hub's own children that are not user servers or kernels (the proxy)."""
    try:
        return [
            c
            for c in psutil.Process(pid).children()
            if "jupyterhub-singleuser" not in " ".join(c.cmdline())
        ]
    except psutil.NoSuchProcess:
        return []


# -- the real learner (optional) ------------------------------------------------------------


class LearnerServer:
    """What lab_harness.LessonPage needs from a server: the learner's server on the hub."""

    def __init__(self, hub: hubrun.Hub) -> None:
        self.hub = hub

    def notebook_url(self, name: str) -> str:
        return f"{self.hub.url}/user/{LEARNER}/lab/tree/{name}?reset"

    def shutdown_kernels(self) -> None:
        for kernel in self.hub.user_api(LEARNER, "GET", "/api/kernels"):
            self.hub.user_api(LEARNER, "DELETE", f"/api/kernels/{kernel['id']}")


class Learner:
    """The real learner: logs in through the hub's login page, opens the lesson in JupyterLab
    and runs it all once (before the first N); then times slider steps on the explorer with
    benchmarks/latency.py's method, during each N's first window."""

    def __init__(self, browser, hub: hubrun.Hub) -> None:
        import lab_harness as lab
        import latency

        self.latency = latency
        self.page = lab.LessonPage(browser, LearnerServer(hub), f"{LESSON}.ipynb")
        page = self.page.page
        page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
        page.fill("#username_input", LEARNER)
        page.fill("#password_input", "x")
        page.click("#login_submit")
        page.wait_for_url(f"**/user/{LEARNER}/**", timeout=120_000)
        self.page.open()
        run = self.page.run_all()
        for problem in run.problems():
            print(f"  warning: {problem}", flush=True)
        self.clock = latency.page_clock(self.page)
        infos = [i for i in self.page.explorers() if i["name"] == EXPLORER_NAME]
        if not infos:
            raise LookupError(f"no {EXPLORER_NAME} explorer in the page")
        self.explorer = infos[0]

    def measure(self, steps: int) -> list[float]:
        """``steps`` timed slider steps (ms): key press → the painted frame."""
        result = self.latency.measure_explorer(self.page, self.explorer, steps, 1, self.clock)
        for failure in result.failures[:3]:
            print(f"  warning: {failure}", flush=True)
        return [sample.total_ms for sample in result.samples]

    def close(self) -> None:
        self.page.close()


# -- one N ----------------------------------------------------------------------------------------


@dataclass
class Window:
    latencies: list[float]  # ms, answered measured steps
    steps: int  # measured steps
    sent: int
    lost: int
    dead: list[str]
    reconnects: int
    lag_ms: list[float]
    cpu: dict[str, float]  # cores (the machine: busy share 0-1 of all cores)
    kernel_ms_per_update: float
    server_ms_per_update: float
    bytes_per_update: float  # websocket bytes the students received
    frames_per_update: float  # websocket messages the students received
    browser: list[float] = field(default_factory=list)


def measure_window(
    hub: hubrun.Hub, klass: Class, args: argparse.Namespace, seed: int, learner=None
) -> Window:
    """One window of the whole class on its schedule (and the real learner, if any)."""
    sliders = min(len(s.sliders) for s in klass.students)
    plans = schedules(args, len(klass.students), sliders, seed)
    meter = Meter(hub, klass)
    before = meter.read()
    timed: list[float] = []
    errors: list[BaseException] = []

    def class_loop() -> None:  # a thread of its own: Playwright's loop may own this one
        try:
            asyncio.run(run_window(hub, klass.students, plans, args.lost_after, args.protocol))
        except BaseException as error:  # raised below
            errors.append(error)

    thread = threading.Thread(target=class_loop, daemon=True)
    thread.start()
    if learner is not None:  # the real learner's steps while the class drags
        time.sleep(args.warmup + 1.0)
        timed = learner.measure(args.browser_steps)
    thread.join()
    if errors:
        raise errors[0]
    after = meter.read()
    wall = after["wall"] - before["wall"]
    cpu = {k: (after[k] - before[k]) / wall for k in before if k != "wall"}
    cpu["busy"] /= psutil.cpu_count()
    latencies, steps, lost, lag = [], 0, 0, []
    for s in klass.students:
        lag.extend(1000 * x for x in s.lag)
        for step in s.steps:
            if not step.measured:
                continue
            steps += 1
            if step.answered is None:
                lost += 1
            else:
                latencies.append(1000 * step.latency)
    sent = sum(s.sent for s in klass.students)
    kernel_cpu = (after["kernels"] - before["kernels"]) * 1000
    server_cpu = (after["servers"] - before["servers"]) * 1000

    def per_update(total: float) -> float:
        return total / sent if sent else float("nan")

    return Window(
        latencies=latencies,
        steps=steps,
        sent=sent,
        lost=lost,
        dead=[f"{s.user}: {s.dead}" for s in klass.students if s.dead],
        reconnects=sum(s.reconnects for s in klass.students),
        lag_ms=lag,
        cpu=cpu,
        kernel_ms_per_update=per_update(kernel_cpu),
        server_ms_per_update=per_update(server_cpu),
        bytes_per_update=per_update(sum(s.bytes_in for s in klass.students)),
        frames_per_update=per_update(sum(s.frames_in for s in klass.students)),
        browser=timed,
    )


@dataclass
class Row:
    """One N over its repeats."""

    n: int
    windows: list[Window]
    mem: float | None
    bar: float
    late_max: float

    @property
    def latencies(self) -> list[float]:
        return [x for w in self.windows for x in w.latencies]

    @property
    def steps(self) -> int:
        return sum(w.steps for w in self.windows)

    @property
    def lost(self) -> int:
        return sum(w.lost for w in self.windows)

    @property
    def dead(self) -> int:
        return sum(len(w.dead) for w in self.windows)

    @property
    def late_pct(self) -> float:
        late = sum(x > self.bar for x in self.latencies)
        return 100 * late / self.steps if self.steps else float("nan")

    def cpu(self, key: str) -> float:
        return statistics.mean(w.cpu[key] for w in self.windows)

    @property
    def passed(self) -> bool:
        return self.lost == 0 and self.dead == 0 and self.late_pct <= self.late_max

    def why(self) -> str:
        reasons = []
        if self.lost:
            reasons.append(f"{self.lost} lost")
        if self.dead:
            reasons.append(f"{self.dead} dead")
        if self.late_pct > self.late_max:
            reasons.append(f"{self.late_pct:.1f} % late > {self.late_max:g} %")
        return ", ".join(reasons) or "pass"


def print_row(r: Row) -> None:
    lat = r.latencies
    p90s = [percentile(w.latencies, 90) for w in r.windows]
    browser = [x for w in r.windows for x in w.browser]
    print(
        f"  N = {r.n}: {r.steps} steps ({sum(w.sent for w in r.windows)} updates sent), "
        f"p50 {percentile(lat, 50):.1f} / p90 {percentile(lat, 90):.1f} / "
        f"p99 {percentile(lat, 99):.1f} ms, p90 over {len(r.windows)} repeats "
        f"{min(p90s):.1f}–{max(p90s):.1f} ms, late {r.late_pct:.1f} %, lost {r.lost}, "
        f"dead {r.dead}: {'PASS' if r.passed else 'FAIL (' + r.why() + ')'}",
        flush=True,
    )
    for w in r.windows:
        for d in w.dead:
            print(f"    dead: {d}", flush=True)
    if browser:
        print(
            f"    real learner in Chromium: {len(browser)} steps, p50 "
            f"{percentile(browser, 50):.1f} / p90 {percentile(browser, 90):.1f} ms",
            flush=True,
        )


def print_table(rows: list[Row], args: argparse.Namespace) -> None:
    cores = psutil.cpu_count()
    print(
        f"\n{'N':>3} {'steps':>6} {'sent':>6} {'p50':>6} {'p90':>6} {'p99':>7} "
        f"{'p90 min–max':>13} {'late%':>6} {'lost':>5} {'dead':>4} {'verdict':>7} "
        f"{'machine':>7} {'kernels':>7} {'servers':>7} {'hub+chp':>7} {'bench':>6} "
        f"{'k ms/upd':>8} {'s ms/upd':>8} {'KB/upd':>6} {'msg/upd':>7} {'MiB/srv':>7} "
        f"{'lag p99':>7}"
    )
    for r in rows:
        lat = r.latencies
        p90s = [percentile(w.latencies, 90) for w in r.windows]
        spread = f"{min(p90s):.0f}–{max(p90s):.0f}"
        lag = [x for w in r.windows for x in w.lag_ms]
        mem = f"{r.mem:7.0f}" if r.mem is not None else f"{'-':>7}"
        kms = statistics.mean(w.kernel_ms_per_update for w in r.windows)
        sms = statistics.mean(w.server_ms_per_update for w in r.windows)
        kb = statistics.mean(w.bytes_per_update for w in r.windows) / 1000
        msgs = statistics.mean(w.frames_per_update for w in r.windows)
        print(
            f"{r.n:>3} {r.steps:>6} {sum(w.sent for w in r.windows):>6} "
            f"{percentile(lat, 50):6.1f} {percentile(lat, 90):6.1f} {percentile(lat, 99):7.1f} "
            f"{spread:>13} {r.late_pct:6.1f} {r.lost:>5} {r.dead:>4} "
            f"{'pass' if r.passed else 'FAIL':>7} {100 * r.cpu('busy'):6.0f}% "
            f"{r.cpu('kernels'):7.2f} {r.cpu('servers'):7.2f} {r.cpu('hub'):7.2f} "
            f"{r.cpu('client'):6.2f} {kms:8.1f} {sms:8.1f} {kb:6.1f} {msgs:7.2f} {mem} "
            f"{percentile(lag, 99):7.1f}"
        )
    print(
        "(ms unless stated; machine: busy share of all cores; kernels, servers, hub+chp, bench: "
        "CPU in cores; k ms/upd, s ms/upd: kernel and single-user server CPU per update sent; "
        "KB/upd, msg/upd: websocket bytes (1000s) and messages the students received per update "
        "sent; lag p99: how late this benchmark fired its steps)"
    )
    failed = [r for r in rows if not r.passed]
    passed = [r for r in rows if r.passed]
    if failed:
        knee = failed[0]
        print(f"knee: N = {knee.n} simulated students fail ({knee.why()})")
    else:
        print(f"knee: not reached; every N up to {rows[-1].n} passed" if rows else "no rows")
    ok = [r for r in passed if not failed or r.n < failed[0].n]
    if ok:
        best = ok[-1].n
        bound = "" if failed else "at least "
        print(
            f"sizing rule: {bound}{best} student{'s' if best > 1 else ''} on {cores} cores "
            "at this lesson's pace, "
            f"{bound}{best / cores:.1f} students per core "
            f"(the last N that passed{'' if failed else '; no N failed'})"
        )
    else:
        print("sizing rule: none: the first N already failed")
    if rows:  # this benchmark runs on the measured cores: its share is load a real hub has not
        last = (ok or rows)[-1]
        print(
            f"load generator: {last.cpu('client'):.2f} cores at N = {last.n} "
            f"({100 * last.cpu('client') / cores:.0f} % of the machine's {cores} cores; the "
            "simulated students' own work, which a real class does in its browsers)"
        )
    samples = min((r.steps for r in rows), default=0)
    print(
        f"method: {measured(args)}; schedule: drags of "
        f"{args.drag[0]:g}–{args.drag[1]:g} s at {args.drag_hz:g} steps/s, think "
        f"{args.think[0]:g}–{args.think[1]:g} s, seeded, open loop, one update in flight per "
        f"slider (ipywidgets); bar {args.bar:g} ms, late ≤ {args.late_max:g} %, lost after "
        f"{args.lost_after:g} s; ≥ {samples} steps per N over {args.repeat} repeats of "
        f"{args.window:g} s (+{args.warmup:g} s warm-up); websocket protocol "
        f"{V1 if args.protocol == 'v1' else 'legacy (JSON)'}; devicePixelRatio "
        f"{args.pixel_ratio:g}; {cores} cores, "
        f"{psutil.virtual_memory().total / 2**30:.1f} GiB"
    )


# -- command line -------------------------------------------------------------------------------


def measured(args: argparse.Namespace) -> str:
    """What the students drag, in words."""
    if args.floor:
        return "the floor (benchmarks/latency.py's minimal explorer: one slider moves one dot)"
    return f"lesson {LESSON} ({EXPLORER.rstrip('(')})"


def _pair(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    return float(low), float(high or low)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--students", default="2,4,8,12,16,24,32", help="numbers of simulated students, rising")
    add("--repeat", type=int, default=3, help="windows per N (the spread of p90)")
    add("--window", type=float, default=15.0, help="measured seconds per window")
    add("--warmup", type=float, default=2.0, help="seconds per window before counting")
    add("--min-samples", type=int, default=200, help="measured steps per window at least")
    add("--drag", type=_pair, default=(0.5, 1.5), help="a drag's length, s: low,high")
    add("--think", type=_pair, default=(2.0, 6.0), help="think time between drags, s: low,high")
    add("--drag-hz", type=float, default=60.0, help="steps per second while dragging")
    add("--bar", type=float, default=100.0, help="a step later than this (ms) is late")
    add("--late-max", type=float, default=10.0, help="per cent of late steps an N may have")
    add("--lost-after", type=float, default=10.0, help="seconds without a reply: lost")
    add("--seed", type=int, default=1)
    add("--setup-workers", type=int, default=2, help="students set up at once")
    add(
        "--protocol",
        choices=("v1", "json"),
        default="v1",
        help="the students' websocket protocol: v1 (JupyterLab 4's) or json (the legacy one)",
    )
    add("--pixel-ratio", type=float, default=1.0, help="the students' devicePixelRatio")
    add(
        "--attnlab",
        type=Path,
        default=None,
        help="the checkout the students' servers and kernels import attnlab from (default: "
        "the installed one), e.g. a git worktree of an older commit for a before/after run",
    )
    add(
        "--floor",
        action="store_true",
        help="drag the floor instead of lesson 1's explorer (a minimal explorer: what every "
        "update costs before an explorer does anything)",
    )
    add("--browser", action="store_true", help="a real learner in Chromium as well")
    add("--browser-steps", type=int, default=20, help="the real learner's steps per N")
    add("--keep-going", action="store_true", help="measure the N after the knee as well")
    add("--time-cap", type=float, default=630.0, help="start no N or window past this (s)")
    args = parser.parse_args(argv)
    args.students = [int(n) for n in args.students.split(",")]
    if args.floor and args.browser:
        parser.error("--browser times lesson 1's explorer: not with --floor")
    if args.students != sorted(args.students) or args.students[0] < 1:
        parser.error("--students must be rising and at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.monotonic()
    print(
        f"capacity (open loop): {measured(args)}, N = {args.students}, {args.repeat} windows "
        f"of {args.window:g} s per N, protocol {args.protocol}, devicePixelRatio "
        f"{args.pixel_ratio:g}, {psutil.cpu_count()} cores, load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    rows: list[Row] = []
    environment = {"PYTHONPATH": str(args.attnlab.resolve())} if args.attnlab else {}
    with hubrun.Hub(groups={"students": [LEARNER]}, environment=environment) as hub:
        klass = Class(hub, args.setup_workers, args.pixel_ratio, args.floor)
        playwright = browser = learner = None
        if args.browser:
            import lab_harness as lab
            from playwright.sync_api import sync_playwright

            hub.start_servers([LEARNER])
            ld.copy_lesson(hub, LEARNER, LESSON)
            lab._write_lab_settings(hub.home(LEARNER) / ".jupyter")
            playwright = sync_playwright().start()
            browser = lab.launch_chromium(playwright)
        try:
            if browser is not None:
                learner = Learner(browser, hub)
            per_window = args.warmup + 2 * args.window + args.lost_after / 2
            per_student = 8.0 / args.setup_workers  # seconds; measured once a class has grown
            for n in args.students:
                grow = (n - len(klass.students)) * per_student
                if time.monotonic() - began + grow + per_window > args.time_cap:
                    print(f"time cap of {args.time_cap:.0f} s: N = {n} not started", flush=True)
                    break
                started = time.monotonic()
                grown = n - len(klass.students)
                klass.grow_to(n)
                per_student = max(per_student, (time.monotonic() - started) / max(1, grown))
                print(
                    f"N = {n}: class ready in {time.monotonic() - started:.0f} s "
                    f"(load {os.getloadavg()[0]:.2f}; attnlab from {sorted(klass.attnlab_seen)})",
                    flush=True,
                )
                windows = []
                for rep in range(args.repeat):
                    if rep and time.monotonic() - began + per_window > args.time_cap:
                        print(f"  time cap: {rep} of {args.repeat} windows", flush=True)
                        break
                    seed = args.seed * 10_000 + n * 100 + rep
                    windows.append(
                        measure_window(hub, klass, args, seed, learner if rep == 0 else None)
                    )
                rows.append(Row(n, windows, klass.memory_per_server(), args.bar, args.late_max))
                print_row(rows[-1])
                if not rows[-1].passed and not args.keep_going:
                    break
        finally:
            if learner is not None:
                learner.close()
            if browser is not None:
                browser.close()
                playwright.stop()
    print_table(rows, args)
    print(f"wall time {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
