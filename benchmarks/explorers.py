"""Kernel-side cost of every explorer: a slider step vs re-plotting the same figure from scratch.

For each explorer (found automatically) every control is swept through its range
from code, the way a slider drives it; each step runs the explorer's ``observe``
handler (compute, draw the moving artists onto the kept background, find the
pixels that changed and send them to the canvas widget). The same run then
re-plots the figure from scratch (new figure, full draw, ``savefig`` PNG) for a
sample of the same values.

Bar (the course's target, listed with the others in benchmarks/README.md):
median update <= 10 ms and >= 8x faster than re-plotting.
Run: ``./run.sh bench`` or ``python benchmarks/explorers.py``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from attnlab.explorers import all_explorers
from attnlab.explorers.sweep import control_values

BAR_MS, BAR_RATIO = 10.0, 8.0


def time_updates(explorer, rounds: int) -> list[float]:
    """Seconds per update, every value of every control, ``rounds`` times."""
    times = []
    for _ in range(rounds):
        for control in explorer.controls.values():
            for value in control_values(control, max_steps=60):
                if value == control.value:
                    continue
                start = time.perf_counter()
                control.value = value
                times.append(time.perf_counter() - start)
                assert explorer.last_error is None, explorer.last_error
    return times


def time_replots(explorer, count: int) -> list[float]:
    """Seconds per from-scratch re-plot, for ``count`` values spread over the first control."""
    name, control = next(iter(explorer.controls.items()))
    values = control_values(control, max_steps=count)
    times = []
    for value in values[:count]:
        start = time.perf_counter()
        explorer.replot(**{name: value})
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="sweeps of every control")
    parser.add_argument("--replots", type=int, default=10, help="from-scratch re-plots")
    args = parser.parse_args(argv)
    print(f"{'explorer':<14} {'steps':>6} {'update ms':>10} {'replot ms':>10} {'ratio':>7}  bar")
    for cls in all_explorers():
        explorer = cls()
        background = getattr(explorer, "training", None)  # lesson 9 trains 7 runs after its first
        if background is not None:  # picture: time the steps a learner makes once that is done
            background.join()
        updates = time_updates(explorer, args.rounds)
        replots = time_replots(explorer, args.replots)
        update_ms = statistics.median(updates) * 1e3
        replot_ms = statistics.median(replots) * 1e3
        ratio = replot_ms / update_ms
        ok = update_ms <= BAR_MS and ratio >= BAR_RATIO
        verdict = "ok" if ok else f"MISSED (<= {BAR_MS:g} ms, >= {BAR_RATIO:g}x)"
        print(
            f"{cls.name:<14} {len(updates):>6} {update_ms:>10.2f} {replot_ms:>10.1f} "
            f"{ratio:>6.1f}x  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
