"""No leaks (issue 8, item 4).

After a training step and ``del loss``, no FunctionNode and no array of that
step (activations, masks, output gradients) survives: weak references to
all of them are dead, freed by reference counting alone (the cyclic
collector is off). Memory over 1 000 small training steps, measured with
``mc.memory.measure()``, is flat.
"""

import array
import gc
import sys
import weakref

import numpy
import pytest

import minichain as mc
import minichain.functions as F


class Recorder(mc.FunctionHook):
    """Weak references to every node and every array a step touches."""

    name = "Recorder"

    def __init__(self):
        self.nodes = []
        self.arrays = []

    def forward_postprocess(self, function, in_data):
        self.nodes.append(weakref.ref(function))
        self.arrays += [weakref.ref(a) for a in in_data if a is not None]

    def backward_postprocess(self, function, in_data, out_grad):
        self.arrays += [weakref.ref(g) for g in out_grad if g is not None]

    def survivors(self, keep):
        keep = {id(a) for a in keep}
        nodes = [r() for r in self.nodes if r() is not None]
        arrays = [r() for r in self.arrays
                  if r() is not None and id(r()) not in keep]
        return nodes, arrays


@pytest.fixture
def no_cycle_collector():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _setup(optimizer, n_layers=2, dropout=False):
    mc.random.seed(0)
    model = mc.links.MLP(16, 3, n_layers=n_layers)
    optimizer.setup(model)
    x, t = mc.datasets.make_spiral(n_per_class=10)
    model(x)  # size the lazy layers outside the recorded step

    def forward(x):
        h = x
        for f in model.functions():
            h = f(h)
            if dropout and h.shape[1] == 16:
                h = F.dropout(h, 0.3)
        return h
    return model, x, t, forward


def _kept(model, optimizer, x, t):
    """Arrays a step may leave alive: data, parameters, their gradients,
    the optimizer's state."""
    keep = [x, t]
    for p in model.params():
        keep += [p.array, p.grad]
        rule = p.update_rule
        if rule is not None and rule.state:
            keep += list(rule.state.values())
    return keep


OPTIMIZERS = {
    "SGD": lambda: mc.optimizers.SGD(lr=0.1),
    "MomentumSGD": lambda: mc.optimizers.MomentumSGD(lr=0.1),
    "Adam": lambda: mc.optimizers.Adam(),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("clear", ["cleargrads", "zerograds"])
def test_nothing_of_a_step_survives_del_loss(name, clear, no_cycle_collector):
    optimizer = OPTIMIZERS[name]()
    model, x, t, forward = _setup(optimizer, dropout=True)
    recorder = Recorder()
    with recorder:
        getattr(model, clear)()
        loss = F.softmax_cross_entropy(forward(x), t)
        loss_array = weakref.ref(loss.array)
        loss.backward()
        optimizer.update()
    assert len(recorder.nodes) >= 8  # 3 linear, 2 relu, 2 dropout, loss
    nodes, arrays = recorder.survivors(_kept(model, optimizer, x, t))
    assert nodes  # the loss still holds its graph...
    del loss, nodes, arrays
    nodes, arrays = recorder.survivors(_kept(model, optimizer, x, t))
    assert nodes == []  # ...and nothing else does
    assert [a.shape for a in arrays] == []
    assert loss_array() is None


def test_nothing_survives_update_with_lossfun(no_cycle_collector):
    optimizer = mc.optimizers.Adam()
    model, x, t, forward = _setup(optimizer)
    recorder = Recorder()
    with recorder:
        optimizer.update(lambda: F.softmax_cross_entropy(forward(x), t))
    nodes, arrays = recorder.survivors(_kept(model, optimizer, x, t))
    assert nodes == [] and [a.shape for a in arrays] == []


def test_nothing_survives_a_checkpointed_step(no_cycle_collector):
    optimizer = mc.optimizers.SGD(lr=0.1)
    model, x, t, _ = _setup(optimizer, n_layers=4)
    recorder = Recorder()
    with recorder:
        model.cleargrads()
        y = mc.checkpoint_sequential(model.functions(), 2, x)
        loss = F.softmax_cross_entropy(y, t)
        del y
        loss.backward()
        optimizer.update()
        del loss
    nodes, arrays = recorder.survivors(_kept(model, optimizer, x, t))
    assert nodes == [] and [a.shape for a in arrays] == []


def test_nothing_survives_a_double_backprop_step(no_cycle_collector):
    # A gradient penalty: the gradients' own graph must go with the loss.
    optimizer = mc.optimizers.SGD(lr=0.01)
    model, x, t, forward = _setup(optimizer)
    recorder = Recorder()
    xv = mc.Variable(x)
    with recorder:
        model.cleargrads()
        loss = F.softmax_cross_entropy(forward(xv), t)
        gx, = mc.grad([loss], [xv], enable_double_backprop=True)
        total = loss + F.sum(gx * gx)
        del gx, loss
        total.backward()
        optimizer.update()
        del total
    keep = _kept(model, optimizer, x, t) + [xv.array]
    nodes, arrays = recorder.survivors(keep)
    assert nodes == [] and [a.shape for a in arrays] == []


def test_nothing_survives_a_failed_backward(no_cycle_collector):
    class Breaks(mc.FunctionNode):
        def forward(self, xs):
            return xs[0] * 1,

        def backward(self, indexes, gys):
            raise ArithmeticError("Breaks: backward fails")

    optimizer = mc.optimizers.SGD(lr=0.1)
    model, x, t, forward = _setup(optimizer)
    recorder = Recorder()
    with recorder:
        model.cleargrads()
        h, = Breaks().apply((forward(x),))
        loss = F.softmax_cross_entropy(h, t)
        del h
        try:
            loss.backward()
        except ArithmeticError as error:
            error.__traceback__ = None  # frames would hold the graph
        del loss
    nodes, arrays = recorder.survivors(_kept(model, optimizer, x, t))
    assert nodes == [] and [a.shape for a in arrays] == []


def test_a_failed_forward_holds_nothing_once_the_error_is_gone(
        no_cycle_collector):
    x = mc.Variable(numpy.ones((4, 3), numpy.float32))
    W = mc.Variable(numpy.ones((2, 5), numpy.float32))
    recorder = Recorder()
    with recorder:
        try:
            F.linear(F.tanh(x) * 2, W)
        except Exception as error:
            error.__traceback__ = None
    nodes, arrays = recorder.survivors([x.array, W.array])
    assert nodes == [] and [a.shape for a in arrays] == []


# ----- memory over 1 000 steps -------------------------------------------------------
def _records_bytes(n_events):
    """Bytes of the records ``measure``'s MemoryHook keeps for ``n_events``
    steps (four int64 per step, grown the same way): counted in ``final``
    because the hook is alive when ``final`` is read."""
    records = array.array("q")
    empty = sys.getsizeof(records)
    for _ in range(n_events):
        records.extend((0, 0, 0, 0))
    return sys.getsizeof(records) - empty


def _held_after(n_steps, step):
    """Bytes held after ``n_steps`` steps (less the hook's records), and
    the peak (less them too)."""
    with mc.memory.measure() as m:
        for _ in range(n_steps):
            step()
        # A full collection also empties CPython's free lists (up to 2 000
        # spare tuples of each length, still counted by tracemalloc). They
        # refill slowly over the first thousand steps of a hooked backward
        # and would read as growth that is not a leak.
        gc.collect()
    records = _records_bytes(len(m.timeline) - 2)  # less start and end
    return m.final - records, m.peak - records


def _training_step(optimizer_name="Adam", clear="cleargrads"):
    optimizer = OPTIMIZERS[optimizer_name]()
    model, x, t, forward = _setup(optimizer)

    def step():
        getattr(model, clear)()
        loss = F.softmax_cross_entropy(forward(x), t)
        loss.backward()
        optimizer.update()
    for _ in range(20):  # warm-up: optimizer state, NumPy's caches
        step()
    return step


@pytest.mark.parametrize("optimizer_name,clear,n_steps", [
    ("Adam", "cleargrads", 1000), ("SGD", "zerograds", 1000),
])
def test_memory_is_flat_over_1000_steps(optimizer_name, clear, n_steps):
    step = _training_step(optimizer_name, clear)
    # The reference is itself n_steps long: a measure block starts with
    # CPython's free lists empty (see _held_after), and under the hook the
    # peak of the first few hundred steps still includes their refilling.
    held_ref, peak_ref = _held_after(n_steps, step)
    held_n, peak_n = _held_after(n_steps + n_steps // 2, step)
    # A leak of even one small object per step (an int: 28 bytes) would add
    # 14 000 bytes between the two; flat memory adds nothing but a few
    # bytes of interpreter bookkeeping.
    assert abs(held_n - held_ref) < 2048
    # What a step leaves behind is small, and the peak does not grow with
    # the number of steps.
    assert held_n < 64 * 1024
    assert abs(peak_n - peak_ref) < 2048


def test_the_flatness_check_catches_a_leak():
    step = _training_step()
    kept = []

    def leaky_step():
        step()
        kept.append(numpy.zeros(1))  # one tiny array per step: ~100 bytes

    held_100, _ = _held_after(100, leaky_step)
    held_400, _ = _held_after(400, leaky_step)
    assert held_400 - held_100 > 20_000
