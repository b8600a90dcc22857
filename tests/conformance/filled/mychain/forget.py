"""``forget``: keep nothing of a function's inside, recompute it in backward.

A chain of functions keeps arrays for its backward (Task 4), so the memory
of a forward grows with its depth. ``forget(func, *xs)`` runs ``func``
without recording anything, keeping only its inputs; backward runs ``func``
again, this time recording, and backpropagates through that fresh graph.
One extra forward buys back all the memory inside ``func`` (chapter 10).
A ``func`` that draws random numbers (a dropout mask) must draw the same
ones in both runs: ``Forget`` replays NumPy's random state.
"""

import numpy  # NOQA  (for Task 11: numpy.random.get_state, set_state)

from mychain.configuration import (force_backprop_mode,  # NOQA  (for Task 11)
                                   no_backprop_mode)
from mychain.function_node import FunctionNode
from mychain.variable import Variable  # NOQA  (for Task 11)


class Forget(FunctionNode):
    """Runs ``func`` without a graph in forward, and again with one in
    backward. ``func`` takes Variables and returns one Variable."""

    def __init__(self, func):
        if not callable(func):
            raise TypeError("forget: func must be callable, got {}".format(
                type(func).__name__))
        self.func = func

    @property
    def label(self):
        return "Forget"

    def forward(self, inputs):
        """Task 11 (chapter 10): run ``func`` and keep nothing of its inside.

        Retain every input (``retain_inputs``): backward runs ``func`` on
        them again. Save NumPy's random state first
        (``self.random_state = numpy.random.get_state()``): backward
        replays it. Call ``func`` on new Variables around the input arrays
        inside ``no_backprop_mode()``, so that no function inside records
        a graph or keeps an array, and return its output's array.
        """
        self.retain_inputs(range(len(inputs)))
        self.random_state = numpy.random.get_state()
        with no_backprop_mode():
            y = self.func(*[Variable(x) for x in inputs])
        return y.array,

    def backward(self, target_input_indexes, grad_outputs):
        """Task 11 (chapter 10): run ``func`` again, recorded, and
        backpropagate the gradient that arrived through it.

        1. Make *new leaf* Variables around the retained inputs' arrays (not
           the inputs themselves: the engine will hand the gradients you
           return to them, and they must not receive them twice).
        2. Call ``func`` on them inside ``force_backprop_mode()``: backward
           runs with recording off, and this graph must be recorded. Around
           that call, replay the random state forward saved
           (``numpy.random.set_state``), so that ``func`` draws the numbers
           it drew in forward (chapter 10, "Dropout inside forget"); then
           put back the state you found, so the numbers drawn after the
           backward do not repeat.
        3. Start a backward from the recomputed output, with the gradient
           that arrived (``grad_outputs[0]``) as its starting gradient
           (set its ``grad_var``).
        4. Return the new leaves' gradients (``grad_var``), one per input.
        """
        xs = [Variable(x.array) for x in self.get_retained_inputs()]
        found = numpy.random.get_state()
        numpy.random.set_state(self.random_state)
        try:
            with force_backprop_mode():
                y = self.func(*xs)
        finally:
            numpy.random.set_state(found)
        y.grad_var = grad_outputs[0]
        y.backward()
        return tuple(x.grad_var for x in xs)


def forget(func, *xs):
    """``func(*xs)``, keeping none of the arrays computed inside ``func``.

    Memory: only ``xs`` and the output are kept. Time: one more forward of
    ``func``, in backward.
    """
    return Forget(func).apply(xs)[0]
