"""Binder: a fresh environment from binder/ alone, as repo2docker builds it, runs the course."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with =="
            pins[name.lower()] = version
    return pins


def test_binder_pins_match_requirements():
    assert _pins(BINDER / "requirements.txt") == _pins(ROOT / "requirements.txt")


def test_binder_runtime_is_the_python_we_test_with():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert runtime == f"python-{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.slow
def test_fresh_binder_environment_runs_every_notebook(tmp_path):
    if not list((ROOT / "notebooks").glob("*.ipynb")):
        pytest.skip("no lessons in notebooks/ yet")
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "-r", str(BINDER / "requirements.txt")], check=True, env=env)
    subprocess.run(["bash", str(BINDER / "postBuild")], check=True, env=env, cwd=ROOT)
    probe = "import attnlab, sys; print(attnlab.__file__)"
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        check=True,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert str(venv) in where, f"attnlab was not installed into the Binder venv: {where}"
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    out = tmp_path / "executed"
    for notebook in notebooks:
        subprocess.run(
            [
                str(venv / "bin" / "jupyter"),
                "nbconvert",
                "--to",
                "notebook",
                "--execute",
                "--ExecutePreprocessor.timeout=300",
                "--output-dir",
                str(out),
                str(notebook),
            ],
            check=True,
            env={**env, "HOME": str(tmp_path)},
            cwd=ROOT / "notebooks",
        )
    assert len(list(out.glob("*.ipynb"))) == len(notebooks)
