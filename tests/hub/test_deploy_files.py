"""deploy/ stays one source of truth: the copies in the Zero to JupyterHub values equal the files,
every pin agrees with the pins the tests run, and TLJH and the image install binder/'s list."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
VALUES = DEPLOY / "z2jh" / "values.yaml"


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with =="
            found[name.lower()] = version
    return found


def values() -> dict:
    return yaml.safe_load(VALUES.read_text())


def test_values_carry_the_hub_fragment_and_the_nbgrader_configs_verbatim():
    v = values()
    assert v["hub"]["extraConfig"]["attnlab"] == (DEPLOY / "hub" / "attnlab_hub.py").read_text()
    files = v["singleuser"]["extraFiles"]
    for role in ("student", "instructor"):
        entry = files[f"nbgrader-{role}"]
        assert entry["mountPath"] == f"/etc/attnlab/nbgrader/{role}/nbgrader_config.py"
        assert (
            entry["stringData"] == (DEPLOY / "nbgrader" / role / "nbgrader_config.py").read_text()
        ), f"values.yaml's copy of the {role} config"
    assert v["hub"]["extraEnv"]["ATTNLAB_NBGRADER_CONFIG"] == "/etc/attnlab/nbgrader"


def option(command: list[str], name: str) -> str:
    """The value after ``name`` in a service's command."""
    assert command.count(name) == 1, f"{name} must appear once in {command}"
    return command[command.index(name) + 1]


def test_graded_work_has_a_volume_of_its_own_and_no_pod_mounts_an_unused_one():
    v = values()
    # no user pod mounts a shared exchange volume (nothing used it; pods stayed Pending without it)
    storage = v["singleuser"]["storage"]
    assert not storage.get("extraVolumes") and not storage.get("extraVolumeMounts"), storage
    assert "ATTNLAB_EXCHANGE" not in v["hub"]["extraEnv"]
    # ngshare's database and files: on the claim of deploy/z2jh/ngshare-volume.yaml, mounted in
    # the hub pod, not on the hub's own volume (/srv/jupyterhub, beside the hub's database)
    claim = yaml.safe_load((DEPLOY / "z2jh" / "ngshare-volume.yaml").read_text())
    assert claim["kind"] == "PersistentVolumeClaim" and claim["spec"]["resources"]["requests"]
    (volume,) = v["hub"]["extraVolumes"]
    assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    (mount,) = v["hub"]["extraVolumeMounts"]
    assert mount["name"] == volume["name"]
    command = v["hub"]["services"]["ngshare"]["command"]
    database = option(command, "--database")
    storage_path = option(command, "--storage")
    for where in (database.removeprefix("sqlite:///"), storage_path):
        assert where.startswith(mount["mountPath"] + "/"), (where, mount)
        assert not where.startswith("/srv/jupyterhub"), where
    # the caps on what one user stores, which ngshare_service.py reads
    assert float(option(command, "--attnlab-max-request-mb")) <= 50
    assert float(option(command, "--attnlab-max-user-mb")) <= 500


def test_values_size_and_cull_the_servers():
    v = values()["singleuser"]
    for key in ("guarantee", "limit"):
        assert re.fullmatch(r"\d+(\.\d+)?[MG]", str(v["memory"][key])), v["memory"]
        assert float(v["cpu"][key]) > 0
    # A node short of memory evicts first the pods using more than their request; a server
    # whose request equals its limit never uses more, so it is not the one evicted for it.
    assert v["memory"]["guarantee"] == v["memory"]["limit"], v["memory"]
    assert values()["cull"]["enabled"] is True and values()["cull"]["timeout"] > 0


# -- the exchange's network path, with Kubernetes' semantics (no cluster here) ---------------
# The chart (4.4.0: jupyterhub/templates/hub/netpol.yaml, singleuser/netpol.yaml, read at the
# tag) renders these rules of its own and appends hub.networkPolicy.ingress and
# singleuser.networkPolicy.egress from the values. NetworkPolicy semantics
# (kubernetes.io/docs/concepts/services-networking/network-policies): a connection to a pod is
# admitted when ANY rule admits it; a rule admits it when one of its peers matches (a
# podSelector without namespaceSelector: pods of the policy's namespace whose labels include
# matchLabels) and one of its ports matches (none listed: every port); a connection through a
# Service is judged after the Service is resolved, so the peer is the pod and the port is the
# Service's targetPort. Loopback inside one pod is never judged.
POD_LABELS = {  # the chart's labels (jupyterhub.matchLabels: app, component, release)
    "hub": {"app": "jupyterhub", "component": "hub", "release": "attnlab"},
    "proxy": {"app": "jupyterhub", "component": "proxy", "release": "attnlab"},
    "singleuser-server": {
        "app": "jupyterhub",
        "component": "singleuser-server",
        "release": "attnlab",
        "hub.jupyter.org/network-access-hub": "true",
    },
    "other": {"app": "somethingelse"},
}
CHART_HUB_INGRESS = [  # hub/netpol.yaml: allowed pods --> hub (port name http: 8081)
    {
        "ports": [{"port": 8081}],
        "from": [{"podSelector": {"matchLabels": {"hub.jupyter.org/network-access-hub": "true"}}}],
    }
]
CHART_SINGLEUSER_EGRESS = [  # singleuser/netpol.yaml: singleuser-server --> hub
    {
        "to": [{"podSelector": {"matchLabels": {"app": "jupyterhub", "component": "hub"}}}],
        "ports": [{"port": 8081}],
    }
]


def admitted(rules: list[dict], peer: str, port: int, side: str) -> bool:
    for rule in rules:
        peers = rule.get(side)
        peer_ok = not peers or any(
            set(p["podSelector"].get("matchLabels", {}).items()) <= set(POD_LABELS[peer].items())
            for p in peers
            if "podSelector" in p and "namespaceSelector" not in p
        )
        ports = rule.get("ports")
        port_ok = not ports or any(
            p["port"] == port and p.get("protocol", "TCP") == "TCP" for p in ports
        )
        if peer_ok and port_ok:
            return True
    return False


def test_servers_reach_ngshare_in_the_hub_pod_directly_and_only_they_do():
    from urllib.parse import urlsplit

    v = values()
    hub_in = CHART_HUB_INGRESS + v["hub"]["networkPolicy"]["ingress"]
    server_out = CHART_SINGLEUSER_EGRESS + v["singleuser"]["networkPolicy"]["egress"]
    # the servers' URL: the hub Service (not proxy-public: no proxy, so no HTTPS redirect,
    # whatever proxy.https says), on a port the Service sends to ngshare's own port
    students = urlsplit(v["hub"]["extraEnv"]["ATTNLAB_NGSHARE"])
    assert students.scheme == "http" and students.hostname == "hub", students
    (port,) = [p for p in v["hub"]["service"]["extraPorts"] if p["port"] == students.port]
    service = v["hub"]["services"]["ngshare"]
    ngshare_port = urlsplit(service["url"]).port
    assert port["targetPort"] == ngshare_port
    assert students.path.rstrip("/") == "/services/ngshare"  # ngshare's prefix: /services/<name>/
    # a server -> the hub pod's ngshare port: admitted on both ends
    assert admitted(server_out, "hub", ngshare_port, "to")
    assert admitted(hub_in, "singleuser-server", ngshare_port, "from")
    # nobody else: not the proxy (the old path), not another pod; nothing new elsewhere
    for peer in ("proxy", "other"):
        assert not admitted(hub_in, peer, ngshare_port, "from"), peer
    assert not admitted(server_out, "proxy", ngshare_port, "to")
    assert admitted(hub_in, "singleuser-server", 8081, "from")  # the chart's own rule stands
    # the hub and ngshare reach each other on loopback, never through the hub's own Service
    # (hairpin traffic the policy does not admit: the hub pod is no server pod)
    assert not admitted(hub_in, "hub", ngshare_port, "from")
    for url in (
        service["url"],
        v["hub"]["extraEnv"]["ATTNLAB_NGSHARE_API"],
        option(service["command"], "--jupyterhub_api_url"),
    ):
        assert urlsplit(url).hostname == "127.0.0.1", url
    assert option(service["command"], "--jupyterhub_api_url").endswith(":8081/hub/api")


def test_hub_extras_agree_with_the_pins_the_tests_run():
    extras = pins(DEPLOY / "hub-requirements.txt")
    tested = {**pins(ROOT / "requirements.txt"), **pins(ROOT / "requirements-dev.txt")}
    assert "nbgrader" in extras and "nbgitpuller" in extras
    for name, version in extras.items():
        if name in tested:
            assert tested[name] == version, f"{name}: deploy pins {version}, tests {tested[name]}"
    learner = pins(ROOT / "binder" / "requirements.txt")
    assert not set(extras) & set(learner), "a learner package is pinned twice"


def test_every_installer_takes_the_learner_environment_from_binder():
    setup = (DEPLOY / "tljh" / "setup.sh").read_text()
    assert "-r binder/requirements.txt" in setup and "-r deploy/hub-requirements.txt" in setup
    assert not re.search(r"\w==\d", setup), "TLJH must not pin packages of its own"
    build = (DEPLOY / "image" / "build.sh").read_text()
    assert "jupyter-repo2docker" in build and "appendix.Dockerfile" in build
    assert "hub-requirements.txt" in (DEPLOY / "image" / "appendix.Dockerfile").read_text()


def test_the_nbgitpuller_link_opens_the_first_lesson():
    spec = importlib.util.spec_from_file_location("link", DEPLOY / "nbgitpuller_link.py")
    link = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(link)
    url = link.nbgitpuller_link(
        "https://hub.example.org", "https://github.com/x/attnlab", branch="term"
    )
    assert url.startswith("https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A")
    assert "branch=term" in url and "urlpath=lab%2Ftree%2Fattnlab%2Fnotebooks%2F00-start" in url
    assert (ROOT / link.START).exists()
    try:
        link.nbgitpuller_link("hub.example.org", "https://github.com/x/attnlab")
    except ValueError as error:
        assert "hub" in str(error)
    else:
        raise AssertionError("a hub without a scheme was accepted")


def test_the_chart_version_the_tests_reproduce_is_the_one_pinned():
    import engines  # beside this file

    version = engines.Z2JH_CHART_VERSION
    assert f"--version {version} --values deploy/z2jh/values.yaml" in VALUES.read_text()
    guide = (ROOT / "docs" / "jupyterhub.md").read_text()
    assert f"--version {version}" in guide and f"chart **{version}**" in guide
    assert engines.Z2JH_PY.count(f"chart {version},") == 1
    assert engines.Z2JH_CHART_CONFIG.count(f"chart {version},") == 1


def test_the_tests_run_the_jupyterhub_of_the_pinned_chart():
    import engines  # beside this file
    import jupyterhub

    version = engines.Z2JH_JUPYTERHUB_VERSION
    assert pins(ROOT / "requirements-dev.txt")["jupyterhub"] == version
    # the culler and the proxy under test are the chart's too
    assert pins(ROOT / "requirements-dev.txt")["jupyterhub-idle-culler"] == (
        engines.Z2JH_CULLER_VERSION
    )
    import hubrun

    assert hubrun.CHP_VERSION == engines.Z2JH_CHP_VERSION
    assert jupyterhub.__version__ == version, "the environment is not the pinned one"
    assert f"JupyterHub {version} in the hub pod" in VALUES.read_text()
    guide = (ROOT / "docs" / "jupyterhub.md").read_text()
    assert f"**{version}**" in guide and f"runs JupyterHub {version} in its hub pod" in guide


def test_nobody_lists_the_students_and_tljh_writes_instructors_with_its_own_script():
    groups = values()["hub"]["config"]["JupyterHub"]["load_groups"]
    assert list(groups) == ["instructors"], "the fragment fills students; do not list them"
    fragment = (DEPLOY / "hub" / "attnlab_hub.py").read_text()
    assert "get_config(" not in fragment.split('"""', 2)[2], "Z2JH's get_config takes a key"
    setup = (DEPLOY / "tljh" / "setup.sh").read_text()
    assert "deploy/tljh/instructors.sh /opt/tljh/config/jupyterhub_config.d" in setup


# -- ngshare_exchange, vendored at upstream master (deploy/vendor/ngshare_exchange) ----------
VENDORED_EXCHANGE = DEPLOY / "vendor" / "ngshare_exchange"


def vendored_exchange_module(monkeypatch):
    """The vendored ``ngshare_exchange.exchange`` (imported from deploy/vendor, not installed),
    forgotten again when the test ends."""
    import sys

    monkeypatch.setenv("USER", os.environ.get("USER", "root"))  # read at class definition
    monkeypatch.syspath_prepend(str(VENDORED_EXCHANGE))
    for name in [m for m in sys.modules if m.split(".")[0] == "ngshare_exchange"]:
        monkeypatch.delitem(sys.modules, name)
    module = importlib.import_module("ngshare_exchange.exchange")
    for name in [m for m in sys.modules if m.split(".")[0] == "ngshare_exchange"]:
        monkeypatch.setitem(sys.modules, name, sys.modules[name])  # removed at teardown
    return module


def test_the_exchange_requirements_install_the_vendored_upstream_commit():
    lines = [x.split("#")[0].strip() for x in (DEPLOY / "exchange-requirements.txt").open()]
    assert [x for x in lines if x] == ["./deploy/vendor/ngshare_exchange"]
    note = (VENDORED_EXCHANGE / "VENDORED.md").read_text()
    commit = re.search(r"commit\s+`([0-9a-f]{40})`", note).group(1)
    version = (VENDORED_EXCHANGE / "ngshare_exchange" / "version.py").read_text()
    assert f"+{commit[:7]}'" in version, version  # the installed version names the commit
    assert (VENDORED_EXCHANGE / "LICENSE").read_text().startswith("BSD 3-Clause License")
    appendix = (DEPLOY / "image" / "appendix.Dockerfile").read_text()
    assert "cd ${REPO_DIR} &&" in appendix and "-r deploy/exchange-requirements.txt" in appendix


def test_vendored_exchange_collects_a_subfolder_whatever_the_current_folder(tmp_path, monkeypatch):
    """upstream 946cf80: files from ngshare are written into the destination's subfolders even
    when a folder of the same name exists where the process runs. Formgrader collects in the
    instructor's server, whose current folder is the server's root with the course below it;
    ngshare_exchange 0.5.3 looked for the subfolder there, did not make it in the destination
    and failed on the file (FileNotFoundError)."""
    import base64
    import logging
    from types import SimpleNamespace

    exchange = vendored_exchange_module(monkeypatch)
    home = tmp_path / "home"  # the server's root, Formgrader's current folder
    (home / "data").mkdir(parents=True)
    monkeypatch.chdir(home)
    files = {"00-start-here.ipynb": "{}\n", "data/scores.csv": "1,2\n", "timestamp.txt": "t"}
    encoded = [{"path": p, "content": base64.b64encode(t.encode())} for p, t in files.items()]
    dest = home / "attnlab-course" / "submitted" / "ada" / "00-start-here"
    collector = SimpleNamespace(log=logging.getLogger("ngshare-exchange-test"))
    exchange.Exchange.decode_dir(collector, encoded, str(dest))
    assert {str(p.relative_to(dest)): p.read_text() for p in dest.rglob("*.*")} == files
    assert not (home / "data" / "scores.csv").exists()
