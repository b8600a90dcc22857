import numpy
import pytest

import minichain as mc
import minichain.functions as F


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_mask_is_scaled_and_dtype_kept(dtype):
    mc.random.seed(0)
    x = mc.Variable(numpy.ones((50, 40), dtype=dtype))
    y = F.dropout(x, 0.25)
    assert y.dtype == dtype
    values = set(numpy.unique(y.array).tolist())
    assert values <= {0.0, numpy.float64(dtype(1 / 0.75))}
    kept = (y.array != 0).mean()
    assert 0.7 < kept < 0.8
    assert y.creator.label == "Dropout"


def test_backward_uses_the_same_mask():
    mc.random.seed(1)
    x = mc.Variable(numpy.arange(1.0, 21.0))
    y = F.dropout(x, 0.5)
    y.grad = numpy.ones(20)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, y.array / x.array)


def test_same_seed_same_mask_whatever_the_dtype():
    masks = []
    for dtype in (numpy.float32, numpy.float64, numpy.float32):
        mc.random.seed(7)
        masks.append(F.dropout(numpy.ones(100, dtype), 0.5).array != 0)
    numpy.testing.assert_array_equal(masks[0], masks[1])
    numpy.testing.assert_array_equal(masks[0], masks[2])


def test_draws_from_minichain_generator_not_numpy_global():
    numpy.random.seed(0)
    before = numpy.random.get_state()[1].copy()
    F.dropout(numpy.ones(10), 0.5)
    numpy.testing.assert_array_equal(numpy.random.get_state()[1], before)


def test_identity_outside_training():
    x = mc.Variable(numpy.ones(5, numpy.float32))
    with mc.using_config("train", False):
        y = F.dropout(x, 0.9)
    assert y is x
    with mc.using_config("train", False):
        z = F.dropout(numpy.ones(3), 0.5)
    assert isinstance(z, mc.Variable) and z.creator is None
    numpy.testing.assert_array_equal(z.array, numpy.ones(3))


def test_zero_ratio_keeps_everything():
    y = F.dropout(numpy.arange(4.0), 0.0)
    numpy.testing.assert_array_equal(y.array, numpy.arange(4.0))


@pytest.mark.parametrize("ratio", [-0.1, 1.0, 1.5])
def test_invalid_ratio(ratio):
    with pytest.raises(ValueError, match="ratio"):
        F.dropout(numpy.ones(3), ratio)


def test_second_order():
    mc.random.seed(3)
    x = mc.Variable(numpy.arange(1.0, 9.0))
    gy = mc.Variable(numpy.ones(8))
    y = F.dropout(x, 0.5)
    mask = y.array / x.array
    gx, = mc.grad([y], [x], grad_outputs=[gy], enable_double_backprop=True)
    ggy, = mc.grad([gx], [gy], grad_outputs=[numpy.full(8, 2.0)])
    numpy.testing.assert_array_equal(ggy.array, 2.0 * mask)


def test_node_keeps_a_one_byte_mask_and_not_the_input():
    import gc
    x = mc.Variable(numpy.ones((8, 16), numpy.float32))
    y = F.dropout(x, 0.5)
    node = y.creator_node
    del x
    gc.collect()
    assert node.mask.dtype == numpy.bool_ and node.mask.nbytes == 8 * 16
    assert node.inputs[0].data is None
