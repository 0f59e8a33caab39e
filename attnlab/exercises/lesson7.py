r"""Lesson 7 — test your understanding: a checked quiz in two parts and three bug hunts.

* :data:`quiz_a` (7.1) and :data:`quiz_b` (7.2): the questions of :data:`QUESTIONS_A` (lessons
  1–3: scores, scaling, softmax) and :data:`QUESTIONS_B` (lessons 4–6: heatmaps, values, the
  full formula and masks). A learner answers several at once, as a dict from question to
  answer (a letter for a multiple-choice question, a number otherwise), and the check says,
  question by question, which are right, which are not yet (with a reason that does not give
  the answer away) and which are still unanswered. Every number in a question is computed
  here from :mod:`attnlab` and its running examples; the judging, scoring and recording are
  the quiz engine's (:mod:`attnlab.exercises.quiz`), the answers are in ``answer_keys/lesson7.py``.
* Three bug hunts, each a bug class that has shipped in published attention code. The learner
  reads the buggy function (``buggy_*``, shown in the notebook), finds the bug and writes the
  fixed function; the check runs it on inputs chosen to expose the bug:

  - :data:`scale_bug` (7.3): ``multi_head_attention(x, w_q, w_k, w_v, n_heads)`` divides
    by √d_model instead of √d_head, the size of one head;
  - :data:`mask_bug` (7.4): ``causal_attention(q, k, v)`` zeroes the future weights after
    the softmax instead of masking the scores before it;
  - :data:`shift_bug` (7.5): ``stable_attention(q, k, v)`` exponentiates the scores without
    subtracting each row's max, and overflows to NaN in float16 and float32.

* :data:`expose_bug` (7.6) turns the roles round: the learner writes ``exposing_input()``,
  returning scores and a mask on which :func:`patched_masked_softmax` (softmax, zero the
  masked weights, renormalise: right with exact numbers) and a correct masked softmax differ.
  The check runs both on that input and says what each gave.

Results are compared with a float64 reference to the precision they were computed in, and a
reason shows as many digits as it takes for the two numbers to differ
(:mod:`attnlab.exercises.kit.precision`).

References come from :func:`attnlab.scaled_dot_product_attention`; known mistakes are
recognised by recomputing them on the same input. Each bug hunt's check is a
:class:`~attnlab.exercises.kit.cases.Cases`: its ``<exercise>_cases()`` and a ``_judge_<exercise>``
holding the reference, the known mistakes and the diagnosis; the kit runs the answer.

Examples
--------
>>> feedback = quiz_a.check({"A1": "b", "A4": 64})  # in a clone of the course repository
>>> print(feedback.message.splitlines()[0])
1 of 11 right so far; not yet right: A1; not answered yet: A2, A3, A5, A6, A7, A8, A9, A10, A11.
>>> round(feedback.score, 3)  # one question of 11: its share of the points
0.091
>>> [q.key for q in QUESTIONS_A.questions][:3], len(QUESTIONS_B.questions)
(['A1', 'A2', 'A3'], 12)
>>> print(QUESTIONS_A.by_key["A4"].markdown().split(").")[0])
**A4** · *the variance of q·k*, from lesson 2, [Why divide by √d_k](02-why-scale.ipynb
>>> "√d_model" in scale_bug.check(buggy_multi_head_attention).message
True
>>> bool(shift_bug.check(buggy_stable_attention))
False
>>> bool(expose_bug.check(lambda: ([[0.0, 1.0]], [[True, False]])))  # they agree there
False
"""

from __future__ import annotations

import inspect
import math
import textwrap

import numpy as np

import attnlab
from attnlab.examples import (
    COLLAPSE_ROW,
    SCORE_ROW,
    cat_sat_down,
    cat_sat_down_wide,
    dog_bites_man,
    query_and_keys_2d,
)
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import one_line, short
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.feedback import Text
from attnlab.exercises.kit.judging import quietly
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import compare, tolerance
from attnlab.exercises.quiz import Question, Questions
from attnlab.patterns import column_mass, pattern_example

__all__ = [
    "QUESTIONS_A",
    "QUESTIONS_B",
    "buggy_causal_attention",
    "buggy_multi_head_attention",
    "buggy_stable_attention",
    "expose_bug",
    "expose_cases",
    "listing",
    "mask_bug",
    "mask_cases",
    "patched_masked_softmax",
    "quiz_a",
    "quiz_b",
    "scale_bug",
    "scale_cases",
    "shift_bug",
    "shift_cases",
]


def listing(function) -> Text:
    """The source of ``function`` as a Markdown code block (how the notebook shows a bug).

    Examples
    --------
    >>> listing(listing).markdown.splitlines()[:2]
    ['```python', 'def listing(function) -> Text:']
    """
    return Text(f"```python\n{textwrap.dedent(inspect.getsource(function))}```")


# ================================================================= the quiz (engine: quiz.py)
# ---------------------------------------------------------------- part A: lessons 1-3
def _questions_a() -> tuple[list[Question], dict]:
    tokens_q, tokens_k, d_model, d_k = 5, 7, 16, 4
    dog = dog_bites_man()
    qi, kj = dog.tokens.index("bites"), dog.tokens.index("dog")
    q, k = dog.q[qi], dog.k[kj]  # (d_k,) each
    d = q.size
    geometry = np.array([[0.0, 5.0], [-0.5, 0.1], [0.2, -0.1], [-2.0, 3.0]])  # (4, 2) keys
    d_var = 64
    d_power, power = 256, 0.25  # dividing by d_k^(1/4) instead of d_k^(1/2)
    collapsed = attnlab.softmax(COLLAPSE_ROW * 100)  # (3,)
    jac = attnlab.softmax_jacobian(collapsed)  # (3, 3)
    jac_plain = attnlab.softmax_jacobian(attnlab.softmax(COLLAPSE_ROW))  # (3, 3)
    plain = SCORE_ROW / SCORE_ROW.sum()  # (4,) what dividing by the sum gives
    limits = {t: math.log(float(np.finfo(t).max)) for t in (np.float16, np.float32, np.float64)}
    n_equal = 1000  # a row of equal scores whose naive softmax is asked about in float32
    far = np.array([0.0, -800.0])
    with np.errstate(divide="ignore", under="ignore"):
        naive_log = float(np.log(attnlab.softmax(far))[1])  # -inf: the softmax underflowed
    qs = [
        Question(
            "A1",
            1,
            "the score matrix",
            f"Queries come from one sentence and keys from another: Q = X W_Q with X of shape "
            f"({tokens_q}, {d_model}) ({tokens_q} tokens) and W_Q of shape ({d_model}, {d_k}); "
            f"K = Y W_K with Y of shape ({tokens_k}, {d_model}) and W_K of shape ({d_model}, "
            f"{d_k}). How many numbers does Q Kᵀ hold?",
            tolerance=0.5,
        ),
        Question(
            "A2",
            1,
            "one scaled score",
            f'In "{" ".join(dog.tokens)}", query "{dog.tokens[qi]}" is q = {short(q)} and key '
            f'"{dog.tokens[kj]}" is k = {short(k)} (d_k = {d}). What is their **scaled** '
            "score q·k / √d_k?",
            tolerance=1e-3,
        ),
        Question(
            "A3",
            1,
            "length and angle in a score",
            "A query q = [1, 0] meets four keys. Which key gets the **lowest** score?",
            options=tuple(zip("abcd", (f"k = {short(g)}" for g in geometry), strict=True)),
        ),
        Question(
            "A4",
            2,
            "the variance of q·k",
            f"q and k each have d_k = {d_var} entries, independent, with mean 0 and variance "
            "1. What is the variance of q·k?",
            tolerance=1e-6,
        ),
        Question(
            "A5",
            2,
            "scaling by the wrong power",
            f"Same setting with d_k = {d_power}, but the code divides q·k by d_k^(1/4) = "
            f"{d_power**power:g} instead of √d_k. What is the variance of the scaled scores?",
            tolerance=1e-6,
        ),
        Question(
            "A6",
            2,
            "a collapsed softmax and its gradient",
            f"p = softmax({short(COLLAPSE_ROW)} × 100) has largest weight {collapsed.max():.6f}"
            ": it has collapsed. What does its Jacobian diag(p) − p pᵀ look like?",
            options=(
                ("a", "close to the identity matrix: the gradient passes unchanged"),
                ("b", "large on the winning key, small elsewhere"),
                ("c", "almost all zeros: almost no gradient reaches the scores"),
                (
                    "d",
                    f"the same as for softmax({short(COLLAPSE_ROW)}): multiplying "
                    "every score by the same number changes nothing",
                ),
            ),
        ),
        Question(
            "A7",
            3,
            "why exponentiate",
            f"Dividing the scores {short(SCORE_ROW)} by their sum gives {short(plain)}. "
            "Why doesn't attention make its weights that way?",
            options=(
                (
                    "a",
                    "a negative score gives a negative weight, and scores that add "
                    "up to 0 cannot be divided at all",
                ),
                (
                    "b",
                    "it gives the same weights as softmax; exponentiating only guards "
                    "against overflow",
                ),
                ("c", "the weights would not add up to 1"),
                ("d", "it would change which key has the largest score"),
            ),
        ),
        Question(
            "A8",
            3,
            "softmax by hand",
            f"What is the softmax weight of the **third** key for the scores "
            f"{short(SCORE_ROW)}? Give 3 decimals.",
            tolerance=2e-3,
        ),
        Question(
            "A9",
            3,
            "temperature",
            "Divide those scores by a temperature T = 5 before the softmax. The weights become",
            options=(
                ("a", "sharper, with a lower entropy"),
                ("b", "flatter, and the order of the keys can change"),
                ("c", "the same: softmax does not change when the scores change together"),
                ("d", "flatter, with a higher entropy, and the keys keep their order"),
            ),
        ),
        Question(
            "A10",
            3,
            "where a softmax without the max shift fails",
            f"In float32, exp(s) overflows to inf once s passes {limits[np.float32]:.2f}. A row "
            f"holds n = {n_equal} equal scores s, and a softmax **without** the max shift "
            "computes exp(s) / sum(exp(s)) in float32. Above which s does it stop returning "
            f"1/{n_equal} for every weight? Give 2 decimals.",
            tolerance=0.01,
        ),
        Question(
            "A11",
            3,
            "log-softmax",
            f"For x = {short(far)} in float64, np.log(softmax(x))[1] is {naive_log:g}. "
            "What is the exact-enough value, log_softmax(x)[1]? Give 2 decimals.",
            tolerance=0.01,
        ),
    ]
    # what the questions show, and nothing an answer is read off: the answers are worked out
    # in the key file (answer_keys/lesson7.py), outside the installed package
    return qs, {name: value for name, value in locals().items() if name != "qs"}


# ---------------------------------------------------------------- part B: lessons 4-6
def _questions_b() -> tuple[list[Question], dict]:
    cat = cat_sat_down()
    q, k, v = cat.x @ cat.w_q, cat.x @ cat.w_k, cat.x @ cat.w_v  # (4, 8) each
    _, cat_w = attnlab.scaled_dot_product_attention(q, k, v)  # (4, 4)
    busiest = float(column_mass(cat_w).max())
    link = pattern_example("link")
    shown = "\n".join(
        f"    {t:>7} {short(row.round(2))}"
        for t, row in zip(link.tokens, link.weights, strict=True)
    )
    two_d = query_and_keys_2d()
    w2 = attnlab.softmax(two_d.keys @ two_d.query)  # (3,)
    mean = two_d.values.mean(axis=0)  # (2,)
    points = {
        "a": np.array([2.0, 2.0]),
        "b": mean.round(2),
        "c": np.array([-1.5, 0.0]),
        "d": np.array([1.5, 1.5]),
    }
    x_two = np.array([[1.0, 0.0], [1.0, 2.0]])  # (2, 2) two tokens, differing in coordinate 2
    w_k2 = np.array([[0.0, 0.0], [0.0, 1.0]])  # (2, 2) keys see only coordinate 2
    w_v2 = np.array([[1.0, 0.0], [0.0, 0.0]])  # (2, 2) values drop coordinate 2
    q_two = np.array([0.0, 1.0])  # (2,)
    k_two, v_two = x_two @ w_k2, x_two @ w_v2  # (2, 2) each
    w_two = attnlab.softmax(k_two @ q_two)  # (2,) no scaling
    mixes = {"x": w_two @ x_two, "k": w_two @ k_two, "w": w_two, "v": w_two @ v_two}
    filter_options = dict(zip("abcd", ("x", "k", "w", "v"), strict=True))
    n_mask = 6
    with np.errstate(over="ignore"):
        fill16 = np.float16(-1e9)
    shapes = np.zeros((2, 8, 10, 8)) @ np.zeros((2, 8, 10, 8)).swapaxes(-1, -2)
    qs = [
        Question(
            "B1",
            4,
            "what adds up to 1",
            "In a heatmap of self-attention weights, rows are queries and columns are keys. "
            "Which always add up to 1?",
            options=(
                ("a", "each column"),
                ("b", "each row"),
                ("c", "both"),
                ("d", "only the whole matrix"),
            ),
        ),
        Question(
            "B2",
            4,
            "row entropy",
            f"What is the entropy H = −Σ w ln w of the weights softmax({short(SCORE_ROW)}), "
            "in nats (natural log)? Give 3 decimals.",
            tolerance=2e-3,
        ),
        Question(
            "B3",
            4,
            "reading a pattern",
            f"Which pattern do these weights show?\n\n```\n{shown}\n```",
            options=(
                ("a", "diagonal dominance"),
                ("b", "uniform rows"),
                ("c", "off-diagonal links"),
                ("d", "a hub column"),
            ),
        ),
        Question(
            "B4",
            4,
            "the colour scale",
            "You draw heatmaps of weights with the colour scale stretched from the smallest "
            "to the largest weight each one shows, instead of fixed at [0, 1]. What can "
            "mislead you?",
            options=(
                ("a", "nothing: the colours only relabel the same numbers"),
                ("b", "sharp rows look flatter than they are"),
                ("c", "small weights vanish into the background, hiding weak links"),
                ("d", "almost uniform weights look as contrasted as sharp ones"),
            ),
        ),
        Question(
            "B5",
            6,
            "weights are not explanations",
            'In a trained model, the largest weight in the row of "cat" is on "sat". Which '
            "claim does that support on its own?",
            options=(
                (
                    "a",
                    'the value vector of "sat" gets the largest share of the mix '
                    'that makes the output of "cat"',
                ),
                ("b", '"sat" is the reason for what the model predicts at "cat"'),
                ("c", '"sat" adds the longest vector to the output of "cat"'),
                ("d", 'removing "sat" would change the model\'s output the most'),
            ),
        ),
        Question(
            "B6",
            5,
            "one output by hand",
            f"A 2-D query {short(two_d.query)} has keys {short(two_d.keys)} and values "
            f"{short(two_d.values)}. Without scaling, its weights are softmax(keys @ query) "
            f"= {short(w2.round(4))}. What is the **first** coordinate of its output? Give 3 "
            "decimals.",
            tolerance=2e-3,
        ),
        Question(
            "B7",
            6,
            "shapes with batches and heads",
            "A batch of 2 sequences of 10 tokens, d_model = 64, 8 heads of size 8. What "
            "shape do the attention weights of all the heads have?",
            options=(
                ("a", "(2, 10, 64)"),
                ("b", "(2, 8, 10, 8)"),
                ("c", str(shapes.shape)),
                ("d", "(8, 10, 10)"),
            ),
        ),
        Question(
            "B8",
            5,
            "what W_K and W_V each decide",
            f"Two tokens x₁ = {short(x_two[0])} and x₂ = {short(x_two[1])} differ only in "
            f"their second coordinate. W_K = {short(w_k2)} keeps only that coordinate; "
            f"W_V = {short(w_v2)} drops it (k = x W_K, v = x W_V). A query q = "
            f"{short(q_two)} reads both, without scaling, so its weights are softmax(K q) = "
            f"{short(w_two.round(4))}. What is its output?",
            options=tuple(
                (letter, short(mixes[kind].round(4))) for letter, kind in filter_options.items()
            ),
        ),
        Question(
            "B9",
            5,
            "the convex hull of the values",
            f"Three 2-D value vectors: {short(two_d.values)}. Which point can an attention "
            "output over them be?",
            options=tuple((key, str(short(p))) for key, p in points.items()),
        ),
        Question(
            "B10",
            5,
            "moving the output",
            "Three keys have different value vectors. Raise the score of one key, A, and "
            "leave the others. The output",
            options=(
                ("a", "moves towards the key vector of A"),
                ("b", "moves towards the value vector of A"),
                (
                    "c",
                    "moves towards the value vector of A only if A already has the largest weight",
                ),
                ("d", "stays where it is"),
            ),
        ),
        Question(
            "B11",
            6,
            "the causal mask",
            f"How many entries of the causal mask of a {n_mask}-token sequence are True "
            "(may attend)?",
            tolerance=0.5,
        ),
        Question(
            "B12",
            6,
            "fill values and a fully masked row",
            "A padded batch in float16. One row has every key masked, and the masked scores "
            "are filled with −1e9 (cast to float16). A softmax that subtracts the row max, "
            "with no special case, turns that row into",
            options=(
                ("a", "all zeros"),
                ("b", "equal weights on the masked keys"),
                ("c", "not-a-number (NaN)"),
                ("d", "an error"),
            ),
        ),
    ]
    # what the questions show, and nothing an answer is read off: the answers are worked out
    # in the key file (answer_keys/lesson7.py), outside the installed package
    return qs, {name: value for name, value in locals().items() if name != "qs"}


QUESTIONS_A = Questions("A", *_questions_a(), key_file="lesson7")
QUESTIONS_B = Questions("B", *_questions_b(), key_file="lesson7")


_QUIZ_HINTS = [
    "Each question names the idea it tests; the lesson it comes from has the explanation "
    "(A: lessons 1–3, B: lessons 4–6). Working from the course repository you can check "
    "part of your answers at any time: the check marks what is right so far and leaves the "
    "rest open. In a graded course run it only records your answers until you submit.",
    "For the questions that ask for a number, compute it in a scratch cell rather than in "
    "your head: `attnlab.softmax`, `attnlab.log_softmax`, `attnlab.entropy`, "
    "`attnlab.causal_mask` and `np.finfo` do the work. Write the number itself into the "
    "dict (or the expression that computes it).",
    "Read the reason the check gives for each answer that is not yet right: it says why that "
    "answer fails without saying which one is right. Then open the lesson named under the "
    "question (the link) and re-read the section on the idea it names, and its Key points.",
]

quiz_a = QUESTIONS_A.exercise(
    "Exercise 7.1 (quiz A: scores, scaling and softmax)",
    _QUIZ_HINTS,
    id="7.1",
    attr="quiz_a",
    points=11,
)
quiz_b = QUESTIONS_B.exercise(
    "Exercise 7.2 (quiz B: heatmaps, values, shapes and masks)",
    _QUIZ_HINTS,
    id="7.2",
    attr="quiz_b",
    points=12,
)


# ================================================================= bug hunt 1: √d_model
def buggy_multi_head_attention(x, w_q, w_k, w_v, n_heads):
    """Multi-head self-attention: x (n, d_model), w_* (d_model, d_model); returns (n, d_model)."""
    n, d_model = x.shape
    d_head = d_model // n_heads
    q = (x @ w_q).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    k = (x @ w_k).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    v = (x @ w_v).reshape(n, n_heads, d_head).swapaxes(0, 1)  # (n_heads, n, d_head)
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_model)  # (n_heads, n, n)
    weights = attnlab.softmax(scores, axis=-1)  # (n_heads, n, n)
    heads = weights @ v  # (n_heads, n, d_head)
    return heads.swapaxes(0, 1).reshape(n, d_model)  # (n, d_model) the heads side by side


def _heads(a, n_heads, split="right"):
    """(n, d_model) -> (n_heads, n, d_head); ``split="wrong"`` reshapes without the swap."""
    n, d_model = a.shape
    if split == "wrong":
        return a.reshape(n_heads, n, d_model // n_heads)
    return a.reshape(n, n_heads, d_model // n_heads).swapaxes(0, 1)


def _multi_head(x, w_q, w_k, w_v, n_heads, divisor=None, split="right"):
    """Multi-head attention through attnlab, dividing each head's scores by ``divisor``."""
    n, d_model = x.shape
    q, k, v = (_heads(x @ w, n_heads, split) for w in (w_q, w_k, w_v))  # (h, n, d_head) each
    scale = None if divisor is None else 1.0 / divisor
    heads, _ = attnlab.scaled_dot_product_attention(q, k, v, scale=scale)  # (h, n, d_head)
    if split == "wrong":
        return heads.reshape(n, d_model)
    return heads.swapaxes(0, 1).reshape(n, d_model)  # (n, d_model)


def scale_cases() -> list[tuple[str, tuple]]:
    """(description, (x, w_q, w_k, w_v, n_heads)) the checker tries.

    "The cat sat down" (d_model = 16) with 8 heads (d_head = 2, so √d_model is √8 times too
    large; no other divisor a learner might try coincides with it there) and 4 heads, then
    5 random tokens with d_model = 12 and 3 heads.
    """
    cat = cat_sat_down()
    wide = cat_sat_down_wide(max_d_k=16)
    w_v = np.random.default_rng(71).normal(scale=16**-0.5, size=(16, 16))  # (d_model, d_model)
    rng = np.random.default_rng(72)
    x5 = rng.normal(size=(5, 12))  # (n, d_model)
    w5 = rng.normal(scale=12**-0.5, size=(3, 12, 12))  # three (d_model, d_model)
    text = f'"{" ".join(cat.tokens)}" (x of shape {cat.x.shape})'
    return [
        (f"{text} with 8 heads", (cat.x, wide.w_q, wide.w_k, w_v, 8)),
        (f"{text} with 4 heads", (cat.x, wide.w_q, wide.w_k, w_v, 4)),
        ("5 random tokens (x of shape (5, 12)) with 3 heads", (x5, *w5, 3)),
    ]


def scale_fresh(rng) -> list[tuple[str, tuple]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 3 to 7 random tokens with
    2, 3 or 4 heads of another width (2 to 5), so √d_model, √d_head, d_head and √n_heads all
    differ."""
    n_heads = int(rng.integers(2, 5))
    d_head = int(rng.choice([d for d in range(2, 6) if d != n_heads]))
    n, d_model = int(rng.integers(3, 8)), n_heads * d_head
    x = rng.normal(size=(n, d_model))  # (n, d_model)
    w = rng.normal(scale=d_model**-0.5, size=(3, d_model, d_model))  # three (d_model, d_model)
    return [(f"{n} random tokens (x of shape {x.shape}) with {n_heads} heads", (x, *w, n_heads))]


def _scale_mistakes(args) -> list[tuple[np.ndarray, str]]:
    x, w_q, w_k, w_v, h = args
    d_model = x.shape[1]
    d_head = d_model // h
    return [
        (
            _multi_head(*args, divisor=math.sqrt(d_model)),
            f"You divide every head's scores by √d_model = √{d_model}. But each head's scores are "
            f"dot products of d_head = {d_head} numbers, so their spread grows like √d_head, and "
            f"that is what to divide by. √d_model is √n_heads = {math.sqrt(h):.3g} times too "
            "large: every head's weights come out too flat, as if at a temperature of "
            f"{math.sqrt(h):.3g}. The bug hides when n_heads = 1.",
        ),
        (
            _multi_head(*args, divisor=1.0),
            f"You do not scale the scores at all: each head's weights come out too sharp. Divide "
            f"by √d_head = √{d_head}.",
        ),
        (
            _multi_head(*args, divisor=float(d_head)),
            f"You divide by d_head = {d_head}; the spread of a dot product grows like the "
            "square root of its length: divide by √d_head.",
        ),
        (
            _multi_head(*args, divisor=math.sqrt(h)),
            f"You divide by √n_heads = √{h}; the divisor is √d_head, the length of the vectors "
            "in each dot product.",
        ),
        (
            _multi_head(*args, split="wrong"),
            "The heads are split wrongly: reshaping (n, d_model) straight to (n_heads, n, d_head) "
            "mixes different tokens into one head. Reshape to (n, n_heads, d_head) and swap the "
            "first two axes, then swap back before joining the heads.",
        ),
    ]


def _scale_what(case) -> str:
    return f"multi_head_attention(...) for {case[0]}"


def _judge_scale(got, case, messages) -> None:
    """Judge the output ``got`` for one of :func:`scale_cases` against attnlab's heads."""
    _, args = case
    expected = _multi_head(*args)  # (n, d_model)
    compare(got, expected, _scale_what(case), messages, _scale_mistakes(args))


def _arguments(case) -> tuple:
    """The call's arguments of a ``(description, arguments)`` case of the bug hunts."""
    return case[1]


def _failed(what, advice=lambda case: ""):
    """The ``failed=`` of a bug hunt: "<what the case called> failed. <why>", and the
    case's ``advice`` when the function raised a ValueError (e.g. shapes that do not fit)."""

    def failed(exc, case) -> str:
        extra = advice(case) if "raised ValueError" in str(exc) else ""
        return f"{what(case)} failed. {exc}{extra}"

    return failed


#: What a bug hunt does not accept in place of the mended function: the library's whole
#: attention (every function of ``attnlab.attention`` that computes it, the tiled and online
#: ones). A bug hunt is graded on fixing the given code: the library's attention is the
#: reference the check compares with, so handing it back shows nothing about the bug. The
#: building blocks the buggy code itself uses (``attnlab.softmax``, ``attnlab.causal_mask``,
#: ``attnlab.attention_scores``) stay allowed.
BUG_HUNT_FORBIDDEN = (
    "attnlab.scaled_dot_product_attention",
    "attnlab.attention.scaled_dot_product_attention",
    "attnlab.tiled_attention",
    "attnlab.tiling",
    "attnlab.online",
)

scale_bug = Exercise(
    "Exercise 7.3 (bug hunt: scaling by √d_model)",
    Cases(
        scale_cases,
        _judge_scale,
        inputs=_arguments,
        failed=_failed(_scale_what),
        fresh=scale_fresh,
    ),
    hints=[
        "Run the buggy function with 1 head and with 8 heads and compare each with "
        "`attnlab.scaled_dot_product_attention` on one head's q, k and v. With one head they "
        "agree. What changes, inside one head, as the number of heads grows?",
        "The division by √d_k exists because the spread of q·k grows like the square root of "
        "the number of terms in the dot product. How many terms does one head's q·k have?",
        "Only the line that computes the scores is wrong. Which size does one head's dot "
        "product add over: d_model, or d_model // n_heads?",
    ],
    forbidden=BUG_HUNT_FORBIDDEN,
    id="7.3",
    attr="scale_bug",
    answer="multi_head_attention",
    points=2,
)


# ================================================================= bug hunt 2: mask after
def buggy_causal_attention(q, k, v):
    """Causal self-attention: query i sees keys 0 … i. Returns (output, weights)."""
    n, d_k = q.shape[-2], q.shape[-1]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_k)  # (..., n, n)
    weights = attnlab.softmax(scores, axis=-1)  # (..., n, n)
    weights = weights * attnlab.causal_mask(n)  # (..., n, n) the future set to 0
    return weights @ v, weights  # (..., n, d_v), (..., n, n)


def mask_cases() -> list[tuple[str, tuple]]:
    """(description, (q, k, v)) the checker tries: the running example, "dog bites man", a
    batch of 2 random sequences of 5 tokens (d_k = 3, d_v = 2), and 3 tokens whose scaled
    scores are q itself (k = √3 · I) with a future key far above the allowed ones in rows 0
    and 1: there exp of every allowed score, measured against the row's max, underflows to 0.
    """
    cat, dog = cat_sat_down(), dog_bites_man()
    rng = np.random.default_rng(73)
    batch = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 2))
    future = np.array([[0.0, 800.0, 5.0], [1.0, 2.0, 900.0], [3.0, 1.0, 2.0]])  # (3, 3)
    q, k = _scores_as_queries(future, np.float64)  # (3, 3) each: q kᵀ / √3 is ``future``
    return [
        (
            f'"{" ".join(cat.tokens)}" (q, k, v of shape (4, 8))',
            (cat.x @ cat.w_q, cat.x @ cat.w_k, cat.x @ cat.w_v),
        ),
        (f'"{" ".join(dog.tokens)}" (q, k, v of shape (3, 4))', (dog.q, dog.k, dog.v)),
        ("a batch of 2 random sequences (q, k of shape (2, 5, 3), v of shape (2, 5, 2))", batch),
        (
            f"3 tokens whose scaled scores are {short(future)} (k = √3 · I, v of shape (3, 2))",
            (q, k, rng.normal(size=(3, 2))),
        ),
    ]


def mask_fresh(rng) -> list[tuple[str, tuple]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``): 3 to 6 random tokens, a
    batch of 2 or 3 sequences, and scores (k = √d · I) whose future key lies 800 or more
    above the allowed ones in row 0."""
    n, d_k, d_v = int(rng.integers(3, 7)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    b = int(rng.integers(2, 4))
    single = tuple(rng.normal(size=(n, d)) for d in (d_k, d_k, d_v))
    batch = tuple(rng.normal(size=(b, n, d)) for d in (d_k, d_k, d_v))
    future = np.round(rng.uniform(-3.0, 3.0, size=(n, n)), 1)  # (n, n)
    future[0, int(rng.integers(1, n))] = float(rng.integers(800, 1000))
    q, k = _scores_as_queries(future, np.float64)  # (n, n) each: q kᵀ / √n is ``future``
    return [
        (
            f"{n} random tokens (q, k of shape {single[0].shape}, v of shape {single[2].shape})",
            single,
        ),
        (
            f"a batch of {b} random sequences (q, k of shape {batch[0].shape}, v of shape "
            f"{batch[2].shape})",
            batch,
        ),
        (
            f"{n} tokens whose scaled scores are {short(future)} (k = √{n} · I, v of shape "
            f"({n}, {d_v}))",
            (q, k, rng.normal(size=(n, d_v))),
        ),
    ]


def _renormalised(q, k, eps=0.0):
    """Softmax over every key, the future zeroed, each row divided by what is left (+ eps)."""
    w = attnlab.softmax(attnlab.attention_scores(q, k)) * attnlab.causal_mask(q.shape[-2])
    return w / (w.sum(axis=-1, keepdims=True) + eps)  # (..., n, n) 0 / 0 where all gone


def renormalise_reason(scores, allowed) -> str:
    """Why "softmax, zero the masked weights, renormalise" fails on ``scores`` (n_q, n_k).

    The row it names is one where a masked score is so far above every allowed one that the
    allowed weights underflow to 0 before the masked ones are zeroed.
    """
    scores = np.asarray(scores, dtype=float)  # (n_q, n_k)
    with np.errstate(all="ignore"):
        gap = np.where(allowed, -np.inf, scores).max(axis=-1) - np.where(
            allowed, scores, -np.inf
        ).max(axis=-1)  # (n_q,)
    i = int(np.argmax(np.where(np.isfinite(gap), gap, -np.inf)))
    return (
        "You take the softmax over every key, zero the masked weights and divide by what "
        "is left. With exact numbers that is the same thing, but in row "
        f"{i} a masked score is {gap[i]:.4g} above the largest allowed one, so exp of every "
        "allowed score, measured against the row's max, underflows to exactly 0: the "
        "row left is all zeros and 0 / 0 is nan. Mask the scores before the softmax, "
        "with -np.inf, so the masked keys never enter the sum."
    )


def _mask_mistakes(q, k, v) -> list[tuple[np.ndarray, str]]:
    n = q.shape[-2]
    causal = attnlab.causal_mask(n)  # (n, n)
    scores = attnlab.attention_scores(q, k)  # (..., n, n)
    plain = attnlab.softmax(scores)  # (..., n, n)
    after = plain * causal
    zero = attnlab.softmax(np.where(causal, scores, 0.0))
    sums = after.sum(axis=-1).ravel()
    renormalise = renormalise_reason(
        scores.reshape(-1, n), np.broadcast_to(causal, scores.shape).reshape(-1, n)
    )
    return [
        (quietly(_renormalised, q, k), renormalise),
        (
            quietly(_renormalised, q, k, 1e-9),
            renormalise.replace("0 / 0 is nan", "dividing by what is left cannot bring it back"),
        ),
        (
            after,
            "You zero the future weights after the softmax, so the weights left in each "
            f"row add up to less than 1 (row sums {short(sums.round(3))}): the share the future "
            "keys had is lost instead of going to the allowed keys. Mask the scores before the "
            "softmax, with -np.inf, so that the allowed keys share all the weight.",
        ),
        (
            zero,
            "You set the future scores to 0 before the softmax; but exp(0) = 1, so the "
            "future keys still get weight. Fill them with -np.inf, whose exp is exactly 0.",
        ),
        (plain, "Nothing is masked: every query reads future keys."),
        (
            quietly(attnlab.scaled_dot_product_attention, q, k, v, causal.T)[1],
            "Your mask is "
            "the upper triangle: each query sees the future and not the past. Query i may see "
            "keys j ≤ i.",
        ),
        (
            quietly(attnlab.scaled_dot_product_attention, q, k, v, np.tril(causal, -1))[1],
            "Your "
            "mask leaves out the diagonal: a query must be able to see itself (j ≤ i, not "
            "j < i).",
        ),
    ]


def _mask_what(case) -> str:
    return f"causal_attention(q, k, v) for {case[0]}"


def _batch_advice(case) -> str:
    """Said when the answer raised a ValueError on a batch: the classic k.T."""
    q = case[1][0]
    return (
        " In a batch, k.T reverses *all* the axes; swap only the last two with k.swapaxes(-1, -2)."
        if q.ndim > 2
        else ""
    )


def _judge_mask(got, case, messages) -> None:
    """Judge (output, weights) ``got`` for one of :func:`mask_cases`: the weights first."""
    q, k, v = case[1]
    what = _mask_what(case)
    if not (isinstance(got, tuple | list) and len(got) == 2):
        raise Wrong(
            f"{what} should return two arrays, (output, weights), like "
            f"attnlab.scaled_dot_product_attention; yours returned {one_line(got)}."
        )
    output, weights = got
    expected_out, expected_w = attnlab.scaled_dot_product_attention(
        q, k, v, mask=attnlab.causal_mask(q.shape[-2])
    )
    compare(weights, expected_w, f"{what}: the weights", messages, _mask_mistakes(q, k, v))
    compare(
        output,
        expected_out,
        f"{what}: the output (the weights are right)",
        messages,
        [
            (
                np.broadcast_to(v.mean(axis=-2, keepdims=True), expected_out.shape),
                "That is the plain average of the values: return weights @ v.",
            )
        ],
    )


mask_bug = Exercise(
    "Exercise 7.4 (bug hunt: masking after the softmax)",
    Cases(
        mask_cases,
        _judge_mask,
        inputs=_arguments,
        failed=_failed(_mask_what, advice=_batch_advice),
        fresh=mask_fresh,
    ),
    hints=[
        "Run the buggy function on the running example and add up each row of the weights it "
        "returns. What should every row add up to, and where did the rest go?",
        "The mask must act on the scores, before the softmax turns them into weights: a "
        "forbidden key needs a score whose exp is exactly 0.",
        "Move the masking before the softmax: fill the scores of the future keys with −∞ (use "
        "`np.where` with `attnlab.causal_mask(n)`), then take the softmax as before and delete "
        "the line after it.",
    ],
    forbidden=BUG_HUNT_FORBIDDEN,
    id="7.4",
    attr="mask_bug",
    answer="causal_attention",
    points=2,
)


# ================================================================= bug hunt 3: no max shift
def buggy_stable_attention(q, k, v):
    """Attention in the dtype of q, k and v (float16 on a GPU, say). Returns (n_q, d_v)."""
    scores = q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5  # (n_q, n_k) in q's dtype
    e = np.exp(scores)  # (n_q, n_k)
    weights = e / e.sum(axis=-1, keepdims=True)  # (n_q, n_k) each row sums to 1
    return weights @ v  # (n_q, d_v)


def _scores_as_queries(scores, dtype):
    """q, k whose scaled scores q kᵀ / √d are exactly ``scores`` (n_q, d): k = √d · I."""
    scores = np.asarray(scores, dtype=float)  # (n_q, d)
    d = scores.shape[1]
    return scores.astype(dtype), (math.sqrt(d) * np.eye(d)).astype(dtype)  # (n_q, d), (d, d)


def shift_cases() -> list[tuple[str, tuple]]:
    """(description, (q, k, v)) the checker tries; k = √d · I, so the scores are q itself.

    First float16 scores of at most 10, which the naive form survives but a shift by the
    row's min or mean does not (one score far above the rest); then scores up to 14 in
    float16 (exp overflows past about 11.1), up to 120 in float32 (past about 88.7), and rows
    near ±1000 in float64: one row far below the others, so a single max over the whole
    matrix underflows it, and float64 alone does not save the naive form.
    """
    rng = np.random.default_rng(74)
    v = rng.normal(size=(4, 3))  # (n_k, d_v)
    table = [
        ("float16", [[10.0, -20.0, -20.0, -20.0], [4.0, -9.0, 0.0, 1.0]]),
        ("float16", [[14.0, 9.0, 2.0, -3.0], [1.0, 2.0, 0.5, -1.0], [12.0, 12.5, 3.0, 0.0]]),
        ("float32", [[120.0, 100.0, 115.0, 90.0], [-5.0, 0.0, 2.0, 1.0]]),
        (
            "float64",
            [
                [1000.0, 990.0, 995.0, 999.0],
                [-1000.0, -1005.0, -990.0, -998.0],
                [0.0, 3.0, 1.0, 2.0],
            ],
        ),
    ]
    cases = []
    for dtype, scores in table:
        q, k = _scores_as_queries(scores, dtype)
        cases.append(
            (
                f"{dtype} inputs whose scaled scores are {short(np.array(scores))}",
                (q, k, v.astype(dtype)),
            )
        )
    return cases


def shift_fresh(rng) -> list[tuple[str, tuple]]:
    """Cases drawn anew for every grading (``Cases(fresh=...)``), k = √d · I so the scores
    are q itself, every score a whole number (exact in float16): float16 rows with one score
    8 to 10 far above the rest (a shift by the min or the mean overflows), float16 scores
    past 11.1, float32 scores past 88.7, and float64 rows near +1000 and -1000."""
    n_k, d_v = int(rng.integers(3, 6)), int(rng.integers(2, 4))
    v = rng.normal(size=(n_k, d_v))  # (n_k, d_v)

    def whole(low, high, rows):
        return rng.integers(low, high + 1, size=(rows, n_k)).astype(float)

    far = whole(-20, -15, 2)
    far[np.arange(2), rng.integers(n_k, size=2)] = rng.integers(8, 11, size=2)
    half = whole(-3, 14, 3)
    half[0, int(rng.integers(n_k))] = float(rng.integers(12, 15))  # exp(12) overflows float16
    single = whole(-5, 120, 2)
    single[0, int(rng.integers(n_k))] = float(rng.integers(100, 121))  # past float32's 88.7
    double = np.concatenate([whole(990, 1000, 1), whole(-1005, -990, 1), whole(-3, 3, 1)])
    cases = []
    for dtype, scores in (
        ("float16", far),
        ("float16", half),
        ("float32", single),
        ("float64", double),
    ):
        q, k = _scores_as_queries(scores, dtype)
        cases.append(
            (f"{dtype} inputs whose scaled scores are {short(scores)}", (q, k, v.astype(dtype)))
        )
    return cases


def _shift_mistakes(q, k, v) -> list[tuple[np.ndarray, str]]:
    """(what each known wrong shift returns on q, k, v, why it is wrong)."""
    wide = [a.astype(float) for a in (q, k, v)]
    scores = attnlab.attention_scores(*wide[:2])  # (n_q, n_k) float64
    limit = math.log(float(np.finfo(q.dtype).max))

    def with_shift(shift):  # exp in q's dtype, as the learner's function computes it
        e = np.exp((scores - shift).astype(q.dtype))
        return (e / e.sum(axis=-1, keepdims=True)) @ wide[2]

    wider = (
        " Computing in a wider dtype, as here, only moves this limit."
        if q.dtype == np.float64
        else ""
    )
    shifts = [
        (
            0.0,
            f"exp of a score above {limit:.4g} overflows {q.dtype} to inf, and inf / inf "
            "is nan. Subtract each row's largest score before exponentiating: the softmax does "
            f"not change (the factor cancels), and every exp is then at most 1.{wider}",
        ),
        (
            scores.max(),
            "You subtract one max for the whole matrix: a row whose scores are all "
            "far below it underflows to 0 / 0. Subtract each row's own max (axis=-1, "
            "keepdims=True).",
        ),
        (
            scores.max(axis=0, keepdims=True),
            "You subtract each *column's* max (axis=0): that "
            "is a different number for every key of a row, so it changes the weights, and a row "
            "far below the others can still underflow. The softmax runs along each row "
            "(axis=-1): subtract each row's own max, with keepdims=True.",
        ),
        (
            scores.min(axis=-1, keepdims=True),
            "You subtract the row's smallest score, which "
            "makes every score ≥ 0 and the overflow worse: subtract the largest.",
        ),
        (
            scores.mean(axis=-1, keepdims=True),
            "Subtracting the row's mean still leaves scores "
            "far above 0 when one score stands out: subtract the largest.",
        ),
    ]
    return [(quietly(with_shift, shift), reason) for shift, reason in shifts]


def _shift_what(case) -> str:
    return f"stable_attention(q, k, v) for {case[0]}"


def _judge_shift(got, case, messages) -> None:
    """Judge the output ``got`` for one of :func:`shift_cases`, to its inputs' precision."""
    q, k, v = case[1]
    expected, _ = attnlab.scaled_dot_product_attention(q, k, v)  # (n_q, d_v)
    compare(
        got,
        expected.astype(float),
        _shift_what(case),
        messages,
        _shift_mistakes(q, k, v),
        inputs=q.dtype,
    )


shift_bug = Exercise(
    "Exercise 7.5 (bug hunt: softmax without the max shift)",
    Cases(
        shift_cases,
        _judge_shift,
        inputs=_arguments,
        failed=_failed(_shift_what),
        fresh=shift_fresh,
    ),
    hints=[
        "Run the buggy function on float16 inputs with a score of 12 and look at "
        "`np.exp(np.float16(12))`. Where does the nan come from?",
        "softmax(s) = softmax(s − c) for any constant c in a row. Which c makes every exp at "
        "most 1, so nothing can overflow, while the largest exp is exactly 1, so the sum "
        "can't be 0?",
        "Change the one line that exponentiates: subtract each row's maximum (along `axis=-1`, "
        "`keepdims=True`) from the scores inside `np.exp`.",
    ],
    forbidden=BUG_HUNT_FORBIDDEN,
    id="7.5",
    attr="shift_bug",
    answer="stable_attention",
    points=2,
)


# ================================================================= 7.6 an input that exposes
def patched_masked_softmax(scores, mask):
    """Masked softmax along the last axis: True in ``mask`` means the key may be attended to."""
    weights = attnlab.softmax(scores, axis=-1)  # (n_q, n_k) over every key
    weights = weights * mask  # (n_q, n_k) the masked keys set to 0
    return weights / weights.sum(axis=-1, keepdims=True)  # (n_q, n_k) rows sum to 1 again


def _masked_softmax(scores, mask) -> np.ndarray:
    """The correct masked softmax: masked scores are −∞ before the softmax (rows with an
    allowed key only; the check refuses fully masked rows)."""
    return attnlab.softmax(np.where(mask, scores, -np.inf), axis=-1)


def _as_input(got) -> tuple[np.ndarray, np.ndarray]:
    """(scores, mask) from what the learner returned; :class:`Wrong` saying what is off."""
    if not (isinstance(got, tuple | list) and len(got) == 2):
        raise Wrong(
            "exposing_input() should return two things, scores and mask, like "
            f"`return scores, mask`; yours returned {one_line(got)}."
        )
    try:
        scores = np.asarray(got[0])
        mask = np.asarray(got[1])
    except ValueError:
        raise Wrong(
            f"scores and mask should be arrays (or nested lists) of the same shape; "
            f"yours are {one_line(got[0])} and {one_line(got[1])}."
        ) from None
    if scores.dtype.kind not in "iuf" or scores.ndim == 0 or scores.size == 0:
        raise Wrong(
            f"scores should be a non-empty array of numbers, one row per query; yours "
            f"is {one_line(got[0])}."
        )
    if mask.dtype.kind != "b":
        if mask.dtype.kind in "iuf" and np.isin(mask, (0, 1)).all():
            mask = mask.astype(bool)
        else:
            raise Wrong(
                f"mask should hold True (may attend) and False (masked); yours is "
                f"{one_line(got[1])}."
            )
    if mask.shape != scores.shape:
        raise Wrong(
            f"mask should have the shape of scores, {scores.shape}, one entry per "
            f"(query, key); yours has shape {mask.shape}."
        )
    if not np.all(np.isfinite(scores)):
        raise Wrong(
            "Every score should be a finite number: the claim under test is about "
            "finite scores (an inf or nan score breaks any softmax). Yours are "
            f"{one_line(got[0])}."
        )
    if scores.dtype.kind in "iu":
        scores = scores.astype(float)
    return scores, mask


def expose_cases() -> list[tuple[str]]:
    """The one call the checker makes: ``exposing_input()``, with no arguments."""
    return [("exposing_input()",)]


def _judge_expose(got, case, messages) -> None:
    """Judge the input ``got`` = (scores, mask): right when the patched function and a
    correct masked softmax differ on it, else say why they agree (warnings are not judged)."""
    scores, mask = _as_input(got)
    rows = scores.reshape(-1, scores.shape[-1]) if scores.ndim > 1 else scores[None]
    allowed = mask.reshape(rows.shape)
    empty = np.flatnonzero(~allowed.any(axis=-1))
    if empty.size:
        raise Wrong(
            f"Row {int(empty[0])} has no allowed key. Any softmax needs a special "
            "case there (lesson 6): that row does not tell the patched function from a "
            "correct one. Give every row at least one allowed key."
        )
    buggy = np.asarray(quietly(patched_masked_softmax, scores, mask), dtype=float)
    right = np.asarray(quietly(_masked_softmax, scores, mask), dtype=float)
    rtol, atol = tolerance(scores.dtype)
    if not np.allclose(buggy, right, rtol=rtol, atol=atol):
        return
    gave = (
        f"On your input the patched function gave {short(buggy)} and a correct masked "
        f"softmax gave {short(right)}: they agree (the largest difference is "
        f"{float(np.max(np.abs(buggy - right))):.2g})."
    )
    with np.errstate(all="ignore"):
        top_masked = np.where(allowed, -np.inf, rows).max(axis=-1)  # (n_rows,)
        top_allowed = np.where(allowed, rows, -np.inf).max(axis=-1)  # (n_rows,)
    if allowed.all():
        why = "Nothing is masked, so zeroing masked weights changes nothing. Mask at least one key."
    elif np.all(top_masked <= top_allowed):
        why = (
            "In every row an allowed key has the largest score, so the masked weights are "
            "small and dividing by what is left restores the right weights. What if a "
            "masked key scored far above the allowed ones?"
        )
    else:
        i = int(np.argmax(top_masked - top_allowed))
        why = (
            f"In row {i} a masked score is {top_masked[i] - top_allowed[i]:.4g} above the "
            "best allowed one, but exp of the allowed scores, measured against the row's "
            "max, is still above 0, and dividing by their sum restores the right weights. "
            f"In {scores.dtype}, how far below the max must a score be for its exp to be "
            "exactly 0?"
        )
    raise Wrong(f"{gave} {why}")


expose_bug = Exercise(
    "Exercise 7.6 (an input that exposes the bug)",
    Cases(expose_cases, _judge_expose),
    hints=[
        "With exact numbers the patched function is right: zeroing the masked weights and "
        "dividing by what is left gives the same weights as masking first. So the bug can "
        "only show where the computer's numbers are not exact. Which step can turn a weight "
        "into exactly 0 although its true value is not 0?",
        "softmax subtracts the row's largest score, masked or not. If a masked key scores far "
        "above every allowed key, exp of each allowed score (minus that max) underflows. Look "
        "up where exp underflows to 0 in float64: `np.exp(-700.0)`, `np.exp(-800.0)`. Then "
        "what is left after zeroing the masked weights, and what is 0 / 0?",
        "One query and two keys are enough: the first allowed, the second masked, with a "
        "masked score more than about 750 above the allowed one (float64). Return the scores "
        "as a (1, 2) array of floats and the mask as a (1, 2) array of booleans. Try it on "
        "`lesson7.patched_masked_softmax` before you run the check.",
    ],
    id="7.6",
    attr="expose_bug",
    answer="exposing_input",
    points=2,
)
