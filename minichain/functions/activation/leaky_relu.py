"""``leaky_relu``: ``x`` where positive, ``slope * x`` elsewhere.

With ``slope >= 0`` the output has the sign of the input, so, like ``relu``,
only the output is kept; a negative slope flips signs, and then the input
is kept instead.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import arguments
from minichain.utils import type_check


class LeakyReLU(FunctionNode):
    """``y = x if x >= 0 else slope * x``."""

    def __init__(self, slope):
        self.slope = slope

    @property
    def label(self):
        return "LeakyReLU"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        if self.slope >= 0:
            self.retain_outputs((0,))
        else:
            self.retain_inputs((0,))
        scaled = force_array(x * x.dtype.type(self.slope))
        # For x >= 0 the answer is x, else slope * x: the larger of the two
        # when slope <= 1, the smaller when slope > 1 (no slow ``where``).
        if self.slope <= 1:
            return force_array(xp.maximum(x, scaled, out=scaled)),
        return force_array(xp.minimum(x, scaled, out=scaled)),

    def backward(self, indexes, grad_outputs):
        if self.slope >= 0:  # y > 0 exactly where x > 0 (y = 0 at x = 0)
            y, = self.get_retained_outputs()
            positive = y.array > 0
        else:
            x, = self.get_retained_inputs()
            positive = x.array >= 0
        return LeakyReLUGrad(positive, self.slope).apply(grad_outputs)


class LeakyReLUGrad(FunctionNode):
    """``gx = gy`` where the input was positive, ``slope * gy`` elsewhere."""

    def __init__(self, positive, slope):
        self.positive = positive
        self.slope = slope

    @property
    def label(self):
        return "LeakyReLUGrad"

    def forward(self, inputs):
        gy, = inputs
        # factor = 1 where positive, slope elsewhere, in gy's dtype
        factor = self.positive.astype(gy.dtype)
        factor *= 1 - self.slope
        factor += self.slope
        factor *= gy
        return force_array(factor),

    def backward(self, indexes, grad_outputs):
        return LeakyReLUGrad(self.positive, self.slope).apply(grad_outputs)


def leaky_relu(x, slope=0.2):
    """Leaky rectifier: ``x`` for ``x >= 0``, ``slope * x`` otherwise.

    Args:
        x: float Variable or array, any shape.
        slope: the slope for negative inputs (default 0.2, as in Chainer).
    """
    arguments.check_number("leaky_relu", "slope", slope)
    return LeakyReLU(float(slope)).apply((x,))[0]
