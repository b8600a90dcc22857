"""links.Linear: shapes, lazy input size, initialisers, gradients."""

import numpy
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import minichain as mc
import minichain.functions as F
from minichain import links as L


def _x(n=4, d=3, seed=0):
    return numpy.random.default_rng(seed).standard_normal(
        (n, d)).astype(numpy.float32)


def test_forward_is_x_W_transposed_plus_b():
    layer = L.Linear(3, 2)
    layer.b.array[...] = [0.5, -1.0]
    x = _x()
    y = layer(x)
    assert y.shape == (4, 2) and y.dtype == numpy.float32
    assert_allclose(y.array, x @ layer.W.array.T + layer.b.array, rtol=1e-6)


def test_parameters_and_shapes():
    layer = L.Linear(3, 2)
    assert [name for name, _ in layer.namedparams()] == ["/W", "/b"]
    assert layer.W.shape == (2, 3) and layer.b.shape == (2,)
    assert layer.W.dtype == numpy.float32 and layer.b.dtype == numpy.float32
    assert not layer.b.array.any()
    assert layer.in_size == 3 and layer.out_size == 2


@pytest.mark.parametrize("make", [lambda: L.Linear(2), lambda: L.Linear(None, 2)],
                         ids=["Linear(out)", "Linear(None, out)"])
def test_lazy_input_size_is_taken_from_the_first_input(make):
    layer = make()
    assert layer.W.array is None and layer.in_size is None
    assert [name for name, _ in layer.namedparams()] == ["/W", "/b"]
    assert [name for name, _ in layer.namedparams(include_uninit=False)] == [
        "/b"]
    y = layer(_x(5, 7))
    assert layer.W.shape == (2, 7) and layer.in_size == 7
    assert y.shape == (5, 2)
    W = layer.W.array
    layer(_x(1, 7))
    assert layer.W.array is W  # initialised once


def test_inputs_with_more_axes_are_flattened():
    layer = L.Linear(None, 4)
    x = _x(2, 12).reshape(2, 3, 4)
    y = layer(x)
    assert layer.W.shape == (4, 12)
    assert_allclose(y.array, x.reshape(2, 12) @ layer.W.array.T, rtol=1e-6)


def test_nobias():
    layer = L.Linear(3, 2, nobias=True)
    assert layer.b is None
    assert [name for name, _ in layer.namedparams()] == ["/W"]
    x = _x()
    assert_allclose(layer(x).array, x @ layer.W.array.T, rtol=1e-6)


def test_initial_values_array_constant_and_callable():
    W = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    layer = L.Linear(3, 2, initialW=W, initial_bias=numpy.array(
        [1.0, 2.0], numpy.float32))
    assert layer.W.array is W
    assert_array_equal(layer.b.array, [1.0, 2.0])
    const = L.Linear(3, 2, initialW=0.5, initial_bias=-1.0)
    assert_array_equal(const.W.array, numpy.full((2, 3), 0.5))
    assert_array_equal(const.b.array, [-1.0, -1.0])
    calls = []

    def init(shape, dtype, xp):
        calls.append(shape)
        return xp.ones(shape, dtype)

    lazy = L.Linear(2, initialW=init)
    assert calls == []
    lazy(_x(1, 5))
    assert calls == [(2, 5)]
    assert_array_equal(lazy.W.array, numpy.ones((2, 5)))


def test_lecun_normal_scale():
    # std of N(0, 1/fan_in): 1 / sqrt(400) = 0.05.
    W = L.Linear(400, 500).W.array
    assert abs(float(W.mean())) < 0.002
    assert abs(float(W.std()) - 0.05) < 0.05 * 0.03


def test_weights_follow_the_package_seed():
    mc.random.seed(3)
    a = L.Linear(4, 3).W.array.copy()
    mc.random.seed(3)
    b = L.Linear(4, 3).W.array.copy()
    c = L.Linear(4, 3).W.array.copy()
    assert_array_equal(a, b)
    assert not numpy.array_equal(b, c)


def test_gradients():
    layer = L.Linear(3, 2)
    x = mc.Variable(_x())
    gy = numpy.random.default_rng(1).standard_normal((4, 2)).astype(
        numpy.float32)
    y = layer(x)
    y.grad = gy
    y.backward()
    W = layer.W.array
    assert_allclose(layer.W.grad, gy.T @ x.array, rtol=1e-5)
    assert_allclose(layer.b.grad, gy.sum(axis=0), rtol=1e-5)
    assert_allclose(x.grad, gy @ W, rtol=1e-5)


def test_gradient_check():
    layer = L.Linear(3, 2)
    x = _x().astype(numpy.float64)
    layer.W.array = layer.W.array.astype(numpy.float64)
    layer.b.array = layer.b.array.astype(numpy.float64)
    gy = numpy.ones((4, 2))
    mc.gradient_check.check_backward(
        lambda x: layer(x), x, gy, params=(layer.W, layer.b))


def test_repr_names_the_sizes():
    assert repr(L.Linear(3, 2)) == "Linear(in_size=3, out_size=2, nobias=False)"


def test_mlp_structure_and_forward():
    model = L.MLP(5, 3)
    assert [name for name, _ in model.namedparams()] == [
        "/l1/W", "/l1/b", "/l2/W", "/l2/b", "/l3/W", "/l3/b"]
    x = _x(4, 2)
    y = model(x)
    assert y.shape == (4, 3)
    h = numpy.maximum(x @ model.l1.W.array.T + model.l1.b.array, 0)
    h = numpy.maximum(h @ model.l2.W.array.T + model.l2.b.array, 0)
    assert_allclose(y.array, h @ model.l3.W.array.T + model.l3.b.array,
                    rtol=1e-5, atol=1e-6)
    assert model.count_params() == (2 * 5 + 5) + (5 * 5 + 5) + (5 * 3 + 3)


def test_mlp_functions_compose_to_forward():
    model = L.MLP(4, 2, n_layers=3)
    steps = model.functions()
    assert len(steps) == 2 * 3 + 1
    x = _x(3, 2)
    h = x
    for step in steps:
        h = step(h)
    assert_array_equal(h.array, model(x).array)
    assert F.sum(h).array.shape == ()


def test_lazy_layer_takes_the_input_dtype_for_W_and_b():
    layer = L.Linear(2)
    y = layer(_x().astype(numpy.float64))
    assert layer.W.dtype == layer.b.dtype == y.dtype == numpy.float64
