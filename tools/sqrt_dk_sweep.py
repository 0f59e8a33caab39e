"""Run the full √d_k experiment and write attnlab/sqrt_dk_sweep.json (ten minutes, two cores).

Usage::

    .venv/bin/python tools/sqrt_dk_sweep.py           # write the file, print the tables
    .venv/bin/python tools/sqrt_dk_sweep.py --check   # exit 1 if the file is out of date
    .venv/bin/python tools/sqrt_dk_sweep.py --print   # only print the shipped tables
    .venv/bin/python tools/sqrt_dk_sweep.py --extra   # the variants and nudged re-runs (~5 min)

``--extra`` reads the shipped sweep and writes attnlab/sqrt_dk_extra.json: μP's per-matrix
SGD rates and the unscaled head with a smaller W_Q start, on a grid of rates at d_k = 4, 64
and 256, then every run lesson 9's claims rest on again with the initial weights nudged
(attnlab.sqrt_dk.EXTRA_CONFIG says which).

The search for each setting's best learning rate runs in rounds: first every exponent at
d_k = 4 (three powers of 2 around a guess, then two more beyond whichever edge holds the
best rate, until it is strictly inside), then every other width, starting from the rates
that must be covered (the shared rate and the rate best at d_k = 4). Every run of a round
is independent, so a round is spread over two processes; each run is deterministic, so the
file does not depend on how the runs were scheduled.

tests/test_sqrt_dk.py re-runs sampled records and compares them with the shipped file.
"""

from __future__ import annotations

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one BLAS thread per process: two processes, two cores

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from attnlab.sqrt_dk import (  # noqa: E402
    CONFIG,
    EXTRA,
    EXTRA_CONFIG,
    SHIPPED,
    best_rate,
    init_record,
    load_extra,
    run_steps,
    search_window,
    settings,
    tables_text,
)

GUESS_LOG2 = {"sgd": 2, "adam": -3}  #: where the search starts at d_k = 4 (2**k)
PROCESSES = 2


def _run(task):
    """One run for a pool worker: ``(optimizer, exponent, d_k, log2 lr, seed)`` → steps."""
    optimizer, exponent, d_k, k, seed = task
    return task, run_steps(optimizer, exponent, d_k, 2.0**k, seed)


def _run_extra(task):
    """One run for a pool worker: ``(variant, optimizer, exponent, d_k, lr, nudge, seed)``."""
    variant, optimizer, exponent, d_k, lr, nudge, seed = task
    return task, run_steps(optimizer, exponent, d_k, lr, seed, nudge=nudge, variant=variant)


def _extra_round(pool, cells: list, nudges: list, out: dict, known: dict) -> None:
    """Run every ``(variant, optimizer, exponent, d_k, lr)`` of ``cells`` for every nudge and
    seed; ``out[(*cell, nudge)] = [steps per seed]``, taken from ``known`` (the records of an
    earlier file: every run is deterministic) where it has them."""
    for c in cells:
        for n in nudges:
            if (*c, n) in known:
                out[(*c, n)] = known[(*c, n)]
    tasks = [
        (*c, n, s) for c in cells for n in nudges if (*c, n) not in known for s in CONFIG["seeds"]
    ]
    tasks.sort(key=lambda t: -t[3])  # the widest first
    found: dict = {}
    for task, steps in pool.imap_unordered(_run_extra, tasks):
        found.setdefault(task[:6], {})[task[6]] = steps
    for key, by_seed in found.items():
        out[key] = [by_seed[s] for s in CONFIG["seeds"]]


def build_extra(data: dict, log=print, known=None) -> dict:
    """The variants and the nudged re-runs, as the JSON-ready dict ``load_extra`` returns.

    ``known``: ``{(variant, optimizer, exponent, d_k, lr, nudge): steps}`` already run.
    """
    cfg, out, known = EXTRA_CONFIG, {}, known or {}
    d_ks = cfg["variant_d_ks"]
    grid = [
        ("mup", "sgd", a, d, 2.0**k)
        for a in cfg["mup_exponents"]
        for d in d_ks
        for k in cfg["mup_log2"]
    ]
    grid += [
        ("small_wq", o, 0.0, d, 2.0**k)
        for o in CONFIG["optimizers"]
        for d in d_ks
        for k in cfg["small_wq_log2"][o]
    ]
    with multiprocessing.Pool(PROCESSES) as pool:
        started = time.perf_counter()
        _extra_round(pool, grid, [0], out, known)
        log(
            f"  variants: {len(grid) * len(CONFIG['seeds'])} runs in "
            f"{time.perf_counter() - started:.0f} s"
        )
        variant_best = {}
        for cell in {c[:4] for c in grid}:
            by_lr = {c[4]: out[(*c, 0)] for c in grid if c[:4] == cell}
            variant_best[cell] = best_rate(by_lr)
        table = settings(data)
        cells = set()
        for (o, a, d), s in table.items():
            cells.add(("shared", o, a, d, s["best_lr"]))  # nothing stalls at the best rate
            cells.add(("shared", o, a, d, s["tuned_lr"]))  # the d_k = 4 rate at every width
            for lr in (cfg["fixed_lr"].get(o), cfg["edge_lr"].get(o)):
                if lr is not None:
                    cells.add(("shared", o, a, d, lr))
        for cell, lr in variant_best.items():
            cells.add((*cell, lr))
            if cell[0] == "mup":
                cells.add((*cell, cfg["fixed_lr"]["sgd"]))
        cells = sorted(cells)
        started = time.perf_counter()
        nudged = [c for c in cells if c[0] == "shared"]
        _extra_round(pool, cells, cfg["nudges"], out, known)
        _extra_round(
            pool, [c for c in cells if c[0] != "shared" and (*c, 0) not in out], [0], out, known
        )
        log(
            f"  re-runs: {len(cells) * len(cfg['nudges']) * len(CONFIG['seeds'])} runs in "
            f"{time.perf_counter() - started:.0f} s ({len(nudged)} cells of the sweep)"
        )
    runs = [
        {
            "variant": v,
            "optimizer": o,
            "exponent": a,
            "d_k": d,
            "lr": lr,
            "nudge": n,
            "steps": steps,
        }
        for (v, o, a, d, lr, n), steps in sorted(out.items())
    ]
    return {"config": cfg, "runs": runs}


def _extra_text(extra: dict) -> str:
    """The JSON text: one record per line."""
    runs = ",\n".join(json.dumps(r) for r in extra["runs"])
    return f'{{"config": {json.dumps(extra["config"])},\n"runs": [\n{runs}\n]}}\n'


def _init(task):
    """One initial record for a pool worker: ``(exponent, d_k, seed)``."""
    return init_record(*task)


def _round_of_runs(pool, wanted: dict, found: dict) -> None:
    """Run every (setting, power of 2) in ``wanted`` for every seed; results into ``found``."""
    tasks = [
        (*setting, k, seed)
        for setting, ks in wanted.items()
        for k in ks
        for seed in CONFIG["seeds"]
    ]
    tasks.sort(key=lambda t: -t[2])  # the widest (slowest) runs first, for an even finish
    for (optimizer, exponent, d_k, k, seed), steps in pool.imap_unordered(_run, tasks):
        by_seed = found.setdefault((optimizer, exponent, d_k), {}).setdefault(2.0**k, {})
        by_seed[seed] = steps


def _as_lists(found: dict) -> dict:
    """``{setting: {lr: {seed: steps}}}`` → ``{setting: {lr: [steps in seed order]}}``."""
    return {
        setting: {lr: [seeds[s] for s in CONFIG["seeds"]] for lr, seeds in by_lr.items()}
        for setting, by_lr in found.items()
    }


def _search(pool, settings_: list, must_cover, found: dict, log) -> None:
    """Widen each setting's rates until :func:`search_window` has nothing left to add."""
    wanted = {}
    for setting in settings_:
        cover = must_cover(setting)
        if setting in found:
            continue
        ks = sorted({round(math.log2(lr)) for lr in cover})
        wanted[setting] = list(range(ks[0] - 1, ks[-1] + 2))
    rounds = 0
    while wanted:
        rounds += 1
        started = time.perf_counter()
        _round_of_runs(pool, wanted, found)
        runs = sum(len(ks) for ks in wanted.values()) * len(CONFIG["seeds"])
        lists = _as_lists(found)
        wanted = {}
        for setting in settings_:
            more = search_window(lists[setting], must_cover(setting))
            if more:
                wanted[setting] = more
        log(f"  round {rounds}: {runs} runs in {time.perf_counter() - started:.0f} s")


def build(log=print) -> dict:
    """The whole sweep as the JSON-ready dict :func:`attnlab.sqrt_dk.load_shipped` returns."""
    exponents, d_ks = CONFIG["exponents"], CONFIG["d_ks"]
    found: dict = {}
    with multiprocessing.Pool(PROCESSES) as pool:
        init = pool.map(
            _init, [(a, d, s) for a in exponents for d in d_ks for s in CONFIG["seeds"]]
        )
        tune = CONFIG["tune_width"]
        small = [(o, a, tune) for o in CONFIG["optimizers"] for a in exponents]
        log(f"searching the best rate at d_k = {tune}")
        _search(
            pool,
            small,
            lambda s: [CONFIG["shared_lr"][s[0]], 2.0 ** GUESS_LOG2[s[0]]],
            found,
            log,
        )
        tuned = {s[:2]: best_rate(_as_lists(found)[s]) for s in small}
        rest = [(o, a, d) for o in CONFIG["optimizers"] for a in exponents for d in d_ks]
        log("searching the best rate at every other width")
        _search(pool, rest, lambda s: [CONFIG["shared_lr"][s[0]], tuned[s[:2]]], found, log)
    lists = _as_lists(found)
    runs = [
        {"optimizer": o, "exponent": a, "d_k": d, "lr": lr, "steps": lists[(o, a, d)][lr]}
        for o in CONFIG["optimizers"]
        for a in exponents
        for d in d_ks
        for lr in sorted(lists[(o, a, d)])
    ]
    data = {"config": CONFIG, "init": init, "runs": runs}
    outside = [s for s, v in settings(data).items() if not v["interior"]]
    assert not outside, f"the best rate sits at the edge of the rates tried for {outside}"
    return data


def _text(data: dict) -> str:
    """The JSON text: one record per line, so a diff shows which runs changed."""
    head = json.dumps(data["config"])
    init = ",\n".join(json.dumps(r) for r in data["init"])
    runs = ",\n".join(json.dumps(r) for r in data["runs"])
    return f'{{"config": {head},\n"init": [\n{init}\n],\n"runs": [\n{runs}\n]}}\n'


def report(data: dict) -> str:
    """The tables the lesson shows, as text: the lesson's own (``tables_text``), with the
    variants and re-runs of the shipped extra file."""
    return tables_text(data, load_extra())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the file")
    parser.add_argument("--print", action="store_true", help="only print the shipped tables")
    parser.add_argument("--extra", action="store_true", help="the variants and nudged re-runs")
    parser.add_argument(
        "--reuse", action="store_true", help="with --extra: keep the runs the file already has"
    )
    args = parser.parse_args(argv)
    if args.extra:
        start = time.perf_counter()
        known = {}
        if args.reuse and EXTRA.exists():
            for r in json.loads(EXTRA.read_text(encoding="utf-8"))["runs"]:
                key = ("variant", "optimizer", "exponent", "d_k", "lr", "nudge")
                known[tuple(r[k] for k in key)] = r["steps"]
        extra = build_extra(json.loads(SHIPPED.read_text(encoding="utf-8")), known=known)
        text = _extra_text(extra)
        print(f"done in {time.perf_counter() - start:.0f} s")
        if args.check:
            same = EXTRA.exists() and EXTRA.read_text(encoding="utf-8") == text
            print("up to date" if same else f"{EXTRA} is out of date")
            return 0 if same else 1
        EXTRA.write_text(text, encoding="utf-8")
        print(f"wrote {EXTRA}")
        return 0
    if args.print:
        print(report(json.loads(SHIPPED.read_text(encoding="utf-8"))))
        return 0
    start = time.perf_counter()
    data = build()
    text = _text(data)
    print(f"done in {time.perf_counter() - start:.0f} s\n")
    print(report(data))
    if args.check:
        same = SHIPPED.exists() and SHIPPED.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{SHIPPED} is out of date")
        return 0 if same else 1
    SHIPPED.write_text(text, encoding="utf-8")
    print(f"wrote {SHIPPED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
