"""The shared exchange decides who submitted and when: a red team's attacks, graded for real.

The Littlest JupyterHub model of tests/hub/test_private_submissions.py (real Unix users made with
``useradd``, the exchange folder as deploy/tljh/setup.sh makes it, deploy/nbgrader/'s per-role
configs, stock nbgrader run as each user with ``runuser``), one lesson (03-softmax), and the
attacks an outside red team made as students, each graded by stock nbgrader with the shipped
configuration, whose collect and release_feedback are attnlab.grading.exchange's:

* bob's submission is a folder of symbolic links, to the instructor's source notebook (worked
  solutions), the quiz keys and the gradebook;
* dave's links to alice's collected notebook;
* eve makes a folder named as alice's, dated 2099, holding a blank notebook;
* carol submits after the due date and rewrites the timestamp.txt of her inbound folder to a time
  before it (a "zero" late penalty), and empties its submission_secret.txt (it stopped
  release_feedback for every student after her);
* bob makes folders whose names hold a time python-dateutil raises on (``... ..+x``, in his own
  name and a made-up student's: it stopped collect for the whole class);
* bob makes a folder whose name has no time in it, and frank submits 20,000 two-byte files:
  collect must still collect everyone else, exit 0, and skip both quickly.

Each student's score is read from the gradebook and printed beside the fair one (what their own
work earns), with what the exchange released to each attacker as feedback. With
``ATTNLAB_STOCK_EXCHANGE=1`` the instructor's commands run nbgrader's own collect and
release_feedback instead: the same test then prints the scores stock nbgrader gives, and fails.
"""

from __future__ import annotations

import datetime
import html
import json
import os
import re
import shlex
import time
from pathlib import Path

import graded_course as gc
import pytest
from nbgrader.utils import notebook_hash
from test_private_submissions import Hub, runner_python
from test_private_submissions import tljh as tljh  # the fixture: real Unix users, removed after

pytestmark = pytest.mark.slow

LESSON = "03-softmax"
COURSE = "attnlab"
STOCK = os.environ.get("ATTNLAB_STOCK_EXCHANGE") == "1"
STOCK_OPTIONS = (
    "--ExchangeFactory.collect=nbgrader.exchange.default.collect.ExchangeCollect",
    "--ExchangeFactory.release_feedback="
    "nbgrader.exchange.default.release_feedback.ExchangeReleaseFeedback",
)
ROLES = ("inst", "alice", "grace", "carol", "bob", "dave", "eve", "frank")


def instructor(hub: Hub, *args: str, check: bool = True):
    """``nbgrader *args`` as the instructor (stock exchange classes with ATTNLAB_STOCK_EXCHANGE)."""
    command = (
        (*args, *STOCK_OPTIONS) if STOCK and args[0] in ("collect", "release_feedback") else args
    )
    done = hub.run("inst", str(hub.python), "-m", "nbgrader", *command, cwd=hub.course)
    if check:
        assert done.returncode == 0, f"nbgrader {' '.join(args)}:\n{done.stderr[-4000:]}"
    return done


def as_user(hub: Hub, role: str, script: str) -> None:
    """A shell ``script`` run as ``role``'s Unix user (what a student can type in a terminal)."""
    done = hub.run(role, "sh", "-c", script)
    assert done.returncode == 0, f"{role}: {script}\n{done.stderr[-2000:]}"


def solved(hub: Hub, role: str, note: str) -> None:
    """Fill ``role``'s fetched notebook with the lesson's worked answers, and a note."""
    path = hub.home[role] / LESSON / f"{LESSON}.ipynb"
    source = gc.read(hub.course / "source" / LESSON / f"{LESSON}.ipynb")
    nb = gc._with_answers(json.loads(path.read_text()), gc.worked(source))
    nb["cells"].append({"cell_type": "markdown", "id": "note", "metadata": {}, "source": note})
    path.write_text(json.dumps(nb, indent=1))  # rewritten in place: the student's own file


def released(hub: Hub, secret: str, names: tuple[str, ...]) -> dict[str, str]:
    """What the exchange's feedback folder holds for a submission secret, by file name."""
    folder = hub.exchange / COURSE / "feedback"
    found = {}
    for name in names:
        path = folder / f"{notebook_hash(secret=secret, notebook_id=name)}.html"
        if path.exists():
            found[f"{name}.html"] = path.read_text(errors="replace")
    return found


def grades(course: Path) -> tuple[dict[str, float], dict[str, float], float]:
    """The gradebook's scores net of the late penalty, seconds late, by student; the points."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE) as gb:
        found = gb.assignment_submissions(LESSON)
        given = {s.student.id: s.score - (s.late_submission_penalty or 0.0) for s in found}
        late = {s.student.id: s.total_seconds_late for s in found}
        return given, late, gb.find_assignment(LESSON).max_score


def test_the_exchange_takes_who_and_when_from_the_file_system(tljh):
    base, users = tljh
    hub = Hub(base, users, runner_python(base), roles=ROLES)
    hub.grade_without_sandbox_if_unavailable()
    local = hub.course / "nbgrader_config.local.py"
    local.write_text('c.LateSubmissionPlugin.penalty_method = "zero"\n')
    os.chown(local, hub.home["inst"].stat().st_uid, -1)
    inbound = hub.exchange / COURSE / "inbound"
    course = hub.course
    unix = hub.unix
    started = time.monotonic()

    # -- on time: alice and grace submit their worked answers; the instructor collects them --------
    instructor(hub, "generate_assignment", LESSON)
    instructor(hub, "release_assignment", LESSON)
    for role in ("alice", "grace", "carol"):
        hub.nbgrader(role, "fetch_assignment", LESSON)
        solved(hub, role, f"Submitted by {unix[role]}")
    hub.nbgrader("alice", "submit", LESSON)
    hub.nbgrader("grace", "submit", LESSON)
    first = instructor(hub, "collect", LESSON)
    print(first.stderr[-3000:])
    on_time = (course / "submitted" / unix["alice"] / LESSON / "timestamp.txt").read_text()

    # -- the due date passes; carol submits late and rewrites her timestamp.txt --------------------
    due = datetime.datetime.now(datetime.timezone.utc)
    instructor(hub, "db", "assignment", "add", LESSON, f"--duedate={due:%Y-%m-%d %H:%M:%S.%f} UTC")
    time.sleep(1.5)
    submitted = hub.nbgrader("carol", "submit", LESSON)
    # submit says where the submission went ("Destination: <inbound>/<folder>")
    (carol_folder,) = re.findall(r"Destination: (.*)", submitted.stderr)
    stamp = Path(carol_folder) / "timestamp.txt"
    as_user(hub, "carol", f"printf %s {shlex.quote(on_time)} > {shlex.quote(str(stamp))}")

    # -- the attacks that make entries in inbound --------------------------------------------------
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    links = {
        "bob": {
            f"{LESSON}.ipynb": course / "source" / LESSON / f"{LESSON}.ipynb",
            "lesson7.html": course / "answer_keys" / "lesson7.py",
            "gradebook.html": course / "gradebook.db",
        },
        "dave": {
            f"{LESSON}.ipynb": course / "submitted" / unix["alice"] / LESSON / f"{LESSON}.ipynb"
        },
    }
    for role, targets in links.items():
        folder = inbound / f"{unix[role]}+{LESSON}+{now}+x"
        lines = [
            f"mkdir {shlex.quote(str(folder))}",
            f"echo {role}-secret > {shlex.quote(str(folder / 'submission_secret.txt'))}",
            f"printf %s {shlex.quote(on_time)} > {shlex.quote(str(folder / 'timestamp.txt'))}",
        ]
        lines += [
            f"ln -s {shlex.quote(str(t))} {shlex.quote(str(folder / n))}"
            for n, t in targets.items()
        ]
        as_user(hub, role, " && ".join(lines))
    hub.nbgrader("eve", "fetch_assignment", LESSON)
    blank = hub.home["eve"] / LESSON / f"{LESSON}.ipynb"  # the release's, unanswered
    forged = inbound / f"{unix['grace']}+{LESSON}+2099-01-01 00:00:00.000000 UTC+x"
    as_user(
        hub,
        "eve",
        f"mkdir {shlex.quote(str(forged))} && "
        f"echo eve-secret > {shlex.quote(str(forged / 'submission_secret.txt'))} && "
        f"echo '2099-01-01 00:00:00.000000 UTC' > {shlex.quote(str(forged / 'timestamp.txt'))} && "
        f"cp {shlex.quote(str(blank))} {shlex.quote(str(forged))}/",
    )
    for student in (unix["bob"], "zz"):  # gettz("..") raises: a warning dateutil makes an error
        odd = inbound / f"{student}+{LESSON}+2026-12-06 18:00:00 ..+x"
        as_user(hub, "bob", f"mkdir {shlex.quote(str(odd))}")
    as_user(hub, "carol", f": > {shlex.quote(str(Path(carol_folder) / 'submission_secret.txt'))}")

    # -- grading -----------------------------------------------------------------------------------
    collect = instructor(hub, "collect", "--update", LESSON, check=not STOCK)  # stock: W1 stops it
    graded_at = time.monotonic()
    instructor(hub, "autograde", LESSON)
    instructor(hub, "generate_feedback", LESSON)
    fed = instructor(hub, "release_feedback", LESSON, check=not STOCK)  # stock: W3 stops it
    grading = time.monotonic() - graded_at
    feedback_for = {  # what each honest student's own submission secret fetches
        role: released(
            hub,
            (course / "submitted" / unix[role] / LESSON / "submission_secret.txt").read_text(),
            (LESSON,),
        )
        for role in ("alice", "grace")
    }
    given, late, full = grades(course)
    key_line = next(
        line.strip()
        for line in (course / "answer_keys" / "lesson7.py").read_text().splitlines()
        if line.startswith("def key_")
    )

    def holds(text: str) -> str:
        """What a released file shows: the quiz key, a gradebook, a classmate's notebook."""
        found = [
            what
            for what, marker in (
                ("the lesson 7 key", key_line),
                ("the gradebook", "SQLite format 3"),
                ("alice's notebook", f"Submitted by {unix['alice']}"),
                ("worked solutions", "BEGIN SOLUTION"),
            )
            if marker in text or html.escape(marker) in text
        ]
        return "; ".join(found) or "its own"

    fair = {"alice": full, "grace": full, "carol": 0.0, "bob": 0.0, "dave": 0.0, "eve": 0.0}
    attack = {
        "alice": "none (her links' target: dave)",
        "grace": "eve's folder in her name, 2099, blank",
        "carol": "late, timestamp.txt rewritten",
        "bob": "links to source, keys, gradebook (on time)",
        "dave": "link to alice's collected notebook (on time)",
        "eve": "(submits only in grace's name)",
    }
    leaks = {
        role: released(hub, f"{role}-secret\n", (LESSON, "lesson7", "gradebook"))
        for role in ("bob", "dave", "eve")
    }
    print(f"\n{'stock nbgrader' if STOCK else 'attnlab exchange'}: collect, autograde, feedback")
    print(f"{'student':8} {'attack':46} {'given':>6} {'fair':>6} {'late':>7}  released to them")
    for role, fair_score in fair.items():
        score = given.get(unix[role])
        shown = "-" if score is None else f"{score:g}"
        leak = ", ".join(f"{n} ({holds(t)})" for n, t in leaks.get(role, {}).items()) or "-"
        seconds = "-" if score is None else f"{late[unix[role]]:.1f} s"
        print(f"{role:8} {attack[role]:46} {shown:>6} {fair_score:>6g} {seconds:>7}  {leak}")
    warned = [line for line in collect.stderr.splitlines() if "Skipping" in line]
    print("collect --update skipped:\n  " + "\n  ".join(warned))
    print(f"autograde + generate_feedback + release_feedback: {grading:.1f} s")

    # -- the second round: a folder with no time in its name, 20,000 files, alice resubmits --------
    solved(hub, "alice", f"Submitted again by {unix['alice']}")
    hub.nbgrader("alice", "submit", LESSON)
    timeless = inbound / f"{unix['bob']}+{LESSON}+not-a-time+x"
    as_user(hub, "bob", f"mkdir {shlex.quote(str(timeless))}")
    many = inbound / f"{unix['frank']}+{LESSON}+{now}+x"
    as_user(
        hub,
        "frank",
        f'{hub.python} -c "import os, sys; d = sys.argv[1]; os.mkdir(d); '
        f"[open(os.path.join(d, f'f{{i}}.txt'), 'w').write('x\\n') for i in range(20000)]\" "
        f"{shlex.quote(str(many))}",
    )
    t0 = time.monotonic()
    again = instructor(hub, "collect", "--update", LESSON, check=False)
    took = time.monotonic() - t0
    alice_now = (course / "submitted" / unix["alice"] / LESSON / f"{LESSON}.ipynb").read_text()
    frank_in = (course / "submitted" / unix["frank"]).exists()
    print(
        f"collect --update with a timeless name and 20,000 files: exit {again.returncode} in "
        f"{took:.1f} s; alice's resubmission collected: {'Submitted again' in alice_now}; "
        f"frank's 20,000 files collected: {frank_in}"
    )
    told = [line for line in again.stderr.splitlines() if "Skipping" in line or "ERROR" in line]
    told += again.stderr.strip().splitlines()[-1:] if again.returncode else []
    print("  " + "\n  ".join(told))
    print(f"whole test: {time.monotonic() - started:.1f} s")

    # -- what must hold ----------------------------------------------------------------------------
    for role, fair_score in fair.items():
        assert (given.get(unix[role]) or 0.0) == fair_score, f"{role}: {attack[role]}"
    for role, leaked in leaks.items():
        assert not leaked, f"released to {role}: {sorted(leaked)}"
    assert unix["bob"] not in given and unix["dave"] not in given and unix["eve"] not in given
    assert f"the folder belongs to {unix['eve']}, not to the student it names" in collect.stderr
    assert "is a symbolic link" in collect.stderr
    assert "'2026-12-06 18:00:00 ..' in its name is not a time" in collect.stderr
    assert "there is no Unix user 'zz'" in collect.stderr
    assert "submission_secret.txt is blank" in fed.stderr
    assert all(feedback_for.values()), f"feedback released: {feedback_for.keys()}"
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Submitted again" in alice_now and not frank_in
    assert "'not-a-time' in its name is not a time" in again.stderr
    assert "more than 100 files and folders" in again.stderr
    assert took < 60
