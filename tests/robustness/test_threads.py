"""Threads (issue 8, item 5).

Configuration, global function hooks and minichain's random generators are
per thread, so two threads training two models at the same time get the
same results, bit for bit, as the same trainings run one at a time.
(``mc.memory.measure`` is process-wide: tracemalloc counts every thread.)
"""

import threading

import numpy
import pytest

import minichain as mc
import minichain.functions as F

TIMEOUT = 60


def run_in_threads(*targets):
    """Start one thread per target together; return their results in order.

    Exceptions in a thread are re-raised here, so a failure is not lost.
    """
    results = [None] * len(targets)
    errors = []

    def wrap(i, target):
        try:
            results[i] = target()
        except BaseException as error:  # noqa: B902 - re-raised below
            errors.append(error)

    threads = [threading.Thread(target=wrap, args=(i, t))
               for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "a thread hung"
    if errors:
        raise errors[0]
    return results


# ----- configuration -----------------------------------------------------------------
def test_config_set_in_one_thread_is_not_seen_in_another():
    set_a, read_b = threading.Event(), threading.Event()

    def a():
        mc.config.debug = True
        mc.config.train = False
        set_a.set()
        read_b.wait(TIMEOUT)
        return mc.config.debug, mc.config.train

    def b():
        set_a.wait(TIMEOUT)
        seen = mc.config.debug, mc.config.train
        read_b.set()
        return seen

    assert run_in_threads(a, b) == [(True, False), (False, True)]
    assert mc.config.debug is False and mc.config.train is True


def test_no_backprop_mode_in_one_thread_leaves_the_other_building_graphs():
    inside, built = threading.Event(), threading.Event()

    def a():
        with mc.no_backprop_mode():
            inside.set()
            built.wait(TIMEOUT)
            y = mc.Variable(numpy.ones(2)) * 2
        return y.creator_node is None

    def b():
        inside.wait(TIMEOUT)
        y = mc.Variable(numpy.ones(2)) * 2
        built.set()
        return y.creator_node is not None

    assert run_in_threads(a, b) == [True, True]


def test_global_config_defaults_are_seen_by_every_thread():
    old = mc.global_config.lazy_grad_sum
    mc.global_config.lazy_grad_sum = not old
    try:
        seen = run_in_threads(lambda: mc.config.lazy_grad_sum,
                              lambda: mc.config.lazy_grad_sum)
        assert seen == [not old, not old]
    finally:
        mc.global_config.lazy_grad_sum = old


def test_a_new_thread_starts_from_the_defaults_not_the_parents_values():
    with mc.using_config("type_check", False):
        seen, = run_in_threads(lambda: mc.config.type_check)
    assert seen is True


# ----- global hooks ------------------------------------------------------------------
class Counter(mc.FunctionHook):
    name = "Counter"

    def __init__(self):
        self.labels = []

    def forward_postprocess(self, function, in_data):
        self.labels.append(function.label)

    def backward_postprocess(self, function, in_data, out_grad):
        self.labels.append("backward " + function.label)


def test_a_global_hook_sees_only_its_own_threads_functions():
    hook = Counter()
    registered, done_b = threading.Event(), threading.Event()

    def a():
        with hook:
            registered.set()
            done_b.wait(TIMEOUT)  # b runs while the hook is registered here
            y = F.tanh(mc.Variable(numpy.ones(2)))
            F.sum(y).backward()
        return sorted(mc.get_function_hooks())

    def b():
        registered.wait(TIMEOUT)
        seen = sorted(mc.get_function_hooks())
        y = F.sigmoid(mc.Variable(numpy.ones(2)))
        F.sum(y).backward()
        done_b.set()
        return seen

    assert run_in_threads(a, b) == [[], []]
    # Its own thread's functions, and those its backward applied...
    assert hook.labels[:2] == ["Tanh", "Sum"]
    assert "backward Tanh" in hook.labels
    # ...but nothing of the other thread's sigmoid.
    assert not [label for label in hook.labels if "Sigmoid" in label]


def test_the_same_hook_name_may_be_registered_in_two_threads():
    hooks = [Counter(), Counter()]
    both_in = threading.Barrier(2, timeout=TIMEOUT)

    def use(hook):
        with hook:
            both_in.wait()
            F.exp(mc.Variable(numpy.ones(2)))
            both_in.wait()
        return list(hook.labels)

    assert run_in_threads(lambda: use(hooks[0]),
                          lambda: use(hooks[1])) == [["exp"], ["exp"]]


# ----- two trainings at once -------------------------------------------------
def train(seed, start=None, n_steps=60):
    """A small spiral MLP with dropout and Adam; returns every loss and the
    final parameters, as arrays to compare bit for bit."""
    mc.random.seed(seed)
    x, t = mc.datasets.make_spiral(n_per_class=20, seed=seed)
    model = mc.links.MLP(16, 3)
    optimizer = mc.optimizers.Adam().setup(model)
    if start is not None:
        start.wait()
    losses = []
    for _ in range(n_steps):
        model.cleargrads()
        h = x
        for f in model.functions():
            h = f(h)
            if h.shape[1] == 16:
                h = F.dropout(h, 0.2)
        loss = F.softmax_cross_entropy(h, t)
        loss.backward()
        optimizer.update()
        losses.append(loss.array.copy())
    with mc.using_config("train", False):
        accuracy = F.accuracy(model(x), t).array
    params = {path: p.array.copy() for path, p in model.namedparams()}
    return numpy.array(losses), params, accuracy


def assert_bit_equal(first, second):
    losses_a, params_a, accuracy_a = first
    losses_b, params_b, accuracy_b = second
    assert losses_a.tobytes() == losses_b.tobytes()
    assert sorted(params_a) == sorted(params_b)
    for path in params_a:
        assert params_a[path].tobytes() == params_b[path].tobytes(), path
    assert accuracy_a.tobytes() == accuracy_b.tobytes()


def test_two_threads_training_at_once_match_one_at_a_time():
    alone = [run_in_threads(lambda: train(1))[0],
             run_in_threads(lambda: train(2))[0]]
    start = threading.Barrier(2, timeout=TIMEOUT)
    together = run_in_threads(lambda: train(1, start), lambda: train(2, start))
    assert_bit_equal(together[0], alone[0])
    assert_bit_equal(together[1], alone[1])
    # The two trainings really differ (else the check above proves little).
    assert together[0][0].tobytes() != together[1][0].tobytes()


def test_training_in_a_thread_matches_the_main_thread():
    in_thread, = run_in_threads(lambda: train(3))
    assert_bit_equal(in_thread, train(3))


@pytest.mark.parametrize("n_threads", [4])
def test_many_threads_with_checkpointing_and_double_backprop(n_threads):
    def work(seed, start=None):
        mc.random.seed(seed)
        x = mc.Variable(mc.random.get_generator().standard_normal(
            (8, 4)).astype(numpy.float32))
        blocks = [lambda h: F.dropout(F.tanh(h), 0.25)] * 6
        if start is not None:
            start.wait()
        y = mc.checkpoint_sequential(blocks, 3, x)
        gx, = mc.grad([F.sum(y * y)], [x], enable_double_backprop=True)
        F.sum(gx * gx).backward()
        return y.array.copy(), gx.array.copy(), x.grad.copy()

    alone = [run_in_threads(lambda s=s: work(s))[0] for s in range(n_threads)]
    start = threading.Barrier(n_threads, timeout=TIMEOUT)
    together = run_in_threads(*[lambda s=s: work(s, start)
                                for s in range(n_threads)])
    for a, b in zip(alone, together):
        for array_a, array_b in zip(a, b):
            assert array_a.tobytes() == array_b.tobytes()
