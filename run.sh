#!/usr/bin/env bash
# One entry point for learners and maintainers. Creates .venv on first use.
#   ./run.sh lab         set up and open the course in JupyterLab at lesson 0
#                        (options go to JupyterLab: ./run.sh lab --no-browser --port 8890)
#   ./run.sh test        set up and run the fast loop (lint, unit, doctest, property and
#                        contract tests, every notebook under nbval): a few minutes
#   ./run.sh test --all  set up and run every test (adds nbgrader grading, the attack suites,
#                        Binder, JupyterHub and the browser suite): what CI runs
#   ./run.sh bench       print the explorer, latency, course-execution and numerics benchmarks
#   ./run.sh build       regenerate notebooks/ from source/ (nbgrader's preprocessors)
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

# The stages of a test run, each timed; a failing stage does not stop the others, and the run
# fails at the end if any did. .ci/run puts its own stage (system packages) first in the table
# through ATTNLAB_STAGES_BEFORE.
STAGES=()
RUN_START=$(date +%s)
FAILED=()
stage() {  # $1: name; the rest: the command
    local name="$1"; shift
    local start rc=0
    start=$(date +%s)
    echo
    echo "=== stage: $name"
    "$@" || rc=$?
    if [[ "$rc" == 5 && "$name" == *"(rest)"* ]]; then rc=0; fi  # pytest: nothing left to run
    STAGES+=("$(stage_line "$name" "$(( $(date +%s) - start ))" "$rc")")
    if [[ "$rc" != 0 ]]; then FAILED+=("$name"); fi
}

stage_line() {  # $1: name, $2: seconds, $3: exit code
    printf '%-34s %6ss  %s' "$1" "$2" "$([[ $3 == 0 ]] && echo ok || echo "FAILED (exit $3)")"
}

stage_table() {
    echo
    echo "=== stage times (wall, s)"
    if [[ -n "${ATTNLAB_STAGES_BEFORE:-}" ]]; then printf '%s\n' "$ATTNLAB_STAGES_BEFORE"; fi
    printf '%s\n' "${STAGES[@]}"
    printf '%-34s %6ss\n' "total (./run.sh test)" "$(( $(date +%s) - RUN_START ))"
}

run_tests() {  # $1: 1 for every test, 0 for the fast loop; the rest go to pytest
    local all="$1"; shift
    local durations=(--durations=40 --durations-min=1)
    stage "lint (ruff)" bash -c 'ruff check . && ruff format --check .'
    # The fast loop: everything not marked slow or browser; extra arguments (e.g. -k, or
    # another -m) go to pytest after ours, so they win.
    stage "fast tests" pytest -m "not slow and not browser" "${durations[@]}" "$@"
    if compgen -G "notebooks/*.ipynb" >/dev/null; then
        stage "nbval: learner notebooks" pytest -p no:cacheprovider --nbval-lax notebooks/
        stage "nbval: source, solved" env ATTNLAB_REQUIRE_CORRECT=1 \
            pytest -p no:cacheprovider --nbval-lax source/
    fi
    if [[ "$all" == 1 ]]; then
        local grading=(tests/test_graded_use.py tests/test_grading_attacks.py
            tests/test_grading_limits.py tests/test_exchange_flow.py)
        local existing=()
        for file in "${grading[@]}"; do [[ -f "$file" ]] && existing+=("$file"); done
        stage "slow: nbgrader grading" pytest -m slow "${durations[@]}" "${existing[@]}"
        stage "slow: Binder from nothing" pytest -m slow "${durations[@]}" tests/test_binder.py
        stage "slow: JupyterHub class" pytest -m slow "${durations[@]}" tests/hub
        stage "browser (Chromium)" env ATTNLAB_BROWSER=1 \
            pytest -m browser "${durations[@]}" tests/browser
        local ignored=()
        for file in "${existing[@]}" tests/test_binder.py; do ignored+=(--ignore "$file"); done
        stage "slow: the rest" pytest -m "slow or browser" "${durations[@]}" \
            --ignore tests/hub --ignore tests/browser "${ignored[@]}"
    fi
    stage_table
    if (( ${#FAILED[@]} )); then
        echo "failed stages: ${FAILED[*]}"
        return 1
    fi
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
        env_start=$(date +%s)
        ensure_env requirements.txt requirements-dev.txt
        STAGES+=("$(stage_line "environment (pip)" "$(( $(date +%s) - env_start ))" 0)")
        export PATH="$PWD/$VENV/bin:$PATH"
        shift
        all=0
        if [[ "${1:-}" == "--all" ]]; then all=1; shift; fi
        run_tests "$all" "$@"
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
        sed -n '2,10p' "$0"
        exit 2
        ;;
esac
