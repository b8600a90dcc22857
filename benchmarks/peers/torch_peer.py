"""PyTorch (CPU)'s side of every figure (run in .venv-peers/torch).

One intra-op thread, as for everyone. PyTorch allocates in C++, where
tracemalloc cannot see, so its memory is read from RSS.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.set_num_threads(1)

from chain_timing import ChainTiming  # noqa: E402  (beside this file)

NAME = "torch"
MEMORY = "rss"


def version():
    return torch.__version__


def _seed_and_backward(y):
    y.backward(torch.ones_like(y))


_timing = ChainTiming(
    lambda x0: torch.tensor(x0, requires_grad=True),
    _seed_and_backward,
    lambda x: x.grad.numpy(),
    torch.sin)
perop_once = _timing.perop_once
deep_once = _timing.deep_once


def make_mlp_step(params, x, t, lr=0.01):
    """The MLP step; on CuPy arrays (``make bench``'s GPU section) on CUDA."""
    device = "cpu" if isinstance(x, np.ndarray) else "cuda"
    layers = []
    for i in range(3):
        w, b = params[2 * i], params[2 * i + 1]
        layer = torch.nn.Linear(w.shape[1], w.shape[0]).to(device)
        with torch.no_grad():
            layer.weight.copy_(torch.as_tensor(w, device=device))
            layer.bias.copy_(torch.as_tensor(b, device=device))
        layers.append(layer)
    l1, l2, l3 = layers
    params_list = [p for layer in layers for p in layer.parameters()]
    optimizer = torch.optim.SGD(params_list, lr=lr)
    xt = torch.as_tensor(x, device=device)
    tt = torch.as_tensor(t, device=device).long()

    def step():
        h = F.relu(l1(xt))
        h = F.relu(l2(h))
        loss = F.cross_entropy(l3(h), tt)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()
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
