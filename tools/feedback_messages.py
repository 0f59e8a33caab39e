"""Dump every learner-facing message of every exercise to JSON, to compare two versions.

For each exercise of every lesson it runs, through the exercise's own ``check``: the stub
answers (``None``, ``...``, a function that raises ``NotImplementedError``), a few answers of
the wrong type, the worked solution of ``tests/worked_answers.py`` where there is one, and every
right and wrong answer of the answer tables in ``tests/test_exercises_lessonN.py``; then it
asks for every hint tier, the solution text and the stub text. Each message is stored as its
plain text and its HTML (``_repr_html_``), keyed by exercise and case, so two dumps differ
exactly where a learner would read something different. Usage::

    python tools/feedback_messages.py out.json           # write the dump
    python tools/feedback_messages.py --compare a.json b.json

Memory addresses (``0x7f…`` in a ``repr``) are replaced by ``0x?``; the progress file goes to
a temporary folder, so a run leaves the learner's own record alone.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import re
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def _stub(*args, **kwargs):
    raise NotImplementedError()


#: Answers of the wrong kind, the same for every exercise: (case name, answer).
ODD_ANSWERS = [
    ("stub None", None),
    ("stub Ellipsis", Ellipsis),
    ("stub raising NotImplementedError", _stub),
    ("a string", "not a function"),
    ("a number", 3),
    ("returns None", lambda *args, **kwargs: None),
    ("returns a string", lambda *args, **kwargs: "seven"),
    ("returns a list of strings", lambda *args, **kwargs: ["a", "b"]),
    ("raises ValueError", lambda *args, **kwargs: (_ for _ in ()).throw(ValueError("boom"))),
    ("an empty dict", {}),
]


def exercises() -> dict[str, object]:
    """``"lesson3.softmax_row"`` -> the exercise, for every exercise of every lesson."""
    from attnlab.exercises import EXERCISES

    return {exercise.name: exercise for exercise in EXERCISES.values()}


def answer_tables() -> dict[str, list[tuple[str, object]]]:
    """Exercise title -> ``[(case name, answer), ...]`` from the lessons' answer tables."""
    import answer_tables as tables

    found: dict[str, list[tuple[str, object]]] = {}
    original = tables.accept_reject

    def recording(*given):
        for table in given:
            cases = found.setdefault(table.exercise.title, [])
            cases += [(f"right: {name}", answer) for name, answer in table.named_right()]
            cases += [(f"wrong: {name}", answer) for name, (answer, _) in table.wrong.items()]
        return original(*given)

    tables.accept_reject = recording
    for path in sorted((ROOT / "tests").glob("test_exercises_lesson*.py")):
        importlib.import_module(path.stem)
    return found


def worked_answers() -> dict[str, object]:
    """Answer function name -> the worked answer in ``tests/worked_answers.py``."""
    import worked_answers as worked

    return {
        name.removeprefix("solution_"): value
        for name, value in vars(worked).items()
        if name.startswith("solution_") and callable(value)
    }


def _clean(text: str) -> str:
    return _ADDRESS.sub("0x?", text)


def _said(feedback) -> dict:
    return {
        "outcome": feedback.outcome.name,
        "text": _clean(str(feedback)),
        "html": _clean(feedback._repr_html_()),
        "score": feedback.score,
    }


def dump() -> dict[str, dict[str, dict]]:
    """Exercise name -> case name -> what the learner reads."""
    tables = answer_tables()
    worked = worked_answers()
    out: dict[str, dict[str, dict]] = {}
    for name, original in sorted(exercises().items()):
        exercise = copy.copy(original)  # hints move an exercise's tier on: a fresh one each
        cases = list(ODD_ANSWERS)
        attr = name.partition(".")[2]
        if attr in worked:
            cases.append(("worked answer", worked[attr]))
        cases += tables.get(exercise.title, [])
        said: dict[str, dict] = {}
        for case, answer in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    said[case] = _said(exercise.check(answer))
                except Exception as exc:  # noqa: BLE001 - what escaped is part of the record
                    said[case] = {"raised": f"{type(exc).__name__}: {_clean(str(exc))}"}
        for level in range(1, len(exercise.hints) + 1):
            said[f"hint {level}"] = {"text": exercise.hint().markdown}
        said["hint again"] = {"text": exercise.hint().markdown}
        said["solution"] = {"text": exercise.solution().markdown}
        said["stub"] = {"text": exercise.stub().markdown}
        out[name] = said
    return out


def compare(before: dict, after: dict) -> tuple[int, list[str]]:
    """How many messages were compared, and a line for each one that differs."""
    differences, count = [], 0
    for name in sorted(set(before) | set(after)):
        cases = before.get(name, {}), after.get(name, {})
        for case in sorted(set(cases[0]) | set(cases[1])):
            count += 1
            if cases[0].get(case) != cases[1].get(case):
                differences.append(
                    f"{name} / {case}: {cases[0].get(case)!r} -> {cases[1].get(case)!r}"
                )
    return count, differences


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="the dump to write, or two dumps to compare")
    parser.add_argument("--compare", action="store_true", help="compare two dumps")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(f).read_text(encoding="utf-8")) for f in args.files)
        count, differences = compare(before, after)
        print("\n".join(differences))
        print(f"{count} messages compared, {len(differences)} differ")
        return 1 if differences else 0
    os.environ.pop("ATTNLAB_REQUIRE_CORRECT", None)
    os.environ["ATTNLAB_PROGRESS"] = str(Path(tempfile.mkdtemp()) / "progress.json")
    found = dump()
    Path(args.files[0]).write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{sum(len(v) for v in found.values())} messages of {len(found)} exercises")
    return 0


if __name__ == "__main__":
    sys.exit(main())
