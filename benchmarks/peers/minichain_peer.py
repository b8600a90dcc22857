"""minichain's side of every figure, written as a learner would write it."""

import numpy as np

import minichain as mc
import minichain.functions as F

from chain_timing import ChainTiming  # noqa: E402  (beside this file)

NAME = "minichain"


def version():
    return getattr(mc, "__version__", "dev")


def _seed_and_backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


_timing = ChainTiming(
    mc.Variable,
    _seed_and_backward,
    lambda x: x.grad,
    F.sin)
perop_once = _timing.perop_once
deep_once = _timing.deep_once


def make_mlp_step(params, x, t, lr=0.01):
    """Three ``Linear`` links with ReLU, softmax cross entropy, plain SGD.

    Written as a learner writes a training step: ``cleargrads``, backward,
    ``update``. ``x`` is a plain array, so no gradient is computed for it.
    """
    layers = []
    for i in range(3):
        w, b = params[2 * i], params[2 * i + 1]
        layer = mc.links.Linear(w.shape[1], w.shape[0])
        layer.W.array[...] = mc.backend.to_cpu(w)
        layer.b.array[...] = mc.backend.to_cpu(b)
        layers.append(layer)
    model = mc.Chain()
    with model.init_scope():
        model.l1, model.l2, model.l3 = layers
    if not isinstance(x, np.ndarray):  # the GPU section: CuPy arrays
        model.to_gpu()
    optimizer = mc.optimizers.SGD(lr=lr)
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


MEMORY = "tracemalloc"


def make_forget(ws, bs, x):
    """The forget net as in benchmarks/forget_net.py, on the given arrays."""
    params = []
    for w, b in zip(ws, bs):
        W, B = mc.Parameter(w), mc.Parameter(b)
        W.zerograd()
        B.zerograd()
        params.append((W, B))
    functions = [(lambda h, W=W, B=B: F.tanh(F.linear(h, W, B)))
                 for W, B in params]
    xv = mc.Variable(x, requires_grad=False)

    def step(segment):
        if segment is None:
            h = xv
            for f in functions:
                h = f(h)
        else:
            h = mc.checkpoint_sequential(functions, len(functions) // segment,
                                         xv)
        loss = F.sum(h)
        del h
        loss.backward()
    return step
