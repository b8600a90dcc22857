"""The fully connected layer: ``y = x W^T + b``.

Shapes: ``x`` is ``(N, in_size)``, ``W`` is ``(out_size, in_size)``, ``b`` is
``(out_size,)`` and ``y`` is ``(N, out_size)``. ``W`` is stored as
``(out, in)`` (as in Chainer) so each row is the weight vector of one output
unit.

The input size may be left out: ``Linear(3)`` (or ``Linear(None, 3)``)
creates ``W`` on the first call, when the input shows its size. That is how
a model can be written without counting the features that reach each layer.
"""

import math

import numpy

from minichain import backend
from minichain import functions as F
from minichain import random as mc_random
from minichain.link import Link
from minichain.variable import Parameter


def lecun_normal(shape, dtype, xp):
    """Weights drawn from N(0, 1/fan_in), ``fan_in = shape[1]``.

    With this scale each output unit starts with roughly unit variance when
    its inputs have unit variance, so signals neither explode nor vanish
    through a stack of layers (LeCun et al., "Efficient BackProp").
    Drawn on the host from ``minichain.random.get_generator()`` (so
    ``minichain.random.seed(s)`` makes models reproducible), then moved to
    ``xp``.
    """
    fan_in = shape[1] if len(shape) > 1 else shape[0]
    std = math.sqrt(1.0 / fan_in)
    array = mc_random.get_generator().standard_normal(shape, dtype=numpy.float32)
    array = (array * numpy.float32(std)).astype(dtype, copy=False)
    return array if xp is numpy else xp.asarray(array)


class Linear(Link):
    """A fully connected layer with weight ``W`` and bias ``b``.

    Args:
        in_size: number of input features, or None to learn it from the
            first input. ``Linear(out_size)`` is short for
            ``Linear(None, out_size)``.
        out_size: number of output features.
        nobias: if True there is no ``b`` (``self.b`` is None).
        initialW: initial weight: None (LeCun normal), a number (constant),
            an array of shape ``(out_size, in_size)``, or a callable
            ``f(shape, dtype, xp) -> array``.
        initial_bias: initial bias, same kinds (None means zeros).
    """

    def __init__(self, in_size, out_size=None, nobias=False, initialW=None,
                 initial_bias=None):
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        for name, size in (("in_size", in_size), ("out_size", out_size)):
            if size is not None and not (hasattr(size, "__index__")
                                         and not isinstance(size, bool)
                                         and size >= 1):
                raise ValueError("Linear: {} must be a positive int{}, got "
                                 "{!r}".format(name, " or None" if name ==
                                               "in_size" else "", size))
        self.out_size = out_size
        with self.init_scope():
            self.W = Parameter(lecun_normal if initialW is None else initialW)
            if self.W.array is None and in_size is not None:
                self.W.initialize((out_size, in_size))
            if nobias:
                self.b = None
            else:
                bias = 0 if initial_bias is None else initial_bias
                self.b = Parameter(bias, (out_size,))

    @property
    def in_size(self):
        """The input size, or None before the first call of a lazy layer."""
        return None if self.W.array is None else self.W.shape[1]

    def forward(self, x):
        """``x`` (N, in_size) -> (N, out_size); more axes are flattened."""
        if self.W.array is None:
            self._initialize_W(x)
        return F.linear(x, self.W, self.b)

    def _initialize_W(self, x):
        # The input size is everything but the batch axis: (N, 3, 4) -> 12.
        array = getattr(x, "array", x)
        # Check before allocating: a bad first input must not leave W sized
        # (or typed) after it.
        if not isinstance(array, backend.array_types):
            raise TypeError("Linear: the input must be a Variable or a "
                            "NumPy/CuPy array, got {}".format(type(x)))
        if array.dtype.kind != "f" or array.ndim < 2:
            from minichain.utils.type_check import InvalidType
            raise InvalidType(
                "x.dtype.kind == f and x.ndim >= 2 (a batch of float rows)",
                "x.dtype = {}, x.shape = {}".format(array.dtype, array.shape),
            ).with_header("Linear")
        in_size = array.size // len(array)
        self.W.initialize((self.out_size, in_size), dtype=array.dtype,
                          xp=backend.get_array_module(array))
        if self.b is not None and self.b.dtype != array.dtype:
            self.b.array = self.b.array.astype(array.dtype)  # W and b agree

    def __repr__(self):
        return "Linear(in_size={}, out_size={}, nobias={})".format(
            self.in_size, self.out_size, self.b is None)

