"""The shipped √d_k sweep is what tools/sqrt_dk_sweep.py computes (a part of it re-run here)."""

from __future__ import annotations

import numpy as np

from attnlab.sqrt_dk import CONFIG, exponent_name, load_shipped, run_record, summary, table


def test_the_shipped_file_covers_the_full_configuration():
    data = load_shipped()
    assert data["config"] == CONFIG
    keys = [(r["exponent"], r["d_k"], r["seed"]) for r in data["records"]]
    expected = [
        (round(a, 6), d, s)
        for a in CONFIG["exponents"]
        for d in CONFIG["d_ks"]
        for s in CONFIG["seeds"]
    ]
    assert keys == expected


def test_the_script_reproduces_shipped_records():
    """Re-run a spread of runs (every exponent, small and mid d_k, two seeds): equal to 6 dp."""
    shipped = {(r["exponent"], r["d_k"], r["seed"]): r for r in load_shipped()["records"]}
    for exponent in CONFIG["exponents"]:
        for d_k, seed in ((4, 0), (32, 3)):
            record = run_record(exponent, d_k, seed, CONFIG["steps"], CONFIG["lr"])
            assert record == shipped[(round(exponent, 6), d_k, seed)]


def test_summary_and_table():
    records = load_shipped()["records"]
    stats = summary(records, "solved_at")
    assert len(stats) == len(CONFIG["exponents"]) * len(CONFIG["d_ks"])
    median, low, high = stats[(0.5, 4)]
    assert low <= median <= high
    text = table(records, "anti_diagonal", "{:.2f}")
    lines = text.splitlines()
    assert len(lines) == 1 + len(CONFIG["exponents"])
    assert [line.split()[0] for line in lines[1:]] == ["0", "1/3", "1/2", "2/3"]
    assert exponent_name(1 / 3) == "1/3"


def test_the_sweep_shows_what_lesson_2_predicts_at_the_start():
    """Without scaling the softmax starts saturated at large d_k; with ÷ √d_k it does not."""
    stats = summary(load_shipped()["records"], "start_entropy")
    assert stats[(0.0, 256)][0] < 0.2 < 0.7 < stats[(0.5, 256)][0]
    widths = CONFIG["d_ks"]
    scaled = [stats[(0.5, d)][0] for d in widths]
    assert np.ptp(scaled) < 0.15  # ÷ √d_k: the same start at every width
