"""``transpose``: permute the axes of an array.

The backward of a permutation is the inverse permutation, applied to the
gradient; ``transpose(x)`` with no axes reverses them (``x.T``).
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.variable import Variable


class Transpose(FunctionNode):
    """``y = x.transpose(axes)`` (a view: no data is copied)."""

    def __init__(self, axes=None):
        self.axes = axes

    @property
    def label(self):
        return "Transpose"

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() == 1)  # one array, not None

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        return xp.transpose(x, self.axes),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        if self.axes is None:  # reversing the axes is its own inverse
            return transpose(gy),
        inverse = [0] * len(self.axes)
        for position, axis in enumerate(self.axes):
            inverse[axis % len(self.axes)] = position
        return transpose(gy, tuple(inverse)),


def transpose(x, axes=None):
    """Permute the axes of ``x``.

    Args:
        x: Variable or array of shape ``(s0, s1, ..., sn)``.
        axes: a permutation of ``range(x.ndim)``; None reverses the axes.

    Returns a Variable whose axis ``i`` is axis ``axes[i]`` of ``x``; for a
    matrix, ``transpose(x)`` has shape ``(s1, s0)``.
    """
    if axes is not None:
        axes = _check_axes(axes, getattr(x, "ndim", None))
    return Transpose(axes).apply((x,))[0]


def _check_axes(axes, ndim):
    """``axes`` as a tuple of ints, checked to permute ``range(ndim)``."""
    try:
        axes = tuple(a.__index__() for a in axes)
    except (TypeError, AttributeError):
        raise TypeError("transpose: axes must be None or a tuple of ints, got "
                        "{!r}".format(axes)) from None
    if ndim is not None:
        in_range = [a % ndim for a in axes if -ndim <= a < ndim]
        if len(axes) != ndim or sorted(in_range) != list(range(ndim)):
            from minichain.utils.type_check import InvalidType
            raise InvalidType(
                "axes is a permutation of range(x.ndim) = range({})".format(
                    ndim),
                "axes = {}".format(axes)).with_header("Transpose")
    return axes


def _variable_transpose(self, *axes):
    """``v.transpose()``, ``v.transpose(1, 0)`` or ``v.transpose((1, 0))``."""
    if len(axes) == 1 and (axes[0] is None or not hasattr(axes[0], "__index__")):
        axes = axes[0]
    return transpose(self, axes if axes else None)


Variable.transpose = _variable_transpose
Variable.T = property(lambda self: transpose(self),
                      doc="The Variable with its axes reversed (``transpose``).")
