"""Small FunctionNodes that tests build graphs from (shared by test files)."""

import numpy

from minichain import FunctionNode


class Traced(FunctionNode):
    """Sum of its inputs; appends its ``name`` to ``log`` when backward runs.

    The gradient passes unchanged to every input, so a test reads the
    backward order from ``log`` and the accumulation from the gradients.
    """

    def __init__(self, log, name):
        self.log, self.name = log, name

    def forward(self, inputs):
        y = inputs[0].copy()
        for x in inputs[1:]:
            y = y + x
        return numpy.asarray(y),

    def backward(self, indexes, grad_outputs):
        self.log.append(self.name)
        return tuple(grad_outputs[0] for _ in indexes)


def traced(log, name, *inputs):
    """Apply a fresh ``Traced`` node to ``inputs``; returns its output."""
    return Traced(log, name).apply(inputs)[0]
