"""``sigmoid``: keeps only its output.

``d sigmoid(x)/dx = y * (1 - y)`` needs only the output ``y``, so, as for
``tanh``, the input can be freed once the user drops it. The forward uses
``sigmoid(x) = (tanh(x/2) + 1) / 2``, which never overflows (``exp(-x)``
does for large negative ``x``).
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import type_check


class Sigmoid(FunctionNode):
    """``y = 1 / (1 + exp(-x))``; retains ``y`` only."""

    @property
    def label(self):
        return "Sigmoid"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        y = force_array(xp.tanh(x * 0.5))  # a Python float keeps x's dtype
        y *= 0.5
        y += 0.5
        return y,

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return SigmoidGrad().apply((y, grad_outputs[0]))


class SigmoidGrad(FunctionNode):
    """``gx = gy * y * (1 - y)`` from the inputs ``(y, gy)``."""

    @property
    def label(self):
        return "SigmoidGrad"

    def forward(self, inputs):
        y, gy = inputs
        self.retain_inputs((0, 1))
        gx = force_array(1 - y)      # the one temporary; the rest is in place
        gx *= y
        gx *= gy
        return gx,

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx, = grad_outputs
        result = []
        for i in indexes:
            if i == 0:  # d/dy of gy * y * (1 - y) = gy * (1 - 2y)
                result.append(ggx * gy * (1.0 - 2.0 * y))
            else:       # d/dgy = y * (1 - y)
                result.append(ggx * y * (1.0 - y))
        return tuple(result)


def sigmoid(x):
    """Elementwise logistic sigmoid ``1 / (1 + exp(-x))``; dtype is kept."""
    return Sigmoid().apply((x,))[0]
