"""Submissions and feedback stay private on Zero to JupyterHub: one uid for all, through ngshare.

Every Z2JH pod runs as uid 1000, so nbgrader's shared-folder exchange keeps nothing private
there (docs/jupyterhub.md). deploy/z2jh/values.yaml carries graded work through the exchange
service ngshare instead: a JupyterHub service that files each request under the hub user whose
token made it, and lets a student reach only their own submissions and feedback.

This test builds that model on a real hub (tests/hub/hubrun.py, the fragment loaded the chart's
way with ``hub.services.ngshare`` from the values file, its command (the values' own, with its
caps) and URL made local the way a site's values file would; the servers reach ngshare directly
on its port, as the values' ``hub:10101`` does, not through the proxy): **every user's server
runs as the same Unix user** (one made with ``useradd``, as the image's jovyan is for every
pod), and ngshare runs as the hub's own user with its database and files in a folder of the
hub's (mode 0700), as it does in the hub pod.
Stock nbgrader runs every step in the user's own server, once through the buttons (the REST APIs
that Formgrader and the Assignments tab call in the server) and otherwise as commands (a kernel of
the server runs ``nbgrader ...`` with the server's environment: its role's nbgrader config, its hub
token): the instructor generates and releases a lesson with Formgrader's buttons; students A and B
fetch it from their Assignments tab (which lists the fetched lesson's notebooks by name:
ngshare_exchange's master fdfb688, vendored in deploy/vendor; 0.5.3 listed their paths), A submits
there and B with the command; the instructor collects with Formgrader, autogrades with the command,
generates and releases feedback with Formgrader; A fetches feedback from the Assignments tab, B
with the command.

Then B tries every way to reach A's work through the service (nbgrader's own list of the
inbound submissions; ngshare's API with B's token: list the submissions, list A's, download A's
submission and A's feedback, upload feedback for A, submit in A's name, fetch feedback in A's
name, delete the assignment, A's enrolment or the course, make themselves an instructor) and is
refused each time, as printed; A's submission and feedback stay A's. On disk, B's server cannot
read ngshare's folder, and nothing of A's is in a shared folder (the old exchange folder stays
empty).

What the test does not model: in Z2JH each home is a volume mounted only in its owner's pod, and
ngshare's folder is in the hub pod, which no user pod mounts. Here all homes are folders of one
disk owned by the same user, so B's server could open A's home; the test checks only what the
exchange keeps (the service, its folder and the shared exchange folder).
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import graded_course as gc
import hubrun
import pytest
from processes import free_port
from test_private_submissions import reachable_by_others, runner_python, unix_users_for_the_test

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
LESSON = "00-start-here"
COURSE = "attnlab"
EXCHANGE_REQUIREMENTS = DEPLOY / "exchange-requirements.txt"
VENDOR = DEPLOY / "vendor" / "ngshare_exchange"  # upstream master c22c0d4 (VENDORED.md)
NAMES = {"inst": "teach", "a": "ada", "b": "bo"}
IDLE_S = 20  # a kernel's channels unused this long are reopened before the next request

# deploy/hub/ngshare_service.py, as the values file starts it, but on loopback only (ngshare
# listens on 0.0.0.0: in the hub pod the proxy pod must reach it)
NGSHARE_ON_LOOPBACK = (
    "import runpy, sys, tornado.httpserver as h; listen = h.HTTPServer.listen; "
    "h.HTTPServer.listen = lambda self, port, address='': listen(self, port, '127.0.0.1'); "
    f"sys.argv[0] = {str(DEPLOY / 'hub' / 'ngshare_service.py')!r}; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def local_ngshare(folder: Path, **options: str) -> list[str]:
    """The values file's ngshare command, run here: its database and storage in ``folder``, the
    hub's API as JupyterHub gives it to its services (the values' loopback URL is the hub pod's),
    on loopback only, and ``options`` (``--name value``) replacing or adding the file's own."""
    import yaml

    shipped = yaml.safe_load(hubrun.engines.VALUES.read_text())["hub"]["services"]["ngshare"]
    command = shipped["command"]
    assert command[1].endswith("/ngshare_service.py"), command
    pairs = dict(zip(command[2::2], command[3::2], strict=True))
    pairs.pop("--jupyterhub_api_url")
    pairs.update({"--database": f"sqlite:///{folder}/ngshare.db", "--storage": f"{folder}/files/"})
    pairs.update(options)
    return [sys.executable, "-c", NGSHARE_ON_LOOPBACK, *(x for kv in pairs.items() for x in kv)]


def exchange_site(into: Path) -> Path:
    """ngshare_exchange, installed from deploy/exchange-requirements.txt as the image does
    (``--no-deps``, from the repository's root: the vendored copy under deploy/vendor/), into our
    cache folder on first use, then copied to ``into`` (readable by the servers' user, which
    cannot enter /root). pip runs on a copy of the file and the vendored folder (it builds in
    the source folder: nothing is written into the checkout)."""
    sources = [EXCHANGE_REQUIREMENTS, *sorted(p for p in VENDOR.rglob("*") if p.is_file())]
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    cached = hubrun.cache_dir() / f"site-exchange-{digest.hexdigest()[:16]}"
    if not (cached / "ngshare_exchange").is_dir():
        hubrun.cache_dir().mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix="site-", dir=hubrun.cache_dir()))
        with tempfile.TemporaryDirectory() as root:
            for path in sources:
                copy = Path(root) / path.relative_to(ROOT)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, copy)
            subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
                + [str(partial), "-r", str(EXCHANGE_REQUIREMENTS.relative_to(ROOT))],
                check=True,
                timeout=600,
                cwd=root,
            )
        partial.rename(cached)
    shutil.copytree(cached, into)
    into.chmod(0o755)  # mkdtemp made it 0700
    return into


class Z2JHHub(hubrun.Hub):
    """hubrun's hub loaded the chart's way, plus Helm values and config of the test's own
    (appended after the chart's config: the spawner command, the servers' environment)."""

    def __init__(self, *args, values: dict, extra: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.extra_values, self.extra_config = values, extra

    def _config(self) -> Path:
        import engines
        import yaml

        config = super()._config()
        values = self.workdir / "values.yaml"  # what the vendored z2jh.py reads
        layered = engines.merge(yaml.safe_load(values.read_text()), self.extra_values)
        values.write_text(yaml.safe_dump(layered))
        config.write_text(config.read_text() + "\n" + self.extra_config)
        return config


class Class:
    """The hub, its three users and the commands they run in their own servers."""

    def __init__(self, hub: Z2JHHub, pod_user: str, sandbox_env: dict[str, str]):
        self.hub, self.pod_user = hub, pod_user
        self.kernels = {role: hub.kernel(name) for role, name in NAMES.items()}
        self.used = {role: time.monotonic() for role in NAMES}
        self.sandbox_env = sandbox_env

    def home(self, role: str) -> Path:
        return self.hub.home(NAMES[role])

    def send(self, role: str, code: str) -> str:
        """Start ``code`` in ``role``'s kernel (as a front end does); returns the request id.
        A kernel unused for a while gets its channels reopened first, as JupyterLab reopens a
        dropped connection: the server closes an idle client that answers no pings (A's kernel
        waits through the flow, which A runs from the Assignments tab)."""
        if time.monotonic() - self.used[role] > IDLE_S:
            self.kernels[role].ws.close()
            self.kernels[role].connect()
        self.used[role] = time.monotonic()
        return self.kernels[role].execute_request(code)

    def result(self, role: str, request: str, timeout: float = 600) -> dict:
        """The one JSON line the code of ``request`` printed in ``role``'s kernel."""
        idle = lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"  # noqa: E731
        run = hubrun.Execution(self.kernels[role].wait_for(request, idle, timeout))
        self.used[role] = time.monotonic()
        assert run.error is None, f"{NAMES[role]}: {run.error}"
        return json.loads(run.stdout.strip().splitlines()[-1])

    def python(self, role: str, code: str, timeout: float = 600) -> dict:
        """Run ``code`` in ``role``'s kernel; it prints one JSON line, returned."""
        return self.result(role, self.send(role, code), timeout)

    def _nbgrader_code(self, role: str, args: tuple, env: dict | None) -> str:
        cwd = self.home(role) / "attnlab-course" if role == "inst" else self.home(role)
        extra = {**(self.sandbox_env if role == "inst" else {}), **(env or {})}
        return (
            "import json, os, subprocess, sys\n"
            f"done = subprocess.run([sys.executable, '-m', 'nbgrader', *{list(args)!r}],"
            f" cwd={str(cwd)!r}, env={{**os.environ, **{extra!r}}}, capture_output=True,"
            " text=True, timeout=600)\n"
            "print(json.dumps({'rc': done.returncode, 'out': done.stdout, 'err': done.stderr}))"
        )

    @staticmethod
    def _check(role: str, args: tuple, done: dict, ok: bool) -> dict:
        if ok:  # ngshare_exchange logs a refusal as an ERROR and may still exit 0
            failed = done["rc"] != 0 or "| ERROR]" in done["err"]
            assert not failed, f"nbgrader {' '.join(args)} as {NAMES[role]}:\n{done['err']}"
        return done

    def nbgrader(self, role: str, *args: str, env: dict | None = None, ok: bool = True) -> dict:
        """``nbgrader ARGS`` run by ``role``'s kernel with the server's environment (the
        instructor's in the course folder, a student's in their home)."""
        began = time.monotonic()
        done = self.python(role, self._nbgrader_code(role, args, env))
        print(f"  {NAMES[role]}: nbgrader {' '.join(args)} ({time.monotonic() - began:.1f} s)")
        return self._check(role, args, done, ok)

    def formgrader(self, action: str) -> dict:
        """One Formgrader button for the lesson (its REST API in the instructor's server, as
        the Formgrader page calls it); must succeed."""
        began = time.monotonic()
        where = f"/formgrader/api/assignment/{LESSON}/{action}"
        result = self.hub.user_api(NAMES["inst"], "POST", where, timeout=600)
        assert isinstance(result, dict) and result.get("success"), (
            f"Formgrader {action}: {result.get('log', '')[-3000:]}\n{result.get('error')}"
        )
        print(f"  {NAMES['inst']}: Formgrader {action} ({time.monotonic() - began:.1f} s)")
        return result

    def assignments(self, role: str, action: str) -> list[dict]:
        """One Assignments-tab button (fetch, submit, fetch_feedback) for the lesson, through
        nbgrader's Assignment List API in ``role``'s server; must succeed."""
        began = time.monotonic()
        result = self.hub.user_api(
            NAMES[role],
            "POST",
            f"/assignments/{action}",
            {"assignment_id": LESSON, "course_id": COURSE},
            timeout=300,
        )
        assert result.get("success"), f"{NAMES[role]}: Assignments {action} failed: {result}"
        print(f"  {NAMES[role]}: Assignments tab {action} ({time.monotonic() - began:.1f} s)")
        return result["value"]

    def students(self, *args: str) -> None:
        """``nbgrader ARGS`` in both students' servers at once (each in its own)."""
        began = time.monotonic()
        requests = {r: self.send(r, self._nbgrader_code(r, args, None)) for r in ("a", "b")}
        for role, request in requests.items():
            self._check(role, args, self.result(role, request), ok=True)
        print(f"  both students: nbgrader {' '.join(args)} ({time.monotonic() - began:.1f} s)")

    def ngshare(self, role: str, method: str, path: str, form: dict | None = None) -> dict:
        """One request to ngshare (through the hub's proxy, as nbgrader's exchange makes them)
        with the token of ``role``'s server; returns the status and ngshare's answer."""
        return self.python(
            role,
            "import json, os, requests\n"
            f"r = requests.request({method!r}, os.environ['ATTNLAB_NGSHARE'] + {path!r},"
            f" data={form!r}, headers={{'Authorization':"
            " 'token ' + os.environ['JUPYTERHUB_API_TOKEN']}, timeout=60)\n"
            "try:\n    answer = r.json()\nexcept ValueError:\n    answer = {'text': r.text[:300]}\n"
            "print(json.dumps({'status': r.status_code, **answer}))",
            timeout=120,
        )

    def sign(self, role: str) -> None:
        """A markdown cell naming the student at the end of their fetched notebook."""
        path = self.home(role) / LESSON / f"{LESSON}.ipynb"
        nb = json.loads(path.read_text())
        nb["cells"].append(
            {"cell_type": "markdown", "id": "signed", "metadata": {}, "source": signature(role)}
        )
        path.write_text(json.dumps(nb, indent=1))  # in place: the file keeps its owner


def signature(role: str) -> str:
    return f"Submitted by {NAMES[role]}"


@pytest.fixture
def z2jh(proxy):
    if os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("setpriv"):
        pytest.skip("needs root with useradd and setpriv (CI runs as root)")
    import attnlab

    # the pod's user reads the checkout too (deploy/, the environment, the editable attnlab):
    # in a folder only its owner can enter (mktemp -d) it could not start its server
    checkout = [ROOT / "deploy", Path(sysconfig.get_paths()["purelib"]), Path(attnlab.__file__)]
    with reachable_by_others(*checkout), unix_users_for_the_test("attnlab-z2jh-") as made:
        yield made


def test_z2jh_students_cannot_reach_each_others_work_through_ngshare(z2jh):
    started = time.monotonic()
    base, users = z2jh
    pod_user = f"attnlab-pod-{os.getpid() % 10000}"  # every server runs as this one user
    users.add(pod_user)
    pod = pwd.getpwnam(pod_user)
    python, python_env = runner_python(base)
    site = exchange_site(base / "site")

    # ngshare's folder: the hub's own (in Z2JH, on the hub pod's volume); 0700, the hub's user
    service_dir = base / "hub-service"
    service_dir.mkdir(mode=0o700)
    shared_exchange = base / "srv" / "nbgrader" / "exchange"  # the old shared folder: unused
    shared_exchange.mkdir(parents=True, mode=0o777)
    shared_exchange.chmod(0o1777)

    workdir = base / "hub"
    for name in NAMES.values():
        (workdir / "homes" / name).mkdir(parents=True)
    workdir.chmod(0o711)
    for folder in [workdir / "homes", *(workdir / "homes").iterdir()]:
        os.chown(folder, pod.pw_uid, pod.pw_gid)
    course = workdir / "homes" / NAMES["inst"] / "attnlab-course"
    course.mkdir()
    gc.make_course(course)
    subprocess.run(["chown", "-R", f"{pod_user}:", str(course)], check=True)

    port, service_port = free_port(), free_port()
    command = local_ngshare(service_dir)
    assert command[command.index("--admins") + 1] == "attnlab-roster"  # the fragment's service
    values = {  # a site's values file: ngshare's command and URL on this machine
        "hub": {
            "services": {"ngshare": {"url": f"http://127.0.0.1:{service_port}", "command": command}}
        }
    }
    run_as_pod = [
        "setpriv",
        f"--reuid={pod.pw_uid}",
        f"--regid={pod.pw_gid}",
        "--init-groups",
        str(python),
        "-m",
        "jupyterhub.singleuser",
    ]
    extra = (
        f"c.Spawner.cmd = {run_as_pod!r}\n"
        "c.Spawner.environment = {**c.Spawner.environment, **"
        + repr(
            {
                "PYTHONPATH": str(site),
                "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter"),
                "PATH": f"{python.parent}:/usr/bin:/bin",
                **python_env,
            }
        )
        + "}\n"
    )
    settings = {  # hub.extraEnv in deploy/z2jh/values.yaml, made local
        "ATTNLAB_NBGRADER_CONFIG": str(DEPLOY / "nbgrader"),
        "ATTNLAB_EXCHANGE": str(shared_exchange),
        "ATTNLAB_NGSHARE_API": f"http://127.0.0.1:{service_port}/services/ngshare/",
        # the servers straight to ngshare's port (the values: hub:10101), not through the proxy
        "ATTNLAB_NGSHARE": f"http://127.0.0.1:{service_port}/services/ngshare",
    }
    with Z2JHHub(
        groups={"instructors": [NAMES["inst"]]},
        environment=settings,
        workdir=workdir,
        port=port,
        engine="z2jh",
        values=values,
        extra=extra,
    ) as hub:
        for name in NAMES.values():
            hub.log_in(name)
        try:  # all three at once (each POST waits for its spawn up to 10 s)
            with ThreadPoolExecutor(len(NAMES)) as pool:
                list(
                    pool.map(lambda name: hub.api("POST", f"/users/{name}/server"), NAMES.values())
                )
            deadline = time.monotonic() + hubrun.SERVER_START_S
            for name in NAMES.values():
                while not hub.api("GET", f"/users/{name}")["servers"].get("", {}).get("ready"):
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{name}'s server not ready")
                    time.sleep(0.3)
        except TimeoutError:
            log = (workdir / "jupyterhub.log").read_text(errors="replace").splitlines()
            print("\n".join(line for line in log if " log:" not in line)[-6000:])
            raise
        try:
            the_class(hub, pod_user, service_dir, shared_exchange, course, started)
        except BaseException:
            log = (workdir / "jupyterhub.log").read_text(errors="replace").splitlines()
            print("\n".join(line for line in log if "attnlab" in line or "ngshare" in line))
            raise
    print(f"wall time {time.monotonic() - started:.1f} s")


def the_class(hub, pod_user, service_dir, shared_exchange, course, started) -> None:
    """The flow, then B's attempts (the hub and the servers are up)."""
    for name in NAMES.values():  # one Unix user for every server, as every Z2JH pod
        owner = pwd.getpwuid(os.stat(f"/proc/{hub.server_pid(name)}").st_uid).pw_name
        assert owner == pod_user, f"{name}'s server runs as {owner}"
    print(f"hub and servers up after {time.monotonic() - started:.1f} s")

    probe = Class(hub, pod_user, {})
    unavailable = probe.python(
        "inst",
        "import json\nfrom attnlab.grading import sandbox\n"
        "print(json.dumps({'why': sandbox.unavailable() or ''}))",
    )["why"]
    if unavailable:
        print(f"sandbox unavailable for the instructor ({unavailable}): grading without")
        probe.sandbox_env = {"ATTNLAB_REQUIRE_SANDBOX": "0"}
    cls = probe

    # -- the flow, every step in its user's own server ------------------------------------
    # (Formgrader's and the Assignments tab's buttons are their servers' REST APIs, which
    # nbgrader's server extensions add; the environment's etc/jupyter enables them)
    cls.formgrader("assign")  # Generate
    cls.formgrader("release")
    for student in ("a", "b"):
        listed = cls.assignments(student, "fetch")
        # the tab lists a fetched lesson's notebooks by name (ngshare_exchange master fdfb688;
        # 0.5.3, PyPI's newest, gave each one's whole path, which the tab shows and cannot open)
        fetched = [x for x in listed if x["assignment_id"] == LESSON and x["status"] == "fetched"]
        on_disk = sorted(p.stem for p in (cls.home(student) / LESSON).glob("*.ipynb"))
        ids = [[nb["notebook_id"] for nb in x["notebooks"]] for x in fetched]
        print(f"  {NAMES[student]}'s Assignments tab lists the fetched lesson's notebooks: {ids}")
        assert on_disk and ids == [on_disk], f"fetched entries {fetched}; notebooks {on_disk}"
    for student in ("a", "b"):
        cls.sign(student)
    cls.assignments("a", "submit")
    cls.nbgrader("b", "submit", LESSON)
    cls.formgrader("collect")
    cls.nbgrader("inst", "autograde", LESSON)
    cls.formgrader("generate_feedback")
    cls.formgrader("release_feedback")
    cls.assignments("a", "fetch_feedback")
    cls.nbgrader("b", "fetch_feedback", LESSON)
    print(f"flow done after {time.monotonic() - started:.1f} s")

    a, b = NAMES["a"], NAMES["b"]
    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == sorted([a, b])  # hub names
    a_sub = (submitted / a / LESSON / f"{LESSON}.ipynb").read_text()
    assert signature("a") in a_sub and signature("b") not in a_sub

    def feedback_of(role: str) -> str:
        (html,) = (cls.home(role) / LESSON / "feedback").glob(f"*/{LESSON}.html")
        return html.read_text()

    assert signature("a") in feedback_of("a") and signature("b") not in feedback_of("a")
    assert signature("b") in feedback_of("b")
    a_subs = cls.ngshare("inst", "GET", f"/submissions/{COURSE}/{LESSON}/{a}")
    assert a_subs["success"], a_subs
    (a_stamp,) = [s["timestamp"] for s in a_subs["submissions"]]

    # -- B tries to reach A's work through the service ----------------------------------
    def refused(what: str, method: str, path: str, form: dict | None = None) -> dict:
        answer = cls.ngshare("b", method, path, form)
        print(f"B: {what}: {method} {path} -> {answer['status']} {answer.get('message')}")
        assert answer["status"] in (400, 403, 404) and not answer.get("success"), answer
        return answer

    listed = cls.nbgrader("b", "list", "--inbound", ok=False)
    told = " | ".join((listed["out"] + listed["err"]).strip().splitlines())
    print(f"B: nbgrader list --inbound -> exit {listed['rc']}: {told}")
    assert a not in listed["out"] + listed["err"]
    assert "Permission denied" in listed["err"]
    refused("list every submission (inbound)", "GET", f"/submissions/{COURSE}/{LESSON}")
    refused("list A's submissions", "GET", f"/submissions/{COURSE}/{LESSON}/{a}")
    refused("download A's submission", "GET", f"/submission/{COURSE}/{LESSON}/{a}")
    refused(
        "download A's feedback (with A's timestamp)",
        "GET",
        f"/feedback/{COURSE}/{LESSON}/{a}?timestamp={a_stamp}",
    )
    refused(
        "replace A's feedback",
        "POST",
        f"/feedback/{COURSE}/{LESSON}/{a}",
        {"timestamp": a_stamp, "files": "[]"},
    )
    refused(
        "delete the assignment (and every submission)", "DELETE", f"/assignment/{COURSE}/{LESSON}"
    )
    refused("remove A from the course", "DELETE", f"/student/{COURSE}/{a}")
    refused("delete the course", "DELETE", f"/course/{COURSE}")
    refused(
        "make themselves an instructor",
        "POST",
        f"/instructor/{COURSE}/{b}",
        {"first_name": b, "last_name": "", "email": ""},
    )
    refused("list the students", "GET", f"/students/{COURSE}")

    # in A's name: nbgrader's own commands with A's id; the service goes by B's token
    named = cls.nbgrader("b", "submit", LESSON, f"--CourseDirectory.student_id={a}", ok=False)
    told = " | ".join(line for line in named["err"].splitlines() if "CRITICAL" in line)
    print(f"B: nbgrader submit --CourseDirectory.student_id={a} -> exit {named['rc']}: {told}")
    assert named["rc"] != 0 and "explicit student ID is not possible" in told
    cls.nbgrader("b", "submit", LESSON, env={"JUPYTERHUB_USER": a})  # accepted: as B
    theirs = cls.nbgrader("b", "fetch_feedback", LESSON, env={"JUPYTERHUB_USER": a}, ok=False)
    told = " | ".join(line for line in theirs["err"].splitlines() if "ngshare" in line)
    print(f"B: fetch_feedback as {a} (JUPYTERHUB_USER={a}) -> exit {theirs['rc']}: {told}")
    assert "Permission denied" in theirs["err"]
    assert signature("a") not in feedback_of("b")
    a_subs = cls.ngshare("inst", "GET", f"/submissions/{COURSE}/{LESSON}/{a}")
    b_subs = cls.ngshare("inst", "GET", f"/submissions/{COURSE}/{LESSON}/{b}")
    print(
        f"B: nbgrader submit with JUPYTERHUB_USER={a} -> accepted, filed under B: the "
        f"service holds {len(b_subs['submissions'])} submissions of {b}, "
        f"{len(a_subs['submissions'])} of {a}"
    )
    assert [s["timestamp"] for s in a_subs["submissions"]] == [a_stamp]
    assert len(b_subs["submissions"]) == 2

    # on disk: ngshare's folder is closed to the servers' user; the shared folder is empty
    on_disk = cls.python(
        "b",
        "import json, os\n"
        f"try:\n    os.listdir({str(service_dir)!r}); told = 'listed'\n"
        "except OSError as error:\n    told = f'{type(error).__name__}: {error}'\n"
        "print(json.dumps({'told': told}))",
    )["told"]
    print(f"B: list ngshare's folder {service_dir} -> {on_disk}")
    assert on_disk.startswith("PermissionError")
    assert stat.S_IMODE(service_dir.stat().st_mode) == 0o700
    assert list(shared_exchange.iterdir()) == [], "something went through the shared folder"

    # A's work is still A's: the instructor's copy of A's latest submission, A's feedback
    latest = cls.ngshare("inst", "GET", f"/submission/{COURSE}/{LESSON}/{a}")
    assert latest["timestamp"] == a_stamp
    mine = cls.ngshare("a", "GET", f"/feedback/{COURSE}/{LESSON}/{a}?timestamp={a_stamp}")
    assert mine["success"] and mine["files"], mine
    print(f"A fetches A's feedback from the service: {[f['path'] for f in mine['files']]}")

    # who and when come from ngshare: B's own timestamp.txt is replaced by ngshare's time
    b_folder = cls.home("b") / LESSON
    (b_folder / "timestamp.txt").write_text("2000-01-01 00:00:00.000000 UTC")
    cls.nbgrader("b", "submit", LESSON)
    cls.nbgrader("inst", "collect", "--update", LESSON)
    b_latest = cls.ngshare("inst", "GET", f"/submission/{COURSE}/{LESSON}/{b}?list_only=true")
    b_collected = submitted / b / LESSON
    stamp = b_collected.joinpath("timestamp.txt").read_text()
    print(f"B submitted a timestamp.txt of 2000: collected {stamp!r} ({b_latest['timestamp']!r})")
    assert stamp == b_latest["timestamp"]
    # a submission of more files than the cap (100) is not collected; B's earlier one stays
    for i in range(120):
        (b_folder / f"f{i}.txt").write_text("x\n")
    cls.nbgrader("b", "submit", LESSON)
    again = cls.nbgrader("inst", "collect", "--update", LESSON)
    told = [line for line in again["err"].splitlines() if "Skipping" in line]
    print(f"B submitted 120 more files: {told}")
    assert any(f"Skipping {b}'s submission" in line and "more than 100" in line for line in told)
    assert not (b_collected / "f0.txt").exists()
    assert b_collected.joinpath("timestamp.txt").read_text() == b_latest["timestamp"]
