"""``tanh``: keeps only its output.

``d tanh(x)/dx = 1 - tanh(x)**2`` is a function of the *output*, so backward
needs ``y`` and not ``x``. Keeping only ``y`` matters for memory: in
``tanh(linear(x))`` the next layer keeps ``y`` anyway, so the activation
costs nothing extra, while the linear output ``x`` can be freed as soon as
the user drops it (DeZero keeps both and uses twice the memory).

The backward is a node of its own, ``TanhGrad``: one pass over the arrays
instead of three operator nodes, and it is differentiable in turn.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import type_check


class Tanh(FunctionNode):
    """``y = tanh(x)``; retains ``y`` only."""

    @property
    def label(self):
        return "Tanh"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        self.retain_outputs((0,))
        return force_array(xp.tanh(x)),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return TanhGrad().apply((y, grad_outputs[0]))

    def backward_arrays(self, indexes, grad_outputs):
        return _tanh_grad(self._retained_output_data[0], grad_outputs[0]),


class TanhGrad(FunctionNode):
    """``gx = gy * (1 - y**2)`` from the inputs ``(y, gy)``."""

    @property
    def label(self):
        return "TanhGrad"

    def forward(self, inputs):
        y, gy = inputs
        self.retain_inputs((0, 1))
        return _tanh_grad(y, gy),

    def backward(self, indexes, grad_outputs):
        y, gy = self.get_retained_inputs()
        ggx, = grad_outputs
        result = []
        for i in indexes:
            if i == 0:  # d/dy of gy * (1 - y**2) = -2 y gy
                result.append(ggx * gy * y * -2.0)
            else:       # d/dgy = 1 - y**2
                result.append(ggx * (1.0 - y * y))
        return tuple(result)


def _tanh_grad(y, gy):
    """``gy * (1 - y**2)`` on arrays, with one temporary."""
    xp = backend.get_array_module(y)
    gx = force_array(y * y)      # the one temporary; the rest is in place
    xp.subtract(1, gx, out=gx)   # 1 - y**2
    gx *= gy
    return gx


def tanh(x):
    """Elementwise hyperbolic tangent. Shape and dtype are kept.

    >>> tanh(Variable(numpy.zeros(2, numpy.float32))).array
    array([0., 0.], dtype=float32)
    """
    return Tanh().apply((x,))[0]
