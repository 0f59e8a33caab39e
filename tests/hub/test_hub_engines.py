"""The course's hub fragment, loaded exactly as each engine loads it (tests/hub/engines.py).

- Config only (no hub running): JupyterHub's own config loader (``JupyterHub().load_config_file``)
  reads a Zero to JupyterHub hub's config (the chart's loading of ``deploy/z2jh/values.yaml``,
  whose ``hub.extraConfig`` carries the fragment) and a Littlest JupyterHub's (its
  ``jupyterhub_config.d`` loop over the fragment and the instructors file that
  ``deploy/tljh/instructors.sh`` writes). Both give the hub the instructor role, the hooks and
  the instructors group. The fragment as it was (``c = get_config()``) stops the Z2JH hub with
  the operator's ``TypeError`` and passes under TLJH's loading, which is how the old test (which
  loaded it a third way) missed it.
- A real hub, each engine: a student nobody listed logs in and lands in ``students``; an
  instructor, with the instructor's own token (made by the instructor, not an admin's), starts
  that student's server, opens it and stops it, and cannot touch another instructor's. An
  instructor removed the way docs/jupyterhub.md says (the groups API) loses that at once. The
  instructor's own server, started without a course folder, says so by name in its log.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import engines
import hubrun
import pytest

SITE = """\
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.db_url = "sqlite://"
"""

LOAD = """\
import json, sys
from jupyterhub.app import JupyterHub
app = JupyterHub()
app.load_config_file(sys.argv[1])
auth, spawner = app.config.Authenticator, app.config.Spawner
# the hub's own traits, as the loaded config set them (TLJH's subconfigs merge lazily)
print(json.dumps({
    "roles": [r["name"] for r in app.load_roles],
    "instructor_role": [r for r in app.load_roles if r["name"] == "attnlab-instructor"],
    "groups": app.load_groups,
    "post_auth_hook": getattr(auth.get("post_auth_hook"), "__name__", None),
    "pre_spawn_hook": getattr(spawner.get("pre_spawn_hook"), "__name__", None),
}))
"""


def load(config: Path) -> dict:
    """The config JupyterHub's own loader makes of ``config`` (in a fresh interpreter: the
    chart's config imports its ``z2jh`` module from the config's folder)."""
    result = subprocess.run(
        [sys.executable, "-c", LOAD, str(config)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("ATTNLAB_")},
    )
    if result.returncode:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.splitlines()[-1])


def check_loaded(loaded: dict, instructors: list[str]) -> None:
    assert loaded["roles"] == ["tester", "attnlab-instructor"], loaded["roles"]
    (role,) = loaded["instructor_role"]
    assert role["groups"] == ["instructors"]
    assert "servers!group=students" in role["scopes"]
    assert "access:servers!group=students" in role["scopes"]
    assert loaded["groups"]["instructors"]["users"] == instructors
    assert "students" not in loaded["groups"], "students must not need listing"
    assert loaded["post_auth_hook"] == "attnlab_post_auth"
    assert loaded["pre_spawn_hook"] == "attnlab_pre_spawn"


SERVICE = hubrun.TEST_SERVICE.format(token="x" * 32)


def test_zero_to_jupyterhub_loads_the_fragment_from_the_values_file(tmp_path):
    groups = engines.z2jh_groups({"instructors": ["alice", "bob"]})
    config = engines.write_z2jh(tmp_path, SITE, SERVICE, groups)
    check_loaded(load(config), ["alice", "bob"])


def test_the_littlest_jupyterhub_loads_the_fragment_from_its_config_folder(tmp_path):
    config = engines.write_tljh(tmp_path, SITE + SERVICE, ["alice", "bob"], {})
    assert sorted(p.name for p in (tmp_path / "jupyterhub_config.d").iterdir()) == [
        "attnlab_groups.py",
        "attnlab_hub.py",
    ]
    check_loaded(load(config), ["alice", "bob"])


def test_the_old_fragment_stops_a_z2jh_hub_and_passes_on_tljh(tmp_path):
    """What the operator saw, reproduced: ``c = get_config()`` in hub.extraConfig meets the
    chart's get_config(key, default=None)."""
    old = "c = get_config()  # noqa: F821\n" + engines.FRAGMENT.read_text()
    old_values = engines.merge(
        engines.z2jh_groups({"instructors": ["alice"]}),
        {"hub": {"extraConfig": {"attnlab": old}}},
    )
    config = engines.write_z2jh(tmp_path / "z2jh", SITE, SERVICE, old_values)
    with pytest.raises(RuntimeError, match=r"get_config\(\) missing 1 required positional "):
        load(config)
    tljh = engines.write_tljh(tmp_path / "tljh", SITE + SERVICE, ["alice"], {})
    (tljh.parent / "jupyterhub_config.d" / "attnlab_hub.py").write_text(old)
    check_loaded(load(tljh), ["alice"])


# -- a real hub ---------------------------------------------------------------------------------


class Person:
    """Someone using the hub from a browser: logs in on the login page (cookies kept), then
    makes an API token on their own, as the hub's Token page does."""

    def __init__(self, hub: hubrun.Hub, name: str) -> None:
        self.hub, self.name = hub, name
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.token = ""

    def _xsrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "_xsrf"), "")

    def log_in(self) -> None:
        self.opener.open(f"{self.hub.url}/hub/login", timeout=30).read()
        data = urllib.parse.urlencode(
            {"username": self.name, "password": "x", "_xsrf": self._xsrf()}
        ).encode()
        no_redirect = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), hubrun._NoRedirect
        )
        try:
            no_redirect.open(f"{self.hub.url}/hub/login", data=data, timeout=30)
        except urllib.error.HTTPError as error:
            assert error.code in (302, 303), f"login of {self.name}: {error.code}"
        else:
            raise AssertionError(f"login of {self.name} did not redirect")

    def make_token(self) -> None:
        """Open the hub's Token page, then POST /hub/api/users/NAME/tokens with the login cookie
        and the page's XSRF token, as the page's button does.

        Opening the page first is what a browser does, and JupyterHub 5 needs it: its XSRF token
        is tied to the login session, and the ``_xsrf`` cookie the login answer sets predates
        that session, so only a page loaded after the login sets the cookie the POST must carry
        (a POST with the login answer's cookie gets 403, "XSRF cookie does not match")."""
        self.opener.open(f"{self.hub.url}/hub/token", timeout=30).read()
        request = urllib.request.Request(
            f"{self.hub.url}/hub/api/users/{self.name}/tokens",
            data=json.dumps({"note": "my own", "expires_in": 3600}).encode(),
            method="POST",
            headers={"X-XSRFToken": self._xsrf(), "Content-Type": "application/json"},
        )
        with self.opener.open(request, timeout=30) as response:
            self.token = json.loads(response.read())["token"]

    def whoami(self) -> dict:
        """``GET /hub/api/user`` with this person's token: whose token it is."""
        request = urllib.request.Request(
            f"{self.hub.url}/hub/api/user", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def call(self, method: str, url: str) -> int:
        """One request with this person's own token; returns the HTTP status."""
        request = urllib.request.Request(
            f"{self.hub.url}{url}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code


def wait_for(hub: hubrun.Hub, user: str, ready: bool, timeout: float = hubrun.SERVER_START_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = hub.api("GET", f"/users/{user}")["servers"].get("")
        if (server or {}).get("ready", False) == ready and (ready or not server):
            return
        time.sleep(0.3)
    raise TimeoutError(f"{user}'s server not {'ready' if ready else 'stopped'}\n{hub.log_tail()}")


@pytest.mark.slow
@pytest.mark.parametrize("engine", hubrun.ENGINES)
def test_an_instructor_helps_a_student_nobody_listed(engine, proxy, tmp_path):
    settings = {
        "ATTNLAB_NBGRADER_CONFIG": str(hubrun.DEPLOY / "nbgrader"),
        "ATTNLAB_EXCHANGE": str(tmp_path / "exchange"),
    }
    groups = {"instructors": ["teacher", "tutor"]}
    with hubrun.Hub(
        groups=groups, environment=settings, workdir=tmp_path / "hub", engine=engine
    ) as hub:
        teacher, tutor = Person(hub, "teacher"), Person(hub, "tutor")
        ada, bo = Person(hub, "ada"), Person(hub, "bo")
        for person in (teacher, tutor, ada, bo):
            person.log_in()
        teacher.make_token()
        tutor.make_token()
        members = hub.api("GET", "/groups/students")["users"]
        assert sorted(members) == ["ada", "bo"], f"students: {members}"
        assert sorted(hub.api("GET", "/groups/instructors")["users"]) == ["teacher", "tutor"]
        assert teacher.whoami()["name"] == "teacher"  # the token is the teacher's own

        # The teacher's own token: start, open and stop the server of ada, whom no config lists.
        assert teacher.call("POST", "/hub/api/users/ada/server") in (201, 202)
        wait_for(hub, "ada", ready=True)
        assert teacher.call("GET", "/user/ada/api/contents") == 200
        assert teacher.call("GET", "/user/ada/api/status") == 200
        assert teacher.call("DELETE", "/hub/api/users/ada/server") in (202, 204)
        wait_for(hub, "ada", ready=False)

        # Not another instructor's server; a student, not another's server.
        assert teacher.call("POST", "/hub/api/users/tutor/server") in (403, 404)
        ada.make_token()
        assert ada.call("POST", "/hub/api/users/teacher/server") in (403, 404)
        assert ada.call("POST", "/hub/api/users/bo/server") in (403, 404)
        hub.start_servers(["bo"])
        assert ada.call("GET", "/user/bo/api/contents") == 403
        assert teacher.call("GET", "/user/bo/api/contents") == 200

        # The instructor's own server, with no course cloned: its log names what is missing
        # as soon as Formgrader reads the nbgrader config.
        assert teacher.call("POST", "/hub/api/users/teacher/server") in (201, 202)
        wait_for(hub, "teacher", ready=True)
        assert teacher.call("GET", "/user/teacher/formgrader/") == 200
        course = hub.home("teacher") / "attnlab-course"
        deadline = time.monotonic() + 30
        while f"attnlab: no course at {course}" not in hub.log_tail(400):
            assert time.monotonic() < deadline, hub.log_tail(60)
            time.sleep(0.3)

        # Removing an instructor, as docs/jupyterhub.md says: the groups API (or the admin
        # page). It takes effect at once; load_groups would not have removed them.
        hub.api("DELETE", "/groups/instructors/users", {"users": ["tutor"]})
        assert tutor.call("POST", "/hub/api/users/ada/server") in (403, 404)
        tutor.log_in()  # at the next login, no longer an instructor: a student
        assert "tutor" in hub.api("GET", "/groups/students")["users"]
