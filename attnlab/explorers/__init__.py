"""The live explorers, one module per explorer; the shared machinery is in ``base``.

Each explorer is a class; ``Explorer()`` displays itself when it is the last line
of a cell, and ``all_explorers()`` finds every one (the benchmark and the tests use it).
"""

from __future__ import annotations

import importlib
import pkgutil

from attnlab.explorers.base import Explorer


def all_explorers() -> list[type[Explorer]]:
    """Every concrete explorer class in this package, by module name."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    found = []
    pending = list(Explorer.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith(__name__) and "make_controls" in _defined(cls):
            found.append(cls)
    return sorted(found, key=lambda cls: (cls.__module__, cls.__name__))


def _defined(cls) -> set[str]:
    return {name for klass in cls.__mro__ if klass is not Explorer for name in vars(klass)}


__all__ = ["Explorer", "all_explorers"]
