#!/usr/bin/env bash
# One entry point for learners and maintainers. Creates .venv on first use.
#   ./run.sh lab     set up and open the course in JupyterLab at lesson 0
#                    (options go to JupyterLab: ./run.sh lab --no-browser --port 8890)
#   ./run.sh test    set up and run every test (lint, unit, doctest, property, notebooks, browser)
#   ./run.sh bench   print the explorer, latency, course-execution and numerics benchmarks
#   ./run.sh build   regenerate notebooks/ from source/ (nbgrader's preprocessors)
set -euo pipefail
cd "$(dirname "$0")"
VENV="${ATTNLAB_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

ensure_env() {  # $@: requirement files
    local stamp="$VENV/.attnlab-installed"
    local want
    want="$(cat "$@" pyproject.toml | sha256sum | cut -d' ' -f1)"
    if [[ -f "$stamp" && "$(cat "$stamp")" == *"$want"* ]]; then return; fi
    if [[ ! -x "$VENV/bin/python" ]]; then
        echo "Creating the environment in $VENV (one time, about a minute)..."
        "$PYTHON" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
    fi
    local args=()
    for file in "$@"; do args+=(-r "$file"); done
    "$VENV/bin/python" -m pip install --quiet "${args[@]}"
    echo "$want" >> "$stamp"
}

case "${1:-}" in
    lab)
        ensure_env requirements.txt
        # The course's Jupyter settings (jupyter-config/: kernel websockets without Nagle's
        # delay, lesson 0 as the start page, widget state saved, no news); an editable install
        # does not copy them into the environment, so point Jupyter at them here.
        export JUPYTER_CONFIG_PATH="$PWD/jupyter-config${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
        shift
        if [[ "$(id -u)" == 0 ]]; then set -- --allow-root "$@"; fi  # e.g. inside a container
        # Extra options (--no-browser, --port 8890, --ip ...) come before the file to open,
        # which is given relative to this folder (it must lie inside root_dir).
        exec "$VENV/bin/jupyter" lab --ServerApp.root_dir=notebooks "$@" \
            notebooks/00-start-here.ipynb
        ;;
    test)
        ensure_env requirements.txt requirements-dev.txt
        export PATH="$PWD/$VENV/bin:$PATH"
        shift
        ruff check .
        ruff format --check .  # the one formatter: run `ruff format .` before committing
        pytest "$@"
        if compgen -G "notebooks/*.ipynb" >/dev/null; then
            pytest -p no:cacheprovider --nbval-lax notebooks/
            ATTNLAB_REQUIRE_CORRECT=1 pytest -p no:cacheprovider --nbval-lax source/
        fi
        ;;
    bench)
        ensure_env requirements.txt requirements-dev.txt
        # PyTorch (benchmarks/numerics.py only) on its own: resolved together with the rest,
        # pip gives up with "resolution-too-deep" in a fresh environment.
        ensure_env requirements-bench.txt
        "$VENV/bin/python" benchmarks/explorers.py
        "$VENV/bin/python" benchmarks/course_execution.py
        "$VENV/bin/python" benchmarks/latency.py
        "$VENV/bin/python" benchmarks/tiled_memory.py
        "$VENV/bin/python" benchmarks/numerics.py
        ;;
    build)
        ensure_env requirements.txt requirements-dev.txt
        "$VENV/bin/python" tools/build_notebooks.py
        ;;
    *)
        sed -n '2,6p' "$0"
        exit 2
        ;;
esac
