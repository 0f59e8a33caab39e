"""The numerics must import with numpy only: no matplotlib, no ipywidgets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("matplotlib", "ipywidgets")

NUMERICS = {
    "attnlab.softmax_family": [
        "softmax",
        "naive_softmax",
        "log_softmax",
        "logsumexp",
        "softmax_jacobian",
        "entropy",
    ],
    "attnlab.attention": [
        "scaled_dot_product_attention",
        "attention_scores",
        "causal_mask",
        "padding_mask",
    ],
}


def heavy_modules_after(statement: str) -> list[str]:
    """Run ``statement`` in a fresh interpreter; return the heavy modules it loaded."""
    code = (
        "import json, sys\n"
        f"{statement}\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.pop("MPLBACKEND", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "statement",
    [
        "import attnlab.softmax_family, attnlab.attention",
        "import attnlab._validate",
        "from attnlab.softmax_family import softmax; softmax([1, 2])",
        "from attnlab.attention import scaled_dot_product_attention as f; f([[1]], [[1]], [[1]])",
    ],
)
def test_numerics_do_not_import_plotting_or_widgets(statement):
    assert heavy_modules_after(statement) == []


def test_top_level_package_does_not_import_plotting_or_widgets():
    assert heavy_modules_after("import attnlab") == []


def test_public_names_exist_and_are_documented():
    import importlib

    for module_name, names in NUMERICS.items():
        module = importlib.import_module(module_name)
        assert set(names) <= set(module.__all__)
        for name in module.__all__:
            fn = getattr(module, name)
            doc = fn.__doc__ or ""
            for section in ("Parameters", "Returns", "Raises", "Examples"):
                assert section in doc, f"{module_name}.{name} lacks a {section} section"


def test_top_level_reexports_are_the_same_objects():
    import importlib

    import attnlab

    for module_name, names in NUMERICS.items():
        module = importlib.import_module(module_name)
        for name in names:
            assert getattr(attnlab, name) is getattr(module, name)
            assert name in attnlab.__all__


def _course_numerics():
    from attnlab.course import NUMERICS

    return NUMERICS


@pytest.mark.parametrize("module_name", _course_numerics())
def test_a_numerics_module_exports_its_api_and_keeps_its_helpers_private(module_name):
    """``__all__`` is what the forbidden-call registry lists for the module, and every function
    or class the module defines without a leading underscore is in it: a helper is private."""
    import importlib

    from attnlab.exercises.rules.forbidden_registry import WHOLE_MODULES

    module = importlib.import_module(module_name)
    assert list(module.__all__) == list(WHOLE_MODULES[module_name])
    defined = [
        name
        for name, value in vars(module).items()
        if callable(value) and getattr(value, "__module__", None) == module_name
    ]
    public = [name for name in defined if not name.startswith("_")]
    assert set(public) <= set(module.__all__), f"{module_name}: public helpers"


@pytest.mark.parametrize("module_name", _course_numerics())
def test_a_numerics_module_shows_its_api_before_its_helpers(module_name):
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    functions = [
        value
        for value in vars(module).values()
        if inspect.isfunction(value) and value.__module__ == module_name
    ]
    first = {f.__name__: f.__code__.co_firstlineno for f in functions}
    api = [first[name] for name in module.__all__ if name in first]
    helpers = [line for name, line in first.items() if name.startswith("_")]
    assert not helpers or not api or max(api) < min(helpers), (
        f"{module_name}: a helper comes before an API function"
    )
