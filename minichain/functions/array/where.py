"""``where``: choose elementwise between two Variables.

``y = x where condition else y``. The condition is a constant (no gradient
flows into a boolean mask), so the gradient of each branch is the output
gradient where that branch was chosen, and zero elsewhere: again a
``where``, which is why double backprop comes for free.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.variable import Variable
from minichain.utils import type_check


class Where(FunctionNode):
    """``y = xp.where(condition, x0, x1)``; inputs may broadcast."""

    def __init__(self, condition):
        self.condition = condition

    @property
    def label(self):
        return "Where"

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "y"))
        x, y = in_types
        type_check.expect(x.dtype == y.dtype)
        type_check.expect_broadcast_shapes(self.condition.shape, x.shape,
                                           y.shape)

    def forward(self, inputs):
        x0, x1 = inputs
        xp = backend.get_array_module(x0, x1)
        return xp.where(self.condition, x0, x1),

    def backward(self, indexes, grad_outputs):
        from minichain.functions.math.basic_math import _sum_to_input
        gy, = grad_outputs
        xp = backend.get_array_module(gy.array)
        zero = xp.zeros((), dtype=gy.dtype)
        result = []
        for i in indexes:
            if i == 0:
                g = Where(self.condition).apply((gy, zero))[0]
            else:
                g = Where(self.condition).apply((zero, gy))[0]
            result.append(_sum_to_input(g, self.inputs[i]))
        return tuple(result)


def where(condition, x, y):
    """Elementwise ``x if condition else y``.

    Args:
        condition: a boolean array (or a Variable holding one); it gets no
            gradient.
        x, y: Variables or arrays of the same dtype; the three shapes
            broadcast together.

    Returns a Variable of the broadcast shape.
    """
    if isinstance(condition, Variable):
        condition = condition.array
    if not isinstance(condition, backend.array_types):
        raise TypeError("where: condition must be a boolean array or "
                        "Variable, got {}".format(type(condition)))
    if condition.dtype.kind != "b":
        raise TypeError("where: condition must have dtype bool, got {}"
                        .format(condition.dtype))
    xp = backend.get_array_module(x, y)
    if xp is not backend.get_array_module(condition):
        condition = xp.asarray(condition)  # the mask lives where x and y live
    return Where(condition).apply((x, y))[0]
