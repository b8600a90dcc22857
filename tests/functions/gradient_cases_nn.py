"""Gradient-check cases for linear, dropout and the losses.

Dropout draws a random mask, so its ``fn`` reseeds minichain's generator
before every call: each of the many numerical evaluations then sees the
same mask, and the function being checked is a fixed one.
"""

import numpy

import minichain as mc
import minichain.functions as F
from gradient_case import Case, uniform


def linear_inputs(with_bias=True, batch_shape=None):
    """``shape = (N, in, out)``: ``x (N, in)``, ``W (out, in)``, ``b (out,)``.

    With ``batch_shape``, ``x`` is ``batch_shape + (in,)`` instead.
    """
    def make_inputs(shape, dtype, rng):
        n, n_in, n_out = shape
        x_shape = (n, n_in) if batch_shape is None else batch_shape + (n_in,)
        arrays = [rng.uniform(-1, 1, x_shape), rng.uniform(-1, 1, (n_out, n_in))]
        if with_bias:
            arrays.append(rng.uniform(-1, 1, (n_out,)))
        return tuple(a.astype(dtype) for a in arrays)
    return make_inputs


def flat_linear_inputs(shape, dtype, rng):
    """``x (N, 2, 3)`` flattened to ``(N, 6)`` against ``W (out, 6)``."""
    n, n_out = shape
    return (rng.uniform(-1, 1, (n, 2, 3)).astype(dtype),
            rng.uniform(-1, 1, (n_out, 6)).astype(dtype))


def dropout_fn(x):
    mc.random.seed(0)  # the same mask in every evaluation
    return F.dropout(x, 0.4)


def scores_and_labels(ignore=False, spatial=()):
    """``shape = (N, C)``: float scores and int32 labels (one -1 if ignore)."""
    def make_inputs(shape, dtype, rng):
        n, n_classes = shape
        x = rng.uniform(-2, 2, (n, n_classes) + spatial).astype(dtype)
        t = rng.integers(0, n_classes, (n,) + spatial).astype(numpy.int32)
        if ignore:
            t.reshape(-1)[0] = -1
        return x, t
    return make_inputs


CASES = [
    Case("linear", F.linear, linear_inputs(),
         shapes=((2, 3, 4), (1, 1, 1), (5, 2, 3))),
    Case("linear_nobias", F.linear, linear_inputs(with_bias=False),
         shapes=((2, 3, 4), (3, 1, 2)), covers=("linear",)),
    Case("linear_flatten", F.linear, flat_linear_inputs,
         shapes=((2, 4), (1, 3)), covers=("linear",)),
    Case("linear_batch_axes", lambda x, W, b: F.linear(x, W, b, n_batch_axes=2),
         linear_inputs(batch_shape=(2, 3)), shapes=((6, 4, 2),),
         covers=("linear",)),
    Case("dropout", dropout_fn, uniform(), shapes=((3,), (4, 5), ()),
         random=True),
    Case("mean_squared_error", F.mean_squared_error, uniform(n=2),
         shapes=((3,), (2, 3), ())),
    Case("softmax_cross_entropy", F.softmax_cross_entropy, scores_and_labels(),
         shapes=((3, 4), (1, 2), (5, 3))),
    Case("softmax_cross_entropy_ignore", F.softmax_cross_entropy,
         scores_and_labels(ignore=True), shapes=((4, 3),),
         covers=("softmax_cross_entropy",)),
    Case("softmax_cross_entropy_no_reduce",
         lambda x, t: F.softmax_cross_entropy(x, t, reduce="no"),
         scores_and_labels(ignore=True), shapes=((3, 4),),
         covers=("softmax_cross_entropy",)),
    Case("softmax_cross_entropy_unnormalized",
         lambda x, t: F.softmax_cross_entropy(x, t, normalize=False),
         scores_and_labels(ignore=True), shapes=((3, 4),),
         covers=("softmax_cross_entropy",)),
    Case("softmax_cross_entropy_spatial", F.softmax_cross_entropy,
         scores_and_labels(ignore=True, spatial=(2,)), shapes=((2, 3),),
         covers=("softmax_cross_entropy",)),
]
