"""DeZero 0.0.13's side of every figure (run in .venv-peers/chainer).

DeZero turns Python constants into float64 arrays, so its per-op chain runs
in float64 after the first op, and with int32 labels its softmax cross
entropy backward is float64 too: that is its real behaviour, measured as is.
It has no checkpointing: the forget figure has its plain step only.
"""

import numpy as np

import dezero
import dezero.functions as F
import dezero.layers as L

from chain_timing import ChainTiming  # noqa: E402  (beside this file)

NAME = "dezero"
MEMORY = "tracemalloc"


def version():
    return dezero.__version__


def _seed_and_backward(y):
    y.grad = dezero.Variable(np.ones_like(y.data))
    y.backward()


_timing = ChainTiming(
    dezero.Variable,
    _seed_and_backward,
    lambda x: x.grad.data,
    F.sin)
perop_once = _timing.perop_once
deep_once = _timing.deep_once


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
