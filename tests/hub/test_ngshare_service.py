"""deploy/hub/ngshare_service.py, as Zero to JupyterHub's hub pod starts ngshare, on a real hub.

What the file changes in ngshare 0.6.0, each shown against the real service:

- an admin name (``--admins``) counts only for a hub *service*'s token: a hub *user* of that name
  is refused (ngshare compares names: before, a user named like the admin got 200);
- the course's hub fragment blocks a user named ``attnlab-roster`` (ngshare's admin service)
  from logging in;
- one request's body and all of one user's submissions are capped
  (``--attnlab-max-request-mb``, ``--attnlab-max-user-mb``): past the per-user cap a submission
  is refused with 413 and a reason, and nothing of it is stored;
- ngshare's call to the hub (who is this token?) times out (``--attnlab-hub-timeout``): with a
  hub that accepts the connection and never answers, a request is answered (refused) in
  seconds and the next one too, where ngshare 0.6.0 waited forever and held every request.

The command is the values file's own (``hub.services.ngshare.command``), with the database,
storage and caps made local and small; on loopback only (ngshare listens on every address).
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from processes import free_port, stop_tree
from test_private_submissions_z2jh import Z2JHHub, local_ngshare

pytestmark = pytest.mark.slow

PREFIX = "/services/ngshare"
ROOT = Path(__file__).resolve().parents[2]


def files_form(size: int) -> dict:
    """One notebook of ``size`` random bytes, as ngshare_exchange uploads it."""
    content = base64.b64encode(os.urandom(size)).decode()
    return {"files": json.dumps([{"path": "lesson.ipynb", "content": content}])}


def documented_ngshare_commands(folder) -> tuple[str, str]:
    """The Python of the guide's backup and pruning commands (docs/jupyterhub.md, "Graded
    work": ``kubectl exec -n attnlab deploy/hub -- python3 -c "..."``), with ngshare's folder
    /srv/ngshare replaced by ``folder``."""
    guide = (ROOT / "docs" / "jupyterhub.md").read_text()
    section = guide[guide.index("### Graded work") :]
    section = section[: section.index("\n#", 1)]
    code = {}
    for bullet in ("**Backup**", "**Pruning**"):
        text = section[section.index(bullet) :]
        found = re.search(r'deploy/hub -- python3 -c "([^"]+)"', text)
        code[bullet] = found.group(1).replace("/srv/ngshare", str(folder))
    return code["**Backup**"], code["**Pruning**"]


def test_ngshare_admins_are_services_the_roster_cannot_log_in_and_storage_is_capped(tmp_path):
    service_dir = tmp_path / "ngshare"
    service_dir.mkdir(mode=0o700)
    port = free_port()
    command = local_ngshare(
        service_dir,
        **{
            # the test's own hub service "tester" and a hub USER "boss" listed as admins
            "--admins": "attnlab-roster,tester,boss",
            "--attnlab-max-request-mb": "0.5",
            "--attnlab-max-user-mb": "0.8",
        },
    )
    api = f"http://127.0.0.1:{port}{PREFIX}"
    values = {
        "hub": {"services": {"ngshare": {"url": f"http://127.0.0.1:{port}", "command": command}}}
    }
    environment = {"ATTNLAB_NGSHARE_API": api + "/", "ATTNLAB_NGSHARE": api}
    # the test's service makes the users' tokens (their servers' tokens, in a class)
    extra = (
        'c.JupyterHub.load_roles.append({"name": "tester-tokens", "scopes": ["tokens"],'
        ' "services": ["tester"]})\n'
    )
    with Z2JHHub(
        environment=environment, workdir=tmp_path / "hub", engine="z2jh", values=values, extra=extra
    ) as hub:
        tokens = {"tester": hub.token}
        for name in ("boss", "ada"):
            hub.api("POST", f"/users/{name}")
            tokens[name] = hub.api("POST", f"/users/{name}/tokens", {"note": "test"})["token"]

        def call(who: str, method: str, path: str, form: dict | None = None) -> tuple[int, dict]:
            r = requests.request(
                method,
                f"{api}/{path}",
                data=form,
                headers={"Authorization": f"token {tokens[who]}"},
                timeout=60,
            )
            try:
                return r.status_code, r.json()
            except ValueError:
                return r.status_code, {"text": r.text[:200]}

        # an admin name: yes from a service's token, no from a user's
        assert call("tester", "POST", "course/c1", {"instructors": "[]"})[0] == 200
        status, answer = call("boss", "POST", "course/c2", {"instructors": "[]"})
        print("hub user 'boss' (listed in --admins) makes a course:", status, answer)
        assert status == 403, answer
        # nobody logs in as the roster service's name; others do
        assert hub.log_in("ada")
        with pytest.raises(AssertionError, match="login of attnlab-roster failed: 403"):
            hub.log_in("attnlab-roster")
        print("login as attnlab-roster: refused (403)")

        person = {"first_name": "ada", "last_name": "", "email": ""}
        assert call("tester", "POST", "student/c1/ada", person)[0] == 200
        assert call("tester", "POST", "assignment/c1/a1", files_form(1000))[0] == 200
        # per request: 0.5 MiB (a 600 KiB file is 800 KiB of base64; under the
        # per-user cap, so only the request's cap refuses it)
        try:
            big = call("ada", "POST", "submission/c1/a1", files_form(600 * 1024))[0]
        except requests.RequestException as error:  # or Tornado closes the connection
            big = type(error).__name__
        print("a 600 KiB submission:", big)
        assert big != 200
        # per user: 0.8 MiB of submissions; two of 300 KiB fit, a third does not
        for _ in range(2):
            status, answer = call("ada", "POST", "submission/c1/a1", files_form(300 * 1024))
            assert status == 200, answer
        status, answer = call("ada", "POST", "submission/c1/a1", files_form(300 * 1024))
        print("third submission of 300 KiB:", status, answer["message"])
        assert status == 413 and "cap of 0.8 MiB per user" in answer["message"], answer
        status, answer = call("tester", "GET", "submissions/c1/a1")
        assert status == 200 and len(answer["submissions"]) == 2, answer
        stored = sum(f.stat().st_size for f in (service_dir / "files").iterdir())
        assert stored < 2 * 300 * 1024 + 10_000, stored  # nothing of the refused ones stayed

        # the guide's backup and pruning commands ("Graded work"), run on this folder as the
        # hub pod runs them: a lesson is removed (its release and its submission stay on disk),
        # pruning lists exactly their files, and after deleting them the rest still downloads
        backup, prune = documented_ngshare_commands(service_dir)
        files = service_dir / "files"
        before = set(os.listdir(files))
        assert call("tester", "POST", "assignment/c1/a2", files_form(1000))[0] == 200
        assert call("ada", "POST", "submission/c1/a2", files_form(1000))[0] == 200
        removed = set(os.listdir(files)) - before
        assert len(removed) == 2, removed
        subprocess.run([sys.executable, "-c", backup], check=True, timeout=60)
        copy = sqlite3.connect(service_dir / "backup.db")
        assert copy.execute("select count(*) from files").fetchone()[0] == len(before) + 2
        copy.close()
        assert call("tester", "DELETE", "assignment/c1/a2")[0] == 200
        assert set(os.listdir(files)) == before | removed  # ngshare keeps the files
        listed = subprocess.run(
            [sys.executable, "-c", prune], check=True, capture_output=True, text=True, timeout=60
        ).stdout.split()
        print(f"pruning lists {len(listed)} files of the removed lesson; {len(before)} kept")
        assert set(listed) == removed, (listed, removed)
        for name in listed:
            (files / name).unlink()
        status, answer = call("tester", "GET", "submission/c1/a1/ada")
        assert status == 200 and answer["files"], answer


def test_ngshare_answers_when_the_hub_does_not(tmp_path):
    silent = socket.socket()  # a hub that takes the connection and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    port = free_port()
    command = local_ngshare(
        tmp_path,
        **{
            "--jupyterhub_api_url": f"http://127.0.0.1:{silent.getsockname()[1]}/hub/api",
            "--attnlab-hub-timeout": "1",
        },
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("JUPYTERHUB_")},
        "JUPYTERHUB_API_TOKEN": "not-asked",
        "JUPYTERHUB_CLIENT_ID": "service-ngshare",
        "JUPYTERHUB_SERVICE_PREFIX": PREFIX + "/",
        "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}",
    }
    log = open(tmp_path / "ngshare.log", "wb")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:  # its health check asks nobody
            try:
                requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5).raise_for_status()
                break
            except requests.RequestException:
                assert process.poll() is None and time.monotonic() < deadline, (
                    tmp_path / "ngshare.log"
                ).read_text()
                time.sleep(0.3)
        for attempt in range(2):
            began = time.monotonic()
            r = requests.get(
                f"http://127.0.0.1:{port}{PREFIX}/courses",
                headers={"Authorization": "token someones"},
                allow_redirects=False,
                timeout=30,
            )
            took = time.monotonic() - began
            print(f"request {attempt + 1} with the hub silent: {r.status_code} in {took:.1f} s")
            assert r.status_code in (302, 403) and took < 10, (r.status_code, took)
    finally:
        stop_tree(process, subprocess.Popen.terminate, wait_s=10)
        log.close()
        silent.close()
