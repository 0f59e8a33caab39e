"""The feedback a learner reads: :class:`Feedback` (text and HTML), :class:`Text` for hints and
solutions, and the sentence helpers every message shares."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from attnlab.exercises.kit.outcomes import Outcome

_STYLE = {
    Outcome.NOT_ATTEMPTED: ("#555", "#f3f3f3", "○"),
    Outcome.WRONG: ("#8a1c00", "#fff0eb", "✗"),
    Outcome.CORRECT: ("#135e1e", "#ecf8ee", "✓"),
    Outcome.RECORDED: ("#1c4f8a", "#eef4fb", "✎"),
    Outcome.NOT_RUN: ("#7a4b00", "#fff7e0", "!"),
    Outcome.NOT_GRADED: ("#7a4b00", "#fff7e0", "!"),
}


#: The longest a check's message may be (characters); the rest is left out, saying so. The
#: course's longest is under 8,000; an answer's own text quoted in a reason (a 60 MB string
#: in a quiz answer, a red team's) made a 360 MB graded notebook before this.
MAX_MESSAGE = 20_000


@dataclass(frozen=True)
class Feedback:
    """What a check found. Truthy only when the answer is correct.

    A message longer than :data:`MAX_MESSAGE` characters is cut there, saying how much was
    left out."""

    exercise: str
    outcome: Outcome
    message: str
    score: float = 0.0  #: share of the points earned: 1 when correct, partial for a quiz

    def __post_init__(self) -> None:
        if len(self.message) > MAX_MESSAGE:
            left = len(self.message) - MAX_MESSAGE
            cut = f"{self.message[:MAX_MESSAGE]}… ({left:,} more characters left out)"
            object.__setattr__(self, "message", cut)

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


NOT_ATTEMPTED_TEXT = (
    "Write your answer in the cell above (replace the `raise NotImplementedError()` line), "
    "run that cell, then run this check again."
)


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
