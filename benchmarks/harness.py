"""The timing harness shared by every framework's benchmark process.

Import this module *before* NumPy: BLAS reads its thread count when NumPy is
first imported, so the one-thread setting below must already be in the
environment then. Every figure is a ratio to hand-written NumPy doing the
same math with no graph (the ``numpy_*`` functions here), measured in the
same process, one repetition of the framework and one of NumPy in turn, so a
noisy neighbour slows both alike.

This file runs under every peer's environment too (NumPy 1.23 with Chainer
and DeZero, PyTorch 2.13), so it imports nothing from minichain.
"""

import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
for _name in THREAD_VARIABLES:
    os.environ[_name] = "1"

import ctypes  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

# ----- the figures' sizes -------------------------------------------------------
PEROP_OPS = 2000          # length of the tiny-op chain
PEROP_SIZE = 10           # elements per array in that chain
MUL_C, ADD_C = 1.0001, 0.001
MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 256
MLP_LR = 0.01
DEEP_OPS = 100_000


# ----- malloc -------------------------------------------------------------------
def pin_malloc():
    """Stop glibc from returning mid-sized buffers to the kernel each step.

    By default glibc serves 0.5-2 MiB blocks with mmap and unmaps them on
    free, so every MLP step pays ~1 800 page faults (about 25% of its time,
    for NumPy and every NumPy-based framework alike). Raising the mmap and
    trim thresholds keeps those blocks in the heap. The peer study compares
    with PyTorch on these "pinned" figures, which is what we do too.
    Returns True if it took effect (glibc only).
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    ok = libc.mallopt(m_mmap_threshold, 32 * 2**20)
    ok &= libc.mallopt(m_trim_threshold, 2**30)
    return bool(ok)


# ----- statistics ---------------------------------------------------------------
def median(values):
    return float(statistics.median(values))


def spread(values):
    return [float(min(values)), float(max(values))]


# ----- hand-written NumPy: the per-op chain ------------------------------------
def start_array():
    """The chain's input: 10 float32 values in [0.5, 1.5)."""
    return np.linspace(0.5, 1.5, PEROP_SIZE, endpoint=False).astype(np.float32)


def numpy_perop(x, n, kind):
    """One forward and one backward of the chain; returns (t_fwd, t_bwd, gx).

    ``kind`` "muladd": ``y*c`` and ``y+c`` alternate, so the backward
    multiplies by c on every other op and an add costs nothing.
    ``kind`` "sinmul": ``sin(y)`` and ``y*c`` alternate; backward needs the
    input of every sin, which the forward keeps in a list (as a graph would).
    """
    # Python floats, as the frameworks get them (NumPy keeps float32).
    c_mul, c_add = MUL_C, ADD_C
    t0 = time.perf_counter()
    y = x
    kept = []
    if kind == "muladd":
        for i in range(n):
            y = y * c_mul if i % 2 == 0 else y + c_add
    else:
        for i in range(n):
            if i % 2 == 0:
                kept.append(y)
                y = np.sin(y)
            else:
                y = y * c_mul
    t1 = time.perf_counter()
    g = np.ones_like(y)
    if kind == "muladd":
        for i in reversed(range(n)):
            if i % 2 == 0:
                g = g * c_mul
    else:
        for i in reversed(range(n)):
            if i % 2 == 0:
                g = g * np.cos(kept.pop())
            else:
                g = g * c_mul
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, g


def expected_perop_grad(x, n, kind):
    """The analytic gradient of the chain, in float64, to check frameworks."""
    if kind == "muladd":
        return np.full(x.shape, MUL_C ** ((n + 1) // 2))
    _, _, g = numpy_perop(x.astype(np.float64), n, kind)
    return g


def _pair(rep, numpy_side, framework_side):
    """Run both sides of one paired measurement; return (numpy, framework).

    Even repetitions run NumPy first, odd ones the framework first. Why:
    whichever runs second is measurably slower (it meets the allocator,
    the garbage collector's counters and the caches as the first left
    them): with NumPy always first, minichain's MLP ratio came out about
    1.055 and with minichain always first about 1.015, the same code.
    Taking turns puts half of that effect on each side, as for every
    framework measured here.
    """
    if rep % 2 == 0:
        first = numpy_side()
        return first, framework_side()
    first = framework_side()
    return numpy_side(), first


def perop_figure(framework_once, kind, reps=15, n=PEROP_OPS):
    """Time ``framework_once(x, n, kind) -> (t_fwd, t_bwd, gx)`` against NumPy.

    One warm-up, then ``reps`` pairs. Times are µs per op; ratios are taken
    pair by pair and their median reported. The two sides of a pair take
    turns going first (see ``_pair``).
    """
    x = start_array()
    want = expected_perop_grad(x, n, kind)
    _, _, gx = framework_once(x, n, kind)
    numpy_perop(x, n, kind)
    if not np.allclose(np.asarray(gx, dtype=np.float64), want, rtol=1e-3):
        raise AssertionError("per-op {}: wrong gradient".format(kind))
    rows = {"fwd": [], "bwd": [], "np_fwd": [], "np_bwd": [],
            "r_fwd": [], "r_bwd": [], "r_total": []}
    for rep in range(reps):
        (nf, nb, _), (ff, fb, _) = _pair(
            rep, lambda: numpy_perop(x, n, kind),
            lambda: framework_once(x, n, kind))
        rows["fwd"].append(ff / n * 1e6)
        rows["bwd"].append(fb / n * 1e6)
        rows["np_fwd"].append(nf / n * 1e6)
        rows["np_bwd"].append(nb / n * 1e6)
        rows["r_fwd"].append(ff / nf)
        rows["r_bwd"].append(fb / nb)
        rows["r_total"].append((ff + fb) / (nf + nb))
    result = {key: median(v) for key, v in rows.items()}
    result["r_total_range"] = spread(rows["r_total"])
    # On a shared machine other processes only ever add time, so the
    # fastest repetitions are the least disturbed: their ratio is reported
    # beside the median as a check of it.
    result["r_total_best"] = ((min(rows["fwd"]) + min(rows["bwd"]))
                              / (min(rows["np_fwd"]) + min(rows["np_bwd"])))
    result["reps"] = reps
    return result


# ----- hand-written NumPy: the MLP step ----------------------------------------
def mlp_data(seed=0):
    """Weights (Chainer layout: W is (out, in)), biases, a batch and labels."""
    rng = np.random.RandomState(seed)
    params = []
    for n_in, n_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        w = (rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(np.float32)
        params += [w, np.zeros(n_out, dtype=np.float32)]
    x = rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
    t = rng.randint(0, MLP_SIZES[-1], size=MLP_BATCH).astype(np.int32)
    return params, x, t


class NumpyMLP:
    """784-512-512-10 ReLU MLP, softmax cross entropy, SGD, by hand.

    This is the floor: the matmuls a graph framework cannot avoid, no
    gradient for the input batch, SGD updating the weights in place.
    """

    def __init__(self, params, x, t, xp=np):
        self.params = [p.copy() for p in params]
        self.x, self.t = x, t
        self.xp = xp  # numpy, or cupy for the GPU section

    def step(self):
        xp = self.xp
        w1, b1, w2, b2, w3, b3 = self.params
        x, t = self.x, self.t
        n = x.shape[0]
        h1 = x @ w1.T + b1
        a1 = xp.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = xp.maximum(h2, 0)
        z = a2 @ w3.T + b3
        z = z - z.max(axis=1, keepdims=True)
        e = xp.exp(z)
        s = e.sum(axis=1, keepdims=True)
        rows = xp.arange(n)
        loss = float(xp.log(s).mean() - z[rows, t].mean())
        gz = e / s                      # softmax
        gz[rows, t] -= 1
        gz *= np.float32(1.0 / n)
        grads = [None] * 6
        grads[4] = gz.T @ a2
        grads[5] = gz.sum(axis=0)
        ga2 = gz @ w3
        ga2 *= h2 > 0
        grads[2] = ga2.T @ a1
        grads[3] = ga2.sum(axis=0)
        ga1 = ga2 @ w2
        ga1 *= h1 > 0
        grads[0] = ga1.T @ x            # no gradient for x itself
        grads[1] = ga1.sum(axis=0)
        lr = np.float32(MLP_LR)
        for p, g in zip(self.params, grads):
            p -= lr * g
        return loss


def mlp_figure(make_framework_step, reps=20, xp=np, sync=None):
    """Time a framework's training step against ``NumpyMLP.step``.

    ``make_framework_step(params, x, t)`` returns a callable doing one step
    (forward, backward, SGD) and returning the loss as a float. The first
    step's loss must match NumPy's. Reports ms per step and the paired ratio.
    """
    params, x, t = mlp_data()
    if xp is not np:  # the GPU section: the same data, on the device
        params, x, t = [xp.asarray(p) for p in params], xp.asarray(x), \
            xp.asarray(t)
    sync = sync or (lambda: None)  # waits for the GPU before reading a clock
    reference = NumpyMLP(params, x, t, xp)
    step = make_framework_step([p.copy() for p in params], x, t)
    loss_np, loss_fw = reference.step(), step()
    if abs(loss_np - loss_fw) > 1e-4 * max(1.0, abs(loss_np)):
        raise AssertionError("MLP: first loss {} != NumPy's {}".format(
            loss_fw, loss_np))
    for _ in range(2):  # warm-up
        reference.step()
        step()
    def timed(run):
        def once():
            sync()
            t0 = time.perf_counter()
            run()
            sync()
            return time.perf_counter() - t0
        return once

    fw, ref, ratio = [], [], []
    for rep in range(reps):
        t_ref, t_fw = _pair(rep, timed(reference.step), timed(step))
        fw.append(t_fw * 1e3)
        ref.append(t_ref * 1e3)
        ratio.append(t_fw / t_ref)
    return {"ms": median(fw), "np_ms": median(ref), "ratio": median(ratio),
            "ratio_range": spread(ratio), "ratio_best": min(fw) / min(ref),
            "first_loss": loss_fw, "reps": reps}


# ----- hand-written NumPy: the 100 000-op chain --------------------------------
def numpy_deep(x, n):
    f, b, g = numpy_perop(x, n, "muladd")
    return f, b


def deep_figure(framework_deep, n=DEEP_OPS, reps=3, memory="tracemalloc"):
    """A chain of ``n`` tiny ops: forward and backward seconds, and memory.

    ``framework_deep(x, n, meter)`` builds the chain, runs backward, checks
    the gradient, and returns ``(t_fwd, t_bwd, t_release, mem)`` where
    ``mem`` holds the meter's readings (MiB above the level before the
    chain): ``peak`` during forward+backward, ``after_backward`` (graph
    still held) and ``after_release`` (everything dropped: back to ~0).
    Memory is read in a separate run from the timings, because tracemalloc
    slows Python code down.
    """
    x = start_array()
    times = {"fwd": [], "bwd": [], "release": [], "np_fwd": [], "np_bwd": []}
    for _ in range(reps):
        nf, nb = numpy_deep(x, n)
        f, b, r, _ = framework_deep(x, n, None)
        times["fwd"].append(f)
        times["bwd"].append(b)
        times["release"].append(r)
        times["np_fwd"].append(nf)
        times["np_bwd"].append(nb)
    result = {key: median(v) for key, v in times.items()}
    result["ratio"] = (result["fwd"] + result["bwd"]) / (
        result["np_fwd"] + result["np_bwd"])
    meter = TraceMeter() if memory == "tracemalloc" else RSSMeter()
    _, _, _, mem = framework_deep(x, n, meter)
    result["memory"] = mem
    result["memory_method"] = meter.name
    return result


# ----- memory meters ------------------------------------------------------------
MIB = 2.0 ** 20


class TraceMeter:
    """Bytes allocated through Python's allocators (NumPy reports to it too)."""

    name = "tracemalloc"

    def start(self):
        gc.collect()
        tracemalloc.start()
        tracemalloc.reset_peak()
        self.base = tracemalloc.get_traced_memory()[0]

    def read(self):
        return (tracemalloc.get_traced_memory()[0] - self.base) / MIB

    def peak(self):
        return (tracemalloc.get_traced_memory()[1] - self.base) / MIB

    def stop(self):
        tracemalloc.stop()


class RSSMeter:
    """Resident memory from /proc, for frameworks whose arrays tracemalloc
    cannot see (PyTorch allocates in C++)."""

    name = "rss"

    @staticmethod
    def _status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
        return 0

    def start(self):
        gc.collect()
        try:  # "5" resets the peak (VmHWM) to the current RSS
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass
        self.base = self._status("VmRSS:")

    def read(self):
        return (self._status("VmRSS:") - self.base) / MIB

    def peak(self):
        return (self._status("VmHWM:") - self.base) / MIB

    def stop(self):
        pass


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


# ----- hand-written NumPy: the forget net --------------------------------------
FORGET = {"width": 1024, "batch": 256, "blocks": 64, "segment": 8}


def forget_data(width, batch, blocks, seed=0):
    """Weights (W is (out, in)), zero biases and an input batch, float32."""
    rng = np.random.RandomState(seed)
    scale = np.float32(1.0 / np.sqrt(width))
    ws = [(rng.standard_normal((width, width)).astype(np.float32) * scale)
          for _ in range(blocks)]
    bs = [np.zeros(width, dtype=np.float32) for _ in range(blocks)]
    x = rng.standard_normal((batch, width)).astype(np.float32)
    return ws, bs, x


class NumpyForget:
    """``h = tanh(h @ W.T + b)`` per block, loss ``sum(h)``, by hand.

    Plain keeps every block's output; with ``segment`` it keeps only each
    segment's input and recomputes the segment during backward (what
    ``forget`` does). Gradients accumulate in place into preallocated
    buffers, as a framework's parameter gradients would.
    """

    def __init__(self, ws, bs, x):
        self.ws, self.bs, self.x = ws, bs, x
        self.gws = [np.zeros_like(w) for w in ws]
        self.gbs = [np.zeros_like(b) for b in bs]

    def _forward(self, h, lo, hi, keep):
        outs = []
        for i in range(lo, hi):
            h = np.tanh(h @ self.ws[i].T + self.bs[i])
            if keep:
                outs.append(h)
        return h, outs

    def _backward(self, gy, inputs, outs, lo):
        """Back through blocks lo..lo+len(outs)-1; inputs[k] feeds block lo+k."""
        for k in reversed(range(len(outs))):
            i = lo + k
            y = outs[k]
            g = gy * (1 - y * y)
            self.gws[i] += g.T @ inputs[k]
            self.gbs[i] += g.sum(axis=0)
            gy = g @ self.ws[i] if i > 0 else None  # no gradient for x
        return gy

    def step(self, segment=None):
        n = len(self.ws)
        if segment is None:
            h, outs = self._forward(self.x, 0, n, keep=True)
            gy = np.ones_like(h)
            del h
            self._backward(gy, [self.x] + outs[:-1], outs, 0)
            return
        starts = list(range(0, n, segment))
        checkpoints, h = [], self.x
        for lo in starts:
            checkpoints.append(h)
            h, _ = self._forward(h, lo, lo + segment, keep=False)
        gy = np.ones_like(h)
        del h
        for lo, h0 in zip(reversed(starts), reversed(checkpoints)):
            _, outs = self._forward(h0, lo, lo + segment, keep=True)
            gy = self._backward(gy, [h0] + outs[:-1], outs, lo)
            del outs


def forget_figure(make_framework_forget, reps=2, memory="tracemalloc",
                  width=None, batch=None, blocks=None, segment=None):
    """Plain and checkpointed step of the forget net, against NumPy.

    ``make_framework_forget(ws, bs, x)`` returns ``step(segment)`` (segment
    None: plain; a framework without checkpointing raises
    NotImplementedError for a segment). Memory is the peak of one step
    above the level before it (parameters and gradient buffers already
    allocated), read in its own step; times alternate framework/NumPy.
    """
    width = width or FORGET["width"]
    batch = batch or FORGET["batch"]
    blocks = blocks or FORGET["blocks"]
    segment = segment or FORGET["segment"]
    ws, bs, x = forget_data(width, batch, blocks)
    reference = NumpyForget(ws, bs, x)
    step = make_framework_forget([w.copy() for w in ws],
                                 [b.copy() for b in bs], x)
    variants = [None, segment]
    supported = {}
    for v in variants:  # warm-up; gradient buffers now exist
        reference.step(v)
        try:
            step(v)
            supported[v] = True
        except NotImplementedError:
            supported[v] = False
    activation = batch * width * 4 / MIB
    result = {"blocks": blocks, "segment": segment, "width": width,
              "batch": batch, "activation_mib": activation,
              "analytic_plain_mib": blocks * activation,
              "analytic_forget_mib": (blocks // segment + segment) * activation}
    for name, v in (("plain", None), ("forget", segment)):
        for who, fn in (("np_", reference.step), ("", step)):
            if who == "" and not supported[v]:
                continue
            meter = TraceMeter() if (who or memory == "tracemalloc") \
                else RSSMeter()
            meter.start()
            fn(v)
            result[who + name + "_mib"] = meter.peak()
            meter.stop()
    result["memory_method"] = memory
    for name, v in (("plain", None), ("forget", segment)):
        fw, ref = [], []
        for _ in range(reps):
            gc.collect()
            t0 = time.perf_counter()
            reference.step(v)
            ref.append(time.perf_counter() - t0)
            if supported[v]:
                gc.collect()
                t0 = time.perf_counter()
                step(v)
                fw.append(time.perf_counter() - t0)
        result["np_" + name + "_s"] = median(ref)
        if fw:
            result[name + "_s"] = median(fw)
            result[name + "_ratio"] = median(fw) / median(ref)
    if supported[segment]:
        result["forget_over_plain"] = result["forget_s"] / result["plain_s"]
        result["forget_over_bound"] = (result["forget_mib"]
                                       / result["analytic_forget_mib"])
    return result


# ----- one figure for one framework --------------------------------------------
FIGURES = ("perop_muladd", "perop_sinmul", "mlp", "deep", "forget")


def small_mmap_threshold():
    """Serve every block over 64 KiB with mmap, so freed arrays leave RSS.

    Used only where memory is read from RSS (PyTorch), as in the study.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(-3, 64 * 1024))


def run_figure(module, figure, quick=False):
    """Run ``figure`` for the framework in ``module``; returns a dict.

    ``module`` provides ``perop_once``, ``make_mlp_step``, ``deep_once``,
    ``make_forget`` and ``MEMORY`` ("tracemalloc" or "rss").
    ``quick`` shrinks repetitions (and the forget net) for smoke tests.
    """
    memory = getattr(module, "MEMORY", "tracemalloc")
    if memory == "rss" and figure in ("deep", "forget"):
        small_mmap_threshold()
    else:
        pin_malloc()
    if figure.startswith("perop_"):
        return perop_figure(module.perop_once, figure[len("perop_"):],
                            reps=6 if quick else 32)
    if figure == "mlp":
        return mlp_figure(module.make_mlp_step, reps=3 if quick else 30)
    if figure == "deep":
        return deep_figure(module.deep_once, n=10_000 if quick else DEEP_OPS,
                           reps=1 if quick else 3, memory=memory)
    if figure == "forget":
        size = {"width": 128, "batch": 32} if quick else {}
        return forget_figure(module.make_forget, reps=1 if quick else 3,
                             memory=memory, **size)
    raise ValueError("unknown figure {!r}; one of {}".format(figure, FIGURES))


def numpy_forget_reference(width, batch, blocks, segment, reps=2):
    """NumPy's plain and recomputing step alone: seconds and peak MiB."""
    ws, bs, x = forget_data(width, batch, blocks)
    reference = NumpyForget(ws, bs, x)
    result = {}
    for name, v in (("plain", None), ("forget", segment)):
        reference.step(v)
        meter = TraceMeter()
        meter.start()
        reference.step(v)
        result["np_" + name + "_mib"] = meter.peak()
        meter.stop()
        times = []
        for _ in range(reps):
            gc.collect()
            t0 = time.perf_counter()
            reference.step(v)
            times.append(time.perf_counter() - t0)
        result["np_" + name + "_s"] = median(times)
    return result
