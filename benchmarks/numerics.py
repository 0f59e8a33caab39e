"""attnlab's attention against the plain numpy expression and PyTorch's fused CPU kernel.

For each shape (B, H, N, d) in float32, the median wall time of several runs of each method,
taken in turns (round r calls every method once, starting with a different one each round).
torch is imported and timed only after the others: its OpenMP threads spin after each call and
its import changes the process (threads, allocator state), neither of which a learner's kernel
has:

* ``plain`` — :func:`attnlab.scaled_dot_product_attention` (validation included: it checks
  shapes, finiteness and overflow on every call, as a learner's call does);
* ``tiled`` — :func:`attnlab.tiled_attention` at its default block size (256 queries × 512
  keys), online softmax, no N × N matrix;
* ``numpy`` — the three-line expression a reader would write, with no checks::

      s = q @ k.swapaxes(-1, -2) * scale
      e = np.exp(s - s.max(-1, keepdims=True))
      out = e / e.sum(-1, keepdims=True) @ v

* ``torch`` — ``torch.nn.functional.scaled_dot_product_attention`` on the same arrays
  (``torch.from_numpy``, no copy), if PyTorch is installed (``pip install -r
  requirements-bench.txt``; it is not a learner's requirement).

Bars (issue 14): plain ≤ 1.1× numpy at every shape; tiled ≤ 1.5× plain. The gap to torch is
printed and explained in benchmarks/README.md, not held to a bar.

This machine sets ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE``, which slow a current numpy's
matrix products; the benchmark re-runs itself without them (and says so), since OpenBLAS reads
them when numpy is imported. ``--keep-env`` keeps them. Tests and CI leave them alone.
Run: ``./run.sh bench`` or ``python benchmarks/numerics.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

SLOWING_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
SHAPES = [
    (1, 1, 256, 64),
    (1, 1, 1024, 64),
    (1, 8, 512, 64),
    (1, 8, 1024, 64),
    (1, 8, 2048, 64),
    (1, 8, 4096, 64),
]  # (B, H, N, d)
PLAIN_BAR, TILED_BAR = 1.1, 1.5


def rerun_without_slowing_variables(argv: list[str]) -> None:
    """Replace this process with one that lacks the OpenBLAS variables (before numpy loads)."""
    if "--keep-env" in argv or not any(name in os.environ for name in SLOWING_VARIABLES):
        return
    env = {key: value for key, value in os.environ.items() if key not in SLOWING_VARIABLES}
    env["ATTNLAB_BENCH_UNSET"] = ",".join(n for n in SLOWING_VARIABLES if n in os.environ)
    os.execve(sys.executable, [sys.executable, __file__, *argv], env)


def numpy_expression(q, k, v):
    """The three-line attention a reader would write: matmul, max-shifted exp, matmul."""
    import numpy as np

    s = q @ k.swapaxes(-1, -2) * np.float32(1.0 / np.sqrt(q.shape[-1]))  # (B, H, N, N)
    e = np.exp(s - s.max(-1, keepdims=True))  # (B, H, N, N)
    return e / e.sum(-1, keepdims=True) @ v  # (B, H, N, d)


def interleaved_medians(runs: dict, min_rounds: int, budget_s: float = 1.5) -> dict:
    """Name -> median wall time (s) of its calls, taken in turns after one warm-up each.

    Each round calls every method once, starting from a different one each time, so a
    slow spell of the machine (another process, the allocator's state) falls on all
    methods alike instead of on whichever was being timed at that moment. There are at
    least ``min_rounds`` rounds, more for fast shapes: as many as fit in ``budget_s``
    (at most 400), since a 0.3 ms call needs hundreds of runs for a steady median.
    """
    names = list(runs)
    start = time.perf_counter()
    for run in runs.values():
        run()
    per_round = max(time.perf_counter() - start, 1e-6)
    rounds = max(min_rounds, min(400, int(budget_s / per_round)))
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def numpy_methods(q, k, v) -> dict:
    """Name -> zero-argument callable computing attention of (q, k, v) that way, numpy only."""
    import attnlab

    return {
        "plain": lambda: attnlab.scaled_dot_product_attention(q, k, v)[0],
        "tiled": lambda: attnlab.tiled_attention(q, k, v),
        "numpy": lambda: numpy_expression(q, k, v),
    }


def torch_method(q, k, v):
    """PyTorch's fused CPU attention of (q, k, v) as a callable returning a numpy array."""
    import torch

    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def run_torch():
        with torch.no_grad():
            return sdpa(tq, tk, tv).numpy()

    return run_torch


def largest_difference(runs: dict, reference) -> float:
    """Largest |difference| of every method's output from ``reference`` (a sanity check)."""
    import numpy as np

    return max(float(np.max(np.abs(run() - reference))) for run in runs.values())


def shape_arrays(shape: tuple, index: int):
    """The seeded q, k, v of one shape: float32 standard normals."""
    import numpy as np

    rng = np.random.default_rng(index)
    return tuple(rng.standard_normal(shape, dtype=np.float32) for _ in range(3))


def time_numpy_side(shapes: list, repeats: int) -> tuple[dict, dict]:
    """Shape -> {method: ms} and shape -> numpy expression output, without torch loaded."""
    times, outputs = {}, {}
    for index, shape in enumerate(shapes):
        runs = numpy_methods(*shape_arrays(shape, index))
        times[shape] = {name: 1e3 * t for name, t in interleaved_medians(runs, repeats).items()}
        reference = runs["numpy"]()  # (B, H, N, d)
        outputs[shape] = (reference, largest_difference(runs, reference))
    return times, outputs


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rerun_without_slowing_variables(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=int, default=7, help="least timed runs per method and shape"
    )
    parser.add_argument("--max-n", type=int, default=4096, help="skip shapes with a larger N")
    parser.add_argument("--keep-env", action="store_true", help="keep the OpenBLAS variables")
    args = parser.parse_args(argv)

    import numpy as np

    unset = os.environ.get("ATTNLAB_BENCH_UNSET")
    print(
        f"numerics: float32 attention, median ms of interleaved runs (at least {args.repeats}, "
        "more for fast shapes, up to 1.5 s per shape);",
        f"OpenBLAS variables unset for this run: {unset}"
        if unset
        else "OpenBLAS variables as set in the environment",
    )
    print(
        "plain, numpy and tiled are timed first, with torch not yet imported (as in a learner's "
        "kernel); torch's column after, on the same arrays"
    )
    shapes = [shape for shape in SHAPES if shape[2] <= args.max_n]
    times, outputs = time_numpy_side(shapes, args.repeats)
    try:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        print(
            f"torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}"
        )
        for index, shape in enumerate(shapes):
            run = {"torch": torch_method(*shape_arrays(shape, index))}
            times[shape]["torch"] = 1e3 * interleaved_medians(run, args.repeats)["torch"]
            reference, worst = outputs[shape]
            outputs[shape] = (reference, max(worst, largest_difference(run, reference)))
    except ImportError:
        print("torch not installed (pip install -r requirements-bench.txt): its column is empty")
    print(
        f"{'(B, H, N, d)':<20} {'plain':>9} {'numpy':>9} {'tiled':>9} {'torch':>9}"
        f"  {'plain/numpy':>11} {'tiled/plain':>11} {'plain/torch':>11}  max |diff|"
    )
    met = True
    for shape in shapes:
        ms = times[shape]
        plain_ratio, tiled_ratio = ms["plain"] / ms["numpy"], ms["tiled"] / ms["plain"]
        ok = plain_ratio <= PLAIN_BAR and tiled_ratio <= TILED_BAR
        met &= ok
        torch_ms = f"{ms['torch']:9.2f}" if "torch" in ms else f"{'—':>9}"
        torch_ratio = f"{ms['plain'] / ms['torch']:10.2f}×" if "torch" in ms else f"{'—':>11}"
        print(
            f"{str(shape):<20} {ms['plain']:9.2f} {ms['numpy']:9.2f} {ms['tiled']:9.2f} "
            f"{torch_ms}  {plain_ratio:10.2f}× {tiled_ratio:10.2f}× {torch_ratio}"
            f"  {outputs[shape][1]:.1e}  {'ok' if ok else 'OVER BAR'}"
        )
    print(
        f"bars: plain ≤ {PLAIN_BAR}× numpy, tiled ≤ {TILED_BAR}× plain at every shape: "
        f"{'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
