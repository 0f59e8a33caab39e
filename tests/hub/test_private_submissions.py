"""Submissions and feedback stay private on The Littlest JupyterHub: real Unix users, real exchange.

TLJH gives every hub user a Unix account of their own (``jupyter-<hub user>``), and privacy in
nbgrader's shared-folder exchange rests on exactly that. This test builds the TLJH model on this
machine (it runs as root, as CI does): an instructor and two students made with ``useradd``
(homes as ``deploy/tljh/setup.sh`` makes them, HOME_MODE 0700), the exchange folder made by the
setup's own ``install`` line, the course cloned into the instructor's home, and the hub's
per-role nbgrader configs from ``deploy/nbgrader/`` on each user's JUPYTER_CONFIG_PATH. Stock
nbgrader runs every step as the user it belongs to (``runuser``): the instructor generates and
releases a lesson; each student fetches and submits it; the instructor collects, autogrades,
generates and releases feedback; each student fetches their feedback.

Then student B tries to reach student A's work every way a shell gives them (list, read, glob,
rename, delete, write, nbgrader's own ``list --inbound``; the exchange, A's home, the
instructor's course) and each attempt is refused, while A fetches A's feedback. Two facts are
asserted as the limits they are: what hides a submission and a feedback file in the exchange is
a name B cannot learn (72 random bits, a secret kept in A's home), not its mode; and a student
can still make a submission in a classmate's name, which the instructor's collect passes over
(attnlab.grading.exchange; the other attacks on the exchange are in test_exchange_attacks.py).
The users are deleted afterwards, whatever happens.

Zero to JupyterHub has no such model (every pod is uid 1000): docs/jupyterhub.md says what that
means.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import graded_course as gc
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SETUP = DEPLOY / "tljh" / "setup.sh"
LESSON = "00-start-here"
COURSE = "attnlab"


def setup_line(pattern: str) -> str:
    """The one line of deploy/tljh/setup.sh matching ``pattern`` (the test does what it does)."""
    found = [line for line in SETUP.read_text().splitlines() if re.search(pattern, line)]
    assert len(found) == 1, f"setup.sh has {len(found)} lines matching {pattern!r}"
    return found[0].strip()


def others_can_run(path: Path) -> bool:
    """Whether a user other than root can reach and run ``path`` (every folder on its way o+x)."""
    path = path.resolve()
    folders = [p for p in path.parents]
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in folders) and bool(
        os.stat(path).st_mode & stat.S_IXOTH
    )


def runner_python(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A Python that the test's users can run, with this environment's packages, and the
    environment variables it needs.

    The venv's own where its interpreter is reachable by other users (CI). Otherwise (here the
    venv's base Python lives under /root, mode 0700) a copy of that base Python's interpreter
    and standard library (without its site-packages and tests, about 130 MB) in ``tmp``, and a
    venv on it whose site-packages adds the project venv's (world-readable), with the venv's
    Jupyter config (etc/jupyter: the server extensions it enables). The same version
    is needed: soupsieve, which nbconvert uses, needs a newer 3.11 than the system's 3.11.2.
    """
    venv_python = Path(sys.prefix) / "bin" / "python"
    if others_can_run(venv_python):
        return venv_python, {}
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    copy = tmp / "base-python"
    (copy / "bin").mkdir(parents=True)
    (copy / "lib").mkdir()
    shutil.copy2(base / "bin" / version, copy / "bin" / version)
    for lib in (base / "lib").glob("libpython*"):
        shutil.copy2(lib, copy / "lib" / lib.name, follow_symlinks=False)
    shutil.copytree(
        base / "lib" / version,
        copy / "lib" / version,
        ignore=shutil.ignore_patterns("site-packages", "test"),
        symlinks=True,
    )
    (copy / "lib" / version / "site-packages").mkdir()
    env = {"LD_LIBRARY_PATH": str(copy / "lib")}  # the interpreter's RUNPATH names the original
    runner = tmp / "runner"
    subprocess.run(
        [str(copy / "bin" / version), "-m", "venv", "--without-pip", str(runner)],
        check=True,
        env={**os.environ, **env},
    )
    site = sysconfig.get_paths()["purelib"]
    (runner / "lib" / version / "site-packages" / "attnlab_venv.pth").write_text(
        f"import site; site.addsitedir({site!r})\n"
    )
    # The environment's Jupyter config (etc/jupyter, which `pip install` fills: nbgrader's
    # jupyter_server_config.d/nbgrader.json enables its server extensions, Formgrader's and the
    # Assignments tab's REST APIs). Jupyter looks for it under sys.prefix, which is the runner's
    # here: without this copy a server on this Python answers 404 under /formgrader/api/ and
    # /assignments (the Z2JH test's buttons), while CI, which runs the venv's own Python, has it.
    if (Path(sys.prefix) / "etc" / "jupyter").is_dir():
        shutil.copytree(Path(sys.prefix) / "etc" / "jupyter", runner / "etc" / "jupyter")
    # nbgrader runs `alembic` from PATH (its gradebook's migrations): the venv's script would
    # start the unreachable interpreter
    alembic = runner / "bin" / "alembic"
    alembic.write_text(f'#!/bin/sh\nexec {runner / "bin" / "python"} -m alembic "$@"\n')
    alembic.chmod(0o755)
    return runner / "bin" / "python", env


class Users:
    """Unix users made for the test (``useradd -m``), deleted by :meth:`remove_all`."""

    def __init__(self, homes: Path):
        self.homes = homes
        self.made: list[str] = []
        home_mode = re.search(r"HOME_MODE\\t(0\d{3})", setup_line(r"printf 'HOME_MODE")).group(1)
        self.home_mode = home_mode

    def add(self, name: str) -> Path:
        home = self.homes / name
        subprocess.run(
            ["useradd", "-m", "-d", str(home), "-K", f"HOME_MODE={self.home_mode}", "-s", "/bin/sh"]
            + [name],
            check=True,
        )
        self.made.append(name)
        return home

    def remove_all(self) -> None:
        for name in reversed(self.made):
            done = subprocess.run(["userdel", "-r", name], capture_output=True, text=True)
            if done.returncode != 0:  # a process still running as the user: force it
                subprocess.run(["userdel", "-r", "-f", name], capture_output=True)
        self.made.clear()


@contextlib.contextmanager
def unix_users_for_the_test(prefix: str) -> Iterator[tuple[Path, Users]]:
    """A world-traversable folder under /tmp (as /home and /srv are) with ``home/`` for the
    test's Unix users; the users and the folder are removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    base.chmod(0o755)
    (base / "home").mkdir(mode=0o755)
    users = Users(base / "home")
    try:
        yield base, users
    finally:
        users.remove_all()
        shutil.rmtree(base, ignore_errors=True)


#: Folders opened by reachable_by_others, shared by every test process (xdist's workers run the
#: Unix-user tests side by side): folder -> its mode before, and how many tests still need it.
_OPENED = Path(tempfile.gettempdir()) / "attnlab-reachable-by-others.json"


@contextlib.contextmanager
def _opened_folders() -> Iterator[dict]:
    """The shared record of opened folders, locked (flock) while the caller changes it."""
    with open(f"{_OPENED}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            state = json.loads(_OPENED.read_text()) if _OPENED.exists() else {}
            yield state
            _OPENED.write_text(json.dumps(state))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def reachable_by_others(*paths: Path) -> Iterator[list[Path]]:
    """Let other users pass through (o+x, not list) every folder above ``paths`` that stops them,
    for as long as the test runs; the modes are put back when the last test that needs them ends.

    The test's users read the checkout (deploy/'s configs, the environment's site-packages, the
    editable attnlab): a checkout in a folder only its owner can enter (``git clone`` into
    ``mktemp -d``, mode 0700) would refuse them all. Folders owned by someone else than the
    user running the test are left alone. Tests in other processes share the folders: each
    counts itself in (:data:`_OPENED`), and the mode comes back with the last one out (a test
    that ended first once closed the folder under another one's students: "No module named
    nbgrader").
    """
    mine: list[Path] = []
    with _opened_folders() as state:
        for path in paths:
            for folder in reversed(Path(path).resolve().parents):
                if folder in mine:
                    continue
                info = folder.stat()
                entry = state.get(str(folder))
                if (
                    entry is None
                    and not info.st_mode & stat.S_IXOTH
                    and info.st_uid == os.geteuid()
                ):
                    entry = state[str(folder)] = {"mode": stat.S_IMODE(info.st_mode), "users": 0}
                    folder.chmod(stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
                if entry is not None:
                    if not folder.stat().st_mode & stat.S_IXOTH:  # a record left by a killed run
                        folder.chmod(stat.S_IMODE(folder.stat().st_mode) | stat.S_IXOTH)
                    entry["users"] += 1
                    mine.append(folder)
    if mine:
        print(f"o+x for the test's users, until it ends: {[str(f) for f in mine]}")
    try:
        yield mine
    finally:
        with _opened_folders() as state:
            for folder in reversed(mine):
                entry = state[str(folder)]
                entry["users"] -= 1
                if entry["users"] == 0:
                    folder.chmod(entry["mode"])
                    del state[str(folder)]


@pytest.fixture
def tljh(tmp_path_factory):
    if os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"):
        pytest.skip("needs root with useradd and runuser (CI runs as root)")
    import attnlab

    checkout = [ROOT / "deploy", Path(sysconfig.get_paths()["purelib"]), Path(attnlab.__file__)]
    with reachable_by_others(*checkout), unix_users_for_the_test("attnlab-private-") as made:
        yield made


class Hub:
    """The users of one course and the commands they run, each as themselves."""

    def __init__(
        self,
        base: Path,
        users: Users,
        python: tuple[Path, dict[str, str]],
        roles: tuple[str, ...] = ("inst", "a", "b"),
    ):
        self.python, self.python_env = python
        self.exchange = base / "srv" / "nbgrader" / "exchange"
        self.exchange.parent.mkdir(parents=True)
        os.chmod(self.exchange.parent.parent, 0o755)
        os.chmod(self.exchange.parent, 0o755)
        # the setup's own line, with the exchange moved into the test's folder
        line = setup_line(r"install -d -m \d+ /srv/nbgrader/exchange")
        subprocess.run(
            line.replace("/srv/nbgrader/exchange", str(self.exchange)), shell=True, check=True
        )
        tag = secrets.token_hex(2)
        self.hub_user = {role: f"{role}{tag}" for role in roles}
        self.unix = {role: f"jupyter-{name}" for role, name in self.hub_user.items()}
        self.home = {role: users.add(self.unix[role]) for role in self.hub_user}
        self.course = self.home["inst"] / "attnlab-course"
        self.course.mkdir()
        gc.make_course(self.course)
        subprocess.run(["chown", "-R", f"{self.unix['inst']}:", str(self.course)], check=True)
        self.extra_env: dict[str, str] = {}

    def grade_without_sandbox_if_unavailable(self) -> None:
        """Autograding runs students' code in bubblewrap; where the instructor cannot make its
        namespaces, grade without it (as tests/graded_course.py does), saying so."""
        probe = self.run(
            "inst",
            str(self.python),
            "-c",
            "from attnlab.grading import sandbox; print(sandbox.unavailable() or '')",
        )
        assert probe.returncode == 0, probe.stderr
        if probe.stdout.strip():
            print(
                f"sandbox unavailable for the instructor ({probe.stdout.strip()}): grading without"
            )
            self.extra_env["ATTNLAB_REQUIRE_SANDBOX"] = "0"

    def sign(self, role: str) -> None:
        """A markdown cell naming the student at the end of their fetched notebook (as they
        would type it), so that each student's submission and feedback can be told apart."""
        path = self.home[role] / LESSON / f"{LESSON}.ipynb"
        nb = json.loads(path.read_text())
        nb["cells"].append(
            {
                "cell_type": "markdown",
                "id": "signed",
                "metadata": {},
                "source": self.signature(role),
            }
        )
        path.write_text(json.dumps(nb, indent=1))  # rewritten in place: the student's own file

    def signature(self, role: str) -> str:
        return f"Submitted by {self.unix[role]}"

    def env(self, role: str) -> list[str]:
        config = DEPLOY / "nbgrader" / ("instructor" if role == "inst" else "student")
        env = {
            "PATH": f"{self.python.parent}:/usr/bin:/bin",
            "HOME": str(self.home[role]),
            "USER": self.unix[role],
            "LOGNAME": self.unix[role],
            "JUPYTERHUB_USER": self.hub_user[role],
            "JUPYTER_CONFIG_PATH": str(config),
            "ATTNLAB_EXCHANGE": str(self.exchange),
            # the environment's data files (nbconvert's templates), also for runner_python's venv
            "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter"),
            **self.python_env,
            **(self.extra_env if role == "inst" else {}),
        }
        return ["env", "-i", *(f"{k}={v}" for k, v in env.items())]

    def run(self, role: str, *command: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        """``command`` as ``role``'s Unix user, with umask 022 (systemd's default, TLJH's)."""
        return subprocess.run(
            [
                "runuser",
                "-u",
                self.unix[role],
                "--",
                *self.env(role),
                "sh",
                "-c",
                'umask 022 && cd "$0" && exec "$@"',
                str(cwd or self.home[role]),
                *command,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
        )

    def nbgrader(self, role: str, *args: str) -> subprocess.CompletedProcess:
        cwd = self.course if role == "inst" else self.home[role]
        done = self.run(role, str(self.python), "-m", "nbgrader", *args, cwd=cwd)
        assert done.returncode == 0, (
            f"nbgrader {' '.join(args)} as {self.unix[role]} failed:\n{done.stderr[-4000:]}"
        )
        return done


def refused(hub: Hub, what: str, *command: str) -> str:
    """Run ``command`` as student B; it must fail. Returns (and prints) what B was told."""
    done = hub.run("b", *command)
    told = (done.stderr or done.stdout).strip().splitlines()
    print(f"B: {what}: `{' '.join(command)}` -> exit {done.returncode}: {' | '.join(told)}")
    assert done.returncode != 0, f"B could {what}: {done.stdout[:500]}"
    return "\n".join(told)


def test_tljh_students_cannot_reach_each_others_submissions_or_feedback(tljh):
    base, users = tljh
    hub = Hub(base, users, runner_python(base))
    ex = hub.exchange
    assert stat.S_IMODE(ex.stat().st_mode) == 0o1777
    for role in hub.home:
        assert stat.S_IMODE(hub.home[role].stat().st_mode) == 0o700

    hub.grade_without_sandbox_if_unavailable()

    # -- the flow, every step as its own user ----------------------------------------------------
    hub.nbgrader("inst", "generate_assignment", LESSON)
    hub.nbgrader("inst", "release_assignment", LESSON)
    for student in ("a", "b"):
        hub.nbgrader(student, "fetch_assignment", LESSON)
        hub.sign(student)
        hub.nbgrader(student, "submit", LESSON)
    hub.nbgrader("inst", "collect", LESSON)
    hub.nbgrader("inst", "autograde", LESSON)
    hub.nbgrader("inst", "generate_feedback", LESSON)
    hub.nbgrader("inst", "release_feedback", LESSON)
    for student in ("a", "b"):
        hub.nbgrader(student, "fetch_feedback", LESSON)

    inbound = ex / COURSE / "inbound"
    feedback = ex / COURSE / "feedback"
    a_name, b_name = hub.unix["a"], hub.unix["b"]
    # submissions go by the students' own accounts (TLJH), and each is owned by its student
    (a_sub,) = [p for p in inbound.iterdir() if p.name.startswith(f"{a_name}+{LESSON}+")]
    (b_sub,) = [p for p in inbound.iterdir() if p.name.startswith(f"{b_name}+{LESSON}+")]
    assert a_sub.owner() == a_name and b_sub.owner() == b_name
    assert sorted(p.name for p in (hub.course / "submitted").iterdir()) == sorted([a_name, b_name])

    # A fetched A's feedback; B's own fetch brought B's only
    (a_feedback,) = glob.glob(str(hub.home["a"] / LESSON / "feedback" / "*" / f"{LESSON}.html"))
    (b_feedback,) = glob.glob(str(hub.home["b"] / LESSON / "feedback" / "*" / f"{LESSON}.html"))
    a_html = Path(a_feedback).read_text()
    assert hub.signature("a") in a_html and hub.signature("b") not in a_html
    assert hub.signature("b") in Path(b_feedback).read_text()
    (a_released,) = [p for p in feedback.iterdir() if p.read_text() == a_html]
    a_cache = hub.home["a"] / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE
    (a_secret,) = a_cache.glob(f"{a_name}+{LESSON}+*/submission_secret.txt")
    print(f"A fetched A's feedback: {a_feedback}")

    # -- B tries to reach A's work -----------------------------------------------------------------
    told = refused(hub, "list the exchange's inbound", "ls", str(inbound))
    assert "Permission denied" in told
    told = refused(hub, "list the released feedback", "ls", str(feedback))
    assert "Permission denied" in told
    refused(
        hub,
        "read A's submission by its student prefix",
        "sh",
        "-c",
        f"cat {inbound}/{a_name}+{LESSON}+*/{LESSON}.ipynb",
    )
    told = refused(
        hub,
        "change A's submission by its prefix",
        "sh",
        "-c",
        f"echo x > {inbound}/{a_name}+{LESSON}+*/{LESSON}.ipynb",
    )
    told = refused(hub, "delete the inbound folder", "rm", "-rf", str(inbound))
    assert "Permission denied" in told
    told = refused(
        hub,
        "move the course folder aside (to put their own in its place)",
        "mv",
        str(ex / COURSE),
        str(ex / f"{COURSE}-moved"),
    )
    assert "not permitted" in told or "Permission denied" in told
    told = refused(hub, "write into the released feedback", "touch", str(feedback / "x.html"))
    assert "Permission denied" in told
    told = refused(hub, "list A's home", "ls", str(hub.home["a"]))
    assert "Permission denied" in told
    told = refused(hub, "read A's submission secret (names A's feedback)", "cat", str(a_secret))
    assert "Permission denied" in told
    told = refused(hub, "read A's fetched feedback", "cat", a_feedback)
    assert "Permission denied" in told
    collected = hub.course / "submitted" / a_name / LESSON / f"{LESSON}.ipynb"
    told = refused(hub, "read the instructor's copy of A's submission", "cat", str(collected))
    assert "Permission denied" in told
    graded = hub.course / "feedback" / a_name / LESSON / f"{LESSON}.html"
    told = refused(hub, "read the instructor's copy of A's feedback", "cat", str(graded))
    assert "Permission denied" in told
    told = refused(hub, "read the gradebook", "cat", str(hub.course / "gradebook.db"))
    assert "Permission denied" in told
    listed = hub.nbgrader("b", "list", "--inbound")
    print(f"B: nbgrader list --inbound -> {' | '.join(listed.stderr.strip().splitlines())}")
    assert a_name not in listed.stdout + listed.stderr
    assert [p.name for p in inbound.iterdir() if p.name.startswith(a_name)] == [a_sub.name]
    assert (a_sub / f"{LESSON}.ipynb").exists() and a_released.read_text() == a_html

    # -- the limits, asserted so that this test notices if nbgrader changes them -----------------
    # What hides A's work in the exchange is its NAME (72 random bits in the submission's,
    # a hash of A's secret in the feedback's), not its mode: with the exact name B could read it.
    assert stat.S_IMODE(a_sub.stat().st_mode) == 0o777  # nbgrader's submit makes it so
    assert stat.S_IMODE(a_released.stat().st_mode) & stat.S_IROTH
    # A student can still make a submission in a classmate's name; the instructor's collect
    # (attnlab.grading.exchange, tests/hub/test_exchange_attacks.py) passes it over, saying so,
    # and keeps A's own.
    hub.nbgrader("b", "submit", LESSON, f"--CourseDirectory.student_id={a_name}")
    collect = hub.nbgrader("inst", "collect", "--update", LESSON)
    warning = f"the folder belongs to {b_name}, not to the student it names"
    print(f"instructor's collect after B submitted as A: ...{warning}...")
    assert warning in collect.stderr
    kept = hub.course / "submitted" / a_name / LESSON / f"{LESSON}.ipynb"
    assert hub.signature("a") in kept.read_text() and hub.signature("b") not in kept.read_text()
