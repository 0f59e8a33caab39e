"""The pieces of out-of-kernel grading: what an answer cell may hold, what travels back from
the grading kernel, and how a student's function behaves when a check calls it there."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnlab.exercises import EXERCISES, Outcome, lesson3
from attnlab.exercises.kit.calling import OverTimeLimit, call, call_watching
from attnlab.exercises.kit.outcomes import Wrong
from attnlab.exercises.rules import forbidden
from attnlab.exercises.rules.forbidden import forbidden_during
from attnlab.exercises.rules.lint import problems
from attnlab.exercises.solutions import source_folder, worked_solutions
from attnlab.grading import remote, sandbox
from attnlab.grading.remote import CleanKernel, RemoteFunction
from attnlab.grading.wire import Opaque, decode, encode


# ------------------------------------------------------------------------------------ lint
def test_every_worked_solution_passes_the_lint():
    """The course's own answers are ordinary numerical code: none may be refused."""
    for name, code in worked_solutions(str(source_folder())).items():
        exercise = EXERCISES.by_name(name)
        assert problems(code, forbidden=exercise.forbidden) == [], (name, exercise.answer)


@pytest.mark.parametrize(
    "code, reason",
    [
        ("import os", "may import only"),
        ("from attnlab.exercises import lesson1", "may import only"),
        ("import attnlab.grading.worker", "may import only"),
        ("def f(x):\n    return x.__class__", "cannot use it"),
        ("def f(x):\n    return lesson1.dot.checker", "cannot use it"),
        ("get_ipython().input_transformers_cleanup.clear()", "cannot use it"),
        ("f = eval('lambda x: x')", "cannot use it"),
        ("def f(x):\n    return getattr(np, 'exp')(x)", "cannot use it"),
        ("%env NBGRADER_EXECUTION=", "magics"),
        ("!rm -rf /", "magics"),
        ("def f(x):\n    return np.load('key.npy')", "cannot use it"),
        ("import numpy.f2py", "may import only"),
        ("def f(x:\n    return x", "syntax error"),
        ("class A:\n    def __eq__(self, other):\n        return True", "special methods"),
        ("def f(x):\n    return attnlab.exercises", "cannot use it"),
    ],
)
def test_the_lint_refuses_what_reaches_outside_the_answer(code, reason):
    found = problems(code)
    assert found and reason in found[0], found


def test_forbidden_names_are_refused_however_they_are_reached():
    banned = ["attnlab.softmax", "softmax_steps"]
    for code in (
        "def f(x):\n    return attnlab.softmax(x)",
        "from attnlab import softmax as s\ndef f(x):\n    return s(x)",
        "def f(x):\n    return softmax_steps(x)",
    ):
        assert any("not to use" in p for p in problems(code, forbidden=banned)), code
    assert problems("def f(x):\n    e = np.exp(x)\n    return e / e.sum()", banned) == []


# ------------------------------------------------------------------------------------ wire
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | hnp.arrays(
        hnp.floating_dtypes() | hnp.integer_dtypes() | hnp.boolean_dtypes(),
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
    ),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def _equal(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
        )
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(values)
def test_plain_values_travel_unchanged(value):
    assert _equal(decode(encode(value)), value)


def test_other_objects_travel_as_their_type_name_only():
    class Sneaky:
        pass

    back = decode(encode({"x": Sneaky(), "f": np.float32(0.5)}))
    assert isinstance(back["x"], Opaque) and repr(back["x"]) == "<Sneaky object>"
    assert back["f"].dtype == np.float32


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"array": "AAAA", "dtype": "|O", "shape": [1], "scalar": False}),
        json.dumps({"pickle": "gASVAAAAAAAAAAB9lC4="}),
        json.dumps({"int": "1", "float": "2"}),
    ],
)
def test_decoding_builds_nothing_but_plain_data(text):
    with pytest.raises((ValueError, TypeError)):
        decode(text)


# ------------------------------------------------------------------------- remote calls
@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    with CleanKernel(tmp_path_factory.mktemp("grading")) as k:
        remote.arm(k, lesson3.softmax_row.forbidden)  # before any code of the "student"
        status, error = k.run(
            "import numpy as np\nimport attnlab\n"
            "def double(x):\n    return 2 * x\n"
            "def in_place(x):\n    x *= 2\n    return x\n"
            "def stub(x):\n    raise NotImplementedError()\n"
            "def bad(x):\n    raise ValueError('no good')\n"
            "class Mine(Exception):\n    pass\n"
            "def mine(x):\n    raise Mine('mine')\n"
            "def noisy(x):\n    return np.log(x)\n"
            "def library(x):\n    return attnlab.softmax(x)\n"
            "def slow(x):\n    while True:\n        pass\n"
            "def big(n):\n    return float(np.ones((n, n)).sum())\n"
            "def napping(x):\n    import time\n    time.sleep(0.6)\n    return x\n"
            "def stubborn(x):\n    while True:\n        try:\n            pass\n"
            "        except BaseException:\n            pass\n",
            remember=True,
        )
        assert status == "ok", error
        yield k


def test_a_remote_function_returns_plain_values(kernel):
    got = RemoteFunction(kernel, "double")(np.arange(3, dtype=np.float32))
    assert got.dtype == np.float32 and got.tolist() == [0, 2, 4]


def test_changing_an_input_in_the_kernel_is_seen_by_the_check(kernel):
    with pytest.raises(Wrong, match="changed its input"):
        call(RemoteFunction(kernel, "in_place"), np.ones(3))


def test_exceptions_keep_their_kind(kernel):
    with pytest.raises(NotImplementedError):
        RemoteFunction(kernel, "stub")(1)
    with pytest.raises(ValueError, match="no good"):
        RemoteFunction(kernel, "bad")(1)
    with pytest.raises(remote.RemoteError) as info:
        RemoteFunction(kernel, "mine")(1)
    assert type(info.value).__name__ == "Mine"
    with pytest.raises(NameError, match="not defined"):
        RemoteFunction(kernel, "never_defined")(1)


def test_warnings_come_back_as_warnings(kernel):
    with pytest.warns(RuntimeWarning, match="divide by zero"), np.errstate(divide="warn"):
        RemoteFunction(kernel, "noisy")(np.array([0.0, 1.0]))


def test_a_forbidden_call_in_the_kernel_fails_the_check(kernel):
    feedback = lesson3.softmax_row.grade(RemoteFunction(kernel, "library"))
    assert feedback.outcome is Outcome.WRONG and "attnlab.softmax" in feedback.message


def test_a_checks_time_limit_is_judged_on_the_call_not_its_round_trip(kernel, monkeypatch):
    """9.1's 2 s limit held a right answer's round trip too (files, kernel messages): in a
    fresh-clone CI run on a busy machine a complex-step VJP (0.1 s with its round trip) was
    stopped at it. The worker times the call alone; a slow trip does not count, a slow call
    does."""
    made = kernel.call

    def slow_trip(*args, **kwargs):
        time.sleep(0.6)  # the request and the report held up on a busy disk, say
        return made(*args, **kwargs)

    monkeypatch.setattr(kernel, "call", slow_trip)
    doubled = RemoteFunction(kernel, "double")
    got, _ = call_watching(doubled, np.arange(3.0), limit=0.3)
    assert got.tolist() == [0.0, 2.0, 4.0]
    assert 0 <= doubled.last_seconds < 0.3
    napping = RemoteFunction(kernel, "napping")
    with pytest.raises(OverTimeLimit, match="longer than 0.3 s"):
        call_watching(napping, 1.0, limit=0.3)
    assert napping.last_seconds >= 0.6


def test_finding_what_an_exercise_forbids_is_not_the_answers_time(monkeypatch):
    """The first check of an exercise walks the course for what it forbids (about 1 s for
    9.1, more on a busy machine): that happens before the clock starts."""
    found = forbidden._forbidden_codes

    def slow_to_find(names):
        time.sleep(0.5)
        return found(names)

    monkeypatch.setattr(forbidden, "_forbidden_codes", slow_to_find)
    with forbidden_during(("attnlab.softmax",)):
        got, _ = call_watching(lambda x: 2 * x, np.ones(2), limit=0.3)
    assert got.tolist() == [2.0, 2.0]


def test_a_kernel_that_dies_before_its_first_reply_is_started_once_more(tmp_path, monkeypatch):
    """Once, in a fresh-clone CI run on a busy machine, a grading kernel died after its banner
    and before replying (no traceback, no OOM kill): one student's grading should not fail for
    it. A second death in a row is reported."""
    launch, tries = CleanKernel._launch, []

    def dies_first(self):
        tries.append(1)
        if len(tries) == 1:
            raise remote.KernelDiedAtStart("the grading kernel did not start: died")
        launch(self)

    monkeypatch.setattr(CleanKernel, "_launch", dies_first)
    with CleanKernel(tmp_path / "a") as k:
        remote.arm(k)
        assert k.run("x = 1")[0] == "ok"
    assert len(tries) == 2

    def always_dies(self):
        raise remote.KernelDiedAtStart("the grading kernel did not start: died")

    monkeypatch.setattr(CleanKernel, "_launch", always_dies)
    with pytest.raises(RuntimeError, match="and again"), CleanKernel(tmp_path / "b"):
        pass


def test_the_kernel_is_shut_down_even_when_its_channels_fail_to_close(tmp_path):
    """A grading kernel was found running after a CI run, its scratch folder gone: stopping
    must not depend on the channels closing cleanly."""
    calls = []

    class Client:
        def stop_channels(self):
            calls.append("channels")
            raise RuntimeError("the channels would not close")

    class Manager:
        def shutdown_kernel(self, now=False):
            calls.append(("shutdown", now))

    kernel = CleanKernel(tmp_path)
    kernel.client, kernel.manager = Client(), Manager()
    kernel._log = open(tmp_path / "kernel.log", "wb")  # noqa: SIM115 - closed by _stop
    with pytest.raises(RuntimeError, match="would not close"):
        kernel._stop()
    assert calls == ["channels", ("shutdown", True)]
    assert kernel._log.closed


def test_a_function_that_never_returns_is_stopped(kernel, monkeypatch):
    monkeypatch.setattr(kernel, "call_timeout", 2.0)
    with pytest.raises(TimeoutError):
        RemoteFunction(kernel, "slow")(1)
    assert RemoteFunction(kernel, "double")(2) == 4  # the kernel is usable afterwards
    with pytest.raises(TimeoutError):  # swallowing the interrupt does not help
        RemoteFunction(kernel, "stubborn")(1)
    assert RemoteFunction(kernel, "double")(3) == 6


def test_memory_is_measured_where_the_answer_runs(kernel):
    big = RemoteFunction(kernel, "big")
    assert big(10) == 100 and big.last_peak is None  # not asked
    big.measure = True
    assert big(1000) == 1e6
    assert 8e6 <= big.last_peak < 9e6, big.last_peak  # one float64 (1000, 1000) array


def test_ci_grades_in_the_sandbox():
    """CI installs bubblewrap (.ci/run): there, grading must never fall back to a plain kernel."""
    if os.environ.get("CI") != "true":
        pytest.skip("only CI promises bubblewrap")
    assert sandbox.unavailable() is None


def test_the_kernel_sees_no_course_and_writes_nowhere(kernel, tmp_path_factory):
    """In the sandbox the course folder is empty, the disk read-only, the network absent."""
    if not kernel.sandboxed:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    course = kernel.cwd.resolve().parent.parent
    probe = (
        "import os, socket\n"
        f"seen = os.listdir({str(course)!r}) if os.path.isdir({str(course)!r}) else []\n"
        "import numpy\n"
        "try:\n"
        "    open(os.path.join(os.path.dirname(numpy.__file__), 'x.txt'), 'w')\n"
        "    wrote = True\n"
        "except OSError:\n"
        "    wrote = False\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 22), timeout=1)\n"
        "    net = True\n"
        "except OSError:\n"
        "    net = False\n"
        "assert seen == [] and not wrote and not net, (seen, wrote, net)\n"
    )
    assert kernel.run(probe) == ("ok", "")


_KEY_HUNT = """
import os
found = [name for name in os.environ if name.startswith('ATTNLAB')]
for path in ({keys!r} + '/lesson7.py', {keys!r} + '/../.git/HEAD', {keys!r} + '/../source'):
    try:
        found.append(open(path).read() if not path.endswith('source') else os.listdir(path))
    except OSError as error:
        found.append(type(error).__name__)
print(found)
assert found == ['FileNotFoundError'] * 3, found
"""


def _repository_copy(mark: str) -> Path:
    """A clone of the repository outside /tmp and the homes (which the sandbox hides whatever
    the variables say), with a marked key, a source folder and a ``.git``."""
    places = [d for d in ("/var/tmp", "/dev/shm") if os.access(d, os.W_OK)]
    if not places:
        pytest.skip("no writable folder outside /tmp to keep a repository copy in")
    copy = Path(tempfile.mkdtemp(prefix="attnlab-clone-", dir=places[0]))
    for name in ("answer_keys", "source", ".git"):
        (copy / name).mkdir()
    (copy / "answer_keys" / "lesson7.py").write_text(f"KEY = {mark!r}\n")
    (copy / ".git" / "HEAD").write_text(mark)
    return copy


@pytest.mark.parametrize("named", [True, False], ids=["named", "not-named"])
def test_the_clean_kernel_cannot_read_the_repository_copy_the_grader_names(
    named, tmp_path, monkeypatch
):
    """``ATTNLAB_ANSWER_KEYS`` and ``ATTNLAB_SOURCE`` name a clone outside the course: code run
    straight in the clean kernel (as a way past the lint would run) sees neither variable nor
    the clone's keys, sources or git history. Not named, the same clone (a stray copy in
    ``/var/tmp``) is not there either: the kernel sees an allow-list of the host (it was
    readable until 2026-12-06, when a red team read a stray copy's key this way)."""
    if not sandbox.use(None):
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    copy = _repository_copy("clone-key-61f0")
    try:
        if named:
            monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", str(copy / "answer_keys"))
            monkeypatch.setenv("ATTNLAB_SOURCE", str(copy / "source"))
        else:
            monkeypatch.delenv("ATTNLAB_ANSWER_KEYS", raising=False)
            monkeypatch.delenv("ATTNLAB_SOURCE", raising=False)
        with CleanKernel(tmp_path / "course" / "lesson") as k:
            status, error = k.run(_KEY_HUNT.format(keys=str(copy / "answer_keys")))
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    assert status == "ok", error


def test_a_grading_kernel_leaves_no_scratch_folder_behind():
    """nbgrader's Execute step and the clean kernel each start one of these per notebook: the
    kernel's home, sockets and font list must go with it, not pile up in the temporary folder."""
    manager = sandbox.SandboxedKernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(manager.scratch))
    try:
        assert manager.scratch.is_dir()
    finally:
        manager.shutdown_kernel(now=True)
    assert not manager.scratch.exists()


def test_a_forbidden_function_is_known_by_identity_however_it_is_reached(kernel):
    """Code that the lint would refuse, run straight in the kernel: the library's softmax kept
    under another name, its names rebound, called through functools.partial. The worker
    recorded the forbidden functions' code before any of this ran, so the call is seen."""
    status, error = kernel.run(
        "import functools\nsaved = attnlab.softmax\n"
        "attnlab.softmax = attnlab.softmax_family.softmax = lambda x, **k: x\n"
        "def rebound(x):\n    return functools.partial(saved)(x)\n"
    )
    assert status == "ok", error
    try:
        feedback = lesson3.softmax_row.grade(RemoteFunction(kernel, "rebound"))
    finally:
        kernel.run("attnlab.softmax = attnlab.softmax_family.softmax = saved")
    print(f"\nrebound softmax: {feedback.outcome.value} (fair: not yet right)")
    assert feedback.outcome is Outcome.WRONG and "attnlab" in feedback.message, feedback


def test_a_report_without_the_workers_key_is_not_believed():
    import hashlib
    import hmac

    key = "ab" * 32
    body = json.dumps({"status": "ok", "result": encode(1.0), "forbidden": None})
    mac = hmac.new(bytes.fromhex(key), body.encode(), hashlib.sha256).hexdigest()
    assert remote._verified(json.dumps({"body": body, "mac": mac}), key)["status"] == "ok"
    for forged in ("0" * 64, "", mac[:-1] + "0"):
        with pytest.raises(ValueError, match="not written by the grading worker"):
            remote._verified(json.dumps({"body": body, "mac": forged}), key)
    with pytest.raises(ValueError):
        remote._verified(body, key)  # an unsigned report of the old kind


def test_a_kernel_not_armed_makes_no_calls(tmp_path_factory):
    with CleanKernel(tmp_path_factory.mktemp("unarmed")) as k, pytest.raises(RuntimeError):
        k.call("f", (), {})


@pytest.mark.parametrize(
    "value",
    [
        __import__("collections").namedtuple("P", "a b")(1.0, np.ones(2)),
        __import__("collections").OrderedDict(A1="b", A2=0.5),
        __import__("fractions").Fraction(1, 2),
    ],
)
def test_namedtuples_ordered_dicts_and_fractions_travel_as_what_they_are(value):
    back = decode(encode(value))
    assert back == value if not isinstance(value, tuple) else (back[0] == 1 and len(back) == 2)


def test_a_number_whose_parts_are_read_runs_no_code_of_the_students():
    """A red team's lazy result (2026-12-07): a list of Fraction subclasses whose numerator
    was a property computed a forbidden core while the worker encoded the result, after the
    call was timed and watched. A subclass of Fraction now travels as opaque, a complex
    subclass by its C fields; the exact types still travel as numbers."""
    import fractions

    ran = []

    class Later(fractions.Fraction):
        @property
        def numerator(self):
            ran.append("numerator")
            return 1

    class Twisted(complex):
        @property
        def real(self):
            ran.append("real")
            return 0.0

    sent = encode([Later(1, 2), Twisted(1, 2), fractions.Fraction(1, 2), 1 + 2j])
    assert ran == []
    back = decode(sent)
    assert isinstance(back[0], Opaque) and str(back[0]) == str(Opaque("Later"))
    assert back[1:] == [1 + 2j, fractions.Fraction(1, 2), 1 + 2j]


@pytest.mark.parametrize(
    "source, refused",
    [
        (
            "import attnlab.backward as B\nmatch B:\n    case object(_kernels=K):\n        pass\n",
            "class patterns in match",
        ),
        (
            "import fractions\nmatch fractions:\n    case object(sys=S):\n        pass\n",
            "class patterns in match",
        ),
        ("import numpy as __builtins__\n", "`__builtins__`"),
        ("try:\n    pass\nexcept Exception as __x:\n    pass\n", "`__x`"),
        ("def f(x):\n    match x:\n        case {**__rest}:\n            return 0\n", "`__rest`"),
    ],
)
def test_the_lint_sees_names_read_or_bound_outside_attribute_nodes(source, refused):
    """A match class pattern reads attributes by name (the red team of 2026-12-07 reached
    ``attnlab.backward._kernels`` and the grading worker's globals so); imports, except
    clauses and patterns bind names that are not ast.Name nodes."""
    assert any(refused in problem for problem in problems(source)), problems(source)


def test_an_exact_fraction_holding_a_subclass_is_not_read_as_a_number():
    """The second red team of 2026-12-07: ``Fraction(x)`` of a subclass ``x`` is an exact
    Fraction whose slots hold what x's numerator property returned, here another subclass
    whose ``_numerator`` property computes; an object array of such Fractions was turned to
    float while the worker encoded the result, after the call was timed and watched."""
    import fractions

    from attnlab.exercises.rules.received import real_numbers

    ran = []

    def keep(self, value):
        pass

    class Part(fractions.Fraction):
        _numerator = property(lambda self: ran.append(1) or 3, keep)
        _denominator = property(lambda self: 1, keep)

    class Pair(fractions.Fraction):
        numerator = property(lambda self: self.top)
        denominator = property(lambda self: self.bottom)

    pair = Pair(0)
    pair.top, pair.bottom = Part(0), 1
    hidden = fractions.Fraction(pair)
    assert type(hidden) is fractions.Fraction
    lazy = np.array([hidden, fractions.Fraction(1, 2)], dtype=object)
    assert real_numbers(lazy) is None
    assert isinstance(decode(encode(lazy)), Opaque) and ran == []
    honest = np.array([fractions.Fraction(1, 4), fractions.Fraction(1, 2), 2], dtype=object)
    assert real_numbers(honest).tolist() == [0.25, 0.5, 2.0]


@pytest.mark.parametrize(
    "source",
    [
        "import functools\nimport fractions\nf = functools.wraps(fractions, assigned=('sys',))\n",
        "import functools\nw = functools.wraps\n",
        "x = '_setprofile'\n",
        "names = ('modules',)\n",
        "y = '__globals__'\n",
    ],
)
def test_attribute_names_in_strings_and_wraps_are_refused(source):
    """``functools.wraps(src, assigned=(name,), updated=())(dst)`` is getattr and setattr by
    a name given as a string: the second red team of 2026-12-07 reached ``sys.modules`` and
    switched the grading worker's watch off so. A refused name is refused as a string too."""
    assert problems(source), source


@pytest.mark.parametrize(
    "source, allowed",
    [
        ("maker = type(int)\n", False),  # type itself: it made classes with any dunder
        ("def f(x):\n    return type(x)(x)\n", False),
        ("def f(x):\n    return [type(x)]\n", False),
        ("def f(x):\n    return type(x) is float\n", True),
        ("def f(x):\n    return type(x) in (list, tuple)\n", True),
    ],
)
def test_type_is_for_comparing_a_values_type_only(source, allowed):
    """The third red team of 2026-12-07 kept ``type(int)``, which is ``type``, and made a class
    with a code-named annotation that dataclasses ran (and could make any special method)."""
    assert (problems(source) == []) is allowed, problems(source)


def test_dataclasses_in_the_grading_kernel_refuse_a_field_named_by_code():
    """dataclasses writes its methods as text with the field names in it and runs them with
    exec: a Field renamed to code ran it (the third red team of 2026-12-07). The grading
    worker wraps dataclasses so that such a class is not made; honest dataclasses still are."""
    import dataclasses

    from attnlab.grading import worker

    original = dataclasses._process_class
    try:
        worker.guard_dataclasses()

        @dataclasses.dataclass
        class Honest:
            x: int = 0

        assert Honest(2) == Honest(2)

        @dataclasses.dataclass(eq=False)
        class Base:
            x: int = 0

        ran = []
        dataclasses.fields(Base)[0].name = "x,ran.append(1)"
        with pytest.raises(TypeError, match="named by an identifier"):
            dataclasses.dataclass(type("Box", (Base,), {}))
        assert ran == []
    finally:
        dataclasses._process_class = original


def test_ordinary_strings_stay_allowed():
    source = (
        "import numpy as np\n"
        "def f(x):\n"
        '    """Softmax of x."""\n'
        "    with np.errstate(divide='ignore', over='ignore'):\n"
        "        y = np.einsum('ij,kj->ik', x, x).astype('float32')\n"
        "    z = '_'.join('ab')\n"
        "    return np.pad(y, 1, mode='constant'), {'q1': 'B', 'shape': 'diagonal'}, z\n"
    )
    assert problems(source) == []


def test_plain_match_statements_stay_allowed():
    source = (
        "def first(x):\n    match x:\n        case [a, *rest]:\n            return a\n"
        "        case {'k': v}:\n            return v\n        case _:\n            return 0\n"
    )
    assert problems(source) == []


def test_the_clean_kernels_limits_and_exchange_come_from_nbgrader_config(tmp_path):
    """``c.CleanKernel.*`` in an nbgrader config file set the clean kernel's time limits (the
    defaults are the module's), and ``c.Exchange.root`` is hidden from its sandbox; the config
    reaches it through GradeOutsideKernel."""
    from traitlets.config.loader import PyFileConfigLoader

    from attnlab.grading.nbgrader_plugin import GradeOutsideKernel

    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CleanKernel.call_timeout = 7.5\n"
        "c.CleanKernel.cell_timeout = 30\n"
        "c.CleanKernel.notebook_budget = 600\n"
        f"c.Exchange.root = {str(tmp_path / 'exchange')!r}\n",
        encoding="utf-8",
    )
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    plain = CleanKernel(tmp_path)
    assert (
        (plain.call_timeout, plain.cell_timeout, plain.notebook_budget)
        == (
            remote.CALL_TIMEOUT,
            remote.CELL_TIMEOUT,
            remote.NOTEBOOK_BUDGET,
        )
        == (20.0, 120.0, 900.0)
    )
    configured = CleanKernel(tmp_path, config=GradeOutsideKernel(config=config).config)
    assert (configured.call_timeout, configured.cell_timeout, configured.notebook_budget) == (
        7.5,
        30.0,
        600.0,
    )
    assert (tmp_path / "exchange") in sandbox.hidden_folders(configured.config)


def test_grading_as_root_without_a_pids_cgroup_says_the_process_cap_is_not_enforced(
    tmp_path, monkeypatch, caplog
):
    """RLIMIT_NPROC does not bind root: without a pids cgroup the cap cannot hold, and the
    sandbox says so in the log, once per grading process (not once per kernel)."""
    monkeypatch.setattr(sandbox, "PIDS_CGROUPS", (tmp_path / "no-cgroup",))
    monkeypatch.setattr(sandbox, "_SAID_NO_PIDS_CGROUP", False)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    with caplog.at_level("WARNING", logger="attnlab.grading"):
        assert sandbox.process_cap("k0", 256) is None  # an ordinary user: RLIMIT_NPROC binds
        assert not caplog.records
        monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
        assert sandbox.process_cap("k1", 256) is None
        assert sandbox.process_cap("k2", 256) is None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1, said
    assert "as root without a pids cgroup" in said[0] and "256 processes" in said[0]
    assert "NOT enforced" in said[0], said[0]


def test_the_code_a_student_wrote_shares_one_budget_and_the_lesson_goes_on():
    """nbgrader's Execute step (LimitedExecute): an answer cell that sleeps is interrupted when
    the student's budget (3 s here) is used up, says why, the lesson cell after it still runs,
    and the next answer cell is not run and says why."""
    import nbformat

    from attnlab.grading.execute import LimitedExecute

    def answer(code, grade_id):
        cell = nbformat.v4.new_code_cell(code)
        cell.metadata["nbgrader"] = {"solution": True, "grade_id": grade_id}
        return cell

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        answer("import time\ntime.sleep(100)", "a"),
        nbformat.v4.new_code_cell("print('lesson ran')"),
        answer("print('second answer ran')", "b"),
    ]
    executor = LimitedExecute(timeout=30, iopub_timeout=2, student_cells_timeout=3)
    started = time.monotonic()
    nb, _ = executor.preprocess(nb, {})
    seconds = time.monotonic() - started
    texts = [json.dumps(cell.outputs) for cell in nb.cells]
    assert "stopped after 3 s" in texts[0] and "KeyboardInterrupt" in texts[0], texts[0]
    assert "lesson ran" in texts[1], texts[1]
    assert "not run during grading" in texts[2] and "second answer ran" not in texts[2]
    assert seconds < 30, seconds  # the cell limit never came into it


def test_an_unsandboxed_execute_kernel_is_not_told_where_the_keys_are(monkeypatch):
    """Graded without the sandbox (ATTNLAB_REQUIRE_SANDBOX=0), nbgrader's Execute kernel still
    gets no ATTNLAB_ANSWER_KEYS or ATTNLAB_SOURCE from the grader's environment."""
    import nbformat

    from attnlab.grading.execute import LimitedExecute

    monkeypatch.setattr(sandbox, "use", lambda wanted=None: False)
    monkeypatch.setenv("ATTNLAB_ANSWER_KEYS", "/somewhere/answer_keys")
    monkeypatch.setenv("ATTNLAB_SOURCE", "/somewhere/source")
    monkeypatch.setenv("ATTNLAB_PROBE_KEPT", "yes")  # the grader's other variables do pass here
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os\nprint(sorted(k for k in os.environ if 'ATTNLAB' in k))"
        )
    ]
    nb, _ = LimitedExecute(timeout=60).preprocess(nb, {})
    assert nb.cells[0].outputs[0]["text"].strip() == "['ATTNLAB_PROBE_KEPT']", nb.cells[0].outputs


def test_only_a_lesson_whose_check_measures_memory_traces_its_answer_cells():
    """Grading counts what answer cells allocate and keep (``tracemalloc`` in the grading
    kernel, from the first answer cell on) only where a check measures memory: the tracing
    slows every later cell many times over. Lesson 9 was traced because its checks time their
    calls, and was graded in 30 s instead of 3.4 s (quiet machine), its timed calls running
    traced against an untraced forward pass."""
    from attnlab.grading.grade import counts_held_memory

    traced = {
        path.parent.name
        for path in sorted(source_folder().glob("*/*.ipynb"))
        if counts_held_memory(json.loads(path.read_text(encoding="utf-8")))
    }
    assert traced == {"08-cost-of-attention"}
    measuring = [key for key, e in EXERCISES.items() if getattr(e.checker, "measures_memory", 0)]
    assert measuring == ["8.4"], measuring


def test_an_armed_kernel_reads_the_package_folders_on_its_path_and_no_other_entry(
    tmp_path, monkeypatch
):
    """A hub's shared environment may reach its packages through a site-packages folder outside
    the interpreter's prefix (a venv whose .pth adds another's; the Unix-user hub tests run
    such a Python): the armed kernel must read them (numpy's lazy imports failed there with
    'may not open files outside the Python runtime'), while a checkout or the working folder
    on the path stays unreadable."""
    from attnlab.grading.worker import file_roots

    packages = tmp_path / "elsewhere" / "lib" / "python3.11" / "site-packages"
    checkout = tmp_path / "course-checkout"
    monkeypatch.setattr("sys.path", [*__import__("sys").path, str(packages), str(checkout)])
    readable, writable = file_roots()
    assert f"{packages}/" in readable
    assert not any(r.startswith(f"{checkout}/") for r in readable)
    assert f"{packages}/" not in writable
