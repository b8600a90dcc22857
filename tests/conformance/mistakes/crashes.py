"""Not a typical mistake but a test of the runner: a backward ends the
process.

``retain_gradients`` (Task 9) calls ``os._exit``, which no ``try`` catches;
``apply`` also prints, a lot, which must not reach the report.
"""

import os

from mychain import backprop, function_node

_apply = function_node.FunctionNode.apply


def noisy_apply(self, inputs):
    print("apply" * 1000)
    return _apply(self, inputs)


def retain_gradients(func, grads):
    os._exit(3)


function_node.FunctionNode.apply = noisy_apply
backprop.retain_gradients = retain_gradients
