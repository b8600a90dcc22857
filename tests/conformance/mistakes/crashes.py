"""Not a typical mistake but a test of the runner: backward ends the process.

The first backward calls ``os._exit``, which no ``try`` catches; ``apply``
also prints, a lot, which must not reach the report.
"""

import os

from mychain import backprop, function_node

_apply = function_node.FunctionNode.apply


def noisy_apply(self, inputs):
    print("apply" * 1000)
    return _apply(self, inputs)


def walk(y, retain_grad=False):
    os._exit(3)


function_node.FunctionNode.apply = noisy_apply
backprop.walk = walk
