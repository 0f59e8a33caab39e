"""What a learner meets when the hub is short of resources, as docs/jupyterhub.md describes it.

- The kernel is killed under a running lesson (the kernel out of memory: the OOM killer) or
  restarted: the server restarts it and tells the front end ("restarting"); the explorer's
  figure stops answering its sliders; the next check cell fails with ``NameError`` (the
  lesson's imports are gone); running the notebook from the top brings both back.
- The server is culled (idle too long) or stopped: what was saved stays in the home folder;
  the kernel's state does not; starting the server again gives the notebook back.
"""

from __future__ import annotations

import os
import signal
import time

import hubrun
import lesson_driver as ld
import pytest

pytestmark = pytest.mark.slow
LESSON = "01-dot-product-scores"
EXPLORER = "DotProductExplorer("
CHECK = "lesson1.dot.check(dot)"


@pytest.fixture(scope="module")
def hub(proxy, tmp_path_factory):
    with hubrun.Hub(
        groups={"students": ["ada", "bo"]}, workdir=tmp_path_factory.mktemp("short-hub") / "hub"
    ) as running:
        running.start_servers(["ada", "bo"])
        yield running


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
        if how == "killed":  # what the kernel of a server over its memory limit meets
            os.kill(pid, signal.SIGKILL)
            assert restarting(run), "the server did not announce the kernel's restart"
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
    kernel.ws.close()

    hub.api("DELETE", "/users/bo/server")  # what jupyterhub-idle-culler does
    deadline = time.monotonic() + 60
    while hub.api("GET", "/users/bo")["servers"]:
        assert time.monotonic() < deadline, "the server did not stop"
        time.sleep(0.3)
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
