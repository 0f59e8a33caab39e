"""Lesson 4 — reading attention heatmaps: the checked exercises.

* :data:`row_entropy` (4.1): the entropy, in nats, of every row of a weight matrix.
* :data:`name_the_patterns` (4.2): name the four heatmaps A–D of :func:`quiz_examples`.
* :data:`hub_key` (4.3): the key token that receives the most attention in total.
  ``hub_key(weights, tokens)`` takes weights of shape (n_q, n_k) and the n_k *key* tokens
  (one per column); for self-attention those are the query tokens too.

Reference answers come from attnlab's numerics: :func:`attnlab.entropy` for 4.1,
:func:`attnlab.patterns.column_mass` for 4.3; 4.2 is a quiz (:data:`QUESTIONS`) whose key,
``answer_keys/lesson4.py``, does not ship with the package. Known mistakes are named only
from what the answer returned (the nan of ``0 · log 0``, bits, the wrong axis, a missing
minus sign, …); numpy warnings caused by the learner's code are caught and explained, never
shown as a wall of ``RuntimeWarning``.

Examples
--------
>>> row_entropy.check(None).outcome.name
'NOT_ATTEMPTED'
>>> naive = lambda w: -np.sum(w * np.log(w), axis=1)       # log(0) on a one-hot row
>>> "0·log 0 = 0" in row_entropy.check(naive).message
True
>>> answer = {"A": "flat", "B": "uniform", "C": "link"}
>>> "has not named D yet" in name_the_patterns.check(answer).message
True
>>> hub_key.check(lambda weights, tokens: tokens[0]).outcome.name
'WRONG'
"""

from __future__ import annotations

import math
import numbers
import re
import warnings
from dataclasses import dataclass

import numpy as np

import attnlab
from attnlab.examples import cat_sat_down
from attnlab.exercises.kit.calling import call, call_watching
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import short, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.mistakes import Compared, Mistake, must_not_warn
from attnlab.exercises.kit.outcomes import NotAttempted, Wrong
from attnlab.exercises.kit.precision import judging_tolerance
from attnlab.exercises.quiz import Question, Questions
from attnlab.patterns import (
    PATTERNS,
    TITLES,
    column_mass,
    effective_keys,
    pattern_example,
    strongest_links,
)

__all__ = [
    "row_entropy",
    "name_the_patterns",
    "hub_key",
    "QUESTIONS",
    "LETTERS",
    "quiz_examples",
    "pattern_named",
    "entropy_cases",
    "hub_cases",
    "CROSS_QUERIES",
    "CROSS_KEYS",
]


# ---------------------------------------------------------------- shared helpers
def _spelled(tokens) -> str:
    """``"green tea is hot"``: a sentence from its tokens, to name an example."""
    return " ".join(tokens)


# ---------------------------------------------------------------- 4.1 entropy of each row
def entropy_cases() -> list[tuple[str, np.ndarray]]:
    """(description, weights) pairs the checker tries.

    The four pattern examples first (no weight is exactly 0 there), then a one-hot row
    with a uniform row (entropy 0 and log n), then two queries over five keys, with
    exact zeros from masked scores, so that summing down the columns changes the shape.
    """
    cases = []
    for name in PATTERNS:
        ex = pattern_example(name)
        cases.append(
            (f'the weights of "{_spelled(ex.tokens)}", shape {ex.weights.shape}', ex.weights)
        )
    n = 4
    one_hot_and_uniform = np.stack([np.eye(n)[1], np.full(n, 1 / n)])  # (2, 4)
    cases.append(
        (f"a one-hot row and a uniform row, {short(one_hot_and_uniform)}", one_hot_and_uniform)
    )
    masked = attnlab.softmax(np.array([[1, 2, -np.inf, -np.inf, 0], [0, 1, 2, 1, 0]]))  # (2, 5)
    cases.append((f"two queries over five keys, {short(masked.round(4))}", masked))
    return cases


def entropy_fresh(rng) -> list[tuple[str, np.ndarray]]:
    """Weights drawn anew for every grading (``Cases(fresh=...)``): the softmax of 2 to 5
    rows of random scores (no zero weight), a one-hot row with a uniform one, and rows with
    exact zeros (masked keys) where queries and keys differ in number."""
    n_q, n_k = int(rng.integers(2, 6)), int(rng.integers(3, 8))
    w = attnlab.softmax(rng.normal(0.0, 1.5, size=(n_q, n_k)))  # (n_q, n_k)
    one_hot_and_uniform = np.stack([np.eye(n_k)[rng.integers(n_k)], np.full(n_k, 1 / n_k)])
    scores = rng.normal(0.0, 1.5, size=(n_q, n_k + 1))  # (n_q, n_k + 1): more keys than rows
    kept = rng.integers(n_k + 1, size=n_q)  # (n_q,) a key left in every row
    scores[rng.random(scores.shape) < 0.3] = -np.inf
    scores[np.arange(n_q), (kept + 1 + rng.integers(n_k, size=n_q)) % (n_k + 1)] = -np.inf
    scores[np.arange(n_q), kept] = 0.0
    masked = attnlab.softmax(scores)
    return [
        (f"{n_q} queries over {n_k} keys, {short(w.round(4))}", w),
        (f"a one-hot row and a uniform row, {short(one_hot_and_uniform)}", one_hot_and_uniform),
        (f"{n_q} queries over {n_k + 1} keys, some masked, {short(masked.round(4))}", masked),
    ]


def _terms(w):
    """-p log p entry by entry, with 0 · log 0 = 0."""
    return -w * np.log(np.where(w > 0, w, 1.0))


_ENTROPY_MISTAKES = [
    Mistake(
        lambda w: -attnlab.entropy(w),
        "Your entropies are negative: H = -Σ p log p has a minus sign in front "
        "(every log p is ≤ 0, so the minus makes H ≥ 0).",
    ),
    Mistake(
        lambda w: attnlab.entropy(w) / math.log(2),
        "These are in bits (log base 2). The exercise wants nats: "
        "use the natural logarithm, np.log.",
    ),
    Mistake(
        lambda w: attnlab.entropy(w) / math.log(10),
        "These use log base 10. The exercise wants nats: use the natural logarithm, np.log.",
    ),
    Mistake(
        lambda w: attnlab.entropy(w) / math.log(w.shape[1]),
        lambda w: (
            f"You divided by log n = log {w.shape[1]}: that is the "
            "normalised entropy, between 0 and 1. Return the entropy itself, in nats."
        ),
    ),
    Mistake(
        lambda w: _terms(w).sum(axis=0),  # (n_k,)
        "These are the entropies of the columns: you summed down axis=0. Each row "
        "is one query's distribution over the keys — sum along each row, axis=1.",
    ),
    Mistake(
        lambda w: np.exp(attnlab.entropy(w)),
        "That is exp(H), the effective number of keys. Return H itself.",
    ),
    Mistake(
        lambda w: -np.log(w).sum(axis=1),
        "You added up -log p without weighting each term by p: H = -Σ p · log p.",
    ),
    Mistake(
        lambda w: attnlab.entropy(w) / w.shape[1],
        "You took the mean of the terms along each row; entropy is their sum.",
    ),
    Mistake(
        lambda w: np.full(w.shape[0], math.log(w.shape[1])),
        lambda w: (
            f"You returned log n = log {w.shape[1]} for every row: that "
            "is the largest entropy a row can have (a uniform row), not the entropy of these "
            "rows."
        ),
    ),
]


_ZERO_LOG = (
    "A weight of exactly 0 gives log(0) = -inf, and 0 · (-inf) is nan in numpy. "
    "By convention 0·log 0 = 0 (the limit of t·log t as t → 0), so zero weights add "
    "nothing: leave them out with a mask, or take the log of np.where(w > 0, w, 1) "
    "(log 1 = 0)."
)


def _entropy_what(description, *_) -> str:
    return f"row_entropy(weights) for {description}"


def _entropy_shape(got, expected, what, w) -> None:
    """The sentences of an answer that is not numbers or not one entropy per row: one number
    for the whole matrix, one per key (summed down the columns), keepdims kept, no sum."""
    n_q, n_k = w.shape
    try:
        shape = np.asarray(got, dtype=float).shape
    except (TypeError, ValueError):
        raise Wrong(f"{what} should be an array of {n_q} numbers; got {short(got)}.") from None
    said = f"{what} should be {short(expected)}"
    if shape == expected.shape:
        return
    if shape == ():
        raise Wrong(
            f"{said}, one entropy per row (shape {expected.shape}), but yours gave "
            f"one number for the whole matrix, {short(np.asarray(got, dtype=float))}. Sum "
            "-p·log p along each row only (axis=1), not over every entry."
        )
    if shape == (n_k,) and n_k != n_q:
        raise Wrong(
            f"{said}, shape {expected.shape} (one entropy per query), but yours "
            f"has shape {shape}, one number per key: you summed down the "
            "columns (axis=0). Sum along each row, axis=1."
        )
    if shape == (n_q, 1):
        raise Wrong(
            f"{said}, shape {expected.shape}, but yours has shape {shape}: "
            "one entropy per row is right, but drop keepdims=True (or return "
            "the result .ravel()ed) so it is a plain 1-D array."
        )
    if shape == w.shape:
        raise Wrong(
            f"{said}, shape {expected.shape}, but yours has the shape of the "
            f"weights, {shape}: add the terms -p·log p up along each row "
            "(axis=1)."
        )
    raise Wrong(f"{said}, shape {expected.shape}, but yours has shape {shape}.")


def _entropy_nan(got, expected, what, messages, w) -> None:
    """A nan or inf: from 0·log 0 when a weight is 0 (:data:`_ZERO_LOG`)."""
    values = np.asarray(got, dtype=float)
    if np.all(np.isfinite(values)):
        return
    said = f"{what} should be {short(expected)}"
    if np.any(w == 0):
        raise Wrong(f"{said}, but yours gave {short(values)}. {_ZERO_LOG}{warned(messages)}")
    raise Wrong(f"{said}, but yours contains nan or inf: {short(values)}.{warned(messages)}")


def _entropy_property(values, expected, messages, w) -> str:
    """The cause when no known mistake matches: a negative entropy, a one-hot row whose
    entropy is not 0, else the formula."""
    if np.any(values < 0):
        return (
            "Entropy is never negative: every log p is ≤ 0, and H = -Σ p log p puts a "
            "minus sign in front."
        )
    one_hot = np.isclose(w.max(axis=1), 1.0)  # (n_q,) rows with all weight on one key
    if np.any(one_hot) and not np.allclose(values[one_hot], 0.0, atol=1e-9):
        return "A one-hot row has no uncertainty at all: its entropy must be exactly 0."
    return "Check the formula H = -Σ_j w_ij · log w_ij, summed along each row."


_judge_row_entropy = Compared(
    attnlab.entropy,
    _entropy_what,
    _ENTROPY_MISTAKES,
    # a float32 answer is judged to its precision: a sum of n_k terms p·log p, each rounded
    tolerance=lambda got, w: judging_tolerance(got, ulps=16 * w.shape[1], abs_ulps=16),
    mistake_tolerance=(1e-6, 1e-9),
    check=_entropy_shape,
    screen=_entropy_nan,
    after=_entropy_property,
    right=must_not_warn(
        "values",
        " np.where(w > 0, w * np.log(w), 0) and "
        "np.nansum still compute log(0) for every zero weight (np.where evaluates "
        "both branches first). Never take the log of 0: take the log of "
        "np.where(w > 0, w, 1) instead, or skip the zero weights in a loop.",
    ),
    joiner=". ",
    hidden=True,
    warned=True,
    arguments=lambda case: case[1:],  # (description, weights)
)


def _entropy_failed(exc, case) -> str:
    """The call that failed, and why ``math.log`` fails on a zero weight."""
    if "math domain error" in str(exc):
        return f"{_entropy_what(*case)} failed. {exc}: math.log(0) fails. {_ZERO_LOG}"
    return f"{_entropy_what(*case)} failed. {exc}"


row_entropy = Exercise(
    "Exercise 4.1 (the entropy of every row)",
    Cases(entropy_cases, _judge_row_entropy, failed=_entropy_failed, fresh=entropy_fresh),
    hints=[
        "The entropy of one row adds up -p·log p over its keys: 0 when all the weight sits on "
        "one key, log n when it is spread evenly over n keys. A weight of exactly 0 is the "
        "catch: log(0) is -inf, and numpy turns 0·(-inf) into nan. By convention "
        "0·log 0 = 0.",
        "Work on the whole matrix at once: multiply the weights by their logs, add along "
        "each row with `.sum(axis=1)`, and put a minus sign in front. Before taking the log, "
        "replace every 0 by 1 with `np.where(weights > 0, weights, 1.0)`: log 1 = 0, so "
        "those terms vanish, and numpy never sees log(0).",
        "Make a copy of the weights in which every 0 is replaced by 1 (`np.where`), take its "
        "log, multiply by the *original* weights, add along each row and put a minus sign in "
        "front.",
    ],
    forbidden=(
        "attnlab.entropy",
        "attnlab.patterns.normalised_entropy",
        "attnlab.patterns.effective_keys",
        "scipy.stats.entropy",
    ),
    id="4.1",
    attr="row_entropy",
    points=2,
)


# ---------------------------------------------------------------- 4.2 name the patterns
#: The four heatmaps of the quiz by letter, as tokens and scores (small integers; the weights
#: are their row softmax). Which pattern each one shows is the exercise: the key is in
#: ``answer_keys/lesson4.py``, outside the installed package (:mod:`attnlab.exercises.keys`),
#: and no heatmap here is one of the lesson's labelled examples
#: (:func:`attnlab.patterns.pattern_example`), so the package tells the letters apart only by
#: what a learner reads in the heatmaps themselves.
_QUIZ_HEATMAPS = {
    "A": (
        ("cold", "rain", "fell", "today"),
        [[1, 0, 0, 3], [3, 1, 0, 0], [0, 3, 1, 0], [0, 0, 3, 1]],
    ),
    "B": (
        ("<s>", "a", "small", "boat", "drifted"),
        [[3, 0, 0, 0, 0], [3, 1, 0, 0, 0], [3, 0, 1, 0, 0], [3, 0, 0, 1, 0], [3, 0, 0, 0, 1]],
    ),
    "C": (
        ("birds", "sing", "at", "dawn"),
        [[3, 1, 0, 1], [0, 3, 1, 0], [1, 0, 3, 1], [0, 1, 0, 3]],
    ),
    "D": (("and", "then", "we", "left", "home"), [[0] * 5] * 5),
}
LETTERS = tuple(sorted(_QUIZ_HEATMAPS))


@dataclass(frozen=True, eq=False)
class QuizHeatmap:
    """One heatmap of the quiz, without its pattern's name (printing it gives nothing away).

    Attributes
    ----------
    tokens : list of str
        The n tokens, in order.
    scores, weights : ndarray, shape (n, n)
        The attention scores and their row softmax.
    """

    tokens: list
    scores: np.ndarray  # (n, n)
    weights: np.ndarray  # (n, n)


def quiz_examples() -> dict:
    """The four heatmaps of the quiz, ``{letter: example}``, letters in order.

    Each example has only ``tokens`` (n str), ``scores`` and ``weights`` (n, n): the
    pattern's name is left out, so printing an example does not give the answer away.

    Examples
    --------
    >>> {letter: ex.weights.shape for letter, ex in quiz_examples().items()}
    {'A': (4, 4), 'B': (5, 5), 'C': (4, 4), 'D': (5, 5)}
    >>> hasattr(quiz_examples()["A"], "name")
    False
    """
    shown = {}
    for letter in LETTERS:
        tokens, scores = _QUIZ_HEATMAPS[letter]
        scores = np.array(scores, dtype=float)  # (n, n)
        shown[letter] = QuizHeatmap(list(tokens), scores, attnlab.softmax(scores))
    return shown


# Other ways to say each pattern, compared after _normalised() (lower case, no hyphens,
# no leading article); a plural "s" on the last word is forgiven as well.
_SYNONYMS = {
    "diagonal": (
        "diagonal dominance",
        "dominant diagonal",
        "diagonally dominant",
        "diagonal dominant",
        "strong diagonal",
        "diag",
        "self",
        "self attending",
        "attends to itself",
        "self focus",
        "self focused",
        "identity",
    ),
    "link": (
        "off diagonal",
        "off diagonal link",
        "offdiagonal",
        "offdiagonal link",
        "off diagonal weight",
        "off diagonal attention",
        "strong link",
        "cross link",
    ),
    "uniform": (
        "uniform row",
        "uniform weight",
        "uniform attention",
        "spread",
        "spread out",
        "evenly spread",
        "even",
        "flat",
        "flat row",
        "diffuse",
        "broad",
    ),
    "hub": ("hub column", "hub key", "hub token", "sink", "attention sink", "bright column"),
}


def _normalised(word: str) -> str:
    text = re.sub(r"[()]", "", word.lower())  # "link(s)" -> "links"
    text = re.sub(r"[^a-z]+", " ", text).strip()  # hyphens, dots, quotes -> spaces
    text = re.sub(r" patterns?$", "", text)  # "diagonal pattern" -> "diagonal"
    return re.sub(r"^(a|an|the) ", "", text)


def _pattern_words() -> dict[str, str]:
    """Every accepted spelling (normalised) -> the pattern name."""
    words = {}
    for name in PATTERNS:
        for word in (name, TITLES[name], *_SYNONYMS[name]):
            words[_normalised(word)] = name
    return words


def pattern_named(word) -> str | None:
    """The pattern a learner's word means, or None.

    Examples
    --------
    >>> [pattern_named(w) for w in ("Hub column", "off-diagonal link(s)", "spread", "blob")]
    ['hub', 'link', 'uniform', None]
    """
    if not isinstance(word, str):
        return None
    words = _pattern_words()
    text = _normalised(word)
    return words.get(text) or (words.get(text[:-1]) if text.endswith("s") else None)


def _letters(labels) -> str:
    """``"A"``, ``"A and C"``, ``"A, B and D"``."""
    labels = [str(label) for label in labels]
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def reading_cue(letter: str, name: str, ex: QuizHeatmap) -> str:
    """How to read heatmap ``letter`` (``ex``, showing the pattern ``name``) without naming its
    pattern: the quiz key's nudge for a wrong name (``answer_keys/lesson4.py``)."""
    if name == "hub":
        return (
            f"Look at the columns of {letter}, not only its rows: add up what each key "
            "collects over all the queries. Is one key read by everybody?"
        )
    if name == "diagonal":
        return (
            f"In every row of {letter}, find the brightest cell. Which key is it, "
            "compared with the token the row belongs to?"
        )
    if name == "link":
        query, key, _ = strongest_links(ex.weights, count=1)[0]
        return (
            f'Follow the row of "{ex.tokens[query]}" in {letter} to its brightest cell. '
            "Is that key the same token as the query, or a different one?"
        )
    row = int(np.argmax(effective_keys(ex.weights)))
    return (
        f'Look at the row of "{ex.tokens[row]}" in {letter} and compare the shades of its '
        "cells: how is its weight shared among the keys?"
    )


def _placeholder(value) -> bool:
    return value is None or value is Ellipsis or (isinstance(value, str) and not value.strip())


def _as_quiz_answer(answer) -> dict:
    """The learner's answer as a dict (a function with no arguments may return it)."""
    if callable(answer):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            answer = call(answer)
    if not isinstance(answer, dict):
        kind = type(answer).__name__
        extra = (
            " A list or tuple does not say which letter each name belongs to."
            if isinstance(answer, (list, tuple))
            else ""
        )
        raise Wrong(
            f"Your answer should be a dict from letter to pattern, like "
            f"{{'A': '...', 'B': '...', 'C': '...', 'D': '...'}}; got a {kind}, "
            f"{short(answer)}.{extra}"
        )
    return answer


def _read_names(answer) -> dict:
    """The learner's answer as ``{letter: pattern name}``, or :class:`Wrong` saying why it is
    not one: four letters, each a known pattern name, each pattern once. Says nothing about
    which letter is which (the key does, where it is at hand)."""
    given = _as_quiz_answer(answer)
    if given and all(_placeholder(value) for value in given.values()):
        raise NotAttempted(
            "Fill in a pattern name for each letter, run that cell, then run this check again."
        )
    shown = f"Your answer {given!r}"
    letters = list(LETTERS)
    answers = {}
    for key, value in given.items():
        letter = key.strip().upper() if isinstance(key, str) else key
        if letter not in LETTERS and pattern_named(key):
            raise Wrong(
                f"{shown} has pattern names as its keys. Swap them round: the keys "
                f"are the letters {_letters(letters)}, the values the pattern names."
            )
        if letter not in LETTERS:
            raise Wrong(
                f"{shown} has the key {key!r}, but there is no heatmap {key!r}: the "
                f"letters are {_letters(letters)}."
            )
        if letter in answers:
            raise Wrong(f"{shown} names heatmap {letter} twice.")
        answers[letter] = value
    missing = [letter for letter in letters if _placeholder(answers.get(letter))]
    if missing:
        raise Wrong(
            f"{shown} has not named {_letters(missing)} yet: give a pattern for each "
            f"of {_letters(letters)}."
        )
    named = {}
    for letter in letters:
        name = pattern_named(answers[letter])
        if name is None:
            choices = ", ".join(PATTERNS)
            titles = ", ".join(repr(TITLES[p]) for p in PATTERNS)
            raise Wrong(
                f"{shown}: {answers[letter]!r} (for {letter}) is not one of the four "
                f"patterns. Use one of {choices} (or the lesson's titles: {titles})."
            )
        named[letter] = name
    for name in PATTERNS:
        twice = [letter for letter in letters if named[letter] == name]
        if len(twice) > 1:
            raise Wrong(
                f"{shown} calls {_letters(twice)} the same pattern, {name!r}. Each of "
                "the four patterns appears exactly once."
            )
    return named


#: Exercise 4.2 as a quiz (:mod:`attnlab.exercises.quiz`): one question per heatmap, answered
#: with a pattern name; the key, letter -> pattern, is ``key_4_2`` of ``answer_keys/lesson4.py``.
#: Without it (a graded course run) the check says only whether the answer is well formed.
QUESTIONS = Questions(
    "4.2",
    [
        Question(
            letter,
            4,
            "reading a heatmap",
            f"Which pattern does heatmap {letter} show?",
            options=tuple((name, TITLES[name]) for name in PATTERNS),
        )
        for letter in LETTERS
    ],
    {"examples": quiz_examples()},
    key_file="lesson4",
    form=_read_names,
)


name_the_patterns = QUESTIONS.exercise(
    "Exercise 4.2 (name the four patterns)",
    [
        "Read each heatmap the way the lesson does: a row is one query and sums to 1, a "
        "column is one key. For each map, ask where its bright cells sit.",
        "One question per pattern: is every row brightest on its own token? Does some row "
        "read mostly from a *different* token? Is some row shared evenly, all its cells the "
        "same shade? Does one column stay bright all the way down?",
        "Let the numbers decide: for each `letter, ex` in `lesson4.quiz_examples().items()`, "
        "print `patterns.diagonal_mass(ex.weights)`, "
        "`patterns.effective_keys(ex.weights).max()`, `patterns.column_mass(ex.weights).max()` "
        "and `patterns.strongest_links(ex.weights, 1)` (the setup cell imported `patterns` "
        "from `attnlab`), and match each map to the measure it stands out on.",
    ],
    id="4.2",
    attr="name_the_patterns",
    points=1,
)


# ---------------------------------------------------------------- 4.3 the hub key
#: Cross-attention: four queries (a French sentence) read six key tokens (an English one).
#: Scores are small integers; the weights are their row-wise softmax. Each query reads its
#: own word most, and every query also gives "." some weight, so "." collects the most in
#: total, while the first, the last and the most focused row each point somewhere else.
CROSS_QUERIES = ("le", "chat", "noir", "dort")
CROSS_KEYS = ("the", "black", "cat", "is", "asleep", ".")
_CROSS_SCORES = np.array(
    [[3, 1, 0, 0, 0, 2], [0, 0, 4, 0, 0, 3], [1, 4, 0, 0, 0, 3], [0, 0, 0, 0, 3, 2]],
    dtype=float,
)  # (4, 6)


#: Self-attention in which "night" is the hub only because it also reads itself: without the
#: diagonal, "sang" would collect more; and "all" is the key most rows read most (2 of 4),
#: which is not the largest total either.
SELF_HEAVY_TOKENS = ("we", "sang", "all", "night")
_SELF_HEAVY_SCORES = np.array(
    [[3, 4, 0, 3], [2, 2, 4, 3], [1, 1, 2, 1], [2, 1, 1, 4]], dtype=float
)  # (4, 4)


def hub_cases() -> list[tuple[str, np.ndarray, tuple[str, ...]]]:
    """(description, weights, key tokens) triples the checker tries.

    A constructed hub, the running "The cat sat down" example (scaled scores, d_k = 8),
    and cross-attention with more keys than queries, where ``tokens`` name the keys only.
    """
    hub = pattern_example("hub")
    cat = cat_sat_down()
    q, k = cat.x @ cat.w_q, cat.x @ cat.w_k  # (4, d_k) each
    cat_weights = attnlab.softmax(q @ k.T / math.sqrt(cat.d_k))  # (4, 4)
    cross = attnlab.softmax(_CROSS_SCORES)  # (4, 6)
    heavy = attnlab.softmax(_SELF_HEAVY_SCORES)  # (4, 4)
    return [
        (f'"{_spelled(hub.tokens)}" (self-attention)', hub.weights, hub.tokens),
        (f'"{_spelled(cat.tokens)}" (self-attention, scaled scores)', cat_weights, cat.tokens),
        (
            f'"{_spelled(SELF_HEAVY_TOKENS)}" (self-attention; a token that reads itself counts '
            "too)",
            heavy,
            SELF_HEAVY_TOKENS,
        ),
        (
            f'"{_spelled(CROSS_QUERIES)}" reading "{_spelled(CROSS_KEYS)}" (cross-attention: '
            f"{len(CROSS_QUERIES)} queries, {len(CROSS_KEYS)} keys)",
            cross,
            CROSS_KEYS,
        ),
    ]


#: Words the tokens of the cases drawn at grading time come from.
_WORDS = (
    "a", "bird", "sings", "at", "dawn", "every", "day", "the", "river", "runs", "fast", "and",
    "cold", "we", "read", "old", "maps", "by", "lamp", "light", ".",
)  # fmt: skip


def hub_fresh(rng) -> list[tuple[str, np.ndarray, tuple[str, ...]]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): self-attention over 3 to 6
    tokens and cross-attention with more keys than queries, in turn, the weights the softmax
    of random small scores, each with a hub that leads by a clear margin. A case is kept when
    some known mistake that no kept case tells apart from the hub picks another token on it,
    until every mistake is told apart (or 300 have been drawn; the shipped cases tell them
    all apart anyway)."""
    cases, left = [], list(_hub_mistakes())
    for draw in range(300):
        n = int(rng.integers(3, 7))
        n_q, n_k = (n, n) if draw % 2 == 0 else (n - 1, n + 2)
        tokens = tuple(str(t) for t in rng.choice(_WORDS, size=n_k, replace=False))
        w = attnlab.softmax(rng.integers(0, 5, size=(n_q, n_k)).astype(float))  # (n_q, n_k)
        if not _clear_hub(w):
            continue
        hub = int(np.argmax(column_mass(w)))
        told = [m for m in left if hub not in _picks(m[0](w), m[1])]
        if told or not cases:
            kind = "self-attention" if n_q == n_k else f"cross-attention: {n_q} queries"
            cases.append((f'"{_spelled(tokens)}" ({kind}, drawn at random)', w, tokens))
            left = [m for m in left if m not in told]
        if not left:
            break
    return cases


def _clear_hub(w) -> bool:
    """The largest column sum leads the next by more than 0.01."""
    totals = np.sort(column_mass(w))
    return bool(totals[-1] - totals[-2] > 0.01)


_FOCUSED_ROW = (
    "That is the query whose row is most focused (the largest single weight, or the lowest "
    "entropy). A row says what one query reads; the hub is the key that receives the most, "
    "the largest column sum."
)


def _hub_mistakes() -> list[tuple[object, object, str]]:
    """(values a known mistake ranks, np.argmax or np.argmin, what to say about it).

    The values are indexed like the tokens the mistake would return (keys, or query
    positions for the row-based mistakes). Row sums are all 1, so they are matched on the
    first position only (what np.argmax returns on a tie), not on every tied one: that
    would match almost any answer.
    """
    return [
        (
            lambda w: w.sum(axis=0),
            np.argmin,
            "That is the key that receives the *least* "
            "attention: take the largest column sum (np.argmax), not the smallest.",
        ),
        (
            _column_sum_without_diagonal,
            np.argmax,
            "That is the key that collects the most "
            "from the *other* tokens: you left out the diagonal. What a token gives itself is "
            "attention it receives too, so the hub is the largest whole column sum.",
        ),
        (
            lambda w: w[0],
            np.argmax,
            "That is the key the first query reads most. A hub is "
            "read by many queries: add up each key's column over all the queries first.",
        ),
        (
            lambda w: w[-1],
            np.argmax,
            "That is the key the last query reads most. A hub is "
            "read by many queries: add up each key's column over all the queries first.",
        ),
        (
            lambda w: w.max(axis=0),
            np.argmax,
            "That is the key of the single largest weight in "
            "the matrix. A hub wins on the *total* it receives from all the queries: sum each "
            "column, then take the largest.",
        ),
        (
            lambda w: np.diagonal(w),
            np.argmax,
            "That is the token that reads itself most (the "
            "largest weight on the diagonal, W[i, i]). The hub is the key whose whole column "
            "adds up to the most.",
        ),
        (lambda w: w.max(axis=1), np.argmax, _FOCUSED_ROW),
        (lambda w: attnlab.entropy(w), np.argmin, _FOCUSED_ROW),
        (
            lambda w: np.bincount(np.argmax(w, axis=1), minlength=w.shape[1]),
            np.argmax,
            "That is the key that most queries read most (the most frequent row argmax). A "
            "hub is measured by the total weight it receives: a key that is everybody's "
            "second choice can collect more than one that is a few queries' first. Sum each "
            "column and take the largest.",
        ),
        (
            lambda w: w.sum(axis=0)[: len(w)],
            np.argmax,
            "It looks like you only looked at the "
            "first len(weights) keys. len(weights) counts the queries (rows); there is one key "
            "per token, weights.shape[1] = len(tokens) of them.",
        ),
        (
            lambda w: np.round(w.sum(axis=1), 9),
            np.argmax,
            "It looks like you added up the "
            "rows. Every row "
            "of weights sums to 1, so row sums cannot tell the tokens apart — and a row is what "
            "one query reads. What a key receives is its column: sum over the queries, axis=0.",
        ),
    ]


def _column_sum_without_diagonal(w):
    """Column sums minus W[i, i] (for a non-square matrix, minus the entries W[i, i] there are)."""
    diagonal = np.zeros(w.shape[1])  # (n_k,)
    n = min(w.shape)
    diagonal[:n] = np.diagonal(w)
    return w.sum(axis=0) - diagonal


def _picks(values, extreme) -> set[int]:
    """Every index whose value ties (to rounding) with the largest or smallest one."""
    best = values[extreme(values)]
    if np.all(values == best):  # a complete tie (row sums): np.argmax would return 0
        return {0}
    return {int(i) for i in np.flatnonzero(np.isclose(values, best, rtol=1e-9, atol=1e-12))}


def _as_token(got, tokens, what) -> str | int:
    """The learner's answer as a token (str) or an index (int); Wrong for anything else."""
    if isinstance(got, str):
        return got
    if isinstance(got, numbers.Integral) and not isinstance(got, bool):
        return int(got)
    try:
        array = np.asarray(got) if isinstance(got, (list, tuple, np.ndarray)) else None
    except ValueError:  # a ragged list or tuple
        array = None
    if array is not None and array.shape == (len(tokens),) and array.dtype.kind in "fiu":
        raise Wrong(
            f"{what} should be one token (a str from tokens), but yours gave one "
            f"number per key, {short(array)}. Those totals are the right start: now "
            "return the token whose total is the largest."
        )
    raise Wrong(f"{what} should be one token, a str from tokens; yours gave {short(got)}.")


def _answers_on_every_case(answer, cases) -> list[str | None]:
    """The learner's token for every case (an index becomes its token; None on failure)."""
    answers = []
    for _, w, tokens in cases:
        try:
            got, _ = call_watching(answer, w.copy(), tokens)
            token = _as_token(got, tokens, "answer")
        except (Wrong, NotAttempted):
            answers.append(None)
            continue
        if isinstance(token, int):
            token = tokens[token] if -len(tokens) <= token < len(tokens) else None
        answers.append(token)
    return answers


def _hub_mistake(answer, cases) -> str:
    """What a known mistake explains the learner's tokens on *every* case, or ''."""
    answers = _answers_on_every_case(answer, cases)
    answered = [i for i, token in enumerate(answers) if token is not None]
    if len(answered) < 2:  # too little to tell one mistake from another
        return ""
    for rank, extreme, reason in _hub_mistakes():
        picked = [
            {tokens[i] for i in _picks(rank(w), extreme) if i < len(tokens)}
            for _, w, tokens in cases
        ]
        if all(answers[i] in picked[i] for i in answered):  # cases where the answer failed
            return reason  # (e.g. np.diag of a non-square matrix) say nothing either way
    return ""


def _hub_what(case) -> str:
    return f"hub_key(weights, tokens) for {case[0]}"


def _hub_failed(exc, case) -> str:
    """The call that failed; an IndexError says how rows, columns and tokens are counted."""
    _, w, tokens = case
    note = ""
    if isinstance(exc.__cause__, IndexError) and w.shape[0] != w.shape[1]:
        note = (
            f"\nHere queries and keys differ: weights has shape {w.shape}, "
            f"{w.shape[0]} queries (rows) and {w.shape[1]} keys (columns), and "
            f"tokens names the {len(tokens)} keys. Rows go up to "
            f"len(weights) = {w.shape[0]}, columns up to len(tokens) = "
            f"{len(tokens)}."
        )
    elif isinstance(exc.__cause__, IndexError):
        note = (
            f"\ntokens has {len(tokens)} entries, one per key (column) of weights. "
            "np.argmax without an axis numbers the cells of the whole flattened "
            f"matrix, 0 to {w.size - 1}: sum the columns first, then take the "
            "argmax of those totals."
        )
    return f"{_hub_what(case)} failed. {exc}{note}"


def _judge_hub_key(answer, got, case, messages) -> None:
    """``got`` must be the token of the largest column sum of the weights of ``case``; a
    known mistake is named only when it explains ``answer`` on every case."""
    what, (_, w, tokens) = _hub_what(case), case
    index = int(np.argmax(column_mass(w)))
    expected = tokens[index]
    token = _as_token(got, tokens, what)
    if isinstance(token, int):
        if token == index:
            raise Wrong(
                f"{what} returned {token}, the position of the hub key. Return "
                f"the token itself, tokens[{token}] = {expected!r}."
            )
        shown = (
            f"{token} (the position of {tokens[token]!r})"
            if -len(tokens) <= token < len(tokens)
            else f"{token}"
        )
        reason = _hub_mistake(answer, hub_cases())
        raise Wrong(
            f"{what} should be the token {expected!r}, but yours gave the number "
            f"{shown}: return a token from tokens, not a position. {reason}".rstrip()
        )
    if token == expected:
        return
    if token not in tokens:
        raise Wrong(
            f"{what} should be {expected!r}, but yours gave {token!r}, which is "
            f"not one of the tokens {tokens}."
        )
    reason = _hub_mistake(answer, hub_cases()) or (
        "Add up each column (the weight each key receives from all the queries) and "
        "return the token of the largest total."
    )
    raise Wrong(f"{what} should be {expected!r}, but yours gave {token!r}. {reason}")


hub_key = Exercise(
    "Exercise 4.3 (the hub key)",
    Cases(hub_cases, _judge_hub_key, failed=_hub_failed, with_answer=True, fresh=hub_fresh),
    hints=[
        "A row is what one query reads; a column is what one key receives. To find the key "
        "that everybody reads, which do you add up — rows or columns?",
        "`weights.sum(axis=0)` adds up each column over all the queries: one total per key, "
        "shape (n_k,). `np.argmax` gives the position of the largest total, and `tokens` "
        "(one per key, in column order) turns that position into a token.",
        "Add up each column (`axis=0` is the query axis), find the position of the largest "
        "total with `np.argmax`, and use that position to pick from `tokens`.",
    ],
    forbidden=("attnlab.patterns.column_mass", "attnlab.patterns.strongest_links", "patterns"),
    id="4.3",
    attr="hub_key",
    points=1,
)
