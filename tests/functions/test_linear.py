import tracemalloc

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


def _data(n=4, n_in=3, n_out=5, dtype=numpy.float32, seed=0):
    rng = numpy.random.RandomState(seed)
    return (rng.randn(n, n_in).astype(dtype), rng.randn(n_out, n_in).astype(dtype),
            rng.randn(n_out).astype(dtype), rng.randn(n, n_out).astype(dtype))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_forward_is_x_WT_plus_b_in_input_dtype(dtype):
    x, W, b, _ = _data(dtype=dtype)
    y = F.linear(mc.Variable(x), mc.Variable(W), mc.Variable(b))
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, x @ W.T + b)
    y = F.linear(x, W)
    numpy.testing.assert_array_equal(y.array, x @ W.T)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_backward_values(dtype):
    x, W, b, gy = _data(dtype=dtype)
    xv, Wv, bv = mc.Variable(x), mc.Variable(W), mc.Variable(b)
    y = F.linear(xv, Wv, bv)
    y.grad = gy
    y.backward()
    rtol = 1e-5 if dtype == numpy.float32 else 1e-12
    numpy.testing.assert_allclose(xv.grad, gy @ W, rtol=rtol)
    numpy.testing.assert_allclose(Wv.grad, gy.T @ x, rtol=rtol)
    numpy.testing.assert_allclose(bv.grad, gy.sum(0), rtol=rtol)
    for g in (xv.grad, Wv.grad, bv.grad):
        assert g.dtype == dtype


def test_more_axes_are_flattened_or_kept_as_batch():
    rng = numpy.random.RandomState(0)
    x = rng.randn(2, 3, 4)
    W = rng.randn(5, 12)
    numpy.testing.assert_allclose(F.linear(x, W).array, x.reshape(2, 12) @ W.T)
    W2 = rng.randn(5, 4)
    y = F.linear(x, W2, n_batch_axes=2)
    assert y.shape == (2, 3, 5)
    numpy.testing.assert_allclose(y.array, x @ W2.T)


def test_shape_and_dtype_mismatch_are_invalid_type():
    x, W, b, _ = _data()
    with pytest.raises(InvalidType):
        F.linear(x, W.T)
    with pytest.raises(InvalidType):
        F.linear(x, W.astype(numpy.float64))
    with pytest.raises(InvalidType):
        F.linear(x, W, b[:2])


class _CountLinear(mc.FunctionHook):
    name = "CountLinear"

    def __init__(self):
        self.count = 0

    def forward_preprocess(self, function, in_data):
        if function.label == "Linear":
            self.count += 1


@pytest.mark.parametrize("x_needs_grad, expected", [(False, 1), (True, 2)])
def test_backward_computes_only_requested_gradients(x_needs_grad, expected):
    x, W, _, gy = _data()
    xv = mc.Variable(x, requires_grad=x_needs_grad)
    Wv = mc.Variable(W)
    y = F.linear(xv, Wv)
    y.grad = gy
    # Under double backprop the backward applies Linear nodes we can count:
    # one for gW, and one more for gx only when x needs a gradient.
    hook = _CountLinear()
    with hook:
        y.backward(enable_double_backprop=True)
    assert hook.count == expected
    assert (xv.grad is not None) == x_needs_grad


def _unfused_grads(x, W, b, gy, calls=2):
    xv, Wv, bv = mc.Variable(x), mc.Variable(W), mc.Variable(b)
    for _ in range(calls):
        y = F.linear(xv, Wv, bv)
        y.grad = gy
        y.backward()
    return xv.grad, Wv.grad, bv.grad


@pytest.mark.parametrize("n_out", [5, 64, 130])  # one, exactly one, three blocks
def test_fused_accumulation_in_place_equals_unfused(n_out):
    x, W, b, gy = _data(n=7, n_in=9, n_out=n_out)
    W_param, b_param = mc.Parameter(W.copy()), mc.Parameter(b.copy())
    W_param.zerograd()
    b_param.zerograd()
    W_buffer, b_buffer = W_param.grad, b_param.grad
    xv = mc.Variable(x)
    for _ in range(2):
        y = F.linear(xv, W_param, b_param)
        y.grad = gy
        y.backward()
    assert W_param.grad is W_buffer      # accumulated into the same array
    assert b_param.grad is b_buffer
    gx, gW, gb = _unfused_grads(x, W, b, gy)
    numpy.testing.assert_allclose(W_param.grad, gW, rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(b_param.grad, gb, rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(xv.grad, gx, rtol=1e-5, atol=1e-5)


def test_without_zerograd_the_default_path_runs():
    x, W, b, gy = _data()
    W_param = mc.Parameter(W.copy())
    y = F.linear(x, W_param, b)
    y.grad = gy
    y.backward()
    first = W_param.grad
    y = F.linear(x, W_param, b)
    y.grad = gy
    y.backward()
    numpy.testing.assert_allclose(W_param.grad, 2 * (gy.T @ x), rtol=1e-5)
    # the first gradient was handed to the user: never written in place
    numpy.testing.assert_allclose(first, gy.T @ x, rtol=1e-5)


def test_fused_path_allocates_no_full_weight_gradient():
    n, n_in, n_out = 64, 512, 512
    x, W, b, gy = _data(n, n_in, n_out)
    W_param = mc.Parameter(W)
    W_param.zerograd()
    y = F.linear(x, W_param)          # x needs no gradient: no gx either
    y.grad = gy
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        y.backward()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < W.nbytes // 4      # 1 MiB weight; only a 64-row block (128 KiB)
    numpy.testing.assert_allclose(W_param.grad, gy.T @ x, rtol=1e-4, atol=1e-4)


def test_double_backprop_skips_fused_path_and_is_correct():
    x, W, b, gy = _data()
    W_param = mc.Parameter(W.copy())
    W_param.zerograd()
    buffer = W_param.grad
    xv = mc.Variable(x)
    y = F.linear(xv, W_param, b)
    y.grad = gy
    y.backward(enable_double_backprop=True)
    assert W_param.grad_var.creator is not None   # a graph to differentiate
    numpy.testing.assert_allclose(W_param.grad, gy.T @ x, rtol=1e-5)
    assert not buffer.any()                       # the buffer was not written
    # d/dx sum(c * gW) with gW = gy^T x is gy @ c.
    c = numpy.random.RandomState(3).randn(*W.shape).astype(numpy.float32)
    xv.cleargrad()
    F.sum(W_param.grad_var * c).backward()
    numpy.testing.assert_allclose(xv.grad, gy @ c, rtol=1e-5, atol=1e-5)


def test_second_order_check_with_parameters():
    x, W, b, _ = _data(dtype=numpy.float64)
    rng = numpy.random.RandomState(1)
    mc.gradient_check.check_double_backward(
        F.linear, (x, W, b), rng.randn(4, 5), (rng.randn(*x.shape),
                                               rng.randn(*W.shape),
                                               rng.randn(*b.shape)))
