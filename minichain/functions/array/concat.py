"""``concat``: join arrays along an axis.

Each input contributed one block of the output, so its gradient is that
block of the output gradient: the backward of ``concat`` is ``split_axis``
(and the backward of ``split_axis`` is ``concat``).
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import arguments
from minichain.utils import type_check


class Concat(FunctionNode):
    """``y = concatenate(xs, axis)``; inputs agree on every other axis."""

    def __init__(self, axis):
        self.axis = axis

    @property
    def label(self):
        return "Concat"

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() > 0)
        first = in_types[0]
        type_check.expect(-first.ndim <= self.axis, self.axis < first.ndim)
        axis = self.axis % type_check.eval(first.ndim)
        for x in in_types[1:]:
            type_check.expect(x.dtype == first.dtype, x.ndim == first.ndim)
            for d in range(type_check.eval(first.ndim)):
                if d != axis:
                    type_check.expect(x.shape[d] == first.shape[d])

    def forward(self, inputs):
        xp = backend.get_array_module(*inputs)
        return xp.concatenate(inputs, axis=self.axis),

    def backward(self, indexes, grad_outputs):
        from minichain.functions.array.split_axis import split_axis
        gy, = grad_outputs
        if len(self.inputs) == 1:
            return gy,
        sizes = [node.shape[self.axis] for node in self.inputs]
        boundaries, total = [], 0
        for size in sizes[:-1]:
            total += size
            boundaries.append(total)
        return split_axis(gy, boundaries, self.axis)


def concat(xs, axis=1):
    """Concatenate Variables/arrays along ``axis``.

    Args:
        xs: a list or tuple of Variables/arrays, equal in shape except along
            ``axis``.
        axis: the axis to join along (negative counts from the end).

    Returns a Variable; e.g. shapes ``(2, 3)`` and ``(2, 1)`` give ``(2, 4)``.
    """
    arguments.check_int("concat", "axis", axis)
    return Concat(axis).apply(tuple(xs))[0]
