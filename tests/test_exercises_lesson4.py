"""Lesson 4 checks: each rejects known-wrong answers with a helpful reason, accepts right ones."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import worked_answers as W
from answer_tables import Answers, accept_reject, assert_hints_climb, judged

import attnlab
from attnlab import patterns
from attnlab.exercises import Outcome
from attnlab.exercises import lesson4 as L
from attnlab.exercises.keys import load_key
from attnlab.patterns import PATTERNS, TITLES, pattern_example


# ---------------------------------------------------------------- 4.1 entropy of each row
def entropy_loop(weights):
    out = []
    for row in weights:
        out.append(-sum(p * math.log(p) for p in row if p > 0))
    return out


def entropy_log_with_out(weights):
    logs = np.log(weights, out=np.zeros_like(weights), where=weights > 0)
    return -(weights * logs).sum(axis=-1)


def entropy_masked(weights):
    return -(weights * np.ma.log(weights)).sum(axis=1).filled(0.0)


def entropy_clipped(weights):
    return -np.sum(weights * np.log(np.clip(weights, 1e-300, None)), axis=1)


def entropy_silenced(weights):
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = weights * np.log(weights)
    return -np.nansum(terms, axis=1)


def naive_entropy(weights):
    return -np.sum(weights * np.log(weights), axis=1)


def where_both_branches(weights):
    return -np.where(weights > 0, weights * np.log(weights), 0.0).sum(axis=1)


def nansum_entropy(weights):
    return -np.nansum(weights * np.log(weights), axis=1)


def math_log_loop(weights):
    return [-sum(p * math.log(p) for p in row) for row in weights]


def safe_log(weights):
    return np.log(np.where(weights > 0, weights, 1.0))


def entropy_float32(weights):
    w = weights.astype(np.float32)  # the whole computation in float32
    return -np.sum(w * np.log(np.where(w > 0, w, np.float32(1.0))), axis=1)


ENTROPY_CORRECT = [
    W.solution_row_entropy,
    entropy_loop,
    entropy_log_with_out,
    entropy_masked,
    entropy_clipped,
    entropy_silenced,
    entropy_float32,
]
ENTROPY_WRONG = {
    "calls attnlab.entropy": (attnlab.entropy, "asks you not to use"),
    "log of zero": (naive_entropy, "0·log 0 = 0"),
    "np.where evaluates both branches": (where_both_branches, "must not warn"),
    "nansum warns": (nansum_entropy, "divide by zero encountered in log"),
    "math.log(0)": (math_log_loop, "math.log(0) fails"),
    "bits": (lambda w: -np.sum(w * np.log2(np.where(w > 0, w, 1)), axis=1), "bits"),
    "log base 10": (lambda w: -np.sum(w * np.log10(np.where(w > 0, w, 1)), axis=1), "base 10"),
    "columns": (lambda w: -np.sum(w * safe_log(w), axis=0), "columns"),
    "no minus sign": (lambda w: np.sum(w * safe_log(w), axis=1), "minus sign"),
    "normalised": (
        lambda w: -np.sum(w * safe_log(w), axis=1) / np.log(w.shape[1]),
        "normalised entropy",
    ),
    "whole matrix": (lambda w: -np.sum(w * safe_log(w)), "one number for the whole matrix"),
    "mean of the rows": (lambda w: -np.sum(w * safe_log(w), axis=1).mean(), "one number"),
    "keepdims": (lambda w: -np.sum(w * safe_log(w), axis=1, keepdims=True), "keepdims=True"),
    "terms not added up": (lambda w: -w * safe_log(w), "add the terms"),
    "no weighting by p": (lambda w: -np.sum(safe_log(w), axis=1), "without weighting"),
    "mean instead of sum": (lambda w: -np.mean(w * safe_log(w), axis=1), "mean of the terms"),
    "log n for every row": (lambda w: np.full(len(w), np.log(w.shape[1])), "largest entropy"),
    "exp of entropy": (lambda w: np.exp(-np.sum(w * safe_log(w), axis=1)), "exp(H)"),
    "squares instead of logs": (lambda w: 1 - np.sum(w**2, axis=1), "H = -Σ_j"),
    "mutates input": (lambda w: -np.sum(np.multiply(w, safe_log(w), out=w), axis=1), "changed"),
    "off by 1e-5, invisible in 4 digits": (
        lambda w: W.solution_row_entropy(w) + 1e-5,
        "They agree to the digits shown, but differ by up to 1e-05",
    ),
    "one row off by 2e-5": (
        lambda w: W.solution_row_entropy(w) + 2e-5 * (np.arange(len(w)) == 0),
        "differ by up to 2e-05",
    ),
}


def test_columns_on_a_square_matrix_are_named_by_their_values():
    """Some square case has column entropies that differ from the row entropies."""
    columns = ENTROPY_WRONG["columns"][0]
    square = [(what, w) for what, w in L.entropy_cases() if w.shape[0] == w.shape[1]]
    first = next(what for what, w in square if not np.allclose(columns(w), attnlab.entropy(w)))
    message = judged(L.row_entropy, columns).message
    assert first in message and "entropies of the columns" in message


def test_columns_change_the_shape_on_the_non_square_case():
    """The (2, 5) case catches the wrong axis even when the square ones cannot."""

    def columns_only_when_wide(w):
        terms = -w * safe_log(w)
        return terms.sum(axis=0) if w.shape[0] != w.shape[1] else terms.sum(axis=1)

    message = judged(L.row_entropy, columns_only_when_wide).message
    assert "one number per key" in message and "axis=0" in message


def test_only_the_one_hot_case_exposes_the_log_of_zero():
    """The pattern examples hold no exact zero; the naive formula is right on them."""
    for _, w in L.entropy_cases()[: len(PATTERNS)]:
        assert np.all(w > 0)
        np.testing.assert_allclose(naive_entropy(w), attnlab.entropy(w))
    message = judged(L.row_entropy, naive_entropy).message
    assert "one-hot" in message and "encountered" in message


def test_entropy_cases_include_a_one_hot_row_a_uniform_row_and_a_wide_matrix():
    cases = [w for _, w in L.entropy_cases()]
    h = np.concatenate([attnlab.entropy(w) for w in cases])
    assert np.any(h == 0.0)
    assert any(np.isclose(attnlab.entropy(w), np.log(w.shape[1])).any() for w in cases)
    assert any(w.shape[0] != w.shape[1] for w in cases)


# ---------------------------------------------------------------- 4.2 name the patterns
# The key is answer_keys/lesson4.py, beside the package in this repository (not in the wheel).
QUIZ = load_key("lesson4").ORDER
RIGHT_NAMES = dict(QUIZ)
TITLE_NAMES = {letter: TITLES[name] for letter, name in QUIZ.items()}
_SAID = {
    "hub": "Hub Column",
    "diagonal": "diagonal-dominance",
    "link": "off-diagonal link(s)",
    "uniform": "Uniform rows",
}
SYNONYM_NAMES = {letter: _SAID[name] for letter, name in QUIZ.items()}
PATTERN_SUFFIX = {letter: f"the {name} pattern" for letter, name in QUIZ.items()}
_LOWER = {"hub": "hub", "diagonal": "self", "link": "links", "uniform": "spread"}
LOWER_KEYS = {
    f" {letter.lower()}" if letter < "C" else f"{letter.lower()} ": _LOWER[name]
    for letter, name in QUIZ.items()
}

NAMES_CORRECT = {
    "pattern names": RIGHT_NAMES,
    "titles": TITLE_NAMES,
    "synonyms, mixed case": SYNONYM_NAMES,
    "lower-case letters": LOWER_KEYS,
    "with the word pattern": PATTERN_SUFFIX,
    "a function returning the dict": lambda: dict(RIGHT_NAMES),
    "reference": W.solution_name_the_patterns,
}


def with_(**changes):
    return {**RIGHT_NAMES, **changes}


def swapped(a, b):
    return with_(**{a: QUIZ[b], b: QUIZ[a]})


NAMES_WRONG = {
    "two letters swapped": (swapped("A", "C"), "2 of 4 right so far; not yet right: A, C."),
    "everything shifted": (
        dict(zip("ABCD", ["diagonal", "link", "uniform", "hub"], strict=True)),
        "0 of 4 right so far; not yet right: A, B, C, D.",
    ),
    "one letter missing": ({k: v for k, v in RIGHT_NAMES.items() if k != "D"}, "not named D"),
    "a blank letter": (with_(B="  "), "not named B"),
    "an extra letter": ({**RIGHT_NAMES, "E": "hub"}, "there is no heatmap 'E'"),
    "a list": (list(RIGHT_NAMES.values()), "does not say which letter"),
    "a string": ("ABCD", "should be a dict"),
    "the same name twice": (with_(C="hub"), "the same pattern, 'hub'"),
    "an unknown word": (with_(D="blob"), "'blob' (for D) is not one of the four patterns"),
    "a number for a name": (with_(A=3), "is not one of the four patterns"),
    "names and letters swapped": ({v: k for k, v in RIGHT_NAMES.items()}, "Swap them"),
    "a letter given twice": ({**RIGHT_NAMES, "a": QUIZ["A"]}, "names heatmap A twice"),
    "a function returning a list": (lambda: ["hub"], "should be a dict"),
}


def _stands_out(ex) -> str:
    """The pattern a quiz heatmap shows, read from the lesson's measures alone."""
    w = ex.weights
    n = len(ex.tokens)
    if np.allclose(patterns.effective_keys(w), n):
        return "uniform"
    if patterns.column_mass(w).max() > n / 2:
        return "hub"
    if patterns.diagonal_mass(w) > 0.5:
        return "diagonal"
    query, key, _ = patterns.strongest_links(w, 1)[0]
    assert query != key
    return "link"


def test_each_quiz_heatmap_shows_the_pattern_its_key_names():
    examples = L.quiz_examples()
    assert list(examples) == list(L.LETTERS) == ["A", "B", "C", "D"]
    assert {letter: _stands_out(ex) for letter, ex in examples.items()} == QUIZ


def test_no_quiz_heatmap_is_one_of_the_lessons_labelled_examples():
    """The lesson shows each pattern on a labelled example: matching a quiz heatmap with one
    of those (by its tokens or its weights) must not be a way round reading it."""
    for ex in L.quiz_examples().values():
        for name in PATTERNS:
            labelled = pattern_example(name)
            assert not set(ex.tokens) & set(labelled.tokens), (ex.tokens, name)
            assert ex.weights.shape != labelled.weights.shape or not np.allclose(
                ex.weights, labelled.weights
            )


def test_the_package_does_not_know_which_pattern_is_which_letter():
    """Only the key beside the package names the letters' patterns."""
    import inspect

    source = inspect.getsource(L)
    pairs = [f'"{letter}": "{name}"' for letter, name in QUIZ.items()]
    assert not any(pair in source for pair in pairs)
    assert not hasattr(L, "QUIZ")


def test_the_quiz_is_shuffled_and_uses_every_pattern_once():
    assert sorted(QUIZ.values()) == sorted(PATTERNS)
    assert all(a != b for a, b in zip(QUIZ.values(), PATTERNS, strict=True))


def test_the_solution_is_the_quiz():
    assert W.solution_name_the_patterns() == QUIZ


@pytest.mark.parametrize("name", PATTERNS)
def test_every_name_and_title_is_understood(name):
    for word in (name, TITLES[name], name.upper(), f"  {TITLES[name].title()}  "):
        assert L.pattern_named(word) == name, word


def test_unknown_words_are_not_understood():
    for word in ("blob", "", "column", "row", "a", 3, None):
        assert L.pattern_named(word) is None, word


@pytest.mark.parametrize("letter", sorted(QUIZ))
def test_a_wrong_letter_gets_a_reading_cue_that_does_not_give_the_name_away(letter):
    other = next(x for x in sorted(QUIZ) if x != letter)
    message = judged(L.name_the_patterns, swapped(letter, other)).message
    line = next(line for line in message.splitlines() if line.startswith(f"✗ {letter} "))
    cue = line.split("): ", 1)[1]
    name = QUIZ[letter]
    words = {name, TITLES[name], *L._SYNONYMS[name]}
    assert not [w for w in words if L._normalised(w) in L._normalised(cue)], cue
    assert f"✗ {other} " in message and "\n" in message


def test_right_letters_are_acknowledged_and_wrong_ones_not_revealed():
    message = judged(L.name_the_patterns, swapped("B", "D")).message
    assert "2 of 4 right so far; not yet right: B, D." in message
    assert "✓ right: A, C." in message
    cues = re.sub(r"\(you said '\w+'\)", "", message.split("yet right: B, D.")[1])
    assert QUIZ["B"] not in cues and QUIZ["D"] not in cues
    assert judged(L.name_the_patterns, swapped("B", "D")).score == 0.5


@pytest.mark.parametrize(
    "answer", [dict.fromkeys("ABCD"), dict.fromkeys("ABCD", ...), dict.fromkeys("ABCD", "")]
)
def test_a_dict_of_placeholders_is_not_attempted(answer):
    assert judged(L.name_the_patterns, answer).outcome is Outcome.NOT_ATTEMPTED


def _no_key(monkeypatch, tmp_path):
    """A graded course run: the package without answer_keys/ beside it."""
    (tmp_path / "keys").mkdir()
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(tmp_path / "keys"))


def test_without_the_key_every_ordering_is_only_recorded(monkeypatch, tmp_path):
    """In a graded course run no answer is told right or wrong before submission: each of the
    24 orderings gets the same word, so trying them all finds nothing."""
    import itertools

    _no_key(monkeypatch, tmp_path)
    seen = set()
    for names in itertools.permutations(PATTERNS):
        feedback = judged(L.name_the_patterns, dict(zip("ABCD", names, strict=True)))
        assert feedback.outcome is Outcome.RECORDED, feedback.message
        seen.add(feedback.message)
    assert len(seen) == 1


@pytest.mark.parametrize("case", ["the same name twice", "an unknown word", "one letter missing"])
def test_without_the_key_a_malformed_answer_is_still_told(monkeypatch, tmp_path, case):
    _no_key(monkeypatch, tmp_path)
    answer, expected = NAMES_WRONG[case]
    feedback = judged(L.name_the_patterns, answer)
    assert feedback.outcome is Outcome.WRONG and expected in feedback.message


# ---------------------------------------------------------------- 4.3 the hub key
def hub_loop(weights, tokens):
    best, best_total = None, -1.0
    for j, token in enumerate(tokens):
        total = sum(row[j] for row in weights)
        if total > best_total:
            best, best_total = token, total
    return best


def hub_by_mean(weights, tokens):
    return tokens[int(np.argmax(weights.mean(axis=0)))]


def hub_sorted(weights, tokens):
    return max(zip(weights.sum(axis=0), tokens, strict=True))[1]


def hub_numpy_str(weights, tokens):
    return np.array(tokens)[np.argmax(weights.T.sum(axis=1))]


def square_loops(weights, tokens):
    """Right for self-attention; on cross-attention it reads rows that do not exist."""
    n = len(tokens)
    totals = [sum(weights[i][j] for i in range(n)) for j in range(n)]
    return tokens[int(np.argmax(totals))]


HUB_CORRECT = [W.solution_hub_key, hub_loop, hub_by_mean, hub_sorted, hub_numpy_str]
HUB_WRONG = {
    "a ragged pair": (lambda w, tokens: (w.sum(axis=0), tokens), "should be one token"),
    "row sums": (lambda w, t: t[int(np.argmax(w.sum(axis=1)))], "added up the rows"),
    "row sums, loop": (lambda w, t: t[int(np.argmax([sum(r) for r in w]))], "added up the rows"),
    "first row": (lambda w, t: t[int(np.argmax(w[0]))], "first query"),
    "last row": (lambda w, t: t[int(np.argmax(w[-1]))], "last query"),
    "index": (lambda w, t: int(np.argmax(w.sum(axis=0))), "the position of the hub key"),
    "numpy index": (lambda w, t: np.argmax(w.sum(axis=0)), "Return the token itself"),
    "diagonal": (lambda w, t: t[int(np.argmax(np.diagonal(w)))], "reads itself most"),
    "most focused row": (lambda w, t: t[int(np.argmax(w.max(axis=1)))], "most focused"),
    "lowest entropy row": (lambda w, t: t[int(np.argmin(attnlab.entropy(w)))], "most focused"),
    "first len(weights) keys": (
        lambda w, t: t[int(np.argmax([w[:, j].sum() for j in range(len(w))]))],
        "first len(weights) keys",
    ),
    "square loops": (square_loops, "Rows go up to len(weights)"),
    "largest single weight": (
        lambda w, t: t[int(np.unravel_index(np.argmax(w), w.shape)[1])],
        "single largest weight",
    ),
    "least attention": (lambda w, t: t[int(np.argmin(w.sum(axis=0)))], "*least*"),
    "column sums": (lambda w, t: w.sum(axis=0), "one number per key"),
    "flat argmax": (lambda w, t: t[int(np.argmax(w))], "flattened"),
    "row-sum index": (lambda w, t: int(np.argmax(w.sum(axis=1))), "added up the rows"),
    "not a token": (lambda w, t: "hub", "not one of the tokens"),
    "always the last token": (lambda w, t: t[-1], "Add up each column"),
    "a list of one token": (lambda w, t: [t[int(np.argmax(w.sum(axis=0)))]], "one token, a str"),
    # Both were accepted (column minus diagonal) or told a generic reason (row argmax mode).
    "column sum minus the diagonal": (
        lambda w, t: t[int(np.argmax(w.sum(axis=0) - np.diag(w)))],
        "you left out the diagonal",
    ),
    "most frequent row argmax": (
        lambda w, t: t[int(np.argmax(np.bincount(w.argmax(axis=1), minlength=w.shape[1])))],
        "most frequent row argmax",
    ),
}


def test_the_cases_tell_every_known_mistake_from_the_right_answer():
    cases = L.hub_cases()
    right_tokens = [W.solution_hub_key(w, t) for _, w, t in cases]
    for rank, extreme, reason in L._hub_mistakes():
        picked = [{t[i] for i in L._picks(rank(w), extreme) if i < len(t)} for _, w, t in cases]
        assert any(r not in p for r, p in zip(right_tokens, picked, strict=True)), reason


def test_every_known_mistake_can_be_told_from_the_others():
    """On some case two different explanations pick different tokens (row sums, which any
    query position could give, are tried last and are exempt)."""
    cases = L.hub_cases()
    picks = [
        (reason, [{t[i] for i in L._picks(rank(w), extreme) if i < len(t)} for _, w, t in cases])
        for rank, extreme, reason in L._hub_mistakes()[:-1]
    ]
    for i, (reason_a, a) in enumerate(picks):
        for reason_b, b in picks[i + 1 :]:
            if reason_a != reason_b:
                assert any(not x & y for x, y in zip(a, b, strict=True)), (reason_a, reason_b)


def test_the_hub_is_clear_in_every_case():
    for _, w, tokens in L.hub_cases():
        received = np.sort(w.sum(axis=0))
        assert received[-1] - received[-2] > 0.1
        assert len(tokens) == w.shape[1] and len(set(tokens)) == len(tokens)


def test_the_cross_attention_case_has_more_keys_than_queries():
    _, w, tokens = L.hub_cases()[-1]
    assert w.shape == (len(L.CROSS_QUERIES), len(L.CROSS_KEYS)) and w.shape[0] < w.shape[1]
    assert tokens == L.CROSS_KEYS
    assert tokens.index(W.solution_hub_key(w, tokens)) >= w.shape[0]


def test_the_cat_case_uses_the_scaled_scores_of_the_running_example():
    ex = attnlab.examples.cat_sat_down()
    q, k = ex.x @ ex.w_q, ex.x @ ex.w_k
    _, w, tokens = L.hub_cases()[1]
    np.testing.assert_allclose(w, attnlab.softmax(attnlab.attention_scores(q, k)))
    assert tokens == ex.tokens


def test_an_index_error_on_cross_attention_comes_with_a_note_about_keys():
    message = judged(L.hub_key, square_loops).message
    assert "cross-attention" in message and "IndexError" in message
    assert f"tokens names the {len(L.CROSS_KEYS)} keys" in message


# ------------------------------------------------------------------ every table above
# The feedback to a wrong entropy or hub answer begins with the call that failed.
test_accepts, test_rejects = accept_reject(
    Answers(L.row_entropy, ENTROPY_CORRECT, ENTROPY_WRONG, call="row_entropy(weights) for "),
    Answers(L.name_the_patterns, NAMES_CORRECT, NAMES_WRONG),
    Answers(L.hub_key, HUB_CORRECT, HUB_WRONG, call="hub_key(weights, tokens) for "),
)


@pytest.mark.parametrize(
    "exercise", [L.row_entropy, L.name_the_patterns, L.hub_key], ids=lambda e: e.title
)
def test_hints_go_from_a_nudge_to_nearly_the_code(exercise):
    assert_hints_climb(exercise)
    assert "`" in exercise.hints[-1]


def test_solutions_show_their_source():
    assert "np.where(weights > 0" in L.row_entropy.solution().markdown
    assert "weights.sum(axis=0)" in L.hub_key.solution().markdown
    assert '"A": "link"' in L.name_the_patterns.solution().markdown


def test_the_last_hint_of_4_2_names_only_what_the_notebook_imported():
    """Every function the hint tells the learner to call exists after the setup cell."""
    from source_answers import _import_cell

    namespace: dict = {}
    exec(_import_cell("lesson4"), namespace)  # noqa: S102 - the lesson's own setup cell
    named = re.findall(r"`([\w.]+)\(", L.name_the_patterns.hints[-1])
    assert len(named) >= 4, named
    for dotted in named:
        head, *rest = dotted.split(".")
        target = namespace[head]
        for attr in rest:
            target = getattr(target, attr)
        assert callable(target), dotted
