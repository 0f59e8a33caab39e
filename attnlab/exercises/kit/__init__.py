"""The exercise kit: what every checked exercise shares, one concern per module.

========================  =====================================================================
module                    what
========================  =====================================================================
``outcomes``              the outcomes of a check and the exceptions a checker raises
``feedback``              :class:`Feedback` and :class:`Text`, and the sentence helpers
``display``               numbers and arrays written as a learner writes them
``passing_helpers``       the course helpers that pass a check by themselves
``calling``               calling a learner's function, its failures turned into feedback
``cases``                 :class:`Cases`, the one checking loop
``judging``               comparing what came back, recognising known mistakes
``mistakes``              known mistakes as data (``Mistake``), a judge as data (``Compared``)
``precision``             judging an array to the precision it was computed in
``exercise_map``          the course's map of exercises, id -> exercise (``EXERCISES``)
``exercise``              :class:`Exercise`: check, hints, solution, stub, help panel
========================  =====================================================================

Import from the module that holds a name (``from attnlab.exercises.kit.cases import Cases``);
this package re-exports nothing. What grading refuses (forbidden calls among it) is in
:mod:`attnlab.exercises.rules`.
"""
