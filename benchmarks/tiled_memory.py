"""Peak memory of plain vs tiled attention at N = 16384, d = 64, float32 (tracemalloc).

Plain attention (:func:`attnlab.scaled_dot_product_attention`) builds the N × N scores
and weights; tiled attention (:func:`attnlab.tiling.tiled_attention`) holds one
block of scores at a time. Both are measured with ``tracemalloc`` (numpy reports its
array allocations to it), counting everything allocated during the call, the output
included, but not the inputs. The two outputs are compared.

Bar (the course's target, listed with the others in benchmarks/README.md):
tiled attention uses <= 2 % of the naive N × N memory.
Run: ``./run.sh bench`` or ``python benchmarks/tiled_memory.py``.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from attnlab.attention import scaled_dot_product_attention
from attnlab.tiling import tiled_attention

BAR_PERCENT = 2.0
MIB = 2**20


def peak_bytes(function, *args, **kwargs):
    """(result, peak bytes allocated during the call, seconds)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    try:
        result = function(*args, **kwargs)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak, seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16384, help="sequence length N")
    parser.add_argument("--d", type=int, default=64, help="head size d_k = d_v")
    parser.add_argument("--block", type=int, default=128, help="tiled block size")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, args.n, args.d), dtype=np.float32)  # (N, d) each

    (plain, _), plain_peak, plain_s = peak_bytes(scaled_dot_product_attention, q, k, v)
    tiled, tiled_peak, tiled_s = peak_bytes(tiled_attention, q, k, v, block_size=args.block)
    matrix = args.n * args.n * np.dtype(np.float32).itemsize
    percent = 100 * tiled_peak / plain_peak
    diff = float(np.max(np.abs(tiled.astype(np.float64) - plain)))
    ok = percent <= BAR_PERCENT and np.allclose(tiled, plain, rtol=1e-4, atol=1e-5)

    print(f"N = {args.n}, d = {args.d}, float32, block {args.block}")
    print(f"one N x N float32 matrix      {matrix / MIB:10.1f} MiB")
    print(f"plain attention, peak         {plain_peak / MIB:10.1f} MiB  ({plain_s:.2f} s)")
    print(f"tiled attention, peak         {tiled_peak / MIB:10.1f} MiB  ({tiled_s:.2f} s)")
    print(
        f"tiled / plain                 {percent:10.2f} %   (of one N x N matrix: "
        f"{100 * tiled_peak / matrix:.2f} %)"
    )
    print(f"max |tiled - plain|           {diff:10.2e}")
    verdict = "ok" if ok else f"MISSED (<= {BAR_PERCENT:g} % and outputs equal)"
    print(f"bar: <= {BAR_PERCENT:g} % of the naive memory: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
