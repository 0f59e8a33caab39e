"""The import graph of ``attnlab/``: every module, every import between them, the imports that
run upward and the circles (strongly connected components).

Every import counts, wherever it is written: at the top of a module, inside a function or a
``try``, under ``if TYPE_CHECKING``; ``importlib.import_module("attnlab.x")`` and
``__import__``; and a look-up in ``sys.modules`` (``sys.modules.get("attnlab.x")``,
``sys.modules["attnlab.x"]``), which ties two modules as surely as an import does. An import
or look-up whose module name is not a literal string is a *dynamic* one: it counts as an import
of every module :data:`DYNAMIC` declares for it, and an undeclared one is listed (and fails
``tests/test_package_seams.py``), so a circle cannot hide behind a computed name.
``from attnlab.x import y`` is an import of ``attnlab.x.y`` when that is a module, else of
``attnlab.x``; ``import attnlab.x.y`` is an import of ``attnlab.x.y``. A package's ``__init__``
is the package's own module (``attnlab.exercises``); the parent packages Python runs on the way
to a module are not counted as imports (every submodule would import its package).

*Upward* is measured against :data:`LAYERS`, the house's floors from the ground up (CONTRIBUTING.md,
"Layout"): an import from a module to one on a higher floor is upward. Within a floor, imports
go either way but must not make a circle.

Usage::

    python tools/import_graph.py            # the figures, the upward imports, the circles
    python tools/import_graph.py --edges    # every import, one a line
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "attnlab"

#: The floors of the house, from the ground up: module name patterns (``fnmatch``); a module
#: is on the floor whose pattern it matches, and any other module right under ``attnlab``
#: (a new numerics module) on the numerics floor. A module on no floor is reported.
LAYERS = (
    (
        "numerics",
        (
            "attnlab._validate",
            "attnlab._checks",
            "attnlab._kernels",
            "attnlab.softmax_family",
            "attnlab.attention",
            "attnlab.mixing",
            "attnlab.patterns",
            "attnlab.online",
            "attnlab.tiling",
            "attnlab.backward",
            "attnlab.training",
            "attnlab.sqrt_dk",
            "attnlab.examples",
            "attnlab._png",
            "attnlab",  # attnlab/__init__.py: the numerics' public names
        ),
    ),
    ("course map", ("attnlab.course",)),
    (
        "widgets and plots",
        (
            "attnlab.plots",
            "attnlab.plots.*",
            "attnlab.figure_canvas",
            "attnlab.controls",
            "attnlab.widget_lifetime",
            "attnlab.live",
        ),
    ),
    ("explorers", ("attnlab.explorers", "attnlab.explorers.*")),
    (
        "exercise machinery",
        (
            "attnlab.exercises.kit",
            "attnlab.exercises.kit.*",
            "attnlab.exercises.rules",
            "attnlab.exercises.rules.*",
            "attnlab.exercises.progress",
            "attnlab.exercises.keys",
            "attnlab.exercises.solutions",
            "attnlab.exercises.cells",
            # before the move (the same floor, so the before and after figures compare)
            "attnlab.progress",
            "attnlab.exercises.answer_cells",
            "attnlab.exercises.unseen_names",
        ),
    ),
    ("lessons", ("attnlab.exercises.lesson*", "attnlab.exercises.quiz")),
    ("exercises", ("attnlab.exercises",)),
    ("grading", ("attnlab.grading", "attnlab.grading.*")),
    (
        "Jupyter",
        (
            "attnlab.selftest",
            "attnlab.kernel_websocket",
            "attnlab.save_hook",
            "attnlab.lab_style",
            "attnlab.restart_help",
        ),
    ),
)

#: Dynamic imports (a module name computed at run time) and what they may import: importing
#: module -> module patterns (``"attnlab.<numerics>"``: every module on the numerics floor).
#: A dynamic import in any other module is reported as undeclared.
DYNAMIC = {
    # a numerics module named in attnlab.course.NUMERICS, or that a lesson's `forbidden=` names
    "attnlab.exercises.rules.forbidden": ("attnlab.<numerics>",),
    "attnlab.exercises.rules.reach": ("attnlab.<numerics>",),
    "attnlab.exercises.kit.passing_helpers": ("attnlab.<numerics>",),
    "attnlab.grading.worker": ("attnlab.<numerics>",),
    # every lesson's exercise module, from attnlab.course.COURSE
    "attnlab.exercises.kit.exercise_map": ("attnlab.exercises.lesson*",),  # before the move
    # the package: every lesson (the map read whole), and its short names' kit modules
    "attnlab.exercises": (
        "attnlab.exercises.lesson*",
        "attnlab.exercises.kit.exercise",
        "attnlab.exercises.kit.feedback",
        "attnlab.exercises.kit.outcomes",
    ),
    # every explorer module of the package
    "attnlab.explorers": ("attnlab.explorers.*",),
    # a package's version (numpy, ipywidgets ...), never attnlab's
    "attnlab.selftest": (),
}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass
class Graph:
    modules: list[str]
    #: (importer, imported) -> how: "top", "function", "dynamic" (first seen wins: top first)
    edges: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (module, function, line, text) for every dynamic import no entry of DYNAMIC covers
    undeclared: list[tuple[str, str, int, str]] = field(default_factory=list)
    #: (module, function, line) for every dynamic import DYNAMIC covers
    declared: list[tuple[str, str, int]] = field(default_factory=list)

    def floor(self, module: str) -> int | None:
        for number, (_, patterns) in enumerate(LAYERS):
            if any(fnmatch.fnmatchcase(module, p) for p in patterns):
                return number
        if module.count(".") == 1 and module.startswith(PACKAGE + "."):
            return 0  # a module of its own right under attnlab: numerics (numpy only)
        return None

    def upward(self) -> list[tuple[str, str]]:
        out = []
        for a, b in sorted(self.edges):
            fa, fb = self.floor(a), self.floor(b)
            if fa is not None and fb is not None and fb > fa:
                out.append((a, b))
        return out

    def circles(self) -> list[list[str]]:
        """The strongly connected components with more than one module (Tarjan)."""
        succ: dict[str, list[str]] = {m: [] for m in self.modules}
        for a, b in self.edges:
            succ.setdefault(a, []).append(b)
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on: set[str] = set()
        found: list[list[str]] = []
        counter = [0]

        def visit(v: str) -> None:  # iterative, so deep graphs do not hit the recursion limit
            work = [(v, iter(sorted(succ.get(v, ()))))]
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            while work:
                node, children = work[-1]
                for w in children:
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        on.add(w)
                        work.append((w, iter(sorted(succ.get(w, ())))))
                        break
                    if w in on:
                        low[node] = min(low[node], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[node])
                    if low[node] == index[node]:
                        component = []
                        while True:
                            w = stack.pop()
                            on.discard(w)
                            component.append(w)
                            if w == node:
                                break
                        if len(component) > 1:
                            found.append(sorted(component))

        for v in sorted(succ):
            if v not in index:
                visit(v)
        return sorted(found, key=lambda c: (-len(c), c))


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_sys_modules(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _dynamic_name(call: ast.Call) -> ast.AST | None:
    """The argument naming a module, when ``call`` imports or looks one up."""
    f = call.func
    if not call.args:
        return None
    if isinstance(f, ast.Attribute) and f.attr == "import_module":
        return call.args[0]  # importlib.import_module(...)
    if isinstance(f, ast.Name) and f.id in ("import_module", "__import__"):
        return call.args[0]
    if isinstance(f, ast.Attribute) and f.attr in ("get", "pop", "setdefault"):
        if _is_sys_modules(f.value):
            return call.args[0]
    return None


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _function(node: ast.AST, parents: dict) -> str | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return getattr(node, "name", "<lambda>")
    return None


def build(root: Path = ROOT) -> Graph:
    files = sorted((root / PACKAGE).rglob("*.py"))
    names = {module_name(p, root): p for p in files}
    graph = Graph(sorted(names))
    numerics = [m for m in names if graph.floor(m) == 0]

    def resolve(target: str) -> str | None:
        """``target`` or the nearest enclosing package of it that is an attnlab module."""
        while target:
            if target in names:
                return target
            target = target.rpartition(".")[0]
        return None

    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        parents = _parents(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def add(target, node, dynamic=False, name=name, parents=parents) -> None:
            if target is None or target == name:
                return
            how = "dynamic" if dynamic else ("function" if _function(node, parents) else "top")
            key = (name, target)
            rank = ("top", "function", "dynamic")  # an import at the top outranks the others
            if key not in graph.edges or rank.index(how) < rank.index(graph.edges[key]):
                graph.edges[key] = how

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        add(resolve(alias.name), node)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                if module.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    add(sub if sub in names else resolve(module), node)
            elif isinstance(node, (ast.Call, ast.Subscript)):
                if isinstance(node, ast.Subscript):
                    if not _is_sys_modules(node.value):
                        continue
                    argument = node.slice
                else:
                    argument = _dynamic_name(node)
                    if argument is None:
                        continue
                text = _literal(argument)
                if text is not None:
                    if text.split(".")[0] == PACKAGE:
                        add(resolve(text), node)
                    continue
                function = _function(node, parents) or "<module>"
                declared = DYNAMIC.get(name)
                if declared is None:
                    graph.undeclared.append((name, function, node.lineno, ast.unparse(node)))
                    continue
                graph.declared.append((name, function, node.lineno))
                for pattern in declared:
                    pool = numerics if pattern == "attnlab.<numerics>" else names
                    for target in pool:
                        if pattern == "attnlab.<numerics>" or fnmatch.fnmatchcase(target, pattern):
                            add(target, node, dynamic=True)
    return graph


def report(graph: Graph, edges: bool = False) -> str:
    kinds = {k: sum(1 for how in graph.edges.values() if how == k) for k in ("top", "function")}
    kinds["dynamic"] = sum(1 for how in graph.edges.values() if how == "dynamic")
    up = graph.upward()
    circles = graph.circles()
    lines = [
        f"modules: {len(graph.modules)}",
        f"imports: {len(graph.edges)} (at the top {kinds['top']}, inside functions "
        f"{kinds['function']}, dynamic {kinds['dynamic']})",
        f"upward imports: {len(up)}",
        f"circles: {len(circles)}"
        + (f" (modules in them: {sum(len(c) for c in circles)})" if circles else ""),
        f"dynamic imports declared: {len(graph.declared)}, undeclared: {len(graph.undeclared)}",
    ]
    static = Graph(graph.modules, {e: h for e, h in graph.edges.items() if h != "dynamic"})
    static_circles = static.circles()
    lines.append(
        f"without the dynamic imports: upward imports {len(static.upward())}, circles "
        f"{len(static_circles)} (modules in them: {sum(len(c) for c in static_circles)})"
    )
    unplaced = [m for m in graph.modules if graph.floor(m) is None]
    if unplaced:
        lines.append(f"modules on no floor: {', '.join(unplaced)}")
    lines.append("")
    lines.append("floors, from the ground up:")
    for number, (title, _) in enumerate(LAYERS):
        members = [m for m in graph.modules if graph.floor(m) == number]
        if members:
            lines.append(f"  {number} {title}: {len(members)} modules")
    if up:
        lines.append("")
        lines.append("upward imports (importer -> imported, how):")
        for a, b in up:
            lines.append(f"  {a} -> {b} ({graph.edges[(a, b)]})")
    for number, circle in enumerate(circles, 1):
        inside = [(a, b) for (a, b) in graph.edges if a in circle and b in circle]
        lines.append("")
        lines.append(
            f"circle {number}: {len(circle)} modules, {len(inside)} imports among them "
            f"({sum(graph.edges[e] == 'function' for e in inside)} inside functions, "
            f"{sum(graph.edges[e] == 'dynamic' for e in inside)} dynamic)"
        )
        for m in circle:
            lines.append(f"  {m}")
    if graph.undeclared:
        lines.append("")
        lines.append("undeclared dynamic imports (module, function, line):")
        for m, f, line, text in graph.undeclared:
            lines.append(f"  {m} {f} line {line}: {text}")
    if edges:
        lines.append("")
        lines.append("every import (importer -> imported, how):")
        for (a, b), how in sorted(graph.edges.items()):
            lines.append(f"  {a} -> {b} ({how})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", action="store_true", help="list every import too")
    args = parser.parse_args(argv)
    print(report(build(), edges=args.edges))
    return 0


if __name__ == "__main__":
    sys.exit(main())
