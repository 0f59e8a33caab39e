"""No attnlab module reaches into another one's private (underscore) names.

What modules share is a plain, documented name in the module that owns it. Each module under
attnlab/ is parsed (ast) for ``from attnlab.x import _y`` (relative imports too) and for
``x._y`` where ``x`` names an attnlab module. Underscore *modules* (``attnlab._validate``,
``attnlab._png``) are the package's internal modules: importing their plain names is sharing
through a public name, and is allowed.

None remain: :data:`ALLOWED` is empty. A use that cannot change at once is listed there, with
the reason; an entry that is no longer used fails the test, so the list only shrinks.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

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
