"""How the two hub engines load the course's hub fragment, reproduced for the tests.

The fragment (deploy/hub/attnlab_hub.py) is not loaded by our own code in any test: each engine's
own loading is reproduced here, around the real JupyterHub config loader (traitlets'
``PyFileConfigLoader``, which JupyterHub uses for ``jupyterhub_config.py``).

**Zero to JupyterHub**, chart version ``Z2JH_CHART_VERSION``. The chart's hub runs its own
``jupyterhub/files/hub/jupyterhub_config.py`` (JupyterHub's config file) with ``z2jh.py`` (from
``jupyterhub/files/hub/z2jh.py``) beside it. ``Z2JH_PY`` and ``Z2JH_CHART_CONFIG`` below are the
parts of those two files that decide how ``hub.config``, ``hub.loadRoles`` and ``hub.extraConfig``
reach the hub, kept as upstream wrote them; what is left out configures KubeSpawner, the proxy
pod, the database, authenticator secrets and the idle culler, which do not exist here. The one
change: upstream's ``_load_config`` reads the Helm values from the mounted Secret
``/usr/local/etc/jupyterhub/secret/values.yaml``; here it reads ``values.yaml`` beside the file
(the real ``deploy/z2jh/values.yaml`` with the test's values layered on top, as Helm layers
``--values`` files). Note what the chart does: ``from z2jh import get_config`` replaces traitlets'
``get_config`` in the config file's namespace, and each ``hub.extraConfig`` entry is ``exec``-ed
in that namespace, so an entry sees ``c`` (the hub's config) and z2jh's ``get_config(key,
default=None)``.

**The Littlest JupyterHub**: its ``tljh/jupyterhub_config.py`` ends by loading every
``jupyterhub_config.d/*.py`` (sorted) with traitlets' ``load_subconfig``; ``TLJH_LOOP`` is that
loop as upstream wrote it, with the folder the test's own. Each file gets a fresh ``c`` and
traitlets' ``get_config()``; its config is merged into the hub's afterwards.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
VALUES = DEPLOY / "z2jh" / "values.yaml"
FRAGMENT = DEPLOY / "hub" / "attnlab_hub.py"
Z2JH_CHART_VERSION = "4.4.0"  # keep equal to the pin in deploy/z2jh/values.yaml and the guide
# The JupyterHub that chart's hub image (quay.io/jupyterhub/k8s-hub:<chart version>) ships: its
# images/hub/requirements.txt at the tag 4.4.0 (jupyterhub==5.5.0, jupyterhub-idle-culler==1.4.0;
# its values.yaml runs configurable-http-proxy 5.2.0). Chart 4.4.0 is the first with all three
# security releases (4.3.3: CVE-2026-33709, 4.3.4: CVE-2026-40864, 4.4.0: GHSA-p43p-whwx-q52h).
# requirements-dev.txt pins both, hubrun.CHP_VERSION the proxy, so the test hub, its culler,
# proxy and single-user servers are the ones a class on this chart gets.
Z2JH_JUPYTERHUB_VERSION = "5.5.0"
Z2JH_CULLER_VERSION = "1.4.0"  # jupyterhub-idle-culler in the same hub image
Z2JH_CHP_VERSION = "5.2.0"  # configurable-http-proxy in the chart's proxy pod

# -- Zero to JupyterHub ------------------------------------------------------------------------

# From the chart's jupyterhub/files/hub/z2jh.py (chart 4.4.0, unchanged since 4.1.0): get_config,
# its merge, and set_config_if_not_none; _load_config reads the test's values.yaml (see the
# module docstring).
Z2JH_PY = '''\
"""Vendored from Zero to JupyterHub chart 4.4.0, jupyterhub/files/hub/z2jh.py (trimmed)."""

import os
from collections.abc import Mapping
from functools import lru_cache

import yaml


@lru_cache
def _load_config():
    path = os.path.join(os.path.dirname(os.path.realpath(__file__)), "values.yaml")
    with open(path) as f:
        return yaml.safe_load(f)


def _merge_dictionaries(a, b):
    """Merge two dictionaries recursively.

    Simplified From https://stackoverflow.com/a/7205107
    """
    merged = a.copy()
    for key in b:
        if key in a:
            if isinstance(a[key], Mapping) and isinstance(b[key], Mapping):
                merged[key] = _merge_dictionaries(a[key], b[key])
            else:
                merged[key] = b[key]
        else:
            merged[key] = b[key]
    return merged


def get_config(key, default=None):
    """
    Find a config item of a given name & return it

    Parses everything as YAML, so lists and dicts are available too

    get_config("a.b.c") returns config['a']['b']['c']
    """
    value = _load_config()
    # resolve path in yaml
    for level in key.split("."):
        if not isinstance(value, dict):
            # a parent is a scalar or null,
            # can't resolve full path
            return default
        if level not in value:
            return default
        else:
            value = value[level]
    return value


@lru_cache
def get_secret_value(key, default="never-set"):
    """The chart reads this from its k8s Secret, where it generates a random api token for each
    hub.services entry that sets none (replaced here: a fresh random token per key)."""
    import secrets

    if key.startswith("hub.services.") and key.endswith(".apiToken"):
        return get_config(key) or secrets.token_hex(32)
    if default != "never-set":
        return default
    raise KeyError(key)


def set_config_if_not_none(cparent, name, key):
    """
    Find a config item of a given name, set the corresponding Jupyter
    configuration item if not None
    """
    data = get_config(key)
    if data is not None:
        setattr(cparent, name, data)
'''

# From the chart's jupyterhub/files/hub/jupyterhub_config.py (chart 4.4.0), in upstream's order:
# the z2jh import, the reset of services and roles, the hub.services loop, hub.loadRoles,
# hub.config, the jupyterhub_config.d folder and the hub.extraConfig loop. {site} is where the
# chart configures its own services (the idle culler; here: the test's own service); the
# hub.services loop (the exchange service, ngshare) follows it as upstream, with each service's
# api token from get_secret_value (the chart's Secret; here a fresh random token).
Z2JH_CHART_CONFIG = """\
# --- vendored from Zero to JupyterHub chart 4.4.0, jupyterhub/files/hub/jupyterhub_config.py ---
import glob
import os
import sys

# Make sure that modules placed in the same directory as the jupyterhub config are added to the
# pythonpath
configuration_directory = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, configuration_directory)

from z2jh import (
    get_config,
    set_config_if_not_none,
    get_secret_value,
)

c.JupyterHub.services = []
c.JupyterHub.load_roles = []

{site}

for key, service in get_config("hub.services", {{}}).items():
    # c.JupyterHub.services is a list of dicts, but
    # hub.services is a dict of dicts to make the config mergable
    service.setdefault("name", key)

    # As the api_token could be exposed in hub.existingSecret, we need to read
    # it it from there or fall back to the chart managed k8s Secret's value.
    service.pop("apiToken", None)
    service["api_token"] = get_secret_value(f"hub.services.{{key}}.apiToken")

    c.JupyterHub.services.append(service)

for key, role in get_config("hub.loadRoles", {{}}).items():
    # c.JupyterHub.load_roles is a list of dicts, but
    # hub.loadRoles is a dict of dicts to make the config mergable
    role.setdefault("name", key)

    c.JupyterHub.load_roles.append(role)

# load hub.config values, except potentially seeded secrets already loaded
for section, cfg in get_config("hub.config", {{}}).items():
    if section == "JupyterHub":
        cfg.pop("proxy_auth_token", None)
        cfg.pop("cookie_secret", None)
        cfg.pop("services", None)
    elif section == "ConfigurableHTTPProxy":
        cfg.pop("auth_token", None)
    elif section == "CryptKeeper":
        cfg.pop("keys", None)

    if not section[:1].isupper():
        # traitlets config sections are Configurable class names
        # that MUST start with upper-case
        # if it starts with lowercase, it must be a mistake
        # (e.g. putting `hub.loadRoles` under `hub.config.loadRoles`),
        # and will have no effect, so warn or raise here
        print(
            f"FATAL: Invalid hub.config section name: {{section}}."
            " hub.config sections must be Configurable class names (e.g. JupyterHub)."
            " Maybe misplaced or misspelled config?",
            file=sys.stderr,
        )
        # make this fatal:
        sys.exit(1)

    print(f"Loading pass-through config section hub.config.{{section}}")
    c[section].update(cfg)

# load /usr/local/etc/jupyterhub/jupyterhub_config.d config files
config_dir = "/usr/local/etc/jupyterhub/jupyterhub_config.d"
if os.path.isdir(config_dir):
    for file_path in sorted(glob.glob(f"{{config_dir}}/*.py")):
        file_name = os.path.basename(file_path)
        print(f"Loading {{config_dir}} config: {{file_name}}")
        with open(file_path) as f:
            file_content = f.read()
        # compiling makes debugging easier: https://stackoverflow.com/a/437857
        exec(compile(source=file_content, filename=file_name, mode="exec"))

# execute hub.extraConfig entries
for key, config_py in sorted(get_config("hub.extraConfig", {{}}).items()):
    print(f"Loading extra config: {{key}}")
    exec(config_py)
"""


def merge(a: dict, b: dict) -> dict:
    """``b`` layered over ``a`` (as Helm layers a second ``--values`` file; a ``null`` in ``b``
    removes the key, as in Helm)."""
    merged = dict(a)
    for key, value in b.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# The exchange service of deploy/z2jh/values.yaml (hub.services.ngshare) runs in the hub pod
# from the hub image; a test hub that is not about the exchange runs without it, as a site that
# turns it off does (``--set hub.services.ngshare=null``).
WITHOUT_EXCHANGE_SERVICE = {"hub": {"services": {"ngshare": None}}}


def write_z2jh(
    folder: Path,
    site: str,
    services: str,
    values: dict | None = None,
    base: Path = VALUES,
    exchange_service: bool = False,
) -> Path:
    """A Z2JH hub's config in ``folder``: ``site`` (what the chart derives from its values for
    its own pods; here the test's hub settings), the vendored chart config with ``services``
    where the chart adds its own services, ``z2jh.py`` and ``values.yaml`` (``base`` with
    ``values`` over it; without the exchange service unless ``exchange_service``, whose
    command and URL ``values`` then make local). Returns the config file."""
    folder.mkdir(parents=True, exist_ok=True)
    layered = yaml.safe_load(base.read_text())
    if not exchange_service:
        layered = merge(layered, WITHOUT_EXCHANGE_SERVICE)
    layered = merge(layered, values or {})
    (folder / "values.yaml").write_text(yaml.safe_dump(layered))
    (folder / "z2jh.py").write_text(Z2JH_PY)
    config = folder / "jupyterhub_config.py"
    config.write_text(site + "\n" + Z2JH_CHART_CONFIG.format(site=services))
    return config


def z2jh_groups(groups: dict[str, list[str]]) -> dict:
    """Helm values listing hub groups, as a site's values file does."""
    return {
        "hub": {
            "config": {
                "JupyterHub": {
                    "load_groups": {name: {"users": users} for name, users in groups.items()}
                }
            }
        }
    }


# -- The Littlest JupyterHub -------------------------------------------------------------------

# From TLJH's tljh/jupyterhub_config.py: the last lines, its "escape hatch".
TLJH_LOOP = """\
# --- vendored from The Littlest JupyterHub, tljh/jupyterhub_config.py (its last lines) ---
from glob import glob
import os

CONFIG_DIR = {config_dir!r}

# Load arbitrary .py config files if they exist.
# This is our escape hatch
extra_configs = sorted(glob(os.path.join(CONFIG_DIR, "jupyterhub_config.d", "*.py")))
for ec in extra_configs:
    load_subconfig(ec)
"""


def write_tljh(
    folder: Path, site: str, instructors: list[str], extra_groups: dict[str, list[str]]
) -> Path:
    """A TLJH hub's config in ``folder``: ``site`` (here the test's hub settings; on TLJH its own
    config and tljh-config), then the loop over ``jupyterhub_config.d``, which holds what
    deploy/tljh/setup.sh puts there: the fragment, and the instructors file written by
    deploy/tljh/instructors.sh itself. ``extra_groups`` go into a file of the test's own."""
    config_d = folder / "jupyterhub_config.d"
    config_d.mkdir(parents=True, exist_ok=True)
    (config_d / "attnlab_hub.py").write_text(FRAGMENT.read_text())
    subprocess.run(
        ["bash", str(DEPLOY / "tljh" / "instructors.sh"), str(config_d)],
        env={"PATH": "/usr/bin:/bin", "ATTNLAB_INSTRUCTORS": " ".join(instructors)},
        check=True,
        capture_output=True,
    )
    if extra_groups:
        groups = {name: {"users": users} for name, users in extra_groups.items()}
        (config_d / "zz_test_groups.py").write_text(
            f"c.JupyterHub.load_groups.update({groups!r})  # noqa: F821\n"
        )
    config = folder / "jupyterhub_config.py"
    config.write_text(site + "\n" + TLJH_LOOP.format(config_dir=str(folder)))
    return config
