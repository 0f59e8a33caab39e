"""Which course functions compute what a forbidden one computes: the course's call graph read
with the registry (:mod:`attnlab.exercises.rules.forbidden_registry`).

A forbidden function also forbids the helpers it computes with (``COMPUTES_WITH``) and every
course function that calls into them, except what runs inside an allowed building block
(``RUNS_INSIDE``) (:func:`reaching_codes`). The call graph is worked out once while the
course's functions stay the same objects.
"""

from __future__ import annotations

import functools
import importlib
import types

from attnlab.exercises.rules.forbidden_registry import COMPUTES_WITH, RUNS_INSIDE, SHARED_MODULES


def codes_within(code) -> list:
    """``code`` and the code of every function defined inside it."""
    found, todo = [], [code]
    while todo:
        found.append(todo.pop())
        todo += [c for c in found[-1].co_consts if isinstance(c, types.CodeType)]
    return found


def _functions_of(value) -> list:
    """The functions ``value`` stands for: itself, or a class's methods (properties' getters,
    the functions of class and static methods)."""
    members = list(vars(value).values()) if isinstance(value, type) else [value]
    return [f for f in map(_function, members) if f is not None]


def _function(member):
    """The function a class member runs (a property's getter, a class method's function), or
    None."""
    member = getattr(member, "__func__", member)
    member = getattr(member, "fget", member)
    return member if isinstance(member, types.FunctionType) else None


def course_index() -> dict[str, list]:
    """Registry name -> the course functions it stands for, for every function and class of the
    course's numerics: ``"attnlab.softmax_family.softmax"``, a class's methods under its name
    (``"attnlab.backward.AttentionGrads"``) and each under ``"module.Class.method"``.

    Examples
    --------
    >>> index = course_index()
    >>> [f.__name__ for f in index["attnlab.softmax_family.softmax"]]
    ['softmax']
    >>> "__init__" in [f.__name__ for f in index["attnlab.training.AdamState"]]
    True
    """
    return _index(_course_functions())


def _course_functions() -> tuple:
    """Every function of the course's numerics (:data:`attnlab.course.NUMERICS` and the internal
    modules they share, ``SHARED_MODULES``), with class methods."""
    return tuple(f for functions in _named_functions().values() for f in functions)


def _named_functions() -> dict:
    """``"module.name"`` -> the functions of each function or class defined in a numerics
    module (a class: its methods)."""
    from attnlab.course import NUMERICS

    found = {}
    for module_name in (*NUMERICS, *SHARED_MODULES):
        module = importlib.import_module(module_name)
        for key, value in list(vars(module).items()):
            if getattr(value, "__module__", None) == module_name:
                functions = _functions_of(value)
                if functions:
                    found[f"{module_name}.{key}"] = functions
    return found


@functools.lru_cache(maxsize=4)
def _index(functions: tuple) -> dict[str, list]:
    """:func:`course_index` for the course ``functions`` (worked out once while they stay the
    same objects)."""
    index = {}
    for name, members in _named_functions().items():
        index[name] = [f for f in members if f in functions]
        module, _, key = name.rpartition(".")
        value = getattr(importlib.import_module(module), key)
        for attr, member in vars(value).items() if isinstance(value, type) else ():
            if _function(member) in functions:
                index[f"{name}.{attr}"] = [_function(member)]
    return index


def _callees(function) -> list:
    """The course functions ``function`` names: globals, attributes of modules it names, the
    methods of classes it names, and the functions in its closure."""
    names = set()
    for code in codes_within(function.__code__):
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
    return {code for code in codes_within(function.__code__) if code in codes}


@functools.lru_cache(maxsize=1)
def _call_graph(functions: tuple) -> dict:
    """Course function -> the course functions it names (:func:`_callees`).

    Built once while the course's functions stay the same objects (every check of every call
    asks, 0.05 to 0.2 s each time); a module whose functions were rebound gives another tuple
    and a new graph.
    """
    known = set(functions)
    return {f: [g for g in _callees(f) if g in known] for f in functions}


def _registered(names, index) -> set:
    """The course functions the registry ``names`` stand for (names it cannot find: none)."""
    return {f for name in names for f in index.get(name, ())}


def reaching_codes(codes) -> dict:
    """Code object -> the course function it belongs to, for every course function that
    computes what the functions with ``codes`` compute: the helpers those compute with
    (``COMPUTES_WITH``: ``softmax`` -> ``normalised_exp``), and every course function that
    calls into one of them, however indirectly (``training.head_forward``), except what runs
    inside a building block the codes leave allowed (``RUNS_INSIDE``).

    >>> from attnlab.softmax_family import softmax
    >>> from attnlab.training import head_forward
    >>> head_forward.__code__ in reaching_codes(set(codes_within(softmax.__code__)))
    True
    """
    return dict(_reaching(frozenset(codes), _course_functions()))


def _blocks() -> dict:
    """Building block function -> its registry name (``"attnlab.softmax"``)."""
    found = {}
    for name in RUNS_INSIDE:
        module, _, attr = name.rpartition(".")
        found[getattr(importlib.import_module(module), attr)] = name
    return found


@functools.lru_cache(maxsize=256)
def _reaching(codes: frozenset, functions: tuple) -> dict:
    """:func:`reaching_codes` worked out for the course ``functions`` (kept by both: the
    callers get a copy)."""
    graph, index = _call_graph(functions), _index(functions)
    names = {f: name for name, members in _named_functions().items() for f in members}
    targets = {f for f in functions if f.__code__ in codes}
    # down, one level: the helpers a forbidden function computes with
    helpers = _registered(
        [helper for f in targets for helper in COMPUTES_WITH.get(names.get(f), ())], index
    )
    blocks = _blocks()
    reached = targets | helpers
    changed = True
    while changed:  # up: everything that calls into them, but a building block
        changed = False
        for f, callees in graph.items():
            if f in blocks:
                continue
            if f not in reached and any(g in reached for g in callees):
                reached.add(f)
                changed = True
    # What an allowed building block runs is allowed: only the forbidden functions themselves
    # and what nothing allowed runs are flagged.
    runs_allowed = _registered(
        [
            inner
            for block, name in blocks.items()
            if block in graph and not codes_of(codes, block)
            for inner in RUNS_INSIDE[name]
        ],
        index,
    )
    shared = {f for f in reached & runs_allowed if not codes_of(codes, f)}
    found = {}
    for f in reached - shared:
        shown = f"{f.__module__}.{f.__qualname__}"
        for inner in codes_within(f.__code__):
            found.setdefault(inner, shown)
    return found
