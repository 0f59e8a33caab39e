#!/usr/bin/env bash
# One entry point for learners and maintainers. Creates .venv on first use.
#   ./run.sh lab         set up and open the course in JupyterLab at lesson 0
#                        (options go to JupyterLab: ./run.sh lab --no-browser --port 8890)
#   ./run.sh test        set up and run the fast loop (lint, unit, doctest, property and
#                        contract tests, every learner notebook under nbval): a few minutes
#   ./run.sh test --all  set up and run every test (adds the solved sources under nbval,
#                        nbgrader grading, the attack suites, Binder, JupyterHub and the
#                        browser suite): what CI runs
#   ./run.sh bench       print the explorer, latency, course-execution and numerics benchmarks
#   ./run.sh build       regenerate notebooks/ from source/ (nbgrader's preprocessors)
#   ./run.sh site        build the course as a static website in build/site/ (every lesson
#                        executed now, without network; --no-solutions: an instructor's site)
set -euo pipefail
cd "$(dirname "$0")"
VENV="${ATTNLAB_VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

system_packages() {  # $1: 1 for every test (adds Chromium, Node.js and npm), 0 for the fast loop
    # What pip cannot install: bubblewrap for the autograder's sandbox (the fast loop's grading
    # kernel tests need it), Debian's Chromium for the browser suite, Node.js and npm for
    # JupyterHub's configurable-http-proxy. Installed with apt when this runs as root (CI, a
    # container); otherwise the one command to run is printed and the run stops.
    local start missing=()
    start=$(date +%s)
    command -v bwrap >/dev/null || missing+=(bubblewrap)
    if [[ "$1" == 1 ]]; then
        [[ -x /usr/bin/chromium ]] || missing+=(chromium)
        command -v node >/dev/null || missing+=(nodejs)  # any Node.js will do (e.g. NodeSource's)
        command -v npm >/dev/null || missing+=(npm)
    fi
    if (( ${#missing[@]} )); then
        if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
            echo "These system packages are missing: ${missing[*]}" >&2
            echo "Install them (e.g. sudo apt-get install ${missing[*]}) and run this again." >&2
            exit 1
        fi
        echo "Installing system packages: ${missing[*]} (apt, one time)..."
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    stage_line "system packages (apt)" "$(( $(date +%s) - start ))" "" 0 \
        "${missing[*]:-nothing missing}" >> "$RUN_DIR/stages"
}

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

# The stages of a test run, each timed (wall and CPU seconds); a failing stage does not stop the
# others, and the run fails at the end if any did. A stage may run in a background lane beside
# the main one (the machine has two cores and much of a browser or hub test is waiting), so the
# stage lines and failures go to files every lane appends to; a lane's output is printed whole
# when it ends.
RUN_START=$(date +%s)
LANES=()
LANE_MARK=""  # "[b] " inside a background lane

children_cpu() {  # sets CPU to the user+sys seconds of this shell's finished children
    # `times` is a builtin: redirected to a file it runs in this shell, not in a subshell
    # (whose children would be others).
    local file="$RUN_DIR/times.$BASHPID"  # this shell's PID ($BASHPID differs inside $(...))
    times > "$file"
    CPU=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/);
        printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$file")
}

stage() {  # $1: name; the rest: the command
    local name="$LANE_MARK$1"; shift
    local start rc=0 cpu_start
    start=$(date +%s)
    children_cpu; cpu_start=$CPU
    echo
    echo "=== stage: $name"
    "$@" || rc=$?
    children_cpu
    stage_line "$name" "$(( $(date +%s) - start ))" "$(( CPU - cpu_start ))" "$rc" \
        >> "$RUN_DIR/stages"
    if [[ "$rc" != 0 ]]; then echo "$name" >> "$RUN_DIR/failed"; fi
}

stage_line() {  # $1: name, $2: wall seconds, $3: CPU seconds, $4: exit code, $5: a remark
    local cpu="${3:+${3}s}"  # no CPU figure (apt runs as its own process tree): "-"
    printf '%-38s %6ss %7s  %s\n' "$1" "$2" "${cpu:--}" \
        "$([[ $4 == 0 ]] && echo ok || echo "FAILED (exit $4)")${5:+ ($5)}"
}

lane() {  # $1: name ("main" streams to the terminal); the rest: a function running stages
    # Every lane is a subshell of its own, so the CPU of each stage counts its own processes
    # only (a shell counts a child's CPU once it has reaped it, whichever stage is running).
    local name="$1"; shift
    if [[ "$name" == main ]]; then
        ( "$@" ) &
    else
        echo "=== lane $name started in the background (its output follows when it ends)"
        ( LANE_MARK="[b] "; "$@" ) > "$RUN_DIR/lane-$name.log" 2>&1 &
    fi
    LANES+=("$!:$name")
}

wait_lanes() {
    local entry
    for entry in "${LANES[@]}"; do
        wait "${entry%%:*}" || true  # its stages record their own failures
        [[ "${entry#*:}" == main ]] && continue
        echo
        echo "=== lane ${entry#*:}: its output"
        cat "$RUN_DIR/lane-${entry#*:}.log"
    done
    LANES=()
}

stage_table() {  # $1: what ran
    echo
    echo "=== stage times (wall and CPU seconds; [b] ran in a background lane beside the others)"
    printf '%-38s %7s %7s\n' "stage" "wall" "CPU"
    cat "$RUN_DIR/stages"
    printf '%-38s %6ss\n' "total ($1)" "$(( $(date +%s) - RUN_START ))"
}

# The fast loop's tests, on both cores (pytest-xdist); extra arguments (e.g. -k, or another -m)
# go to pytest after ours, so they win.
fast_tests() { stage "fast tests" pytest -n 2 -m "not slow and not browser" "${DURATIONS[@]}" "$@"; }
nbval_learner() { stage "nbval: learner notebooks" pytest -p no:cacheprovider --nbval-lax notebooks/; }
nbval_source() {
    stage "nbval: source, solved" env ATTNLAB_REQUIRE_CORRECT=1 \
        pytest -p no:cacheprovider --nbval-lax source/
}
# Grading, its limits, the exchange, the JupyterHub class, the Binder install and any other
# slow test outside the browser suite, in one pytest run on three workers (pytest-xdist): most
# of it waits on kernels, sandboxes, servers and time limits. Each test file stays in one
# worker (--dist loadfile), so a module's graded class, course or hub is set up once, and the
# longest files go first (tests/conftest.py's LONGEST_FIRST; --no-loadscope-reorder, since
# xdist would order the files by their number of tests): graded use (about 700 s in CI) and
# the attack suite start at once on two workers, the rest fills the third. (The hub
# class and the Binder install ran after the browser suite in its lane, 308 + 125 s when the
# other lane had finished. --dist loadgroup with xdist_group marks did not group here, pytest
# 9.2 and xdist 3.8.0: every worker graded every lesson.)
grading_tests() {
    stage "slow: grading, hub, Binder, exchange, rest" pytest -n 3 --dist loadfile \
        --no-loadscope-reorder -m "slow or browser" "${DURATIONS[@]}" --ignore tests/browser
}
browser_tests() {  # $1: a shard, k/n (whole lessons each; tests/browser/conftest.py), or ""
    stage "browser (Chromium)${1:+ $1}" env ATTNLAB_BROWSER=1 ATTNLAB_BROWSER_SHARD="$1" \
        pytest -m browser "${DURATIONS[@]}" tests/browser
}
# The course site (tools/build_site.py): MathJax 3 from npm into build/site-assets/ (setup, the
# one step that may download), then every lesson executed and the pages written with no network
# at all where this runs as root: a network namespace with only loopback (unshare --net).
site_assets() {
    if [[ -f build/site-assets/node_modules/mathjax/es5/tex-chtml.js ]]; then return; fi
    if ! command -v npm >/dev/null; then
        if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
            DEBIAN_FRONTEND=noninteractive apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
        else
            echo "npm is needed once, to fetch MathJax 3: install it (e.g. sudo apt-get install npm)" >&2
            exit 1
        fi
    fi
    mkdir -p build/site-assets
    npm install --prefix build/site-assets --no-save --no-audit --no-fund --silent mathjax@3.2.2
}
# The feedback page's MathJax (2.7.7, which nbconvert's feedback template loads from a CDN), for
# the test that renders a student's TeX in Chromium (tests/test_feedback_sanitizer.py): set up
# once, served by the test from build/feedback-assets/, offline.
feedback_assets() {
    if [[ -f build/feedback-assets/node_modules/mathjax/MathJax.js ]]; then return; fi
    mkdir -p build/feedback-assets
    npm install --prefix build/feedback-assets --no-save --no-audit --no-fund --silent mathjax@2.7.7
}
site_build() {  # arguments go to tools/build_site.py
    if [[ "$(id -u)" == 0 ]] && command -v ip >/dev/null && unshare --net true 2>/dev/null; then
        echo "building the site with no network (a network namespace with only loopback)"
        unshare --net bash -c 'ip link set lo up && exec "$@"' _ \
            "$VENV/bin/python" tools/build_site.py "$@"
    else
        echo "building the site (not root: the network stays up; nothing in the build downloads)"
        "$VENV/bin/python" tools/build_site.py "$@"
    fi
}
site_tests() {  # the site built from this checkout without network, for the browser suite
    # Its packages (requirements-site.txt: new ones only, nothing the other lane uses changes)
    # and MathJax are installed here, in the lane, not before the lanes start.
    ensure_env requirements-site.txt
    site_assets
    export ATTNLAB_SITE_DIR="$RUN_DIR/site"
    stage "site: every lesson run, no network" site_build --out "$ATTNLAB_SITE_DIR"
}
# The browser suite (waits most: a server, Chromium, lesson after lesson) runs in a background
# lane beside what computes. Two lanes, not three, and one browser process: the machine's
# two cores are the limit. With the browser suite in two shards in two more lanes
# (ATTNLAB_BROWSER_SHARD), each shard took as long as the whole suite (1169 and 1175 s,
# against 1132 s), its CPU went from 373 to 620 s, and the fast tests took 1558 s (418 s
# beside one browser lane).
# In --all the site's build stands in for nbval's learner-notebook stage: it executes the same
# notebooks (notebooks/, no output checks, any error fails it) in fresh kernels from the same
# folder, and fails on any cell error too. The fast loop keeps nbval_learner.
# nbval of the solved sources runs at the end of the computing lane, not after the browser
# suite: in the fresh-clone CI of 2026-12-07 the machine's two cores were busy the whole run
# (vmstat: 0 % idle until the computing lane ended at 1491 s) and the browser lane, with nbval,
# ended 130 s after it, its last minutes on a half-idle machine.
browser_lane() { site_tests; browser_tests ""; }
computing_lane() {
    fast_tests "$@"; feedback_assets; grading_tests; nbval_source
}

run_tests() {  # $1: 1 for every test, 0 for the fast loop; the rest go to pytest
    local all="$1"; shift
    DURATIONS=(--durations=40 --durations-min=1)
    stage "lint (ruff)" bash -c 'ruff check . && ruff format --check .'
    if [[ "$all" == 1 ]]; then
        lane browsers browser_lane
        lane main computing_lane "$@"
    else
        fast_tests "$@"
        nbval_learner
    fi
    wait_lanes
    stage_table "$([[ "$all" == 1 ]] && echo "./run.sh test --all" || echo "./run.sh test")"
    if [[ -s "$RUN_DIR/failed" ]]; then
        echo "failed stages: $(paste -sd, "$RUN_DIR/failed")"
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
        # The kernel's configuration (a course name's NameError as one sentence): IPython reads
        # it from the environment's etc/ipython, where pip install . puts it.
        mkdir -p "$VENV/etc/ipython"
        cp jupyter-config/ipython/ipython_kernel_config.py "$VENV/etc/ipython/"
        shift
        if [[ "$(id -u)" == 0 ]]; then set -- --allow-root "$@"; fi  # e.g. inside a container
        # Extra options (--no-browser, --port 8890, --ip ...) come before the file to open,
        # which is given relative to this folder (it must lie inside root_dir).
        exec "$VENV/bin/jupyter" lab --ServerApp.root_dir=notebooks "$@" \
            notebooks/00-start-here.ipynb
        ;;
    test)
        RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/attnlab-run.XXXXXX")"
        trap 'rm -rf "$RUN_DIR"' EXIT
        shift
        all=0
        if [[ "${1:-}" == "--all" ]]; then all=1; shift; fi
        system_packages "$all"
        env_start=$(date +%s)
        children_cpu; env_cpu=$CPU
        ensure_env requirements.txt requirements-dev.txt
        children_cpu
        stage_line "environment (pip)" "$(( $(date +%s) - env_start ))" "$(( CPU - env_cpu ))" 0 \
            >> "$RUN_DIR/stages"
        export PATH="$PWD/$VENV/bin:$PATH"
        # Bytecode caches, as Python writes them by default: this machine sets
        # PYTHONDONTWRITEBYTECODE, so each process (pytest and its workers, nbgrader, kernels)
        # compiled the package again and pytest rewrote every test module's asserts again
        # (collecting the fast tests: 16.6 s of CPU without caches, 10.3 s with them).
        unset PYTHONDONTWRITEBYTECODE
        # One BLAS thread per process: a test run keeps both cores busy with processes of its
        # own (two xdist workers, two lanes, the kernels they start), and OpenBLAS's threads
        # spin while they wait for a core. Under that load lesson 8 ran in 44 s with OpenBLAS's
        # threads and 22 s without (7 s on an idle machine either way); its n = 4096 cell
        # 28 s and 4.6 s. Learners' kernels keep OpenBLAS's default.
        export OPENBLAS_NUM_THREADS=1
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
    site)
        ensure_env requirements.txt requirements-site.txt
        site_assets
        shift
        export OPENBLAS_NUM_THREADS=1  # two lessons run at once, each in its own kernel
        site_build "$@"
        ;;
    build)
        ensure_env requirements.txt requirements-dev.txt
        "$VENV/bin/python" tools/build_notebooks.py
        ;;
    *)
        sed -n '2,12p' "$0"
        exit 2
        ;;
esac
