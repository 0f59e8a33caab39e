"""The refusal a learner reads for using a function the exercise asks them to write names the
function they used and says what is allowed without contradicting itself (issue 41: using
``attnlab.softmax`` in 3.1 was refused as "not to use scipy.special.softmax", then told "may use
… the course's own functions")."""

from __future__ import annotations

import pytest
from test_check_states import Kernel

from attnlab.exercises import lesson3
from attnlab.exercises.rules.answer_lint import refused_message
from attnlab.exercises.rules.lint import problems

LIBRARY = "import numpy as np\nimport attnlab\nfrom attnlab.exercises import lesson3"
ANSWERS = {
    "through the package": (
        "def softmax_row(x):\n    return attnlab.softmax(np.asarray(x, float))\n",
        "attnlab.softmax",
    ),
    "imported by name": (
        "from attnlab import softmax\n"
        "def softmax_row(x):\n    return softmax(np.asarray(x, float))\n",
        "attnlab.softmax",
    ),
    "scipy under another name": (
        "import scipy.special as sp\n"
        "def softmax_row(x):\n    return sp.softmax(np.asarray(x, float))\n",
        "scipy.special.softmax",
    ),
}


@pytest.mark.parametrize(("cell", "used"), ANSWERS.values(), ids=ANSWERS)
def test_the_lint_names_the_function_used(cell, used):
    (line,) = problems(cell, forbidden=lesson3.FORBIDDEN)
    assert line.endswith(f"this exercise asks you not to use {used}"), line


def test_what_is_allowed_does_not_contradict_the_refusal():
    message = refused_message(["line 2: `attnlab.softmax` — this exercise asks you not to use it"])
    assert "the course's own functions" in message
    assert "except those this exercise asks you to write yourself" in message


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    learner = Kernel(tmp_path_factory.mktemp("learner"))
    assert learner.run(LIBRARY)[0] == "ok"
    yield learner
    learner.close()


@pytest.mark.parametrize("how", ["through the package", "imported by name"])
def test_the_learner_reads_what_they_used_in_a_notebook(kernel, how):
    cell, used = ANSWERS[how]
    assert kernel.run(cell)[0] == "ok"
    _, shown = kernel.run("lesson3.softmax_row.check(softmax_row)")
    assert f"not to use {used}" in shown, shown
    assert "scipy" not in shown, shown
    assert "except those this exercise asks you to write yourself" in shown, shown
