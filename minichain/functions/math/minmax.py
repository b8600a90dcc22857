"""``max`` and ``min`` over axes.

The largest element is the only one that moves the result, so the gradient
flows only to it; every other element gets 0.

Ties: when several elements share the maximum, the gradient is split
equally between them (each gets ``gy / k`` for ``k`` tied elements). Any
such split is a valid subgradient, and the equal one keeps the total the
same as without a tie. (Chainer instead gives each tied element the full
``gy``.) The gradient check stays away from ties: they are not
differentiable points.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.functions.math.sum import expand_reduced, normalize_axis
from minichain.utils import type_check
from minichain.utils.array import force_array
from minichain.utils import arguments


class _Extremum(FunctionNode):
    """Shared by Max and Min: reduce with ``_reduce``, route the gradient to
    the elements equal to the result."""

    _reduce = None  # "max" or "min"

    def __init__(self, axis=None, keepdims=False):
        self.axis = axis
        self.keepdims = keepdims

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        # Backward compares x with y to find the winners: keep both.
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        x, = inputs
        self._axes = normalize_axis(self.axis, x.ndim, self.label)
        for a in self._axes:
            if x.shape[a] == 0:  # NumPy's own message would not name us
                raise ValueError(
                    "{}: cannot take the {} over axis {} of length 0 (x.shape "
                    "= {}): an empty slice has no {}".format(
                        self.label, self._reduce, a, x.shape, self._reduce))
        reduce = getattr(x, self._reduce)
        return force_array(reduce(axis=self._axes, keepdims=self.keepdims)),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        # A constant weight array: 1/k at the k winners of each slice, else
        # 0. Only gy carries the graph, so this backward is differentiable.
        xp = backend.get_array_module(x.array)
        y_kept = y.array
        if not self.keepdims:
            y_kept = xp.expand_dims(y_kept, self._axes)
        winners = (x.array == y_kept).astype(x.dtype)
        weight = winners / winners.sum(axis=self._axes, keepdims=True)
        gx = expand_reduced(grad_outputs[0], x.shape, self._axes,
                            self.keepdims)
        return gx * weight,


class Max(_Extremum):
    """``y = x.max(axis, keepdims)``; the gradient goes to the maxima."""

    _reduce = "max"

    @property
    def label(self):
        return "Max"


class Min(_Extremum):
    """``y = x.min(axis, keepdims)``; the gradient goes to the minima."""

    _reduce = "min"

    @property
    def label(self):
        return "Min"


def max(x, axis=None, keepdims=False):  # noqa: A001 - Chainer's name
    """Largest element of ``x`` over ``axis``.

    Args:
        x: Variable or array of floats, shape ``(d0, d1, ...)``.
        axis: None (all axes), an int or a tuple of ints.
        keepdims: keep the reduced axes as length-1 axes.

    Returns:
        A Variable shaped as for ``sum``. Backward sends ``gy`` to the
        position of the maximum (split equally between ties).

    >>> max(Variable(numpy.array([[1.0, 5.0], [7.0, 2.0]])), axis=1).array
    array([5., 7.])
    """
    arguments.check_bool("max", "keepdims", keepdims)
    return Max(axis, keepdims).apply((x,))[0]


def min(x, axis=None, keepdims=False):  # noqa: A001 - Chainer's name
    """Smallest element of ``x`` over ``axis``; see ``max``.

    >>> min(Variable(numpy.array([[1.0, 5.0], [7.0, 2.0]])), axis=1).array
    array([1., 2.])
    """
    arguments.check_bool("min", "keepdims", keepdims)
    return Min(axis, keepdims).apply((x,))[0]
