"""Chainer 7.8.1's side of every figure (run in .venv-peers/chainer)."""

import numpy as np

import chainer
import chainer.functions as F
import chainer.links as L

from chain_timing import ChainTiming  # noqa: E402  (beside this file)

NAME = "chainer"
MEMORY = "tracemalloc"


def version():
    return chainer.__version__


def _seed_and_backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


_timing = ChainTiming(
    chainer.Variable,
    _seed_and_backward,
    lambda x: x.grad,
    F.sin)
perop_once = _timing.perop_once
deep_once = _timing.deep_once


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
