"""Which course functions compute what a forbidden one computes: the course's call graph,
each module's public API (its ``__all__``) and the functions a forbidden one reaches.

A forbidden function also forbids the helpers it computes with, the functions outside any
public API that few public functions call, and every course function that calls into them
(:func:`reaching_codes`). The call graph is worked out once while the course's functions stay
the same objects.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types


def codes_within(code) -> list:
    """``code`` and the code of every function defined inside it."""
    found, todo = [], [code]
    while todo:
        found.append(todo.pop())
        todo += [c for c in found[-1].co_consts if isinstance(c, types.CodeType)]
    return found


def public_names(module) -> set[str]:
    """The names of ``module``'s public API: its ``__all__``, or, for a module without one,
    the names not starting with an underscore (Python's rule for ``from module import *``).

    Examples
    --------
    >>> import attnlab.online
    >>> sorted(public_names(attnlab.online))
    ['online_normaliser', 'online_softmax', 'online_softmax_update']
    """
    exported = getattr(module, "__all__", None)
    if exported is not None:
        return set(exported)
    return {name for name in vars(module) if not name.startswith("_")}


def is_public(function) -> bool:
    """Whether ``function`` is in its module's public API (:func:`public_names`): a function
    named there, or a method not starting with an underscore of a class named there.

    Examples
    --------
    >>> from attnlab import attention, softmax_family, training
    >>> is_public(softmax_family.softmax), is_public(attention.check_qkv)
    (True, False)
    >>> is_public(training.Head.items), is_public(training.Head.__init__)
    (True, False)
    """
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    if module is None:
        return False
    top, _, member = function.__qualname__.partition(".")
    return top in public_names(module) and not member.startswith("_")


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


def _users(graph, public) -> dict:
    """Course function -> the functions that use it: its callers in its own module, and its
    public callers (:func:`is_public`) anywhere."""
    users: dict = {f: set() for f in graph}
    for f, callees in graph.items():
        for g in callees:
            if g is not f and (public[f] or f.__module__ == g.__module__):
                users[g].add(f)
    return users


@functools.lru_cache(maxsize=1)
def _call_graph(functions: tuple) -> tuple[dict, dict, dict]:
    """(callees, public, users) of the course ``functions``: which course functions each
    names, whether each is public (:func:`is_public`), and :func:`_users`.

    Built once while the course's functions stay the same objects (every check of every call
    asks, 0.05 to 0.2 s each time); a module whose functions were rebound gives another tuple
    and a new graph.
    """
    known = set(functions)
    graph = {f: [g for g in _callees(f) if g in known] for f in functions}
    public = {f: is_public(f) for f in functions}
    return graph, public, _users(graph, public)


def reaching_codes(codes) -> dict:
    """Code object -> the course function it belongs to, for every course function (public
    or not) that computes what the functions with ``codes`` compute: the helpers those call
    (functions outside the public API, :func:`is_public`, with at most two public callers:
    ``softmax`` -> ``softmax_in_place``), and every course function that calls into one of
    them, however indirectly (``training.head_forward``).

    >>> from attnlab.softmax_family import softmax
    >>> from attnlab.training import head_forward
    >>> head_forward.__code__ in reaching_codes(set(codes_within(softmax.__code__)))
    True
    """
    import attnlab

    functions = tuple(_course_functions())
    exported = tuple(getattr(attnlab, name) for name in attnlab.__all__)
    return dict(_reaching(frozenset(codes), functions, exported))


@functools.lru_cache(maxsize=256)
def _reaching(codes: frozenset, functions: tuple, exported: tuple) -> dict:
    """:func:`reaching_codes` worked out for the course ``functions`` and ``attnlab``'s
    ``exported`` functions (kept by those three: the callers get a copy)."""
    exported = set(exported)
    graph, public, users = _call_graph(functions)
    targets = {f for f in functions if f.__code__ in codes}
    todo = list(targets)
    helpers = set()
    for f in todo:  # down, one level: the helpers a forbidden function computes with (not
        # the utilities many public functions share, such as argument checks)
        for g in graph.get(f, ()):
            if not public[g] and len(users[g]) <= 2:
                helpers.add(g)
    targets |= helpers
    # The course's own building blocks (``attnlab.softmax``, ``attnlab.causal_mask``, ...) are
    # never forbidden by reaching: a lesson that refuses one names it (or its check derives
    # it); every exercise that allows them must keep allowing them.
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
    # What an allowed building block runs is allowed: attnlab.softmax's softmax_in_place also
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
        for inner in codes_within(f.__code__):
            found.setdefault(inner, shown)
    return found
