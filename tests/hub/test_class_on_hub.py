"""A whole class on a real JupyterHub: one instructor, nine students, one graded lesson.

Everything goes through the servers, as in a classroom: users log in on the hub's login page
(dummy authenticator); the instructor's server runs nbgrader's Formgrader (its REST API:
generate, release, collect, autograde, feedback); each student's server runs nbgrader's
Assignment List (its REST API: fetch, submit, fetch feedback) and saves the answered notebook
through the Jupyter contents API, as JupyterLab does on Ctrl-S. The hub loads the course's
shipped fragment (deploy/hub/attnlab_hub.py), which gives each role its nbgrader config from
deploy/nbgrader/.

Every server runs as the same Unix user here (SimpleLocalProcessSpawner), so nbgrader's own
idea of the student (the Unix user name) would be the same for all nine: the test checks that
the submissions are nonetheless filed under the hub user names, which is what the student config
(student_id from $JUPYTERHUB_USER) is for, and that nothing is lost: every submission collected,
graded with the score its answers deserve, feedback delivered to its owner, and a student who
submits twice is graded on the later submission (a worse one, so "latest" is not "best").
"""

from __future__ import annotations

import copy
import os
import pwd
import re
import time
import urllib.parse

import graded_course as gc
import hubrun
import pytest

pytestmark = pytest.mark.slow
LESSON = "01-dot-product-scores"
COURSE = "attnlab"
STUDENTS = [f"student{n:02d}" for n in range(1, 10)]
TWICE = STUDENTS[-1]  # submits a solved notebook, then one with an exercise wrong


def notebook_path() -> str:
    return f"{LESSON}/{LESSON}.ipynb"


def formgrader(hub: hubrun.Hub, action: str, student: str | None = None) -> dict:
    """POST one Formgrader action for the lesson in the instructor's server; must succeed."""
    where = f"/formgrader/api/assignment/{LESSON}/{action}"
    if student is not None:
        where = f"/formgrader/api/submission/{LESSON}/{student}/{action}"
    result = hub.user_api("instructor", "POST", where, timeout=600)
    assert result.get("success"), (
        f"formgrader {action} {student or ''}: "
        f"{result.get('log', '')[-3000:]}\n{result.get('error')}"
    )
    return result


def assignment_list(hub: hubrun.Hub, student: str, action: str) -> list[dict]:
    """POST one Assignment List action (fetch, submit, fetch_feedback) in a student's server;
    must succeed. Returns the student's assignment list afterwards."""
    result = hub.user_api(
        student,
        "POST",
        f"/assignments/{action}",
        {"assignment_id": LESSON, "course_id": COURSE},
        timeout=300,
    )
    assert result.get("success"), f"{student}: {action} failed: {result}"
    return result["value"]


def save(hub: hubrun.Hub, student: str, nb: dict) -> None:
    """Save a notebook into the student's copy of the lesson, as JupyterLab does."""
    hub.user_api(
        student,
        "PUT",
        f"/api/contents/{notebook_path()}",
        {"type": "notebook", "format": "json", "content": nb},
    )


@pytest.fixture(scope="module")
def hub(proxy, tmp_path_factory):
    work = tmp_path_factory.mktemp("class-hub")
    exchange = work / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    settings = {
        "ATTNLAB_NBGRADER_CONFIG": str(hubrun.DEPLOY / "nbgrader"),
        "ATTNLAB_EXCHANGE": str(exchange),
    }
    # Only the instructor is listed: the students land in the group "students" when they log in
    # (the hub fragment's post_auth_hook), as on a real hub.
    groups = {"instructors": ["instructor"]}
    with hubrun.Hub(groups=groups, environment=settings, workdir=work / "hub") as running:
        # The instructor's copy of the course (a clone of this repository in ~/attnlab-course).
        gc.make_course(running.home("instructor") / "attnlab-course")
        yield running


def test_a_class_moves_a_lesson_there_and_back(hub):
    users = ["instructor", *STUDENTS]
    for user in users:  # every user logs in on the hub's login page
        assert f"/user/{user}/" in hub.log_in(user) or "/hub/spawn" in hub.log_in(user)
    hub.start_servers(users)
    assert sorted(hub.api("GET", "/groups/students")["users"]) == STUDENTS

    # Every server runs as our Unix user, so nbgrader's default student id cannot tell the
    # students apart: the student config must.
    assert {os.stat(f"/proc/{hub.server_pid(u)}").st_uid for u in users} == {os.getuid()}
    unix_name = pwd.getpwuid(os.getuid()).pw_name

    # The instructor generates and releases the lesson from their Formgrader.
    formgrader(hub, "assign")
    formgrader(hub, "release")
    course = hub.home("instructor") / "attnlab-course"
    source_nb = gc.read(course / "source" / LESSON / f"{LESSON}.ipynb")
    total = sum(points for _, _, points in gc.graded_answers(source_nb))
    assert total > 0

    # Each student fetches it from their Assignment List, answers, saves and submits.
    expected: dict[str, tuple[str, float]] = {}
    for n, student in enumerate(STUDENTS):
        listed = assignment_list(hub, student, "fetch")
        assert any(a["assignment_id"] == LESSON and a["status"] == "fetched" for a in listed)
        released = hub.user_api(student, "GET", f"/api/contents/{notebook_path()}")["content"]
        kinds = list(gc.submissions(LESSON, source_nb, copy.deepcopy(released), cheats=False))
        if student == TWICE:
            by_kind = {kind: (nb, score) for kind, nb, score in kinds}
            save(hub, student, by_kind["solved"][0])
            assignment_list(hub, student, "submit")
            time.sleep(1.1)  # a later timestamp, as a student coming back to it would have
            nb, score = by_kind["one-wrong"]
            kind = "one-wrong (second submission)"
            assert score < total
        else:
            kind, nb, score = kinds[n % len(kinds)]
        save(hub, student, nb)
        assignment_list(hub, student, "submit")
        expected[student] = (kind, score)
    assert {kind for kind, _ in expected.values()} >= {"blank", "solved", "one-wrong"}

    inbound = sorted(
        p.name.split("+")[0]
        for p in (hub.workdir.parent / "exchange").glob(f"{COURSE}/inbound/*+{LESSON}+*")
    )
    assert inbound == sorted([*STUDENTS, TWICE]), "submissions not filed under hub user names"
    assert unix_name not in inbound

    # The instructor collects, autogrades each submission and releases the feedback.
    formgrader(hub, "collect")
    collected = sorted(p.name for p in (course / "submitted").iterdir())
    assert collected == sorted(STUDENTS), f"collected {collected}"
    for student in STUDENTS:
        formgrader(hub, "autograde", student)
    formgrader(hub, "generate_feedback")
    formgrader(hub, "release_feedback")

    graded = {
        row["student"]: (row["score"], row["max_score"])
        for row in hub.user_api("instructor", "GET", f"/formgrader/api/submissions/{LESSON}")
        if row["autograded"]
    }
    wrong = {
        s: (graded.get(s), kind, score)
        for s, (kind, score) in expected.items()
        if graded.get(s) is None or abs(graded[s][0] - score) > 1e-9 or graded[s][1] != total
    }
    assert not wrong, f"student: (graded, submitted kind, expected score): {wrong}"

    # Every student fetches their own feedback, which shows their own score.
    for student in STUDENTS:
        assignment_list(hub, student, "fetch_feedback")
        folder = hub.user_api(student, "GET", f"/api/contents/{LESSON}/feedback")["content"]
        assert len(folder) == 1, f"{student}: feedback folders {folder}"
        html = urllib.parse.quote(f"{folder[0]['path']}/{LESSON}.html")
        page = hub.user_api(student, "GET", f"/api/contents/{html}")
        shown = re.search(r"Score: ([0-9.]+) / ([0-9.]+)\)</h4>", page["content"])
        assert shown, f"{student}: no total score in the feedback page"
        assert (float(shown[1]), float(shown[2])) == (expected[student][1], total), student
