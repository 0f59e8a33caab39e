"""deploy/ stays one source of truth: the copies in the Zero to JupyterHub values equal the files,
every pin agrees with the pins the tests run, and TLJH and the image install binder/'s list."""

from __future__ import annotations

import importlib.util
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


def test_the_exchange_is_one_shared_volume_at_the_configured_path():
    v = values()
    exchange = v["hub"]["extraEnv"]["ATTNLAB_EXCHANGE"]
    mounts = v["singleuser"]["storage"]["extraVolumeMounts"]
    assert [m["mountPath"] for m in mounts] == [exchange]
    assert "ATTNLAB_EXCHANGE" in (ROOT / "nbgrader_config.py").read_text()


def test_values_size_and_cull_the_servers():
    v = values()["singleuser"]
    for key in ("guarantee", "limit"):
        assert re.fullmatch(r"\d+(\.\d+)?[MG]", str(v["memory"][key])), v["memory"]
        assert float(v["cpu"][key]) > 0
    assert values()["cull"]["enabled"] is True and values()["cull"]["timeout"] > 0


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
