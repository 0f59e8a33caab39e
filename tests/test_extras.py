"""The grader's packages, said twice, agree: the ``grader`` extra and requirements-grader.txt.

An instructor installs grading either way (docs/instructors.md): ``pip install '.[grader]'``
(ranges) or ``pip install -r requirements-grader.txt`` (the versions the tests run, pinned). The
tests here read both files and the grading code:

* every package requirements-grader.txt pins itself is in the extra, and its pin is inside the
  extra's range;
* every package of the extra is pinned by requirements-grader.txt (or the requirements.txt it
  includes), or installed with a package it pins, within the extra's range;
* every third-party module ``attnlab/grading/`` imports (every import, in-function ones
  included) comes with the extra.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
GRADING = ROOT / "attnlab" / "grading"

#: Modules the grading code imports that no extra installs, and why; each must still be named
#: where its install is said.
INSTALLED_APART = {
    # the ngshare exchange on Zero to JupyterHub: installed with --no-deps from the vendored copy
    # (its metadata pins a jupyter-core that nbgrader 0.9 cannot run with), imported only when
    # the hub's configuration asks for NgshareCollect
    "ngshare_exchange": ROOT / "deploy" / "exchange-requirements.txt",
}


def _extras() -> dict[str, list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = {
        name: [Requirement(r) for r in reqs]
        for name, reqs in project["optional-dependencies"].items()
    }
    extras[""] = [Requirement(r) for r in project["dependencies"]]
    return extras


def _grader_closure() -> list[Requirement]:
    """The grader extra's requirements, with the base's and those of the extras it names
    (``attnlab[lab]``)."""
    extras, seen, found = _extras(), set(), []
    todo = ["", "grader"]
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in extras[extra]:
            if canonicalize_name(req.name) == "attnlab":
                todo.extend(req.extras)
            else:
                found.append(req)
    return found


def _pins(path: Path, follow: bool = True) -> dict[str, str]:
    """``name == version`` lines of a requirements file (and, ``follow``, of the files it
    includes with ``-r``), by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r ") and follow:
            pins.update(_pins(path.parent / line[3:].strip()))
        elif line and not line.startswith("-"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name.split("[")[0])] = version.strip()
    return pins


def _grader_extra() -> dict[str, Requirement]:
    return {canonicalize_name(r.name): r for r in _extras()["grader"]}


def test_the_grader_extra_exists_and_names_nbgrader():
    extra = _grader_extra()
    assert {"nbgrader", "nbclient", "nbformat"} <= set(extra), sorted(extra)


def test_every_pin_of_requirements_grader_is_in_the_extra_and_its_range():
    extra = _grader_extra()
    own = _pins(ROOT / "requirements-grader.txt", follow=False)
    assert own, "requirements-grader.txt pins nothing of its own"
    for name, version in own.items():
        assert name in extra, f"requirements-grader.txt pins {name}, the grader extra lacks it"
        assert extra[name].specifier.contains(version, prereleases=True), (
            f"requirements-grader.txt pins {name}=={version}, outside the extra's "
            f"{extra[name].specifier}"
        )


def _requires(dist: str) -> set[str]:
    """Canonical names of what ``dist`` (installed) requires, without extras' own packages."""
    try:
        reqs = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return set()
    names = set()
    for text in reqs:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            names.add(canonicalize_name(req.name))
    return names


def _installed_with(pinned: set[str]) -> set[str]:
    """Every package installed with the ``pinned`` ones (their requirements, recursively)."""
    found, todo = set(pinned), list(pinned)
    while todo:
        for name in _requires(todo.pop()):
            if name not in found:
                found.add(name)
                todo.append(name)
    return found


def test_every_package_of_the_extra_comes_with_requirements_grader():
    pins = _pins(ROOT / "requirements-grader.txt")
    brought = _installed_with(set(pins))
    for name, req in _grader_extra().items():
        if name == "attnlab":
            continue
        if name in pins:
            assert req.specifier.contains(pins[name], prereleases=True), (name, pins[name])
            continue
        assert name in brought, (
            f"the grader extra's {name} is not installed by requirements-grader.txt"
        )
        installed = metadata.version(name)
        assert req.specifier.contains(installed, prereleases=True), (name, installed)


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> the files under attnlab/grading/ that import it (every import
    statement, in functions too; not the standard library, not attnlab)."""
    found: dict[str, set[str]] = {}
    for path in sorted(GRADING.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("attnlab", "__future__"):
                    continue
                found.setdefault(top, set()).add(path.name)
    return found


def test_the_grading_codes_imports_are_read():
    imports = _third_party_imports()
    # the ones grading cannot run without, whatever else it imports
    assert {"nbgrader", "nbclient", "nbformat", "bleach", "traitlets"} <= set(imports), imports


def test_every_third_party_import_of_the_grading_code_comes_with_the_extra():
    closure = {canonicalize_name(r.name) for r in _grader_closure()}
    providers = metadata.packages_distributions()
    missing = {}
    for module, files in sorted(_third_party_imports().items()):
        if module in INSTALLED_APART:
            where = INSTALLED_APART[module]
            assert re.search(module.replace("_", "[-_]"), where.read_text(encoding="utf-8")), where
            continue
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        assert dists, f"no installed package provides {module} (imported by {sorted(files)})"
        if not dists & closure:
            missing[module] = (sorted(dists), sorted(files))
    assert not missing, f"imported under attnlab/grading/, not in the grader extra: {missing}"
