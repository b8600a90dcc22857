"""Mistake: the loop stores a None gradient instead of skipping it.

A backward returns None for an input that gets no gradient; this loop hands
it to ``add_gradient`` all the same, which adds None to what a leaf held
(``old + None`` is an array of nan) or stores None over it.
"""

import numpy

from mychain import backprop
from mychain.backprop import Candidates
from mychain.variable import Variable

LOSES = {3: "skip it"}


def walk(y, retain_grad=False):
    seed = y.grad_var
    if seed is None:
        if y.array.size != 1:
            raise RuntimeError("backward: set y.grad first")
        seed = Variable(numpy.ones_like(y.array))
    grads = {y.node: seed}
    candidates = Candidates()
    candidates.push(y.creator)
    while len(candidates):
        func = candidates.pop()
        if retain_grad:
            backprop.retain_gradients(func, grads)
        grad_outputs = tuple(grads.get(ref()) for ref in func.outputs)
        grad_inputs = func.backward(tuple(range(len(func.inputs))),
                                    grad_outputs)
        for node, gx in zip(func.inputs, grad_inputs):
            backprop.add_gradient(grads, node, gx)  # the mistake: no skip
            candidates.push(node.creator)


backprop.walk = walk
