"""``relu``: ``max(x, 0)``, keeping only its output.

Where the output is positive the gradient passes, elsewhere it is zero; the
output alone tells which, so the input need not be kept. The backward is
``ReLUGrad``, which multiplies by that mask; its own backward multiplies by
the same mask again (the second derivative of relu is zero), so double
backprop works.
"""

from minichain import backend
from minichain.function_node import FunctionNode, writable_gradient
from minichain.utils.array import force_array
from minichain.utils import type_check


class ReLU(FunctionNode):
    """``y = max(x, 0)``; retains ``y`` only."""

    writes_into_gradient = True  # see backward_arrays

    @property
    def label(self):
        return "ReLU"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        return force_array(xp.maximum(x, 0)),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return ReLUGrad(y.array).apply(grad_outputs)

    def backward_arrays(self, indexes, grad_outputs):
        y = self._retained_output_data[0]
        gy = writable_gradient(grad_outputs)
        if gy is not None and gy.shape == y.shape:
            gy *= y > 0  # the engine's own array, as NumPy by hand does
            return gy,
        return _relu_grad(grad_outputs[0], y),


class ReLUGrad(FunctionNode):
    """``gx = gy * (y > 0)``; ``y`` is a constant array."""

    def __init__(self, y):
        self.y = y

    @property
    def label(self):
        return "ReLUGrad"

    def forward(self, inputs):
        return _relu_grad(inputs[0], self.y),

    def backward(self, indexes, grad_outputs):
        return ReLUGrad(self.y).apply(grad_outputs)


def _relu_grad(gy, y):
    # A float times a bool mask keeps the float dtype; on NumPy it is
    # also many times faster than ``where(y > 0, gy, 0)``.
    return force_array(gy * (y > 0))


def relu(x):
    """Rectified linear unit ``max(x, 0)``, elementwise; dtype is kept."""
    return ReLU().apply((x,))[0]
