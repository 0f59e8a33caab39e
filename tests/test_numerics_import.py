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
