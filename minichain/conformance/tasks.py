"""The tasks of the build-your-own-engine assignment: order, chapter, points.

The tasks are numbered in the order the chapters teach their ideas, so a
learner who reads the course front to back meets them in that order.

A task passes when every one of its checks passes, and then earns all its
points; there is no partial credit inside a task. ``needs`` lists the tasks
whose code its checks run through: when one of those fails too, the report
says to fix it first.
"""

import collections

from minichain.conformance import (backward_checks, function_checks,  # NOQA
                                   graph_checks, mode_checks)
from minichain.conformance.checks import CHECKS

Task = collections.namedtuple(
    "Task", "number title chapter points needs what checks")

_TABLE = [
    (1, "Variable: its array, its creator and its rank", "02", 5, (),
     "Variable.__init__ and the creator setter (rank = creator's rank + 1)"),
    (2, "FunctionNode.apply: forward, then link the graph", "02", 10, (1,),
     "apply: forward on arrays, output Variables, inputs, outputs, ranks, "
     "one application per node"),
    (3, "backward over a chain", "03", 10, (1, 2),
     "backprop.walk: the starting gradient, following creators, leaf "
     "gradients"),
    (4, "retain_inputs, retain_outputs: what the graph keeps", "03", 10,
     (1, 2, 3),
     "retain_inputs/outputs, get_retained_inputs/outputs, freed arrays"),
    (5, "accumulation at branches and across calls", "04", 10, (1, 2, 3),
     "backprop.add_gradient, used by walk"),
    (6, "add, mul, exp, tanh, with first and second derivatives", "04", 10,
     (1, 2, 3, 4, 5),
     "Add, Mul, Exp and Tanh in functions.py, backward on Variables"),
    (7, "the rank heap: the backward order", "05", 15, (1, 2, 3, 5),
     "backprop.Candidates (push, pop), used by walk"),
    (8, "sum, matmul and broadcasting", "06", 10, (1, 2, 3, 4, 5, 6),
     "Sum and MatMul in functions.py; sum_to in Add's and Mul's backward"),
    (9, "retain_grad: gradients in the middle", "07", 5, (1, 2, 3),
     "backprop.retain_gradients, called by walk when retain_grad=True"),
    (10, "no_backprop_mode and force_backprop_mode", "07", 5, (1, 2),
     "configuration.no_backprop_mode/force_backprop_mode; apply reads the "
     "switch"),
    (11, "forget: recompute instead of keeping", "10", 10,
     (1, 2, 3, 4, 10), "Forget.forward and Forget.backward in forget.py, "
     "with the random state replayed"),
]

TASKS = [Task(number, title, chapter, points, needs, what,
              [c for c in CHECKS if c.task == number])
         for number, title, chapter, points, needs, what in _TABLE]

TOTAL_POINTS = sum(task.points for task in TASKS)


def task(number):
    """The task with this number (``KeyError``-like ``ValueError`` if none)."""
    for candidate in TASKS:
        if candidate.number == number:
            return candidate
    raise ValueError("there is no task {}; the tasks are {}".format(
        number, ", ".join(str(t.number) for t in TASKS)))
