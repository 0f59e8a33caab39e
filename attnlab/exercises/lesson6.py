"""Lesson 6 — the full formula, shapes and masking: the checked exercises.

* :data:`attention_shapes` (6.1): ``attention_shapes(batch, n, d_model, d_k, d_v)`` returns the
  shapes of Q, K, V, the scores, the weights and the output of batched self-attention with
  X of shape (batch, n, d_model), W_Q and W_K of shape (d_model, d_k) and W_V (d_model, d_v).
  Each shape may be any sequence of ints (a tuple, a list, ``array.shape``).
* :data:`causal_mask_from_scratch` (6.2): ``causal(n)`` builds the boolean (n, n) causal mask,
  ``True`` where query i may look at key j (j ≤ i), without :func:`attnlab.causal_mask`.
  It must be booleans (``dtype=bool``): 0/1 numbers or an additive 0/−inf mask are wrong.
* :data:`masked_softmax` (6.3): ``masked_softmax(scores, mask)`` turns a score matrix into
  weights where masked keys (``mask`` False) get exactly 0, every row with an allowed key adds
  up to 1, a fully masked row is all zeros (not nan), numpy never warns, and scores of 1000
  do not overflow.

Reference answers come from :func:`attnlab.causal_mask` (6.2) and :func:`attnlab.softmax` of
the scores with the masked ones set to −inf (6.3); 6.1 is read off the matrix products.
Known mistakes are named from what the answer returned (the upper triangle, a strict
triangle, 0/1 numbers, masking after the softmax, a fill of 0 or −1e9, the max taken over the
masked scores too, which is the same computation as "softmax, zero the masked weights,
renormalise" and fails when a masked score dominates, …). Weights computed in float32 are
accepted to float32 precision.

Examples
--------
>>> attention_shapes.check(None).outcome.name
'NOT_ATTEMPTED'
>>> causal_mask_from_scratch.check(None).outcome.name
'NOT_ATTEMPTED'
>>> "looks at the future" in causal_mask_from_scratch.check(
...     lambda n: np.triu(np.ones((n, n), dtype=bool))).message
True
>>> masked_softmax.check(None).outcome.name
'NOT_ATTEMPTED'
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

import attnlab
import attnlab.attention
from attnlab.examples import cat_sat_down, dog_bites_man
from attnlab.exercises.kit.calling import call_watching
from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.display import hidden_difference, one_line, short, warned
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.judging import as_numbers, quietly, recognised
from attnlab.exercises.kit.mistakes import Mistake, must_not_warn, named_mistake
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import judging_tolerance
from attnlab.exercises.rules.forbidden import SOFTMAX_LIBRARY

__all__ = [
    "attention_shapes",
    "causal_mask_from_scratch",
    "masked_softmax",
    "SHAPE_KEYS",
    "shape_cases",
    "causal_cases",
    "softmax_cases",
]


# ---------------------------------------------------------------- 6.1 the shapes
#: The keys the answer's dict must have, in the order they are computed.
SHAPE_KEYS = ("Q", "K", "V", "scores", "weights", "output")


def _expected_shapes(batch, n, d_model, d_k, d_v) -> dict:
    """Every shape of the pipeline, found by running it on zeros with attnlab's numerics."""
    x = np.zeros((batch, n, d_model))  # (batch, n, d_model)
    q, v = x @ np.zeros((d_model, d_k)), x @ np.zeros((d_model, d_v))  # (batch, n, d_k|d_v)
    output, weights = attnlab.scaled_dot_product_attention(q, q, v)  # (batch, n, d_v|n)
    scores = attnlab.attention_scores(q, q)  # (batch, n, n)
    return {
        name: array.shape
        for name, array in (
            ("Q", q),
            ("K", q),
            ("V", v),
            ("scores", scores),
            ("weights", weights),
            ("output", output),
        )
    }


def shape_cases() -> list[tuple[int, int, int, int, int]]:
    """(batch, n, d_model, d_k, d_v) the checker tries; the five sizes differ every time, so
    each axis of a shape can be named by its size."""
    return [(2, 3, 16, 8, 5), (4, 7, 12, 6, 9), (3, 5, 20, 4, 10)]


def shape_fresh(rng) -> list[tuple[int, int, int, int, int]]:
    """(batch, n, d_model, d_k, d_v) drawn anew for every grading (``Cases(fresh=...)``):
    five different sizes from 2 to 40."""
    return [tuple(int(size) for size in rng.choice(np.arange(2, 41), size=5, replace=False))]


def _axes(shape, sizes: dict[int, str]) -> str:
    """``"(batch, n, d_k)"``: the names of the sizes of a shape, or '' if one has no name."""
    if not shape or any(s not in sizes for s in shape):
        return ""
    return "(" + ", ".join(sizes[s] for s in shape) + ")"


def _as_shape(value, key, what) -> tuple[int, ...]:
    """The learner's shape as a tuple of ints, or :class:`Wrong` saying what it should be."""
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim == 1 else value
    if not isinstance(value, (tuple, list)):
        extra = (
            " That is an array; give its shape, e.g. Q.shape, not the array itself."
            if isinstance(value, np.ndarray)
            else ""
        )
        raise Wrong(
            f"{what} gave {key!r}: {one_line(value)}, but each shape should be a tuple "
            f"of ints such as (2, 3, 8).{extra}"
        )
    if not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in value):
        raise Wrong(
            f"{what} gave {key!r}: {one_line(value)}, but a shape holds whole numbers "
            "(ints), the length of each axis, such as (2, 3, 8)."
        )
    return tuple(int(s) for s in value)


def _shape_mistake(key, got, expected, sizes) -> str:
    """Why ``got`` is not the shape of ``key``, from the sizes in it."""
    batch, n, d_model, d_k, d_v = sizes
    if got == expected[1:]:
        return (
            f"You dropped the batch axis. X has shape (batch, n, d_model) = "
            f"({batch}, {n}, {d_model}), and every array computed from it keeps the batch "
            f"axis in front: each of the {batch} sequences gets its own {key}."
        )
    if key in ("scores", "weights") and got == (batch, n):
        return _one_axis_short(key, sizes)
    if len(got) != 3 or got[:2] != (batch, n):
        return ""
    last = got[2]
    if key in ("Q", "K") and last == d_model:
        return (
            f"X W_{key[0]} is (batch, n, d_model) @ (d_model, d_k): a matrix product adds "
            f"over the size the two share, d_model = {d_model}, which disappears. {key} "
            f"keeps the last size of W_{key[0]}, d_k = {d_k}."
        )
    if key == "V" and last == d_model:
        return (
            f"X W_V is (batch, n, d_model) @ (d_model, d_v): d_model = {d_model} is added "
            f"over and disappears; V keeps the last size of W_V, d_v = {d_v}."
        )
    if key in ("Q", "K") and last == d_v:
        return (
            f"W_{key[0]} has shape (d_model, d_k), so {key} has d_k = {d_k} columns; d_v "
            "belongs to W_V and V only."
        )
    if key == "V" and last == d_k:
        return (
            f"W_V has shape (d_model, d_v), so V has d_v = {d_v} columns, which need not "
            f"equal d_k = {d_k}: only Q and K must agree on d_k, because they are "
            "dotted with each other."
        )
    if key in ("scores", "weights") and last in (d_k, d_v, d_model):
        name = {d_k: "d_k", d_v: "d_v", d_model: "d_model"}[last]
        return (
            f"The {key} hold one number per (query, key) pair: Q Kᵀ is (n, d_k) @ (d_k, n) "
            f"→ (n, n) for each batch entry. The {name} = {last} you kept is not an axis "
            f"of the {key}"
            + (": d_k is added over in every dot product." if name == "d_k" else ".")
        )
    if key == "output" and last == d_k:
        return (
            f"The output is weights @ V, (n, n) @ (n, d_v) → (n, d_v): its rows are mixes "
            f"of the value vectors, so it has d_v = {d_v} columns. d_k = {d_k} only lives "
            "in Q and K, and is gone once the scores are computed."
        )
    if key == "output" and last == n:
        return (
            "That is the shape of the weights. The output is weights @ V, (n, n) @ "
            f"(n, d_v) → (n, d_v): one mix of the value vectors per query, d_v = {d_v} "
            "columns."
        )
    if key == "output" and last == d_model:
        return (
            f"There is no output projection here: the output is weights @ V, (n, n) @ "
            f"(n, d_v) → (n, d_v), with d_v = {d_v} columns, not d_model = {d_model}."
        )
    return ""


def _one_axis_short(key, sizes) -> str:
    """Why (batch, n) is not the shape of the scores or the weights: an axis is missing."""
    batch, n = sizes[:2]
    if key == "weights":
        lost = (
            "Softmax normalises each row of the scores but keeps its shape: every query "
            "still has one weight for each of the n keys. (batch, n) is one number per "
            "query, what a sum over the key axis gives, the row sums (each 1) that the "
            "softmax divides by, not the weights themselves."
        )
    else:
        lost = (
            "(batch, n) is one number per token, what a sum over one of the two axes "
            "gives (e.g. Q * K summed over d_k, which pairs query i with key i only)."
        )
    return (
        f"The {key} are missing an axis: they pair every query with every key, so each of "
        f"the {batch} sequences has an n × n matrix, one axis for the n = {n} queries and "
        f"one for the n = {n} keys: Q Kᵀ is (n, d_k) @ (d_k, n) → (n, n). {lost}"
    )


def _shapes_what(sizes) -> str:
    batch, n, d_model, d_k, d_v = sizes
    return f"attention_shapes(batch={batch}, n={n}, d_model={d_model}, d_k={d_k}, d_v={d_v})"


def _judge_shapes(got, sizes, messages) -> None:
    """Judge the dict of shapes ``got`` for one of :func:`shape_cases` (warnings are not judged)."""
    batch, n, d_model, d_k, d_v = sizes
    names = {batch: "batch", n: "n", d_model: "d_model", d_k: "d_k", d_v: "d_v"}
    what = _shapes_what(sizes)
    expected = _expected_shapes(*sizes)
    if not isinstance(got, Mapping):
        raise Wrong(
            f"{what} should return a dict with the keys {', '.join(SHAPE_KEYS)}, "
            f"each giving a shape; yours returned {one_line(got)}."
        )
    missing = [key for key in SHAPE_KEYS if key not in got]
    if missing:
        lower = [key for key in missing if key.lower() in got and key.lower() != key]
        case = (
            f" The keys are case-sensitive: write {', '.join(map(repr, lower))}, not "
            f"{', '.join(repr(k.lower()) for k in lower)}."
            if lower
            else ""
        )
        raise Wrong(
            f"{what} returned a dict without the key(s) "
            f"{', '.join(map(repr, missing))}; it needs all of "
            f"{', '.join(map(repr, SHAPE_KEYS))}.{case}"
        )
    for key in SHAPE_KEYS:
        shape = _as_shape(got[key], key, what)
        want = expected[key]
        if shape == want:
            continue
        named = _axes(shape, names)
        said = (
            f"{what} gave {key!r}: {shape}{f' = {named}' if named else ''}, but it "
            f"should be {want} = {_axes(want, names)}."
        )
        cause = _shape_mistake(key, shape, want, sizes)
        raise Wrong(f"{said} {cause}".rstrip())


attention_shapes = Exercise(
    "Exercise 6.1 (the shapes of batched attention)",
    # shape_cases is looked up at each check, so a test can try other sizes in its place.
    Cases(lambda: shape_cases(), _judge_shapes, inputs=tuple, what=_shapes_what, fresh=shape_fresh),
    hints=[
        "Follow the formula one product at a time, and write down each shape. In a matrix "
        "product the size the two factors share is added over and disappears; the batch axis "
        "in front just comes along.",
        "Q = X W_Q is (batch, n, d_model) @ (d_model, d_k). The scores Q Kᵀ pair every query "
        "with every key, so their last two sizes are (n, n); softmax keeps the shape, and the "
        "output weights @ V takes its last size from V.",
        "Fill in a dict with the six names as keys; each value is a tuple that starts with "
        "`batch`. The score and weight matrices pair n queries with n keys; the output's last "
        "size comes from V.",
    ],
    id="6.1",
    attr="attention_shapes",
    points=1,
)


# ---------------------------------------------------------------- 6.2 the causal mask
def causal_cases() -> list[int]:
    """The sizes n the checker tries: the running example's 4 tokens first, then 1 (a
    single token sees itself) and 6."""
    return [len(cat_sat_down().tokens), 1, 6]


def causal_fresh(rng) -> list[int]:
    """Sizes n drawn anew for every grading (``Cases(fresh=...)``): one from 2 to 5, one from
    7 to 12."""
    return [int(rng.integers(2, 6)), int(rng.integers(7, 13))]


def _ones(n) -> np.ndarray:
    """An (n, n) mask that is True everywhere."""
    return np.ones((n, n), dtype=bool)


_CAUSAL_MISTAKES = [
    Mistake(
        lambda n: np.triu(_ones(n)),
        "Yours is the upper triangle, so it looks at the future: row i is "
        "query i, and True in column j > i lets it see a later token. Keep j ≤ i, the lower "
        "triangle (np.tril).",
    ),
    Mistake(
        lambda n: np.tril(_ones(n), k=-1),
        "Yours is the strict lower triangle, so a query can't see "
        "itself: the diagonal must be True too (j ≤ i, not j < i). With np.tril, leave k=0.",
    ),
    Mistake(
        lambda n: np.triu(_ones(n), k=1),
        "Yours is True exactly where the query must not look, the keys "
        "after it: the mask is inverted. In attnlab True means may attend, so flip it.",
    ),
    Mistake(
        _ones,
        "Yours lets every query see every key: nothing is masked. The keys after "
        "query i (j > i) must be False.",
    ),
    Mistake(
        lambda n: np.eye(n, dtype=bool),
        "Yours lets each query see only itself. Causal means every "
        "key up to and including the query's own position: j ≤ i.",
    ),
    Mistake(
        lambda n: np.tril(_ones(n))[::-1],
        "Yours is the lower triangle upside down (the rows reversed): "
        "row i is query i, so row 0 has a single True, at column 0.",
    ),
]


def _causal_what(n) -> str:
    tokens = cat_sat_down().tokens
    return f"causal({n})" + (f' (for "{" ".join(tokens)}")' if n == len(tokens) else "")


def _judge_causal(got, n, messages) -> None:
    """Judge the mask ``got`` for one of :func:`causal_cases`."""
    what = _causal_what(n)
    expected = attnlab.causal_mask(n)  # (n, n) bool
    try:
        mask = np.asarray(got)
    except ValueError:
        mask = np.asarray(None)
    if mask.dtype.kind not in "biuf":
        raise Wrong(f"{what} should be a boolean array of shape ({n}, {n}); got {one_line(got)}.")
    if mask.shape != (n, n):
        raise Wrong(
            f"{what} should have shape ({n}, {n}), one row per query and one "
            f"column per key, but yours has shape {mask.shape}: {one_line(got)}."
        )
    said = f"{what} should be {short(expected)}, but yours gave {short(mask)}."
    note = ""
    if mask.dtype.kind != "b":
        if np.all(np.isin(mask, (0.0, -np.inf))) and np.any(mask == -np.inf):
            note = (
                "That is an additive mask, 0 where allowed and -inf where not, the "
                "kind you add to the scores. Here the mask is boolean: True where "
                "query i may look at key j."
            )
            mask = mask == 0
        elif np.all(np.isin(mask, (0, 1))):
            kind = "integers" if mask.dtype.kind in "iu" else "floats"
            note = (
                f"Yours holds 0/1 {kind}, not booleans; use dtype=bool (or compare, "
                "j <= i, which gives booleans). attnlab's attention refuses a 0/1 "
                "mask, because a 1 could be meant as 'masked' as easily as 'allowed'."
            )
            mask = mask == 1
        else:
            raise Wrong(
                f"{said} A mask holds booleans, True where query i may look at "
                "key j: use dtype=bool."
            )
        if np.array_equal(mask, expected):
            raise Wrong(f"{said} The pattern is right. {note}")
    if np.array_equal(mask, expected):
        cause = ""
    else:
        cause = named_mistake(mask, _CAUSAL_MISTAKES, (n,), rtol=0, atol=0)
    if not cause and not np.array_equal(mask, expected):
        i, j = (int(x) for x in np.argwhere(mask != expected)[0])
        cause = (
            f"Entry [{i}, {j}] (query {i}, key {j}) should be {bool(expected[i, j])}, "
            f"since key {j} is {'not after' if j <= i else 'after'} query {i}: "
            "True exactly where j ≤ i."
        )
    if cause:
        raise Wrong(f"{said} {f'{note} ' if note else ''}{cause}")
    must_not_warn("mask")(mask, expected, what, messages)


causal_mask_from_scratch = Exercise(
    "Exercise 6.2 (a causal mask from scratch)",
    Cases(
        causal_cases,
        _judge_causal,
        inputs=lambda n: (n,),
        what=_causal_what,
        fresh=causal_fresh,
    ),
    hints=[
        "Row i is query i and column j is key j. Which keys may a token look at when it "
        "cannot see the future? Draw the 4 × 4 grid for the running example and shade them "
        "in: which triangle is it, and is the diagonal in it?",
        "Compare positions: query i may see key j exactly when j ≤ i. A column of row "
        "positions, np.arange(n)[:, None], compared with a row of column positions, "
        "np.arange(n)[None, :], broadcasts to the whole (n, n) grid of booleans.",
        "Compare a row of key positions with a column of query positions (`np.arange(n)` with "
        "`[None, :]` and `[:, None]`): broadcasting gives an (n, n) grid of True/False. Or "
        "start from `np.ones((n, n), dtype=bool)` and keep its lower triangle.",
    ],
    forbidden=("attnlab.causal_mask", "attnlab.attention.causal_mask"),
    id="6.2",
    attr="causal_mask_from_scratch",
    answer="causal",
    points=1,
)


# ---------------------------------------------------------------- 6.3 softmax with a mask
def _masked_reference(scores, mask) -> np.ndarray:
    return attnlab.softmax(np.where(mask, scores, -np.inf).astype(float), axis=-1)


def softmax_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, scores, mask) triples the checker tries.

    The running example's scaled scores with the causal mask; "dog bites man" with a padding
    mask (its last key is padding) and then with a fully masked row; scores of size 1000,
    one row whose masked score is far above the allowed ones; float32 scores near 100, where
    exp already overflows float32.
    """
    cat, dog = cat_sat_down(), dog_bites_man()
    cat_scores = attnlab.attention_scores(cat.x @ cat.w_q, cat.x @ cat.w_k)  # (4, 4)
    n = len(cat.tokens)
    dog_scores = attnlab.attention_scores(dog.q, dog.k)  # (3, 3)
    padding = np.broadcast_to(attnlab.padding_mask([2], 3)[0], (3, 3)).copy()  # (3, 3)
    holes = np.array([[True, False, True], [False, False, False], [True, True, True]])
    large = np.array(
        [
            [1000.0, 998.0, 990.0, 1000.0],
            [-1000.0, -998.0, -1001.0, -999.0],
            [5000.0, 1.0, 2.0, 3.0],
        ]
    )  # (3, 4)
    large_mask = np.array(
        [[True, True, True, False], [True, True, True, True], [False, True, True, True]]
    )
    small = np.array(
        [[95.0, 90.0, 20.0], [-100.0, -95.0, 0.0], [100.0, 99.0, 98.0]], dtype=np.float32
    )
    small_mask = np.array([[True, True, False], [True, True, True], [False, True, True]])
    return [
        (
            f'the scaled scores of "{" ".join(cat.tokens)}", shape {cat_scores.shape}, with the '
            f"causal mask {short(attnlab.causal_mask(n))}",
            cat_scores,
            attnlab.causal_mask(n),
        ),
        (
            f'the scaled scores of "{" ".join(dog.tokens)}" {short(np.round(dog_scores, 4))} with '
            f"the padding mask {short(padding)} (the last key is padding)",
            dog_scores,
            padding,
        ),
        (
            f'the scores of "{" ".join(dog.tokens)}" with the mask {short(holes)}, whose row 1 '
            "is fully masked",
            dog_scores,
            holes,
        ),
        (f"the large scores {short(large)} with the mask {short(large_mask)}", large, large_mask),
        (f"the float32 scores {short(small)} with the mask {short(small_mask)}", small, small_mask),
    ]


def softmax_fresh(rng) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, scores, mask) drawn anew for every grading (``Cases(fresh=...)``):
    random scores with the causal mask; with a random mask holding a fully masked row;
    scores near ±1000 with a masked score far above the allowed ones; float32 scores near
    ±100 (exp overflows float32 there)."""
    n = int(rng.integers(3, 7))
    causal = attnlab.causal_mask(n)  # (n, n)
    n_q, n_k = int(rng.integers(3, 6)), int(rng.integers(3, 7))
    holes = rng.random((n_q, n_k)) < 0.6  # (n_q, n_k)
    holes[np.arange(n_q), rng.integers(n_k, size=n_q)] = True  # a key allowed in every row
    holes[rng.integers(n_q)] = False  # and one row fully masked
    large = rng.integers(-5, 6, size=(n_q, n_k)).astype(float)  # exact in float32 as well
    large += rng.choice([-1000.0, 1000.0], size=(n_q, 1))  # (n_q, n_k)
    large_mask = rng.random((n_q, n_k)) < 0.7
    large_mask[:, 0] = False  # a masked key in every row ...
    large_mask[:, 1] = True
    large[0, 0] = large[0].max() + 4000.0  # ... far above the allowed ones in row 0
    small = np.round(rng.uniform(90.0, 100.0, size=(n_q, n_k)), 1)
    small = (small * rng.choice([-1.0, 1.0], size=(n_q, 1))).astype(np.float32)
    small_mask = rng.random((n_q, n_k)) < 0.7
    small_mask[np.arange(n_q), rng.integers(n_k, size=n_q)] = True
    scores = np.round(rng.normal(0.0, 2.0, size=(n, n)), 2)  # (n, n)
    some = np.round(rng.normal(0.0, 2.0, size=(n_q, n_k)), 2)  # (n_q, n_k)
    return [
        (f"scores {short(scores)} with the causal mask", scores, causal),
        (f"scores {short(some)} with the mask {short(holes)}, one row fully masked", some, holes),
        (f"the large scores {short(large)} with the mask {short(large_mask)}", large, large_mask),
        (f"the float32 scores {short(small)} with the mask {short(small_mask)}", small, small_mask),
    ]


def _softmax_mistakes(scores, mask) -> list[tuple[np.ndarray, str]]:
    """(what a known mistake returns, what to say about it)."""
    s = scores.astype(float)
    fully = ~mask.any(axis=1)  # (n_q,) rows with no allowed key
    after = quietly(lambda: attnlab.softmax(s, axis=1) * mask)
    zero_fill = quietly(lambda: attnlab.softmax(np.where(mask, s, 0.0), axis=1))
    inverted = quietly(lambda: _masked_reference(s, ~mask))
    finite_fill = quietly(lambda: attnlab.softmax(np.where(mask, s, -1e9), axis=1))
    return [
        (_renormalised(s, mask), _renormalised_reason(s, mask)),
        (
            after,
            "You masked after the softmax without renormalising: the weights left in a "
            f"row add up to less than 1 (row sums {short(np.round(after.sum(axis=1), 4))}). Set "
            "the masked scores to -inf before the softmax, so the allowed keys share all the "
            "weight.",
        ),
        (
            zero_fill,
            "You set the masked scores to 0, but a score of 0 is not 'never': "
            "exp(0) = 1, so masked keys still get weight. Use -np.inf, whose exp is exactly 0.",
        ),
        (
            inverted,
            "Yours gives weight exactly where the mask is False: the mask is inverted. "
            "True means the query may attend to that key; keep those scores.",
        ),
        (
            finite_fill if fully.any() else None,
            "A fully masked row should be all zeros, but "
            "yours spreads the weight evenly: with a finite fill such as -1e9 every score of the "
            "row is the same, so softmax gives each key the same share. Give a row with no "
            "allowed key zeros.",
        ),
    ]


def _renormalised(scores, mask, guarded=True) -> np.ndarray:
    """Softmax over every key, the masked weights zeroed, each row divided by what is left."""
    with np.errstate(all="ignore"):
        kept = attnlab.softmax(scores.astype(float), axis=1) * mask  # (n_q, n_k)
        total = kept.sum(axis=1, keepdims=True)  # (n_q, 1)
        return (
            np.where(total > 0, kept / np.where(total > 0, total, 1.0), 0.0)
            if guarded
            else kept / total
        )


def _renormalised_reason(scores, mask) -> str:
    """Why the max over every key (or softmax, zero, renormalise) fails: the masked top score."""
    hidden = np.where(mask, -np.inf, scores.astype(float))  # (n_q, n_k) the masked scores only
    shown = np.where(mask, scores.astype(float), -np.inf)
    gap = hidden.max(axis=1) - shown.max(axis=1)  # (n_q,) how far a masked score is above
    i = int(np.argmax(np.where(np.isfinite(gap), gap, -np.inf)))
    top = f" {float(hidden[i].max()):.4g}" if np.isfinite(gap[i]) else ""
    return (
        f"The max you subtracted included the masked score{top}, the same computation as "
        "taking the softmax over every key, zeroing the masked weights and renormalising. In "
        "exact arithmetic that gives the right weights, but not in floating point: when a "
        "masked score is far above the allowed ones (a future token that dominates), the "
        "allowed weights underflow to 0 before the renormalising, leaving 0/0 (nan) or a row "
        "of zeros. Set the masked scores to -inf before the softmax, so that the max and the "
        "sum are taken over the allowed keys only."
    )


def _tolerance(scores) -> dict:
    """How close right weights must be (the kit's :func:`judging_tolerance`): weights are at
    most 1 and any answer may have been computed in float32 (whatever dtype it comes back in),
    which keeps about 7 digits; every known mistake is off by far more. Scores given in
    float32 (near 100, where exp overflows float32) are rounded before any exp: the answer
    gets more roundings (830, about 1e-4 relative, instead of 160, about 2e-5)."""
    ulps = 830 if scores.dtype == np.float32 else 160
    rtol, atol = judging_tolerance(None, scores, computed_in=np.float32, ulps=ulps, abs_ulps=17)
    return {"rtol": rtol, "atol": atol}


def _overflow_advice(allowed) -> str:
    """Why exp of the allowed scores of a row (large ones) gave nan or inf."""
    top = float(np.max(np.abs(allowed)))
    dtype = np.dtype(allowed.dtype)
    return (
        f"exp of scores as large as {top:.4g} overflows {dtype} (beyond about "
        f"exp({float(np.log(np.finfo(dtype).max)):.4g}) it is inf, and inf/inf is nan), and "
        "exp of a large negative score underflows to 0 (0/0 is nan). Subtract each row's "
        "largest allowed score first: the softmax does not change, and the largest exp "
        "of the row is then exactly 1."
    )


def _softmax_what(description) -> str:
    return f"masked_softmax(scores, mask) for {description},"


def _quiet_without_masked_values(answer, scores, mask, expected, tol) -> bool:
    """Whether ``answer``'s warnings came only from the values of masked-out scores: with each
    of them set to 0, or to its row's smallest allowed score (0 in a row with none), it gives
    the right weights without a warning. A masked-array softmax is right work (``np.ma.exp``
    computes the exp of every entry, the masked ones' raw scores included, and warns of their
    overflow), and so is one that takes the exp of every score before ``np.where`` keeps the
    allowed ones; a 0/0 on a fully masked row warns with either, and is still refused."""
    hidden = ~mask  # (n_q, n_k)
    if not hidden.any():
        return False
    lowest = np.where(mask, scores, np.inf).min(axis=1, keepdims=True)  # (n_q, 1)
    for calm in (0.0, np.where(np.isfinite(lowest), lowest, 0.0)):
        quiet = np.where(hidden, calm, scores).astype(scores.dtype)  # (n_q, n_k)
        try:
            got, messages = call_watching(answer, quiet, mask.copy())
            weights = np.asarray(got, dtype=float)
        except (Wrong, TypeError, ValueError):
            return False
        if (
            not messages
            and weights.shape == expected.shape
            and bool(np.allclose(weights, expected, **tol))
        ):
            return True
    return False


def _judge_softmax(answer, got, case, messages) -> None:
    """Judge the weights ``got`` for one of :func:`softmax_cases` (``answer`` is tried again
    when it warns, :func:`_quiet_without_masked_values`)."""
    description, scores, mask = case
    what = _softmax_what(description)
    expected = _masked_reference(scores, mask)  # (n_q, n_k) float64
    n_q, n_k = scores.shape
    weights = as_numbers(got, what, scores.shape)
    tol = _tolerance(scores)
    if weights.shape != expected.shape:
        raise Wrong(
            f"{what} should have the shape of the scores, {expected.shape}, one weight "
            f"per (query, key) pair, but yours has shape {weights.shape}."
        )
    said = f"{what} should be {short(expected)}, but yours gave {short(weights)}."
    fully = ~mask.any(axis=1)  # (n_q,)
    bad = ~np.isfinite(weights)
    if bad.any():
        i = int(np.argwhere(bad)[0][0])
        if not fully[i] and np.isnan(_renormalised(scores, mask, guarded=False)[i]).all():
            cause = _renormalised_reason(scores, mask)
        elif fully[i]:
            cause = (
                f"Row {i} is fully masked (no key allowed), and yours is nan there: every "
                "exp is 0, and 0/0 is nan. Return a row of zeros for a row with no "
                "allowed key, e.g. divide by the row sum only where it is > 0."
            )
        elif np.max(np.abs(scores[i][mask[i]])) > 80:
            cause = _overflow_advice(scores[i][mask[i]])
        else:
            cause = f"Row {i} contains nan or inf."
        raise Wrong(f"{said} {cause}{warned(messages)}")
    if np.allclose(weights, expected, **tol):
        if messages and not _quiet_without_masked_values(answer, scores, mask, expected, tol):
            why = (
                " np.where computes both branches, so 0/0 or -inf - (-inf) on a fully masked "
                "row warns even if you replace it afterwards. Shift a fully masked row by 0 "
                "and divide it by 1 instead."
                if fully.any()
                else ""
            )
            must_not_warn("weights", why)(weights, expected, what, messages)
        return
    cause = recognised(weights, _softmax_mistakes(scores, mask), **tol)
    leaked = ~mask & (np.abs(weights) > tol["atol"])
    sums = weights.sum(axis=1)
    if not cause and leaked.any():
        i, j = (int(x) for x in np.argwhere(leaked)[0])
        if fully[i]:
            cause = (
                f"Row {i} is fully masked (no key allowed), so all its weights must be 0; "
                f"yours is {short(weights[i])}."
            )
        else:
            cause = (
                f"weights[{i}, {j}] = {weights[i, j]:.4g}, but key {j} is masked for "
                f"query {i} (mask[{i}, {j}] is False): a masked weight must be exactly 0."
            )
    if not cause:
        rows = np.flatnonzero(~fully & ~np.isclose(sums, 1.0, rtol=0, atol=1e-6))
        if rows.size:
            i = int(rows[0])
            if abs(sums[i]) <= tol["atol"]:
                top = scores[i][~mask[i]].max() if (~mask[i]).any() else None
                cause = f"Row {i} has allowed keys but yours is all zeros."
                if top is not None and top > scores[i][mask[i]].max() + 80:
                    cause += (
                        f" The max you subtracted included the masked score "
                        f"{float(top):.4g}, so every allowed exp underflowed to 0. Take "
                        "the max over the allowed keys only (after setting the masked "
                        "scores to -inf)."
                    )
            else:
                cause = (
                    f"Row {i} of yours adds up to {sums[i]:.4g}; the weights of a row "
                    "with an allowed key add up to 1."
                )
    if not cause:
        i = next(i for i in range(n_q) if not np.allclose(weights[i], expected[i], **tol))
        cause = (
            f"Row {i} should be {short(expected[i])}, the softmax of its allowed scores "
            f"{short(np.where(mask[i], scores[i].astype(float), np.nan)[mask[i]])}, "
            f"but yours is {short(weights[i])}."
        )
    raise Wrong(f"{said}{hidden_difference(weights, expected)} {cause}{warned(messages)}")


masked_softmax = Exercise(
    "Exercise 6.3 (softmax with a mask)",
    Cases(
        softmax_cases,
        _judge_softmax,
        what=lambda case: _softmax_what(case[0]),
        with_answer=True,
        fresh=softmax_fresh,
    ),
    hints=[
        "A masked key must end up with weight exactly 0, and the allowed keys of a row must "
        "still share all of the weight. Which score gives a weight of exactly 0 after exp? "
        "Then think about a row where nothing is allowed, and about scores of 1000.",
        "Set the masked scores to -inf with np.where, subtract each row's max (a fully masked "
        "row's max is -inf: use 0 there instead), exponentiate and divide by the row sum — "
        "but only where that sum is > 0, so a fully masked row stays 0 without a 0/0.",
        "Fill the masked scores with −∞ (`np.where`), subtract each row's maximum where it is "
        "finite (use 0 where the whole row is masked), exponentiate, and divide by the row sum "
        "where it is positive — a fully masked row stays all zeros.",
    ],
    forbidden=SOFTMAX_LIBRARY,
    id="6.3",
    attr="masked_softmax",
    points=2,
)
