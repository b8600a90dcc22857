"""``sum`` and ``mean`` over axes, and ``Variable.mean``.

A sum hands its gradient back to every element it added up, unchanged: the
backward is a broadcast. When the summed axes were dropped
(``keepdims=False``) the gradient first gets them back as length-1 axes,
so that broadcasting lines each value up with the slice it came from.
"""

from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.utils.array import force_array
from minichain.variable import Variable
from minichain.utils import arguments


def normalize_axis(axis, ndim, label="axis"):
    """``axis`` (None, an int or a tuple, negatives allowed) as a sorted
    tuple of non-negative ints; None means every axis. ``label`` names the
    function in the error a bad axis raises."""
    if axis is None:
        return tuple(range(ndim))
    try:
        axes = (axis,) if hasattr(axis, "__index__") else tuple(axis)
        axes = [a.__index__() for a in axes]
    except (TypeError, AttributeError):
        raise TypeError("{}: axis must be None, an int or a tuple of ints, "
                        "got {!r}".format(label, axis)) from None
    result = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError("{}: axis {} is out of bounds for an array of "
                             "dimension {}".format(label, a, ndim))
        result.append(a % ndim)
    if len(set(result)) != len(result):
        raise ValueError("{}: duplicate value in axis: {}".format(label, axis))
    return tuple(sorted(result))


def expand_reduced(gy, x_shape, axes, keepdims):
    """Broadcast ``gy`` (the gradient of a reduction over ``axes``) back to
    ``x_shape``. Written with minichain functions, so it is differentiable."""
    from minichain.functions.array.broadcast import broadcast_to
    from minichain.functions.array.reshape import reshape
    if not keepdims and axes:
        kept = tuple(1 if i in axes else n for i, n in enumerate(x_shape))
        gy = reshape(gy, kept)
    return broadcast_to(gy, x_shape)



class Sum(FunctionNode):
    """``y = x.sum(axis, keepdims)``; backward broadcasts ``gy`` back.

    It keeps no array: backward needs only the input's shape.
    """

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    @property
    def label(self):
        return "Sum"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        self._axes = normalize_axis(self.axis, x.ndim, self.label)
        return force_array(x.sum(axis=self._axes, keepdims=self.keepdims)),

    def backward(self, indexes, grad_outputs):
        return expand_reduced(grad_outputs[0], self.inputs[0].shape,
                              self._axes, self.keepdims),


class Mean(FunctionNode):
    """``y = x.mean(axis, keepdims)``: a sum divided by the count ``n``;
    backward broadcasts ``gy / n``."""

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    @property
    def label(self):
        return "Mean"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        self._axes = normalize_axis(self.axis, x.ndim, self.label)
        self._count = 1
        for a in self._axes:
            self._count *= x.shape[a]
        return force_array(x.mean(axis=self._axes, keepdims=self.keepdims)),

    def backward(self, indexes, grad_outputs):
        gx = expand_reduced(grad_outputs[0], self.inputs[0].shape, self._axes,
                            self.keepdims)
        return gx * (1.0 / self._count),


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Chainer's name
    """Sum of the elements of ``x`` over ``axis``.

    Args:
        x: Variable or array of floats, shape ``(d0, d1, ...)``.
        axis: None (all axes), an int or a tuple of ints; negatives count
            from the end.
        keepdims: keep the summed axes as length-1 axes.

    Returns:
        A Variable: shape ``()`` for ``axis=None``, otherwise the shape of
        ``x`` without (or, with ``keepdims``, with length 1 at) the summed
        axes.

    >>> sum(Variable(numpy.array([[1.0, 2.0], [3.0, 4.0]])), axis=0).array
    array([4., 6.])
    """
    arguments.check_bool("sum", "keepdims", keepdims)
    return Sum(axis, keepdims).apply((x,))[0]


def mean(x, axis=None, keepdims=False):
    """Mean of the elements of ``x`` over ``axis``; shapes as in ``sum``.

    >>> mean(Variable(numpy.array([[1.0, 2.0], [3.0, 4.0]])), axis=1).array
    array([1.5, 3.5])
    """
    arguments.check_bool("mean", "keepdims", keepdims)
    return Mean(axis, keepdims).apply((x,))[0]


def _variable_mean(self, axis=None, *, keepdims=False):
    """``v.mean(axis=None, keepdims=False)``, as ``F.mean(v, ...)``."""
    return mean(self, axis=axis, keepdims=keepdims)


Variable.mean = _variable_mean
