"""The kit's declared judge (attnlab.exercises.kit.mistakes): Mistake rows, named_mistake and
Compared; each rule passes a right answer and fails the answer it is there to catch."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.exercises.kit.cases import Cases
from attnlab.exercises.kit.mistakes import Compared, Mistake, named_mistake
from attnlab.exercises.kit.outcomes import Wrong

Q, K = np.array([2.0, 1.0, -1.0]), np.array([1.0, -3.0, 3.0])  # q · k = -4

SUMMED = Mistake(lambda q, k: q.sum() + k.sum(), "that is the sum of all entries.")
SELF = Mistake(lambda q, k: q @ q, lambda q, k: f"that is q · q = {q @ q:g}.")


def dot_judge(**options) -> Compared:
    return Compared(
        reference=lambda q, k: float(np.sum(q * k)),
        what=lambda q, k: "dot(q, k)",
        mistakes=[SUMMED, SELF],
        **options,
    )


def judged(judge, got, case=(Q, K), messages=()) -> str:
    """'' when ``judge`` accepts ``got`` on ``case``, else the reason it gives."""
    try:
        judge(got, case, list(messages))
    except Wrong as exc:
        return str(exc)
    return ""


# ------------------------------------------------------------------------------ Mistake
def test_a_mistake_computes_its_output_quietly_and_says_why():
    row = Mistake(lambda x: np.log(x), lambda x: f"log of {x[0]:g}")
    with np.errstate(all="raise"):  # the row's own warning never escapes (nor raises)
        assert np.isneginf(row.output(np.array([0.0]))[0])
    assert row.why(np.array([0.0])) == "log of 0"
    assert SUMMED.why(Q, K) == "that is the sum of all entries."


def test_named_mistake_takes_the_first_matching_row():
    rows = [Mistake(lambda x: x, "first"), Mistake(lambda x: x, "second")]
    assert named_mistake([1.0], rows, (np.array([1.0]),)) == "first"


@pytest.mark.parametrize(
    ("got", "rows", "why"),
    [
        ([1.0], [Mistake(lambda x: None, "never")], "a row that cannot happen (None)"),
        ([[1.0]], [Mistake(lambda x: x, "x")], "another shape"),
        ([1.1], [Mistake(lambda x: x, "x")], "another value"),
        ("one", [Mistake(lambda x: x, "x")], "not numbers"),
        ([1.0], [], "no rows"),
    ],
)
def test_named_mistake_names_nothing_when_no_row_matches(got, rows, why):
    assert named_mistake(got, rows, (np.array([1.0]),)) == "", why


def test_named_mistake_skips_a_row_that_is_right_for_the_case():
    """For x = [1], x / x.sum() is softmax's answer: that row must not be named."""
    rows = [Mistake(lambda x: x / x.sum(), "sum-normalised")]
    assert named_mistake([1.0], rows, (np.array([1.0]),), expected=[1.0]) == ""
    assert named_mistake([1.0], rows, (np.array([1.0]),)) == "sum-normalised"


def test_named_mistake_matches_to_the_given_tolerance_and_nan_to_nan():
    rows = [Mistake(lambda x: x, "x")]
    near = (np.array([1.0 + 1e-5]),)
    assert named_mistake([1.0], rows, near) == ""
    assert named_mistake([1.0], rows, near, rtol=1e-4) == "x"
    assert named_mistake([np.nan], rows, (np.array([np.nan]),)) == "x"


# ----------------------------------------------------------------------------- Compared
def test_the_right_answer_passes_in_float64_float32_and_as_a_list():
    judge = dot_judge()
    assert judged(judge, -4.0) == ""
    assert judged(judge, np.float32(-4.0) + np.float32(3e-6)) == ""  # float32 rounding
    assert (
        judged(Compared(lambda x: 2 * x, lambda x: "double(x)"), [2.0, 4.0], (np.arange(1, 3),))
        == ""
    )


def test_float64_answers_are_held_to_1e6_float32_ones_to_their_precision():
    judge = dot_judge()
    assert "should be -4, but yours gave -4" in judged(judge, -4.0 - 5e-6)
    assert judged(judge, np.float32(-4.0 - 5e-6)) == ""
    assert "should be -4" in judged(judge, np.float32(-4.1))


def test_a_wrong_value_names_the_matching_mistake_after_the_joiner():
    assert judged(dot_judge(), 1.0 + 2.0 - 1.0 + 1.0 - 3.0 + 3.0) == (
        "dot(q, k) should be -4, but yours gave 3: that is the sum of all entries."
    )
    assert judged(dot_judge(joiner=". "), 3.0).endswith("gave 3. that is the sum of all entries.")


def test_a_reason_can_be_computed_from_the_case():
    assert judged(dot_judge(), 6.0).endswith("gave 6: that is q · q = 6.")


def test_a_mistake_is_matched_to_the_answers_own_precision():
    """A float32 answer of a known mistake is named even where float32 rounding moved it."""
    q = np.full(1000, 0.1)
    k = np.full(1000, 0.3)
    judge = dot_judge(
        tolerance=lambda got, q, k: (
            (1e-4, 1e-5)
            if np.ndim(got) == 0 and np.asarray(got).dtype == np.float32
            else (1e-6, 1e-9)
        )
    )
    got = np.float32(q.astype(np.float32).sum() + k.astype(np.float32).sum())
    assert "sum of all entries" in judged(judge, got, (q, k))


def test_no_matching_mistake_ends_with_otherwise():
    assert judged(dot_judge(), 7.0) == "dot(q, k) should be -4, but yours gave 7."
    said = judged(dot_judge(otherwise=lambda q, k: f". Use all {len(q)} entries."), 7.0)
    assert said.endswith("gave 7. Use all 3 entries.")


def test_numbers_are_written_by_shown():
    said = judged(dot_judge(shown=lambda x: f"{float(x):.1f}"), 7.0)
    assert said.startswith("dot(q, k) should be -4.0, but yours gave 7.0")


@pytest.mark.parametrize(
    ("got", "said"),
    [
        ("seven", "dot(q, k) should be numbers; got 'seven'."),
        (["a", "b"], "dot(q, k) should be numbers; got ['a', 'b']."),
        ([1.0, 2.0], "dot(q, k) should have shape (), but yours has shape (2,)."),
        (np.nan, "dot(q, k) contains nan or inf: nan. Expected -4."),
        (np.inf, "dot(q, k) contains nan or inf: inf. Expected -4."),
    ],
)
def test_type_shape_and_nan_fail_with_the_kits_sentences(got, said):
    assert judged(dot_judge(), got) == said


def test_a_mistake_of_another_shape_is_named_on_the_shape_sentence():
    judge = Compared(
        lambda q, k: q[:, None] @ k[None, :],
        lambda q, k: "outer(q, k)",
        [Mistake(lambda q, k: np.outer(q, k)[:2], "you dropped the last row.")],
    )
    said = judged(judge, np.outer(Q, K)[:2])
    assert said == "outer(q, k) should have shape (3, 3), but yours has shape (2, 3): " + (
        "you dropped the last row."
    )


def test_plural_and_kind_change_the_type_and_nan_sentences():
    judge = dot_judge(plural=True, kind="an array of numbers")
    assert judged(judge, np.nan).startswith("dot(q, k) contain nan or inf")
    assert judged(judge, "x") == "dot(q, k) should be an array of numbers; got 'x'."


def test_check_runs_first_and_can_fail_on_its_own():
    def products(got, expected, what, q, k):
        if np.shape(got) == q.shape:
            raise Wrong(f"{what} should be one number, {float(expected):g}: add the products up.")

    judge = dot_judge(check=products)
    assert judged(judge, Q * K) == "dot(q, k) should be one number, -4: add the products up."
    assert judged(judge, -4.0) == ""


def test_before_outranks_the_rows_and_after_comes_only_when_no_row_matched():
    def warned(values, expected, messages, q, k):
        return "numpy warned." if messages else ""

    def diagnosed(values, expected, messages, q, k):
        return "a diagnosis."

    judge = dot_judge(before=warned, after=diagnosed)
    assert judged(judge, 3.0, messages=["overflow"]).endswith(": numpy warned.")
    assert judged(judge, 3.0).endswith(": that is the sum of all entries.")
    assert judged(judge, 7.0).endswith("gave 7: a diagnosis.")
    assert judged(judge, -4.0, messages=["overflow"]) == ""  # right is right


def test_what_reads_the_whole_case_and_the_rest_its_arguments():
    judge = Compared(
        lambda x: x + 1,
        lambda name, x: f"inc({name})",
        [Mistake(lambda x: x - 1, "that is x - 1.")],
        arguments=lambda case: case[1:],
    )
    cases = Cases(lambda: [("two", 2.0)], judge)
    cases(lambda x: x + 1)
    with pytest.raises(Wrong, match=r"^inc\(two\) should be 3, but yours gave 1: that is x - 1\.$"):
        cases(lambda x: x - 1)
