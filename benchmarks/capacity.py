"""How many students one hub holds: N simulated learners and one real one in Chromium.

One private JupyterHub (tests/hub/hubrun.py: JupyterHub from PyPI, configurable-http-proxy from
npm, dummy login, local-process spawner, 127.0.0.1). For each N in ``--students`` it brings N
simulated students up to N: each has its own server, runs the lesson's code cells up to the
explorer in its own kernel and then moves the explorer's sliders at a learner's pace (one step
every ``--pace`` seconds, jittered), sending the same widget ``comm_msg`` JupyterLab sends
(tests/hub/lesson_driver.py). Meanwhile one real learner, logged in through the hub's login
page in Chromium, runs the same lesson in JupyterLab and times slider → new pixels on the
same explorer with the method and code of benchmarks/latency.py (key press in the page to the
next painted frame after the canvas got the pixels).

Printed per N: the real learner's median and p90 latency, the simulated learners' own
round-trip median (their step → the pixels message; "lost": steps with no pixels within 30 s,
"dead": simulated students whose stepping failed), memory per student server (RSS of the
server process and all its children, the kernel included, mean over the simulated students),
kernel CPU per slider step (CPU seconds of the simulated students' kernels over the window,
divided by the steps they completed), the 1-minute load average and the cores. Then the first
N whose p90 passes 100 ms. The machine may be shared: the load average says how busy it was.

Usage: ``python benchmarks/capacity.py [--students 0,4,8,16,24,32] [--pace 0.5]
[--steps 20] [--time-cap 900]``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # tests/processes.py, which both harnesses use
sys.path.insert(0, str(ROOT / "tests" / "hub"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import hubrun  # noqa: E402
import lab_harness as lab  # noqa: E402
import latency  # noqa: E402
import lesson_driver as ld  # noqa: E402
import psutil  # noqa: E402

LESSON = "01-dot-product-scores"
EXPLORER = "DotProductExplorer("
EXPLORER_NAME = "dot-product"  # its .attnlab-explorer-<name> class in the page
BAR_MS = 100.0
LEARNER = "learner"


@dataclass
class Simulated:
    """One simulated student: a kernel at the explorer and a thread moving its sliders."""

    run: ld.LessonRun
    kernel_pid: int
    server_pid: int
    latencies: list[float] = field(default_factory=list)
    steps: int = 0
    misses: int = 0
    failed: str = ""  # why its stepping stopped, if it did


class Class:
    """The simulated students, stepping in background threads between start() and stop()."""

    def __init__(self, hub: hubrun.Hub, pace: float) -> None:
        self.hub, self.pace = hub, pace
        self.students: list[Simulated] = []
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def grow_to(self, n: int) -> None:
        """Start servers and lesson kernels until there are ``n`` simulated students."""
        new = [f"sim{i:03d}" for i in range(len(self.students), n)]
        if not new:
            return
        for user in new:
            self.hub.api("POST", f"/users/{user}")
        self.hub.start_servers(new)
        for user in new:
            ld.copy_lesson(self.hub, user, LESSON)
            run = ld.LessonRun(self.hub, user, LESSON, EXPLORER)
            run.run_until_explorer()
            self.students.append(Simulated(run, run.pid(), self.hub.server_pid(user)))

    def _loop(self, student: Simulated, seed: int) -> None:
        rng = random.Random(seed)
        slider = 0
        while not self.stopping.is_set():
            try:
                took = student.run.move(slider, timeout=30)
            except Exception as error:  # reported in the table, never hidden
                student.failed = f"{type(error).__name__}: {error}"
                return
            student.steps += 1
            if took is None:
                student.misses += 1
            else:
                student.latencies.append(took)
            slider += 1
            self.stopping.wait(max(0.0, self.pace * rng.uniform(0.5, 1.5) - (took or 0)))

    def start(self) -> None:
        self.stopping.clear()
        for s in self.students:
            # A fresh websocket per round: the server drops connections that sat idle
            # (unanswered pings) while the class grew, and a step sent into a dropped
            # connection would count as lost.
            s.run.kernel.ws.close()
            s.run.kernel.connect()
            s.latencies.clear()
            s.steps = s.misses = s.run.kernel.reconnects = 0
            s.failed = ""
        self.threads = [
            threading.Thread(target=self._loop, args=(s, i), daemon=True)
            for i, s in enumerate(self.students)
        ]
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        """Stop stepping; a thread still waiting after 40 s has its websocket closed."""
        self.stopping.set()
        deadline = time.monotonic() + 40
        for t in self.threads:
            t.join(timeout=max(0.1, deadline - time.monotonic()))
        for s, t in zip(self.students, self.threads, strict=True):
            if t.is_alive():
                s.failed = s.failed or "stuck: websocket closed by the benchmark"
                s.run.kernel.ws.close()
                t.join(timeout=5)

    def kernel_cpu(self) -> float:
        """CPU seconds used so far by the simulated students' kernels."""
        total = 0.0
        for s in self.students:
            try:
                times = psutil.Process(s.kernel_pid).cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def memory_per_server(self) -> float | None:
        """Mean RSS (MiB) of a student's server with all its children (kernel included)."""
        sizes = []
        for s in self.students:
            try:
                sizes.append(server_mib(s.server_pid))
            except psutil.NoSuchProcess:
                pass
        return statistics.mean(sizes) if sizes else None


class LearnerServer:
    """What lab_harness.LessonPage needs from a server: the learner's server on the hub."""

    def __init__(self, hub: hubrun.Hub) -> None:
        self.hub = hub

    def notebook_url(self, name: str) -> str:
        return f"{self.hub.url}/user/{LEARNER}/lab/tree/{name}?reset"

    def shutdown_kernels(self) -> None:
        for kernel in self.hub.user_api(LEARNER, "GET", "/api/kernels"):
            self.hub.user_api(LEARNER, "DELETE", f"/api/kernels/{kernel['id']}")


def log_in(page: lab.LessonPage, hub: hubrun.Hub) -> None:
    """The real learner logs in on the hub's login page (dummy authenticator)."""
    page.page.goto(f"{hub.url}/hub/login", wait_until="domcontentloaded")
    page.page.fill("#username_input", LEARNER)
    page.page.fill("#password_input", "x")
    page.page.click("#login_submit")
    page.page.wait_for_url(f"**/user/{LEARNER}/**", timeout=120_000)


def server_mib(pid: int) -> float:
    """RSS (MiB) of a process and all its children."""
    server = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [server, *server.children(recursive=True)]) / 2**20


def measure_learner(browser, hub: hubrun.Hub, steps: int) -> tuple[list[float], float]:
    """The real learner opens the lesson, runs all and times ``steps`` slider steps (ms);
    also returns the MiB of the learner's server with its lesson kernel running."""
    page = lab.LessonPage(browser, LearnerServer(hub), f"{LESSON}.ipynb")
    try:
        log_in(page, hub)
        page.open()
        run = page.run_all()
        for problem in run.problems():
            print(f"  warning: {problem}", flush=True)
        clock = latency.page_clock(page)
        infos = [i for i in page.explorers() if i["name"] == EXPLORER_NAME]
        if not infos:
            print(f"  no {EXPLORER_NAME} explorer in the page", flush=True)
            return [], float("nan")
        result = latency.measure_explorer(page, infos[0], steps, 1, clock)
        for failure in result.failures[:3]:
            print(f"  warning: {failure}", flush=True)
        return [s.total_ms for s in result.samples], server_mib(hub.server_pid(LEARNER))
    finally:
        page.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--students",
        default="0,4,8,16,24,32",
        help="comma-separated numbers of simulated students, increasing",
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=0.5,
        help="seconds between one simulated student's slider steps",
    )
    parser.add_argument("--steps", type=int, default=20, help="real learner's timed steps per N")
    parser.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="seconds the class steps before the real learner starts timing",
    )
    parser.add_argument(
        "--time-cap",
        type=float,
        default=900.0,
        help="stop before starting an N once this many seconds have passed",
    )
    args = parser.parse_args(argv)
    args.students = [int(n) for n in args.students.split(",")]
    if args.students != sorted(args.students) or args.students[0] < 0:
        parser.error("--students must be increasing and non-negative")
    return args


def row(n: int, learner: list[float], klass: Class, cpu: float, load: float) -> dict:
    sims = [t * 1000 for s in klass.students for t in s.latencies]
    steps = sum(s.steps - s.misses for s in klass.students)
    misses = sum(s.misses for s in klass.students)
    for s in klass.students:
        if s.failed:
            print(f"  {s.run.user} stopped stepping: {s.failed}", flush=True)
    return {
        "n": n,
        "median": statistics.median(learner) if learner else float("nan"),
        "p90": latency.percentile(learner, 90) if learner else float("nan"),
        "sim_median": statistics.median(sims) if sims else float("nan"),
        "sim_steps": steps,
        "misses": misses,
        "reconnects": sum(s.run.kernel.reconnects for s in klass.students),
        "failed": sum(bool(s.failed) for s in klass.students),
        "mem": klass.memory_per_server(),
        "cpu_ms": 1000 * cpu / steps if steps else float("nan"),
        "load": load,
    }


def print_table(rows: list[dict], learner_mem: float | None) -> None:
    print(
        f"\n{'N':>4} {'median':>8} {'p90':>8} {'sim med':>8} {'sim steps':>9} {'lost':>5} "
        f"{'dead':>4} {'MiB/server':>10} {'kernel CPU/step':>15} {'load1':>6}"
        "   (ms unless stated)"
    )
    for r in rows:
        mem = f"{r['mem']:10.0f}" if r["mem"] is not None else f"{'-':>10}"
        print(
            f"{r['n']:>4} {r['median']:8.1f} {r['p90']:8.1f} {r['sim_median']:8.1f} "
            f"{r['sim_steps']:>9} {r['misses']:>5} {r['failed']:>4} {mem} "
            f"{r['cpu_ms']:13.1f}ms "
            f"{r['load']:6.2f}"
        )
    if learner_mem is not None:
        print(f"real learner's server (JupyterLab session, lesson kernel): {learner_mem:.0f} MiB")
    over = [r["n"] for r in rows if r["p90"] > BAR_MS]
    if over:
        print(
            f"p90 passes {BAR_MS:.0f} ms at N = {over[0]} simulated students "
            f"(+1 real learner) on {os.cpu_count()} cores"
        )
    else:
        print(
            f"p90 stayed under {BAR_MS:.0f} ms up to N = {rows[-1]['n']} (+1 real learner) "
            f"on {os.cpu_count()} cores"
        )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not lab.chromium_available():
        print(f"no Chromium at {lab.CHROMIUM}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    began = time.monotonic()
    rows: list[dict] = []
    learner_mem = None
    print(
        f"capacity: lesson {LESSON}, pace {args.pace} s/step per simulated student, "
        f"{args.steps} real steps per N, {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 2**30:.1f} GiB",
        flush=True,
    )
    with hubrun.Hub(groups={"students": [LEARNER]}) as hub, sync_playwright() as playwright:
        hub.start_servers([LEARNER])
        ld.copy_lesson(hub, LEARNER, LESSON)
        lab._write_lab_settings(hub.home(LEARNER) / ".jupyter")
        browser = lab.launch_chromium(playwright)
        klass = Class(hub, args.pace)
        try:
            for n in args.students:
                if time.monotonic() - began > args.time_cap:
                    print(f"time cap of {args.time_cap:.0f} s reached before N = {n}")
                    break
                print(f"N = {n}: starting servers and lesson kernels ...", flush=True)
                klass.grow_to(n)
                cpu0 = klass.kernel_cpu()
                klass.start()  # CPU and steps are both counted from here to stop()
                time.sleep(args.warmup if n else 0)
                learner, learner_mem = measure_learner(browser, hub, args.steps)
                klass.stop()
                cpu = klass.kernel_cpu() - cpu0
                load = os.getloadavg()[0]
                rows.append(row(n, learner, klass, cpu, load))
                r = rows[-1]
                print(
                    f"  N = {n}: median {r['median']:.1f} ms, p90 {r['p90']:.1f} ms, "
                    f"MiB/server {r['mem'] or 0:.0f}, kernel CPU/step {r['cpu_ms']:.1f} ms, "
                    f"lost {r['misses']}, dead {r['failed']}, load {load:.2f}",
                    flush=True,
                )
                if r["p90"] > BAR_MS:
                    break
        finally:
            klass.stop()
            browser.close()
    print_table(rows, learner_mem)
    return 0


if __name__ == "__main__":
    sys.exit(main())
