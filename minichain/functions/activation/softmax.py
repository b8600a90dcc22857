"""``softmax``: normalised exponentials along an axis.

Numerically stable: ``exp(x - max(x))`` never overflows and the result is
the same, since the common factor ``exp(-max)`` cancels in the ratio.

Backward, with ``y = softmax(x)``:
``gx = y * gy - y * sum(y * gy, axis)``. It needs only ``y``, and it is
written with minichain's operators, so it can be differentiated again.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import arguments
from minichain.utils import type_check


def _keepdims_shape(shape, axis):
    """``shape`` with ``axis`` set to 1: the shape of a sum along ``axis``."""
    shape = list(shape)
    shape[axis] = 1
    return tuple(shape)


def check_class_axis(in_types, axis):
    """The input contract shared by softmax and log_softmax.

    One float input whose ``axis`` exists and holds at least one class:
    normalising over nothing has no meaning.
    """
    type_check.argname(in_types, ("x",))
    x, = in_types
    type_check.expect(x.dtype.kind == "f", -x.ndim <= axis, axis < x.ndim,
                      x.shape[axis] > 0)


def _softmax_array(x, axis):
    """The forward on arrays (the loss reuses it): one new array, ``y``."""
    xp = backend.get_array_module(x)
    y = force_array(x - x.max(axis=axis, keepdims=True))
    xp.exp(y, out=y)
    y /= y.sum(axis=axis, keepdims=True)
    return y


class Softmax(FunctionNode):
    """``y = exp(x) / sum(exp(x), axis)``; retains ``y`` only."""

    def __init__(self, axis=1):
        self.axis = axis

    @property
    def label(self):
        return "Softmax"

    def check_type_forward(self, in_types):
        check_class_axis(in_types, self.axis)

    def forward(self, inputs):
        self.retain_outputs((0,))
        return _softmax_array(inputs[0], self.axis),

    def backward(self, indexes, grad_outputs):
        from minichain.functions.array.broadcast import sum_to
        y, = self.get_retained_outputs()
        gx = y * grad_outputs[0]
        total = sum_to(gx, _keepdims_shape(gx.shape, self.axis))
        return gx - y * total,


def softmax(x, axis=1):
    """Softmax along ``axis``: non-negative, sums to one along that axis.

    Args:
        x: float Variable or array, e.g. scores of shape ``(N, C)``.
        axis: the axis that is normalised (default 1, the class axis).

    Returns a Variable of the same shape and dtype.
    """
    arguments.check_int("softmax", "axis", axis)
    return Softmax(axis).apply((x,))[0]
