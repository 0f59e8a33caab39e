"""A hostile student with only the release notebook, against the grader's limits and walls.

One class of :data:`CLASS_SIZE` submissions of one lesson is graded by stock
``nbgrader autograde`` in ONE run, with the shipped ``nbgrader_config.py`` and small limits
(:data:`LIMITS`): a few honest students and one student per attack, each attack written in an
extra cell right after the notebook's imports (everything the student wrote runs in nbgrader's
Execute step), next to the worked answers. Every attack must be stopped, the attacker graded
for the answers they gave (their fair score: full points), and every student after them
graded too. The run is measured (wall time, the grading process's peak memory) and a table
of attack, score given and fair score is printed (run with ``-s`` to see it).

The grader is given secrets to lose: a planted ``JUPYTERHUB_API_TOKEN``, another student's
submission and ``submission_secret.txt``, another student's released feedback and a file in
the nbgrader exchange. None may appear in any graded notebook or feedback page, and no script
a student wrote may reach either.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import graded_course as gc
import pytest

from attnlab.grading import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sandbox.unavailable() is not None,
        reason=f"no grading sandbox here: {sandbox.unavailable()}",
    ),
]

LESSON = "00-start-here"
CLASS_SIZE = 20
#: Small limits so the class grades fast: seconds per cell and per notebook, caps of the kernel.
TIMEOUT, GRACE, NOTEBOOK_TIMEOUT = 4, 2, 40
#: Seconds the code a student wrote (answer cells, added or changed cells) may run in all.
STUDENT_BUDGET = 5
#: The added cells of the staller: each sleeps under the cell limit, together far past the budget.
SLEEPS, SLEEP = 8, 3
LIMITS = {
    "ATTNLAB_GRADING_MEMORY": "1G",
    "ATTNLAB_GRADING_PROCESSES": "64",
    "ATTNLAB_GRADING_DISK": "16M",
    "ATTNLAB_GRADING_FILES": "5000",
}
CELL_OUTPUT, NOTEBOOK_OUTPUT = 64 * 1024, 256 * 1024

TOKEN = "planted-hub-token-7f3a9c"
VICTIM_MARK = "victim-answer-5b1e"
SECRET = "victim-submission-secret-c4d2"
EXCHANGE_MARK = "exchange-file-91ab"
FEEDBACK_MARK = "released-feedback-e07f"

#: The attacks: student id -> (what it does, the extra cell). ``{course}`` and ``{exchange}``
#: are the absolute paths a student on the same hub can guess.
ATTACKS = {
    "hang": (
        "loops, swallowing every interrupt",
        "import time\nwhile True:\n    try:\n        time.sleep(1000)\n"
        "    except KeyboardInterrupt:\n        pass\n",
    ),
    "long-sleep": ("sleeps 200 s", "import time\ntime.sleep(200)\n"),
    "fork-bomb": (
        "forks until refused",
        "import os, time\nforks = 0\ntry:\n    while forks < 100000:\n"
        "        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n"
        "        forks += 1\nexcept OSError as error:\n"
        "    print('forks refused after', forks, error)\n",
    ),
    "memory-hog": (
        "allocates 20 GB",
        "blocks = []\ntry:\n    for _ in range(200):\n        blocks.append(b'x' * 10**8)\n"
        "except MemoryError:\n    print('memory refused after', len(blocks), 'blocks')\n"
        "del blocks\n",
    ),
    "disk-filler": (
        "writes 2 GB in its home and /tmp",
        "import os\nchunk = b'x' * 2**20\nfor place in ('big', '/tmp/big'):\n"
        "    try:\n        with open(place, 'wb') as f:\n"
        "            for _ in range(2048):\n                f.write(chunk)\n"
        "    except OSError as error:\n        print(place, 'refused:', error)\n",
    ),
    "disk-scratch": (
        "writes many 8 MB files where its sockets are",
        "import os\nchunk = b'x' * 2**20\nfolder = os.path.dirname(os.getcwd())\n"
        "for i in range(400):\n    with open(os.path.join(folder, f'f{i}'), 'wb') as f:\n"
        "        for _ in range(8):\n            f.write(chunk)\n",
    ),
    # issue 39: /dev was an uncapped tmpfs (half the machine's memory; a red team held 3.42 GiB
    # there, past the memory cap, until its notebook ended), and empty files take no bytes
    "shm-filler": (
        "writes 512 MB in 8 MB files to /dev/shm, and a file in /dev",
        "chunk = b'x' * 2**20\nwritten = 0\ntry:\n    for i in range(64):\n"
        "        with open(f'/dev/shm/f{i}', 'wb') as f:\n            for _ in range(8):\n"
        "                f.write(chunk)\n                written += 1\n"
        "except OSError as error:\n    print('shm refused:', error)\n"
        "print('shm held', written, 'MiB')\ntry:\n    open('/dev/big', 'wb').close()\n"
        "except OSError as error:\n    print('dev refused:', error)\n",
    ),
    "inode-filler": (
        "makes 200,000 empty files in /tmp",
        "for i in range(200_000):\n    open(f'/tmp/e{i}', 'w').close()\nprint('made them all')\n",
    ),
    "output-flood": (
        "prints 1 GB and a million warnings; adds 3 MB of Markdown",
        "import warnings\nfor i in range(10**6):\n    print('x' * 1000)\n"
        "    warnings.warn(f'flood {i}')\n",
    ),
    "exfiltrate": (
        "prints the environment and other students' files",
        "import os, glob\nprint(dict(os.environ))\n"
        "for pattern in ['{course}/**', '{exchange}/**', '/home/**', '/root/*', '/proc/*/cwd',\n"
        "                '/tmp/**']:\n"
        "    for path in glob.glob(pattern, recursive=True)[:400]:\n"
        "        print(path)\n"
        "        try:\n            print(open(path, errors='replace').read()[:5000])\n"
        "        except OSError:\n            pass\n",
    ),
    "hooks": (
        "registers IPython hooks that slow every later cell",
        "import ast, time\nip = get_ipython()\ndef slow(*args):\n    print('hook-fired')\n"
        "    time.sleep(0.5)\nip.events.register('pre_run_cell', slow)\n"
        "ip.events.register('post_run_cell', slow)\n"
        "class Slow(ast.NodeTransformer):\n    def visit_Module(self, node):\n"
        "        print('ast-hook-fired')\n        time.sleep(1)\n        return node\n"
        "ip.ast_transformers.append(Slow())\nimport builtins, gc\n_print = builtins.print\n"
        "def slow_print(*args, **kw):\n    _print('hook-fired')\n    time.sleep(0.2)\n"
        "    _print(*args, **kw)\nbuiltins.print = slow_print\n"
        "gc.callbacks.append(lambda phase, info: _print('hook-fired'))\nprint('hooks set')\n",
    ),
    "busy-thread": (
        "leaves a thread that, once its cell ended, holds the interpreter in C loops",
        "import threading, time\ndef hog():\n    time.sleep(2)\n    while True:\n"
        "        sum(range(10**8))\n"
        "threading.Thread(target=hog, daemon=True).start()\nprint('thread started')\n",
    ),
    "script": (
        "shows HTML and JavaScript that would run in the browser",
        "from IPython.display import HTML, Javascript, SVG, display\n"
        "display(HTML('<script>attackJs(1)</script><b onmouseover=\"attackJs(2)\">x</b>'"
        '             \'<a href="javascript:attackJs(3)">y</a><iframe src="x"></iframe>\'))\n'
        "display(Javascript('attackJs(4)'))\n"
        'display(SVG(\'<svg xmlns="http://www.w3.org/2000/svg"><script>attackJs(5)</script>'
        "</svg>'))\n",
    ),
}
#: Markdown a student adds next to the script attack.
SCRIPT_MARKDOWN = 'Look: <script>attackJs(6)</script><img src=x onerror="attackJs(7)">'
PLANTED = (TOKEN, VICTIM_MARK, SECRET, EXCHANGE_MARK, FEEDBACK_MARK)
#: A Markdown cell the flooder adds too: 3 MB that the sanitizer and nbconvert would clean and
#: render at about 20 µs a character (a red team's; 75 s of the class's autograde, as long
#: again for its feedback page).
BIG_MARKDOWN = "**_" * 10**6

#: An instructor's clone of the repository outside the course folder, which the grading
#: process's ``ATTNLAB_ANSWER_KEYS`` and ``ATTNLAB_SOURCE`` name (as the red team found it):
#: outside ``/tmp`` and the homes, which the sandbox hides whatever it names.
REPO_COPY = (
    next((Path(d) for d in ("/var/tmp", "/dev/shm") if Path(d).is_dir()), Path("/tmp"))
    / f"attnlab-limits-repo-{os.getpid()}"
)
KEY_MARK = "repo-copy-key-8c21"
#: A stray copy of the keys beside it that no variable names (an old clone, a backup).
STRAY_COPY = REPO_COPY.parent / f"attnlab-limits-stray-{os.getpid()}"
#: The key hunter's added cell: the keys through the variables' paths and the copy's own path.
KEY_HUNT = (
    "import os\nprint('key hunt ran')\n"
    "for path in [os.environ.get('ATTNLAB_ANSWER_KEYS', 'unset') + '/lesson7.py',\n"
    "             os.environ.get('ATTNLAB_SOURCE', 'unset') + '/../answer_keys/lesson7.py',\n"
    "             '{copy}/answer_keys/lesson7.py', '{copy}/.git/HEAD',\n"
    "             '{stray}/answer_keys/lesson7.py']:\n"
    "    try:\n        print(path, open(path).read())\n"
    "    except OSError as error:\n        print(path, 'refused:', type(error).__name__)\n"
)


def _with_markdown(nb: dict, text: str) -> dict:
    nb = json.loads(json.dumps(nb))
    nb["cells"].insert(1, {"cell_type": "markdown", "id": "said", "metadata": {}, "source": text})
    return nb


def _plant(course: Path, exchange: Path, solved: dict) -> None:
    """Another student's work and secrets where a careless grader would show them."""
    victim = _with_markdown(solved, VICTIM_MARK)
    gc.write_submission(course, "victim", LESSON, victim)
    (course / "submitted" / "victim" / LESSON / "submission_secret.txt").write_text(SECRET)
    released = course / "feedback" / "someone" / LESSON
    released.mkdir(parents=True)
    (released / f"{LESSON}.html").write_text(f"<p>score 1/1 {FEEDBACK_MARK}</p>")
    (exchange / "attnlab" / "inbound").mkdir(parents=True)
    (exchange / "attnlab" / "inbound" / "note.txt").write_text(EXCHANGE_MARK)


def _make_repo_copy(folder: Path) -> None:
    """The clone: the course's sources and keys (lesson 7's marked with :data:`KEY_MARK`) and
    a ``.git``."""
    for name in ("source", "answer_keys"):
        skip = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        shutil.copytree(gc.ROOT / name, folder / name, ignore=skip)
    key = folder / "answer_keys" / "lesson7.py"
    key.write_text(key.read_text(encoding="utf-8") + f"\n# {KEY_MARK}\n", encoding="utf-8")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text(f"ref: refs/heads/main {KEY_MARK}\n")


def _with_schema_versions(nb: dict, versions: tuple[int, int] = (4, 2)) -> dict:
    """``nb`` with its answer cell's nbgrader metadata at schema ``versions[0]`` and its grade
    cell's at ``versions[1]`` (nbgrader 0.9 reads 3; a version error in ``CheckCellMetadata``
    stopped the whole autograde run, leaving every student after this one ungraded)."""
    nb = json.loads(json.dumps(nb))
    answer = next(c for c in nb["cells"] if gc._meta(c).get("solution"))
    grade = next(c for c in nb["cells"] if gc._meta(c).get("grade"))
    gc._meta(answer)["schema_version"], gc._meta(grade)["schema_version"] = versions
    return nb


def _with_sleeps(nb: dict) -> dict:
    """``nb`` with :data:`SLEEPS` added cells, each sleeping :data:`SLEEP` s, after its imports."""
    for number in reversed(range(SLEEPS)):
        nb = gc._after_imports(nb, f"import time\ntime.sleep({SLEEP})\n")
        nb["cells"][next(i for i, c in enumerate(nb["cells"]) if c.get("id") == "cheat")]["id"] = (
            f"sleep-{number}"
        )
    return nb


def _peak_memory(process: subprocess.Popen, peak: list[int]) -> None:
    """Sample the grading process's resident memory until it ends (kB, its high-water mark)."""
    status = Path(f"/proc/{process.pid}/status")
    while process.poll() is None:
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
            peak[0] = max(peak[0], int(fields.get("VmHWM", "0 kB").split()[0]))
        except (OSError, ValueError):
            pass
        time.sleep(0.2)


def _autograde(course: Path, exchange: Path) -> tuple[subprocess.CompletedProcess, float, int]:
    """``nbgrader autograde`` of the whole class; (result, seconds, peak memory in MB)."""
    env = gc.nbgrader_env(
        JUPYTERHUB_API_TOKEN=TOKEN,
        ATTNLAB_EXCHANGE=str(exchange),
        ATTNLAB_ANSWER_KEYS=str(REPO_COPY / "answer_keys"),
        ATTNLAB_SOURCE=str(REPO_COPY / "source"),
        **LIMITS,
    )
    args = [
        *gc.NBGRADER,
        "autograde",
        LESSON,
        "--create",
        f"--Execute.timeout={TIMEOUT}",
        f"--Execute.iopub_timeout={GRACE}",
        f"--LimitedExecute.notebook_timeout={NOTEBOOK_TIMEOUT}",
        f"--LimitedExecute.student_cells_timeout={STUDENT_BUDGET}",
        f"--LimitedExecute.max_cell_output={CELL_OUTPUT}",
        f"--LimitedExecute.max_output={NOTEBOOK_OUTPUT}",
    ]
    start, peak = time.monotonic(), [0]
    process = subprocess.Popen(
        args, cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watcher = threading.Thread(target=_peak_memory, args=(process, peak), daemon=True)
    watcher.start()
    stdout, stderr = process.communicate(timeout=900)
    watcher.join()
    result = subprocess.CompletedProcess(args, process.returncode, stdout, stderr)
    return result, time.monotonic() - start, peak[0] // 1024


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded once: course, exchange, students' kinds, scores, log, figures."""
    course = gc.make_course(tmp_path_factory.mktemp("course"))
    exchange = tmp_path_factory.mktemp("exchange")
    gc.nbgrader(course, "generate_assignment", LESSON, "--force")
    source_nb = gc.read(course / "source" / LESSON / f"{LESSON}.ipynb")
    release_nb = gc.read(course / "release" / LESSON / f"{LESSON}.ipynb")
    solved = gc._with_answers(release_nb, gc.worked(source_nb))
    total = sum(points for _, _, points in gc.graded_answers(source_nb))
    _plant(course, exchange, solved)
    kinds = {"victim": ("honest (its files are the exfiltration's target)", total)}
    for student, (what, code) in ATTACKS.items():
        cell = code.replace("{course}", str(course)).replace("{exchange}", str(exchange))
        nb = gc._after_imports(solved, cell)
        if student == "script":
            nb = _with_markdown(nb, SCRIPT_MARKDOWN)
        if student == "output-flood":
            nb = _with_markdown(nb, BIG_MARKDOWN)
        gc.write_submission(course, student, LESSON, nb)
        kinds[student] = (what, total)
    gc.write_submission(course, "aaa-schema", LESSON, _with_schema_versions(solved))
    kinds["aaa-schema"] = ("first in line; its cells claim nbgrader schemas 4 and 2", total)
    gc.write_submission(course, "added-sleeps", LESSON, _with_sleeps(solved))
    kinds["added-sleeps"] = (f"adds {SLEEPS} cells that sleep {SLEEP} s each", total)
    hunt_cell = KEY_HUNT.replace("{copy}", str(REPO_COPY)).replace("{stray}", str(STRAY_COPY))
    hunt = gc._after_imports(release_nb, hunt_cell)
    gc.write_submission(course, "key-hunt", LESSON, hunt)
    kinds["key-hunt"] = ("reads the keys of the repository copy the grader names", 0.0)
    for number in range(CLASS_SIZE - len(kinds)):
        blank = number % 4 == 3
        student = f"honest-{number:02d}" + ("-blank" if blank else "")
        gc.write_submission(course, student, LESSON, release_nb if blank else solved)
        kinds[student] = ("honest, blank" if blank else "honest, solved", 0.0 if blank else total)
    _make_repo_copy(REPO_COPY)
    _make_repo_copy(STRAY_COPY)
    try:
        log, seconds, peak = _autograde(course, exchange)
    finally:
        shutil.rmtree(REPO_COPY, ignore_errors=True)
        shutil.rmtree(STRAY_COPY, ignore_errors=True)
    (course / "autograde.log").write_text(log.stdout + log.stderr, encoding="utf-8")
    scores = gc.scores(course, LESSON)
    print(_table(kinds, scores))
    print(f"\nclass of {len(kinds)}: graded in {seconds:.1f} s; grading process peak {peak} MB")
    return {"course": course, "exchange": exchange, "kinds": kinds, "scores": scores,
            "log": log, "seconds": seconds, "peak": peak}  # fmt: skip


def _table(kinds: dict, scores: dict) -> str:
    lines = [f"\n{'student':<22}{'what it does':<58}{'given':>7}{'fair':>7}"]
    for student, (what, fair) in kinds.items():
        given = scores.get(student, (float("nan"),))[0]
        lines.append(f"{student:<22}{what:<58}{given:>7.1f}{fair:>7.1f}")
    return "\n".join(lines)


def _autograded(graded, student: str) -> Path:
    return graded["course"] / "autograded" / student / LESSON / f"{LESSON}.ipynb"


def _outputs_text(path: Path) -> str:
    nb = gc.read(path)
    return json.dumps([c.get("outputs", []) for c in nb["cells"]])


def _cell(graded, student: str) -> dict:
    """The attack's cell in the student's graded notebook."""
    nb = gc.read(_autograded(graded, student))
    return next(c for c in nb["cells"] if c.get("id") == "cheat")


def test_every_student_is_graded_with_a_fair_score(graded, table_line):
    """Attackers earn what their answers earn, and no attack stops the class."""
    title = (
        f"a class of {len(graded['kinds'])} graded in one nbgrader autograde: "
        f"{graded['seconds']:.1f} s, grading process peak {graded['peak']} MB"
    )
    for line in _table(graded["kinds"], graded["scores"]).strip().splitlines():
        table_line(title, line)
    unfair = {
        student: (graded["scores"].get(student), fair)
        for student, (_, fair) in graded["kinds"].items()
        if graded["scores"].get(student, (None,))[0] != fair
    }
    assert not unfair, f"{unfair}\n{graded['log'].stderr[-3000:]}"


def test_the_class_grades_in_bounded_time_and_memory(graded):
    """Two cells that never end, a fork bomb and a flood cost seconds, not the class; the
    grading process stays small whatever was printed."""
    budget = 20 * 20 + 2 * NOTEBOOK_TIMEOUT  # generous per student on a busy two-core box
    assert graded["seconds"] < budget
    assert graded["peak"] < 600, f"grading process peaked at {graded['peak']} MB"


@pytest.mark.parametrize("student", ["hang", "long-sleep"])
def test_a_cell_past_its_time_is_stopped(graded, student):
    text = json.dumps(_cell(graded, student)["outputs"])
    assert "CellTimeoutError" in text or "CellStoppedByGrader" in text, text[:2000]


def test_a_cell_that_ignores_the_interrupt_is_killed_and_the_rest_not_run(graded):
    nb = gc.read(_autograded(graded, "hang"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    after = cells[[c.get("id") for c in cells].index("cheat") + 1 :]
    assert "CellStoppedByGrader" in json.dumps(_cell(graded, "hang")["outputs"])
    ungraded = [c for c in after if c["source"] and not gc._meta(c).get("grade")]
    assert ungraded and all("not run by the grader" in json.dumps(c["outputs"]) for c in ungraded)


def test_forks_are_refused_at_the_process_cap(graded):
    """Nbgrader's Execute kernel starts no process at all now (red team round 9: three
    children of 1.5 GiB each held memory past the per-process cap): the first fork fails."""
    text = json.dumps(_cell(graded, "fork-bomb")["outputs"])
    forks = int(re.search(r"forks refused after (\d+)", text).group(1))
    assert forks == 0 and "without starting processes" in text, text[:2000]


def test_memory_is_refused_at_the_memory_cap(graded):
    text = json.dumps(_cell(graded, "memory-hog")["outputs"])
    blocks = int(re.search(r"memory refused after (\d+) blocks", text).group(1))
    assert blocks * 10**8 < 2**30


def test_disk_is_refused_at_the_disk_cap(graded):
    text = json.dumps(_cell(graded, "disk-filler")["outputs"])
    assert text.count("refused:") == 2, text[:2000]
    scratch = json.dumps(_cell(graded, "disk-scratch")["outputs"])
    assert "wrote more than 16 MiB to disk" in scratch, scratch[:2000]


def test_dev_shm_is_capped_and_dev_read_only(graded):
    text = json.dumps(_cell(graded, "shm-filler")["outputs"])
    held = int(re.search(r"shm held (\d+) MiB", text).group(1))
    assert held <= 16 and "dev refused:" in text, text[:2000]


def test_files_are_capped_in_number(graded):
    """Empty files take no bytes: the watchdog counts files too, in every writable place."""
    text = json.dumps(_cell(graded, "inode-filler")["outputs"])
    assert "made more than 5,000 files" in text and "made them all" not in text, text[:2000]


def test_a_huge_markdown_cell_is_not_cleaned_or_shown(graded):
    nb = gc.read(_autograded(graded, "output-flood"))
    said = next(c for c in nb["cells"] if c.get("id") == "said")
    assert "not shown by the grader" in gc._code(said) and len(gc._code(said)) < 1000


def test_output_is_capped_as_it_arrives(graded):
    path = _autograded(graded, "output-flood")
    assert path.stat().st_size < NOTEBOOK_OUTPUT + 512 * 1024
    assert "output truncated by the grader" in _outputs_text(path)


def _feedback(graded, student: str) -> str:
    gc.nbgrader(graded["course"], "generate_feedback", LESSON, "--student", student, "--force")
    path = graded["course"] / "feedback" / student / LESSON / f"{LESSON}.html"
    return path.read_text(encoding="utf-8")


def test_nothing_of_anyone_else_reaches_the_student(graded):
    """The exfiltration ran (it printed its own home) but found none of the planted secrets."""
    text = _outputs_text(_autograded(graded, "exfiltrate"))
    assert "MPLBACKEND" in text, "the attack did not run"
    page = _feedback(graded, "exfiltrate")
    for secret in PLANTED:
        assert secret not in text
        assert secret not in page
    assert "JUPYTERHUB" not in text and "ATTNLAB_EXCHANGE" not in text


def test_hooks_a_student_registers_do_not_outlive_their_cell(graded):
    """IPython events, an AST transformer, a wrapped ``print`` and a garbage-collector callback
    registered in an added cell, each sleeping or printing, are put back once the cell has
    run: no later cell runs them (their cost would otherwise fall on the lesson's cells,
    outside the student's budget)."""
    nb = gc.read(_autograded(graded, "hooks"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert "hooks set" in json.dumps(_cell(graded, "hooks")["outputs"]), "the attack did not run"
    after = cells[[c.get("id") for c in cells].index("cheat") + 1 :]
    lesson = [c for c in after if c["source"] and not gc._meta(c).get("solution")]
    assert lesson and all(c.get("execution_count") for c in lesson)
    fired = [c["source"][:40] for c in after if "hook-fired" in json.dumps(c["outputs"])]
    assert not fired, fired


def test_a_thread_left_running_makes_the_cells_after_it_the_students_cost(graded):
    """A thread left running in C loops takes the interpreter from every later cell, which
    putting hooks back cannot stop: the grader sees the kernel's extra thread from outside
    (``/proc``), and from then on every cell's time counts against the student's budget,
    so the rest of that notebook stops costing the class time. No honest student is taken
    for one."""
    said = json.dumps(_cell(graded, "busy-thread")["outputs"])
    assert "thread started" in said, "the attack did not run"
    assert "1 more thread(s) or process(es) running" in said, said
    for student in graded["kinds"]:
        if student.startswith("honest"):
            assert "running after it ended" not in _outputs_text(_autograded(graded, student))


def test_cells_a_student_added_share_one_small_budget(graded):
    """Added cells that each sleep under the cell limit stop costing time once the student's
    budget is used up: the rest are not run and say so, and the lesson's own cells after them
    still run (the student's feedback keeps their outputs)."""
    nb = gc.read(_autograded(graded, "added-sleeps"))
    sleeps = [c for c in nb["cells"] if str(c.get("id", "")).startswith("sleep-")]
    assert len(sleeps) == SLEEPS
    not_run = [c for c in sleeps if "not run during grading" in json.dumps(c["outputs"])]
    ran = SLEEPS - len(not_run)
    assert ran * SLEEP <= STUDENT_BUDGET + SLEEP, f"{ran} of the sleeps ran"
    assert len(not_run) >= SLEEPS - STUDENT_BUDGET // SLEEP - 1
    after = nb["cells"][nb["cells"].index(sleeps[-1]) + 1 :]
    lesson = [c for c in after if c["cell_type"] == "code" and c["source"] and not gc._meta(c)]
    said = ("not run by the grader", "not run during grading")  # the grader's notes only: the
    # widget self-test's static-page text says it "does not run here"
    assert lesson and all(
        not any(s in json.dumps(c["outputs"]) for s in said) and c.get("execution_count")
        for c in lesson
    ), json.dumps([c["outputs"] for c in lesson])[:2000]


def test_the_keys_of_a_repository_copy_the_grader_names_are_hidden(graded):
    """The grading process's ``ATTNLAB_ANSWER_KEYS`` and ``ATTNLAB_SOURCE`` name a clone outside
    the course folder, and a stray clone lies beside it that nothing names: the Execute kernel
    sees neither variable nor anything of either clone, and nothing of the key reaches the
    notebook or the feedback page."""
    path = _autograded(graded, "key-hunt")
    text = _outputs_text(path)
    assert "key hunt ran" in text, "the attack did not run"
    assert text.count("refused:") == 5, text[:3000]
    assert "unset/lesson7.py" in text  # neither variable reached the kernel
    assert KEY_MARK not in text and KEY_MARK not in _feedback(graded, "key-hunt")


def _scripts(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>(.*?)</script>", html, flags=re.S | re.I)


def test_no_script_a_student_wrote_reaches_a_browser(graded):
    nb = gc.read(_autograded(graded, "script"))
    outputs = json.dumps([c.get("outputs", []) for c in nb["cells"]])
    markdown = json.dumps([c["source"] for c in nb["cells"] if c["cell_type"] == "markdown"])
    assert "attackJs(1)" in outputs, "the attack did not run"
    for text in (outputs, markdown):
        assert "<script" not in text
        assert not re.search(r"\bon\w+\s*=|javascript:|<iframe", text, flags=re.I)
    assert "application/javascript" not in outputs and "image/svg+xml" not in outputs
    page = _feedback(graded, "script")
    assert not any("attackJs" in script for script in _scripts(page))
    assert not re.search(r"<[^>]+\bon\w+\s*=\s*[\"']?attackJs", page)
    assert not re.search(r"<a\b[^>]*href\s*=\s*[\"']?javascript:", page, flags=re.I)


_WALLS = """
import os, sys, attnlab, numpy, matplotlib
root = sys.argv[1]
for name in ('.git', 'tests', 'tools', 'source', 'answer_keys', 'docs', 'notebooks'):
    path = os.path.join(root, name)
    print(name, 'SEEN' if os.path.exists(path) and os.listdir(path) else 'hidden')
print('imports', attnlab.__file__)
"""


def test_the_sandbox_hides_the_source_checkout(tmp_path):
    """With the course installed editable from a checkout, the grading kernel sees its
    ``attnlab`` package and the venv, never its ``.git`` (``git show HEAD:answer_keys/…``),
    tests, tools or sources."""
    import sys

    package = sandbox._package_dir()
    if not sandbox.is_checkout(package.parent):
        pytest.skip("attnlab is not installed from a source checkout here")
    (tmp_path / "home").mkdir()
    command = [*sandbox.bwrap_command(tmp_path, [])]
    walls = sandbox.limited([sys.executable, "-c", _WALLS, str(package.parent)], sandbox.Limits())
    result = subprocess.run([*command, *walls], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "SEEN" not in result.stdout, result.stdout
    assert f"imports {package / '__init__.py'}" in result.stdout


def test_a_checkout_is_hidden_whole_but_its_package_and_venv(tmp_path, monkeypatch):
    checkout = tmp_path / "repo"
    for name in (".git", "tests", "attnlab", ".venv/lib", "answer_keys"):
        (checkout / name).mkdir(parents=True)
    monkeypatch.setattr(sandbox, "_package_dir", lambda: checkout / "attnlab")
    monkeypatch.setattr(sandbox.sys, "prefix", str(checkout / ".venv"))
    monkeypatch.setattr(sandbox, "_runtime_dirs", lambda: [checkout / "tests", checkout])
    cmd = sandbox.bwrap_command(tmp_path / "scratch", [])
    pairs = {(cmd[i], cmd[i + 1]) for i in range(len(cmd) - 1)}
    bound = {cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i] == "--ro-bind"}
    assert ("--ro-bind", str(checkout)) not in pairs and ("--ro-bind", "/") not in pairs
    runtime = {b for b in bound if sandbox._within(Path(b), checkout)}
    assert runtime == {str(checkout / "attnlab"), str(checkout / ".venv")}
    assert "/" not in bound and str(checkout) not in bound


_HOST_HUNT = """
import os, sys
print('top', ' '.join(sorted(os.listdir('/'))))
print('users', len(open('/etc/passwd').read().splitlines()))
for path in sys.argv[1:]:
    try:
        print(path, 'READ', open(path).read())
    except OSError as error:
        print(path, 'refused', type(error).__name__)
"""


def test_the_sandbox_shows_only_an_allow_list_of_the_host(tmp_path):
    """A stray copy of the keys and another course's graded work, in host folders nothing names
    (``/var/tmp``, ``/srv``, ``/opt`` …), are not there for a grading kernel: its root holds
    only the system's folders, a few files of ``/etc``, the runtime and its scratch folder, and
    ``/etc/passwd`` names only the grading user."""
    import sys

    stray = next(Path(d) for d in ("/var/tmp", "/dev/shm") if Path(d).is_dir())
    stray = Path(tempfile.mkdtemp(prefix="attnlab-stray-", dir=stray))
    try:
        (stray / "answer_keys").mkdir()
        (stray / "answer_keys" / "lesson7.py").write_text("KEY = 'stray-key-5d0e'\n")
        (tmp_path / "home").mkdir()
        command = sandbox.bwrap_command(tmp_path, [])
        paths = [str(stray / "answer_keys" / "lesson7.py"), "/etc/shadow", "/etc/hostname"]
        hunt = sandbox.limited([sys.executable, "-c", _HOST_HUNT, *paths], sandbox.Limits())
        result = subprocess.run([*command, *hunt], capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(stray, ignore_errors=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "READ" not in result.stdout and "stray-key" not in result.stdout, result.stdout
    top = set(result.stdout.split("top ", 1)[1].split("\n", 1)[0].split())
    runtime = {Path(p).parts[1] for p in sandbox._runtime_binds(sandbox._package_dir(), [])}
    allowed = {Path(f).name for f in sandbox.SYSTEM_FOLDERS} | {"dev", "proc", "etc", "tmp"}
    assert top <= allowed | runtime | {tmp_path.parts[1]}, top
    assert not top & {"srv", "var", "opt", "mnt", "home", "media", "boot"} - runtime, top
    assert "users 1\n" in result.stdout


#: Run in an armed grading kernel (issue 39): every way to start a process is refused, the
#: system calls themselves too (ctypes, past any Python hook), while threads, numpy's BLAS and
#: scipy's thread workers go on working.
_NO_PROCESSES = """
import ctypes, os, subprocess, threading
import numpy as np
from scipy import fft, optimize


def refused(start):
    try:
        start()
    except OSError as error:
        return str(error)
    raise AssertionError(f"{start} started a process")


said = [refused(os.fork), refused(lambda: subprocess.run(["true"])),
        refused(lambda: optimize.brute(abs, (slice(0, 2, 1),), finish=None, workers=2))]
assert all("graded answers may not start processes" in s for s in said[:2]), said
libc = ctypes.CDLL(None, use_errno=True)
for number, args in ((56, (17, 0, 0, 0, 0)), (57, ())):  # clone(SIGCHLD), fork (x86_64)
    pid = libc.syscall(number, *args)
    if pid == 0:
        os._exit(0)
    assert pid == -1, (number, pid)
box = []
product = lambda: box.append(float((np.ones((300, 300)) @ np.ones(300)).sum()))
worker = threading.Thread(target=product)
worker.start()
worker.join()
assert box == [90000.0] and fft.fft(np.ones(64), workers=2)[0] == 64
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the raw syscall numbers are x86_64's")
def test_an_armed_grading_kernel_starts_no_process(tmp_path):
    """The forbidden softmax, the course's backward pass or 8.4's whole score matrix computed in
    a forked child were never seen by the tripwire or the memory tracer of the grading kernel
    (a red team's 3.1 5/5, 9.2 3/3 and 8.4 2/2, fair 0): once armed, it starts no process."""
    from attnlab.grading.remote import CleanKernel, arm

    with CleanKernel(tmp_path, hidden=[]) as kernel:
        arm(kernel)
        status, error = kernel.run(_NO_PROCESSES)
    assert status == "ok", error


#: Run in an armed grading kernel: no widget leads to the kernel, the shell runs no string.
_NO_KERNEL_REACH = """
import ipywidgets as widgets
from IPython import get_ipython

from attnlab.explorers.score_row import ScoreRowExplorer

bar = widgets.IntProgress(max=10)
bar.value = 3  # a widget still works: its state changes, its messages go nowhere
explorer = ScoreRowExplorer()
reached = []
for made in (bar, widgets.HTML("x"), *explorer.controls.values()):
    if hasattr(made.comm, "kernel"):
        reached.append(type(made).__name__)
assert not reached, reached
shell = get_ipython()
refused = []
for run in (lambda: shell.ev("1"), lambda: shell.ex("x = 1"),
            lambda: shell.run_line_magic("time", "1"), lambda: shell.getoutput("true")):
    try:
        run()
    except PermissionError as exc:
        refused.append("kernel's shell" in str(exc))
assert refused == [True] * 4, refused
"""


def test_an_armed_grading_kernel_leads_no_widget_to_the_kernel(tmp_path):
    """A red team's 5/5 in lesson 11: ``bar.comm.kernel.shell.ev("lesson11._previous")`` (the
    lesson's progress bar, or a widget the answer made) ran code the lint never read: the
    checker's reference, the forbidden library with the tripwire switched off, a thread. Armed,
    the kernel's widgets have inert comms and its shell refuses string code."""
    from attnlab.grading.remote import CleanKernel, arm

    with CleanKernel(tmp_path, hidden=[]) as kernel:
        arm(kernel)
        status, error = kernel.run(_NO_KERNEL_REACH)
    assert status == "ok", error


#: Run in a grading kernel: what it can see of the checkout the grader's ``attnlab`` is
#: installed (editable) from, while the course folder is elsewhere.
_EDITABLE_HUNT = """
import os, sys
repo = {repo!r}
seen = []
for name in ('answer_keys', 'source', '.git', 'tests', 'tools', 'notebooks', 'pyproject.toml'):
    path = os.path.join(repo, name)
    if os.path.exists(path):
        seen.append(name)
try:
    listed = sorted(os.listdir(repo))
except OSError:
    listed = None
import attnlab
assert not seen and set(listed or ()) <= {{'attnlab', {venv!r}}}, (seen, listed)
"""


def test_an_editable_checkout_on_the_path_is_not_shown_whole(tmp_path, monkeypatch):
    """Red team round 9 (W1): the grader's ``attnlab`` was an editable install from a git
    checkout (its folder on ``sys.path``) and the course folder elsewhere; both grading
    sandboxes mounted that checkout whole, read-only: ``.git``, ``answer_keys/``, ``source/``
    and ``tests/`` readable from a student's cell. Now only its package comes in.

    This repository's own venv is such an install; the course folder is a copy of it here
    (with ``answer_keys/``), the grader imports ``attnlab`` from the copy, as nbgrader run in
    a course folder does."""
    import sys

    from attnlab.grading.remote import CleanKernel

    repo = sandbox._package_dir().parent
    if not (repo / ".git").exists() or str(repo) not in map(str, sandbox._runtime_dirs()):
        pytest.skip("attnlab is not an editable install from a git checkout here")
    course = tmp_path / "course"
    shutil.copytree(
        repo / "attnlab", course / "attnlab", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("answer_keys", "source"):
        (course / name).mkdir()
    # the grader reads keys and worked solutions beside the package it imported: the course's
    monkeypatch.setattr(sandbox, "_package_dir", lambda: course / "attnlab")
    monkeypatch.setattr("attnlab.exercises.keys.key_folder", lambda: course / "answer_keys")
    monkeypatch.setattr("attnlab.exercises.solutions.source_folder", lambda: course / "source")
    monkeypatch.chdir(course)
    # a script folder of the checkout on the path, as a test or tool that imports from
    # benchmarks/ leaves it (a fresh-clone CI showed it mounted whole)
    monkeypatch.syspath_prepend(str(repo / "benchmarks"))
    venv = Path(sys.prefix).resolve()
    venv = venv.relative_to(repo).parts[0] if sandbox._within(venv, repo) else "attnlab"
    with CleanKernel(course) as kernel:
        status, error = kernel.run(_EDITABLE_HUNT.format(repo=str(repo), venv=venv))
    assert status == "ok", error


#: Run in an armed grading kernel (red team round 9, W2): ``numpy.ma.mrecords.openfile`` read
#: any file the kernel could see, the text coming back in the check's message. Files outside
#: the runtime are refused now, however they are opened; imports and the kernel's home work.
_NO_FILES = """
import io, os
from numpy.ma.mrecords import openfile
said = []
for read in (lambda: openfile({key!r}).read(), lambda: open({key!r}).read(),
             lambda: os.open({key!r}, os.O_RDONLY), lambda: os.listdir({folder!r}),
             lambda: open('/etc/passwd').read(), lambda: io.FileIO({key!r}).read(),
             lambda: open(os.path.join(os.getcwd(), '..', 'x'), 'w')):
    try:
        read()
    except PermissionError as error:
        said.append(str(error))
    else:
        raise AssertionError(f"{{read}} was let through")
assert all('may not open files outside the Python runtime' in s for s in said), said
import scipy.stats, scipy.signal, numpy as np  # lazy imports read the runtime's files
np.save('mine.npy', np.arange(3))  # the kernel's own home
assert np.load('mine.npy').sum() == 3 and scipy.stats.norm.cdf(0) == 0.5
"""


@pytest.mark.parametrize("box", [True, False], ids=["sandboxed", "plain-kernel"])
def test_an_armed_grading_kernel_opens_no_file_outside_the_runtime(tmp_path, box):
    """The second wall, and the only one where grading falls back to a plain kernel: the
    sandbox shows only an allow-list of the host; the lint knows only some file readers."""
    from attnlab.grading.remote import CleanKernel, arm

    if box and sandbox.unavailable() is not None:
        pytest.skip(sandbox.unavailable())
    keys = tmp_path / "answer_keys"
    keys.mkdir()
    (keys / "lesson7.py").write_text("KEY = 'files-key-7c1a'\n")
    code = _NO_FILES.format(key=str(keys / "lesson7.py"), folder=str(keys))
    with CleanKernel(tmp_path, hidden=[], sandbox=box) as kernel:
        arm(kernel)
        status, error = kernel.run(code)
        raised = kernel.run("raise ValueError('a traceback is still formatted')")
    assert status == "ok", error
    assert raised == ("error", "ValueError: a traceback is still formatted"), raised


#: Cells of a notebook for nbgrader's Execute (red team round 9, W3): an added cell started
#: three children of 1.5 GiB each, past the per-process memory cap; memory no cap counts.
_EXECUTE_PROCESSES = [
    "print('lesson ran')",
    "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'print(\"child ran\")'])",
    "import os\nos.fork()",
    "import os\nos.memfd_create('held')",
    "import resource\nprint('open files', resource.getrlimit(resource.RLIMIT_NOFILE)[1])",
    "print('after ran')",
]


def test_the_execute_kernel_starts_no_process(tmp_path):
    """nbgrader's Execute kernel had no process ban: up to 240 children of 3 GiB each could
    run the grader's machine out of memory, killing the grading of the whole class. Now
    none starts, and the cell says why; the cells after it still run."""
    import json

    import nbformat

    from attnlab.grading.execute import LimitedExecute

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in _EXECUTE_PROCESSES]
    nb, _ = LimitedExecute(timeout=60).preprocess(nb, {})
    texts = [json.dumps(cell.outputs) for cell in nb.cells]
    assert "lesson ran" in texts[0] and "after ran" in texts[-1], texts
    printed = [o.get("text", "") for o in nb.cells[1].outputs if o["output_type"] == "stream"]
    assert "child ran" not in "".join(printed), printed
    for text in texts[1:3]:
        assert "without starting processes" in text and "PermissionError" in text, text
    assert "Operation not permitted" in texts[3], texts[3]
    assert f"open files {sandbox.OPEN_FILES}" in texts[4] or not sandbox.use(), texts[4]
