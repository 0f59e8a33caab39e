"""The exercise kit: what every checked exercise shares, one concern per module.

========================  =====================================================================
module                    what
========================  =====================================================================
``outcomes``              the outcomes of a check and the exceptions a checker raises
``feedback``              :class:`Feedback` and :class:`Text`, and the sentence helpers
``display``               numbers and arrays written as a learner writes them
``grading_mode``          when a check must pass, hidden solutions, the grading salt
``reach``                 the course's call graph: what else computes what a function does
``forbidden``             forbidden calls: their code objects and the watch on a call
``passing_helpers``       the course helpers that pass a check by themselves
``answer_lint``           what grading would refuse in an answer's notebook cell
``calling``               calling a learner's function, its failures turned into feedback
``cases``                 :class:`Cases`, the one checking loop
``judging``               comparing what came back, recognising known mistakes
``precision``             judging an array to the precision it was computed in
``exercise_map``          the course's map of exercises, id -> exercise (``EXERCISES``)
``exercise``              :class:`Exercise`: check, hints, solution, stub, help panel
========================  =====================================================================

Import from the module that holds a name (``from attnlab.exercises.kit.cases import Cases``);
this package re-exports nothing.
"""
