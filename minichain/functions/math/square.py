"""``square``: ``x * x`` as one node, keeping ``x`` once instead of twice."""

from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.utils.array import force_array


class Square(FunctionNode):
    """``y = x ** 2``; backward ``gx = 2 x gy``."""

    @property
    def label(self):
        return "square"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        self.retain_inputs((0,))
        x, = inputs
        return force_array(x * x),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * x * 2,


def square(x):
    """Elementwise square.

    Args:
        x: Variable or array of floats, any shape.

    Returns:
        A Variable of the same shape and dtype.

    >>> square(Variable(numpy.array([-2.0, 3.0]))).array
    array([4., 9.])
    """
    return Square().apply((x,))[0]
