"""attnlab's attention against the plain numpy expression and PyTorch's fused CPU kernel.

For each shape (B, H, N, d) in float32, the median wall time of several runs of:

* ``plain`` — :func:`attnlab.scaled_dot_product_attention` (validation included: it checks
  shapes, finiteness and overflow on every call, as a learner's call does);
* ``tiled`` — :func:`attnlab.tiled_attention` (block 128, online softmax, no N × N matrix);
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


def median_seconds(run, repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``run`` after one warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def methods(q, k, v) -> dict:
    """Name -> zero-argument callable computing attention of (q, k, v) that way."""
    import attnlab

    runs = {
        "plain": lambda: attnlab.scaled_dot_product_attention(q, k, v),
        "tiled": lambda: attnlab.tiled_attention(q, k, v, block_size=128),
        "numpy": lambda: numpy_expression(q, k, v),
    }
    try:
        import torch
    except ImportError:
        return runs
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def run_torch():
        with torch.no_grad():
            return sdpa(tq, tk, tv)

    runs["torch"] = run_torch
    return runs


def largest_difference(runs: dict) -> float:
    """Largest |difference| of every method's output from numpy's (a sanity check)."""
    import numpy as np

    reference = runs["numpy"]()
    worst = 0.0
    for run in runs.values():
        out = run()
        out = out[0] if isinstance(out, tuple) else out
        out = out.numpy() if hasattr(out, "numpy") else np.asarray(out)
        worst = max(worst, float(np.max(np.abs(out - reference))))
    return worst


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rerun_without_slowing_variables(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per method and shape")
    parser.add_argument("--max-n", type=int, default=4096, help="skip shapes with a larger N")
    parser.add_argument("--keep-env", action="store_true", help="keep the OpenBLAS variables")
    args = parser.parse_args(argv)

    import numpy as np

    unset = os.environ.get("ATTNLAB_BENCH_UNSET")
    print(
        "numerics: float32 attention, median ms of",
        args.repeats,
        "runs;",
        f"OpenBLAS variables unset for this run: {unset}"
        if unset
        else "OpenBLAS variables as set in the environment",
    )
    try:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        print(
            f"torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}"
        )
    except ImportError:
        print("torch not installed (pip install -r requirements-bench.txt): its column is empty")
    header = (
        f"{'(B, H, N, d)':<20} {'plain':>9} {'numpy':>9} {'tiled':>9} {'torch':>9}"
        f"  {'plain/numpy':>11} {'tiled/plain':>11} {'plain/torch':>11}  max |diff|"
    )
    print(header)
    met = True
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        if shape[2] > args.max_n:
            continue
        q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
        runs = methods(q, k, v)
        repeats = args.repeats if shape[2] <= 2048 else max(3, args.repeats // 2)
        ms = {name: 1e3 * median_seconds(run, repeats) for name, run in runs.items()}
        plain_ratio, tiled_ratio = ms["plain"] / ms["numpy"], ms["tiled"] / ms["plain"]
        ok = plain_ratio <= PLAIN_BAR and tiled_ratio <= TILED_BAR
        met &= ok
        torch_ms = f"{ms['torch']:9.1f}" if "torch" in ms else f"{'—':>9}"
        torch_ratio = f"{ms['plain'] / ms['torch']:10.2f}×" if "torch" in ms else f"{'—':>11}"
        print(
            f"{str(shape):<20} {ms['plain']:9.1f} {ms['numpy']:9.1f} {ms['tiled']:9.1f} "
            f"{torch_ms}  {plain_ratio:10.2f}× {tiled_ratio:10.2f}× {torch_ratio}"
            f"  {largest_difference(runs):.1e}  {'ok' if ok else 'OVER BAR'}"
        )
    print(
        f"bars: plain ≤ {PLAIN_BAR}× numpy, tiled ≤ {TILED_BAR}× plain at every shape: "
        f"{'met' if met else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
