"""The kernel side of grading: call one of the student's functions and write what happened.

The grading process (:mod:`attnlab.grading.remote`) imports this module in a fresh kernel
before any student code runs there, then (:mod:`attnlab.grading.grade`) calls :func:`start`,
still before any student code, with a secret key and every name the notebook's exercises
forbid. From then on, for every call a check makes, it runs ``serve(name, request,
response)``: the arguments are read from ``request`` (a pickle the grading process wrote), the
function named ``name`` in the kernel's namespace is called, and the outcome is written to
``response``: the value, or the exception's type and message, the inputs as they are after the
call (the grading process compares them with what it sent), the warnings raised, whether a
function the exercise forbids was entered on the way and, when asked, the bytes the call
allocated (``tracemalloc``).

What a student's code could change is kept out of the way:

* every function this module uses after :func:`start` is taken at import, so rebinding a
  library name later (``np.array_equal = ...``, ``attnlab.online.online_softmax = ...``)
  changes nothing here;
* the forbidden functions are known by the code objects they had **before any student code
  ran** (:func:`start` for the library, :func:`remember` right after each lesson cell for the
  notebook's own functions): a call into one is seen however it is reached (an alias, a
  rebound name, ``functools.partial``, a copy of its code);
* the report carries an HMAC-SHA256 under the key :func:`start` was given; the key lives only
  in a closure of this module, which answer code cannot name (the lint refuses ``_`` names,
  ``getattr`` and the course's grading modules), so a report written by anything else (a file
  dropped in the calls folder, a patched JSON encoder) is refused by the grading process.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import importlib
import inspect
import keyword
import os
import pickle
import platform
import struct
import sys
import threading
import time
import tracemalloc
import types
import warnings

import numpy as np

from attnlab.course import NUMERICS
from attnlab.exercises.rules.forbidden_registry import WHOLE_MODULES
from attnlab.exercises.rules.grading_mode import arm_grading_kernel
from attnlab.grading.wire import dumps, encode

# ----------------------------------------------------------- taken before any student code
_setprofile, _getprofile = sys.setprofile, sys.getprofile
_thread_setprofile = threading.setprofile
_tm_start, _tm_stop = tracemalloc.start, tracemalloc.stop
_tm_reset, _tm_traced = tracemalloc.reset_peak, tracemalloc.get_traced_memory
_tm_tracing, _tm_snapshot = tracemalloc.is_tracing, tracemalloc.take_snapshot
#: Frames kept per traced block: one, the least tracemalloc keeps; what is counted does not
#: depend on who allocated a block (:func:`_held`), and each frame kept costs time.
_FRAMES = 1
_pickle_load, _open = pickle.load, open
_sha256 = hashlib.sha256
_catch, _simplefilter = warnings.catch_warnings, warnings.simplefilter
_errstate = np.errstate
_CodeType, _FunctionType, _ModuleType = types.CodeType, types.FunctionType, types.ModuleType
_unwrap = inspect.unwrap
_callable, _isinstance, _getattr, _vars = callable, isinstance, getattr, vars
_type = type
_realpath, _fsdecode, _fspath = os.path.realpath, os.fsdecode, os.fspath
_get_ident = threading.get_ident
_monotonic = time.monotonic
_iskeyword = keyword.iskeyword

#: Forbidden name -> the code objects it stood for when it was recorded.
_REGISTRY: dict[str, frozenset] = {}
#: Forbidden name -> ids of builtin (C) functions it stood for.
_BUILTINS: dict[str, frozenset] = {}
_STATE: dict = {"sign": None}


def _codes_within(code) -> list:
    """``code`` and the code of every function defined inside it."""
    found, todo = [], [code]
    while todo:
        found.append(todo.pop())
        todo += [c for c in found[-1].co_consts if _isinstance(c, _CodeType)]
    return found


def _members(value, module_name=None) -> list:
    """The functions ``value`` stands for: itself; a whole module's, the functions and classes
    the registry lists for it (``WHOLE_MODULES``, as the learner's check reads them:
    :func:`attnlab.exercises.rules.forbidden.forbidden_code_objects`); a class's, the methods it
    defines in its module (properties and dataclass methods included)."""
    if _isinstance(value, _ModuleType):
        module_name = value.__name__
        found = []
        for key in WHOLE_MODULES.get(module_name, ()):
            member = _getattr(value, key, None)
            if _getattr(member, "__module__", None) != module_name:
                continue
            found += _members(member, module_name) if _isinstance(member, type) else [member]
        return found
    if _isinstance(value, type):
        module_name = module_name or value.__module__
        return [  # a property by its getter, a static or class method by its function
            m
            for m in list(_vars(value).values())
            if _getattr(_getattr(m, "fget", m), "__module__", None) == module_name
        ]
    return [value]


def _record(name: str, value) -> None:
    codes, builtins = set(_REGISTRY.get(name, ())), set(_BUILTINS.get(name, ()))
    for member in _members(value):
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if isinstance(member, property):
            member = member.fget
        if not _callable(member):
            continue
        try:
            code = _getattr(_unwrap(member), "__code__", None)
        except ValueError:  # a wrapper loop
            code = None
        if _isinstance(code, _CodeType):
            codes.update(_codes_within(code))
        elif not _isinstance(member, _FunctionType):
            builtins.add(id(member))
    _REGISTRY[name] = frozenset(codes)
    _BUILTINS[name] = frozenset(builtins)


def _resolve(name: str):
    """The object a dotted name stands for (a module or an attribute of one), or None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    module, _, attr = name.rpartition(".")
    try:
        return _getattr(importlib.import_module(module), attr) if module else None
    except (ImportError, AttributeError):
        return None


def _library() -> None:
    """Record every function of the course's numerics' API (``WHOLE_MODULES``), by every name
    it has."""
    import attnlab

    for module_name in NUMERICS:
        module = importlib.import_module(module_name)
        _record(module_name, module)
        for key, value in list(vars(module).items()):
            if (
                key in WHOLE_MODULES.get(module_name, ())
                and getattr(value, "__module__", None) == module_name
            ):
                _record(f"{module_name}.{key}", value)
    for key in attnlab.__all__:
        _record(f"attnlab.{key}", getattr(attnlab, key))


_library()


#: What the student is told when an answer (or its cell) tries to start a process.
NO_PROCESSES = "graded answers may not start processes"

#: Audit events (PEP 578) of the ways Python starts a process.
PROCESS_EVENTS = frozenset(
    {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system",
     "os.startfile", "subprocess.Popen", "pty.spawn"}
)  # fmt: skip


def _no_processes_hook(message: str = NO_PROCESSES):
    """An audit hook: every way Python has to start a process raises, naming it, so the
    student reads why (the seccomp filter of :func:`forbid_processes` is the wall)."""

    def hook(event: str, args) -> None:
        if event in PROCESS_EVENTS:
            raise PermissionError(f"{message}: {event}")

    return hook


#: Syscall numbers (x86_64, aarch64) and the audit architecture the filter lets through.
_SYSCALLS = {
    "x86_64": {
        "arch": 0xC000003E, "seccomp": 317, "clone": 56, "clone3": 435,
        # fork, vfork, execve, execveat; memfd_create, shmget: memory no cap counts (a
        # memfd's or a System V segment's pages are in no address space until mapped)
        "deny": (57, 58, 59, 322, 319, 29),
    },
    "aarch64": {
        "arch": 0xC00000B7, "seccomp": 277, "clone": 220, "clone3": 435,
        "deny": (221, 281, 279, 194),  # execve, execveat, memfd_create, shmget (no fork)
    },
}  # fmt: skip
_CLONE_THREAD = 0x00010000
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000


def _bpf(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def process_filter(machine: str | None = None) -> bytes:
    """The seccomp-BPF program of :func:`forbid_processes` for ``machine`` (default this one):
    ``clone`` without ``CLONE_THREAD``, ``fork``, ``vfork``, ``execve`` and ``execveat`` fail
    with ``EPERM``, and so do ``memfd_create`` and ``shmget`` (memory that no address-space
    cap counts: it could be held past the kernel's memory cap); ``clone3`` (whose flags a
    filter cannot read) with ``ENOSYS``, so the C library makes its threads with ``clone``;
    any other architecture's calls (``int 0x80``) and x32's fail too. Everything else is allowed.

    Examples
    --------
    >>> len(process_filter("x86_64")) % 8, len(process_filter("aarch64")) > 0
    (0, True)
    """
    calls = _SYSCALLS[machine or platform.machine()]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    deny = calls["deny"]
    n = len(deny)
    prog = [
        _bpf(ld, 4),  # seccomp_data.arch
        _bpf(jeq, calls["arch"], 1, 0),
        _bpf(ret, eperm),
        _bpf(ld, 0),  # seccomp_data.nr
        _bpf(jge, 0x40000000, 0, 1),  # x32's numbers
        _bpf(ret, eperm),
    ]
    # from deny[i] (at 6 + i) to the EPERM below (at 6 + n + 5): n - i + 4 lines ahead
    prog += [_bpf(jeq, number, n - i + 4, 0) for i, number in enumerate(deny)]
    prog += [
        _bpf(jeq, calls["clone3"], 0, 1),
        _bpf(ret, enosys),
        _bpf(jeq, calls["clone"], 0, 3),
        _bpf(ld, 16),  # the low word of args[0]: clone's flags
        _bpf(jset, _CLONE_THREAD, 1, 0),
        _bpf(ret, eperm),
        _bpf(ret, _RET_ALLOW),
    ]
    return b"".join(prog)


def forbid_processes(message: str = NO_PROCESSES) -> str | None:
    """From now on, no thread of this kernel can start a process or run another program.

    Two layers: an audit hook (PEP 578; cannot be removed) makes each of Python's ways raise
    ``PermissionError("graded answers may not start processes: os.fork")``; a seccomp filter
    installed on every thread of the process (``SECCOMP_FILTER_FLAG_TSYNC``, inherited by
    every thread made later) makes the kernel refuse the system calls themselves, however
    they are reached (:func:`process_filter`). Threads are still made (numpy's BLAS, scipy's
    ``workers``); a process pool is not (a red team ran the forbidden softmax, the course's
    backward pass and 8.4's whole score matrix in ``scipy.optimize.brute``'s forked
    children, where the tripwire and the memory tracer of this process see nothing).

    nbgrader's ``Execute`` kernel is banned too, before the notebook's first cell
    (:mod:`attnlab.grading.execute`, with its own ``message``): a red team's added cell held
    3 children of 1.5 GiB each, past the per-process memory cap, and 240 of them would have
    run the machine out of memory, killing the grading of the whole class.

    Returns None when the filter is installed, else why not (the hook is there anyway).
    """
    sys.addaudithook(_no_processes_hook(message))
    machine = platform.machine()
    if machine not in _SYSCALLS or not sys.platform.startswith("linux"):
        return f"no seccomp filter for {sys.platform} on {machine}"
    libc = ctypes.CDLL(None, use_errno=True)
    program = process_filter(machine)
    buffer = ctypes.create_string_buffer(program, len(program))
    # struct sock_fprog { unsigned short len; struct sock_filter *filter; }
    fprog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS (bwrap has set it already)
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}"
    calls = _SYSCALLS[machine]
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
    if libc.syscall(calls["seccomp"], 1, 1, fprog_buffer) != 0:
        return f"seccomp(SECCOMP_SET_MODE_FILTER) failed: errno {ctypes.get_errno()}"
    return None


#: What the student is told when an answer (or its cell) opens a file grading does not need.
NO_FILES = "graded answers may not open files outside the Python runtime"

#: ``os.open`` flags that write (``O_WRONLY``, ``O_RDWR``, ``O_CREAT``, ``O_TRUNC``, ``O_APPEND``).
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _folder(path) -> str:
    return _realpath(path).rstrip("/") + "/"


def file_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The folders an armed kernel may read from, and those it may write to (each ending in
    ``/``): read the Python runtime (``sys.prefix`` and the base and exec prefixes), ``/usr``
    (the system's libraries and fonts), the ``attnlab`` package, and the kernel's own working
    folder and matplotlib folder (its scratch home); write only those last two."""
    import attnlab

    own = [os.getcwd(), *filter(None, [os.environ.get("MPLCONFIGDIR")])]
    runtime = [sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", attnlab.__path__[0]]
    # where the runtime's packages are when they are not under its prefix (a venv whose
    # site-packages adds another's through a .pth, as a hub's shared environment may): the
    # package folders on the path, never another entry of it (a checkout, the working folder)
    runtime += [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    return (
        tuple(dict.fromkeys(_folder(p) for p in runtime + own)),
        tuple(dict.fromkeys(_folder(p) for p in own)),
    )


def _no_files_hook(readable: tuple[str, ...], writable: tuple[str, ...]):
    """An audit hook: opening (``open``, ``io.open``, ``os.open``, an import's read) or listing
    a path outside ``readable``, or writing outside ``writable``, raises ``PermissionError``.

    The sandbox (:mod:`attnlab.grading.sandbox`) shows a grading kernel only an allow-list of
    the host, so this is its second wall, and the only one where grading falls back to a
    plain kernel: the lint refuses the file readers it knows of, but not all of numpy's and
    scipy's (a red team read ``/etc/passwd`` and a venv's files with
    ``numpy.ma.mrecords.openfile``, the text coming back in the check's message). Imports still
    work: numpy and scipy load their modules lazily, from the runtime."""

    def hook(event: str, args) -> None:
        if event == "open":
            path, mode, flags = args
        elif event in ("os.listdir", "os.scandir"):
            path, mode, flags = args[0], "r", 0
        else:
            return
        if _STATE.get("own_io") == _get_ident() or path is None or _isinstance(path, int):
            return  # the worker's own request and response (its thread only); a descriptor
        try:
            where = _folder(_fsdecode(_fspath(path)))
        except (TypeError, ValueError):
            raise PermissionError(f"{NO_FILES}: {path!r}") from None
        writes = (_isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            _isinstance(flags, int) and flags & _WRITES
        )
        if not where.startswith(writable if writes else readable):
            raise PermissionError(f"{NO_FILES}: {path!r}")

    return hook


def forbid_files() -> None:
    """From now on, this kernel opens no file outside the runtime and its own folders
    (:func:`_no_files_hook` on :func:`file_roots`; an audit hook cannot be removed)."""
    sys.addaudithook(_no_files_hook(*file_roots()))


#: The kernel shell's methods that run code from a string, a magic or a shell command: none is
#: what a cell needs to run (the kernel runs cells with ``run_cell``), so the armed kernel
#: answers each with :data:`NO_KERNEL_REACH`.
SHELL_RUNNERS = (
    "ev",
    "ex",
    "run_line_magic",
    "run_cell_magic",
    "system",
    "system_piped",
    "system_raw",
    "getoutput",
    "safe_execfile",
    "safe_execfile_ipy",
    "safe_run_module",
)
NO_KERNEL_REACH = "graded answers may not run code in the kernel's shell"


def forbid_kernel_reach() -> None:
    """From now on no widget made in this kernel leads to the kernel, and its shell runs no code
    from a string.

    A widget's comm holds the kernel, and the kernel its shell (``bar.comm.kernel.shell.ev(...)``
    ran any code, unseen by the lint: a red team's 5/5 in lesson 11, through the lesson's own
    progress bar or a widget an answer made). Grading has no front end to talk to, so every comm
    opened from here on is the ``comm`` package's inert ``DummyComm``, which keeps no kernel; and
    the shell's string runners (:data:`SHELL_RUNNERS`) refuse.
    """
    import comm

    comm.create_comm = comm.DummyComm  # what ipywidgets' Widget.open calls for its comm

    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return

    def refuse(*args, **kwargs):
        raise PermissionError(NO_KERNEL_REACH)

    for name in SHELL_RUNNERS:
        setattr(shell, name, refuse)


NOT_A_FIELD_NAME = "a dataclass field must be named by an identifier"


def plain_field_names(cls) -> None:
    """Raise TypeError unless every field ``dataclasses`` would generate code for on ``cls``
    is named by an identifier (a str, not a keyword).

    ``dataclasses`` writes its methods as text with the fields' names in it and runs them
    with ``exec``, and checks no name: a Field's ``name`` set to code (``fields(Base)[0].name
    = "x,[exec(...)]"``), inherited by a class decorated again, ran any code unseen by the lint
    (the third red team of 2026-12-07: 5/5 in lesson 3, 5/6 in lesson 9, the worker's watch
    switched off).

    Examples
    --------
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class P:
    ...     x: int = 0
    >>> plain_field_names(P)
    >>> dataclasses.fields(P)[0].name = "x, print('hi')"
    >>> plain_field_names(type("Q", (P,), {}))
    Traceback (most recent call last):
    ...
    TypeError: a dataclass field must be named by an identifier, not "x, print('hi')"
    """
    names = []
    for base in _type.mro(cls)[-1:0:-1]:
        fields = _type.__getattribute__(base, "__dict__").get("__dataclass_fields__")
        if _isinstance(fields, dict):
            names += [*fields, *(_getattr(f, "name", None) for f in fields.values())]
    names += [*_type.__getattribute__(cls, "__dict__").get("__annotations__", {})]
    for name in names:
        if _type(name) is not str or not str.isidentifier(name) or _iskeyword(name):
            raise TypeError(f"{NOT_A_FIELD_NAME}, not {name!r}")


def guard_dataclasses() -> None:
    """From now on ``dataclasses`` makes no class with a field it would write code for whose
    name is not an identifier (:func:`plain_field_names`)."""
    import dataclasses

    process = getattr(dataclasses, "_process_class", None)
    if process is None:  # another Python's dataclasses: nothing to wrap
        return

    def _process_class(cls, *args, **kwargs):
        plain_field_names(cls)
        return process(cls, *args, **kwargs)

    dataclasses._process_class = _process_class


def start(key: str, names=()) -> None:
    """Arm the worker (once, before any student code): the report key, the forbidden names;
    from here on no process can be started in this kernel (:func:`forbid_processes`)."""
    if _STATE["sign"] is not None:
        raise RuntimeError("the grading worker is already armed")
    _STATE["processes"] = forbid_processes()
    forbid_files()
    forbid_kernel_reach()
    guard_dataclasses()
    secret = bytes.fromhex(key)
    inner_pad = bytes(b ^ 0x36 for b in secret.ljust(64, b"\0"))
    outer_pad = bytes(b ^ 0x5C for b in secret.ljust(64, b"\0"))

    def sign(body: bytes) -> str:  # HMAC-SHA256 (RFC 2104), from the functions taken above
        return _sha256(outer_pad + _sha256(inner_pad + body).digest()).hexdigest()

    _STATE["sign"] = sign
    arm_grading_kernel()  # "are we grading?": yes, in this kernel, from here on
    from attnlab.exercises.rules.reach import reaching_codes

    for name in names:
        if "." in name and name not in _REGISTRY:
            value = _resolve(name)
            if value is not None:
                _record(name, value)
        if "." in name and _REGISTRY.get(name):
            # the course functions (private ones too) that compute the same thing:
            # ``training.head_forward`` runs softmax through ``_kernels.softmax_in_place``
            _REGISTRY[name] = _REGISTRY[name] | frozenset(reaching_codes(set(_REGISTRY[name])))


def remember(names) -> None:
    """Record the notebook's own functions ``names`` as a lesson cell just defined them.

    Called by the grading process right after each lesson cell; later rebinding of the name
    by an answer cell does not change what a call into the lesson's function is.
    """
    from IPython import get_ipython

    namespace = get_ipython().user_ns
    for name in names:
        if name in namespace:
            _record(name, namespace[name])


#: The kernel's own machinery: what it allocates and keeps while cells run (each cell's code
#: and its source for tracebacks, the messages, the traits) is not the student's, and no answer
#: cell can import these (``attnlab.exercises.rules.lint``). Every other block allocated since
#: :func:`student_code_begins` and alive when a measured call starts counts towards that call's
#: memory as held, whatever its size (a buffer made when the answer cell ran, a default
#: argument, a cache filled by an earlier call).
MACHINERY_PACKAGES = (
    "IPython",
    "ipykernel",
    "jupyter_client",
    "jupyter_core",
    "zmq",
    "traitlets",
    "tornado",
    "comm",
    "debugpy",
    "asyncio",
    "json",
)
MACHINERY_MODULES = ("tokenize", "codeop", "linecache", "tracemalloc", "selectors")


def _machinery() -> tuple[str, ...]:
    """The folders and files of :data:`MACHINERY_PACKAGES` and :data:`MACHINERY_MODULES` that
    this kernel has loaded (path prefixes)."""
    prefixes = []
    for name in MACHINERY_PACKAGES + MACHINERY_MODULES:
        module = sys.modules.get(name)
        path = _getattr(module, "__file__", None) if module is not None else None
        if not path:
            continue
        if name in MACHINERY_PACKAGES:
            path = path.rsplit("/", 1)[0] + "/"
        prefixes.append(path)
    return tuple(prefixes)


def preimport(modules) -> None:
    """Import ``modules`` (dotted names; one that is not a module, or fails, is passed over).

    Called by the grading process, before :func:`student_code_begins`, with the allowed
    modules the answer cells import: what an import allocates and keeps (``scipy.stats``:
    about 2.3 MB of blocks of 64 KB or more) is the library's, not the answer's, and would
    otherwise count towards 8.4's memory as held (a red team's right 8.4 with an unused
    ``from scipy import stats`` scored 0 while the learner's check said correct)."""
    for module in modules:
        try:
            importlib.import_module(str(module))
        except Exception:  # noqa: BLE001, S112 - not a module (a name from one), or failing
            continue


def student_code_begins() -> None:
    """Called by the grading process right before the first answer cell runs, in a lesson
    where a check measures memory: from here to the end of grading, every block allocated
    and still alive is traced, whoever allocated it (:func:`_held`)."""
    if not _tm_tracing():
        _tm_start(_FRAMES)
    _STATE.setdefault("machinery", _machinery())
    _STATE["tracing_student"] = True


def _held() -> int | None:
    """Bytes in blocks of any size allocated since :func:`student_code_begins` and alive now,
    whoever allocated them, but the kernel's machinery (:data:`MACHINERY_PACKAGES`): 0 when it
    was never called; None when tracing was stopped since (the call cannot be measured).

    Every size counts: when only blocks of 64 KB or more counted, a red team held 48 buffers of
    64,000 bytes and took a whole-row softmax per query in them (2/2). An honest lesson 8 holds
    about 25 KB of the rest (its lesson cells' own objects, what the checks' calls leave) when
    8.4's first call starts, against a budget of 400 KB or more on the measured cases.

    Nothing is asked of a block's traceback. Asking whether it named an answer cell let red
    teams hold buffers out of the count: made at the bottom of a nested ``copy.deepcopy``
    (the cell's frame cut from the 16 kept), or through a chain of a lesson cell's own
    function (only lesson frames kept), then used for the whole score matrix. The lesson's
    own cells keep no such block: in an honest grading of lesson 8 there is none when 8.4's
    first call starts (and ``tests/test_grading_attacks.py`` grades the worked solutions of
    every lesson next to each attack: full points)."""
    if not _STATE.get("tracing_student"):
        return 0
    if not _tm_tracing():
        return None
    machinery = _STATE.get("machinery") or ()
    return sum(
        t.size for t in _tm_snapshot().traces if not t.traceback[0].filename.startswith(machinery)
    )


def _namespace() -> dict:
    from IPython import get_ipython

    return get_ipython().user_ns


class _Tripwire:
    """Notes the first forbidden function entered while the student's function runs."""

    def __init__(self, codes: dict, builtins: dict):
        self.codes, self.builtins = codes, builtins
        self.hit = None

    def __call__(self, frame, event, arg):
        if self.hit is None:
            if event == "call":
                self.hit = self.codes.get(frame.f_code)
            elif event == "c_call":
                self.hit = self.builtins.get(id(arg))


def _forbidden(names) -> tuple[dict, dict]:
    codes, builtins = {}, {}
    for name in names:
        for code in _REGISTRY.get(name, ()):
            codes.setdefault(code, name)
        for ident in _BUILTINS.get(name, ()):
            builtins.setdefault(ident, name)
    return codes, builtins


def _encoded(value) -> dict:
    try:
        return {"result": encode(value)}
    except ValueError as exc:
        return {"status": "raised", "type": "ValueError", "message": str(exc)}
    except BaseException as exc:  # noqa: BLE001 - RecursionError, MemoryError …
        return {
            "status": "raised",
            "type": "ValueError",
            "message": f"the value could not be read back ({type(exc).__name__})",
        }


#: The most distinct warnings one call reports, each cut to 500 characters: the grading process
#: warns each again and a check may name them, so an answer that raises 300,000 of its own
#: (a red team's) must not cost the grading process minutes and a 451 MB graded notebook.
MAX_WARNINGS = 20


def _reported(caught) -> list[list[str]]:
    """The first :data:`MAX_WARNINGS` distinct warnings of a call, ``[category, message]``."""
    reported: dict[tuple[str, str], None] = {}
    for w in caught:
        reported[(w.category.__name__, str(w.message)[:500])] = None
        if len(reported) >= MAX_WARNINGS:
            break
    return [list(pair) for pair in reported]


#: Where the standard library starts processes: an ``EPERM`` raised under one of these, with
#: no message of :func:`_no_processes_hook` (``_posixsubprocess``, which multiprocessing's
#: resource tracker uses, has no audit event), is the seccomp filter refusing a process.
_PROCESS_MODULES = ("/multiprocessing/", "/subprocess.py", "/concurrent/futures/process.py")


def _process_refused(exc: BaseException) -> str | None:
    """The message for a call that failed because it tried to start a process (saying so,
    with what was refused), else None."""
    if NO_PROCESSES in str(exc):
        return str(exc)[:2000]
    if not (_isinstance(exc, OSError) and exc.errno in (errno.EPERM, errno.ENOSYS)):
        return None
    tb = exc.__traceback__
    while tb is not None:
        if any(part in tb.tb_frame.f_code.co_filename for part in _PROCESS_MODULES):
            return f"{NO_PROCESSES}: {type(exc).__name__}: {exc}"[:2000]
        tb = tb.tb_next
    return None


def serve(name: str, request: str, response: str) -> None:
    """Call ``name(*args, **kwargs)`` with the arguments in ``request``; write ``response``."""
    sign = _STATE["sign"]
    held = _held()  # before the arguments are read: they are the check's, not the student's
    _STATE["own_io"] = _get_ident()
    try:
        with _open(request, "rb") as file:
            args, kwargs, errstate, forbidden, measure = _pickle_load(file)
    finally:
        _STATE["own_io"] = None
    namespace = _namespace()
    function = namespace.get(name)
    out: dict = {"status": "ok"}
    peak = None
    if function is None or not _callable(function):
        out = {"status": "missing", "type": type(function).__name__}
    else:
        codes, builtins = _forbidden(forbidden)
        tripwire = _Tripwire(codes, builtins)
        with _catch(record=True) as caught, _errstate(**errstate):
            _simplefilter("always")
            previous = _getprofile()
            _setprofile(tripwire if (codes or builtins) else previous)
            if codes or builtins:  # and in every thread the call starts
                _thread_setprofile(tripwire)
            if measure:  # the bytes the call allocates, as tracemalloc counts them
                if not _tm_tracing():
                    _tm_start()
                _tm_reset()
                begin = _tm_traced()[0]
            began = _monotonic()  # the call alone: not the files, the kernel or the wire
            try:
                result = function(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - reported, never re-raised here
                out = {
                    "status": "raised",
                    "type": type(exc).__name__,
                    "message": _process_refused(exc) or str(exc)[:2000],
                    "not_implemented": isinstance(exc, NotImplementedError),
                }
            finally:
                out["seconds"] = _monotonic() - began
                _setprofile(previous)
                _thread_setprofile(None)
                if measure:
                    peak = _tm_traced()[1] - begin
                    if not _STATE.get("tracing_student"):
                        _tm_stop()
        if out["status"] == "ok":
            out.update(_encoded(result))
        out["forbidden"] = tripwire.hit
        after = _encoded((list(args), kwargs))
        out["args"] = after.get("result", "null")
        if measure:  # what the call allocated, and what the student's code held before it
            out["peak"] = None if held is None else int(peak) + held
            out["held"] = held
        out["warnings"] = _reported(caught)
    body = dumps(out)
    mac = sign(body.encode("utf-8")) if sign is not None else ""
    _STATE["own_io"] = _get_ident()
    try:
        with _open(response, "w", encoding="utf-8") as file:
            file.write(dumps({"body": body, "mac": mac}))
    finally:
        _STATE["own_io"] = None
