"""The seams between attnlab's modules: no module reaches into another one's private
(underscore) names, and the import graph has no circle and no upward import.

What modules share is a plain, documented name in the module that owns it. Each module under
attnlab/ is parsed (ast) for ``from attnlab.x import _y`` (relative imports too) and for
``x._y`` where ``x`` names an attnlab module. Underscore *modules* (``attnlab._validate``,
``attnlab._png``) are the package's internal modules: importing their plain names is sharing
through a public name, and is allowed.

None remain: :data:`ALLOWED` is empty. A use that cannot change at once is listed there, with
the reason; an entry that is no longer used fails the test, so the list only shrinks.

The import graph is ``tools/import_graph.py``'s: every import counts, inside functions too,
``importlib.import_module``, ``__import__`` and ``sys.modules`` look-ups; a computed module
name must be declared (``DYNAMIC``) with what it may import. The floors (``LAYERS``) are
CONTRIBUTING.md's "The import graph".
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import import_graph  # tools/import_graph.py (tools/ is on pytest's pythonpath)

PACKAGE = Path(__file__).resolve().parent.parent / "attnlab"

# (importing file, owning module, name): why it stays for now
ALLOWED: dict[tuple[str, str, str], str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def private_uses() -> set[tuple[str, str, str]]:
    """(file, owning module, name) for every use of another attnlab module's underscore name."""
    modules = _modules()
    uses = set()
    for module, path in modules.items():
        where = path.relative_to(PACKAGE.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        named: dict[str, str] = {}  # local name -> the attnlab module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                owner = _absolute(module, path, node)
                if owner.split(".")[0] != "attnlab":
                    continue
                for alias in node.names:
                    if f"{owner}.{alias.name}" in modules:
                        named[alias.asname or alias.name] = f"{owner}.{alias.name}"
                    elif alias.name.startswith("_") and owner != module:
                        uses.add((where, owner, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "attnlab":
                        named[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                owner = named.get(ast.unparse(node.value))
                if owner is not None and owner != module and f"{owner}.{node.attr}" not in modules:
                    uses.add((where, owner, node.attr))
    return uses


def test_no_module_uses_another_modules_private_names():
    unexpected = sorted(private_uses() - ALLOWED.keys())
    assert not unexpected, (
        "share these under a plain, documented name in the module that owns them: "
        + "; ".join(f"{file} uses {owner}.{name}" for file, owner, name in unexpected)
    )


def test_the_allow_list_has_no_stale_entries():
    stale = sorted(ALLOWED.keys() - private_uses())
    assert not stale, f"no longer used, take off ALLOWED: {stale}"


def test_the_scan_sees_imports_and_attributes(tmp_path, monkeypatch):
    """The scanner itself: a relative import and a module attribute are both found."""
    package = tmp_path / "attnlab"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("_secret = 1\n")
    (package / "b.py").write_text("from .a import _secret\n")
    (package / "c.py").write_text("from attnlab import a\nx = a._secret\n")
    (package / "d.py").write_text(
        "import attnlab.a as m\nfrom ._validate import ok\ny = m._secret\n"
    )
    (package / "_validate.py").write_text("ok = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert private_uses() == {
        ("attnlab/b.py", "attnlab.a", "_secret"),
        ("attnlab/c.py", "attnlab.a", "_secret"),
        ("attnlab/d.py", "attnlab.a", "_secret"),
    }


# ------------------------------------------------------------------------- the import graph
def test_the_import_graph_has_no_circle():
    circles = import_graph.build().circles()
    assert not circles, f"import circles: {circles}"


def test_no_module_imports_one_on_a_higher_floor():
    graph = import_graph.build()
    up = [f"{a} -> {b} ({graph.edges[(a, b)]})" for a, b in graph.upward()]
    assert not up, f"upward imports: {up}"


def test_every_module_is_on_a_floor_and_every_dynamic_import_is_declared():
    graph = import_graph.build()
    assert not [m for m in graph.modules if graph.floor(m) is None]
    assert not graph.undeclared, (
        f"declare these in tools/import_graph.py DYNAMIC: {graph.undeclared}"
    )


def test_nothing_outside_the_grader_imports_it_and_the_course_map_is_a_leaf():
    graph = import_graph.build()
    into_grading = [
        (a, b)
        for a, b in graph.edges
        if b.startswith("attnlab.grading") and not a.startswith("attnlab.grading")
    ]
    assert not into_grading, into_grading
    assert not [b for a, b in graph.edges if a == "attnlab.course"]


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, code in {"__init__.py": "", **files}.items():
        path = root / "attnlab" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")
    return root


def test_the_graph_sees_a_circle_however_it_is_made(tmp_path):
    """In-function imports, importlib, __import__, sys.modules look-ups, relative imports."""
    ways = {
        "in a function": {
            "a.py": "def f():\n    from attnlab import b\n",
            "b.py": "import attnlab.a\n",
        },
        "importlib": {
            "a.py": "import importlib\nB = importlib.import_module('attnlab.b')\n",
            "b.py": "from attnlab.a import B\n",
        },
        "__import__": {"a.py": "__import__('attnlab.b')\n", "b.py": "from . import a\n"},
        "sys.modules": {
            "a.py": "import sys\ndef f():\n    return sys.modules.get('attnlab.b')\n",
            "b.py": "import sys\nA = sys.modules['attnlab.a']\n",
        },
    }
    for number, (way, files) in enumerate(ways.items()):
        graph = import_graph.build(_package(tmp_path / str(number), files))
        assert graph.circles() == [["attnlab.a", "attnlab.b"]], way


def test_the_graph_refuses_an_undeclared_computed_import(tmp_path):
    root = _package(
        tmp_path, {"a.py": "import importlib\ndef f(n):\n    importlib.import_module(n)\n"}
    )
    graph = import_graph.build(root)
    assert [(m, f) for m, f, _, _ in graph.undeclared] == [("attnlab.a", "f")]


def test_the_graph_sees_an_upward_import(tmp_path):
    """The course map (floor 1) importing the exercises' progress record (floor 4), as
    attnlab/course.py did before issue 45."""
    root = _package(
        tmp_path,
        {
            "course.py": "def course_map():\n    from attnlab.exercises import progress\n",
            "exercises/__init__.py": "",
            "exercises/progress.py": "",
        },
    )
    graph = import_graph.build(root)
    assert graph.upward() == [("attnlab.course", "attnlab.exercises.progress")]
