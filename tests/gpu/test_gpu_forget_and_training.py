"""forget (with CuPy's random state) and a whole training run, on the GPU."""

import pathlib
import sys

import numpy

import minichain as mc
import minichain.functions as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gpu_device  # noqa: E402

pytestmark = gpu_device.gpu


def _block(x):
    return F.tanh(x * 2.0 + 1.0)


def test_forget_gives_the_plain_gradient_on_gpu():
    cp = gpu_device.cupy()
    data = cp.linspace(-1, 1, 12, dtype=cp.float32).reshape(3, 4)
    x_plain, x_forget = mc.Variable(data.copy()), mc.Variable(data.copy())
    F.sum(_block(_block(x_plain))).backward()
    F.sum(F.forget(lambda h: _block(_block(h)), x_forget)).backward()
    numpy.testing.assert_allclose(x_forget.grad.get(), x_plain.grad.get(),
                                  rtol=1e-6)


def test_dropout_inside_forget_replays_cupys_random_state():
    cp = gpu_device.cupy()
    data = cp.ones((64, 64), dtype=cp.float32)

    def net(h):
        return F.dropout(h * 3.0, ratio=0.5)

    mc.random.seed(0)
    x_plain = mc.Variable(data.copy())
    F.sum(net(x_plain)).backward()
    mc.random.seed(0)
    x_forget = mc.Variable(data.copy())
    F.sum(F.forget(net, x_forget)).backward()
    cp.testing.assert_array_equal(x_forget.grad, x_plain.grad)


def test_double_backprop_through_forget_on_gpu():
    cp = gpu_device.cupy()
    x = mc.Variable(cp.asarray([0.5, -0.3], dtype=cp.float64))
    y = F.sum(F.forget(lambda h: h * h * h, x))
    gx, = mc.grad([y], [x], enable_double_backprop=True)
    ggx, = mc.grad([F.sum(gx)], [x])
    numpy.testing.assert_allclose(ggx.array.get(), 6 * numpy.array([0.5, -0.3]))


def test_link_round_trip_between_devices():
    cp = gpu_device.cupy()
    model = mc.links.Linear(3, 2)
    before = [p.array.copy() for p in model.params()]
    model.to_gpu()
    assert all(type(p.array) is cp.ndarray for p in model.params())
    model.to_cpu()
    for p, b in zip(model.params(), before):
        assert type(p.array) is numpy.ndarray
        numpy.testing.assert_array_equal(p.array, b)


def test_spiral_training_reaches_95_percent_on_gpu():
    from minichain.examples import spiral
    x, t = mc.datasets.make_spiral(seed=0)
    result = spiral.train(data=(gpu_device.cupy().asarray(x),
                                gpu_device.cupy().asarray(t)),
                          progress=False)
    assert result.accuracy >= 0.95
