"""Lesson 11 — two layers make an induction head: the checked exercises.

* :data:`previous_token` (11.1): ``previous_token_scores(weights)`` takes the attention
  patterns of ``H`` heads on one sequence, ``weights`` of shape (H, n, n) (rows are queries,
  causal), and returns each head's mean weight on the position just before the query,
  ``weights[h, i, i − 1]`` averaged over the queries ``i = 1 … n − 1`` (query 0 has no previous
  position): shape (H,).
* :data:`prefix_matching` (11.2): ``prefix_matching_scores(weights, length)`` takes the
  patterns (H, 2L, 2L) of ``H`` heads on a sequence of ``L = length`` tokens followed by the
  same ``L`` tokens again, and returns each head's induction (prefix-matching) score: the
  mean over the queries of the repeat, ``i = L … 2L − 1``, of ``weights[h, i, i − L + 1]``,
  the weight on the token that came *after* the earlier copy of the query's token.
* :data:`predictions` (11.3): ``induction_predictions(tokens, length)`` does by hand what
  the two heads do together on ``L = length`` tokens followed by the same ``L`` again
  (``tokens`` of shape (2L,)): each query of the repeat, ``i = L … 2L − 1``, predicts the token
  after its earlier copy at ``i − L``, ``tokens[i − L + 1]`` (the key whose previous token is
  the query's token); ``-1`` in the first half, which has no earlier copy. Shape (2L,). The
  rule that needs no ``L``, the token after an earlier occurrence of the same token, is wrong
  wherever a token occurs twice in the first half: it is a known mistake, not the reference.

The references are written here from the definitions and agree with
:func:`attnlab.induction.previous_token_score` and :func:`attnlab.induction.induction_score`
(``tests/test_exercises_lesson11.py``); the answers may not call :mod:`attnlab.induction`.
Known mistakes are named from what the answer returns: the diagonal read in place of the
sub-diagonal, query 0 counted, the transposed pattern, a sum in place of a mean; the key off
by one either way in the prefix match (``i − L``, the earlier copy itself: a duplicate-token
head), the first half counted, the repeat's first query left out, the previous-token score
in place of the prefix match; the earlier copy itself instead of the token after it, one too
far, matching by content (most recent or first earlier occurrence), the next token itself
(reading the future), a prediction at L − 1, the previous token, 0 in place of -1.

Examples
--------
>>> previous_token.check(None).outcome.name
'NOT_ATTEMPTED'
>>> import numpy as np
>>> def diagonal(weights):
...     w = np.asarray(weights)
...     return np.diagonal(w, axis1=1, axis2=2).mean(axis=1)
>>> "diagonal" in previous_token.check(diagonal).message
True
"""

from __future__ import annotations

import numpy as np

from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.precision import compare

__all__ = [
    "predictions",
    "prefix_cases",
    "prediction_cases",
    "prefix_matching",
    "previous_cases",
    "previous_token",
]

_LIBRARY = ("attnlab.induction",)


def _causal_patterns(rng, heads: int, n: int, sharpness: float = 2.0) -> np.ndarray:
    """Random causal attention patterns (heads, n, n): rows sum to 1, nothing above the
    diagonal, rounded to 3 decimals and renormalised so the cases read well."""
    scores = sharpness * rng.normal(size=(heads, n, n))  # (H, n, n)
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (H, n, n)
    return w / w.sum(axis=-1, keepdims=True)


def _shifted(n: int, back: int) -> np.ndarray:
    """A pattern (n, n) whose query i reads key i − back (query i < back reads key 0)."""
    w = np.zeros((n, n))
    for i in range(n):
        w[i, max(i - back, 0)] = 1.0
    return w


def _uniform(n: int) -> np.ndarray:
    """The causal uniform pattern (n, n): query i spreads its weight over keys 0 … i."""
    w = np.tril(np.ones((n, n)))
    return w / w.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- 11.1 previous-token scores
def previous_cases() -> list[tuple[str, np.ndarray]]:
    """``(description, weights)``: a perfect previous-token head beside a uniform causal head
    (n = 5); three random causal heads (n = 6); one head on two tokens; a head that reads
    itself (the diagonal) beside one that reads the token two back."""
    rng = np.random.default_rng(1101)
    return [
        (
            "2 heads on 5 tokens: one reads the previous token, one spreads evenly",
            np.stack([_shifted(5, 1), _uniform(5)]),
        ),
        ("3 random causal heads on 6 tokens", _causal_patterns(rng, 3, 6)),
        ("1 random causal head on 2 tokens", _causal_patterns(rng, 1, 2)),
        (
            "3 heads on 7 tokens: each reads itself, two back, or a random mixture",
            np.stack([np.eye(7), _shifted(7, 2), _causal_patterns(rng, 1, 7, 1.0)[0]]),
        ),
    ]


def previous_fresh(rng) -> list[tuple[str, np.ndarray]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 1 to 8 random causal heads
    on 3 to 40 tokens, then 2 heads on 14 to 24 tokens (more than any shipped case) of which
    one mostly reads the previous token: an answer right only up to the sizes the shipped
    cases show (a red team's 11.1) is wrong on these."""
    h, n = int(rng.integers(1, 9)), int(rng.integers(3, 41))
    m = int(rng.integers(14, 25))
    mostly = 0.7 * _shifted(m, 1) + 0.3 * _causal_patterns(rng, 1, m)[0]  # (m, m)
    return [
        (f"{h} random causal heads on {n} tokens", _causal_patterns(rng, h, n)),
        (
            f"2 heads on {m} tokens, one mostly on the previous token",
            np.stack([_causal_patterns(rng, 1, m)[0], mostly]),
        ),
    ]


def _previous(w) -> np.ndarray:
    w = np.asarray(w, dtype=float)
    i = np.arange(1, w.shape[-1])
    return w[:, i, i - 1].mean(axis=1)  # (H,)


def _previous_mistakes(w) -> list[tuple[np.ndarray | None, str]]:
    n = w.shape[-1]
    i = np.arange(1, n)
    sub = w[:, i, i - 1]  # (H, n − 1)
    return [
        (
            np.diagonal(w, axis1=1, axis2=2).mean(axis=1),
            "You read the diagonal, weights[h, i, i]: each query's weight on itself. The "
            "previous position is one column to the left, weights[h, i, i − 1] (the line "
            "just below the diagonal).",
        ),
        (
            sub.sum(axis=1) / n if n > 1 else None,
            f"You divided by all {n} queries. Query 0 has no previous position, so the mean "
            f"is over the {n - 1} queries i = 1 … n − 1.",
        ),
        (
            w[:, i - 1, i].mean(axis=1),
            "You read weights[h, i − 1, i], above the diagonal: rows are queries and columns "
            "keys, so query i's weight on key i − 1 is weights[h, i, i − 1].",
        ),
        (
            sub.sum(axis=1) if n > 2 else None,
            "That is the sum of the weights on the previous position; the score is their "
            "mean over the queries, a number from 0 to 1.",
        ),
        (
            np.array([w[h, -1, -2] for h in range(w.shape[0])]) if n > 2 else None,
            "You read only the last query. Average weights[h, i, i − 1] over every query "
            "i = 1 … n − 1.",
        ),
    ]


def _previous_what(case) -> str:
    return f"previous_token_scores(weights) for {case[0]}"


def _judge_previous(got, case, messages) -> None:
    """Judge the scores ``got`` for one of :func:`previous_cases`."""
    _, w = case
    compare(
        got,
        _previous(w),
        _previous_what(case),
        messages,
        _previous_mistakes(np.asarray(w, dtype=float)),
        w.dtype,
    )


previous_token = Exercise(
    "Exercise 11.1 (previous-token scores)",
    Cases(previous_cases, _judge_previous, what=_previous_what, fresh=previous_fresh),
    hints=[
        "A previous-token head puts each query's weight on the position just before it. In a "
        "heatmap with queries as rows and keys as columns, where is that weight: on the "
        "diagonal, below it or above it?",
        "Query i's weight on position i − 1 is weights[h, i, i − 1], one step below the "
        "diagonal. Query 0 has nothing before it, so only the queries 1 … n − 1 count; the "
        "score of a head is the mean of those n − 1 weights.",
        "Make an index array of the queries 1 to n − 1, use it and the same array minus one "
        "to pick the sub-diagonal of every head at once (fancy indexing on the last two "
        "axes), and take the mean along the queries' axis, keeping one number per head.",
    ],
    forbidden=_LIBRARY,
    id="11.1",
    attr="previous_token",
    answer="previous_token_scores",
    points=1,
)


# ---------------------------------------------------------------- 11.2 prefix matching
def _induction_pattern(length: int, sharp: float = 1.0, rng=None) -> np.ndarray:
    """A pattern (2L, 2L): the repeat's queries i read i − L + 1 (with weight ``sharp``, the
    rest spread at random when ``rng`` is given); the first half reads key 0."""
    n = 2 * length
    w = np.zeros((n, n))
    w[:length, 0] = 1.0
    for i in range(length, n):
        w[i, i - length + 1] = 1.0
    if rng is not None:
        w = sharp * w + (1 - sharp) * _causal_patterns(rng, 1, n)[0]
    return w


def prefix_cases() -> list[tuple[str, np.ndarray, int]]:
    """``(description, weights, length)``: a perfect induction head beside a duplicate-token
    head (it reads the earlier copy itself) and a previous-token head, L = 4; two random
    causal heads, L = 3; a noisy induction head, L = 5; the shortest repeat, L = 2."""
    rng = np.random.default_rng(1102)
    dup = _shifted(8, 4)  # query i reads i − L: the earlier copy of its own token
    return [
        (
            "3 heads, L = 4: an induction head, a duplicate-token head, a previous-token head",
            np.stack([_induction_pattern(4), dup, _shifted(8, 1)]),
            4,
        ),
        ("2 random causal heads, L = 3", _causal_patterns(rng, 2, 6), 3),
        (
            "1 noisy induction head, L = 5",
            _induction_pattern(5, sharp=0.6, rng=rng)[None],
            5,
        ),
        ("1 random causal head, L = 2", _causal_patterns(rng, 1, 4), 2),
    ]


def prefix_fresh(rng) -> list[tuple[str, np.ndarray, int]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 1 to 6 random causal heads
    with L from 2 to 20, then a noisy induction head beside a random one, L from 3 to 16."""
    h, length = int(rng.integers(1, 7)), int(rng.integers(2, 21))
    m = int(rng.integers(3, 17))
    noisy = _induction_pattern(m, sharp=float(rng.uniform(0.4, 0.9)), rng=rng)
    return [
        (f"{h} random causal heads, L = {length}", _causal_patterns(rng, h, 2 * length), length),
        (
            f"2 heads, L = {m}: a noisy induction head and a random one",
            np.stack([noisy, _causal_patterns(rng, 1, 2 * m)[0]]),
            m,
        ),
    ]


def _prefix(w, length: int, shift: int = 1, first: int | None = None, over=None) -> np.ndarray:
    """Mean over queries ``first … 2L − 1`` (default L) of ``w[:, i, i − L + shift]``,
    divided by ``over`` queries (default: their number)."""
    w = np.asarray(w, dtype=float)
    start = length if first is None else first
    i = np.arange(start, 2 * length)
    picked = w[:, i, i - length + shift]  # (H, queries)
    return picked.sum(axis=1) / (len(i) if over is None else over)  # (H,)


def _prefix_mistakes(w, length: int) -> list[tuple[np.ndarray | None, str]]:
    n = 2 * length
    i = np.arange(length, n)
    return [
        (
            _prefix(w, length, shift=0),
            "You read key i − L: the earlier copy of the query's own token (a "
            "duplicate-token head). The induction head reads the token *after* it, "
            "i − L + 1: that is the one to predict next.",
        ),
        (
            _prefix(w, length, shift=2) if length > 2 else None,
            "You read key i − L + 2, one too far: the earlier copy of query i's token is at "
            "i − L, and the token after it at i − L + 1.",
        ),
        (
            _prefix(w, length, over=n),
            f"You divided by all {n} queries: only the L = {length} queries of the repeat, "
            "i = L … 2L − 1, have an earlier copy to match. The first half does not count.",
        ),
        (
            _prefix(w, length, first=length + 1),
            "You left out query L, the first token of the repeat: it is a copy of token 0, "
            "so an induction head reads key 1 from there. The repeat's queries are "
            "i = L … 2L − 1.",
        ),
        (
            w[:, i, i - 1].mean(axis=1),
            "That is the previous-token score on the repeat, weights[h, i, i − 1]. The "
            "prefix match reads i − L + 1, the token after the earlier copy.",
        ),
        (
            _prefix(w, length) * length if length > 1 else None,
            "That is the sum of the weights; the score is their mean over the L queries of "
            "the repeat, a number from 0 to 1.",
        ),
    ]


def _prefix_what(case) -> str:
    return f"prefix_matching_scores(weights, length) for {case[0]}"


def _judge_prefix(got, case, messages) -> None:
    """Judge the scores ``got`` for one of :func:`prefix_cases`."""
    _, w, length = case
    compare(
        got,
        _prefix(w, length),
        _prefix_what(case),
        messages,
        _prefix_mistakes(np.asarray(w, dtype=float), length),
        w.dtype,
    )


prefix_matching = Exercise(
    "Exercise 11.2 (the induction score: prefix matching)",
    Cases(prefix_cases, _judge_prefix, what=_prefix_what, fresh=prefix_fresh),
    hints=[
        "In the repeat, the token at query i was seen before at position i − L. What came "
        "right after it then is what comes next now. Which key should an induction head "
        "read, and which queries have an earlier copy at all?",
        "Only the queries of the repeat count, i = L … 2L − 1, and each should read key "
        "i − L + 1 (not i − L: that is the copy of its own token). The score of a head is "
        "the mean of those L weights.",
        "Make an index array of the repeat's queries, pick weights[:, i, i − L + 1] for all "
        "heads at once with fancy indexing, and average along the queries' axis, one number "
        "per head.",
    ],
    forbidden=_LIBRARY,
    id="11.2",
    attr="prefix_matching",
    answer="prefix_matching_scores",
    points=2,
)


# ---------------------------------------------------------------- 11.3 predict the next token
def _repeat(half) -> np.ndarray:
    """The sequence (2L,): ``half`` (L,) then the same L tokens again."""
    half = np.asarray(half)
    return np.concatenate([half, half])


def prediction_cases() -> list[tuple[str, np.ndarray, int]]:
    """``(description, tokens, length)``: a repeat whose first half holds one token twice (a
    rule that matches tokens by content finds the wrong copy there); a repeat with no token
    twice; a first half that starts with a doubled token; the shortest repeat, L = 2."""
    return [
        ("the tokens [3, 1, 4, 1, 5] twice, L = 5", _repeat([3, 1, 4, 1, 5]), 5),
        ("the tokens [0, 1, 2, 3] twice, L = 4", _repeat([0, 1, 2, 3]), 4),
        ("the tokens [7, 7, 2] twice, L = 3", _repeat([7, 7, 2]), 3),
        ("the tokens [6, 2] twice, L = 2", _repeat([6, 2]), 2),
    ]


def prediction_fresh(rng) -> list[tuple[str, np.ndarray, int]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): L = 4 to 10 tokens from a
    vocabulary of 6, with a token twice in the first half (so that matching by content goes
    wrong somewhere), then the same L again; then L = 2 to 24 tokens from a vocabulary of 30 to
    1,000, one of them 30 or more (an answer right only for the tokens the shipped cases use
    is caught)."""
    length = int(rng.integers(4, 11))
    half = rng.integers(0, 6, size=length)
    while np.array_equal(_by_content(_repeat(half)), _predict(_repeat(half), length)):
        half = rng.integers(0, 6, size=length)  # until a token twice makes content matching fail
    m = int(rng.integers(2, 25))
    vocab = int(rng.integers(31, 1001))
    other = rng.integers(0, vocab, size=m)  # (m,)
    other[rng.integers(m)] = rng.integers(30, vocab)  # a token past any shipped case's
    return [
        (f"the tokens {half.tolist()} twice, L = {length}", _repeat(half), length),
        (f"the tokens {other.tolist()} twice, L = {m}", _repeat(other), m),
    ]


def _predict(tokens, length: int, first: int | None = None, shift: int = 1) -> np.ndarray:
    """For each query i = ``first`` … 2L − 1 (``first`` defaults to L), the token at
    i − L + ``shift`` (-1 if out of range); -1 at every other position."""
    t = np.asarray(tokens).tolist()
    first = length if first is None else first
    out = []
    for i in range(len(t)):
        k = i - length + shift
        out.append(t[k] if i >= first and 0 <= k < len(t) else -1)
    return np.array(out)


def _by_content(tokens, most_recent: bool = True) -> np.ndarray:
    """The rule without L: for each i, the token after the most recent (or first) earlier
    position k < i holding the same token, tokens[k + 1]; -1 where there is none."""
    t = np.asarray(tokens).tolist()
    out = []
    for i, token in enumerate(t):
        seen = [k for k in range(i) if t[k] == token]
        out.append(t[(seen[-1] if most_recent else seen[0]) + 1] if seen else -1)
    return np.array(out)


def _prediction_mistakes(tokens, length: int) -> list[tuple[np.ndarray | None, str]]:
    t = np.asarray(tokens)
    right = _predict(t, length)
    return [
        (
            _predict(t, length, shift=0),
            "You predicted the earlier copy itself, tokens[i − L]: that is the query's own "
            "token. The induction head copies the token that came *after* it, "
            "tokens[i − L + 1].",
        ),
        (
            _predict(t, length, shift=2),
            "You predicted tokens[i − L + 2], one too far: the earlier copy of query i's "
            "token is at i − L, and the token after it at i − L + 1.",
        ),
        (
            _by_content(t),
            "You matched the token by content: the token after its most recent earlier "
            "occurrence. That fails where a token occurs twice in the first half (the most "
            "recent occurrence is then the wrong copy) and predicts in the first half too. "
            "Use the repeat length: the earlier copy of query i is at i − L.",
        ),
        (
            _by_content(t, most_recent=False),
            "You matched the token by content: the token after its first earlier "
            "occurrence. That fails where a token occurs twice in the first half (the first "
            "occurrence is then not the copy i − L) and predicts in the first half too. Use "
            "the repeat length: the earlier copy of query i is at i − L.",
        ),
        (
            np.append(t[1:], -1),
            "You predicted tokens[i + 1], the next token itself: that reads the future, "
            "which a causal model cannot see. Copy the token after the earlier copy, "
            "tokens[i − L + 1].",
        ),
        (
            _predict(t, length, first=length - 1),
            "You predicted at position L − 1 too. It is the last token of the first half: "
            "it has no earlier copy, and nothing up to it says that a repeat starts next. "
            "Predict only at i = L … 2L − 1.",
        ),
        (
            np.concatenate([[-1], t[:-1]]),
            "That is the previous token at every position: what the layer-0 head reads, not "
            "the prediction. Find the earlier copy at i − L and copy what came after it.",
        ),
        (
            np.where(right < 0, 0, right),
            "In the first half, where there is no earlier copy, return -1 (no prediction), "
            "not 0: 0 is a token too.",
        ),
    ]


def _prediction_what(case) -> str:
    return f"induction_predictions(tokens, length) for {case[0]}"


def _judge_prediction(got, case, messages) -> None:
    """Judge the predictions ``got`` for one of :func:`prediction_cases`."""
    _, tokens, length = case
    compare(
        got,
        _predict(tokens, length),
        _prediction_what(case),
        messages,
        _prediction_mistakes(tokens, length),
        np.float64,
    )


predictions = Exercise(
    "Exercise 11.3 (predict the next token as the two heads do)",
    Cases(prediction_cases, _judge_prediction, what=_prediction_what, fresh=prediction_fresh),
    hints=[
        "In the repeat, the token at query i was seen before at position i − L. The "
        "induction head finds that copy by matching its token against what the "
        "previous-token head wrote into each key: 'my previous token was t'. Which key has "
        "the query's token as its previous token, and what should be predicted?",
        "The key whose previous token is the earlier copy is i − L + 1; the prediction is "
        "the token there, tokens[i − L + 1], for i = L … 2L − 1. The first half has no "
        "earlier copy: -1 at i = 0 … L − 1.",
        "Start from an array of 2L values of -1 and fill its second half with the slice of "
        "tokens that starts at position 1 and holds L tokens.",
    ],
    forbidden=_LIBRARY,
    id="11.3",
    attr="predictions",
    answer="induction_predictions",
    points=2,
)
