"""A function as a notebook cell defines it, for tests of what the learner's check reads."""

from __future__ import annotations

import linecache

import numpy as np


def cell_function(code: str, name: str, number: int = 1, kernel: int = 4242):
    """``name`` as defined by ``code`` run as a notebook cell (ipykernel's cell file names,
    ``/tmp/ipykernel_<kernel>/<number>.py``), so that the learner's check lints the cell as
    grading does."""
    filename = f"/tmp/ipykernel_{kernel}/{number}.py"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    space = {"np": np}
    exec(compile(code, filename, "exec"), space)
    return space[name]
