"""What each exercise forbids, as qualified names, against a snapshot derived from the code.

For every exercise of the map (:data:`attnlab.exercises.EXERCISES`) the learner's check turns
its forbidden names (the declared ones and the course helpers that pass it by themselves) into
code objects (:func:`attnlab.exercises.rules.forbidden.forbidden_code_objects`: whole modules by
their public API, forbidden functions with their helpers and callers). This test compares the
qualified names of those code objects with ``forbidden_reach.json``, so a change to a lesson's
forbidden list, to what a module exports or to the helper rule shows up as a diff to review.
After a deliberate change, regenerate the snapshot and review its diff:

    PYTHONPATH=. python tests/test_forbidden_reach.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).with_name("forbidden_reach.json")


def _qualified(code) -> str:
    """``attnlab.<module path>.<qualname>`` for the package's code, ``<file stem>.<qualname>``
    for a library's, whatever the folders above the checkout are called (a checkout cloned
    into a folder named ``attnlab`` once gave ``attnlab.attnlab.softmax_family...``)."""
    import attnlab

    path = Path(code.co_filename).resolve()
    package = Path(attnlab.__file__).resolve().parent
    if path.is_relative_to(package):
        where = ".".join(("attnlab", *path.relative_to(package).with_suffix("").parts))
    else:
        where = path.stem
    return f"{where}.{code.co_qualname}"


def reached() -> dict[str, list[str]]:
    """Exercise id -> the sorted qualified names its check forbids (learner's kernel)."""
    from attnlab.exercises import EXERCISES
    from attnlab.exercises.rules.forbidden import forbidden_code_objects

    found = {}
    for exercise_id, exercise in EXERCISES.items():
        codes = forbidden_code_objects(exercise.forbidden, {})
        found[exercise_id] = sorted({_qualified(code) for code in codes})
    return found


@pytest.mark.slow
def test_each_exercise_forbids_what_the_snapshot_says():
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = reached()
    changed = {
        exercise_id: {
            "no longer": sorted(set(expected.get(exercise_id, ())) - set(names)),
            "now": sorted(set(names) - set(expected.get(exercise_id, ()))),
        }
        for exercise_id, names in now.items()
        if names != expected.get(exercise_id)
    }
    assert not changed and now.keys() == expected.keys(), (
        f"what exercises forbid changed (review, then run {Path(__file__).name}): {changed}"
    )


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(reached(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    sys.exit(0)
