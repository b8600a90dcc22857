"""Broadcasting and its adjoint: ``broadcast_to`` and ``sum_to``.

The two are each other's backward: a value copied along an axis receives the
sum of the gradients along that axis, and a sum hands its gradient back to
every element it summed. Writing each backward with the other gives double
backprop for free.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import array as array_utils
from minichain.utils import type_check


class BroadcastTo(FunctionNode):
    """Copy ``x`` along new or length-1 axes to ``shape`` (a view, no copy)."""

    def __init__(self, shape):
        self._shape = tuple(shape)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x, = in_types
        type_check.expect(x.ndim <= len(self._shape))
        type_check.expect_broadcast_shapes(x.shape, self._shape)

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        return xp.broadcast_to(x, self._shape),

    def backward(self, indexes, grad_outputs):
        return sum_to(grad_outputs[0], self.inputs[0].shape),


class SumTo(FunctionNode):
    """Sum ``x`` over broadcast axes down to ``shape``."""

    def __init__(self, shape):
        self._shape = tuple(shape)

    @property
    def label(self):
        return "SumTo"

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() == 1)  # one array, not None

    def forward(self, inputs):
        x, = inputs
        return array_utils.sum_to(x, self._shape),

    def backward(self, indexes, grad_outputs):
        return broadcast_to(grad_outputs[0], self.inputs[0].shape),


def broadcast_to(x, shape):
    """Broadcast ``x`` to ``shape``; returns ``x`` itself if already that shape."""
    shape = array_utils.as_shape("broadcast_to", shape)
    if any(n < 0 for n in shape):
        raise ValueError("broadcast_to: sizes in shape must not be negative, "
                         "got {}".format(shape))
    if getattr(x, "shape", None) == shape:
        from minichain.variable import as_variable
        return as_variable(x)
    return BroadcastTo(shape).apply((x,))[0]


def sum_to(x, shape):
    """Sum ``x`` to ``shape`` (the adjoint of ``broadcast_to``)."""
    shape = array_utils.as_shape("sum_to", shape)
    x_shape = getattr(x, "shape", None)
    if x_shape == shape:
        from minichain.variable import as_variable
        return as_variable(x)
    if x_shape is not None and not _sums_to(x_shape, shape):
        from minichain.utils.type_check import InvalidType
        raise InvalidType(
            "shape {} broadcasts to x.shape".format(shape),
            "x.shape = {}".format(x_shape)).with_header("SumTo")
    return SumTo(shape).apply((x,))[0]


def _sums_to(x_shape, shape):
    """Can ``x_shape`` be summed down to ``shape`` (i.e. ``shape``
    broadcasts to ``x_shape``)?"""
    lead = len(x_shape) - len(shape)
    return lead >= 0 and all(n == 1 or n == x_shape[lead + i]
                             for i, n in enumerate(shape))
