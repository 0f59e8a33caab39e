"""The course map: every lesson, its notebooks and the code behind it, in one place.

From a lesson number to its code in one hop:

>>> lesson(3).title, lesson(3).source
('Softmax', 'source/03-softmax/03-softmax.ipynb')
>>> lesson(3).exercises, lesson(3).explorers
('attnlab.exercises.lesson3', ('attnlab.explorers.overflow.OverflowExplorer', \
'attnlab.explorers.temperature.TemperatureExplorer'))
>>> [module_file(name) for name in lesson(3).numerics]
['attnlab/softmax_family.py', 'attnlab/attention.py']

and back, from a module to the lessons that use it:

>>> [entry.number for entry in lessons_using("attnlab.tiling")]
[8]

Lesson 0 shows the course map (:class:`CourseMap`: times and totals, with what the learner has
done from :func:`attnlab.exercises.progress.course_map`); CONTRIBUTING.md's "Lesson → code" table
is :func:`code_table` (``python -m attnlab.course`` prints it); the README's lesson table is
checked against :data:`COURSE`. ``tests/test_course.py`` keeps the map true: every notebook is in
it and every lesson's notebook exists, every module it names imports and is what that lesson's
cells import, and every explorer and exercise module belongs to exactly one lesson.

This module is a leaf: it needs the standard library only and imports nothing of attnlab (the
names are strings, imported by nobody here). What the learner has done is passed in
(:attr:`CourseMap.done`) by the module that reads it, :mod:`attnlab.exercises.progress`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The numerics modules (numpy only) that lessons name in :attr:`Lesson.numerics`.
NUMERICS = (
    "attnlab.softmax_family",
    "attnlab.attention",
    "attnlab.patterns",
    "attnlab.mixing",
    "attnlab.online",
    "attnlab.tiling",
    "attnlab.backward",
    "attnlab.training",
    "attnlab.sqrt_dk",
    "attnlab.positions",
    "attnlab.repeated_tokens",
    "attnlab.attention_only",
    "attnlab.induction",
)


@dataclass(frozen=True)
class Lesson:
    """One lesson of the course: what it teaches, its notebooks and its code.

    Attributes
    ----------
    number : int
        The lesson's number, 0 to 11.
    title : str
        Its title, as its notebook's first heading says it.
    minutes : int
        Estimated time, exercises and things to try included: the time its header states.
    learn : str
        What the lesson teaches, in a few words.
    notebook : str or None
        The notebook's file name without ``.ipynb`` (the learner notebook is
        ``notebooks/<notebook>.ipynb``, the source ``source/<notebook>/<notebook>.ipynb``),
        or None while the lesson is still being written.
    exercises : str
        The module of its checked exercises, ``"attnlab.exercises.lessonN"``.
    explorers : tuple of str
        Its explorer classes, as ``"attnlab.explorers.<module>.<Class>"``.
    numerics : tuple of str
        The numerics modules (:data:`NUMERICS`) its own cells compute with, its subject first.
    """

    number: int
    title: str
    minutes: int
    learn: str
    notebook: str | None = None
    exercises: str = ""
    explorers: tuple[str, ...] = ()
    numerics: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        """True when the lesson's notebook exists."""
        return self.notebook is not None

    @property
    def source(self) -> str:
        """The source notebook (with solutions), relative to the repository root."""
        return f"source/{self.notebook}/{self.notebook}.ipynb"

    @property
    def learner(self) -> str:
        """The learner notebook built from :attr:`source`, relative to the repository root."""
        return f"notebooks/{self.notebook}.ipynb"

    @property
    def explorer_modules(self) -> tuple[str, ...]:
        """The modules of :attr:`explorers`, in order, each once."""
        return tuple(dict.fromkeys(name.rpartition(".")[0] for name in self.explorers))

    @property
    def modules(self) -> tuple[str, ...]:
        """Every module the lesson names: exercises, explorers, numerics."""
        return (self.exercises, *self.explorer_modules, *self.numerics)


def _lesson(number, notebook, title, minutes, learn, explorers, numerics) -> Lesson:
    """A ready lesson; explorers as ``"module.Class"`` and numerics as module names, in short."""
    return Lesson(
        number,
        title,
        minutes,
        learn,
        notebook,
        exercises=f"attnlab.exercises.lesson{number}",
        explorers=tuple(f"attnlab.explorers.{name}" for name in explorers),
        numerics=tuple(f"attnlab.{name}" for name in numerics),
    )


#: The whole course, in order. ``tests/test_course.py`` checks every field against the notebooks
#: and the package.
COURSE = (
    _lesson(
        0,
        "00-start-here",
        "Start here",
        20,
        "how cells, sliders, checks and hints work",
        ["score_row.ScoreRowExplorer"],
        ["softmax_family"],
    ),
    _lesson(
        1,
        "01-dot-product-scores",
        "Dot-product scores",
        40,
        "queries, keys, the score matrix Q Kᵀ and its geometry",
        ["dot_product.DotProductExplorer"],
        ["attention"],
    ),
    _lesson(
        2,
        "02-why-scale",
        "Why divide by √d_k",
        50,
        "the variance of q·k, softmax collapse, lost gradients",
        ["scaling.ScalingExplorer"],
        ["attention", "softmax_family"],
    ),
    _lesson(
        3,
        "03-softmax",
        "Softmax",
        60,
        "scores to weights, temperature, overflow and the stable form",
        ["overflow.OverflowExplorer", "temperature.TemperatureExplorer"],
        ["softmax_family", "attention"],
    ),
    _lesson(
        4,
        "04-reading-heatmaps",
        "Reading attention heatmaps",
        40,
        "the patterns a heatmap of weights can show",
        ["heatmap.HeatmapExplorer"],
        ["patterns", "attention", "softmax_family"],
    ),
    _lesson(
        5,
        "05-weighted-values",
        "Weighted values",
        40,
        "each output as a weighted mixture of value vectors",
        ["mixture.MixtureExplorer"],
        ["mixing", "attention", "softmax_family"],
    ),
    _lesson(
        6,
        "06-full-formula",
        "The full formula, shapes and masking",
        55,
        "the whole pipeline with every shape; causal and padding masks; the block around it",
        ["masking.MaskExplorer"],
        ["attention", "softmax_family", "patterns"],
    ),
    _lesson(
        7,
        "07-test-your-understanding",
        "Test your understanding",
        45,
        "a checked quiz and bug hunts from real code",
        ["bug_lab.BugLabExplorer"],
        ["attention", "softmax_family"],
    ),
    _lesson(
        8,
        "08-cost-of-attention",
        "The cost of attention",
        60,
        "time and memory grow like N²; online softmax; tiled attention, the whole loop",
        ["cost.CostExplorer"],
        ["online", "tiling", "attention", "softmax_family"],
    ),
    _lesson(
        9,
        "09-watch-a-head-learn",
        "Watch a head learn",
        50,
        "backpropagation through attention; train a head; test the √d_k claim",
        ["training.TrainingExplorer"],
        ["backward", "training", "sqrt_dk", "attention", "softmax_family", "patterns"],
    ),
    _lesson(
        10,
        "10-where-is-each-token",
        "Where is each token?",
        55,
        "attention cannot tell positions apart; sinusoidal, learned, rotary (RoPE) and ALiBi",
        ["sinusoidal.SinusoidalExplorer", "rope.RopeExplorer"],
        ["positions", "attention", "softmax_family", "training"],
    ),
    _lesson(
        11,
        "11-induction-heads",
        "Two layers make an induction head",
        60,
        "train a two-layer attention-only model live: the phase change, the induction circuit",
        ["induction.InductionExplorer"],
        ["induction", "attention_only", "repeated_tokens", "backward"],
    ),
)


def lesson(number: int) -> Lesson:
    """The lesson numbered ``number``.

    Raises
    ------
    ValueError
        If no lesson has that number.

    Examples
    --------
    >>> lesson(8).notebook, lesson(8).explorer_modules
    ('08-cost-of-attention', ('attnlab.explorers.cost',))
    """
    for entry in COURSE:
        if entry.number == number and not isinstance(number, bool):
            return entry
    raise ValueError(f"number must be a lesson number 0 to {COURSE[-1].number}; got {number!r}")


def lessons_using(module: str) -> tuple[Lesson, ...]:
    """The lessons that name ``module`` (exercises, explorer or numerics module), in order.

    Examples
    --------
    >>> [entry.number for entry in lessons_using("attnlab.explorers.masking")]
    [6]
    >>> [entry.number for entry in lessons_using("attnlab.patterns")]
    [4, 6, 9]
    >>> lessons_using("attnlab.nothing")
    ()
    """
    return tuple(entry for entry in COURSE if module in entry.modules)


def module_file(module: str) -> str:
    """The file of a module named ``"attnlab.x.y"``, relative to the repository root.

    Examples
    --------
    >>> module_file("attnlab.explorers.cost")
    'attnlab/explorers/cost.py'
    """
    return module.replace(".", "/") + ".py"


def _link(text: str, module: str) -> str:
    return f"[`{text}`]({module_file(module)})"


def code_table(lessons: tuple[Lesson, ...] = COURSE) -> str:
    """CONTRIBUTING.md's "Lesson → code" table: source, exercises, explorers, numerics.

    Every cell links to its file, relative to the repository root.

    Examples
    --------
    >>> print(code_table(COURSE[:1]))
    | lesson | source notebook | exercises | explorers | numerics |
    | --- | --- | --- | --- | --- |
    | 0 | [00-start-here](source/00-start-here/00-start-here.ipynb) | \
[`lesson0`](attnlab/exercises/lesson0.py) | \
[`ScoreRowExplorer`](attnlab/explorers/score_row.py) | \
[`softmax_family`](attnlab/softmax_family.py) |
    """
    rows = [
        "| lesson | source notebook | exercises | explorers | numerics |",
        "| --- | --- | --- | --- | --- |",
    ]
    for entry in lessons:
        explorers = ", ".join(
            _link(name.rpartition(".")[2], name.rpartition(".")[0]) for name in entry.explorers
        )
        numerics = ", ".join(_link(name.rpartition(".")[2], name) for name in entry.numerics)
        exercises = _link(entry.exercises.rpartition(".")[2], entry.exercises)
        rows.append(
            f"| {entry.number} | [{entry.notebook}]({entry.source}) | {exercises} | "
            f"{explorers} | {numerics} |"
        )
    return "\n".join(rows)


@dataclass(frozen=True)
class CourseMap:
    """The course map of lesson 0: a table of lessons with their times and totals.

    Shows as a Markdown table in a notebook and as plain text elsewhere.

    Attributes
    ----------
    lessons : tuple of Lesson
    """

    lessons: tuple
    #: lesson number -> (exercises done, exercises), given by :mod:`attnlab.exercises.progress`;
    #: None: no column
    done: dict | None = None

    @property
    def total_minutes(self) -> int:
        """Minutes for the whole course, ready or not."""
        return sum(entry.minutes for entry in self.lessons)

    @property
    def ready_minutes(self) -> int:
        """Minutes for the lessons that exist now."""
        return sum(entry.minutes for entry in self.lessons if entry.ready)

    def summary(self) -> str:
        """Both totals in one sentence, added up from the table.

        Examples
        --------
        >>> CourseMap((Lesson(0, "A", 20, "a", "00-a"), Lesson(1, "B", 70, "b"))).summary()
        'Whole course: about 90 min (1 h 30 min). The 1 lesson ready now takes about 20 min.'
        """
        ready = sum(entry.ready for entry in self.lessons)
        lessons, takes = ("lesson", "takes") if ready == 1 else ("lessons", "take")
        return (
            f"Whole course: about {duration(self.total_minutes)}. "
            f"The {ready} {lessons} ready now {takes} about {duration(self.ready_minutes)}."
        )

    def _repr_markdown_(self) -> str:
        done = self.done is not None
        rows = [
            "| lesson | title | what you learn | time | status |" + (" exercises done |" * done),
            "| --- | --- | --- | --- | --- |" + (" --- |" * done),
        ]
        for entry in self.lessons:
            title = f"[{entry.title}]({entry.notebook}.ipynb)" if entry.ready else entry.title
            status = "ready" if entry.ready else "coming soon"
            rows.append(
                f"| {entry.number} | {title} | {entry.learn} | {entry.minutes} min | {status} |"
                + (f" {self._done(entry.number)} |" if done else "")
            )
        return "\n".join(rows) + f"\n\n{self.summary()}"

    def _done(self, number: int) -> str:
        """``"✓ 3 of 3"``, ``"1 of 3"`` or ``""`` (no exercises) for lesson ``number``."""
        finished, exercises = (self.done or {}).get(number, (0, 0))
        if not exercises:
            return ""
        return f"{'✓ ' if finished == exercises else ''}{finished} of {exercises}"

    def __str__(self) -> str:
        width = max(len(entry.title) for entry in self.lessons)
        lines = [
            f"{entry.number}  {entry.title:<{width}}  {entry.minutes:>3} min  "
            f"{'ready' if entry.ready else 'coming soon'}"
            + (f"  {self._done(entry.number)} done" if self._done(entry.number) else "")
            for entry in self.lessons
        ]
        return "\n".join([*lines, self.summary()])

    __repr__ = __str__


def duration(minutes: int) -> str:
    """``minutes`` in words, with hours once there are 60 or more.

    Examples
    --------
    >>> duration(45), duration(60), duration(130)
    ('45 min', '60 min (1 h)', '130 min (2 h 10 min)')
    """
    hours, rest = divmod(int(minutes), 60)
    if not hours:
        return f"{minutes} min"
    return f"{minutes} min ({hours} h{f' {rest} min' if rest else ''})"


if __name__ == "__main__":  # python -m attnlab.course: the table for CONTRIBUTING.md
    print(code_table())
