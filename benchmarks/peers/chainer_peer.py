"""Chainer 7.8.1's side of every figure (run in .venv-peers/chainer)."""

import time

import numpy as np

import chainer
import chainer.functions as F
import chainer.links as L

NAME = "chainer"
MEMORY = "tracemalloc"
MUL_C, ADD_C = 1.0001, 0.001


def version():
    return chainer.__version__


def _chain(y, n, kind):
    if kind == "muladd":
        for i in range(n):
            y = y * MUL_C if i % 2 == 0 else y + ADD_C
    else:
        for i in range(n):
            y = F.sin(y) if i % 2 == 0 else y * MUL_C
    return y


def perop_once(x0, n, kind):
    x = chainer.Variable(x0)
    t0 = time.perf_counter()
    y = _chain(x, n, kind)
    t1 = time.perf_counter()
    y.grad = np.ones_like(y.array)
    y.backward()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, x.grad


def deep_once(x0, n, meter):
    if meter is not None:
        meter.start()
    x = chainer.Variable(x0)
    t0 = time.perf_counter()
    y = _chain(x, n, "muladd")
    t1 = time.perf_counter()
    y.grad = np.ones_like(y.array)
    y.backward()
    t2 = time.perf_counter()
    mem = {}
    if meter is not None:
        mem["peak"] = meter.peak()
        mem["after_backward"] = meter.read()
    assert np.allclose(x.grad, MUL_C ** ((n + 1) // 2), rtol=1e-3)
    t3 = time.perf_counter()
    del y
    t4 = time.perf_counter()
    if meter is not None:
        x = None
        mem["after_release"] = meter.read()
        meter.stop()
    return t1 - t0, t2 - t1, t4 - t3, mem


def make_mlp_step(params, x, t, lr=0.01):
    model = chainer.Chain()
    with model.init_scope():
        for i, name in enumerate(("l1", "l2", "l3")):
            w, b = params[2 * i], params[2 * i + 1]
            setattr(model, name, L.Linear(w.shape[1], w.shape[0],
                                          initialW=w, initial_bias=b))
    optimizer = chainer.optimizers.SGD(lr=lr)
    optimizer.setup(model)

    def step():
        h = F.relu(model.l1(x))
        h = F.relu(model.l2(h))
        loss = F.softmax_cross_entropy(model.l3(h), t)
        model.cleargrads()
        loss.backward()
        optimizer.update()
        return float(loss.array)
    return step


def make_forget(ws, bs, x):
    params = [(chainer.Parameter(w), chainer.Parameter(b))
              for w, b in zip(ws, bs)]
    for W, b in params:
        W.zerograd()
        b.zerograd()

    def segment_fn(lo, hi):
        def run(h):
            for W, b in params[lo:hi]:
                h = F.tanh(F.linear(h, W, b))
            return h
        return run

    def step(segment):
        h = x
        if segment is None:
            h = segment_fn(0, len(params))(chainer.Variable(x))
        else:
            for lo in range(0, len(params), segment):
                h = F.forget(segment_fn(lo, lo + segment), h)
        loss = F.sum(h)
        del h
        loss.backward()
    return step
