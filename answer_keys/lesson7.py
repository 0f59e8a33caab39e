"""The key to lesson 7's quiz: the right answer to each question and what to say about known
wrong ones. It lives outside the ``attnlab`` package on purpose, so the package students
install in a graded course run does not contain it (see ``attnlab/exercises/keys.py`` and the
instructor guide). Every number is computed from the values the questions were built from.
"""

from __future__ import annotations

import math

import numpy as np

import attnlab
from attnlab.examples import SCORE_ROW
from attnlab.exercises.core import _short
from attnlab.exercises.lesson7 import Key
from attnlab.mixing import barycentric
from attnlab.patterns import column_mass


def key_a(scope) -> dict:
    """The key to part A, question by question; ``scope`` holds the values the
    questions were built from (:attr:`attnlab.exercises.lesson7.Questions.scope`)."""
    d = scope["d"]
    d_var = scope["d_var"]
    far = scope["far"]
    g_scores = scope["g_scores"]
    hot = scope["hot"]
    jac = scope["jac"]
    k = scope["k"]
    limits = scope["limits"]
    naive_log = scope["naive_log"]
    p = scope["p"]
    plain = scope["plain"]
    q = scope["q"]
    raw = scope["raw"]
    wide = scope["wide"]
    return {
        "A1": Key(
            "a",
            why_not=(("b", "rows are queries and columns are keys: the first axis comes from "
                           "Q, the second from K."),
                     ("c", "d_k is the size every dot product adds over: it disappears from "
                           "the result. The score matrix has one number per (query, key) "
                           "pair."),
                     ("d", "that is the shape of Q itself; the scores pair every query with "
                           "every key.")),
        ),
        "A2": Key(
            raw / math.sqrt(d),
            why_not=((raw, "that is the raw score q·k; scale it."),
                     (raw / d, "you divided by d_k; the scaling divides by its square root."),
                     (float(np.sum(q + k)) / math.sqrt(d),
                      "you added q and k entry by entry; a dot product multiplies matching "
                      "entries, then adds the products.")),
            nudge="multiply matching entries of q and k, add the products, then divide by "
                  "√d_k.",
        ),
        "A3": Key(
            "abcd"[int(np.argmin(g_scores))],
            why_not=(("a", "it points along q: that is the highest score of the four."),
                     ("b", f"it is at right angles to q, so its score is {g_scores[1]:g} "
                           "whatever its length. Can a score go below 0?"),
                     ("d", f"part of it points along q, so its score, {g_scores[3]:g}, is "
                           "positive.")),
        ),
        "A4": Key(
            float(d_var),
            why_not=((math.sqrt(d_var), "that is the standard deviation; the question asks "
                                        "for the variance."),
                     (1.0, "that is the variance after dividing by √d_k; before it, the "
                           "variances of the d_k products add up."),
                     (float(d_var**2), "each product q_i k_i has variance 1, and there are "
                                       "d_k of them: the variances add, they do not "
                                       "multiply.")),
            nudge="q·k is a sum of d_k independent products q_i k_i, each of variance 1.",
        ),
        "A5": Key(
            "b",
            why_not=(("a", f"the variance would be d_k^(1/3), still growing: "
                           f"{wide ** (1 / 3):.3g} at d_k = {wide}, and the softmax "
                           "collapses."),
                     ("c", f"the variance would be d_k^(−1/3), shrinking: "
                           f"{wide ** (-1 / 3):.3g} at d_k = {wide}, and the weights drift "
                           "towards uniform."),
                     ("d", f"the variance would be 1/d_k, {1 / wide:.3g} at d_k = {wide}: "
                           "the scores shrink to almost nothing.")),
        ),
        "A6": Key(
            "a",
            why_not=(("b", f"compute it: its largest entry is {np.abs(jac).max():.3g}."),
                     ("c", f"the winning entry is p(1 − p) with p ≈ 1: "
                           f"{jac[0, 0]:.3g}."),
                     ("d", "diag(p) − p pᵀ is defined for every p; work out its entries with "
                           "p ≈ [1, 0, 0].")),
        ),
        "A7": Key(
            "b",
            why_not=(("a", "speed is not the issue; look at the signs of the result."),
                     ("c", f"they do add up to {plain.sum():g}; look at the signs instead."),
                     ("d", "dividing by a positive sum keeps the order; look at the signs.")),
        ),
        "A8": Key(
            float(p[2]),
            why_not=((float(plain[2]), "that divides the score by the sum of the scores; "
                                       "softmax exponentiates them first."),
                     (math.exp(SCORE_ROW[2]), "that is exp of the score; divide it by the "
                                              "sum of the exps of the whole row."),
                     (float(p[3]), "that is the fourth key: numpy counts from 0, so the "
                                   "third is index 2."),
                     (float(p[1]), "that is the second key.")),
            nudge="exponentiate every score, add the exps up, and divide the third by the sum.",
        ),
        "A9": Key(
            "a",
            why_not=(("b", f"T > 1 shrinks the gaps between the scores: the largest weight "
                           f"goes from {p.max():.3f} to {hot.max():.3f}."),
                     ("c", "dividing every score by the same positive T cannot reorder "
                           "them."),
                     ("d", "softmax ignores *adding* a constant to every score, not "
                           "*dividing* by one.")),
        ),
        "A10": Key(
            limits[np.float16],
            why_not=((limits[np.float32], "that is the limit in float32."),
                     (limits[np.float64], "that is the limit in float64."),
                     (float(np.finfo(np.float16).max), "that is the largest float16 itself; "
                                                       "exp(x) reaches it at x = its log.")),
            nudge="exp(x) overflows once it passes the largest float16, np.finfo(np.float16)"
                  ".max: solve exp(x) = that.",
        ),
        "A11": Key(
            float(attnlab.log_softmax(far)[1]),
            why_not=((naive_log, "that is what np.log(softmax(x)) gives, after the weight "
                                 "underflowed to 0. log-softmax is x − logsumexp(x), and "
                                 "never takes the log of a weight."),
                     (0.0, "that is the first entry; the question asks for the second.")),
            nudge="log_softmax(x) = x − logsumexp(x), and logsumexp(x) = max x + "
                  "log Σ exp(x − max x).",
        ),
    }


def key_b(scope) -> dict:
    """The key to part B, question by question; ``scope`` holds the values the
    questions were built from (:attr:`attnlab.exercises.lesson7.Questions.scope`)."""
    busiest = scope["busiest"]
    cat = scope["cat"]
    causal = scope["causal"]
    fill16 = scope["fill16"]
    h = scope["h"]
    inside = scope["inside"]
    link = scope["link"]
    mean = scope["mean"]
    n_mask = scope["n_mask"]
    out = scope["out"]
    points = scope["points"]
    raw_h = scope["raw_h"]
    two_d = scope["two_d"]
    w2 = scope["w2"]
    return {
        "B1": Key(
            "a",
            why_not=(("b", f"a column is what one key hands out to all the queries; in "
                           f'"{" ".join(cat.tokens)}" one column collects {busiest:.2f}.'),
                     ("c", "one of the two is free: a popular key can collect more than 1."),
                     ("d", "think of what the softmax normalises, one query at a time.")),
        ),
        "B2": Key(
            float(h),
            why_not=((raw_h, "that is H itself, in nats; divide by log n."),
                     (raw_h / math.log(2), "that is H in bits; divide H in nats by log n."),
                     (1 - float(h), "that is 1 − H / log n.")),
            nudge="H = −Σ w log w over the row, then divide by log n, n = 4 keys.",
        ),
        "B3": Key(
            "b",
            why_not=(("a", "find each row's largest weight: is it on the diagonal, its own "
                           "token?"),
                     ("c", f"a uniform row has every weight 1/n = {1 / len(link.tokens):g}; "
                           "these rows have a clear winner."),
                     ("d", f"column sums {_short(column_mass(link.weights).round(2))}: no "
                           "column stands out.")),
        ),
        "B4": Key(
            "a",
            why_not=(("b", "the same colour then means different weights in different "
                           "pictures: compare a sharp map with a flat one."),
                     ("c", "the weights do not change, only how they are coloured."),
                     ("d", "stretching keeps the order: the largest is still the brightest.")),
        ),
        "B5": Key(
            "a",
            why_not=(("b", "one head's weights are one step of many layers; weights are "
                           "not explanations."),
                     ("c", "what a key adds is its weight times its value vector, and value "
                           "vectors differ in length."),
                     ("d", "that needs an experiment; other heads, layers and value lengths "
                           "decide.")),
        ),
        "B6": Key(
            float(out[0]),
            why_not=((float(mean[0]), "that is the plain average of the values; weight each "
                                      "one by its weight."),
                     (float((w2 @ two_d.keys)[0]), "you mixed the keys; the output mixes the "
                                                   "values."),
                     (float(out[1]), "that is the second coordinate.")),
            nudge="the output is Σ_j w_j v_j: weight each value vector, then add them up.",
        ),
        "B7": Key(
            "a",
            why_not=(("b", "that is the shape of X (and of the output after the heads are "
                           "joined); weights pair queries with keys."),
                     ("c", "that is the shape of one of Q, K, V split into heads; the "
                           "weights have one number per (query, key) pair."),
                     ("d", "the batch axis is missing: each of the 2 sequences has its own "
                           "weights.")),
        ),
        "B8": Key(
            "a",
            why_not=(("b", "they are learned separately and differ; the lesson on values "
                           "shows what that buys."),
                     ("c", "the weights come from Q and K alone; V never enters the "
                           "softmax."),
                     ("d", "W_V also filters what each token passes on, not just its size.")),
        ),
        "B9": Key(
            next(key for key, ok in inside.items() if ok),
            why_not=tuple((key, f"to land on {_short(p)} you would need the weights "
                                f"{_short(barycentric(p, two_d.values).round(2))}, and a "
                                "weight can't be negative: it lies outside the triangle "
                                "of the values.")
                          for key, p in points.items() if not inside[key]),
        ),
        "B10": Key(
            "a",
            why_not=(("b", "the output mixes values, not keys."),
                     ("c", "a higher score gives A a larger weight."),
                     ("d", "the weights change, so the mix changes.")),
        ),
        "B11": Key(
            float(causal),
            why_not=((float(causal - n_mask), "each token may also see itself: the diagonal "
                                              "is True."),
                     (float(n_mask**2), "that lets every token see the future too."),
                     (float(n_mask), "that lets each token see only itself.")),
            nudge="query i may see keys 0 … i: count them row by row.",
        ),
        "B12": Key(
            "c",
            why_not=(("a", "that is what a softmax with a special case for fully masked "
                           "rows, such as attnlab.softmax with −∞, returns."),
                     ("b", f"that happens in float32 and float64; but np.float16(-1e9) is "
                           f"{float(fill16)}."),
                     ("d", "numpy and most libraries return a value here, not an error.")),
        ),
    }
