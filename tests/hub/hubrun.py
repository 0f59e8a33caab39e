"""A private JupyterHub for tests and benchmarks: start it, drive it through its REST APIs, stop it.

JupyterHub from PyPI (pinned in requirements-dev.txt) behind configurable-http-proxy from npm
(installed once into a cache folder of ours, never globally), the dummy authenticator and
``SimpleLocalProcessSpawner`` (no system users: every user's server runs as our own Unix user,
in its own home folder under the hub's temp folder), on 127.0.0.1 with free ports, its own
config, database and cookie secret. It loads the course's shipped hub fragment
``deploy/hub/attnlab_hub.py`` (roles, groups, per-role nbgrader config) the way Zero to
JupyterHub (the default) or The Littlest JupyterHub loads it (tests/hub/engines.py reproduces
both engines' loading around JupyterHub's own config loader).
The hub is stopped by its PID (SIGTERM: it stops the proxy and the user servers it spawned);
anything of ours still alive afterwards is killed by PID.

Nothing here talks to a browser: users, servers and kernels are driven through the hub's REST
API, each user's Jupyter Server REST API and the kernels' websocket channels (websocket-client,
a dependency of jupyter_server).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engines
from processes import free_port, stop_tree

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
# configurable-http-proxy from npm: the version chart 4.4.0 runs in its proxy pod (its
# values.yaml, proxy.chp.image.tag), as tests/hub/engines.py pins the chart
CHP_VERSION = "5.2.0"
HUB_START_S = 60
SERVER_START_S = 90


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/attnlab`` (``~/.cache/attnlab``): kept between runs, outside the repo."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnlab"


def proxy_command() -> Path:
    """configurable-http-proxy, installed with npm into our cache folder on first use.

    Raises FileNotFoundError if npm is missing (the caller decides: skip locally, fail in CI).
    """
    prefix = cache_dir() / f"configurable-http-proxy-{CHP_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "configurable-http-proxy"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise FileNotFoundError("node and npm are needed for configurable-http-proxy")
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--silent",
            "--prefix",
            str(prefix),
            f"configurable-http-proxy@{CHP_VERSION}",
        ],
        check=True,
        timeout=600,
        stdout=subprocess.DEVNULL,
    )
    return binary


# The test's own hub settings: where the chart (Z2JH) or TLJH's own config would say what their
# pods or VM need, this hub runs on loopback with the dummy authenticator and local processes.
HUB_SETTINGS = """\
import os, sys
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{work}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{work}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = "{work}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{work}/homes/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {args!r}
c.Spawner.start_timeout = {server_start}
c.Spawner.http_timeout = {server_start}
c.Spawner.default_url = "/lab"
# The course's server settings (kernel websockets without Nagle's delay), which a regular
# pip install puts into the environment's etc/jupyter; the editable install here does not.
c.Spawner.environment = {{"JUPYTER_CONFIG_PATH": {jupyter_config!r}}}
# The test run's BLAS threads (run.sh: one per process, the machine's cores are all in use).
c.Spawner.env_keep.append("OPENBLAS_NUM_THREADS")
"""

# The test's service (its token drives the REST APIs), added where the chart adds hub.services.
TEST_SERVICE = """\
c.JupyterHub.services.append({{"name": "tester", "api_token": {token!r}}})
c.JupyterHub.load_roles.append({{
    "name": "tester",
    "scopes": ["admin:users", "admin:servers", "access:servers", "admin:groups", "list:users"],
    "services": ["tester"],
}})
"""

ENGINES = ("z2jh", "tljh")

# Each server in a memory cgroup of its own (tests/hub/limited_spawner.py), when the Hub is
# given a memory limit: what Kubernetes (Z2JH) and systemd (TLJH) do with Spawner.mem_limit.
MEMORY_LIMIT = """\
sys.path.insert(0, {here!r})
c.JupyterHub.spawner_class = "limited_spawner.MemoryLimitedSpawner"
c.MemoryLimitedSpawner.home_dir_template = "{work}/homes/{{username}}"
c.MemoryLimitedSpawner.mem_limit = {limit}
c.MemoryLimitedSpawner.cgroup_parent = {parent!r}
"""


class NoCgroup(RuntimeError):
    """No memory cgroup can be made here (why is the message)."""


def memory_cgroup_parent(name: str) -> Path:
    """A new memory cgroup ``name`` inside the one this process is in (so everything in it
    still counts against whatever limits this process lives under); raises NoCgroup.

    cgroup v1: the ``memory`` controller's hierarchy. cgroup v2: only where this process's
    cgroup can give its children the memory controller (a cgroup with processes of its own
    cannot, except the root of a cgroup namespace)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError as error:
        raise NoCgroup(f"no /proc/self/cgroup: {error}") from None
    own = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            own[controller] = path
    root = Path("/sys/fs/cgroup")
    unified = root / "cgroup.controllers"
    if "memory" in own and (root / "memory" / "memory.limit_in_bytes").exists():  # v1
        base = root / "memory" / own["memory"].lstrip("/")
    elif "" in own and unified.exists() and "memory" in unified.read_text().split():  # v2
        base = root / own[""].lstrip("/")
        try:
            (base / "cgroup.subtree_control").write_text("+memory")
        except OSError as error:
            raise NoCgroup(f"cgroup v2: cannot delegate memory from {base}: {error}") from None
    else:
        raise NoCgroup("no memory cgroup controller (v1 or v2) under /sys/fs/cgroup")
    parent = base / name
    try:
        parent.mkdir()
        if (parent / "memory.use_hierarchy").exists():
            (parent / "memory.use_hierarchy").write_text("1")
    except OSError as error:
        raise NoCgroup(f"cannot make a memory cgroup in {base}: {error}") from None
    return parent


def remove_cgroup(parent: Path) -> None:
    """Remove a cgroup made by memory_cgroup_parent and its children (their processes, ours,
    killed by PID first)."""
    for cgroup in [*sorted(p for p in parent.iterdir() if p.is_dir()), parent]:
        for _ in range(50):
            pids = [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            try:
                cgroup.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def write_config(
    folder: Path,
    engine: str,
    site: str,
    token: str,
    groups: dict[str, list[str]],
    services: str = "",
) -> Path:
    """The hub's config in ``folder``, loading the course's fragment as ``engine`` does
    (tests/hub/engines.py): Z2JH's chart config with deploy/z2jh/values.yaml (its copy of the
    fragment in hub.extraConfig, ``groups`` as a site's values file lists them), or TLJH's
    jupyterhub_config.d (the fragment file, instructors by deploy/tljh/instructors.sh)."""
    service = TEST_SERVICE.format(token=token) + services
    if engine == "z2jh":
        return engines.write_z2jh(folder, site, service, engines.z2jh_groups(groups))
    if engine == "tljh":
        extra = {name: users for name, users in groups.items() if name != "instructors"}
        config = engines.write_tljh(folder, site + service, groups.get("instructors", []), extra)
        return config
    raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")


@dataclass
class Hub:
    """A running private JupyterHub; use as a context manager.

    ``groups`` maps a group name to its users (``instructors``/``students`` give the course's
    roles); ``environment`` is added to the hub's environment (the fragment reads
    ``ATTNLAB_*`` settings from it); ``engine`` is how the course's fragment is loaded,
    as Zero to JupyterHub (``z2jh``) or The Littlest JupyterHub (``tljh``) loads it.
    """

    groups: dict[str, list[str]] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    workdir: Path | None = None
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    port: int = 0
    process: subprocess.Popen | None = None
    keep: bool = False
    engine: str = "z2jh"
    memory_limit: int | None = None  # bytes: each server in a memory cgroup with this limit
    services: str = ""  # more hub services (config lines), where the chart adds hub.services
    settings: str = ""  # more hub settings (config lines), after the test's own
    cgroup: Path | None = None  # the cgroup holding the servers' cgroups (memory_limit)
    _family: list[int] = field(default_factory=list)

    # -- life cycle ------------------------------------------------------------------------

    def __enter__(self) -> Hub:
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="attnlab-hub-"))
        else:
            self.keep = True
            self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            self.stop()
        if self.cgroup is not None:
            remove_cgroup(self.cgroup)
            self.cgroup = None
        if self.workdir is not None and not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def homes(self) -> Path:
        return self.workdir / "homes"

    def home(self, user: str) -> Path:
        return self.homes / user

    def log_tail(self, lines: int = 25) -> str:
        log = self.workdir / "jupyterhub.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def _config(self) -> Path:
        bin_dir = Path(sys.executable).parent
        args = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        site = HUB_SETTINGS.format(
            port=self.port,
            hub_port=free_port(),
            proxy_api_port=free_port(),
            proxy=str(proxy_command()),
            work=self.workdir,
            singleuser=str(bin_dir / "jupyterhub-singleuser"),
            args=args,
            server_start=SERVER_START_S,
            jupyter_config=str(ROOT / "jupyter-config"),
        )
        if self.memory_limit:
            self.cgroup = memory_cgroup_parent(f"attnlab-hub-{secrets.token_hex(4)}")
            site += MEMORY_LIMIT.format(
                here=str(Path(__file__).parent),
                work=self.workdir,
                limit=int(self.memory_limit),
                parent=str(self.cgroup),
            )
        site += self.settings
        return write_config(self.workdir, self.engine, site, self.token, self.groups, self.services)

    def _environment(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ATTNLAB_", "NBGRADER_", "JUPYTER", "JPY_"))
        }
        bin_dir = str(Path(sys.executable).parent)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env.pop("PYTHONPATH", None)
        env.update(self.environment)
        return env

    def _start(self) -> None:
        self.homes.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        config = self._config()
        with open(self.workdir / "jupyterhub.log", "wb") as log:
            self.process = subprocess.Popen(
                [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(config)],
                cwd=self.workdir,
                env=self._environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + HUB_START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"jupyterhub exited ({self.process.returncode}):\n{self.log_tail()}"
                )
            try:
                self.api("GET", "/")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError, AssertionError):
                time.sleep(0.3)
        raise TimeoutError(f"jupyterhub did not answer in {HUB_START_S} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM the hub by PID (it stops the proxy and the servers it spawned), then kill
        whatever of its process tree is left, by PID."""
        process, self.process = self.process, None
        stop_tree(process, subprocess.Popen.terminate, wait_s=30)

    # -- REST ------------------------------------------------------------------------------

    def request(
        self, method: str, url: str, body: Any = None, timeout: float = 120, raw: bool = False
    ) -> Any:
        """One HTTP request with the service token; JSON in, JSON (or bytes) out."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"token {self.token}"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:2000]
            raise AssertionError(f"{method} {url} -> {error.code}: {detail}") from None
        if raw:
            return payload
        return json.loads(payload) if payload.strip() else None

    def api(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        """The hub's REST API (``/hub/api`` + path)."""
        return self.request(method, f"{self.url}/hub/api{path}", body, **kw)

    def user_api(self, user: str, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        """``user``'s own server, through the proxy (``/user/NAME`` + path)."""
        return self.request(method, f"{self.url}/user/{user}{path}", body, **kw)

    # -- users and servers -------------------------------------------------------------------

    def log_in(self, user: str) -> str:
        """Log ``user`` in with the dummy authenticator through ``POST /hub/login``; returns the
        hub's answer (a redirect to the user's server means the login worked)."""
        data = urllib.parse.urlencode({"username": user, "password": "x"}).encode()
        opener = urllib.request.build_opener(_NoRedirect)
        first = opener.open(f"{self.url}/hub/login", timeout=30)  # sets the _xsrf cookie
        cookie = first.headers.get("Set-Cookie", "").split(";")[0]
        xsrf = cookie.split("=", 1)[1] if cookie.startswith("_xsrf=") else ""
        request = urllib.request.Request(
            f"{self.url}/hub/login?_xsrf={xsrf}",
            data=data,
            method="POST",
            headers={"Cookie": cookie},
        )
        try:
            opener.open(request, timeout=30)
        except urllib.error.HTTPError as error:
            if error.code in (302, 303):
                return error.headers["Location"]
            raise AssertionError(f"login of {user} failed: {error.code}") from None
        raise AssertionError(f"login of {user} did not redirect")

    def start_servers(self, users: list[str]) -> None:
        """Ask for every user's server, then wait until all are ready."""
        for user in users:
            self.api("POST", f"/users/{user}/server")
        deadline = time.monotonic() + SERVER_START_S
        waiting = set(users)
        while waiting:
            for user in list(waiting):
                if self.api("GET", f"/users/{user}")["servers"].get("", {}).get("ready"):
                    waiting.discard(user)
            if waiting and time.monotonic() > deadline:
                raise TimeoutError(f"servers not ready: {sorted(waiting)}\n{self.log_tail()}")
            time.sleep(0.3)

    def server_pid(self, user: str) -> int:
        """PID of ``user``'s single-user server (from the hub's spawner state)."""
        state = self.api("GET", f"/users/{user}?include_stopped_servers")["servers"][""]
        return int(state["state"]["pid"])

    # -- kernels -----------------------------------------------------------------------------

    def kernel(self, user: str, cwd: str = "") -> Kernel:
        """A new kernel in ``user``'s server (in folder ``cwd`` of their home)."""
        session = self.user_api(
            user,
            "POST",
            "/api/sessions",
            {
                "path": f"{cwd}/attnlab-{uuid.uuid4().hex[:8]}.ipynb".lstrip("/"),
                "type": "notebook",
                "name": "",
                "kernel": {"name": "python3"},
            },
        )
        return Kernel(self, user, session["kernel"]["id"], session["id"])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Kernel:
    """A kernel of one user's server, driven over its websocket channels like a front end."""

    def __init__(self, hub: Hub, user: str, kernel_id: str, session_id: str) -> None:
        self.hub, self.user, self.id, self.session_id = hub, user, kernel_id, session_id
        self.comms: dict[str, dict] = {}  # comm id -> state of the widget model it opened
        self.reconnects = 0
        self.connect()

    def connect(self) -> None:
        """(Re)open the channels websocket, as JupyterLab does when a connection drops
        (an idle client that answers no pings is disconnected by the server)."""
        import websocket  # websocket-client, a dependency of jupyter_server

        self.session = uuid.uuid4().hex
        url = (
            f"ws://127.0.0.1:{self.hub.port}/user/{self.user}/api/kernels/{self.id}/channels"
            f"?session_id={self.session}"
        )
        self.ws = websocket.create_connection(
            url, header=[f"Authorization: token {self.hub.token}"], timeout=120
        )

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            try:
                self.hub.user_api(self.user, "DELETE", f"/api/sessions/{self.session_id}")
            except AssertionError:
                pass

    def _message(self, channel: str, msg_type: str, content: dict) -> dict:
        return {
            "header": {
                "msg_id": uuid.uuid4().hex,
                "msg_type": msg_type,
                "username": self.user,
                "session": self.session,
                "date": "",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": channel,
            "buffers": [],
        }

    def send(self, channel: str, msg_type: str, content: dict) -> str:
        message = self._message(channel, msg_type, content)
        self.ws.send(json.dumps(message))
        return message["header"]["msg_id"]

    def receive(self, timeout: float) -> dict:
        self.ws.settimeout(timeout)
        frame = self.ws.recv()
        if not frame:  # websocket-client returns an empty frame once the server closed it
            raise ConnectionError(f"{self.user}: the kernel websocket was closed")
        if isinstance(frame, bytes):  # n, n offsets (big-endian), then the JSON and buffers
            count = int.from_bytes(frame[:4], "big")
            offsets = [
                int.from_bytes(frame[4 + 4 * i : 8 + 4 * i], "big") for i in range(count)
            ] + [len(frame)]
            message = json.loads(frame[offsets[0] : offsets[1]])
        else:
            message = json.loads(frame)
        content = message.get("content", {})
        if message.get("msg_type") == "comm_open":
            state = content.get("data", {}).get("state", {})
            self.comms[content["comm_id"]] = state
        return message

    def wait_for(self, parent: str, done: callable, timeout: float) -> list[dict]:
        """Messages answering ``parent`` until ``done(message)``; raises TimeoutError."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.user}: no reply to {parent} in {timeout} s")
            try:
                message = self.receive(left)
            except Exception as error:  # websocket timeout
                if "timed out" in str(error).lower():
                    continue
                raise
            if message.get("parent_header", {}).get("msg_id") == parent:
                seen.append(message)
                if done(message):
                    return seen

    def execute_request(self, code: str) -> str:
        """Start ``code`` as a front end does (an ``execute_request``); returns its msg_id."""
        return self.send(
            "shell",
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
        )

    def execute(self, code: str, timeout: float = 300) -> Execution:
        """Run ``code``; returns its stdout, rich text, error and the shell reply status."""
        msg_id = self.execute_request(code)
        messages = self.wait_for(
            msg_id,
            lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
            timeout,
        )
        return Execution(messages)

    def restart(self) -> None:
        """Restart the kernel through the server's REST API (as the Lab menu does)."""
        self.hub.user_api(self.user, "POST", f"/api/kernels/{self.id}/restart")


@dataclass
class Execution:
    """What one execute request produced."""

    messages: list[dict]

    @property
    def stdout(self) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
        )

    @property
    def text(self) -> str:
        """stdout plus every text/plain and text/html result or display, in order."""
        parts = []
        for m in self.messages:
            if m["msg_type"] == "stream":
                parts.append(m["content"]["text"])
            elif m["msg_type"] in ("execute_result", "display_data"):
                data = m["content"]["data"]
                parts.append(data.get("text/html") or data.get("text/plain", ""))
        return "".join(parts)

    @property
    def error(self) -> dict | None:
        for m in self.messages:
            if m["msg_type"] == "error":
                return m["content"]
        return None
