"""Gradient-check cases for the array family: reshape, transpose, get_item,
concat, split_axis and where (and the Variable methods that apply them).

Every index, cut point and condition is fixed by the input's shape, never by
its values, so the finite-difference perturbations cannot change which
elements are picked.
"""

import numpy

import minichain.functions as F
from gradient_case import Case, uniform


def pattern_mask(shape, period=2):
    """A boolean array of ``shape``, True at every ``period``-th element."""
    size = int(numpy.prod(shape, dtype=int))
    return (numpy.arange(size) % period == 0).reshape(shape)


def along_axis1(*extra_sizes):
    """Arrays that agree with ``shape`` except on axis 1, for ``concat``."""
    def make_inputs(shape, dtype, rng):
        arrays = [rng.uniform(-1, 1, shape).astype(dtype)]
        for size in extra_sizes:
            other = list(shape)
            other[1] = size
            arrays.append(rng.uniform(-1, 1, other).astype(dtype))
        return tuple(arrays)
    return make_inputs


def where_pair(shape, dtype, rng):
    """``x`` of ``shape[1:]`` (broadcast) and ``y`` of ``shape``."""
    return (rng.uniform(-1, 1, shape[1:]).astype(dtype),
            rng.uniform(-1, 1, shape).astype(dtype))


CASES = [
    Case("reshape", lambda x: F.reshape(x, (1, -1)), uniform(),
         shapes=((3,), (2, 3), (), (2, 3, 4))),
    Case("reshape_method", lambda x: x.reshape(x.size, 1), uniform(),
         shapes=((6,), (2, 3)), covers=("reshape",)),
    Case("transpose", lambda x: F.transpose(x), uniform(),
         shapes=((3,), (2, 3), (2, 3, 4))),
    Case("transpose_axes", lambda x: F.transpose(x, (1, 2, 0)), uniform(),
         shapes=((2, 3, 4), (1, 3, 2)), covers=("transpose",)),
    Case("transpose_T", lambda x: x.T, uniform(), shapes=((2, 3), (4,)),
         covers=("transpose",)),
    Case("get_item_slices", lambda x: x[1:, ::2], uniform(),
         shapes=((3, 4), (2, 3, 4)), covers=("get_item",)),
    Case("get_item_int", lambda x: F.get_item(x, 1), uniform(),
         shapes=((3,), (2, 3), (3, 2, 2)), covers=("get_item",)),
    Case("get_item_none_ellipsis", lambda x: x[None, ..., 0], uniform(),
         shapes=((3,), (2, 3)), covers=("get_item",)),
    # Repeated indices: the gradient of column 0 is the sum of two columns.
    Case("get_item_repeated", lambda x: F.get_item(x, (slice(None), [0, 0, 1])),
         uniform(), shapes=((2, 3), (4, 2, 2)), covers=("get_item",)),
    Case("get_item_mask", lambda x: x[pattern_mask(x.shape, 3)], uniform(),
         shapes=((5,), (2, 3), (2, 2, 3)), covers=("get_item",)),
    Case("concat", lambda a, b, c: F.concat((a, b, c), axis=1),
         along_axis1(1, 2), shapes=((2, 3), (3, 1, 2))),
    Case("concat_axis0", lambda a, b: F.concat([a, b], axis=0), uniform(n=2),
         shapes=((3,), (2, 3)), covers=("concat",)),
    Case("split_axis", lambda x: F.split_axis(x, [1, 3], axis=1), uniform(),
         shapes=((2, 4), (3, 5, 2))),
    Case("split_axis_sections", lambda x: F.split_axis(x, 2, 0), uniform(),
         shapes=((4,), (2, 3))),
    # Only one piece is used: the others' gradients are None (zeros).
    Case("split_axis_one_used", lambda x: F.split_axis(x, 3, -1)[1], uniform(),
         shapes=((3,), (2, 6)), covers=("split_axis",)),
    Case("where", lambda x, y: F.where(pattern_mask(y.shape), x, y),
         uniform(n=2), shapes=((3,), (2, 3), ())),
    Case("where_broadcast", lambda x, y: F.where(pattern_mask(y.shape, 3), x, y),
         where_pair, shapes=((2, 3), (3, 2, 2)), covers=("where",)),
]
