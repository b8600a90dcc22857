"""Mistake: backward runs each function when a depth-first search first
reaches it (pre-order), exploring the first input first.

Chapter 05's wrong engine: on ``h = 2x; y = h + h*h`` it runs ``h``'s
creator before ``h*h`` has sent its share, and gets 2 instead of 26. Each
function still runs once, and gradients are added, so only the order task
fails.
"""

import numpy

from mychain import backprop
from mychain.variable import Variable

LOSES = {7: "pre-order"}


def walk(y, retain_grad=False):
    seed = y.grad_var
    if seed is None:
        if y.array.size != 1:
            raise RuntimeError("backward: set y.grad first")
        seed = Variable(numpy.ones_like(y.array))
    grads = {y.node: seed}
    stack, done = [y.creator], set()
    while stack:
        func = stack.pop()
        if func is None or func in done:
            continue
        done.add(func)
        if retain_grad:
            backprop.retain_gradients(func, grads)
        grad_outputs = tuple(grads.get(ref()) for ref in func.outputs)
        grad_inputs = func.backward(tuple(range(len(func.inputs))),
                                    grad_outputs)
        for node, gx in zip(func.inputs, grad_inputs):
            if gx is not None:
                backprop.add_gradient(grads, node, gx)
        stack.extend(reversed([node.creator for node in func.inputs]))


backprop.walk = walk
