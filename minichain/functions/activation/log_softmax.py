"""``log_softmax``: ``log(softmax(x))``, computed without the log of 0.

``log_softmax(x) = x - m - log(sum(exp(x - m)))`` with ``m = max(x)``: no
overflow, and no ``log(0)`` when a probability underflows, which is why
losses use it rather than ``log(softmax(x))``.

Backward, with ``y = log_softmax(x)``: ``gx = gy - exp(y) * sum(gy, axis)``;
written with minichain's functions, so it can be differentiated again.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.functions.activation.softmax import (_keepdims_shape,
                                                   check_class_axis)
from minichain.utils import arguments


def _log_softmax_array(x, axis):
    """The forward on arrays (the loss reuses it)."""
    xp = backend.get_array_module(x)
    y = x - x.max(axis=axis, keepdims=True)
    log_total = xp.log(xp.exp(y).sum(axis=axis, keepdims=True))
    y -= log_total
    return y


class LogSoftmax(FunctionNode):
    """``y = x - logsumexp(x, axis)``; retains ``y`` only."""

    def __init__(self, axis=1):
        self.axis = axis

    @property
    def label(self):
        return "LogSoftmax"

    def check_type_forward(self, in_types):
        check_class_axis(in_types, self.axis)

    def forward(self, inputs):
        self.retain_outputs((0,))
        return _log_softmax_array(inputs[0], self.axis),

    def backward(self, indexes, grad_outputs):
        from minichain.functions.array.broadcast import sum_to
        from minichain.functions.math.exponential import exp
        y, = self.get_retained_outputs()
        gy, = grad_outputs
        total = sum_to(gy, _keepdims_shape(gy.shape, self.axis))
        return gy - exp(y) * total,


def log_softmax(x, axis=1):
    """Logarithm of the softmax along ``axis``, computed stably.

    Args:
        x: float Variable or array, e.g. scores of shape ``(N, C)``.
        axis: the normalised axis (default 1).

    Returns a Variable of the same shape and dtype.
    """
    arguments.check_int("log_softmax", "axis", axis)
    return LogSoftmax(axis).apply((x,))[0]
