"""``sqrt``: its derivative ``1 / (2 sqrt(x))`` is built from the output.

So backward keeps the output ``y`` rather than the input: ``gx = gy / (2y)``.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.utils.array import force_array


class Sqrt(FunctionNode):
    """``y = sqrt(x)``; backward ``gx = gy / (2 y)``."""

    @property
    def label(self):
        return "sqrt"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        self.retain_outputs((0,))
        xp = backend.get_array_module(inputs[0])
        return force_array(xp.sqrt(inputs[0])),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] / (y * 2),


def sqrt(x):
    """Elementwise square root (NaN for negative entries, as in NumPy).

    Args:
        x: Variable or array of floats, any shape.

    Returns:
        A Variable of the same shape and dtype.

    >>> sqrt(Variable(numpy.array([4.0, 9.0]))).array
    array([2., 3.])
    """
    return Sqrt().apply((x,))[0]
