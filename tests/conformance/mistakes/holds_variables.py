"""Mistake: the graph holds the Variables themselves, as the hand-made
engine of chapters 02 to 05 does, not their nodes.

``inputs`` and ``outputs`` are the Variables, and the loop keys its table by
Variable. Gradients are right, but every array of the graph stays alive as
long as the graph does, whether a backward needs it or not: Task 4 fails,
and so does the check of Task 6 on what exp and tanh keep.
"""

import numpy

from mychain import backprop, function_node
from mychain.backprop import Candidates
from mychain.configuration import config
from mychain.variable import Variable, as_variable

LOSES = {4: "the graph must hold nodes", 6: "Task 4 fails too"}


def apply(self, inputs):
    if self._applied:
        raise RuntimeError("apply: make a new node for every application")
    self._applied = True
    variables = [as_variable(x) for x in inputs]
    arrays = self.forward(tuple(x.array for x in variables))
    outputs = tuple(Variable(y) for y in arrays)
    if config.enable_backprop:
        self.inputs = tuple(variables)  # the mistake: Variables, not nodes
        self.outputs = outputs
        self.rank = max([x.rank for x in variables], default=0)
        for y in outputs:
            y.creator = self
    return outputs


def get_retained_inputs(self):
    return tuple(self.inputs[i] for i in self._input_indexes_to_retain)


def get_retained_outputs(self):
    return tuple(self.outputs[i] for i in self._output_indexes_to_retain)


def walk(y, retain_grad=False):
    seed = y.grad_var
    if seed is None:
        if y.array.size != 1:
            raise RuntimeError("backward: set y.grad first")
        seed = Variable(numpy.ones_like(y.array))
    grads = {y: seed}
    candidates = Candidates()
    candidates.push(y.creator)
    while len(candidates):
        func = candidates.pop()
        grad_outputs = tuple(grads.get(out) for out in func.outputs)
        if retain_grad:
            for out, g in zip(func.outputs, grad_outputs):
                out.grad_var = g
        grad_inputs = func.backward(tuple(range(len(func.inputs))),
                                    grad_outputs)
        for x, gx in zip(func.inputs, grad_inputs):
            if gx is None:
                continue
            if x.creator is None:
                x.grad_var = gx if x.grad_var is None else x.grad_var + gx
            else:
                grads[x] = grads[x] + gx if x in grads else gx
                candidates.push(x.creator)


function_node.FunctionNode.apply = apply
function_node.FunctionNode.get_retained_inputs = get_retained_inputs
function_node.FunctionNode.get_retained_outputs = get_retained_outputs
backprop.walk = walk
