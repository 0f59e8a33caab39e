"""The exercise: a checker with tiered hints, a worked solution and the original stub on request.

A learner writes a function in the notebook and passes it to ``exercise.check(fn)``. The answer
is called on inputs chosen by the checker and compared with a reference computed by
:mod:`attnlab`'s own numerics. The result is one of:

* **not attempted yet** — the answer is still the stub (``None``, ``...``, or a function that
  raises ``NotImplementedError``); no traceback;
* **not yet right** — with a reason that helps: the input, what was expected, what came back;
* **correct**.

In a learner's notebook (IPython) a check also says when the answer cell's latest run stopped
before defining the function (**answer cell did not run**, see :mod:`attnlab.exercises.cells`),
and an interrupted check ends with one sentence (:class:`CheckInterrupted`), not a traceback.
Where the notebook can be found (JupyterLab, ``nbgrader validate``), a check also says when the
notebook hides the answer from grading: the function is in a cell without the exercise's tag, the
answer cell was copied, or it is gone (**grading will not see this answer**, see
:mod:`attnlab.exercises.rules.answer_cells`).

Under nbgrader's autograder or validator (``NBGRADER_EXECUTION`` is set) and when
``ATTNLAB_REQUIRE_CORRECT=1``, anything but *correct* raises ``AssertionError`` so the grade
cell fails as nbgrader expects.
"""

from __future__ import annotations

import copy
import time

from attnlab.exercises.cells import DEFINED_IN, stale_message
from attnlab.exercises.kit.calling import is_stub
from attnlab.exercises.kit.exercise_map import EXERCISES
from attnlab.exercises.kit.feedback import (
    NOT_ATTEMPTED_TEXT,
    Feedback,
    Text,
    interrupted_sentence,
    joined,
)
from attnlab.exercises.kit.outcomes import (
    CheckInterrupted,
    NotAttempted,
    Outcome,
    Recorded,
    Wrong,
)
from attnlab.exercises.kit.passing_helpers import helpers_that_pass
from attnlab.exercises.progress import record
from attnlab.exercises.rules.answer_cells import reviewed
from attnlab.exercises.rules.answer_lint import answer_cell_problems, refused_message
from attnlab.exercises.rules.forbidden import forbidden_during
from attnlab.exercises.rules.grading_mode import must_pass, solutions_hidden
from attnlab.exercises.rules.unseen_names import unseen_reviewed


class Exercise:
    """One checked exercise.

    Parameters
    ----------
    title : str
        Shown in feedback, e.g. ``"Exercise 1.1 (dot product)"``.
    checker : callable
        ``checker(answer)`` returns on success and raises :class:`Wrong` (or
        :class:`NotAttempted`) otherwise. Usually a :class:`Cases`: the exercise's inputs and
        its judge as data, run by the one checking loop.
    hints : list of str
        Markdown, from a gentle nudge to nearly the answer.
    solution : callable or str
        A reference implementation (its source is shown) or Markdown.
    forbidden : tuple of str
        The functions (``"attnlab.softmax"``), whole modules (``"attnlab.online"``) and notebook
        names the answer may not call.
    id : str, optional
        Where the exercise sits in the course, ``"<lesson>.<n>"`` (``"3.3"``): given, the
        exercise adds itself to :data:`~attnlab.exercises.kit.exercise_map.EXERCISES`, and
        ``attr`` and ``points`` must be given too.
    attr : str, optional
        Its name in its lesson's module: the grade cell calls ``lesson<N>.<attr>.check``.
    answer : str, optional
        The function the grade cell passes to the check (defined by the answer cell);
        ``attr`` when not given.
    points : int, optional
        What the grade cell is worth (its nbgrader ``points``).
    grade_id : str, optional
        The grade cell's nbgrader ``grade_id``; when not given, ``"check-"`` and ``answer``
        with dashes for underscores (``"check-softmax-row"`` for ``softmax_row``).

    Examples
    --------
    >>> from attnlab.exercises.kit.calling import call
    >>> from attnlab.exercises.kit.judging import expect_close
    >>> def checker(answer):
    ...     expect_close(call(answer, 3), 9, "answer(3)")
    >>> square = Exercise("Squares", checker, hints=["Multiply x by itself."], solution="x * x")
    >>> square.check(None).outcome.name
    'NOT_ATTEMPTED'
    >>> square.check(lambda x: x + x).outcome.name
    'WRONG'
    >>> bool(square.check(lambda x: x * x))
    True
    """

    def __init__(
        self,
        title,
        checker,
        hints,
        solution=None,
        forbidden=(),
        *,
        id=None,
        attr=None,
        answer=None,
        points=None,
        grade_id=None,
    ):
        self.title = title
        self.checker = checker
        self.hints = list(hints)
        self.declared_forbidden = tuple(forbidden)
        self._derived: tuple | None = None
        self._hints_shown = 0
        self.id, self.attr, self.answer = id, attr, answer or attr
        self.points, self.grade_id = points, grade_id or _grade_id(self.answer)
        if id is not None:
            if None in (attr, points):
                raise TypeError(f"exercise {id} needs attr and points as well")
            EXERCISES.add(self)

    @property
    def lesson(self) -> int | None:
        """The lesson the exercise belongs to (``3`` for ``"3.3"``), or None outside the map."""
        return None if self.id is None else int(self.id.partition(".")[0])

    @property
    def name(self) -> str | None:
        """Where the notebooks find this exercise, e.g. ``"lesson1.dot"`` (None outside the
        map)."""
        return None if self.id is None else f"lesson{self.lesson}.{self.attr}"

    def check_call(self) -> str | None:
        """The code of its grade cell, ``"lesson1.dot.check(dot)"`` (None outside the map)."""
        return None if self.id is None else f"{self.name}.check({self.answer})"

    def untouched(self) -> Exercise:
        """A copy of this exercise as it is before any hint was asked for."""
        fresh = copy.copy(self)
        fresh._hints_shown = 0
        return fresh

    @property
    def forbidden(self) -> tuple:
        """The functions this exercise forbids: the ones it names (``forbidden=``) and every
        public course helper that, called as the answer, passes the check by itself
        (:func:`helpers_that_pass`, worked out once, the first time it is asked for)."""
        if self._derived is None:
            self._derived = ()  # a checker that asks for it while it is being derived
            self._derived = tuple(helpers_that_pass(self.checker, self.declared_forbidden))
        return self.declared_forbidden + self._derived

    def check(self, answer) -> Feedback:
        """Check ``answer`` and say how it went; see the module docstring for the outcomes.

        Raises
        ------
        CheckInterrupted
            The learner interrupted the check (its message says after how long).
        AssertionError
            Under grading (:func:`must_pass`), when the answer is not correct.
        """
        stale = stale_message(answer)
        refused = answer_cell_problems(answer, self.forbidden, self.answer)
        if stale is not None:
            feedback = Feedback(self.title, Outcome.NOT_RUN, stale)
        elif refused:
            feedback = Feedback(self.title, Outcome.WRONG, refused_message(refused))
        else:
            start = time.monotonic()
            try:
                feedback = self.grade(answer)
            except KeyboardInterrupt as exc:
                raise CheckInterrupted(
                    interrupted_sentence(time.monotonic() - start, getattr(exc, "in_answer", False))
                ) from None
        if stale is None:  # is the answer where grading looks? (the notebook file says)
            feedback = reviewed(self, answer, feedback, DEFINED_IN)
        if stale is None and not refused:  # will grading have what the answer uses?
            feedback = unseen_reviewed(self, answer, feedback)
        record(self.name, feedback.outcome.value)  # the learner's own "done so far" (lesson 0)
        if must_pass() and not feedback:
            raise AssertionError(str(feedback))
        return feedback

    def grade(self, answer) -> Feedback:
        """The feedback on ``answer``, never raising; ``feedback.score`` is the share earned."""
        if is_stub(answer):
            return Feedback(self.title, Outcome.NOT_ATTEMPTED, NOT_ATTEMPTED_TEXT)
        try:
            with forbidden_during(self.forbidden):
                self.checker(answer)
        except NotAttempted as exc:
            return Feedback(self.title, Outcome.NOT_ATTEMPTED, str(exc) or NOT_ATTEMPTED_TEXT)
        except Recorded as exc:
            return Feedback(self.title, Outcome.RECORDED, str(exc))
        except Wrong as exc:
            tip = "" if self._hints_shown else _STUCK.format(call=f"{self.name or ''}.hint()")
            return Feedback(self.title, Outcome.WRONG, joined(str(exc), tip), exc.score)
        return Feedback(self.title, Outcome.CORRECT, "Well done.", 1.0)

    def hint(self, level=None) -> Text:
        """The next hint (or hint number ``level``); each call goes one tier further."""
        return self._hint(level, _CALLED)

    def _hint(self, level, asked) -> Text:
        """Hint ``level`` (the next one if None), ending with what to do next in ``asked``
        (:data:`_CALLED` or :data:`_PANEL`: the words of ``.hint()`` or of the buttons)."""
        if not self.hints:
            return Text("There are no hints for this one.")
        if level is None:
            level = min(self._hints_shown + 1, len(self.hints))
        if not 1 <= level <= len(self.hints):
            raise ValueError(f"level must be between 1 and {len(self.hints)}; got {level}")
        self._hints_shown = max(self._hints_shown, level)
        more = asked["more"] if level < len(self.hints) else asked["last"]
        return Text(f"**Hint {level} of {len(self.hints)}.** {self.hints[level - 1]}\n\n*{more}*")

    def help_panel(self):
        """Buttons for the next hint and the solution, for learners who prefer clicking.

        Returns an ``ipywidgets.VBox``; the hints appear below the buttons, in their own words
        ("Press Next hint"), one tier per click; after the last one the button is switched off.
        "Get the stub back" shows the answer cell as the lesson gave it (:meth:`stub`).
        """
        import ipywidgets as widgets
        from IPython.display import display

        from attnlab.controls import Button  # native buttons with a visible focus ring

        shown = widgets.Output()
        hint = Button(description="Next hint", disabled=not self.hints)
        solution = Button(description="Show a solution")
        stub = Button(description="Get the stub back")
        given = [0]  # hints this panel has shown

        def next_hint(_button):
            if given[0] >= len(self.hints):
                return
            given[0] += 1
            with shown:
                display(self._hint(given[0], _PANEL))
            if given[0] >= len(self.hints):  # the last one: say so once, then no more clicks
                hint.disabled, hint.description = True, "No more hints"

        def show_solution(_button):
            with shown:
                display(self.solution())

        def show_stub(_button):
            with shown:
                display(self.stub())

        hint.on_click(next_hint)
        solution.on_click(show_solution)
        stub.on_click(show_stub)
        from attnlab.exercises.kit.display import help_panel_box  # static hints too

        panel = help_panel_box([widgets.HBox([hint, solution, stub]), shown], self)
        from attnlab.widget_lifetime import adopt  # a new run of the cell closes this panel

        return adopt(panel.add_class("attnlab-help"))

    def solution(self) -> Text:
        """A worked solution, read from the lesson's source notebook in the repository.

        Graded course runs install attnlab without the repository's ``source/`` folder, so
        there is no solution to show; ``ATTNLAB_HIDE_SOLUTIONS=1`` switches it off as well.
        """
        from attnlab.exercises.solutions import worked_solution

        if solutions_hidden():
            return Text("Solutions are switched off for this course run.")
        body = worked_solution(self.name)
        if body is None:
            return Text(
                "Worked solutions are not part of this installation (a graded course "
                "run installs the course without them). Ask your instructor, or work "
                "from a clone of the course repository."
            )
        return Text(
            f"**A solution.** Try it only after you have had a go.\n\n```python\n{body}\n```"
        )

    def stub(self) -> Text:
        """The answer cell as the lesson first gave it, to paste back over an answer.

        The stub the lesson shipped (:func:`attnlab.exercises.solutions.original_stub`), never
        the learner's saved notebook; an installation without it says whom to ask.
        """
        from attnlab.exercises.solutions import original_stub

        body = original_stub(self.name)
        if body is None:
            return Text(
                "The original notebooks are not part of this installation. Fetch the "
                "assignment again into another folder, or ask your instructor."
            )
        return Text(
            "**The answer cell as the lesson gave it.** To start again, select everything in "
            "your answer cell (click in it, Ctrl+A), paste this over it and run the cell "
            "(Shift+Enter). Keep that cell: grading reads your answer from it.\n\n"
            f"```python\n{body}\n```"
        )


def _grade_id(answer: str | None) -> str | None:
    """The grade cell's usual ``grade_id``: ``"check-attention-output"`` for
    ``attention_output`` (None without an answer)."""
    return None if answer is None else "check-" + answer.replace("_", "-")


#: The first "not yet right" says where the hints are: the help panel under the check.
_STUCK = "Stuck? Press Next hint in the panel below this check, or run `{call}`."


#: The end of a hint, in the words of where it was asked for: a call or the help panel.
_CALLED = {
    "more": "Call `.hint()` again for a stronger one.",
    "last": "That was the last hint; `.solution()` shows a worked answer.",
}


_PANEL = {
    "more": "Press Next hint for a stronger one.",
    "last": "That was the last hint; press Show a solution for a worked answer.",
}
