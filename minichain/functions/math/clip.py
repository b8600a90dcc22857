"""``clip``: limit values to ``[x_min, x_max]``.

Inside the interval clip is the identity; outside it is constant. So the
gradient passes where ``x_min <= x <= x_max`` and is 0 elsewhere (at the
two edges, where clip has no derivative, the gradient is taken to pass).
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.utils.array import force_array
from minichain.utils import arguments


class Clip(FunctionNode):
    """``y = min(max(x, x_min), x_max)``; backward ``gx = gy * inside``."""

    def __init__(self, x_min, x_max):
        if x_min is None and x_max is None:
            raise ValueError("clip: give at least one of x_min and x_max")
        if x_min is not None and x_max is not None and x_min > x_max:
            raise ValueError("clip: x_min ({}) must not exceed x_max ({})"
                             .format(x_min, x_max))
        self.x_min = x_min
        self.x_max = x_max

    @property
    def label(self):
        return "Clip"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        self.retain_inputs((0,))
        x, = inputs
        xp = backend.get_array_module(x)
        # Bounds cast to x's dtype, so float32 stays float32.
        low = None if self.x_min is None else x.dtype.type(self.x_min)
        high = None if self.x_max is None else x.dtype.type(self.x_max)
        return force_array(xp.clip(x, low, high)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        xp = backend.get_array_module(x.array)
        mask = xp.ones(x.shape, dtype=bool)
        if self.x_min is not None:
            mask &= x.array >= self.x_min
        if self.x_max is not None:
            mask &= x.array <= self.x_max
        # The mask is a constant, so this backward is differentiable in gy.
        return grad_outputs[0] * mask.astype(x.dtype),


def clip(x, x_min, x_max):
    """Clip the elements of ``x`` to the interval ``[x_min, x_max]``.

    Args:
        x: Variable or array of floats, any shape.
        x_min, x_max: Python numbers; one of them may be None (no bound on
            that side).

    Returns:
        A Variable of the same shape and dtype.

    >>> clip(Variable(numpy.array([-2.0, 0.5, 3.0])), -1.0, 1.0).array
    array([-1. ,  0.5,  1. ])
    """
    arguments.check_number("clip", "x_min", x_min, allow_none=True)
    arguments.check_number("clip", "x_max", x_max, allow_none=True)
    return Clip(x_min, x_max).apply((x,))[0]
