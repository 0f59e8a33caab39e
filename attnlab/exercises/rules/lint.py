"""What a graded answer cell may contain.

An answer cell runs in the grading kernel next to the code that reports its results, so it
must not be able to reach that code: :func:`problems` refuses imports outside a short list of
numerical modules, the builtins that reach into the interpreter (``exec``, ``getattr``,
``globals``, ``open``, ``get_ipython`` …), every name and attribute that starts with an
underscore (``__class__``, ``_solution`` …) and the names an exercise forbids. Ordinary
numerical code (loops, comprehensions, helper functions, numpy, math, scipy) passes.

Examples
--------
>>> problems("def dot(q, k):\\n    return sum(a * b for a, b in zip(q, k))")
[]
>>> for line in problems("import os\\ndef f(x):\\n    return os.environ"):
...     print(line)
line 1: `import os` — an answer may import only numpy, math, scipy, the course's numerics and \
a few helpers (itertools, collections, fractions, statistics, warnings, copy, typing, \
dataclasses, functools)
line 3: `os` — graded answers cannot use it
>>> problems("def f(x):\\n    return attnlab.softmax(x)", forbidden=["attnlab.softmax"])
['line 2: `softmax` — this exercise asks you not to use attnlab.softmax']
>>> for line in problems("def f(x):\\n    return x.gi_frame.f_back"):
...     print(line)
line 2: `.f_back` — graded answers cannot use it
line 2: `.gi_frame` — graded answers cannot use it
"""

from __future__ import annotations

import ast

from attnlab import _checks, _kernels

#: Modules (and their submodules) an answer may import.
ALLOWED_MODULES = (
    "numpy",
    "math",
    "cmath",
    "scipy",
    "itertools",
    "collections",
    "fractions",
    "statistics",
    "warnings",
    "copy",
    "typing",
    "dataclasses",
    "functools",
    "attnlab",
)
#: Submodules of those that an answer may not import.
REFUSED_MODULES = (
    "attnlab._checks",  # the numerics' shared checks and unchecked cores: plain names inside,
    "attnlab._kernels",  # private to the package (an answer reaches none of them)
    "attnlab.grading",
    "attnlab.exercises",
    "attnlab.selftest",
    "attnlab.live",
    "attnlab.figure_canvas",
    "attnlab.kernel_websocket",
    "attnlab.explorers",
    "attnlab.plots",
    "attnlab.controls",  # widgets, whose comms lead to the kernel (a red team's 5/5)
    "attnlab.widget_lifetime",
    "attnlab.restart_help",
    "attnlab.save_hook",
    "attnlab.lab_style",
    "attnlab.lab_custom",
    "numpy.f2py",
    "numpy.ctypeslib",
    "numpy.distutils",
    "numpy.testing",
    "scipy.weave",
    "scipy.io",
    "scipy.datasets",
    "numpy.ma.mrecords",
)
#: The plain names of the numerics' internal modules (their shared checks and unchecked cores).
#: The public modules import those modules (``from . import _kernels``), so a core is within
#: reach as ``attnlab.softmax_family._kernels.normalised_exp`` (and was, before, as
#: ``attnlab.softmax_family.normalised_exp``), a form no exercise's forbidden list names:
#: refused wherever it is imported from or read as an attribute.
INTERNAL_NAMES = frozenset(
    name
    for module in (_checks, _kernels)
    for name, value in vars(module).items()
    if callable(value)
    and getattr(value, "__module__", None) == module.__name__
    and not name.startswith("_")
)
#: Builtins and notebook names that reach into the interpreter, the kernel or the disk.
REFUSED_NAMES = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "open",
        "breakpoint",
        "exit",
        "quit",
        "memoryview",
        "get_ipython",
        "sys",
        "os",
        "builtins",
        "importlib",
        "subprocess",
        "ctypes",
        "gc",
        "inspect",
        "pickle",
        "marshal",
        "tracemalloc",
        "threading",
        "multiprocessing",
        "In",
        "Out",
        "lesson0",
        "lesson1",
        "lesson2",
        "lesson3",
        "lesson4",
        "lesson5",
        "lesson6",
        "lesson7",
        "lesson8",
        "lesson9",
    }
)
#: Attributes that reach the disk, foreign code or the interpreter through numpy and friends:
#: file readers and writers, modules that other modules import (``numpy.ma.core.builtins``,
#: ``fractions.sys`` …) and the attributes that walk from a generator or a traceback to the
#: frames of the code that called the answer.
REFUSED_ATTRIBUTES = frozenset(
    {
        # files
        "load",
        "loadtxt",
        "genfromtxt",
        "fromregex",
        "fromfile",
        "openfile",
        "fromtextfile",
        "mrecords",
        "load_npz",
        "save_npz",
        "memmap",
        "open_memmap",
        "tofile",
        "save",
        "savez",
        "savez_compressed",
        "savetxt",
        "dump",
        "dumps",
        "DataSource",
        "npyio",
        "f2py",
        "ctypeslib",
        "system",
        "popen",
        # modules reachable as attributes of allowed ones
        "os",
        "sys",
        "builtins",
        "bltns",
        "io",
        "pathlib",
        "shutil",
        "subprocess",
        "importlib",
        "ctypes",
        "inspect",
        "pickle",
        "gc",
        "tempfile",
        "glob",
        "platform",
        "sysconfig",
        "types",
        "logging",
        "threading",
        "multiprocessing",
        "socket",
        "signal",
        "traceback",
        "linecache",
        "runpy",
        "pydoc",
        "code",
        "marshal",
        "weakref",
        "site",
        "IPython",
        "ipykernel",
        # frames and code
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "tb_frame",
        "tb_next",
        "co_code",
        "co_consts",
        "co_names",
        "func_globals",
        # code in strings, attribute names in strings, other threads, paths
        "testing",
        "runstring",
        "measure",
        "run_threaded",
        "attrgetter",
        "methodcaller",
        "get_type_hints",
        "update_wrapper",
        "wraps",  # functools.wraps(src, assigned=(name,)) is getattr and setattr by name
        "Path",
        "PurePath",
        "PosixPath",
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "open",
        # code run from strings inside copy, typing, dataclasses and functools
        "copyreg",
        "singledispatch",
        "singledispatchmethod",
        "make_dataclass",
        "ForwardRef",
        "evaluate_forward_ref",
        # the course's own checking, answers and display
        "exercises",
        "grading",
        "selftest",
        "live",
        "figure_canvas",
        "kernel_websocket",
        "explorers",
        "plots",
        "worker",
        "wire",
        "remote",
        # widgets and the kernel behind them: ``bar.comm.kernel.shell.ev(...)`` ran any code
        # from a string (a red team's 5/5 in lesson 11, through the lesson's progress bar or a
        # widget made from ``attnlab.widget_lifetime.widgets``)
        "comm",
        "comms",
        "comm_manager",
        "kernel",
        "shell",
        "session",
        "pub_thread",
        "iopub_socket",
        "user_ns",
        "user_global_ns",
        "user_module",
        "ev",
        "ex",
        "run_cell",
        "run_line_magic",
        "run_cell_magic",
        "getoutput",
        "widgets",
        "ipywidgets",
        "controls",
        "widget_lifetime",
        "restart_help",
        "save_hook",
        "lab_style",
        "lab_custom",
        # the builtins that reach into the interpreter, read as attributes of a module
        # (``builtins.getattr``): refused as names above, and here too
        "getattr",
        "setattr",
        "delattr",
        "exec",
        "eval",
        "compile",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "get_ipython",
        # the grading tripwire, the modules table and the memory gate
        "setprofile",
        "getprofile",
        "settrace",
        "gettrace",
        "modules",
        "tracemalloc",
        "reset_peak",
        "get_traced_memory",
    }
)
#: Underscore attributes an answer may read: the public API of ``collections.namedtuple``.
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
#: Special methods an answer's own class may define (construction only; no operators,
#: comparisons or conversions, which would let a returned value lie about itself).
ALLOWED_DUNDERS = frozenset({"__init__", "__post_init__"})
#: The largest answer cell the lint reads (characters): grading parses answer cells in the
#: grading process itself, so a huge cell is refused before it is parsed.
MAX_CELL = 64 * 1024
#: In an exercise's ``forbidden``: the matrix product, written any way numpy offers it (the
#: ``@`` operator, ``np.dot`` and ``.dot``, ``np.matmul``), where the exercise is to multiply
#: matching entries and add them up (1.1). Read by this lint only, in grading and in the
#: learner's check alike: nothing is forbidden when the answer runs, so a function that
#: computes with a matrix product inside (``np.einsum``) is judged by its result.
MATRIX_PRODUCT = "@"
_MATRIX_PRODUCT_NAMES = frozenset({"dot", "matmul", "inner", "vdot", "tensordot", "multi_dot"})
_NO_MATRIX_PRODUCT = (
    "this exercise asks you to multiply matching entries and add the products up yourself, "
    "without @, np.dot, np.matmul or another library dot product (np.inner, np.vdot, "
    "np.tensordot, np.linalg.multi_dot)"
)
#: Library functions that do a forbidden one's work in other words, forbidden with it: a
#: compiled ufunc (``np.logaddexp.reduce`` is a log-sum-exp) never runs Python code, so the
#: tripwire that catches a forbidden call when the answer runs cannot see it; only this lint
#: can. (``scipy.special.entr`` and ``xlogy`` stay allowed in 4.1: elementwise -p·log p is a
#: formulation the task allows, the row's sum is the learner's; the contract test says so.)
SAME_WORK = {
    "scipy.special.logsumexp": ("numpy.logaddexp", "numpy.logaddexp2"),
}


_IMPORTS = (
    "an answer may import only numpy, math, scipy, the course's numerics and a few helpers "
    "(itertools, collections, fractions, statistics, warnings, copy, typing, dataclasses, "
    "functools)"
)
_INTERNAL = (
    "the course's internal checks and cores cannot be used in an answer; write the steps "
    "yourself or call the course function the exercise allows"
)
_REBIND = (
    "an answer may not change a module's names; give your own function or value a name "
    "of its own instead"
)
#: Names the notebooks bind to modules; an answer may not assign to their attributes.
MODULE_NAMES = frozenset(
    {"np", "numpy", "attnlab", "math", "cmath", "scipy", "special", "itertools"}
    | {"collections", "fractions", "statistics", "warnings", "copy", "typing"}
    | {"dataclasses", "functools", "plt", "matplotlib", "widgets", "ipywidgets"}
)


def _module_ok(module: str) -> bool:
    allowed = any(module == m or module.startswith(m + ".") for m in ALLOWED_MODULES)
    refused = any(module == m or module.startswith(m + ".") for m in REFUSED_MODULES)
    return allowed and not refused


def too_long(size: int, limit: int = MAX_CELL, what: str = "this answer cell") -> str:
    """The reason a cell (or a notebook's answer cells) too long to be read is refused.

    >>> too_long(1_000_000)
    'line 1: an answer cell longer than 65,536 characters is not graded: this one holds \
1,000,000; compute large tables in code instead of writing them out'
    """
    if what == "this answer cell":
        return (
            f"line 1: an answer cell longer than {limit:,} characters is not graded: this one "
            f"holds {size:,}; compute large tables in code instead of writing them out"
        )
    return (
        f"line 1: {what} is {size // 1024} KiB of code — an answer may be at most "
        f"{limit // 1024} KiB; compute large tables in code instead of writing them out"
    )


def problems(source: str, forbidden=(), refused=()) -> list[str]:
    """Why ``source`` (one answer cell) may not be graded; empty when it may.

    Parameters
    ----------
    source : str
        The cell's code. IPython magics (lines starting with ``%`` or ``!``) are refused.
    forbidden : sequence of str
        Functions or modules the exercise forbids, as ``module.name`` or a bare notebook name.
        A dotted one is refused where it is imported or read as an attribute
        (``attnlab.softmax``, ``from attnlab import softmax``); a bare one wherever the name
        appears. (A learner's own helper called ``softmax`` is fine: calls into a forbidden
        function are caught when the answer runs.)
    refused : sequence of str
        More names the answer may not use: the modules the lesson's own cells imported that
        an answer could not import itself (``plt``, ``widgets`` …).

    Returns
    -------
    list of str
        One line per problem, ``"line N: ... — reason"``.
    """
    if len(source) > MAX_CELL:
        return [too_long(len(source))]
    no_product = MATRIX_PRODUCT in forbidden
    forbidden = [name for name in forbidden if name != MATRIX_PRODUCT]
    forbidden += [same for name in forbidden for same in SAME_WORK.get(name, ())]
    banned = {name.rpartition(".")[2]: name for name in forbidden}  # attributes and imports
    bare = {name: name for name in forbidden if "." not in name}  # the notebook's own names
    refused = frozenset(refused)
    lines = source.splitlines()
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith(("%", "!")):
            return [f"line {number}: `{line.strip()}` — magics and shell commands cannot be graded"]
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [f"line {error.lineno}: syntax error ({error.msg}); the cell cannot run"]
    found = []
    modules = set(MODULE_NAMES) | refused
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules.update((a.asname or a.name).partition(".")[0] for a in node.names)

    parents = {}
    aliases = {}  # a name the cell imports -> the module it stands for (``sp`` -> scipy.special)
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, ast.Import):
            aliases.update(
                {a.asname: a.name for a in node.names if a.asname}
                | {a.name.partition(".")[0]: a.name.partition(".")[0] for a in node.names}
            )

    def used(node) -> str:
        """The dotted name an attribute read stands for, as the learner wrote it but with the
        cell's import aliases undone (``sp.softmax`` -> ``scipy.special.softmax``): the name the
        refusal shows, whichever forbidden name shares its last part. Any other expression
        (``f(x).softmax``) shows the forbidden name itself."""
        parts = [node.attr]
        while isinstance(node.value, ast.Attribute):
            node = node.value
            parts.append(node.attr)
        if not isinstance(node.value, ast.Name):
            return banned[parts[0]]
        return ".".join([aliases.get(node.value.id, node.value.id), *reversed(parts)])

    def refuse(node, shown, reason):
        found.append((node.lineno, f"line {node.lineno}: `{shown}` — {reason}"))

    for node in ast.walk(tree):
        if no_product and (
            isinstance(node, (ast.BinOp, ast.AugAssign))
            and isinstance(node.op, ast.MatMult)
            or isinstance(node, ast.Attribute)
            and node.attr in _MATRIX_PRODUCT_NAMES
            or isinstance(node, ast.ImportFrom)
            and any(a.name in _MATRIX_PRODUCT_NAMES for a in node.names)
        ):
            shown = "@" if hasattr(node, "op") else ast.unparse(node).partition("(")[0]
            refuse(node, shown[:60], _NO_MATRIX_PRODUCT)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _module_ok(alias.name):
                    refuse(node, f"import {alias.name}", _IMPORTS)
                elif alias.name in forbidden:
                    refuse(
                        node,
                        f"import {alias.name}",
                        f"this exercise asks you not to use {alias.name}",
                    )
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or not _module_ok(module):
                refuse(node, f"from {'.' * node.level}{module} import ...", _IMPORTS)
            for alias in node.names:
                if alias.name in banned:
                    refuse(
                        node,
                        alias.name,
                        f"this exercise asks you not to use {module}.{alias.name}",
                    )
                elif alias.name.startswith("_") or alias.name == "*":
                    refuse(node, alias.name, "private names cannot be imported in an answer")
                elif alias.name in REFUSED_NAMES or alias.name in REFUSED_ATTRIBUTES:
                    refuse(
                        node,
                        f"from {module} import {alias.name}",
                        "graded answers cannot use it, whichever module it is imported from",
                    )
                elif alias.name in INTERNAL_NAMES and module.partition(".")[0] == "attnlab":
                    refuse(node, f"from {module} import {alias.name}", _INTERNAL)
        elif isinstance(node, ast.Name):
            if node.id in bare:
                refuse(node, node.id, f"this exercise asks you not to use {bare[node.id]}")
            elif node.id in REFUSED_NAMES or node.id in refused or node.id.startswith("__"):
                refuse(node, node.id, "graded answers cannot use it")
            elif node.id == "type":
                call = parents.get(node)
                if not (
                    isinstance(call, ast.Call)
                    and call.func is node
                    and len(call.args) == 1
                    and not call.keywords
                    and not isinstance(call.args[0], ast.Starred)
                    # type(int) is type itself: kept, it made classes with any special method
                    # (the third red team of 2026-12-07), so type(x) is for comparing only
                    and isinstance(parents.get(call), ast.Compare)
                ):
                    refuse(
                        node,
                        "type",
                        "graded answers may use type only to compare one value's type "
                        "(type(x) is float); it cannot be kept, called, renamed or make classes",
                    )
        elif isinstance(node, ast.Attribute):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if (
                isinstance(node.ctx, (ast.Store, ast.Del))
                and isinstance(root, ast.Name)
                and root.id in modules
            ):
                refuse(node, f"{ast.unparse(node)} = ...", _REBIND)
            elif node.attr in banned:
                refuse(node, node.attr, f"this exercise asks you not to use {used(node)}")
            elif (
                node.attr.startswith("_") and node.attr not in NAMEDTUPLE_API
            ) or node.attr in REFUSED_ATTRIBUTES:
                refuse(node, f".{node.attr}", "graded answers cannot use it")
            elif node.attr in INTERNAL_NAMES:
                refuse(node, f".{node.attr}", _INTERNAL)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
            and len(node.args) + len(node.keywords) > 1
        ):
            refuse(node, "type(...)", "graded answers cannot make classes or functions this way")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name.startswith("__") and node.name not in ALLOWED_DUNDERS:
                refuse(node, node.name, "graded answers cannot define special methods")
        elif isinstance(node, ast.arg) and node.arg.startswith("__"):
            refuse(node, node.arg, "graded answers cannot use it")
        elif isinstance(node, ast.MatchClass):
            # ``case object(_kernels=K)`` reads any attribute by name (its keywords are plain
            # strings, not attribute nodes), and a class's ``__match_args__`` names more: a red
            # team reached a forbidden core and the grading worker's own globals so (2026-12-07)
            refuse(
                node,
                f"case {ast.unparse(node)[:50]}",
                "class patterns in match read attributes by name; graded answers cannot use them",
            )
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.isidentifier()
            and (
                node.value.startswith("_")
                and node.value.strip("_")  # not "_".join(...)
                or node.value in REFUSED_NAMES
                or node.value in REFUSED_ATTRIBUTES
                or node.value in INTERNAL_NAMES
            )
        ):
            # library functions read and write attributes by a name given as a string
            # (``functools.wraps(src, assigned=("sys",))`` did, 2026-12-07): a refused name
            # is refused as a string too
            refuse(node, repr(node.value)[:40], _AS_A_STRING)
        elif (bound := _bound_name(node)) is not None and (
            bound.startswith("__") or bound in REFUSED_NAMES or bound in bare
        ):
            refuse(node, bound, "graded answers cannot use it")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = [n for n in node.names if n.startswith("__") or n in REFUSED_NAMES]
            if names:
                refuse(node, names[0], "graded answers cannot use it")
    return [text for _, text in sorted(found)]


def notebook_refused(namespace: dict) -> set[str]:
    """The names in a learner's notebook that an answer may not use, as grading sees them:
    modules (and what was imported from them) that an answer could not import itself, and
    every name a cell the notebook ran imported from such a module, whatever its value
    (grading refuses the names the lesson's cells import: :func:`imported_names`). Without
    the second, a lesson's constant such as lesson 2's ``N_KEYS`` (an ``int`` from
    ``attnlab.explorers.scaling``) passed the learner's check and scored 0 in grading.

    >>> import json
    >>> sorted(notebook_refused({"np": __import__("numpy"), "json": json, "f": len}))
    ['json']
    >>> sorted(notebook_refused({"_ih": ["", "from attnlab.explorers.scaling import N_KEYS"],
    ...                          "N_KEYS": 2048}))
    ['N_KEYS']
    """
    import types

    names = set()
    for code in namespace.get("_ih", None) or ():  # IPython's history of the cells run
        if isinstance(code, str):
            names |= imported_names(code)
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, types.ModuleType):
            module = value.__name__
        elif isinstance(value, (types.FunctionType, type)):
            module = getattr(value, "__module__", None)
            if not isinstance(module, str) or module in ("__main__", "builtins"):
                continue
        else:
            continue
        if not _module_ok(module):
            names.add(name)
    return names


def _imports(source: str) -> list[tuple[str, str, str]]:
    """``(module, name, bound)`` for every name ``source`` imports: ``import a.b as c`` gives
    ``("a.b", "", "c")``, ``from a import b`` gives ``("a", "b", "b")``; relative imports are
    left out, and a cell that does not parse imports nothing."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, "", a.asname or a.name.partition(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.module, a.name, a.asname or a.name) for a in node.names]
    return found


_AS_A_STRING = (
    "a name graded answers cannot use cannot be written as a string either (library "
    "functions read attributes by a name given as a string)"
)


def _bound_name(node) -> str | None:
    """The name ``node`` binds without an ``ast.Name``: ``import numpy as __x``, ``except E
    as __x``, ``case __x``, ``case [*__x]``, ``case {**__x}``; None for any other node.

    Examples
    --------
    >>> _bound_name(ast.parse("import numpy as np").body[0].names[0])
    'np'
    >>> _bound_name(ast.parse("x = 1").body[0]) is None
    True
    """
    if isinstance(node, ast.alias):
        return node.asname
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name
    if isinstance(node, ast.MatchMapping):
        return node.rest
    return None


def imported_modules(source: str) -> set[str]:
    """The modules an answer could import itself that ``source`` imports, and for ``from m
    import a`` the name ``m.a`` too (it may be a submodule).

    >>> sorted(imported_modules("import numpy as np\\nfrom scipy import stats\\nimport os"))
    ['numpy', 'scipy', 'scipy.stats']
    """
    found = {module for module, _, _ in _imports(source)}
    found |= {f"{module}.{name}" for module, name, _ in _imports(source) if name not in ("", "*")}
    return {m for m in found if _module_ok(m)}


def imported_names(source: str) -> set[str]:
    """The names a cell binds by importing a module an answer could not import itself.

    >>> sorted(imported_names("import numpy as np\\nimport matplotlib.pyplot as plt\\n"
    ...                       "from IPython.display import display"))
    ['display', 'plt']
    """
    return {bound for module, _, bound in _imports(source) if not _module_ok(module)}
