"""The forbidden-call rule's registry (:mod:`attnlab.exercises.rules.forbidden_registry`) says
what the code does: what may run inside each building block is what the block runs, what a
forbidden function computes with is what it calls, and every name an exercise forbids is found.
A stale entry would flag a learner who calls an allowed block, or skip a forbidden function."""

from __future__ import annotations

import importlib

import pytest

import attnlab
from attnlab.course import NUMERICS
from attnlab.exercises.rules import reach
from attnlab.exercises.rules.forbidden_registry import COMPUTES_WITH, RUNS_INSIDE, WHOLE_MODULES


def _graph_and_index():
    functions = reach._course_functions()
    return reach._call_graph(functions), reach.course_index()


def _runs(block, graph) -> set:
    """Every course function ``block`` runs, however indirectly (the call graph's closure)."""
    seen, todo = set(), [block]
    while todo:
        for g in graph.get(todo.pop(), ()):
            if g not in seen:
                seen.add(g)
                todo.append(g)
    return seen


def test_the_building_blocks_are_what_import_attnlab_gives():
    assert sorted(RUNS_INSIDE) == sorted(f"attnlab.{name}" for name in attnlab.__all__)


@pytest.mark.parametrize("block", sorted(RUNS_INSIDE))
def test_what_runs_inside_a_block_is_what_it_runs(block):
    graph, index = _graph_and_index()
    function = getattr(attnlab, block.removeprefix("attnlab."))
    unknown = [name for name in RUNS_INSIDE[block] if name not in index]
    assert not unknown, f"{block}: no course function is named {unknown}"
    listed = {f for name in RUNS_INSIDE[block] for f in index[name]}
    runs = _runs(function, graph)
    shown = lambda fs: sorted(f"{f.__module__}.{f.__qualname__}" for f in fs)  # noqa: E731
    assert not runs - listed, f"{block} runs, unlisted: {shown(runs - listed)}"
    assert not listed - runs, f"{block} does not run, listed: {shown(listed - runs)}"


@pytest.mark.parametrize("function", sorted(COMPUTES_WITH))
def test_a_forbidden_function_computes_with_what_it_calls(function):
    graph, index = _graph_and_index()
    assert function in index, f"no course function is named {function}"
    (target,) = index[function]
    unknown = [name for name in COMPUTES_WITH[function] if name not in index]
    assert not unknown, f"{function}: no course function is named {unknown}"
    for name in COMPUTES_WITH[function]:
        assert set(index[name]) & set(graph[target]), f"{function} does not call {name}"


def test_every_numerics_module_lists_what_a_whole_forbidden_module_stands_for():
    assert set(NUMERICS) <= set(WHOLE_MODULES)
    for module_name, names in WHOLE_MODULES.items():
        module = importlib.import_module(module_name)
        missing = [name for name in names if not hasattr(module, name)]
        assert not missing, f"{module_name} has no {missing}"


def test_every_name_an_exercise_forbids_is_found():
    from attnlab.exercises import EXERCISES

    for exercise_id, exercise in EXERCISES.items():
        for name in exercise.declared_forbidden:
            if "." not in name:
                continue  # a notebook's name, or an operator the lint refuses ("@")
            try:
                whole = importlib.import_module(name)
            except ImportError:
                module, _, attr = name.rpartition(".")
                assert callable(getattr(importlib.import_module(module), attr, None)), (
                    f"{exercise_id} forbids {name}, which is not found"
                )
            else:
                assert name in WHOLE_MODULES, f"{exercise_id} forbids {whole}, not registered"


def test_what_is_never_tried_as_an_answer_is_a_course_helper_callable_with_no_arguments():
    """NOT_TRIED_AS_ANSWERS holds only live names, each a function the passing-helpers search
    would otherwise call with no arguments (induction.train trained a model in every quiz's
    first check: test_quiz's malformed-answer test took minutes)."""
    import inspect

    from attnlab.exercises.kit.passing_helpers import course_helpers
    from attnlab.exercises.rules.forbidden_registry import NOT_TRIED_AS_ANSWERS

    tried = course_helpers()
    for name in NOT_TRIED_AS_ANSWERS:
        module, _, short = name.rpartition(".")
        function = getattr(importlib.import_module(module), short)
        assert name not in tried
        assert all(
            p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            for p in inspect.signature(function).parameters.values()
        ), f"{name} needs arguments: it never runs as a no-input answer, list it no longer"
