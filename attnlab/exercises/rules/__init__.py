"""What grading refuses, and the learner's check previews, in one place.

========================  =====================================================================
module                    what
========================  =====================================================================
``grading_mode``          are we grading? (must pass, validating, the grading kernel's one flag
                          the worker sets, graded use or self-study); hidden solutions; the salt
``lint``                  what an answer cell may contain: imports, names, forbidden calls, size
``answer_lint``           the lint on the notebook cell that defined an answer, and its sentence
``unseen_names``          names an answer uses from cells grading does not run
``answer_cells``          is the answer in its tagged answer cell, where grading reads it?
``received``              an answer's result as grading receives it (object arrays)
``forbidden_registry``    what a forbidden name stands for: a whole module's API, what a
                          forbidden function computes with, what runs inside a building block
``reach``                 the course's call graph read with the registry: what else computes
                          what a forbidden function does
``forbidden``             forbidden calls: their code objects and the watch on a call
========================  =====================================================================

Grading (:mod:`attnlab.grading`) imports these modules; they import nothing of it.
"""
