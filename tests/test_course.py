"""The course map (attnlab.course) agrees with the notebooks, the package and CONTRIBUTING.md."""

from __future__ import annotations

import ast
import fnmatch
import importlib
import inspect
import pkgutil
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

import attnlab
import attnlab.exercises
from attnlab import course
from attnlab.course import COURSE, NUMERICS, lesson, lessons_using, module_file
from attnlab.exercises import EXERCISES
from attnlab.explorers import Explorer, all_explorers

ROOT = Path(__file__).resolve().parents[1]
LESSON_NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
SOURCE_NOTEBOOKS = sorted((ROOT / "source").glob("[0-9][0-9]-*/[0-9][0-9]-*.ipynb"))
READY = [entry for entry in COURSE if entry.ready]
by_lesson = pytest.mark.parametrize("entry", READY, ids=lambda entry: entry.notebook)
TIME = re.compile(r"\*\*Time:\*\*\s*about\s+(\d+)\s+minutes")


def resolve(dotted: str):
    """The object named ``"package.module.Name"`` (or the module itself)."""
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError:
        module, _, name = dotted.rpartition(".")
        return getattr(importlib.import_module(module), name)


# ------------------------------------------------------------ lessons <-> notebooks on disk
def test_course_map_lists_the_lessons_in_order():
    numbers = [entry.number for entry in COURSE]
    assert numbers == list(range(12))
    ready = [entry.ready for entry in COURSE]
    assert ready == sorted(ready, reverse=True), "ready lessons come first, in order"


def test_course_map_says_ready_exactly_for_the_lessons_that_exist():
    assert LESSON_NOTEBOOKS, "no lesson notebooks in notebooks/"
    assert {path.stem for path in LESSON_NOTEBOOKS} == {entry.notebook for entry in READY}
    for entry in COURSE:
        if entry.ready:
            assert entry.notebook.startswith(f"{entry.number:02d}-"), entry


def test_every_source_notebook_is_in_the_map_and_every_lesson_has_both_notebooks():
    assert {path.relative_to(ROOT).as_posix() for path in SOURCE_NOTEBOOKS} == {
        entry.source for entry in READY
    }
    for entry in READY:
        assert (ROOT / entry.source).is_file() and (ROOT / entry.learner).is_file(), entry


def lesson_header(path: Path) -> tuple[str, int]:
    """A lesson notebook's first heading and the minutes its header states."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    title = cells[0].source.splitlines()[0].lstrip("# ")
    times = [int(m) for cell in cells[:3] for m in TIME.findall(cell.source)]
    assert len(times) == 1, f"{path.name}: expected one '**Time:** about N minutes' in the header"
    return title, times[0]


@pytest.mark.parametrize("path", LESSON_NOTEBOOKS, ids=lambda p: p.stem)
def test_course_map_time_and_title_match_the_lesson_header(path):
    (entry,) = [entry for entry in COURSE if entry.notebook == path.stem]
    title, minutes = lesson_header(path)
    assert entry.minutes == minutes, f"map says {entry.minutes} min, {path.name} says {minutes}"
    assert entry.title.lower() in title.lower(), (entry.title, title)


def test_course_map_totals_are_added_up():
    from attnlab.exercises.progress import course_map

    shown = course_map()
    total = sum(entry.minutes for entry in COURSE)
    ready = sum(entry.minutes for entry in READY)
    assert (shown.total_minutes, shown.ready_minutes) == (total, ready)
    assert course.duration(total) in shown.summary()
    assert course.duration(ready) in shown.summary()
    table = shown._repr_markdown_()
    for entry in COURSE:
        assert (f"({entry.notebook}.ipynb)" in table) is entry.ready
        assert f"| {entry.minutes} min | {'ready' if entry.ready else 'coming soon'} |" in table
    assert "coming soon" in str(shown) or all(entry.ready for entry in COURSE)


# ------------------------------------------------------------ lessons <-> the package
@by_lesson
def test_every_module_and_class_the_map_names_exists(entry):
    assert entry.exercises and entry.explorers and entry.numerics, entry
    for module in entry.modules:
        importlib.import_module(module)
        assert (ROOT / module_file(module)).is_file(), module
    assert EXERCISES.of_lesson(entry.number), entry.exercises
    for name in entry.explorers:
        cls = resolve(name)
        assert cls in all_explorers() and f"{cls.__module__}.{cls.__name__}" == name, name
    assert set(entry.numerics) <= set(NUMERICS), entry.numerics
    assert len(set(entry.modules)) == len(entry.modules), f"a module named twice: {entry}"


def test_every_explorer_module_belongs_to_exactly_one_lesson():
    modules = {cls.__module__ for cls in all_explorers()}  # as tests/test_explorers.py finds them
    assert modules
    for module in modules:
        assert len(lessons_using(module)) == 1, (module, lessons_using(module))
    named = {f"{cls.__module__}.{cls.__name__}" for cls in all_explorers()}
    assert named == {name for entry in READY for name in entry.explorers}


def test_every_exercise_module_belongs_to_exactly_one_lesson():
    # found as tests/test_exercises_contract.py finds them
    modules = [
        f"attnlab.exercises.{info.name}"
        for info in pkgutil.iter_modules(attnlab.exercises.__path__)
        if info.name.startswith("lesson")
    ]
    assert len(modules) == len(READY)
    for module in modules:
        assert len(lessons_using(module)) == 1, (module, lessons_using(module))


def test_every_numerics_module_is_taught_and_needs_numpy_only():
    for module in NUMERICS:
        assert lessons_using(module), f"no lesson names {module}"
    code = (
        f"import sys\nfor m in {NUMERICS!r}: __import__(m)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib', 'ipywidgets'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def code_object(thing) -> bool:
    return inspect.ismodule(thing) or inspect.isclass(thing) or inspect.isfunction(thing)


def notebook_uses(path: Path) -> set:
    """Every attnlab module, class and function a notebook's code cells import or reach."""
    cells = nbformat.read(path, as_version=4).cells
    tree = ast.parse("\n".join(c.source for c in cells if c.cell_type == "code"))
    names, used = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attnlab"):
            for alias in node.names:
                names[alias.asname or alias.name] = resolve(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("attnlab"):
                    used.add(importlib.import_module(alias.name))
                    names[alias.asname or "attnlab"] = attnlab
    used |= {thing for thing in names.values() if code_object(thing)}
    for node in ast.walk(tree):  # attnlab.softmax, patterns.effective_keys, ...
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = names.get(node.value.id)
            if isinstance(base, types.ModuleType) and code_object(getattr(base, node.attr, 0)):
                used.add(getattr(base, node.attr))
    return used


def module_of(thing) -> str:
    return thing.__name__ if isinstance(thing, types.ModuleType) else thing.__module__


@by_lesson
def test_the_map_names_what_the_lesson_cells_import(entry):
    used = notebook_uses(ROOT / entry.source)
    modules = {module_of(thing) for thing in used}
    assert {m for m in modules if m.startswith("attnlab.exercises.lesson")} == {entry.exercises}
    explorers = {
        f"{cls.__module__}.{cls.__name__}"
        for cls in used
        if inspect.isclass(cls) and issubclass(cls, Explorer)
    }
    assert explorers == set(entry.explorers)
    assert modules & set(NUMERICS) == set(entry.numerics)


# ------------------------------------------------------------ lookups
def test_lesson_finds_each_lesson_and_refuses_other_numbers():
    for entry in COURSE:
        assert lesson(entry.number) is entry
    for bad in (12, -1, True, "3", 2.0 + 0.5):
        with pytest.raises(ValueError, match="number must be a lesson number 0 to 11"):
            lesson(bad)


def test_lessons_using_goes_from_a_module_back_to_its_lessons():
    assert [e.number for e in lessons_using("attnlab.exercises.lesson6")] == [6]
    assert [e.number for e in lessons_using("attnlab.online")] == [8]
    everyone = {e.number for e in lessons_using("attnlab.softmax_family")}
    assert everyone == {e.number for e in READY if "attnlab.softmax_family" in e.numerics}


# ------------------------------------------------------------ CONTRIBUTING.md
def contributing_section(heading: str) -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert f"\n## {heading}\n" in text, f"CONTRIBUTING.md lacks '## {heading}'"
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_contributing_lesson_to_code_table_is_the_course_map():
    assert course.code_table() in contributing_section("Lesson → code"), (
        "CONTRIBUTING.md's lesson → code table is stale: paste what `python -m attnlab.course` "
        "prints into its '## Lesson → code' section"
    )


def top_level_folders() -> set[str]:
    """The repository's top-level folders: git's tracked files, or the tree minus .gitignore."""
    listed = (
        subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
        if shutil.which("git")
        else None
    )
    if listed and listed.returncode == 0 and listed.stdout:
        return {line.split("/")[0] for line in listed.stdout.splitlines() if "/" in line}
    patterns = [
        line.strip().strip("/")
        for line in (ROOT / ".gitignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return {
        p.name
        for p in ROOT.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and not any(fnmatch.fnmatch(p.name, pattern) for pattern in patterns)
    }


def test_contributing_layout_names_every_folder_and_package_module():
    layout = contributing_section("Layout")
    folders = top_level_folders()
    assert {"attnlab", "source", "notebooks", "tests"} <= set(folders)
    for name in folders:
        assert f"`{name}/" in layout, f"CONTRIBUTING.md's layout table lacks {name}/"
    package = ROOT / "attnlab"
    parts = [f"attnlab/{p.name}" for p in package.glob("*.py") if p.name != "__init__.py"]
    parts += [f"attnlab/{p.name}/" for p in package.iterdir() if (p / "__init__.py").is_file()]
    for part in parts:
        assert f"`{part}" in layout, f"CONTRIBUTING.md's layout table lacks {part}"
