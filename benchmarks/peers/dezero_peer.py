"""DeZero 0.0.13's side of every figure (run in .venv-peers/chainer).

DeZero turns Python constants into float64 arrays, so its per-op chain runs
in float64 after the first op, and with int32 labels its softmax cross
entropy backward is float64 too: that is its real behaviour, measured as is.
It has no checkpointing: the forget figure has its plain step only.
"""

import time

import numpy as np

import dezero
import dezero.functions as F
import dezero.layers as L

NAME = "dezero"
MEMORY = "tracemalloc"
MUL_C, ADD_C = 1.0001, 0.001


def version():
    return dezero.__version__


def _chain(y, n, kind):
    if kind == "muladd":
        for i in range(n):
            y = y * MUL_C if i % 2 == 0 else y + ADD_C
    else:
        for i in range(n):
            y = F.sin(y) if i % 2 == 0 else y * MUL_C
    return y


def perop_once(x0, n, kind):
    x = dezero.Variable(x0)
    t0 = time.perf_counter()
    y = _chain(x, n, kind)
    t1 = time.perf_counter()
    y.grad = dezero.Variable(np.ones_like(y.data))
    y.backward()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, x.grad.data


def deep_once(x0, n, meter):
    if meter is not None:
        meter.start()
    x = dezero.Variable(x0)
    t0 = time.perf_counter()
    y = _chain(x, n, "muladd")
    t1 = time.perf_counter()
    y.grad = dezero.Variable(np.ones_like(y.data))
    y.backward()
    t2 = time.perf_counter()
    mem = {}
    if meter is not None:
        mem["peak"] = meter.peak()
        mem["after_backward"] = meter.read()
    assert np.allclose(x.grad.data, MUL_C ** ((n + 1) // 2), rtol=1e-3)
    t3 = time.perf_counter()
    del y
    t4 = time.perf_counter()
    if meter is not None:
        x = None
        mem["after_release"] = meter.read()
        meter.stop()
    return t1 - t0, t2 - t1, t4 - t3, mem


class _MLP(dezero.Layer):
    def __init__(self, params):
        super().__init__()
        for i, name in enumerate(("l1", "l2", "l3")):
            w, b = params[2 * i], params[2 * i + 1]
            layer = L.Linear(w.shape[0], in_size=w.shape[1])
            layer.W.data = np.ascontiguousarray(w.T)  # DeZero's W is (in, out)
            layer.b.data = b
            setattr(self, name, layer)

    def forward(self, x):
        h = F.relu(self.l1(x))
        h = F.relu(self.l2(h))
        return self.l3(h)


def make_mlp_step(params, x, t, lr=0.01):
    model = _MLP(params)
    optimizer = dezero.optimizers.SGD(lr=lr)
    optimizer.setup(model)

    def step():
        loss = F.softmax_cross_entropy(model(x), t)
        model.cleargrads()
        loss.backward()
        optimizer.update()
        return float(loss.data)
    return step


def make_forget(ws, bs, x):
    params = [(dezero.Parameter(np.ascontiguousarray(w.T)), dezero.Parameter(b))
              for w, b in zip(ws, bs)]
    xv = dezero.Variable(x)

    def step(segment):
        if segment is not None:
            raise NotImplementedError("DeZero has no checkpointing")
        h = xv
        for W, b in params:
            h = F.tanh(F.linear(h, W, b))
        loss = F.sum(h)
        del h
        loss.backward()
    return step
