"""Lesson 11 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import numpy as np
from answer_tables import Answers, accept_reject, judged

import attnlab.induction
from attnlab.exercises import lesson11 as L
from attnlab.repeated_tokens import RepeatBatch, repeated_batch


# ---------------------------------------------------------------- 11.1 previous-token scores
def _batch_for(weights):
    """A batch of one sequence as long as ``weights``' rows, every query real: what a learner
    who hands the library's score a stand-in batch would build."""
    n = np.asarray(weights).shape[-1]
    return RepeatBatch(np.zeros((1, n), dtype=int), np.array([(n + 1) // 2]), None, None, None)


def previous_by_fancy_indexing(weights):
    w = np.asarray(weights)
    i = np.arange(1, w.shape[-1])
    return w[:, i, i - 1].mean(axis=1)


def previous_by_diagonal(weights):
    """The sub-diagonal with np.diagonal(offset=-1), in float32."""
    w = np.asarray(weights, dtype=np.float32)
    return np.diagonal(w, offset=-1, axis1=1, axis2=2).mean(axis=1)


def previous_by_loops(weights):
    """Head by head, query by query, as a list of Python floats."""
    out = []
    for head in weights:
        n = len(head)
        out.append(sum(float(head[i][i - 1]) for i in range(1, n)) / (n - 1))
    return out


def previous_by_einsum(weights):
    w = np.asarray(weights, dtype=float)
    n = w.shape[-1]
    return np.einsum("hij,ij->h", w, np.eye(n, k=-1)) / (n - 1)


def _sub(w):
    w = np.asarray(w, dtype=float)
    i = np.arange(1, w.shape[-1])
    return w[:, i, i - 1]


PREVIOUS_RIGHT = [
    previous_by_fancy_indexing,
    previous_by_diagonal,
    previous_by_loops,
    previous_by_einsum,
]
PREVIOUS_WRONG = {
    "the diagonal": (
        lambda w: np.diagonal(np.asarray(w), axis1=1, axis2=2).mean(axis=1),
        "You read the diagonal",
    ),
    "query 0 counted": (
        lambda w: _sub(w).sum(axis=1) / np.asarray(w).shape[-1],
        "Query 0 has no previous position",
    ),
    "above the diagonal": (
        lambda w: np.diagonal(np.asarray(w), offset=1, axis1=1, axis2=2).mean(axis=1),
        "above the diagonal",
    ),
    "a sum": (lambda w: _sub(w).sum(axis=1), "That is the sum"),
    "the last query only": (lambda w: np.asarray(w)[:, -1, -2], "You read only the last query"),
    "one number for all heads": (lambda w: float(_sub(w).mean()), "should have shape"),
    "the library": (
        lambda w: attnlab.induction.previous_token_score(np.asarray(w)[None], _batch_for(w)),
        "asks you not to use",
    ),
}


# ---------------------------------------------------------------- 11.2 prefix matching
def prefix_by_fancy_indexing(weights, length):
    w = np.asarray(weights)
    i = np.arange(length, 2 * length)
    return w[:, i, i - length + 1].mean(axis=1)


def prefix_by_diagonal(weights, length):
    """The repeat's rows of the diagonal L − 1 below the main one, in float32."""
    w = np.asarray(weights, dtype=np.float32)
    line = np.diagonal(w, offset=-(length - 1), axis1=1, axis2=2)  # (H, L + 1): queries L-1 …
    return line[:, 1:].mean(axis=1)


def prefix_by_loops(weights, length):
    """Head by head, as a list."""
    return [
        sum(float(head[i][i - length + 1]) for i in range(length, 2 * length)) / length
        for head in weights
    ]


def prefix_by_einsum(weights, length):
    n = 2 * length
    mask = np.zeros((n, n))
    mask[np.arange(length, n), np.arange(1, length + 1)] = 1.0
    return np.einsum("hij,ij->h", np.asarray(weights, dtype=float), mask) / length


def _pick(w, length, shift=1, first=None):
    w = np.asarray(w, dtype=float)
    i = np.arange(length if first is None else first, 2 * length)
    return w[:, i, i - length + shift]


PREFIX_RIGHT = [prefix_by_fancy_indexing, prefix_by_diagonal, prefix_by_loops, prefix_by_einsum]
PREFIX_WRONG = {
    "off by one: the earlier copy itself": (
        lambda w, n: _pick(w, n, shift=0).mean(axis=1),
        "You read key i − L",
    ),
    "the first half counted": (
        lambda w, n: _pick(w, n).sum(axis=1) / (2 * n),
        "The first half does not count",
    ),
    "the repeat's first query left out": (
        lambda w, n: _pick(w, n, first=n + 1).mean(axis=1),
        "You left out query L",
    ),
    "the previous-token score": (
        lambda w, n: _pick(w, n, shift=n - 1).mean(axis=1),
        "That is the previous-token score",
    ),
    "a sum": (lambda w, n: _pick(w, n).sum(axis=1), "That is the sum"),
    "the library": (
        lambda w, n: attnlab.induction.induction_score(
            np.asarray(w)[None],
            repeated_batch(np.random.default_rng(0), 1, 4, n, n),
        ),
        "asks you not to use",
    ),
}


# ---------------------------------------------------------------- 11.3 predictions
def predictions_by_slicing(tokens, length):
    out = np.full(2 * length, -1)
    out[length:] = np.asarray(tokens)[1 : length + 1]
    return out


def predictions_by_looping(tokens, length):
    """Position by position, a list of ints."""
    t = [int(x) for x in tokens]
    return [t[i - length + 1] if i >= length else -1 for i in range(len(t))]


def predictions_by_a_shifted_pattern(tokens, length):
    """An induction pattern (2L, 2L) with query i on key i − L + 1, applied to one-hot tokens,
    in float32."""
    t = np.asarray(tokens)
    n = t.size
    pattern = np.zeros((n, n), dtype=np.float32)  # (n, n)
    i = np.arange(length, n)
    pattern[i, i - length + 1] = 1
    read = pattern @ np.eye(t.max() + 1, dtype=np.float32)[t]  # (n, vocab)
    return np.where(read.any(axis=1), read.argmax(axis=1), -1)


def _predict(tokens, length, **options):
    return L._predict(tokens, length, **options)


PREDICTIONS_RIGHT = [
    predictions_by_slicing,
    predictions_by_looping,
    predictions_by_a_shifted_pattern,
]
PREDICTIONS_WRONG = {
    "the earlier copy itself": (
        lambda t, n: _predict(t, n, shift=0),
        "You predicted the earlier copy itself",
    ),
    "one too far": (lambda t, n: _predict(t, n, shift=2), "one too far"),
    "the most recent earlier occurrence": (
        lambda t, n: L._by_content(t),
        "its most recent earlier occurrence",
    ),
    "the first earlier occurrence": (
        lambda t, n: L._by_content(t, most_recent=False),
        "its first earlier occurrence",
    ),
    "the next token itself": (lambda t, n: np.append(np.asarray(t)[1:], -1), "reads the future"),
    "a prediction at L - 1": (
        lambda t, n: _predict(t, n, first=n - 1),
        "You predicted at position L − 1 too",
    ),
    "the previous token": (
        lambda t, n: np.concatenate([[-1], np.asarray(t)[:-1]]),
        "That is the previous token",
    ),
    "0 for no prediction": (
        lambda t, n: np.maximum(predictions_by_slicing(t, n), 0),
        "return -1 (no prediction), not 0",
    ),
}


def test_the_references_agree_with_the_library():
    rng = np.random.default_rng(5)
    batch = repeated_batch(rng, batch=1, vocab=6, min_repeat=5, max_repeat=5)  # (1, 10)
    w = L._causal_patterns(rng, 3, 10)  # (3, 10, 10)
    assert np.allclose(L._previous(w), attnlab.induction.previous_token_score(w[None], batch))
    assert np.allclose(L._prefix(w, 5), attnlab.induction.induction_score(w[None], batch))


def test_the_cases_hold_the_edges_each_exercise_is_about():
    assert any(c[1].shape[-1] == 2 for c in L.previous_cases())  # one query with a previous
    assert any(c[2] == 2 for c in L.prefix_cases())  # the shortest repeat
    cases = L.prediction_cases()
    assert any(c[2] == 2 for c in cases)  # the shortest repeat
    # a token twice in the first half: both rules without L go wrong there
    for most_recent in (True, False):
        assert any(
            not np.array_equal(L._predict(t, n), L._by_content(t, most_recent)) for _, t, n in cases
        )
    for seed in range(5):
        _, fresh, n = L.prediction_fresh(np.random.default_rng(seed))[0]
        assert not np.array_equal(L._predict(fresh, n), L._by_content(fresh))


# ---------------------------------------------------------------- the tables
TABLES = (
    Answers(L.previous_token, PREVIOUS_RIGHT, PREVIOUS_WRONG),
    Answers(L.prefix_matching, PREFIX_RIGHT, PREFIX_WRONG),
    Answers(L.predictions, PREDICTIONS_RIGHT, PREDICTIONS_WRONG),
)
test_accepts, test_rejects = accept_reject(*TABLES)


def test_print_the_exercise_table(capsys):
    """The exercise table (answer, verdict, reason) for the lesson's note: printed with -s."""
    rows = []
    for table in TABLES:
        named = [*table.named_right(), *((n, a) for n, (a, _) in table.wrong.items())]
        for name, answer in named:
            feedback = judged(table.exercise, answer)
            reason = feedback.message.split(" Stuck?")[0]
            rows.append((table.exercise.id, name, feedback.outcome.name, reason))
    with capsys.disabled():
        print()
        for row in rows:
            print(" | ".join(row))
    assert {r[2] for r in rows} == {"CORRECT", "WRONG"}
