"""``exp`` and ``log``."""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import type_check



class Exp(FunctionNode):
    """``y = exp(x)``; its derivative is itself, so backward keeps the output."""

    @property
    def label(self):
        return "exp"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        self.retain_outputs((0,))
        xp = backend.get_array_module(inputs[0])
        return force_array(xp.exp(inputs[0])),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * y,

    def backward_arrays(self, indexes, grad_outputs):
        y, = self._retained_output_data
        return force_array(grad_outputs[0] * y),


class Log(FunctionNode):
    """``y = log(x)``; backward is ``gy / x``."""

    @property
    def label(self):
        return "log"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        self.retain_inputs((0,))
        xp = backend.get_array_module(inputs[0])
        return force_array(xp.log(inputs[0])),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / x,

    def backward_arrays(self, indexes, grad_outputs):
        return force_array(grad_outputs[0] / self.inputs[0].data),


def exp(x):
    """Elementwise exponential. Shape and dtype are kept."""
    return Exp().apply((x,))[0]


def log(x):
    """Elementwise natural logarithm. Shape and dtype are kept."""
    return Log().apply((x,))[0]
