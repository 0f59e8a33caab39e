"""nbgrader's Execute step with limits that hold, and outputs that are safe to show.

nbgrader's ``Execute`` runs *everything* a student wrote (the grades are decided apart, by
:class:`~attnlab.grading.nbgrader_plugin.GradeOutsideKernel`, but these outputs become the
student's feedback). :class:`LimitedExecute`, used in its place by the course's
``nbgrader_config.py``:

* runs the kernel in the grading sandbox with an **asynchronous** kernel manager
  (:class:`~attnlab.grading.sandbox.AsyncSandboxedKernelManager`): with a synchronous one,
  nbclient's reads block its event loop and its cell timeout never fires;
* stops a cell past ``Execute.timeout`` whatever it does with signals: an interrupt first,
  and when the kernel is still busy ``iopub_timeout`` seconds later, the kernel is killed;
  the cells after it are not run (each says why) and grading goes on with the next step;
* gives the whole notebook ``notebook_timeout`` seconds, and the code the student wrote
  (answer cells, cells they added, lesson cells they changed: :func:`student_cells`)
  ``student_cells_timeout`` seconds together: past it, the rest of that code is not run (each
  such cell says why) while the lesson's own cells go on, so a student who adds cells that
  sleep costs the class that budget, not ``notebook_timeout``; after each such cell the
  kernel's hooks are put back as they were before the first (:data:`HOOKS_SNAPSHOT`,
  :data:`HOOKS_RESTORE`), so a cell that registers an IPython event, an AST transformer, a
  trace function or a garbage-collector callback, or wraps a builtin, to slow the lesson's
  cells does not carry its cost past its own budget; and a student's cell that leaves
  threads or processes running (seen from outside, in the host's ``/proc``) makes every
  later cell count against the student's budget too (a busy thread takes the interpreter
  from every cell after it). What is left, slowing the lesson's cells by other means, is
  bounded by ``notebook_timeout`` and costs only that student's feedback: the grade is
  decided in a fresh kernel;
* starts **no process** from the notebook's first cell on, and makes no memory that no cap
  counts (``memfd_create``, ``shmget``): :data:`BAN_PROCESSES`, the grading worker's seccomp
  filter and audit hook. The memory cap is per process, so a red team's added cell held three
  children of 1.5 GiB each past it (240 were allowed, enough to run the machine out of memory
  and kill the grading of the whole class); no lesson cell starts a process, and a cell that
  tries is told why in its output;
* caps what a cell and the notebook may print **as it arrives** (nbgrader's ``LimitOutput``
  runs only after the whole notebook ran, and by then the grading process holds it all), and
  the size of any one message the kernel sends (``max_message``, a ZeroMQ socket option);
* sanitizes every output and every Markdown/raw cell once the notebook has run
  (:func:`~attnlab.grading.sanitize.sanitize_notebook`): no script, no event handler, no
  widget state reaches the formgrader or the feedback HTML.

:class:`SanitizeOutputs` does the same sanitizing as a preprocessor of its own, run last
before nbgrader saves the notebook (after the course's own feedback has been written in).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import nbformat
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer

from attnlab.exercises.rules.left_out import LEFT_OUT_NOTE, left_out
from attnlab.exercises.rules.lint import MAX_CELL
from attnlab.grading.sandbox import AsyncSandboxedKernelManager
from attnlab.grading.sanitize import sanitize_notebook


class LimitedAsyncKernelClient(AsyncKernelClient):
    """An asynchronous kernel client whose sockets refuse any message larger than
    :attr:`max_message` bytes (ZeroMQ drops the connection instead of reading it)."""

    max_message = Integer(32 * 2**20, help="Largest message the kernel may send (bytes).").tag(
        config=True
    )

    def _context_default(self):
        import zmq

        context = super()._context_default()
        context.setsockopt(zmq.MAXMSGSIZE, self.max_message)
        return context


#: Message kinds that carry output, counted against the caps.
_OUTPUT_MESSAGES = frozenset(
    {
        "stream",
        "display_data",
        "execute_result",
        "error",
        "update_display_data",
        "comm_open",
        "comm_msg",
    }
)


def _message_size(msg) -> int:
    content = msg.get("content", {})
    if msg["msg_type"] == "stream":
        size = len(content.get("text", ""))
    else:
        size = len(json.dumps(content, default=str))
    return size + sum(len(b) for b in msg.get("buffers") or [])


def _note(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=f"\n[{text}]\n")


def _same_code(code) -> str:
    """``code`` as two copies of one cell compare: joined, each line's trailing spaces and the
    blank lines around it dropped."""
    text = code if isinstance(code, str) else "".join(code)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def student_cells(nb, source_nb=None) -> list[int]:
    """Indices of the code cells of ``nb`` whose code the student wrote.

    Those are the answer cells (nbgrader's solution cells), and, when the lesson's source
    notebook ``source_nb`` (nbformat JSON) is given, every code cell that is neither one of
    its grade cells (nbgrader puts their code back before Execute) nor a copy of one of its
    lesson cells: cells the student added or changed. Each lesson cell of the source matches
    one cell of ``nb`` at most, so a lesson cell pasted twice counts once as the lesson's.

    Parameters
    ----------
    nb : NotebookNode or dict
        The submitted notebook.
    source_nb : dict, optional
        The lesson's source notebook; without it only the answer cells are found.

    Returns
    -------
    list of int
        Indices into ``nb``'s cells, in order.

    Examples
    --------
    >>> lesson = {"cell_type": "code", "metadata": {}, "source": "x = 1"}
    >>> answer = {"cell_type": "code", "source": "def f(): pass",
    ...           "metadata": {"nbgrader": {"solution": True, "grade_id": "f"}}}
    >>> added = {"cell_type": "code", "metadata": {}, "source": "import time"}
    >>> source = {"cells": [lesson, answer]}
    >>> student_cells({"cells": [lesson, answer, added, lesson]}, source)
    [1, 2, 3]
    >>> student_cells({"cells": [lesson, answer, added]})
    [1]
    """
    lesson = Counter()
    grade_ids = set()
    for cell in (source_nb or {}).get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if cell.get("cell_type") != "code" or meta.get("solution"):
            continue
        if meta.get("grade"):
            grade_ids.add(meta.get("grade_id"))
        else:
            lesson[_same_code(cell.get("source", ""))] += 1
    found = []
    for index, cell in enumerate(nb["cells"]):
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if cell.get("cell_type") != "code":
            continue
        if meta.get("solution"):
            found.append(index)
        elif source_nb is None:
            continue
        elif meta.get("grade") and meta.get("grade_id") in grade_ids:
            grade_ids.discard(meta.get("grade_id"))  # a second copy of it is the student's
        elif lesson[_same_code(cell.get("source", ""))] > 0:
            lesson[_same_code(cell.get("source", ""))] -= 1
        else:
            found.append(index)
    return found


def source_notebook(parent, config, resources) -> dict | None:
    """The lesson's source notebook (nbformat JSON) of the submission nbgrader is processing,
    found through its course directory; None when ``resources`` names none or it is missing."""
    info = (resources or {}).get("nbgrader") or {}
    if not info.get("assignment") or not info.get("notebook"):
        return None
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(parent=parent, config=config)
    folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
    path = folder / f"{info['notebook']}.ipynb"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


#: Run silently before the first cell the student wrote: remembers the kernel's hooks.
HOOKS_SNAPSHOT = """
def _attnlab_hooks():
    import builtins, gc, sys, threading
    ip = get_ipython()
    kept = dict(
        events=ip.events,
        callbacks={k: list(v) for k, v in ip.events.callbacks.items()},
        ast=list(ip.ast_transformers),
        post=list(ip.input_transformers_post),
        cleanup=list(ip.input_transformer_manager.cleanup_transforms),
        line=list(ip.input_transformer_manager.line_transforms),
        interval=sys.getswitchinterval(),
        gc=list(gc.callbacks),
        builtins=dict(vars(builtins)),
    )
    settrace, setprofile, setinterval = sys.settrace, sys.setprofile, sys.setswitchinterval
    thread_trace, thread_profile = threading.settrace, threading.setprofile

    def restore():
        ip.events = kept["events"]
        ip.events.callbacks = {k: list(v) for k, v in kept["callbacks"].items()}
        ip.ast_transformers[:] = kept["ast"]
        ip.input_transformers_post[:] = kept["post"]
        ip.input_transformer_manager.cleanup_transforms[:] = kept["cleanup"]
        ip.input_transformer_manager.line_transforms[:] = kept["line"]
        settrace(None), setprofile(None), thread_trace(None), thread_profile(None)
        setinterval(kept["interval"])
        gc.callbacks[:] = kept["gc"]
        for name, value in kept["builtins"].items():
            if vars(builtins).get(name) is not value:
                setattr(builtins, name, value)

    sys._attnlab_restore_hooks = restore
_attnlab_hooks()
del _attnlab_hooks
"""

#: Run silently after each cell the student wrote: puts the hooks back (see HOOKS_SNAPSHOT).
HOOKS_RESTORE = "import sys as _s; _s._attnlab_restore_hooks(); del _s"

#: Seconds the kernel has to put its hooks back; past them it counts as stopped.
HOOKS_TIMEOUT = 10

#: What a cell that tries to start a process is told (a ``PermissionError`` in its output).
NO_PROCESSES_HERE = (
    "the grader runs your notebook without starting processes (each would hold memory past "
    "the grading kernel's cap); your grade does not depend on this cell"
)

#: Run silently before the notebook's first cell: from then on the kernel starts no process
#: and makes no memory that no cap counts (``memfd_create``, ``shmget``):
#: :func:`attnlab.grading.worker.forbid_processes`. No lesson cell starts one.
BAN_PROCESSES = f"""
import attnlab.grading.worker as _attnlab_worker
_attnlab_why = _attnlab_worker.forbid_processes({NO_PROCESSES_HERE!r})
del _attnlab_worker
if _attnlab_why is not None:
    raise RuntimeError(_attnlab_why)
del _attnlab_why
"""


class LimitedExecute(Execute):
    """nbgrader's ``Execute`` with a sandboxed kernel, limits that hold and clean outputs.

    Configure as ``Execute`` (``--Execute.timeout=5``) or with this class's own options:
    ``notebook_timeout``, ``max_cell_output``, ``max_output``, ``max_outputs_per_cell``.
    """

    notebook_timeout = Integer(
        300, help="Seconds the whole notebook may run; the cells left then are not run."
    ).tag(config=True)
    student_cells_timeout = Integer(
        60,
        help="Seconds the code the student wrote (answer cells, cells they added or changed) "
        "may run in all; past it the rest of that code is not run, and the lesson's own cells "
        "go on.",
    ).tag(config=True)
    max_cell_output = Integer(
        1 * 2**20, help="Bytes of output one cell may produce; the rest is dropped as it comes."
    ).tag(config=True)
    max_output = Integer(8 * 2**20, help="Bytes of output the whole notebook may produce.").tag(
        config=True
    )
    max_outputs_per_cell = Integer(
        500, help="Outputs (prints are batched; displays are not) one cell may add."
    ).tag(config=True)

    def __init__(self, **kwargs):
        kwargs.setdefault("kernel_manager_class", AsyncSandboxedKernelManager)
        super().__init__(**kwargs)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.client_class = f"{__name__}.LimitedAsyncKernelClient"
        return km

    def preprocess(self, nb, resources=None, km=None):
        self._deadline = time.monotonic() + self.notebook_timeout
        self._stopped: str | None = None
        source_nb = source_notebook(self.parent, self.config, resources)
        if source_nb is None:
            self.log.info("No source notebook found: only answer cells count as student code")
        self._student = {id(nb.cells[i]) for i in student_cells(nb, source_nb)}
        #: The lesson cells the source marks to be left out, by their code (a submission's own
        #: metadata is not read): a cell the student wrote or changed is never one of them.
        self._left_out = Counter(
            _same_code(cell.get("source", ""))
            for cell in (source_nb or {}).get("cells", [])
            if left_out(cell)
        )
        self._student_left = float(self.student_cells_timeout)
        self._hooks_kept = False
        self._processes_banned = False
        #: Why the cells after a student's cell count against the student's budget too: that
        #: cell left threads or processes running (None while none did).
        self._left_running: str | None = None
        self._used = 0
        self._cell_used: dict[int, tuple[int, int]] = {}  # id(cell) -> (bytes, outputs)
        self._truncated: set[int] = set()
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            sanitize_notebook(nb)
        return nb, resources

    # ------------------------------------------------------------------ time
    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        left = max(1, int(self._deadline - time.monotonic()))
        if self._charged(cell):
            left = min(left, max(1, int(self._student_left)))
        return left if timeout is None else min(timeout, left)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type != "code" or not cell.source.strip():
            return cell
        if self._stopped is None and time.monotonic() >= self._deadline:
            await self._stop(f"the notebook's {self.notebook_timeout} s of running were used up")
        if self._stopped is not None:
            cell.outputs = [_note(f"not run by the grader: {self._stopped}")]
            return cell
        if len(cell.source) > MAX_CELL:  # graded 0 with the reason, never run or parsed
            size = len(cell.source)
            cell.outputs = [
                _note(
                    f"not run by the grader: a cell longer than {MAX_CELL:,} "
                    f"characters is not run (this one holds {size:,})"
                )
            ]
            return cell
        if not self._processes_banned:
            # a red team's added cell held 3 children of 1.5 GiB each, past the per-process
            # memory cap (up to 240 were allowed): the class's grading ran out of memory
            self._processes_banned = True
            if not await self._silently(BAN_PROCESSES):
                self.log.warning("The kernel's processes could not be banned")
        student, charged = id(cell) in self._student, self._charged(cell)
        if not student and self._left_out[_same_code(cell.source)] > 0:
            self._left_out[_same_code(cell.source)] -= 1
            cell.outputs = [_note(LEFT_OUT_NOTE)]
            return cell
        if charged and self._student_left < 1:
            cell.outputs = [_note(self._student_note())]
            return cell
        if student and not self._hooks_kept:
            self._hooks_kept = await self._silently(HOOKS_SNAPSHOT)
        threads = self._running_threads() if student else None
        started, given = time.monotonic(), self._get_timeout(cell)
        cut = charged and given < (self.timeout or float("inf"))  # the budget, not the cell limit
        try:
            cell = await super().async_execute_cell(
                cell, cell_index, execution_count=execution_count, store_history=store_history
            )
            if cut and time.monotonic() - started >= given:
                cell.outputs.append(_note(self._student_note(stopped=given)))
            return cell
        except (CellTimeoutError, DeadKernelError) as error:
            reason = getattr(self.km, "stopped_because", None) or self._why(error, cell)
            await self._stop(reason)
            cell.outputs.append(
                nbformat.v4.new_output(
                    "error",
                    ename="CellStoppedByGrader",
                    evalue=reason,
                    traceback=[f"CellStoppedByGrader: {reason}"],
                )
            )
            return cell
        finally:
            if student and self._hooks_kept and self._stopped is None:
                await self._silently(HOOKS_RESTORE)
            if student and self._stopped is None:
                await self._note_left_running(cell, threads)
            if charged:
                self._student_left -= time.monotonic() - started

    execute_cell = run_sync(async_execute_cell)

    def _charged(self, cell) -> bool:
        """Whether ``cell``'s time counts against the student's budget: a cell the student
        wrote, or any cell after one that left threads or processes running."""
        return id(cell) in self._student or self._left_running is not None

    def _running_threads(self) -> int | None:
        counting = getattr(self.km, "running_threads", None)
        return counting() if callable(counting) else None

    async def _note_left_running(self, cell, before: int | None, grace: float = 1.0) -> None:
        """After a student's ``cell``: when the kernel and its processes run more threads than
        before it (``before``) and still do ``grace`` seconds later, the cell left them
        running (a busy thread that holds the interpreter slows every cell after it; the
        hooks put back cannot stop it), and every later cell's time counts against the
        student's budget; the cell says so. The count is the host's (``/proc``), which no
        code in the kernel can change."""
        if before is None or self._left_running is not None:
            return
        deadline = time.monotonic() + grace
        while True:
            now = self._running_threads()
            if now is None or now <= before:
                return
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.1)
        self._left_running = (
            f"this cell left {now - before} more thread(s) or process(es) running after it "
            "ended, so every cell after it counts against the time your code gets"
        )
        self.log.info("The student's code left threads running: %s", self._left_running)
        cell.outputs.append(
            _note(
                f"the grader: {self._left_running} ({self.student_cells_timeout} s for all "
                "the code you wrote). Your grade does not depend on it: grading runs your "
                "answer cells again in a fresh kernel"
            )
        )

    async def _silently(self, code: str) -> bool:
        """Run ``code`` in the kernel, silently (no output, no history, no IPython events);
        whether it ran. A kernel that does not answer within :data:`HOOKS_TIMEOUT` seconds is
        stopped (the student's code made it so), and one that reports an error is logged."""
        if self.kc is None or self._stopped is not None:
            return False
        msg_id = self.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        try:
            reply = await asyncio.wait_for(self._reply(msg_id), HOOKS_TIMEOUT)
        except asyncio.TimeoutError:
            await self._stop(
                f"the kernel did not answer the grader within {HOOKS_TIMEOUT} s after a cell "
                "the student wrote"
            )
            return False
        ok = reply.get("content", {}).get("status") == "ok"
        if not ok:
            self.log.warning("The kernel's hooks could not be kept or put back: %s", reply)
        return ok

    async def _reply(self, msg_id: str) -> dict:
        """The shell channel's reply to ``msg_id`` (replies to anything else are dropped)."""
        while True:
            msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=None))
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def _student_note(self, stopped: float | None = None) -> str:
        """Why a cell of the student's was stopped after ``stopped`` seconds, or not run."""
        what = "not run during grading" if stopped is None else f"stopped after {stopped:g} s"
        running = f" ({self._left_running})" if self._left_running else ""
        return (
            f"{what}: the code you wrote (your answer cells and the cells you added or changed) "
            f"{'had used' if stopped is None else 'used'} up the {self.student_cells_timeout} s "
            f"the grader gives it in all{running}. Your grade does not depend on it: grading "
            "runs your answer cells again in a fresh kernel"
        )

    def _why(self, error, cell) -> str:
        if isinstance(error, DeadKernelError):
            return "the kernel died (a memory, process or disk limit, or the code ended it)"
        return (
            f"this cell was still running {self._get_timeout(cell)} s after it started "
            "and did not stop when interrupted"
        )

    async def _stop(self, reason: str) -> None:
        """Kill the kernel (an interrupt can be caught, a kill cannot); run nothing more."""
        self._stopped = reason
        self.log.warning("Stopping the student's kernel: %s", reason)
        try:
            if self.km is not None and await ensure_async(self.km.is_alive()):
                await ensure_async(self.km.shutdown_kernel(now=True))
        except RuntimeError as error:  # already gone
            self.log.debug("kernel already stopped: %s", error)

    # ------------------------------------------------------------------ output caps
    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"] in _OUTPUT_MESSAGES:
            key = id(cell)  # one cell's budget, however the caller numbers its cells
            size = _message_size(msg)
            used, count = self._cell_used.get(key, (0, 0))
            over = self._over(used + size, count + 1, self._used + size)
            if over and msg["msg_type"] == "stream" and not msg.get("buffers"):
                # keep what fits of a stream (the kernel sends many prints as one message)
                room = min(self.max_cell_output - used, self.max_output - self._used)
                if room > 0 and count + 1 <= self.max_outputs_per_cell:
                    content = msg["content"]
                    msg = {**msg, "content": {**content, "text": content["text"][:room]}}
                    self._cell_used[key] = (used + room, count + 1)
                    self._used += room
                    super().process_message(msg, cell, cell_index)
            if over:
                self._truncate(cell, key, over)
                return None
            self._cell_used[key] = (used + size, count + 1)
            self._used += size
        return super().process_message(msg, cell, cell_index)

    def _over(self, cell_bytes: int, cell_count: int, total: int) -> str | None:
        if cell_bytes > self.max_cell_output:
            return f"this cell printed more than {self.max_cell_output:,} bytes"
        if cell_count > self.max_outputs_per_cell:
            return f"this cell made more than {self.max_outputs_per_cell} outputs"
        if total > self.max_output:
            return f"the notebook printed more than {self.max_output:,} bytes"
        return None

    def _truncate(self, cell, key: int, why: str) -> None:
        if key in self._truncated:
            return
        self._truncated.add(key)
        cell.outputs.append(_note(f"output truncated by the grader: {why}"))


class SanitizeOutputs(NbGraderPreprocessor):
    """:func:`~attnlab.grading.sanitize.sanitize_notebook` as an nbgrader preprocessor (run it
    last before saving)."""

    def preprocess(self, nb, resources):
        sanitize_notebook(nb, course_feedback=True)
        return nb, resources
