"""Checked exercises: three outcomes, tiered hints, a solution on request.

A learner writes a function in the notebook and passes it to
``exercise.check(fn)``. The answer is called on inputs chosen by the checker and
compared with a reference computed by :mod:`attnlab`'s own numerics. The result
is one of:

* **not attempted yet** — the answer is still the stub (``None``, ``...``, or a
  function that raises ``NotImplementedError``); no traceback;
* **not yet right** — with a reason that helps: the input, what was expected,
  what came back;
* **correct**.

In a learner's notebook (IPython) a check also says when the answer cell's latest run stopped
before defining the function (**answer cell did not run**, see :mod:`attnlab.exercises.cells`),
and an interrupted check ends with one sentence (:class:`CheckInterrupted`), not a traceback.
Where the notebook can be found (JupyterLab, ``nbgrader validate``), a check also says when the
notebook hides the answer from grading: the function is in a cell without the exercise's tag, the
answer cell was copied, or it is gone (**grading will not see this answer**, see
:mod:`attnlab.exercises.answer_cells`).

Under nbgrader's autograder or validator (``NBGRADER_EXECUTION`` is set) and when
``ATTNLAB_REQUIRE_CORRECT=1``, anything but *correct* raises ``AssertionError`` so
the grade cell fails as nbgrader expects.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import enum
import html
import importlib
import inspect
import os
import re
import sys
import threading
import time
import types
import warnings
from dataclasses import dataclass

import numpy as np


class Outcome(enum.Enum):
    NOT_ATTEMPTED = "not attempted yet"
    WRONG = "not yet right"
    CORRECT = "correct"
    RECORDED = "recorded"  #: a graded quiz without its key at hand: marked after submission
    NOT_RUN = "answer cell did not run"  #: its latest run stopped before defining the answer
    #: the notebook hides the answer from grading (see :mod:`attnlab.exercises.answer_cells`)
    NOT_GRADED = "grading will not see this answer"


class Wrong(Exception):
    """Raised by a checker: the answer is wrong, and the message says how.

    ``score`` is the share of the exercise's points the answer still earns (a quiz with some
    questions right); 0 for an ordinary wrong answer.
    """

    def __init__(self, message="", score: float = 0.0):
        super().__init__(message)
        self.score = float(score)


class Recorded(Exception):
    """Raised by a checker that cannot judge here (a graded quiz): the answer is complete and
    will be marked after submission."""


class Forbidden(Exception):
    """The learner's function called a function its exercise forbids (the name is the message)."""


class NotAttempted(Exception):
    """Raised by a checker: the answer is still the stub."""


class CheckInterrupted(KeyboardInterrupt):
    """A check stopped by the learner (Kernel › Interrupt): IPython shows the message alone.

    It is a ``KeyboardInterrupt``, so the cell still fails and a "Run All" stops there.
    """

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


_STYLE = {
    Outcome.NOT_ATTEMPTED: ("#555", "#f3f3f3", "○"),
    Outcome.WRONG: ("#8a1c00", "#fff0eb", "✗"),
    Outcome.CORRECT: ("#135e1e", "#ecf8ee", "✓"),
    Outcome.RECORDED: ("#1c4f8a", "#eef4fb", "✎"),
    Outcome.NOT_RUN: ("#7a4b00", "#fff7e0", "!"),
    Outcome.NOT_GRADED: ("#7a4b00", "#fff7e0", "!"),
}


@dataclass(frozen=True)
class Feedback:
    """What a check found. Truthy only when the answer is correct."""

    exercise: str
    outcome: Outcome
    message: str
    score: float = 0.0  #: share of the points earned: 1 when correct, partial for a quiz

    def __bool__(self) -> bool:
        return self.outcome in (Outcome.CORRECT, Outcome.RECORDED)

    def __str__(self) -> str:
        mark = _STYLE[self.outcome][2]
        return f"{mark} {self.exercise}: {self.outcome.value}. {self.message}".rstrip()

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour, background, mark = _STYLE[self.outcome]
        body = code_spans_html(self.message).replace("\n", "<br>")
        return (
            f'<div class="attnlab-feedback attnlab-{self.outcome.name.lower()}" '
            f'style="color:{colour};background:{background};padding:6px 10px;'
            f'border-left:4px solid {colour}">'
            f"<b>{mark} {html.escape(self.exercise)}: {self.outcome.value}.</b> {body}</div>"
        )


@dataclass(frozen=True)
class Text:
    """A hint or a solution: Markdown in the notebook, plain text elsewhere."""

    markdown: str

    def __str__(self) -> str:
        return self.markdown

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return self.markdown


def must_pass() -> bool:
    """True under nbgrader's autograder/validator or with ``ATTNLAB_REQUIRE_CORRECT=1``."""
    return bool(os.environ.get("NBGRADER_EXECUTION")) or (
        os.environ.get("ATTNLAB_REQUIRE_CORRECT") == "1"
    )


def solutions_hidden() -> bool:
    """Instructors set ``ATTNLAB_HIDE_SOLUTIONS=1`` to switch :meth:`Exercise.solution` off."""
    return os.environ.get("ATTNLAB_HIDE_SOLUTIONS") == "1"


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

    Examples
    --------
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

    def __init__(self, title, checker, hints, solution=None, forbidden=()):
        self.title = title
        self.checker = checker
        self.hints = list(hints)
        self.declared_forbidden = tuple(forbidden)
        self._derived: tuple | None = None
        self._hints_shown = 0

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
        from attnlab.exercises.cells import stale_message

        stale = stale_message(answer)
        refused = answer_cell_problems(answer, self.forbidden)
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
            from attnlab.exercises.answer_cells import reviewed

            feedback = reviewed(self, answer, feedback)
        from attnlab.progress import record

        record(self.name, feedback.outcome.value)  # the learner's own "done so far" (lesson 0)
        if must_pass() and not feedback:
            raise AssertionError(str(feedback))
        return feedback

    def grade(self, answer) -> Feedback:
        """The feedback on ``answer``, never raising; ``feedback.score`` is the share earned."""
        if is_stub(answer):
            return Feedback(self.title, Outcome.NOT_ATTEMPTED, _NOT_ATTEMPTED_TEXT)
        token = _FORBIDDEN.set(self.forbidden)
        try:
            self.checker(answer)
        except NotAttempted as exc:
            return Feedback(self.title, Outcome.NOT_ATTEMPTED, str(exc) or _NOT_ATTEMPTED_TEXT)
        except Recorded as exc:
            return Feedback(self.title, Outcome.RECORDED, str(exc))
        except Wrong as exc:
            tip = "" if self._hints_shown else _STUCK.format(call=f"{self.name or ''}.hint()")
            return Feedback(self.title, Outcome.WRONG, joined(str(exc), tip), exc.score)
        finally:
            _FORBIDDEN.reset(token)
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
        panel = widgets.VBox([widgets.HBox([hint, solution, stub]), shown])
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

        Read from the learner notebook in ``notebooks/`` (or made from the lesson's source the way
        nbgrader makes it); a graded installation without either says whom to ask.
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

    @property
    def name(self) -> str | None:
        """Where the notebooks find this exercise, e.g. ``"lesson1.dot"`` (None if nowhere)."""
        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("attnlab.exercises.lesson") and module is not None:
                for attr, value in vars(module).items():
                    if value is self or (
                        isinstance(value, Exercise)
                        and value.title == self.title
                        and value.checker is self.checker
                    ):
                        return f"{module_name.rpartition('.')[2]}.{attr}"
        return None


#: The first "not yet right" says where the hints are: the help panel under the check.
_STUCK = "Stuck? Press Next hint in the panel below this check, or run `{call}`."


def interrupted_sentence(seconds: float, in_answer: bool) -> str:
    """What an interrupted check says, in place of a traceback.

    Examples
    --------
    >>> interrupted_sentence(12.3, in_answer=True)[:60]
    'Check interrupted: your function was still running after 12 '
    """
    after = f"{max(1, round(seconds))} s"
    if in_answer:
        return (
            f"Check interrupted: your function was still running after {after}. If it "
            "loops forever, look at what should end each loop (a `while` condition that "
            "never turns false, a counter that is never updated), then run your cell and "
            "this check again."
        )
    return (
        f"Check interrupted after {after}, before it had judged your answer; run the "
        "check again to see the result."
    )


def joined(message: str, tip: str) -> str:
    """``message`` and ``tip`` as two sentences: a full stop is added only where one is missing.

    Examples
    --------
    >>> joined("raised NameError: name 'x' is not defined", "Stuck?")
    "raised NameError: name 'x' is not defined. Stuck?"
    >>> joined("Expected 3.", "Stuck?")
    'Expected 3. Stuck?'
    """
    message = finished(message)
    if not tip:
        return message
    return f"{message} {tip}" if message else tip


def finished(sentence: str) -> str:
    """``sentence`` ending in a full stop, unless it already ends in one (or in ``?``, ``!``,
    ``…``, also before a closing bracket or quote).

    Examples
    --------
    >>> finished("raised KeyError: 'oops'"), finished("(as above.)"), finished("")
    ("raised KeyError: 'oops'.", '(as above.)', '')
    """
    sentence = sentence.rstrip()
    if sentence and sentence.rstrip(")]'\"”’»`")[-1:] not in (".", "!", "?", "…"):
        sentence += "."
    return sentence


def code_spans_html(text: str) -> str:
    """``text`` escaped for HTML, its Markdown code spans (`` `x` ``) shown as ``<code>``.

    Examples
    --------
    >>> code_spans_html("Did you forget `return`? a < b")
    'Did you forget <code>return</code>? a &lt; b'
    """
    parts = re.split(r"`([^`\n]+)`", text)
    return "".join(
        f"<code>{html.escape(part)}</code>" if i % 2 else html.escape(part)
        for i, part in enumerate(parts)
    )


#: The end of a hint, in the words of where it was asked for: a call or the help panel.
_CALLED = {
    "more": "Call `.hint()` again for a stronger one.",
    "last": "That was the last hint; `.solution()` shows a worked answer.",
}
_PANEL = {
    "more": "Press Next hint for a stronger one.",
    "last": "That was the last hint; press Show a solution for a worked answer.",
}


_NOT_ATTEMPTED_TEXT = (
    "Write your answer in the cell above (replace the `raise NotImplementedError()` line), "
    "run that cell, then run this check again."
)


#: Longest one call of a learner's function may take (seconds), in the learner's check and in
#: grading (:data:`attnlab.grading.remote.CALL_TIMEOUT` is this number).
CALL_LIMIT = 20.0

#: Extra entropy for every seeded generator a check draws its cases from; set by the grading
#: process (:func:`grading_seed`) to a number drawn at grading time. None in a learner's check,
#: which stays deterministic.
_SALT: contextvars.ContextVar[int | None] = contextvars.ContextVar("salt", default=None)


@contextlib.contextmanager
def grading_seed(salt: int | None):
    """Draw the cases of every check run inside the block from seeds mixed with ``salt``.

    The lessons seed their cases (``np.random.default_rng(7)``) so a learner's check is the
    same every time; a precomputed table of outputs would pass those. Under grading the same
    generators are seeded with ``[seed, salt]`` instead, ``salt`` drawn from ``os.urandom`` when
    the notebook is graded, so the inputs cannot be known in advance.
    """
    token = _SALT.set(salt)
    try:
        yield
    finally:
        _SALT.reset(token)


@contextlib.contextmanager
def salted_seeds():
    """While a check draws its cases: ``np.random.default_rng(seed)`` seeded with the grading
    salt as well (see :func:`grading_seed`); nothing changes when there is none."""
    salt = _SALT.get()
    if salt is None:
        yield
        return
    original = np.random.default_rng

    def default_rng(seed=None):
        if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.BitGenerator)):
            return original(seed)
        seed = [int(s) for s in np.ravel(seed)] if np.ndim(seed) else [int(seed)]
        return original([*seed, salt])

    np.random.default_rng = default_rng
    try:
        yield
    finally:
        np.random.default_rng = original


def course_helpers() -> dict[str, object]:
    """Every public function of the course's numerics (:data:`attnlab.course.NUMERICS`) and
    running examples (:mod:`attnlab.examples`), the modules an answer may import, by its
    qualified name (``"attnlab.softmax_family.softmax"``)."""
    from attnlab.course import NUMERICS

    found = {}
    for module_name in (*NUMERICS, "attnlab.examples"):
        module = importlib.import_module(module_name)
        for key, value in vars(module).items():
            if (
                not key.startswith("_")
                and inspect.isfunction(value)
                and value.__module__ == module_name
            ):
                found[f"{module_name}.{key}"] = value
    return found


def _covered(name: str, function, declared) -> bool:
    """Whether ``declared`` already forbids ``function`` (by any of its names, or its module)."""
    short = name.rpartition(".")[2]
    module = name.rpartition(".")[0]
    for forbidden in declared:
        if forbidden in (name, module, f"attnlab.{short}"):
            return True
    return False


def helpers_that_pass(checker, declared=()) -> list[str]:
    """The course helpers that pass ``checker`` when handed in as the answer, unforbidden.

    Each public function of the numerics is tried as the learner's function on the check's
    own cases (quietly, without a forbidden list): one that is judged right computes what the
    exercise asks, so the exercise must forbid it. ``declared`` names already forbidden are
    not tried again.

    Examples
    --------
    >>> def checker(answer):
    ...     expect_close(call(answer, np.array([0.0, 0.0])), [0.5, 0.5], "softmax")
    >>> [name for name in helpers_that_pass(checker) if name.endswith(".softmax")]
    ['attnlab.softmax_family.softmax']
    """
    found = []
    token = _FORBIDDEN.set(())
    try:
        for name, function in course_helpers().items():
            if _covered(name, function, declared):
                continue
            if any(_passes(checker, way) for way in _ways_to_hand_in(function)):
                found.append(name)
    finally:
        _FORBIDDEN.reset(token)
    return found


def _ways_to_hand_in(function) -> list:
    """``function`` as an answer: as it is, and the first item of what it returns (a helper
    that returns ``(output, weights)`` answers an exercise that wants the output)."""

    def first(*args, **kwargs):
        got = function(*args, **kwargs)
        return got[0] if isinstance(got, tuple) and got else got

    return [function, first]


def _passes(checker, answer) -> bool:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            checker(answer)
    except Exception:  # noqa: BLE001 - Wrong, NotAttempted, Recorded …: not a pass
        return False
    return True


_CELL_FILE = re.compile(r"(^<ipython-input-\d+-)|(ipykernel_\d+[/\\]\d+\.py$)")


def answer_cell_problems(answer, forbidden=()) -> list[str]:
    """What grading would refuse in the notebook cell that defined ``answer`` (the same lint,
    :func:`attnlab.grading.lint.problems`), or ``[]`` outside a notebook."""
    code = getattr(answer, "__code__", None)
    filename = getattr(code, "co_filename", "")
    if not isinstance(filename, str) or not _CELL_FILE.search(filename):
        return []
    import linecache

    from attnlab.grading.lint import notebook_refused, problems

    source = "".join(linecache.getlines(filename))
    if not source:
        return []
    try:
        from IPython import get_ipython

        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else {}
    except ImportError:
        namespace = {}
    return problems(source, forbidden=forbidden, refused=notebook_refused(namespace))


def refused_message(reasons) -> str:
    """What a learner (and the grader's feedback) reads about an answer cell grading refuses."""
    return (
        "Your answer cell would not be run for grading, because "
        + "; ".join(reasons)
        + ". Graded answers may use numpy, math and the course's own functions, and nothing "
        "that reaches into the notebook, the interpreter or the disk. Change the cell, run "
        "it, then run this check again."
    )


#: The functions the exercise being checked forbids (set by :meth:`Exercise.grade`).
_FORBIDDEN: contextvars.ContextVar[tuple] = contextvars.ContextVar("forbidden", default=())


def forbidden_now() -> tuple:
    """The names the exercise being checked forbids (``"attnlab.softmax"``, notebook names)."""
    return _FORBIDDEN.get()


def _forbidden_codes(names) -> dict:
    """The code objects of the forbidden functions that can be found, mapped to their names."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        notebook = shell.user_ns if shell is not None else {}
    except ImportError:
        notebook = {}
    return forbidden_code_objects(names, notebook)


def _codes_within(code) -> list:
    """``code`` and the code of every function defined inside it."""
    found, todo = [], [code]
    while todo:
        found.append(todo.pop())
        todo += [c for c in found[-1].co_consts if isinstance(c, types.CodeType)]
    return found


def _course_functions() -> list:
    """Every function of the course's numerics, public and private, with class methods."""
    from attnlab.course import NUMERICS

    found = []
    for module_name in NUMERICS:
        module = importlib.import_module(module_name)
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) != module_name:
                continue
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                member = getattr(member, "__func__", member)
                member = getattr(member, "fget", member)
                if isinstance(member, types.FunctionType):
                    found.append(member)
    return found


def _callees(function) -> list:
    """The course functions ``function`` names: globals, attributes of modules it names, the
    methods of classes it names, and the functions in its closure."""
    names = set()
    for code in _codes_within(function.__code__):
        names.update(code.co_names)
    space = getattr(function, "__globals__", {})
    out = []
    for name in names:
        value = space.get(name)
        if isinstance(value, types.ModuleType):
            out += [getattr(value, other, None) for other in names]
        elif isinstance(value, type):
            out += list(vars(value).values())
        else:
            out.append(value)
    out += [cell.cell_contents for cell in (function.__closure__ or ()) if _filled(cell)]
    return [
        getattr(f, "__func__", f)
        for f in out
        if isinstance(getattr(f, "__func__", f), types.FunctionType)
    ]


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def codes_of(codes, function) -> set:
    """The code objects of ``function`` that are among ``codes``."""
    return {code for code in _codes_within(function.__code__) if code in codes}


def reaching_codes(codes) -> dict:
    """Code object -> the course function it belongs to, for every course function (private
    ones too) that computes what the functions with ``codes`` compute: the private helpers
    those call (``softmax`` -> ``_softmax_in_place``), and every course function that calls
    into one of them, however indirectly (``training.head_forward``).

    >>> from attnlab.softmax_family import softmax
    >>> from attnlab.training import head_forward
    >>> head_forward.__code__ in reaching_codes(set(_codes_within(softmax.__code__)))
    True
    """
    functions = _course_functions()
    graph = {f: [g for g in _callees(f) if g in set(functions)] for f in functions}
    targets = {f for f in functions if f.__code__ in codes}
    todo = list(targets)
    public_callers = {
        g: sum(1 for f, callees in graph.items() if g in callees and f.__name__[0] != "_")
        for g in functions
    }
    helpers = set()
    for f in todo:  # down, one level: the private helpers a forbidden function computes
        # with (not the utilities many public functions share, such as argument checks)
        for g in graph.get(f, ()):
            if g.__name__[0] == "_" and public_callers[g] <= 2:
                helpers.add(g)
    targets |= helpers
    import attnlab

    # The course's own building blocks (``attnlab.softmax``, ``attnlab.causal_mask``, ...) are
    # never forbidden by reaching: a lesson that refuses one names it (or its check derives
    # it); every exercise that allows them must keep allowing them.
    exported = {getattr(attnlab, name) for name in attnlab.__all__}
    reached = set(targets)
    changed = True
    while changed:  # up: everything that calls into them
        changed = False
        for f, callees in graph.items():
            if f in exported:
                continue
            if f not in reached and any(g in reached for g in callees):
                reached.add(f)
                changed = True
    # What an allowed building block runs is allowed: attnlab.softmax's _softmax_in_place also
    # serves scaled_dot_product_attention, attention_scores' _scores serves tiled_attention,
    # and 7.4 allows softmax and attention_scores. Only the forbidden functions themselves
    # and what nothing allowed runs are flagged.
    allowed = [f for f in exported if f in graph and not codes_of(codes, f)]
    runs_allowed = set()
    while allowed:
        f = allowed.pop()
        for g in graph.get(f, ()):
            if g not in runs_allowed:
                runs_allowed.add(g)
                allowed.append(g)
    shared = {f for f in reached & runs_allowed if not codes_of(codes, f)}
    found = {}
    for f in reached - shared:
        shown = f"{f.__module__}.{f.__qualname__}"
        for inner in _codes_within(f.__code__):
            found.setdefault(inner, shown)
    return found


def forbidden_code_objects(names, namespace) -> dict:
    """Code object -> forbidden name, for every function the names stand for.

    A name is a function (``"attnlab.softmax"``), a whole module (``"attnlab.online"``: every
    public function and class defined there, with their methods) or a name in the notebook's
    ``namespace`` (``"softmax_steps"``). Functions nested in them count too. Names that cannot
    be found are skipped.

    Examples
    --------
    >>> codes = forbidden_code_objects(["attnlab.online", "attnlab.softmax"], {})
    >>> sorted(set(codes.values()))
    ['attnlab.online.online_normaliser', 'attnlab.online.online_softmax', \
'attnlab.online.online_softmax_update', 'attnlab.softmax']
    """
    codes, reach = {}, []
    for name in names:
        module, _, attr = name.rpartition(".")
        targets = []
        if module:
            try:
                whole = importlib.import_module(name)
            except ImportError:
                whole = None
            if isinstance(whole, types.ModuleType):
                for key, value in vars(whole).items():
                    if key.startswith("_"):
                        continue
                    members = vars(value).values() if isinstance(value, type) else [value]
                    targets += [
                        (f"{name}.{getattr(m, '__name__', '?')}", m)
                        for m in members
                        if getattr(m, "__module__", None) == whole.__name__
                    ]
        if not targets:
            try:
                target = (
                    getattr(importlib.import_module(module), attr) if module else namespace[name]
                )
            except (ImportError, AttributeError, KeyError):
                continue
            targets = [(name, target)]
        for shown, target in targets:
            code = getattr(inspect.unwrap(target), "__code__", None) if callable(target) else None
            own = _codes_within(code) if code is not None else ()
            for inner in own:
                codes.setdefault(inner, shown)
            if own and module:
                reach.append((shown, set(own)))
    for shown, own in reach:  # the course functions that compute the same thing
        for inner in reaching_codes(own):
            codes.setdefault(inner, shown)
    return codes


@contextlib.contextmanager
def forbidding(names):
    """Raise :class:`Forbidden` after the block if it entered one of the functions ``names``.

    Functions that call into other processes (the grader's remote answers) enforce the same
    list themselves; this guards a learner's own kernel.
    """
    codes = _forbidden_codes(names) if names else {}
    if not codes:
        yield
        return
    hits = []

    def watch(frame, event, arg):
        if event == "call" and frame.f_code in codes and not hits:
            hits.append(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield
    finally:
        sys.setprofile(previous)
    if hits:
        raise Forbidden(hits[0])


def is_stub(answer) -> bool:
    """True for answers that are still placeholders: ``None`` or ``...``."""
    return answer is None or answer is Ellipsis


class _OverCallLimit(BaseException):
    """A learner's call ran past :data:`CALL_LIMIT` (a BaseException: ``except Exception`` in
    the answer does not swallow it)."""


@contextlib.contextmanager
def _stopped_after(seconds: float):
    """Stop the block with :class:`_OverCallLimit` after ``seconds``, as grading stops a call.

    Uses the real-time interval timer, so only in the main thread (where a notebook runs its
    cells) and only when no other timer is running; elsewhere the block runs to its end and
    :func:`call` says afterwards that it took too long.
    """
    try:
        import signal

        usable = (
            threading.current_thread() is threading.main_thread()
            and hasattr(signal, "setitimer")
            and signal.getitimer(signal.ITIMER_REAL)[0] == 0
        )
    except (ImportError, ValueError):
        usable = False
    if not usable or seconds <= 0:
        yield
        return

    def over(signum, frame):
        raise _OverCallLimit

    previous = signal.signal(signal.SIGALRM, over)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


def call(function, *args, **kwargs):
    """Call a learner's function on copies of the inputs and turn its failures into feedback.

    Raises
    ------
    NotAttempted
        The function still raises ``NotImplementedError`` (the exercise stub).
    Wrong
        It is not callable, raised another exception, returned ``None``, or changed its inputs.
    """
    if not callable(function):
        raise Wrong(f"Expected a function, got {type(function).__name__} {function!r}.")
    shown = ", ".join([short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()])
    before = copy.deepcopy((args, kwargs))
    began = time.monotonic()
    timed_here = not getattr(function, "timed_elsewhere", False)
    try:
        with (
            _stopped_after(CALL_LIMIT) if timed_here else contextlib.nullcontext(),
            forbidding(_FORBIDDEN.get()),
        ):
            result = function(*args, **kwargs)
    except _OverCallLimit:
        raise Wrong(
            f"Your function was still running after {CALL_LIMIT:g} s for ({shown}), so the "
            f"check stopped it: grading stops any call after {CALL_LIMIT:g} s and gives such "
            "an answer nothing, right numbers or not, so this check stops it at the same "
            "limit. Look for work done again and again in a loop, or a Python loop over "
            "single numbers that numpy could do on a whole row at once."
        ) from None
    except NotImplementedError as exc:
        raise NotAttempted(_NOT_ATTEMPTED_TEXT) from exc
    except KeyboardInterrupt as exc:
        exc.in_answer = True  # the learner's function was running: the check's message says so
        raise
    except Forbidden as exc:
        raise Wrong(
            f"Your function calls {exc}, which this exercise asks you not to use: the point is "
            "to write that step yourself with numpy."
        ) from None
    except Exception as exc:
        said = f": {exc}" if str(exc) else ""
        raise Wrong(
            finished(f"Calling your function with ({shown}) raised {type(exc).__name__}{said}")
        ) from exc
    took = time.monotonic() - began
    if took > CALL_LIMIT and timed_here:  # where the check could not stop it (not the main thread)
        raise Wrong(
            f"Your function took {took:.0f} s for ({shown}). The right numbers are not enough "
            f"here: grading stops any call after {CALL_LIMIT:g} s, so this answer would earn "
            "nothing. Look for work done again and again in a loop, or a Python loop over "
            "single numbers that numpy could do on a whole row at once."
        )
    if result is None:
        raise Wrong(f"Your function returned None for ({shown}). Did you forget `return`?")
    if not _same((args, kwargs), before):
        raise Wrong(f"Your function changed its input ({shown}); compute a new array instead.")
    return result


def call_watching(function, *args):
    """:func:`call`, also returning the numpy warnings the learner's function caused.

    Divide-by-zero, invalid (``inf - inf``, ``0 · -inf``) and overflow are recorded,
    underflow is ignored (``exp(-1000) == 0`` is correct), and nothing escapes to the
    notebook: the checks report the messages in their reason (see :func:`warned`).

    Examples
    --------
    >>> result, messages = call_watching(lambda x: np.exp(x), np.array([1000.0]))
    >>> messages
    ['overflow encountered in exp']
    """
    with (
        warnings.catch_warnings(record=True) as caught,
        np.errstate(divide="warn", invalid="warn", over="warn", under="ignore"),
    ):
        warnings.simplefilter("always")
        result = call(function, *args)
    messages = sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})
    return result, messages


def warned(messages) -> str:
    """The end of a reason that names the numpy warnings, or nothing if there were none."""
    return f" numpy warned: {'; '.join(messages)}." if messages else ""


def one_line(value) -> str:
    """What the learner returned, in one line of at most 300 characters; never fails."""
    try:
        text = short(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 300 else f"{text[:300]}…"


def hidden_difference(got, expected) -> str:
    """When ``got`` and ``expected`` print alike, a sentence giving the difference the digits
    hide (so a message never calls equal-looking numbers wrong without saying why); else ''.

    Examples
    --------
    >>> hidden_difference([1.0, 2.0], [1.0, 2.00004])
    ' They agree to the digits shown, but differ by up to 4e-05, more than rounding (even in \
float32) explains.'
    >>> hidden_difference([1.0], [1.5])
    ''
    """
    if short(got) != short(expected):
        return ""
    gap = float(np.max(np.abs(np.asarray(got, float) - np.asarray(expected, float))))
    return (
        f" They agree to the digits shown, but differ by up to {gap:.3g}, more than "
        "rounding (even in float32) explains."
    )


def expect_close(got, expected, what, rtol=1e-6, atol=1e-9) -> np.ndarray:
    """Raise :class:`Wrong` unless ``got`` has the shape and (nearly) the values of ``expected``."""
    expected = np.asarray(expected)
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError) as exc:
        raise Wrong(f"{what} should be numbers; got {short(got)}.") from exc
    if got.shape != expected.shape:
        raise Wrong(f"{what} should have shape {expected.shape}, but yours has shape {got.shape}.")
    if not np.all(np.isfinite(got)):
        raise Wrong(f"{what} contains nan or inf: {short(got)}. Expected {short(expected)}.")
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        raise Wrong(f"{what} should be {short(expected)}, but yours gave {short(got)}.")
    return got


#: Every library function that computes a softmax, whole modules included (naive, stable,
#: masked, online, tiled, inside attention): forbidden where an exercise is to write one.
SOFTMAX_LIBRARY = (
    "attnlab.softmax",
    "attnlab.log_softmax",
    "attnlab.softmax_family",
    "attnlab.online",
    "attnlab.tiling",
    "attnlab.scaled_dot_product_attention",
    "attnlab.attention.scaled_dot_product_attention",
    "scipy.special.softmax",
    "scipy.special.log_softmax",
)


# ------------------------------------------------------------------ the case loop, written once
def _after_description(case) -> tuple:
    """The call's arguments of a ``(description, *arguments)`` case."""
    return tuple(case[1:])


@dataclass(frozen=True)
class Cases:
    """A checker as data: the inputs a learner's function is tried on, and how each is judged.

    Calling it runs the one checking loop every exercise shares: for each case, call the
    answer on fresh copies of its arguments (:func:`call_watching`: forbidden calls, stubs,
    exceptions, a returned ``None`` and changed inputs become feedback, numpy's warnings are
    collected), then ``judge`` the result. The first case that fails stops the check.

    Parameters
    ----------
    cases : callable
        ``cases()`` returns the cases in the order they are tried, each as the lesson states
        it (a ``(description, *arguments)`` tuple by default, or any object ``inputs`` reads).
    judge : callable
        ``judge(got, case, messages)`` returns when ``got`` is right for ``case`` and raises
        :class:`Wrong` with a reason otherwise; ``messages`` are numpy's warnings (see
        :func:`warned`).
    inputs : callable, optional
        ``inputs(case)`` gives the call's arguments; by default everything after the
        description. Arrays are copied before each call, so a case can be reused.
    failed : callable, optional
        ``failed(exc, case)`` gives the message when calling the answer raised :class:`Wrong`
        (it raised an exception, returned None, …); ``None`` keeps ``exc``'s own message.
    what : callable, optional
        ``what(case)`` names the call in feedback, e.g. ``"mix_one(w, values) for the 2-D
        example,"``; without ``failed``, a failed call then reads ``"<what> failed. <reason>"``.
    call : callable, optional
        How the answer is called: ``call(answer, *arguments)`` returns ``(got, messages,
        *extra)`` and the judge receives the extras after ``messages`` (e.g. the bytes a call
        allocated). :func:`call_watching` by default.
    with_answer : bool, optional
        Pass the answer itself to the judge as its first argument, ``judge(answer, got, case,
        messages)``, for a diagnosis that tries the answer on other inputs.

    Examples
    --------
    >>> def judge(got, case, messages):
    ...     expect_close(got, case[1] ** 2, f"square({case[1]})")
    >>> squares = Cases(lambda: [("two", 2.0), ("minus three", -3.0)], judge)
    >>> squares(lambda x: x * x) is None
    True
    >>> try:
    ...     squares(lambda x: 2 * x)
    ... except Wrong as exc:
    ...     print(exc)
    square(-3.0) should be 9, but yours gave -6.
    """

    cases: object
    judge: object
    inputs: object = _after_description
    failed: object = None
    what: object = None
    call: object = None
    with_answer: bool = False

    def __call__(self, answer) -> None:
        call_answer = self.call or call_watching
        with salted_seeds():
            cases = list(self.cases())
        for case in cases:
            arguments = [a.copy() if isinstance(a, np.ndarray) else a for a in self.inputs(case)]
            try:
                got, messages, *extra = call_answer(answer, *arguments)
            except Wrong as exc:
                message = self._failed_message(exc, case)
                if message is None:
                    raise
                raise Wrong(message) from None
            judged = (
                (answer, got, case, messages, *extra)
                if self.with_answer
                else (got, case, messages, *extra)
            )
            self.judge(*judged)

    def _failed_message(self, exc: Wrong, case) -> str | None:
        """The message for a call that failed, or None to keep ``exc`` as it is."""
        if self.failed is not None:
            return self.failed(exc, case)
        if self.what is not None:
            return f"{self.what(case)} failed. {exc}"
        return None


def as_number(value) -> float | None:
    """``value`` as one float, or None when it is not a single real number.

    Accepts Python and numpy numbers and 0-d arrays; refuses strings, booleans and arrays with
    more than one entry. ``nan`` and ``inf`` come back as they are (the caller decides).

    Examples
    --------
    >>> as_number(np.float32(0.5)), as_number(np.array(3)), as_number([1.0]), as_number("1")
    (0.5, 3.0, None, None)
    """
    if isinstance(value, (str, bytes, bool, np.bool_)):
        return None
    try:
        return float(value) if np.ndim(value) == 0 else None
    except (TypeError, ValueError):  # not a number, or a ragged list (np.ndim raises)
        return None


def as_numbers(got, what: str, shape) -> np.ndarray:
    """``got`` as a float array, or :class:`Wrong` saying it should be numbers of ``shape``.

    Examples
    --------
    >>> as_numbers([1, 2], "out", (2,))
    array([1., 2.])
    """
    try:
        return np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(
            f"{what} should be an array of numbers of shape {shape}; got {one_line(got)}."
        ) from None


def same_values(got, wrong, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """``got`` has the shape and (to rounding) the values of ``wrong``; nan matches nan.

    Examples
    --------
    >>> same_values(np.array([0.5, 0.5]), [0.5, 0.5 + 1e-12]), same_values([1.0], [[1.0]])
    (True, False)
    """
    got, wrong = np.asarray(got, dtype=float), np.asarray(wrong, dtype=float)
    return wrong.shape == got.shape and bool(
        np.allclose(got, wrong, rtol=rtol, atol=atol, equal_nan=True)
    )


def recognised(got, mistakes, rtol: float = 1e-6, atol: float = 1e-9) -> str:
    """The explanation of the first known mistake whose output ``got`` equals, or ''.

    Parameters
    ----------
    got : array_like
        What the learner's function returned; '' when it is not numbers.
    mistakes : iterable of (array_like or None, str)
        Each known-wrong output (computed from the case's inputs) with the sentence that
        explains it; a ``None`` output is skipped (the mistake cannot happen for this case).

    Examples
    --------
    >>> recognised([2.0, 2.0], [(None, "n/a"), ([1.0, 3.0], "sorted"), ([2.0, 2.0], "mean")])
    'mean'
    """
    try:
        got = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return ""
    return next(
        (
            explanation
            for wrong, explanation in mistakes
            if wrong is not None and same_values(got, wrong, rtol, atol)
        ),
        "",
    )


def quietly(formula, *args):
    """Evaluate a known-wrong formula (to recognise its output) without any numpy warning."""
    with np.errstate(all="ignore"):
        return formula(*args)


def short(value) -> str:
    """A number or an array as a learner writes it: ``[0, 0.25, 1]``, without numpy's padding.

    At most 4 significant digits, no alignment padding, long rows elided; anything that is
    not numeric (or a ragged list) falls back to ``repr``.

    >>> short(np.array([[0.0, 1.0], [0.25, -1e-9]]))
    '[[0, 1], [0.25, -1e-09]]'
    >>> short([[1, 2], [3]])
    '[[1, 2], [3]]'
    >>> short((np.array([1.5, 2.0]), 1.0))
    '([1.5, 2], 1.0)'
    """
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # a ragged list: each item as a learner writes it
            items = ", ".join(short(item) for item in value)
            return f"[{items}]" if isinstance(value, list) else f"({items})"
        if array.dtype.kind in "fiub":
            return _nested(array)
    return repr(value)


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return _number(array[()])
    items = list(array) if len(array) <= 20 else [*array[:3], None, *array[-3:]]
    return "[" + ", ".join("..." if a is None else _nested(np.asarray(a)) for a in items) + "]"


def _number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if x != 0 and np.isfinite(x) and not 1e-4 <= abs(x) < 1e6:
        return np.format_float_scientific(x, precision=3, trim="-")
    return np.format_float_positional(x, precision=4, fractional=False, trim="-")


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b
