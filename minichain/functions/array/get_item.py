"""``get_item``: ``x[slices]`` as a differentiable function.

Forward picks elements; backward must send each output gradient back to the
element it was picked from, and zeros everywhere else. With plain slices
every element is picked at most once, so the gradient is *assigned*
(``gx[slices] = gy``). With integer arrays an element may be picked twice
(``x[[0, 0]]``), so the gradients must be *added* with ``xp.add.at``, which,
unlike ``gx[idx] += gy``, accumulates repeated indices.

The scatter is its own FunctionNode (``GetItemGrad``) whose backward is
``get_item`` again: picking and scattering are each other's adjoint, which
is what makes double backprop work.
"""

import numpy

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.variable import Variable


def _normalize_slices(slices, xp):
    """A tuple of index items; Variables and lists become arrays."""
    if not isinstance(slices, tuple):
        slices = (slices,)
    items = []
    for item in slices:
        if isinstance(item, Variable):
            item = item.array
        if isinstance(item, list) or (
                isinstance(item, numpy.ndarray) and xp is not numpy):
            item = xp.asarray(item)  # index arrays live where x lives
        items.append(item)
    return tuple(items)


def _is_basic(slices):
    """True when the index uses only ints, slices, None and ``...``."""
    return all(item is None or item is Ellipsis or isinstance(item, slice)
               or (isinstance(item, (int, numpy.integer))
                   and not isinstance(item, bool))
               for item in slices)


def _scatter_add(xp, target, slices, values):
    """``target[slices] += values`` with repeated indices accumulated."""
    if hasattr(xp.add, "at"):
        xp.add.at(target, slices, values)
    else:  # older CuPy names it scatter_add
        import cupyx
        cupyx.scatter_add(target, slices, values)


class GetItem(FunctionNode):
    """``y = x[slices]`` (basic slicing, integer or boolean arrays)."""

    def __init__(self, slices):
        self.slices = slices

    @property
    def label(self):
        return "GetItem"

    def check_type_forward(self, in_types):
        type_check.expect(in_types.size() == 1)  # one array, not None

    def forward(self, inputs):
        x, = inputs
        try:
            y = x[self.slices]
        except IndexError as error:  # add the label and the shape to NumPy's
            raise IndexError("{}: cannot index an array of shape {} with {!r}: "
                             "{}".format(self.label, x.shape, self.slices,
                                         error)) from None
        if not isinstance(y, backend.array_types):  # an int index gave a scalar
            y = backend.get_array_module(x).asarray(y)
        return y,

    def backward(self, indexes, grad_outputs):
        node = self.inputs[0]
        return GetItemGrad(self.slices, node.shape).apply(grad_outputs)


class GetItemGrad(FunctionNode):
    """Scatter ``gy`` into zeros of the input's shape: backward of GetItem."""

    def __init__(self, slices, in_shape):
        self.slices = slices
        self.in_shape = in_shape

    @property
    def label(self):
        return "GetItemGrad"

    def forward(self, inputs):
        gy, = inputs
        xp = backend.get_array_module(gy)
        gx = xp.zeros(self.in_shape, dtype=gy.dtype)
        if _is_basic(self.slices):
            gx[self.slices] = gy
        else:
            _scatter_add(xp, gx, self.slices, gy)
        return gx,

    def backward(self, indexes, grad_outputs):
        return get_item(grad_outputs[0], self.slices),


def get_item(x, slices):
    """``x[slices]`` with a gradient.

    Args:
        x: Variable or array.
        slices: anything NumPy accepts as an index: ints, slices, None,
            ``...``, integer arrays (repeats allowed) or a boolean mask,
            or a tuple of these. Variables in it are used as arrays.

    Returns a Variable of the indexed shape, e.g. ``(2, 3)[:, [0, 0]]``
    has shape ``(2, 2)``; its gradient adds up at repeated indices.
    """
    xp = backend.get_array_module(x)
    return GetItem(_normalize_slices(slices, xp)).apply((x,))[0]


Variable.__getitem__ = get_item
