"""The README's first command, ``./run.sh lab``, starts JupyterLab on the course at lesson 0.

The server is started the way a learner starts it (only ``--no-browser`` and a port/token are
added), with private Jupyter and home directories, and stopped by its process group. It must
answer on its REST API, serve notebooks/, point the browser at lesson 0, and load the course's
server extension.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "jupyter").exists(), reason="needs the .venv that run.sh makes"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_sh_lab_opens_lesson_0(tmp_path):
    port, token = free_port(), secrets.token_hex(8)
    env = {**os.environ, "HOME": str(tmp_path)}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        env[var] = str(tmp_path / var.lower())
    env.pop("JUPYTER_CONFIG_PATH", None)
    command = ["bash", str(ROOT / "run.sh"), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}"]  # fmt: skip
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True, cwd=tmp_path)  # fmt: skip
    try:
        status = None
        for _ in range(120):
            try:
                url = f"http://127.0.0.1:{port}/api/status?token={token}"
                with urllib.request.urlopen(url, timeout=2) as response:
                    status = response.status
                break
            except OSError:
                assert server.poll() is None, log.read_text()[-2000:]
                time.sleep(0.5)
        text = log.read_text()
        assert status == 200, text[-2000:]
        assert f"Serving notebooks from local directory: {ROOT / 'notebooks'}" in text
        assert "attnlab: kernel websockets send without Nagle's delay" in text
        opens = list((tmp_path / "jupyter_runtime_dir").glob("jpserver-file-to-run-*-open.html"))
        assert opens and "tree/00-start-here.ipynb" in opens[0].read_text(), opens
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
