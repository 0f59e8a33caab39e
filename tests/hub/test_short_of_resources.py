"""What a learner meets when the hub is short of resources, as docs/jupyterhub.md describes it.

Real limits, not simulated ones:

- The kernel runs out of memory: each server runs in a memory cgroup limited to
  ``MEMORY_LIMIT`` (tests/hub/limited_spawner.py, what Kubernetes and systemd do with
  ``Spawner.mem_limit``), and a cell allocates past it; the kernel's OOM killer kills the
  kernel, the server restarts it and tells the front end ("restarting"); the explorer's figure
  stops answering its sliders; the next check cell fails with ``NameError`` (the lesson's
  imports are gone); running the notebook from the top brings both back. The same for a kernel
  restarted from the menu.
- The server is culled: the real jupyterhub-idle-culler runs as a hub service with a timeout of
  a few seconds, and the hub hears of the server's activity every second or two (from the proxy
  and from the server itself), so the culler stops the server once it has really been idle
  that long. What was saved stays in the home folder; the kernel's state does not; starting the
  server again gives the notebook back.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time

import hubrun
import lesson_driver as ld
import pytest
from limited_spawner import oom_kills
from processes import stop_tree

pytestmark = pytest.mark.slow
LESSON = "01-dot-product-scores"
EXPLORER = "DotProductExplorer("
CHECK = "lesson1.dot.check(dot)"
MEMORY_LIMIT = 700 * 2**20  # a server with lesson 1 running holds about 300 MiB
CULL_TIMEOUT = 6  # seconds idle before the culler stops a server
CULLER_TOKEN = secrets.token_hex(16)
# The culler's service and role, as Zero to JupyterHub's chart gives them to it.
CULLER_SERVICE = f"""\
c.JupyterHub.services.append({{"name": "idle-culler", "api_token": {CULLER_TOKEN!r}}})
c.JupyterHub.load_roles.append({{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}})
"""
# The hub hears of activity every 2 s from the proxy and every second from each server (the
# defaults are 5 minutes, a tenth of a real culler's hour).
ACTIVITY = """\
c.JupyterHub.last_activity_interval = 2
c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] = "1"
"""


@pytest.fixture(scope="module")
def hub(proxy, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("short-hub") / "hub"
    settings = {"services": CULLER_SERVICE, "settings": ACTIVITY}
    try:
        running = hubrun.Hub(
            groups={"students": ["ada", "bo"]},
            workdir=workdir,
            memory_limit=MEMORY_LIMIT,
            **settings,
        ).__enter__()
    except hubrun.NoCgroup as error:  # the out-of-memory case is skipped, the rest runs
        print(f"no memory limit here: {error}")
        running = hubrun.Hub(
            groups={"students": ["ada", "bo"]}, workdir=workdir, **settings
        ).__enter__()
        running.no_cgroup = str(error)
    try:
        running.start_servers(["ada", "bo"])
        yield running
    finally:
        running.__exit__(None, None, None)


def restarting(run: ld.LessonRun, timeout: float = 30) -> bool:
    """Whether the server announces a restart of the kernel within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = run.kernel.receive(1)
        except Exception:  # websocket timeout: keep listening
            continue
        if message.get("msg_type") == "status" and message["content"].get("execution_state") in (
            "restarting",
            "autorestarting",
        ):
            return True
    return False


@pytest.mark.parametrize("how", ["killed", "restarted"])
def test_a_kernel_lost_mid_lesson_freezes_the_explorer_until_the_notebook_is_rerun(hub, how):
    ld.copy_lesson(hub, "ada", LESSON)
    run = ld.LessonRun(hub, "ada", LESSON, EXPLORER)
    try:
        run.run_until_explorer()
        assert run.move(0) is not None, "the explorer does not answer a slider to begin with"
        assert "not attempted yet" in run.kernel.execute(CHECK).text
        pid = run.pid()
        if how == "killed":  # a cell that needs more memory than the server may have
            if hub.cgroup is None:
                pytest.skip(f"no memory cgroup here: {getattr(hub, 'no_cgroup', '')}")
            cgroup = hub.cgroup / "ada"
            kills = oom_kills(cgroup)
            run.kernel.send(
                "shell",
                "execute_request",
                {
                    "code": f"import numpy as np\nhog = np.ones({MEMORY_LIMIT // 8}, dtype=float)",
                    "silent": False,
                    "store_history": True,
                    "user_expressions": {},
                    "allow_stdin": False,
                    "stop_on_error": True,
                },
            )
            assert restarting(run, timeout=60), "the server did not announce the kernel's restart"
            assert oom_kills(cgroup) > kills, "the kernel died, but not of the memory limit"
        else:
            run.kernel.restart()
        deadline = time.monotonic() + 60
        while True:  # the new kernel answers (a request sent while it was starting can be
            try:  # lost, so ask again rather than wait on it)
                new_pid = run.pid(timeout=5)
                break
            except (TimeoutError, ValueError):
                assert time.monotonic() < deadline, "no kernel after the restart"
        assert new_pid != pid

        # The explorer's sliders still move in the page, but nothing answers them.
        assert run.move(0, timeout=3) is None
        # The next check says what is missing: the lesson's first cell has not run.
        error = run.kernel.execute(CHECK).error
        assert error and error["ename"] == "NameError" and "lesson1" in error["evalue"]

        # Run All from the top: a new explorer that answers, and the check works again.
        run.run_until_explorer()
        assert run.move(0) is not None
        assert "not attempted yet" in run.kernel.execute(CHECK).text
    finally:
        run.close()


def test_a_culled_server_keeps_the_saved_notebook_and_loses_the_kernel(hub):
    path = ld.copy_lesson(hub, "bo", LESSON)
    model = hub.user_api("bo", "GET", f"/api/contents/{path}")["content"]
    answer = "def dot(q, k):\n    return sum(a * b for a, b in zip(q, k))\n"
    cell = next(
        c
        for c in model["cells"]
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "lesson1-dot"
    )
    cell["source"] = answer
    hub.user_api(
        "bo",
        "PUT",
        f"/api/contents/{path}",
        {"type": "notebook", "format": "json", "content": model},
    )
    kernel = hub.kernel("bo")
    assert kernel.execute("x = 41 + 1; print(x)").stdout.strip() == "42"
    kernel.ws.close()  # the learner closes the tab; the kernel stays, idle
    last_used = time.monotonic()

    # The real culler, as a hub service (the arguments Zero to JupyterHub's chart gives it,
    # with a timeout of seconds instead of an hour).
    log = hub.workdir / "idle-culler.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    env["JUPYTERHUB_API_TOKEN"] = CULLER_TOKEN
    with open(log, "wb") as out:
        culler = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterhub_idle_culler",
                f"--url={hub.url}/hub/api",
                f"--timeout={CULL_TIMEOUT}",
                "--cull-every=1",
                "--concurrency=10",
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + CULL_TIMEOUT + 60
        while hub.api("GET", "/users/bo")["servers"]:
            assert culler.poll() is None, f"the culler exited:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"not culled:\n{log.read_text()[-2000:]}"
            time.sleep(0.3)
        culled = time.monotonic()
    finally:
        stop_tree(culler, subprocess.Popen.terminate, wait_s=10)
    assert "Culling server bo" in log.read_text(), log.read_text()[-2000:]
    # Idle for the timeout: the culler went by the activity the hub heard of, not by the
    # server's start (the slack is the activity intervals).
    assert culled - last_used >= CULL_TIMEOUT - 3, f"culled after {culled - last_used:.1f} s"
    with pytest.raises(AssertionError, match=r"-> (424|503|404)"):
        hub.user_api("bo", "GET", "/api/kernels")

    hub.start_servers(["bo"])
    assert hub.user_api("bo", "GET", "/api/kernels") == []  # the kernel and its variables
    saved = hub.user_api("bo", "GET", f"/api/contents/{path}")["content"]
    kept = [
        c
        for c in saved["cells"]
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "lesson1-dot"
    ]
    assert "".join(kept[0]["source"]) == answer
