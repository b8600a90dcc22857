"""``mean_squared_error``: the mean of ``(x0 - x1)**2`` over all elements.

Backward: ``gx0 = 2 (x0 - x1) gy / size`` and ``gx1 = -gx0``. It is written
with minichain's operators on the retained inputs, so it can be
differentiated again.
"""

from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import type_check


class MeanSquaredError(FunctionNode):
    """``loss = sum((x0 - x1)**2) / x0.size``, a 0-d array of x0's dtype."""

    @property
    def label(self):
        return "MeanSquaredError"

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x0", "x1"))
        x0, x1 = in_types
        type_check.expect(x0.dtype.kind == "f", x0.dtype == x1.dtype,
                          x0.shape == x1.shape)

    def forward(self, inputs):
        x0, x1 = inputs
        self.retain_inputs((0, 1))
        diff = (x0 - x1).ravel()
        # dot keeps the dtype and needs no second temporary for the squares
        return force_array(diff.dot(diff) / diff.dtype.type(max(diff.size, 1)),
                           x0.dtype),

    def backward(self, indexes, grad_outputs):
        x0, x1 = self.get_retained_inputs()
        gy, = grad_outputs
        scale = 2.0 / max(x0.size, 1)
        gx0 = (x0 - x1) * (gy * scale)  # the 0-d gy broadcasts
        return tuple([gx0 if i == 0 else -gx0 for i in indexes])


def mean_squared_error(x0, x1):
    """Mean squared error between two arrays of the same shape and dtype.

    Returns a 0-d Variable (a scalar loss) in the inputs' float dtype.
    """
    return MeanSquaredError().apply((x0, x1))[0]
