"""Mistake: backward sorts the graph with a recursive depth-first search
(micrograd's ``build_topo``) and runs it in reverse.

The order is a right one, so small graphs get right gradients; a chain of
10 000 functions exceeds Python's recursion limit.
"""

import numpy

from mychain import backprop
from mychain.variable import Variable

LOSES = {7: "rank heap"}


def walk(y, retain_grad=False):
    seed = y.grad_var
    if seed is None:
        if y.array.size != 1:
            raise RuntimeError("backward: set y.grad first")
        seed = Variable(numpy.ones_like(y.array))
    grads = {y.node: seed}
    order, seen = [], set()

    def visit(func):
        if func is not None and func not in seen:
            seen.add(func)
            for node in func.inputs:
                visit(node.creator)
            order.append(func)

    visit(y.creator)
    for func in reversed(order):
        if retain_grad:
            backprop.retain_gradients(func, grads)
        grad_outputs = tuple(grads.get(ref()) for ref in func.outputs)
        grad_inputs = func.backward(tuple(range(len(func.inputs))),
                                    grad_outputs)
        for node, gx in zip(func.inputs, grad_inputs):
            if gx is not None:
                backprop.add_gradient(grads, node, gx)


backprop.walk = walk
