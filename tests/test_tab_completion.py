"""What a learner sees when tab-completing a numerics module: its API, not the helpers it uses.

In a notebook, ``attnlab.attention.<Tab>`` (Jedi, as IPython completes) listed every name the
module imported, so ``check_qk``, ``softmax_in_place`` and ``positive_int`` from the private
modules ``attnlab._checks``, ``attnlab._kernels`` and ``attnlab._validate`` stood beside the
four functions of its ``__all__`` (issue 45). A numerics module imports those private modules
themselves and calls ``_checks.check_qk(...)``: the completion of a module whose names
``tests/test_numerics_import.py`` lists (``NUMERICS``) is its ``__all__`` plus at most ``np``
and ``math``, and no numerics module of the course (:data:`attnlab.course.NUMERICS`) offers a
private module's helper. Names with a leading underscore are left out, as Jupyter leaves them
out until one types the underscore.
"""

import importlib

import pytest
from test_numerics_import import NUMERICS

from attnlab.course import NUMERICS as COURSE_NUMERICS

jedi = pytest.importorskip("jedi")

#: Modules a numerics module may show beside its API: it computes with them.
LIBRARIES = {"np", "math"}

#: The numerics' private modules, whose helpers no public module should offer.
PRIVATE = ("attnlab._checks", "attnlab._kernels", "attnlab._validate")


def completion(module_name: str) -> set[str]:
    """The names Jedi completes after ``attnlab.<module>.``, without the ``_`` ones."""
    import attnlab

    importlib.import_module(module_name)
    typed = f"{module_name}."
    found = jedi.Interpreter(typed, [{"attnlab": attnlab}]).complete()
    return {c.name for c in found if not c.name.startswith("_")}


@pytest.mark.parametrize("module_name", NUMERICS)
def test_a_numerics_module_completes_to_its_api(module_name):
    module = importlib.import_module(module_name)
    offered = completion(module_name)
    extra = offered - set(module.__all__) - LIBRARIES
    missing = set(module.__all__) - offered
    assert not extra, f"attnlab.{module_name.partition('.')[2]}. also offers {sorted(extra)}"
    assert not missing, f"{module_name}: its API is not offered: {sorted(missing)}"


@pytest.mark.parametrize("module_name", COURSE_NUMERICS)
def test_no_numerics_module_offers_a_private_helper(module_name):
    module = importlib.import_module(module_name)
    helpers = sorted(
        name
        for name in completion(module_name) - set(module.__all__)
        if getattr(getattr(module, name, None), "__module__", None) in PRIVATE
    )
    assert not helpers, f"{module_name} offers helpers of its private modules: {helpers}"
