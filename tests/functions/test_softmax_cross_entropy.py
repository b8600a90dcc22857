import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


def _reference(x, t, ignore_label=-1):
    x = x.astype(numpy.float64)
    m = x.max(axis=1, keepdims=True)
    log_p = x - m - numpy.log(numpy.exp(x - m).sum(axis=1, keepdims=True))
    valid = t != ignore_label
    losses = numpy.zeros(len(t))
    losses[valid] = -log_p[numpy.arange(len(t))[valid], t[valid]]
    p = numpy.exp(log_p)
    onehot = numpy.zeros_like(p)
    onehot[numpy.arange(len(t))[valid], t[valid]] = 1
    grad = (p - onehot) * valid[:, None]
    return losses, grad, valid


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("label_dtype", [numpy.int32, numpy.int64])
def test_mean_loss_and_gradient(dtype, label_dtype):
    rng = numpy.random.RandomState(0)
    x_data = rng.randn(6, 4).astype(dtype)
    t = numpy.array([0, 3, 1, -1, 2, 2], dtype=label_dtype)
    x = mc.Variable(x_data)
    loss = F.softmax_cross_entropy(x, t)
    assert loss.shape == () and loss.dtype == dtype
    losses, grad, valid = _reference(x_data, t)
    numpy.testing.assert_allclose(loss.array, losses.sum() / valid.sum(), rtol=1e-5)
    loss.backward()
    assert x.grad.dtype == dtype          # no float64 leak from int labels
    numpy.testing.assert_allclose(x.grad, grad / valid.sum(), rtol=1e-5, atol=1e-7)


def test_no_float64_anywhere_in_a_float32_backward():
    seen = []

    class Dtypes(mc.FunctionHook):
        name = "Dtypes"

        def forward_postprocess(self, function, in_data):
            seen.extend(a.dtype for a in in_data
                        if a is not None and a.dtype.kind == "f")

    x = mc.Variable(numpy.random.randn(5, 3).astype(numpy.float32))
    t = numpy.array([0, 1, 2, 0, 1], numpy.int32)
    loss = F.softmax_cross_entropy(x, t)
    with Dtypes():
        loss.backward(enable_double_backprop=True)  # so backward's nodes show
    assert seen and set(seen) == {numpy.dtype(numpy.float32)}


def test_reduce_no_and_normalize_false():
    rng = numpy.random.RandomState(1)
    x_data = rng.randn(4, 3)
    t = numpy.array([2, -1, 0, 1], numpy.int32)
    losses, grad, valid = _reference(x_data, t)
    per_sample = F.softmax_cross_entropy(x_data, t, reduce="no")
    assert per_sample.shape == (4,)
    numpy.testing.assert_allclose(per_sample.array, losses)
    x = mc.Variable(x_data)
    loss = F.softmax_cross_entropy(x, t, normalize=False)
    numpy.testing.assert_allclose(loss.array, losses.sum() / 4)
    loss.backward()
    numpy.testing.assert_allclose(x.grad, grad / 4)


def test_labels_as_variable_get_no_gradient():
    x = mc.Variable(numpy.random.randn(2, 3))
    t = mc.Variable(numpy.array([1, 2]))
    F.softmax_cross_entropy(x, t).backward()
    assert x.grad is not None and t.grad is None


def test_all_labels_ignored_gives_zero():
    x = mc.Variable(numpy.random.randn(2, 3))
    loss = F.softmax_cross_entropy(x, numpy.array([-1, -1]))
    assert float(loss.array) == 0.0
    loss.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros((2, 3)))


def test_stable_for_large_scores():
    x = numpy.array([[1000.0, 0.0], [0.0, -1000.0]], numpy.float32)
    with numpy.errstate(over="raise", invalid="raise", divide="raise"):
        loss = F.softmax_cross_entropy(x, numpy.array([0, 1]))
    numpy.testing.assert_allclose(loss.array, 500.0)


def test_float_labels_rejected():
    with pytest.raises(TypeError, match="integer"):
        F.softmax_cross_entropy(numpy.zeros((2, 3)), numpy.array([0.0, 1.0]))


def test_label_shape_mismatch_is_invalid_type():
    with pytest.raises(InvalidType):
        F.softmax_cross_entropy(numpy.zeros((2, 3)), numpy.array([0, 1, 2]))


@pytest.mark.parametrize("bad", [3, -2, 10])
def test_out_of_range_label_is_named(bad):
    with pytest.raises(ValueError, match=r"\[0, 3\).*{}".format(bad)):
        F.softmax_cross_entropy(numpy.zeros((2, 3)), numpy.array([0, bad]))


def test_invalid_reduce():
    with pytest.raises(ValueError, match="reduce"):
        F.softmax_cross_entropy(numpy.zeros((2, 3)), numpy.array([0, 1]),
                                reduce="sum")
