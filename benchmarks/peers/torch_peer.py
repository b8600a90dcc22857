"""PyTorch (CPU)'s side of every figure (run in .venv-peers/torch).

One intra-op thread, as for everyone. PyTorch allocates in C++, where
tracemalloc cannot see, so its memory is read from RSS.
"""

import time

import numpy as np

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.set_num_threads(1)

NAME = "torch"
MEMORY = "rss"
MUL_C, ADD_C = 1.0001, 0.001


def version():
    return torch.__version__


def _chain(y, n, kind):
    if kind == "muladd":
        for i in range(n):
            y = y * MUL_C if i % 2 == 0 else y + ADD_C
    else:
        for i in range(n):
            y = torch.sin(y) if i % 2 == 0 else y * MUL_C
    return y


def perop_once(x0, n, kind):
    x = torch.tensor(x0, requires_grad=True)
    t0 = time.perf_counter()
    y = _chain(x, n, kind)
    t1 = time.perf_counter()
    y.backward(torch.ones_like(y))
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, x.grad.numpy()


def deep_once(x0, n, meter):
    if meter is not None:
        meter.start()
    x = torch.tensor(x0, requires_grad=True)
    t0 = time.perf_counter()
    y = _chain(x, n, "muladd")
    t1 = time.perf_counter()
    y.backward(torch.ones_like(y))
    t2 = time.perf_counter()
    mem = {}
    if meter is not None:
        mem["peak"] = meter.peak()
        mem["after_backward"] = meter.read()
    assert np.allclose(x.grad.numpy(), MUL_C ** ((n + 1) // 2), rtol=1e-3)
    t3 = time.perf_counter()
    del y
    t4 = time.perf_counter()
    if meter is not None:
        x = None
        mem["after_release"] = meter.read()
        meter.stop()
    return t1 - t0, t2 - t1, t4 - t3, mem


def make_mlp_step(params, x, t, lr=0.01):
    layers = []
    for i in range(3):
        w, b = params[2 * i], params[2 * i + 1]
        layer = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
        layers.append(layer)
    l1, l2, l3 = layers
    params_list = [p for layer in layers for p in layer.parameters()]
    optimizer = torch.optim.SGD(params_list, lr=lr)
    xt = torch.from_numpy(x)
    tt = torch.from_numpy(t).long()

    def step():
        h = F.relu(l1(xt))
        h = F.relu(l2(h))
        loss = F.cross_entropy(l3(h), tt)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss)
    return step


def make_forget(ws, bs, x):
    params = [(torch.tensor(w, requires_grad=True),
               torch.tensor(b, requires_grad=True)) for w, b in zip(ws, bs)]
    for W, b in params:  # gradient buffers exist before the measured step
        W.grad = torch.zeros_like(W)
        b.grad = torch.zeros_like(b)
    xt = torch.from_numpy(x)

    def segment_fn(lo, hi):
        def run(h):
            for W, b in params[lo:hi]:
                h = torch.tanh(F.linear(h, W, b))
            return h
        return run

    def step(segment):
        if segment is None:
            h = segment_fn(0, len(params))(xt)
        else:
            h = xt
            for lo in range(0, len(params), segment):
                h = checkpoint(segment_fn(lo, lo + segment), h,
                               use_reentrant=False)
        loss = h.sum()
        del h
        loss.backward()
    return step
