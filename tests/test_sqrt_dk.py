"""The shipped √d_k sweep: complete, every best rate inside its grid, reproducible, and
every claim lesson 9 makes from it still true."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from attnlab.sqrt_dk import (
    CONFIG,
    EXTRA_CONFIG,
    NUDGE,
    best_rate,
    by_setting,
    init_record,
    init_summary,
    is_interior,
    lesson_claims,
    load_extra,
    load_shipped,
    nudge_gap,
    rerun_index,
    run_steps,
    search_window,
    settings,
    start_head,
    steps_table,
    variant_best,
)


@pytest.fixture(scope="module")
def data():
    return load_shipped()


@pytest.fixture(scope="module")
def table(data):
    return settings(data)


def test_the_shipped_file_covers_the_full_configuration(data):
    assert data["config"] == CONFIG
    runs = by_setting(data)
    expected = {
        (o, a, d) for o in CONFIG["optimizers"] for a in CONFIG["exponents"] for d in CONFIG["d_ks"]
    }
    assert set(runs) == expected
    for by_lr in runs.values():
        assert all(len(steps) == len(CONFIG["seeds"]) for steps in by_lr.values())
        ks = sorted(round(math.log2(lr)) for lr in by_lr)
        assert all(lr == 2.0**k for lr, k in zip(sorted(by_lr), ks, strict=True))
        assert ks == list(range(ks[0], ks[-1] + 1))  # a contiguous stretch of the grid
    keys = [(r["exponent"], r["d_k"], r["seed"]) for r in data["init"]]
    assert keys == [
        (a, d, s) for a in CONFIG["exponents"] for d in CONFIG["d_ks"] for s in CONFIG["seeds"]
    ]


def test_every_best_rate_lies_strictly_inside_the_rates_tried(data, table):
    for setting, by_lr in by_setting(data).items():
        rates = sorted(by_lr)
        best = best_rate(by_lr)
        assert rates[0] < best < rates[-1], setting
        assert table[setting]["interior"]
        assert not search_window(by_lr, [CONFIG["shared_lr"][setting[0]]])
        # the shared rate and the rate tuned at d_k = 4 were run at every setting
        assert CONFIG["shared_lr"][setting[0]] in by_lr
        assert table[setting]["tuned_lr"] in by_lr
        assert math.isfinite(table[setting]["best"][0])  # the best rate solves (median)


def _sample(data, count, seed):
    rng = np.random.default_rng(seed)
    runs = data["runs"]
    picks = rng.choice(len(runs), size=count, replace=False)
    return [(runs[i], int(rng.integers(len(CONFIG["seeds"])))) for i in sorted(picks)]


def test_the_script_reproduces_sampled_runs(data):
    """Six runs drawn at random (seeded), and the best rate of α = ½ at d_k = 64: equal."""
    table = settings(data)
    best = table[("adam", 0.5, 64)]["best_lr"]
    chosen = _sample(data, 6, seed=2026)
    chosen.append(
        (
            next(
                r
                for r in data["runs"]
                if (r["optimizer"], r["exponent"], r["d_k"], r["lr"]) == ("adam", 0.5, 64, best)
            ),
            0,
        )
    )
    for record, i in chosen:
        seed = CONFIG["seeds"][i]
        got = run_steps(record["optimizer"], record["exponent"], record["d_k"], record["lr"], seed)
        assert got == record["steps"][i], (record, seed)


def test_the_script_reproduces_sampled_initial_statistics(data):
    rng = np.random.default_rng(9)
    for i in rng.choice(len(data["init"]), size=4, replace=False):
        record = data["init"][int(i)]
        assert init_record(record["exponent"], record["d_k"], record["seed"]) == record


def test_best_rate_and_the_search():
    by_lr = {0.5: [40, 50, 45], 1.0: [20, 30, 25], 2.0: [20, 25, None], 4.0: [None] * 3}
    assert best_rate(by_lr) == 1.0  # 2.0 has a seed that never gets there
    assert is_interior(by_lr)
    assert search_window(by_lr) == []
    assert search_window(by_lr, must_cover=[16.0]) == [3, 4]
    edge = {1.0: [None, None, None], 2.0: [None, None, None]}
    assert best_rate(edge) == 1.0 and not is_interior(edge)
    assert search_window(edge) == [-2, -1]


def test_the_tables_print_every_exponent_and_width(data):
    for optimizer in CONFIG["optimizers"]:
        for what in ("best", "shared", "tuned"):
            lines = steps_table(data, optimizer, what).splitlines()
            assert len(lines) == 1 + len(CONFIG["exponents"])
            assert [line.split()[0] for line in lines[1:]] == ["0", "1/3", "1/2", "2/3", "1"]
    assert "2^" in steps_table(data, "sgd", "best")
    assert len(init_summary(data, "entropy")) == len(CONFIG["exponents"]) * len(CONFIG["d_ks"])


# ---------------------------------------------------------------- the variants and re-runs
@pytest.fixture(scope="module")
def extra():
    return load_extra()


def test_the_extra_file_covers_its_configuration(data, extra):
    """Every variant has its whole grid of rates, its best rate inside it, and every cell the
    lesson's claims rest on has the un-nudged run and every nudged one."""
    cfg = extra["config"]
    assert cfg == EXTRA_CONFIG
    index = rerun_index(data, extra)
    nudges = {0, *cfg["nudges"]}
    grids = [("mup", "sgd", a, 2.0 ** np.array(cfg["mup_log2"])) for a in cfg["mup_exponents"]]
    grids += [
        ("small_wq", o, 0.0, 2.0 ** np.array(cfg["small_wq_log2"][o])) for o in CONFIG["optimizers"]
    ]
    for variant, optimizer, a, rates in grids:
        for d in cfg["variant_d_ks"]:
            by_lr = {lr: index[(variant, optimizer, a, d, lr)][0] for lr in rates}
            assert is_interior(by_lr), (variant, optimizer, a, d)
            lr = variant_best(index, variant, optimizer, a, d)
            assert set(index[(variant, optimizer, a, d, lr)]) == nudges
    table = settings(data)
    for (o, a, d), s in table.items():
        for lr in (s["best_lr"], s["tuned_lr"]):
            assert set(index[("shared", o, a, d, lr)]) == nudges
    for r in extra["runs"]:
        assert len(r["steps"]) == len(CONFIG["seeds"])


def test_the_script_reproduces_sampled_extra_runs(extra):
    """Four records drawn at random (seeded) and one of each variant: equal when re-run."""
    rng = np.random.default_rng(41)
    runs = extra["runs"]
    picks = [runs[int(i)] for i in rng.choice(len(runs), size=4, replace=False)]
    for variant in ("mup", "small_wq"):
        picks.append(next(r for r in runs if r["variant"] == variant and r["d_k"] == 64))
    picks.append(next(r for r in runs if r["nudge"] == 2 and r["optimizer"] == "adam"))
    for record in picks:
        i = int(rng.integers(len(CONFIG["seeds"])))
        got = run_steps(
            record["optimizer"],
            record["exponent"],
            record["d_k"],
            record["lr"],
            CONFIG["seeds"][i],
            nudge=record["nudge"],
            variant=record["variant"],
        )
        assert got == record["steps"][i], (record, i)


def test_a_nudge_is_tiny_and_seeded():
    a, b, c = (start_head(8, 1, nudge=n) for n in (0, 1, 1))
    gap = max(
        float(np.abs(x - y).max()) for (_, x), (_, y) in zip(a.items(), b.items(), strict=True)
    )
    assert 0 < gap < 20 * NUDGE
    assert all(np.array_equal(x, y) for (_, x), (_, y) in zip(b.items(), c.items(), strict=True))


@pytest.mark.parametrize("optimizer", CONFIG["optimizers"])
def test_the_temperature_variant_is_the_half_run(optimizer):
    """No scaling with W_Q started and stepped sqrt(d_k) smaller (Adam) or d_k smaller in rate
    (SGD) is the same run as alpha = 1/2: the exponent is a temperature at one width."""
    lr = 0.125 if optimizer == "adam" else 4.0
    for seed in (0, 1):
        half = run_steps(optimizer, 0.5, 16, lr, seed)
        assert run_steps(optimizer, 0.0, 16, lr, seed, variant="temperature") == half
    with pytest.raises(ValueError, match="variant"):
        run_steps(optimizer, 0.0, 16, lr, 0, variant="warm")


def test_nudge_gap_grows_only_near_the_edge():
    stable = nudge_gap("sgd", 0.5, 16, 4.0, seed=0, steps=[2, 16])
    assert max(stable) < 1e-9


# ---------------------------------------------------------------- lesson 9's claims
def test_every_claim_lesson_9_makes_holds(data, extra):
    claims = lesson_claims(data, extra)
    assert len(claims) == 18
    failing = [c for c, ok in claims.items() if not ok]
    assert not failing, failing


def _with_steps(extra, match, steps, nudge):
    """A copy of ``extra`` with one record's steps replaced."""
    out = copy.deepcopy(extra)
    record = next(
        r
        for r in out["runs"]
        if (r["variant"], r["optimizer"], r["exponent"], r["d_k"], r["lr"]) == match
        and r["nudge"] == nudge
    )
    record["steps"] = steps
    return out


def _failing(data, extra):
    return [c for c, ok in lesson_claims(data, extra).items() if not ok]


def test_the_claims_fail_when_a_re_run_disagrees(data, extra):
    """A claim must hold in every re-run: one nudged run changed makes it fail."""
    # muP, alpha = 1, d_k = 256: one nudged re-run never gets there
    broken = _with_steps(extra, ("mup", "sgd", 1.0, 256, 4.0), [None, 14, 14, 14, 14], 2)
    assert any("muP's rates on W_Q and W_K at 2^2 (times" in c for c in _failing(data, broken))
    # Adam alpha = 2/3 at the d_k = 4 rate, d_k = 128: one seed of one re-run fails
    two_thirds = round(2 / 3, 6)
    lr = settings(data)[("adam", two_thirds, 4)]["best_lr"]
    broken = _with_steps(extra, ("shared", "adam", two_thirds, 128, lr), [6, 6, None, 6, 6], 3)
    assert any("from 2/3 up" in c for c in _failing(data, broken))
    # SGD at 2^2: alpha = 1/3 slower at d_k = 256 than at 4 in one re-run
    broken = _with_steps(extra, ("shared", "sgd", round(1 / 3, 6), 256, 4.0), [40] * 5, 2)
    assert any("1/3 and 1/2 never need more" in c for c in _failing(data, broken))
    # SGD at its edge: a seed that fails in one re-run only makes the cell chaotic
    broken = _with_steps(extra, ("shared", "sgd", 0.5, 64, 8.0), [None, 6, 8, 8, 8], 1)
    assert any(c.startswith("chaos") for c in _failing(data, broken))


def test_the_claims_about_the_start_fail_on_other_data(data, extra):
    doctored = copy.deepcopy(data)
    for r in doctored["init"]:
        if r["exponent"] == 0.5 and r["d_k"] == 256:
            r["entropy"] *= 0.5
    assert any(c.startswith("start: of the five") for c in _failing(doctored, extra))
