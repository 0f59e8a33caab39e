"""The key to exercise 4.2 (name the four patterns): which pattern each heatmap A–D shows.

It lives outside the ``attnlab`` package on purpose, so the package students install in a
graded course run does not contain it (see ``attnlab/exercises/keys.py``): the package holds
the four heatmaps (``attnlab.exercises.lesson4.quiz_examples``) but not their names, so in a
graded run the mapping is found only by reading the heatmaps, the exercise itself.
"""

from __future__ import annotations

from attnlab.exercises.lesson4 import reading_cue
from attnlab.exercises.quiz import Key

#: The pattern each heatmap of the quiz shows (a shuffle of ``attnlab.patterns.PATTERNS``).
ORDER = {"A": "link", "B": "hub", "C": "diagonal", "D": "uniform"}


def key_4_2(scope) -> dict:
    """Letter -> :class:`Key`; a wrong name gets a cue for reading that heatmap that does not
    name its pattern. ``scope["examples"]`` holds the heatmaps by letter."""
    examples = scope["examples"]
    return {
        letter: Key(name, nudge=reading_cue(letter, name, examples[letter]))
        for letter, name in ORDER.items()
    }
