"""Servers the tests start, stopped by PID: a free port, a process's family, a safe kill.

Shared by the JupyterLab harness (tests/browser/lab_harness.py) and the JupyterHub harness
(tests/hub/hubrun.py). Linux /proc only; elsewhere a process has no known descendants.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks), to recognise a PID later."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def family(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of every live descendant of ``pid``."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        start = start_time(child)
        if start is not None:
            found.append((child, start))
        todo.extend(children.get(child, []))
    return found


def kill_left_over(members: list[tuple[int, str]]) -> None:
    """SIGKILL each ``(pid, start time)`` that is still the process that started then."""
    for pid, start in members:
        if start_time(pid) == start:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def stop_tree(process: subprocess.Popen, stop, wait_s: float) -> None:
    """Stop ``process`` (``stop(process)`` sends the polite signal), wait ``wait_s``, then
    SIGKILL it and anything of its family still running, by PID."""
    members = family(process.pid)
    if process.poll() is None:
        stop(process)
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
    kill_left_over(members)
