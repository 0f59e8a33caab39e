"""Known mistakes as data, and :class:`Compared`: a judge declared as data for a plain exercise.

A plain exercise is a function whose answer is compared with a reference, with known mistakes
each computable from the case. It declares the reference, how the call is named and the
mistakes as :class:`Mistake` rows; :class:`Compared` does the common parts once: the answer
read as numbers, its shape and finiteness, the comparison to the precision it was computed in,
each row's output matched against the answer (to the same tolerance) and the sentence
"<what> should be X, but yours gave Y: <reason>". A diagnosis that is not a row (a property
of the answer, numpy's warnings, a wrong type with a message of its own) plugs in beside the
rows (``check``, ``before``, ``after``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attnlab.exercises.kit.display import hidden_difference, short, warned
from attnlab.exercises.kit.judging import quietly, same_values
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.kit.precision import judging_tolerance

#: The roundings of its own precision an answer may collect by default (:class:`Compared`).
ROUNDINGS = 8


@dataclass(frozen=True)
class Mistake:
    """A known mistake: what it returns for a case, and why that is wrong.

    Parameters
    ----------
    compute : callable
        ``compute(*arguments)`` returns what the mistaken answer returns on the case's
        arguments (numpy's warnings silenced); ``None`` where the mistake cannot happen.
    reason : str or callable
        The sentence that explains it, or ``reason(*arguments)`` when it names the case.

    Examples
    --------
    >>> summed = Mistake(lambda q, k: q.sum() + k.sum(), "that is the sum of all entries.")
    >>> float(summed.output(np.array([1.0, 2.0]), np.array([3.0, 4.0]))), summed.why()
    (10.0, 'that is the sum of all entries.')
    """

    compute: Callable
    reason: str | Callable

    def output(self, *arguments):
        """What the mistake returns on ``arguments`` (None where it cannot happen)."""
        return quietly(self.compute, *arguments)

    def why(self, *arguments) -> str:
        """The sentence that explains the mistake on ``arguments``."""
        return self.reason(*arguments) if callable(self.reason) else self.reason


def named_mistake(got, mistakes, arguments, rtol=1e-6, atol=1e-9, expected=None) -> str:
    """The reason of the first of ``mistakes`` whose output ``got`` equals, or ''.

    Equal means the same shape and values to ``(rtol, atol)``, nan matching nan
    (:func:`~attnlab.exercises.kit.judging.same_values`). A row whose output is None, or is
    (nearly) ``expected`` itself (for this case the mistake gives the right answer), is
    skipped. Outputs are computed in order, only until one matches.

    Parameters
    ----------
    got : array_like
        What the learner's function returned; '' when it is not numbers.
    mistakes : sequence of Mistake
    arguments : tuple
        The case's arguments, passed to each row's ``compute`` and ``reason``.

    Examples
    --------
    >>> rows = [Mistake(lambda x: None, "n/a"), Mistake(lambda x: x.mean(), "the mean")]
    >>> named_mistake(2.0, rows, (np.array([1.0, 3.0]),)), named_mistake(5.0, rows, (np.ones(2),))
    ('the mean', '')
    """
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return ""
    for mistake in mistakes:
        wrong = mistake.output(*arguments)
        if wrong is None or not same_values(got, wrong, rtol, atol):
            continue
        if expected is not None and same_values(wrong, expected, rtol, atol):
            continue
        return mistake.why(*arguments)
    return ""


def must_not_warn(noun: str, advice: str | Callable = "") -> Callable:
    """A ``right`` hook for :class:`Compared`: a right answer whose computation made numpy warn
    fails all the same, "<what> gives the right <noun>, but numpy warned: …. Your function must
    not warn.<advice>".

    Parameters
    ----------
    noun : str
        What was right: ``"values"``, ``"mask"``, ``"weights"``.
    advice : str or callable, optional
        What follows the sentence (with its leading space), or ``advice(*arguments)``.

    Examples
    --------
    >>> right = must_not_warn("mask", " Compare positions instead.")
    >>> right(None, None, "causal(3)", []) is None
    True
    >>> try:
    ...     right(None, None, "causal(3)", ["invalid value encountered in divide"])
    ... except Wrong as exc:
    ...     print(exc)
    causal(3) gives the right mask, but numpy warned: invalid value encountered in divide. \
Your function must not warn. Compare positions instead.
    """

    def right(values, expected, what, messages, *arguments) -> None:
        if messages:
            said = advice(*arguments) if callable(advice) else advice
            raise Wrong(
                f"{what} gives the right {noun}, but numpy warned: {'; '.join(messages)}. "
                f"Your function must not warn.{said}"
            )

    return right


def _whole_case(case) -> tuple:
    """The call's arguments of a case that is nothing but them (``Cases(inputs=tuple)``)."""
    return tuple(case)


@dataclass(frozen=True)
class Compared:
    """A judge as data (``Cases(cases, Compared(...), ...)``): the answer compared with a
    reference, known mistakes named.

    Judging ``got`` on a case: ``check`` first (if given); then ``got`` must be numbers
    (``"<what> should be <kind>; got …."``), of the reference's shape and finite, and equal
    to it to ``tolerance``. Otherwise the sentence says what is wrong (the shape, nan or inf,
    or "should be X, but yours gave Y", the numbers written by ``shown``) and names the
    cause: ``before``'s, else the first :class:`Mistake` row whose output ``got`` equals (to
    the same tolerance; :func:`named_mistake`), else ``after``'s, each after ``joiner``; with
    none, a wrong value ends with ``otherwise`` and the other sentences with ``"."``.

    Parameters
    ----------
    reference : callable
        ``reference(*arguments)``: the right answer (a number or an array).
    what : callable
        ``what(*case)``: how the call is named in feedback, e.g. ``"dot([1, 2], [3, 4])"``.
    mistakes : sequence of Mistake, optional
        The known mistakes, in the order they are tried.
    tolerance : callable, optional
        ``tolerance(got, *arguments)`` gives ``(rtol, atol)``; by default
        :func:`~attnlab.exercises.kit.precision.judging_tolerance` of ``got`` with 8
        roundings (:data:`ROUNDINGS`): 1e-6 and 1e-9 in float64, about 2e-6 and 1e-6 for an
        answer computed in float32.
    check : callable, optional
        ``check(got, expected, what, *arguments)``, run before anything else: raises
        :class:`Wrong` for a mistake that needs its own sentence (a wrong type, the terms of
        a sum not yet added up).
    before, after : callable, optional
        ``before(values, expected, messages, *arguments)`` returns a reason that outranks the
        rows (e.g. numpy warned of an overflow), ``after(...)`` one for when no row matched
        (a property of the answer); '' for none. ``values`` is ``got`` as a float array,
        ``messages`` numpy's warnings.
    shown : callable, optional
        How the expected and given numbers are written; :func:`short` by default.
    joiner : str, optional
        What goes between the sentence and its reason: ``": "`` by default (the reason goes
        on the sentence), ``". "`` when reasons are sentences of their own.
    otherwise : str or callable, optional
        The end of a wrong value's sentence when no cause is named (``otherwise(*arguments)``
        if callable): ``"."`` by default, or e.g. ``". Check that you multiply …"``.
    plural : bool, optional
        ``what`` names a plural ("the weights"): "contain nan or inf", not "contains".
    kind : str, optional
        What an answer that is not numbers should have been: ``"numbers"`` by default.
    arguments : callable, optional
        ``arguments(case)``: the call's arguments; the whole case by default (for
        ``Cases(inputs=tuple)``); ``lambda case: case[1:]`` for ``(description, *arguments)``.
    screen : callable, optional
        ``screen(got, expected, what, messages, *arguments)``, run right after ``check``, with
        numpy's warnings: raises :class:`Wrong` with a sentence of the exercise's own for an
        answer of the wrong shape, or with nan or inf.
    right : callable, optional
        ``right(values, expected, what, messages, *arguments)``, run when the answer is
        right: raises :class:`Wrong` when being right is not enough, e.g. numpy warned
        (:func:`must_not_warn`).
    hidden : bool, optional
        A wrong value that prints like the expected one is followed (after ``joiner``) by
        how far apart the two are (:func:`~attnlab.exercises.kit.display.hidden_difference`).
    warned : bool, optional
        Every sentence after the answer was read as numbers ends with numpy's warnings
        (:func:`~attnlab.exercises.kit.display.warned`).
    mistake_tolerance : tuple, optional
        ``(rtol, atol)`` the rows are matched to; the judging tolerance by default.

    Examples
    --------
    >>> from attnlab.exercises.kit.cases import Cases
    >>> judge = Compared(
    ...     reference=lambda x: x * x,
    ...     what=lambda x: f"square({x:g})",
    ...     mistakes=[Mistake(lambda x: 2 * x, "that is x + x; multiply x by itself.")],
    ... )
    >>> squares = Cases(lambda: [(3.0,), (-1.5,)], judge, inputs=tuple)
    >>> squares(lambda x: x**2) is None
    True
    >>> try:
    ...     squares(lambda x: x + x)
    ... except Wrong as exc:
    ...     print(exc)
    square(3) should be 9, but yours gave 6: that is x + x; multiply x by itself.

    The sentences of lessons 4-6: a reason after ". ", the digits that print alike, numpy's
    warnings named, and a right answer refused when numpy warned:

    >>> quiet = Compared(
    ...     lambda x: x * x,
    ...     lambda x: f"square({x:g})",
    ...     [Mistake(lambda x: 2 * x, "That is x + x.")],
    ...     joiner=". ",
    ...     hidden=True,
    ...     warned=True,
    ...     right=must_not_warn("value"),
    ... )
    >>> for got, messages in ((6.0, ["overflow"]), (9.00001, []), (9.0, ["overflow"])):
    ...     try:
    ...         quiet(got, (3.0,), messages)
    ...     except Wrong as exc:
    ...         print(exc)
    square(3) should be 9, but yours gave 6. That is x + x. numpy warned: overflow.
    square(3) should be 9, but yours gave 9. They agree to the digits shown, but differ by up \
to 1e-05, more than rounding (even in float32) explains.
    square(3) gives the right value, but numpy warned: overflow. Your function must not warn.
    """

    reference: Callable
    what: Callable
    mistakes: Sequence[Mistake] = ()
    tolerance: Callable | None = None
    check: Callable | None = None
    before: Callable | None = None
    after: Callable | None = None
    shown: Callable = short
    joiner: str = ": "
    otherwise: str | Callable = "."
    plural: bool = False
    kind: str = "numbers"
    arguments: Callable = _whole_case
    screen: Callable | None = None
    right: Callable | None = None
    hidden: bool = False
    warned: bool = False
    mistake_tolerance: tuple[float, float] | None = None

    def __call__(self, got, case, messages) -> None:
        arguments = tuple(self.arguments(case))
        what = self.what(*case)
        expected = np.asarray(self.reference(*arguments), dtype=float)
        if self.check is not None:
            self.check(got, expected, what, *arguments)
        if self.screen is not None:
            self.screen(got, expected, what, messages, *arguments)
        try:
            values = np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            raise Wrong(f"{what} should be {self.kind}; got {short(got)}.") from None
        if self.tolerance is None:
            rtol, atol = judging_tolerance(got, ulps=ROUNDINGS, abs_ulps=ROUNDINGS)
        else:
            rtol, atol = self.tolerance(got, *arguments)
        finite = bool(np.all(np.isfinite(values)))
        shape_right = values.shape == expected.shape
        if shape_right and finite and np.allclose(values, expected, rtol=rtol, atol=atol):
            if self.right is not None:
                self.right(values, expected, what, messages, *arguments)
            return
        if not shape_right:
            said = f"{what} should have shape {expected.shape}, but yours has shape {values.shape}"
        elif not finite:
            verb = "contain" if self.plural else "contains"
            said = (
                f"{what} {verb} nan or inf: {self.shown(values)}. Expected {self.shown(expected)}"
            )
        else:
            said = f"{what} should be {self.shown(expected)}, but yours gave {self.shown(values)}"
        if self.mistake_tolerance is not None:
            rtol, atol = self.mistake_tolerance
        reason = self._cause(values, expected, messages, arguments, rtol, atol)
        noted = warned(messages) if self.warned else ""
        hidden = ""
        if self.hidden and shape_right and finite:
            hidden = hidden_difference(values, expected)
        if reason:
            hidden = f"{hidden.strip()} " if hidden else ""
            raise Wrong(f"{said}{self.joiner}{hidden}{reason}{noted}")
        if shape_right and finite:
            ending = self.otherwise(*arguments) if callable(self.otherwise) else self.otherwise
            raise Wrong(f"{said}{ending}{hidden}{noted}")
        raise Wrong(f"{said}.{noted}")

    def _cause(self, values, expected, messages, arguments, rtol, atol) -> str:
        """``before``'s reason, else the first matching row's, else ``after``'s, or ''."""
        hooked = (values, expected, messages, *arguments)
        reason = self.before(*hooked) if self.before is not None else ""
        if not reason:
            reason = named_mistake(values, self.mistakes, arguments, rtol, atol, expected)
        if not reason and self.after is not None:
            reason = self.after(*hooked)
        return reason
