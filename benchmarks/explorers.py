"""Kernel-side cost of every explorer: a slider step vs re-plotting the same figure from scratch.

For each explorer (found automatically) every control is swept through its range
from code, the way a slider drives it; each step runs the explorer's ``observe``
handler: compute, then either (column "moving": page) record the moving artists as
vector shapes that the page draws over the kept background (attnlab/page_layer.py), or
(Agg) draw them onto the kept background, find the pixels that changed and send them
to the canvas widget. The same run then re-plots the figure from scratch (new figure,
full draw, ``savefig`` PNG) for a sample of the same values. ``--pixel-ratio 2`` draws
for a HiDPI screen (four times the pixels; the page's shapes cost the same).

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
    parser.add_argument("--pixel-ratio", type=float, default=1.0, help="the screen's ratio")
    args = parser.parse_args(argv)
    print(f"devicePixelRatio {args.pixel_ratio:g}")
    print(
        f"{'explorer':<14} {'moving':>6} {'steps':>6} {'update ms':>10} {'replot ms':>10} "
        f"{'ratio':>7}  bar"
    )
    for cls in all_explorers():
        explorer = cls()
        explorer.view.set_pixel_ratio(args.pixel_ratio)
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
        moving = "page" if explorer.view.page_draws_moving else "Agg"
        print(
            f"{cls.name:<14} {moving:>6} {len(updates):>6} {update_ms:>10.2f} {replot_ms:>10.1f} "
            f"{ratio:>6.1f}x  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
