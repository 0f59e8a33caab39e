"""Memory of one student's server after each lesson, every lesson, on a real JupyterHub.

One private JupyterHub (tests/hub/hubrun.py, as benchmarks/capacity.py starts it) and one
student. Every lesson ``notebooks/NN-*.ipynb`` is copied into the student's home and run top to
bottom, code cell by code cell, in a kernel of the student's server, through the hub's proxy
and the kernel's websocket, as tests/hub/lesson_driver.py runs a lesson (a front end with no
browser: the explorers' widgets open their comms, nobody looks at them).

Two passes:

* **fresh**: each lesson in a kernel of its own, shut down before the next lesson starts
  (a learner who closes each notebook, or restarts the kernel, before the next);
* **cumulative**: each lesson in a kernel of its own, all left running (a learner who opens
  lesson after lesson and never closes one): the server's total after lesson k holds the
  kernels of lessons 0..k.

Printed after each lesson: RSS of the server and all its children (its kernels included),
USS of the same (memory only those processes hold: what a second student would not share
with them), RSS of that lesson's kernel, the kernel's own peak RSS while it ran the lesson
(``ru_maxrss``: what a memory limit must leave room for, since a cell's temporary arrays are
gone by the time the lesson ends), the seconds the lesson took and how many cells raised.

Usage: ``python benchmarks/server_memory.py [--lessons 0-10] [--passes fresh,cumulative]``
(every lesson by default).
A smoke test: ``--lessons 0,1 --passes fresh``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "hub"))

import hubrun  # noqa: E402
import lesson_driver as ld  # noqa: E402
import psutil  # noqa: E402

USER = "student"
PEAK = "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
PID = "import os; print(os.getpid())"


def lessons() -> list[str]:
    """The learner notebooks' names, lesson by lesson (``00-start-here``, ...)."""
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))


def mib(process: psutil.Process, unique: bool = False) -> float:
    info = process.memory_full_info() if unique else process.memory_info()
    return (info.uss if unique else info.rss) / 2**20


def tree(pid: int) -> list[psutil.Process]:
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def run_lesson(hub: hubrun.Hub, lesson: str, timeout: float) -> tuple[hubrun.Kernel, dict]:
    """Run every code cell of ``lesson`` in a new kernel; returns the kernel and figures."""
    ld.copy_lesson(hub, USER, lesson)
    kernel = hub.kernel(USER)
    started = time.monotonic()
    errors = []
    for i, code in enumerate(ld.code_cells(lesson)):
        result = kernel.execute(code, timeout=timeout)
        if result.error is not None:
            errors.append(f"cell {i}: {result.error['ename']}: {result.error['evalue'][:80]}")
    took = time.monotonic() - started
    pid = int(kernel.execute(PID).stdout)
    peak_kib = int(kernel.execute(PEAK).stdout)
    time.sleep(1.0)  # let the server settle after the last reply
    server = tree(hub.server_pid(USER))
    figures = {
        "server_rss": sum(mib(p) for p in server),
        "server_uss": sum(mib(p, unique=True) for p in server),
        "kernel_rss": mib(psutil.Process(pid)),
        "kernel_peak": peak_kib / 1024,
        "kernels": len(hub.user_api(USER, "GET", "/api/kernels")),
        "seconds": took,
        "errors": errors,
    }
    return kernel, figures


def shut_down(hub: hubrun.Hub, kernel: hubrun.Kernel) -> None:
    """Close the kernel's session (which shuts the kernel down) and wait until it is gone."""
    kernel.close()
    deadline = time.monotonic() + 30
    while any(k["id"] == kernel.id for k in hub.user_api(USER, "GET", "/api/kernels")):
        if time.monotonic() > deadline:
            print(f"  warning: kernel {kernel.id} still running after 30 s", flush=True)
            return
        time.sleep(0.2)


def print_row(lesson: str, f: dict) -> None:
    print(
        f"{lesson:<28} {f['server_rss']:9.0f} {f['server_uss']:9.0f} {f['kernel_rss']:9.0f} "
        f"{f['kernel_peak']:9.0f} {f['kernels']:>7} {f['seconds']:7.1f} {len(f['errors']):>6}",
        flush=True,
    )
    for error in f["errors"][:3]:
        print(f"    {error}", flush=True)


HEADER = (
    f"{'after lesson':<28} {'srv RSS':>9} {'srv USS':>9} {'kern RSS':>9} {'kern peak':>9} "
    f"{'kernels':>7} {'s':>7} {'errors':>6}   (MiB; srv = server + all its kernels)"
)


def parse_lessons(text: str, names: list[str]) -> list[str]:
    """``0-9`` or ``0,1,8``: the learner notebooks of those lessons."""
    wanted: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        wanted.extend(range(int(low), int(high or low) + 1))
    by_number = {int(name[:2]): name for name in names}
    return [by_number[n] for n in wanted if n in by_number]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", default="0-99", help="e.g. 0-10 or 0,1,8 (default: all)")
    parser.add_argument("--passes", default="fresh,cumulative", help="fresh, cumulative or both")
    parser.add_argument("--cell-timeout", type=float, default=600.0, help="seconds per cell")
    args = parser.parse_args(argv)
    chosen = parse_lessons(args.lessons, lessons())
    passes = [p for p in args.passes.split(",") if p]
    if not chosen or not set(passes) <= {"fresh", "cumulative"}:
        parser.error("no such lessons, or passes other than fresh and cumulative")
    began = time.monotonic()
    total = psutil.virtual_memory().total / 2**30
    print(f"server memory: {len(chosen)} lessons, {psutil.cpu_count()} cores, {total:.1f} GiB")
    with hubrun.Hub(groups={"students": [USER]}) as hub:
        hub.start_servers([USER])
        server = tree(hub.server_pid(USER))
        print(
            f"idle server, no kernel: RSS {sum(mib(p) for p in server):.0f} MiB, "
            f"USS {sum(mib(p, unique=True) for p in server):.0f} MiB"
        )
        for name in passes:
            print(
                f"\n{name}: "
                + (
                    "a kernel per lesson, shut down after it"
                    if name == "fresh"
                    else "a kernel per lesson, all left running"
                )
            )
            print(HEADER)
            kept = []
            for lesson in chosen:
                kernel, figures = run_lesson(hub, lesson, args.cell_timeout)
                print_row(lesson, figures)
                if name == "fresh":
                    shut_down(hub, kernel)
                else:
                    kept.append(kernel)
            for kernel in kept:
                shut_down(hub, kernel)
    print(f"wall time {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
