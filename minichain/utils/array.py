"""Small array helpers shared by the functions."""

import numpy


def force_array(y, dtype=None):
    """Return ``y`` as an ndarray, never a NumPy scalar.

    NumPy turns the result of most operations on 0-d arrays into scalars
    (``numpy.float32``); a function's outputs must stay arrays, so every
    forward passes its results through here.
    """
    if type(y) is not numpy.ndarray and (
            isinstance(y, numpy.generic) or not hasattr(y, "shape")):
        y = numpy.asarray(y)
    if dtype is not None and y.dtype != dtype:
        y = y.astype(dtype, copy=False)
    return y


def sum_to(x, shape):
    """Sum ``x`` over the broadcast axes so that it gets ``shape``.

    The adjoint of broadcasting: a value broadcast along an axis receives the
    sum of the gradients along that axis.
    """
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)
    y = x.sum(axis=axes, keepdims=True) if axes else x
    if lead:
        y = y.reshape(shape)
    return force_array(y)


def as_shape(label, shape):
    """``shape`` (an int or a sequence of ints) as a tuple of ints.

    Functions taking a target shape call this first, so ``reshape(x, None)``
    fails with a message naming the function instead of a bare NumPy error.
    """
    try:
        if hasattr(shape, "__index__"):
            return (shape.__index__(),)
        if isinstance(shape, (str, bytes)):
            raise TypeError
        return tuple(s.__index__() for s in shape)
    except (TypeError, AttributeError):
        raise TypeError("{}: shape must be an int or a tuple of ints, got {!r}"
                        .format(label, shape)) from None
