"""``dropout``: zero random elements during training, scale the rest.

Each element is kept with probability ``1 - ratio`` and then multiplied by
``1 / (1 - ratio)``, so the expected output equals the input and nothing
needs rescaling at test time. Outside training (``config.train`` False)
dropout is the identity and builds no node at all.

The mask is drawn from ``minichain.random.get_generator``, so ``F.forget``
can replay the draw and recompute the same mask in backward. The backward
multiplies the gradient by the same mask: it is a ``Dropout`` node again,
given that mask as a constant, which makes double backprop work.
"""

import numpy

from minichain import backend
from minichain import random as mc_random
from minichain.configuration import config
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.variable import as_variable
from minichain.utils import type_check


class Dropout(FunctionNode):
    """``y = x * mask / (1 - ratio)``; ``mask`` is drawn unless given."""

    def __init__(self, ratio, mask=None):
        self.ratio = ratio
        self.mask = mask

    @property
    def label(self):
        return "Dropout"

    check_type_forward = type_check.float_input  # one float array

    def forward(self, inputs):
        x, = inputs
        if self.mask is None:
            self.mask = _draw_mask(x, self.ratio)
        y = force_array(x * self.mask)    # a bool mask keeps x's dtype
        y *= x.dtype.type(1.0 / (1.0 - self.ratio))
        return y,

    def backward(self, indexes, grad_outputs):
        return Dropout(self.ratio, self.mask).apply(grad_outputs)


def _draw_mask(x, ratio):
    """A boolean array of ``x``'s shape: True keeps the element.

    The node keeps this mask until backward, so it is stored as bools: one
    byte per element instead of four (float32) or eight (float64).
    Uniforms are always drawn in float32, so the same seed gives the same
    mask whatever ``x``'s dtype.
    """
    xp = backend.get_array_module(x)
    uniform = mc_random.get_generator(xp).random(x.shape, dtype=numpy.float32)
    return xp.asarray(uniform >= ratio)


def dropout(x, ratio=0.5):
    """Randomly zero a fraction ``ratio`` of ``x`` (training mode only).

    Args:
        x: float Variable or array, any shape.
        ratio: probability of dropping each element, in ``[0, 1)``.

    Returns a Variable of ``x``'s shape and dtype. When ``config.train``
    is False it returns ``x`` itself (as a Variable), unchanged.
    """
    if isinstance(ratio, (str, bytes)) or not hasattr(ratio, "__float__"):
        raise TypeError("dropout: ratio must be a number in [0, 1), got {!r}"
                        .format(ratio))
    if not 0.0 <= ratio < 1.0:
        raise ValueError("dropout: ratio must be in [0, 1), got {}".format(
            ratio))
    if not config.train:
        return as_variable(x)
    return Dropout(float(ratio)).apply((x,))[0]
