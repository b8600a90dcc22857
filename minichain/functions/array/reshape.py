"""``reshape``: the same numbers, read with a new shape.

Reshaping moves no data, so its backward only has to put the gradient back
into the input's shape: the backward of a reshape is another reshape.
"""

from minichain.function_node import FunctionNode
from minichain.utils.array import as_shape
from minichain.variable import Variable, as_variable
from minichain.utils import type_check


def _normalize_shape(shape):
    """Accept ``reshape(x, (2, 3))`` and ``reshape(x, [2, 3])`` alike."""
    return as_shape("reshape", shape)


class Reshape(FunctionNode):
    """``y = x.reshape(shape)``; one ``-1`` in ``shape`` is inferred."""

    def __init__(self, shape):
        self.shape = shape

    @property
    def label(self):
        return "Reshape"

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x, = in_types
        known = [s for s in self.shape if s != -1]
        if -1 in self.shape:
            type_check.expect(x.size % type_check.prod(known) == 0)
        else:
            type_check.expect(x.size == type_check.prod(known))

    def forward(self, inputs):
        return inputs[0].reshape(self.shape),

    def backward(self, indexes, grad_outputs):
        return reshape(grad_outputs[0], self.inputs[0].shape),


def reshape(x, shape):
    """Return ``x`` with a new ``shape`` (same size; ``-1`` is inferred).

    Args:
        x: Variable or array.
        shape: tuple of ints, e.g. ``(2, -1)``.

    Returns ``x`` itself (as a Variable) when the shape does not change.

    >>> reshape(Variable(numpy.arange(6.0)), (2, 3)).shape
    (2, 3)
    """
    shape = _normalize_shape(shape)
    if shape.count(-1) > 1:
        raise ValueError("reshape: at most one -1 is allowed in the shape, "
                         "got {}".format(shape))
    if getattr(x, "shape", None) == shape:
        return as_variable(x)
    return Reshape(shape).apply((x,))[0]


def _variable_reshape(self, *shape):
    """``v.reshape(2, 3)`` or ``v.reshape((2, 3))``, as in NumPy."""
    if len(shape) == 1 and not hasattr(shape[0], "__index__"):
        shape = shape[0]
    return reshape(self, shape)


Variable.reshape = _variable_reshape
