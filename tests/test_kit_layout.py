"""The exercises' layout: the kit and the rules in small modules, each importable alone, no
import circle (every import counted: tools/import_graph.py), and a learner's check that loads
its own lesson and the rules it needs, nothing of attnlab.grading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "attnlab" / "exercises"
KIT = EXERCISES / "kit"
KIT_MODULES = sorted(p.stem for p in KIT.glob("*.py") if p.stem != "__init__")
RULES = EXERCISES / "rules"
RULES_MODULES = sorted(p.stem for p in RULES.glob("*.py") if p.stem != "__init__")
#: The largest a kit module may grow (lines).
MOST_LINES = 350


def test_core_is_gone_and_the_kit_has_its_modules():
    assert not (EXERCISES / "core.py").exists()
    assert {"outcomes", "feedback", "exercise", "calling", "cases", "judging"} <= set(KIT_MODULES)


@pytest.mark.parametrize("name", KIT_MODULES)
def test_each_kit_module_is_small(name):
    lines = len((KIT / f"{name}.py").read_text(encoding="utf-8").splitlines())
    assert lines <= MOST_LINES, f"kit/{name}.py has {lines} lines; split it by concern"


def test_the_rules_have_their_modules_and_the_grader_none_of_them():
    assert {
        "grading_mode",
        "lint",
        "answer_lint",
        "unseen_names",
        "answer_cells",
        "forbidden",
        "forbidden_registry",
        "reach",
    } <= set(RULES_MODULES)
    assert not {"forbidden", "forbidden_registry", "reach"} & set(KIT_MODULES)
    grading = ROOT / "attnlab" / "grading"
    assert not (grading / "lint.py").exists()
    assert not (KIT / "grading_mode.py").exists() and not (KIT / "answer_lint.py").exists()
    assert not (ROOT / "attnlab" / "progress.py").exists()
    assert (EXERCISES / "progress.py").is_file()


@pytest.mark.parametrize("name", RULES_MODULES)
def test_each_rules_module_is_small(name):
    lines = len((RULES / f"{name}.py").read_text(encoding="utf-8").splitlines())
    assert lines <= 2 * MOST_LINES, f"rules/{name}.py has {lines} lines; split it by concern"


def test_each_kit_and_rules_module_imports_alone():
    """Each module, first in a fresh interpreter, imports without help from another import."""
    names = [f"kit.{n}" for n in KIT_MODULES] + [f"rules.{n}" for n in RULES_MODULES]
    script = "; ".join(
        f"subprocess.run([sys.executable, '-c', 'import attnlab.exercises.{name}'], check=True)"
        for name in names
    )
    subprocess.run([sys.executable, "-c", f"import subprocess, sys; {script}"], check=True)


#: A learner's check, run in a fresh interpreter: what it loads of attnlab.
LEARNER_CHECK = """
import json, sys
from attnlab.exercises import lesson3

def softmax_row(x):
    import numpy as np
    e = np.exp(np.asarray(x, float) - np.max(x))
    return e / e.sum()

said = str(lesson3.softmax_row.check(softmax_row))
print(json.dumps([said, sorted(m for m in sys.modules if m.startswith("attnlab"))]))
"""


def test_a_learners_check_loads_its_own_lesson_and_nothing_of_the_grader(tmp_path):
    """Issue 45: one check in a learner's process loaded attnlab.grading.lint and all ten
    lesson modules; now its own lesson, the kit and the rules."""
    import json
    import os

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NBGRADER_EXECUTION", "ATTNLAB_REQUIRE_CORRECT")
    }
    done = subprocess.run(
        [sys.executable, "-c", LEARNER_CHECK],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "MPLBACKEND": "agg"},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    said, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "correct" in said, said
    assert not [m for m in loaded if m == "attnlab.grading" or m.startswith("attnlab.grading.")]
    lessons = [m for m in loaded if m.startswith("attnlab.exercises.lesson")]
    assert lessons == ["attnlab.exercises.lesson3"], lessons
    assert "attnlab.exercises.quiz" not in loaded  # lesson 3 has no quiz
    assert "attnlab.exercises.rules.lint" in loaded  # the rules it previews


def test_no_import_circle_and_no_upward_import_among_the_exercises():
    """Every import, inside functions too, importlib and sys.modules look-ups (the whole
    package's graph: tests/test_package_seams.py)."""
    from import_graph import build

    graph = build()
    mine = {m for m in graph.modules if m.startswith("attnlab.exercises")}
    assert not [c for c in graph.circles() if set(c) & mine]
    assert not [(a, b) for a, b in graph.upward() if a in mine]
