"""Mistake: ``apply`` lets a node be applied a second time.

Chapter 02's rule is "one node, one application": a node remembers one set
of inputs and outputs. This apply has no such guard, so a second
application silently overwrites the first graph's links; the first output's
backward then reaches the wrong inputs.
"""

import weakref

from mychain import function_node
from mychain.configuration import config
from mychain.variable import Variable, as_variable

LOSES = {2: "a node is one application"}


def apply(self, inputs):
    variables = [as_variable(x) for x in inputs]
    arrays = self.forward(tuple(x.array for x in variables))
    outputs = tuple(Variable(y) for y in arrays)
    if config.enable_backprop:
        self.inputs = tuple(x.node for x in variables)
        self.rank = max([x.rank for x in variables], default=0)
        self.outputs = tuple(weakref.ref(y.node) for y in outputs)
        for y in outputs:
            y.creator = self
        for i in self._input_indexes_to_retain:
            self.inputs[i].data = variables[i].array
        for i in self._output_indexes_to_retain:
            outputs[i].node.data = outputs[i].array
    return outputs


function_node.FunctionNode.apply = apply
