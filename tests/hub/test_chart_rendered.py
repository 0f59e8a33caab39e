"""The Zero to JupyterHub chart 4.4.0 rendered with deploy/z2jh/values.yaml, by Helm's own engine.

No ``helm`` binary installs here (Debian has no package; PyPI's and npm's "helm" packages are
other things or wrappers that download one). helm-python-sdk ships Helm's Go SDK (v4) as a
shared library in its wheel and renders a chart offline as ``helm template`` does: the chart's
templates, its values.schema.json (the values are refused if they break the chart's schema), the
release's name and namespace. It is installed into our cache folder on first use, like the hub
tests' proxy (skipped where it cannot be installed, a failure in CI). The chart is vendored in
``z2jh-chart/`` (tag 4.4.0 as chartpress publishes it: z2jh-chart/VENDORED.md).

The checks read the rendered objects, not the values: the hub's and the servers' NetworkPolicy
(Kubernetes' semantics as in test_deploy_files.py, with the pods' labels taken from the rendered
Deployments and, for the servers that KubeSpawner makes, from the labels the chart's config
gives them), the hub Service's ngshare port, the hub pod's ngshare volume and the hub's services
as the hub reads them (the chart's Secret).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import engines
import hubrun
import pytest
import yaml
from conftest import in_ci

# slow: the first run downloads the wheel (75 MB); later runs take a few seconds
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHART = Path(__file__).parent / "z2jh-chart" / "jupyterhub"
VALUES = ROOT / "deploy" / "z2jh" / "values.yaml"
NGSHARE_VOLUME = ROOT / "deploy" / "z2jh" / "ngshare-volume.yaml"
HELM_SDK = "helm-python-sdk==0.2.2"  # Helm SDK v4.2.3 in libhelm_c (its wheel, manylinux x86_64)
RELEASE, NAMESPACE = "attnlab", "attnlab"

RENDER = """\
import json, sys
from helm_python import _native
from helm_python.chart import Chart
from helm_python.errors import HelmError
chart, values, release, namespace = sys.argv[1:5]
c = Chart.load(chart)
out = {"helm": _native.helm_sdk_version(), "chart": c.version}
out["manifests"] = c.render(json.loads(values), name=release, namespace=namespace, is_install=True)
try:  # the schema is enforced: a key the chart does not know is refused
    c.render({"hub": {"notAKey": 1}}, name=release, namespace=namespace)
    out["refused"] = ""
except HelmError as error:
    out["refused"] = str(error)
print(json.dumps(out))
"""


def helm_sdk() -> Path:
    """helm-python-sdk, installed (``pip install --target``) into our cache folder on first use."""
    cached = hubrun.cache_dir() / HELM_SDK.replace("==", "-")
    if not (cached / "helm_python").is_dir():
        hubrun.cache_dir().mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix="helm-", dir=hubrun.cache_dir()))
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
            + [str(partial), "--only-binary=:all:", HELM_SDK],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode:
            shutil.rmtree(partial, ignore_errors=True)
            raise OSError(done.stderr.strip().splitlines()[-1] if done.stderr else "pip failed")
        partial.rename(cached)
    return cached


@pytest.fixture(scope="module")
def rendered() -> dict:
    try:
        site = helm_sdk()
    except (OSError, subprocess.SubprocessError) as error:
        reason = f"Helm's engine ({HELM_SDK}) could not be installed: {error}"
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    values = yaml.safe_load(VALUES.read_text())
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(CHART), json.dumps(values), RELEASE, NAMESPACE],
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]  # a schema error names the key
    out = json.loads(done.stdout)
    objects = {}
    for path, text in out["manifests"].items():
        if not path.endswith(".yaml"):  # NOTES.txt
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                objects[(doc["kind"], doc["metadata"]["name"])] = doc
    print(f"chart {out['chart']} rendered by Helm SDK {out['helm']}: {len(objects)} objects")
    return {"objects": objects, **out}


def secret_values(objects: dict) -> dict:
    """The values as the hub reads them (the chart's Secret ``hub``, key values.yaml)."""
    return yaml.safe_load(base64.b64decode(objects["Secret", "hub"]["data"]["values.yaml"]))


def pod_labels(objects: dict) -> dict[str, dict[str, str]]:
    """The labels of each kind of pod: the hub's and the proxy's from their Deployments; a
    user's server from KubeSpawner's labels as the chart's config sets them (common labels,
    component singleuser-server, singleuser.extraLabels)."""
    hub = objects["Deployment", "hub"]["spec"]["template"]["metadata"]["labels"]
    proxy = objects["Deployment", "proxy"]["spec"]["template"]["metadata"]["labels"]
    server = {
        "app": hub["app"],
        "release": hub["release"],
        "component": "singleuser-server",
        **secret_values(objects)["singleuser"].get("extraLabels", {}),
    }
    return {"hub": hub, "proxy": proxy, "singleuser-server": server, "other": {"app": "x"}}


def selects(selector: dict, labels: dict) -> bool:
    return set(selector.get("matchLabels", {}).items()) <= set(labels.items())


def named_ports(deployment: dict) -> dict[str, int]:
    """A pod's container ports by name (a NetworkPolicy may name the port)."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return {p["name"]: p["containerPort"] for c in containers for p in c.get("ports", [])}


def admits(
    policy: dict, side: str, peer: str, port: int, labels: dict, ports: dict[str, int]
) -> bool:
    """Whether ``policy`` admits a TCP connection from (``side="from"``, its ingress) or to
    (``"to"``, its egress) a pod of kind ``peer`` on ``port`` of the pod the connection reaches
    (``ports``: that pod's named ports). Kubernetes: any rule admits; in a rule, one of its
    peers (a podSelector alone: pods of this namespace whose labels include it; none listed:
    all) and one of its ports (none listed: all) must match."""
    for rule in policy["spec"]["ingress" if side == "from" else "egress"]:
        peers = rule.get(side)
        peer_ok = not peers or any(
            selects(p["podSelector"], labels[peer])
            for p in peers
            if "podSelector" in p and "namespaceSelector" not in p
        )
        numbers = [
            ports[p["port"]] if isinstance(p["port"], str) else p["port"]
            for p in rule.get("ports", [])
            if p.get("protocol", "TCP") == "TCP"
        ]
        if peer_ok and (not rule.get("ports") or port in numbers):
            return True
    return False


def test_the_values_pass_the_chart_schema_and_render(rendered):
    assert rendered["chart"] == engines.Z2JH_CHART_VERSION  # the chart the values pin
    assert "notAKey" in rendered["refused"], rendered["refused"]  # the schema is enforced
    objects = rendered["objects"]
    assert objects["Deployment", "hub"]["metadata"]["labels"]["helm.sh/chart"] == "jupyterhub-4.4.0"


def test_rendered_policies_let_the_servers_and_only_they_reach_ngshare(rendered):
    objects = rendered["objects"]
    labels = pod_labels(objects)
    hub_policy, server_policy = (
        objects["NetworkPolicy", "hub"],
        objects["NetworkPolicy", "singleuser"],
    )
    hub_pod = objects["Deployment", "hub"]
    assert selects(hub_policy["spec"]["podSelector"], labels["hub"])
    assert selects(server_policy["spec"]["podSelector"], labels["singleuser-server"])
    v = secret_values(objects)
    ngshare_port = urlsplit(v["hub"]["services"]["ngshare"]["url"]).port
    servers_url = urlsplit(v["hub"]["extraEnv"]["ATTNLAB_NGSHARE"])

    # the servers' URL goes to the hub Service, whose port leads to the hub pod's ngshare port
    service = objects["Service", servers_url.hostname]
    assert selects({"matchLabels": service["spec"]["selector"]}, labels["hub"])
    (port,) = [p for p in service["spec"]["ports"] if p["port"] == servers_url.port]
    assert port["targetPort"] == ngshare_port, port
    env = {
        e["name"]: e.get("value")
        for e in hub_pod["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["ATTNLAB_NGSHARE"] == v["hub"]["extraEnv"]["ATTNLAB_NGSHARE"]

    # a server -> the hub pod's ngshare port: its egress and the hub's ingress both admit it
    ports = named_ports(hub_pod)
    assert admits(server_policy, "to", "hub", ngshare_port, labels, ports)
    assert admits(hub_policy, "from", "singleuser-server", ngshare_port, labels, ports)
    # nobody else reaches it: not the proxy, not another pod, not the hub through its Service
    for peer in ("proxy", "other", "hub"):
        assert not admits(hub_policy, "from", peer, ngshare_port, labels, ports), peer
    # the chart's own rules stand: servers and the proxy reach the hub's API (port name http)
    for peer in ("singleuser-server", "proxy"):
        assert admits(hub_policy, "from", peer, ports["http"], labels, ports), peer
    print(
        f"hub ingress on {ngshare_port}: servers admitted, proxy/other/hub refused; servers' "
        f"egress to hub:{ngshare_port} admitted; {servers_url.geturl()} -> Service port "
        f"{port['port']} -> targetPort {port['targetPort']}"
    )


def test_rendered_hub_keeps_graded_work_on_its_own_volume(rendered):
    objects = rendered["objects"]
    pod = objects["Deployment", "hub"]["spec"]["template"]["spec"]
    claim = yaml.safe_load(NGSHARE_VOLUME.read_text())["metadata"]["name"]
    (volume,) = [
        x for x in pod["volumes"] if x.get("persistentVolumeClaim", {}).get("claimName") == claim
    ]
    (mount,) = [
        m for c in pod["containers"] for m in c["volumeMounts"] if m["name"] == volume["name"]
    ]
    command = secret_values(objects)["hub"]["services"]["ngshare"]["command"]
    database = command[command.index("--database") + 1]
    storage = command[command.index("--storage") + 1]
    folder = mount["mountPath"].rstrip("/") + "/"
    assert database.startswith(f"sqlite:///{folder}") and storage.startswith(folder), command
    # no pod but the hub's mounts a volume for graded work; the servers' storage has no extras
    storage_values = secret_values(objects)["singleuser"]["storage"]
    assert not storage_values.get("extraVolumes") and not storage_values.get("extraVolumeMounts")
    claims = {
        x["persistentVolumeClaim"]["claimName"]
        for (kind, _), o in objects.items()
        if kind in ("Deployment", "StatefulSet", "DaemonSet")
        for x in o["spec"]["template"]["spec"].get("volumes", [])
        if "persistentVolumeClaim" in x
    }
    assert claims == {claim, "hub-db-dir"}, claims
