"""Run the full √d_k experiment and write attnlab/sqrt_dk_sweep.json (about a minute).

Usage::

    .venv/bin/python tools/sqrt_dk_sweep.py           # write the file, print the tables
    .venv/bin/python tools/sqrt_dk_sweep.py --check   # exit 1 if the file is out of date

tests/test_sqrt_dk.py re-runs part of the sweep and compares it with the shipped file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from attnlab.sqrt_dk import CONFIG, SHIPPED, sweep, table


def build() -> dict:
    return {"config": CONFIG, "records": sweep(**CONFIG)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare with the file")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    data = build()
    text = json.dumps(data, indent=1) + "\n"
    print(f"{len(data['records'])} runs in {time.perf_counter() - start:.1f} s")
    for key, fmt in (
        ("solved_at", "{:.0f}"),
        ("anti_diagonal", "{:.2f}"),
        ("start_entropy", "{:.2f}"),
    ):
        print(f"\n{key} (median [min–max] over {len(CONFIG['seeds'])} seeds)")
        print(table(data["records"], key, fmt))
    if args.check:
        same = SHIPPED.exists() and SHIPPED.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{SHIPPED} is out of date")
        return 0 if same else 1
    SHIPPED.write_text(text, encoding="utf-8")
    print(f"wrote {SHIPPED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
