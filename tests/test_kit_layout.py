"""The exercise kit's layout: small modules, each importable alone, no import circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "attnlab" / "exercises"
KIT = EXERCISES / "kit"
KIT_MODULES = sorted(p.stem for p in KIT.glob("*.py") if p.stem != "__init__")
#: The largest a kit module may grow (lines).
MOST_LINES = 350


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, top_level_only: bool) -> set[str]:
    """The ``attnlab.exercises`` modules ``path`` imports (at its top level, or anywhere)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("attnlab.exercises")}


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle in ``graph`` (module -> the modules it imports), or []."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for other in sorted(graph.get(node, ())):
            if state.get(other) == 1:
                return path[path.index(other) :] + [other]
            if other in graph and other not in state and (found := visit(other)):
                return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def graph_of(paths, top_level_only: bool) -> dict[str, set[str]]:
    names = {module_name(p): p for p in paths}
    return {
        name: {o for o in imports(path, top_level_only) if o in names and o != name}
        for name, path in names.items()
    }


def test_core_is_gone_and_the_kit_has_its_modules():
    assert not (EXERCISES / "core.py").exists()
    assert {"outcomes", "feedback", "exercise", "calling", "forbidden", "cases", "judging"} <= set(
        KIT_MODULES
    )


@pytest.mark.parametrize("name", KIT_MODULES)
def test_each_kit_module_is_small(name):
    lines = len((KIT / f"{name}.py").read_text(encoding="utf-8").splitlines())
    assert lines <= MOST_LINES, f"kit/{name}.py has {lines} lines; split it by concern"


def test_each_kit_module_imports_alone():
    """Each module, first in a fresh interpreter, imports without help from another import."""
    script = "; ".join(
        f"subprocess.run([sys.executable, '-c', 'import attnlab.exercises.kit.{name}'], check=True)"
        for name in KIT_MODULES
    )
    subprocess.run([sys.executable, "-c", f"import subprocess, sys; {script}"], check=True)


def test_no_import_circle_between_the_kit_and_the_cell_watcher():
    """Every import, also those inside functions, between the kit's modules and cells.py."""
    paths = [*KIT.glob("*.py"), EXERCISES / "cells.py"]
    assert cycle(graph_of(paths, top_level_only=False)) == []


def test_no_top_level_import_circle_in_the_exercises_package():
    paths = [*EXERCISES.glob("*.py"), *KIT.glob("*.py")]
    assert cycle(graph_of(paths, top_level_only=True)) == []


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert cycle({"a": {"b"}, "b": set()}) == []
