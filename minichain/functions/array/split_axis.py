"""``split_axis``: cut an array into pieces along an axis.

The backward of a split is a ``concat`` of the pieces' gradients. A piece
nobody used has no gradient (None); it contributes zeros of its shape.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import arguments
from minichain.utils import type_check


class SplitAxis(FunctionNode):
    """``ys = split(x, indices_or_sections, axis)``; one output per piece."""

    def __init__(self, indices_or_sections, axis):
        self.indices_or_sections = indices_or_sections
        self.axis = axis

    @property
    def label(self):
        return "SplitAxis"

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x, = in_types
        type_check.expect(-x.ndim <= self.axis, self.axis < x.ndim)
        if isinstance(self.indices_or_sections, int):
            sections = self.indices_or_sections
            type_check.expect(x.shape[self.axis] % sections == 0)

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        ys = xp.split(x, self.indices_or_sections, self.axis)
        self._shapes = [y.shape for y in ys]  # for the zeros of unused pieces
        return tuple(ys)

    def backward(self, indexes, grad_outputs):
        from minichain.functions.array.concat import concat
        dtype = self.inputs[0].dtype
        xp = None
        for gy in grad_outputs:
            if gy is not None:
                xp = backend.get_array_module(gy.array)
                break
        if xp is None:
            return None,
        pieces = [xp.zeros(shape, dtype=dtype) if gy is None else gy
                  for gy, shape in zip(grad_outputs, self._shapes)]
        if len(pieces) == 1:
            return pieces[0],
        return concat(pieces, axis=self.axis),


def split_axis(x, indices_or_sections, axis):
    """Split ``x`` along ``axis``; always returns a tuple of Variables.

    Args:
        x: Variable or array.
        indices_or_sections: an int ``n`` (``n`` equal pieces; the axis
            length must divide) or a sorted sequence of cut points, e.g.
            ``[2, 3]`` cuts a length-5 axis into lengths 2, 1 and 2.
        axis: the axis to cut (negative counts from the end).
    """
    arguments.check_int("split_axis", "axis", axis)
    if isinstance(indices_or_sections, int):
        if indices_or_sections < 1:
            raise ValueError("split_axis: the number of sections must be at "
                             "least 1, got {}".format(indices_or_sections))
    else:
        try:
            indices_or_sections = [i.__index__() for i in indices_or_sections]
        except (TypeError, AttributeError):
            raise TypeError("split_axis: indices_or_sections must be an int "
                            "or a sequence of ints, got {!r}".format(
                                indices_or_sections)) from None
    return SplitAxis(indices_or_sections, axis).apply((x,))
