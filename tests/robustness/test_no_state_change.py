"""Nothing is lost on error (issue 8, item 2).

- A failed forward leaves no half-built graph attached to its inputs: their
  creator, rank, array and gradient are as before, and once the exception is
  dropped no FunctionNode holding one of their nodes survives.
- A failed backward leaves every leaf gradient as it was before the call.
  The one documented exception (docs/errors.md): a Parameter that owns its
  gradient buffer (after ``zerograd()``) is added into in place, so it may
  hold part of the failed pass's sum; the error then names it.
- A failed optimizer update changes no parameter.
"""

import gc

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType


def f32(*values):
    return numpy.array(values, numpy.float32)


def snapshot(*variables):
    return [(v.creator_node, v.rank, v.array, v.array.copy(),
             None if v.grad is None else v.grad.copy()) for v in variables]


def live_nodes_holding(variables):
    """FunctionNodes still alive that take one of ``variables`` as input."""
    gc.collect()
    wanted = {id(v.node) for v in variables}
    return [obj for obj in gc.get_objects()
            if isinstance(obj, mc.FunctionNode) and obj.inputs is not None
            and any(id(n) in wanted for n in obj.inputs)]


def assert_untouched(variables, before):
    for v, (creator, rank, array, values, grad) in zip(variables, before):
        assert v.creator_node is creator
        assert v.rank == rank
        assert v.array is array
        numpy.testing.assert_array_equal(v.array, values)
        if grad is None:
            assert v.grad is None
        else:
            numpy.testing.assert_array_equal(v.grad, grad)


# ----- failed forwards ---------------------------------------------------------------
def _x():
    return mc.Variable(numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4))


FAILED_FORWARDS = {
    "type check (dtype)": lambda x, w: x + mc.Variable(
        x.array.astype(numpy.float64)),
    "type check (shape)": lambda x, w: x + w,
    "wrapper check (sum_to)": lambda x, w: F.sum_to(x, (5,)),
    "forward raises (max over an empty axis)":
        lambda x, w: F.max(x[:, :0], axis=1),
    "second function of a wrapper fails (linear after reshape)":
        lambda x, w: F.linear(x, w, n_batch_axes=2),
    "NaN in debug mode": lambda x, w: _debug(lambda: F.log(x - 100)),
    "second segment of checkpoint_sequential fails":
        lambda x, w: mc.checkpoint_sequential(
            [F.tanh, lambda h: h + w], 2, x),
    "function inside forget fails":
        lambda x, w: F.forget(lambda a: F.tanh(a) @ w, x),
    "operator with a list": lambda x, w: (x * 2) + [1.0],
}


def _debug(call):
    with mc.using_config("debug", True):
        return call()


@pytest.mark.parametrize("name", sorted(FAILED_FORWARDS))
def test_failed_forward_leaves_inputs_as_they_were(name):
    x = _x()
    w = mc.Variable(numpy.ones((5, 7), numpy.float32))
    x.grad = numpy.full((2, 3, 4), 0.5, numpy.float32)
    before = snapshot(x, w)
    try:
        with numpy.errstate(all="ignore"):
            FAILED_FORWARDS[name](x, w)
    except (TypeError, ValueError, IndexError, RuntimeError, InvalidType):
        pass
    else:
        pytest.fail("the call did not fail")
    assert_untouched([x, w], before)
    assert live_nodes_holding([x, w]) == []
    # And the inputs still work: a graph built now is the only graph.
    y = F.sum(x * 2)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.full((2, 3, 4), 2.5))


def test_the_leak_probe_sees_a_live_node():
    x = _x()
    y = F.tanh(x)
    assert [type(n).__name__ for n in live_nodes_holding([x])] == ["Tanh"]
    del y
    assert live_nodes_holding([x]) == []


def test_failed_forward_keeps_the_earlier_graph_intact():
    x = mc.Variable(f32(1, 2, 3))
    h = x * 3
    creator = h.creator_node
    with pytest.raises(InvalidType):
        F.matmul(h, h)
    assert h.creator_node is creator and creator.inputs[0] is x.node
    F.sum(h).backward()
    numpy.testing.assert_array_equal(x.grad, f32(3, 3, 3))


def test_a_node_whose_forward_failed_can_be_discarded_not_reused():
    class Flaky(mc.FunctionNode):
        calls = 0

        def forward(self, xs):
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise ValueError("Flaky: first call fails")
            return xs[0] * 2,

    node = Flaky()
    x = mc.Variable(f32(1, 2))
    with pytest.raises(ValueError):
        node.apply((x,))
    assert node.inputs is None and node.outputs is None
    y, = node.apply((x,))  # nothing was linked, so a retry is a first apply
    assert y.creator_node is node and node.inputs == (x.node,)


# ----- failed backwards --------------------------------------------------------------
class FailsInBackward(mc.FunctionNode):
    def forward(self, xs):
        return xs[0] * 2,

    def backward(self, indexes, gys):
        raise ArithmeticError("FailsInBackward: the backward broke")


def _graph_that_fails_after_a_leaf(a, b):
    """loss = sum(Fails(a * 2) + b): b gets its gradient (Add's backward runs
    first, rank 3) before Fails (rank 2) raises."""
    h, = FailsInBackward().apply((a * 2,))
    return F.sum(h + b)


def test_failed_backward_leaves_variable_gradients_as_they_were():
    a, b = mc.Variable(f32(1, 2)), mc.Variable(f32(3, 4))
    a.grad, b.grad = f32(10, 20), f32(30, 40)
    loss = _graph_that_fails_after_a_leaf(a, b)
    with pytest.raises(ArithmeticError, match="the backward broke") as info:
        loss.backward()
    numpy.testing.assert_array_equal(a.grad, f32(10, 20))
    numpy.testing.assert_array_equal(b.grad, f32(30, 40))
    assert "in place" not in str(info.value)


def test_failed_backward_leaves_missing_gradients_missing():
    a, b = mc.Variable(f32(1, 2)), mc.Variable(f32(3, 4))
    with pytest.raises(ArithmeticError):
        _graph_that_fails_after_a_leaf(a, b).backward()
    assert a.grad is None and b.grad is None


def test_failed_backward_leaves_an_unowned_parameter_gradient_as_it_was():
    a, p = mc.Variable(f32(1, 2)), mc.Parameter(f32(3, 4), name="p")
    p.grad = f32(30, 40)  # set by hand: not owned, never written in place
    with pytest.raises(ArithmeticError):
        _graph_that_fails_after_a_leaf(a, p).backward()
    numpy.testing.assert_array_equal(p.grad, f32(30, 40))


def test_owned_buffer_keeps_the_part_added_before_the_failure():
    # The documented rough edge: after zerograd() the engine adds into the
    # buffer in place, so the contribution of the functions that ran before
    # the failure (here Add's: ones) stays, and the error says so by name.
    a, p = mc.Variable(f32(1, 2)), mc.Parameter(f32(3, 4), name="p")
    p.zerograd()
    p.grad[...] = f32(30, 40)
    buffer = p.grad
    loss = _graph_that_fails_after_a_leaf(a, p)
    with pytest.raises(ArithmeticError) as info:
        loss.backward()
    assert p.grad is buffer
    numpy.testing.assert_array_equal(p.grad, f32(31, 41))
    message = str(info.value)
    assert "the backward broke" in message
    assert ("failed after adding into the gradient buffer of these "
            "Parameters in place: p." in message)
    assert "cleargrads()" in message
    # Recovery as the message says: clear, and the next step is exact.
    p.cleargrad()
    F.sum(a * 2 + p).backward()
    numpy.testing.assert_array_equal(p.grad, f32(1, 1))


def test_owned_buffers_written_by_linear_fused_accumulation_are_named():
    # Linear's backward_accumulate adds gW and gb block by block straight
    # into owned buffers. Linear (rank 2) runs before FailsInBackward
    # (rank 1), so both buffers hold their full contribution afterwards.
    link = mc.links.Linear(3, 2)
    link.zerograds()
    x = mc.Variable(numpy.ones((4, 3), numpy.float32))
    y = link(F.identity(F.identity(x)))
    h, = FailsInBackward().apply((x * 1,))
    loss = F.sum(y) + F.sum(h)
    with pytest.raises(ArithmeticError) as info:
        loss.backward()
    numpy.testing.assert_array_equal(link.W.grad, numpy.full((2, 3), 4.0))
    numpy.testing.assert_array_equal(link.b.grad, numpy.full((2,), 4.0))
    assert "Parameters in place: W, b." in str(info.value)
    assert x.grad is None


def test_failed_double_backprop_writes_nothing_in_place():
    a, p = mc.Variable(f32(1, 2)), mc.Parameter(f32(3, 4), name="p")
    p.zerograd()
    with pytest.raises(ArithmeticError) as info:
        _graph_that_fails_after_a_leaf(a, p).backward(
            enable_double_backprop=True)
    numpy.testing.assert_array_equal(p.grad, f32(0, 0))
    assert "in place" not in str(info.value)


def test_nan_in_debug_backward_leaves_gradients_as_they_were():
    x = mc.Variable(f32(0, 1))
    b = mc.Variable(f32(5, 5))
    x.grad, b.grad = f32(7, 7), f32(8, 8)
    loss = F.sum(F.sqrt(x) * 0 + b)
    with mc.using_config("debug", True), numpy.errstate(all="ignore"):
        with pytest.raises(RuntimeError, match="NaN is detected"):
            loss.backward()
    numpy.testing.assert_array_equal(x.grad, f32(7, 7))
    numpy.testing.assert_array_equal(b.grad, f32(8, 8))


def test_hook_failing_in_backward_leaves_gradients_as_they_were():
    class Refuses(mc.FunctionHook):
        name = "Refuses"

        def backward_preprocess(self, function, in_data, out_grad):
            if function.label == "Tanh":
                raise RuntimeError("Refuses: no backward of Tanh today")

    a, b = mc.Variable(f32(1, 2)), mc.Variable(f32(3, 4))
    b.grad = f32(1, 1)
    loss = F.sum(F.tanh(a) + b)
    with Refuses(), pytest.raises(RuntimeError, match="no backward of Tanh"):
        loss.backward()
    assert a.grad is None
    numpy.testing.assert_array_equal(b.grad, f32(1, 1))


def test_failed_grad_writes_no_gradient():
    a, b = mc.Variable(f32(1, 2)), mc.Variable(f32(3, 4))
    b.grad = f32(9, 9)
    with pytest.raises(ArithmeticError):
        mc.grad([_graph_that_fails_after_a_leaf(a, b)], [a, b], set_grad=True)
    assert a.grad is None
    numpy.testing.assert_array_equal(b.grad, f32(9, 9))


def test_bad_arguments_to_backward_fail_before_anything_runs():
    a = mc.Variable(f32(1, 2))
    a.grad = f32(1, 1)
    loss = F.sum(a * 3)
    for bad in ("2", 0, -1.0):
        with pytest.raises((TypeError, ValueError), match="loss_scale"):
            loss.backward(loss_scale=bad)
    numpy.testing.assert_array_equal(a.grad, f32(1, 1))
    loss.backward()  # the graph is intact
    numpy.testing.assert_array_equal(a.grad, f32(4, 4))


def test_wrong_shape_seed_is_refused_and_the_graph_still_works():
    a = mc.Variable(f32(1, 2))
    y = a * 3
    with pytest.raises(ValueError, match="Shape of data and grad mismatch"):
        y.grad = f32(1, 1, 1)
    y.grad = f32(1, 1)
    y.backward()
    numpy.testing.assert_array_equal(a.grad, f32(3, 3))


# ----- failed optimizer updates ------------------------------------------------------
def _model_and_optimizer(optimizer):
    model = mc.links.MLP(4, 2)
    x = numpy.linspace(-1, 1, 10, dtype=numpy.float32).reshape(5, 2)
    model(x)  # size the lazy layers
    optimizer.setup(model)
    return model, x


def _params(model):
    return {path: p.array.copy() for path, p in model.namedparams()}


def _assert_params_equal(model, before):
    for path, p in model.namedparams():
        numpy.testing.assert_array_equal(p.array, before[path])


@pytest.mark.parametrize("make", [
    lambda: mc.optimizers.SGD(lr=0.1),
    lambda: mc.optimizers.MomentumSGD(lr=0.1),
    lambda: mc.optimizers.Adam(),
], ids=["SGD", "MomentumSGD", "Adam"])
@pytest.mark.parametrize("fault", [
    "last gradient of the wrong shape", "NaN in debug mode",
    "hyperparameter set to a str", "optimizer hook raises",
])
def test_failed_update_changes_no_parameter(make, fault):
    optimizer = make()
    model, x = _model_and_optimizer(optimizer)
    F.sum(model(x)).backward()
    last_path, last = list(model.namedparams())[-1]
    if fault == "last gradient of the wrong shape":
        last._grad_var = mc.Variable(numpy.zeros(last.shape + (1,),
                                                 numpy.float32))
    elif fault == "NaN in debug mode":
        last.grad[...] = numpy.nan
    elif fault == "hyperparameter set to a str":
        name = next(iter(optimizer.hyperparam.__dict__))
        setattr(optimizer, name, "0.1")
    else:
        def hook(opt):
            raise RuntimeError("hook: refuses")
        optimizer.add_hook(hook, name="refuses")
    before = _params(model)
    t = optimizer.t
    with mc.using_config("debug", fault == "NaN in debug mode"):
        with pytest.raises((TypeError, ValueError, RuntimeError)):
            optimizer.update()
    _assert_params_equal(model, before)
    assert optimizer.t == t


def test_failed_lossfun_changes_no_parameter():
    optimizer = mc.optimizers.SGD(lr=0.1)
    model, x = _model_and_optimizer(optimizer)
    before = _params(model)

    def lossfun(x):
        return model(x)  # not a scalar: backward refuses

    with pytest.raises(RuntimeError, match="no gradient was set"):
        optimizer.update(lossfun, x)
    _assert_params_equal(model, before)


def test_failed_backward_gives_back_the_seed_set_by_hand():
    a = mc.Variable(f32(1, 2))
    h, = FailsInBackward().apply((a * 2,))
    h.grad = f32(5, 6)
    with pytest.raises(ArithmeticError):
        h.backward()
    numpy.testing.assert_array_equal(h.grad, f32(5, 6))


def test_failed_mc_backward_gives_back_every_output_gradient():
    a = mc.Variable(f32(1, 2))
    y1 = a * 3
    y2, = FailsInBackward().apply((a * 2,))
    y1.grad, y2.grad = f32(1, 1), f32(2, 2)
    with pytest.raises(ArithmeticError):
        mc.backward([y1, y2])
    numpy.testing.assert_array_equal(y1.grad, f32(1, 1))
    numpy.testing.assert_array_equal(y2.grad, f32(2, 2))
    assert a.grad is None


def test_mc_backward_consumes_nothing_when_a_later_output_is_refused():
    a = mc.Variable(f32(1, 2))
    y1, y2 = a * 3, a * 4
    y1.grad = f32(1, 1)
    y2._grad_var = mc.Variable(f32(1, 1, 1))  # wrong shape, past the setter
    with pytest.raises(ValueError, match="Shape of data and grad mismatch"):
        mc.backward([y1, y2])
    numpy.testing.assert_array_equal(y1.grad, f32(1, 1))
    y2.grad = f32(1, 1)
    mc.backward([y1, y2])
    numpy.testing.assert_array_equal(a.grad, f32(7, 7))
    assert y1.grad is None and y2.grad is None  # consumed by a pass that ran


# ----- failures inside forget's nested backward passes ---------------------------
def _breaks_in_recomputed_backward(h):
    """A block whose backward fails (in forget's recomputed graph)."""
    return FailsInBackward().apply((h,))[0]


@pytest.mark.parametrize("outside_first", [True, False])
def test_failed_inner_pass_leaves_a_shared_leaf_as_it_was(outside_first):
    # p is used outside forget and inside it. The inner pass takes over the
    # outer pass's running sum for p; when the inner pass fails, p still
    # gets back exactly the gradient it had before the call.
    p = mc.Variable(f32(1, 2))
    p.grad = f32(10, 10)
    x = mc.Variable(f32(0.5, 0.5))
    y = F.forget(lambda a: F.tanh(_breaks_in_recomputed_backward(a)) * p, x)
    outside, inside = F.sum(p * 3), F.sum(y)
    loss = outside + inside if outside_first else inside + outside
    with pytest.raises(ArithmeticError):
        loss.backward()
    numpy.testing.assert_array_equal(p.grad, f32(10, 10))
    assert x.grad is None


def test_failed_segment_leaves_gradients_of_later_segments_as_they_were():
    # checkpoint_sequential: the last segments' backward passes finish (and
    # write their parameters' gradients) before the first segment's fails;
    # the failed backward as a whole still changes no gradient.
    weights = [mc.Variable(numpy.full((2,), 0.5 + k, numpy.float32))
               for k in range(3)]
    for w in weights:
        w.grad = f32(7, 7)
    blocks = [lambda h: _breaks_in_recomputed_backward(h) * weights[0],
              lambda h: F.tanh(h) * weights[1],
              lambda h: F.tanh(h) * weights[2]]
    x = mc.Variable(f32(0.25, 0.75))
    y = mc.checkpoint_sequential(blocks, 3, x)
    with pytest.raises(ArithmeticError):
        F.sum(y).backward()
    for w in weights:
        numpy.testing.assert_array_equal(w.grad, f32(7, 7))
    assert x.grad is None
    # Nothing was spoiled: a backward through an equivalent healthy graph
    # adds to the old gradients as usual.
    h = x
    for w in weights:
        h = F.tanh(h) * w
    F.sum(h).backward()
    assert all(not numpy.array_equal(w.grad, f32(7, 7)) for w in weights)


def test_note_names_buffers_written_by_a_segment_that_finished():
    # The last segment's pass adds into w2's own buffer and ends; the first
    # segment's pass then fails. The note names w2 too (and w0, written
    # before the failure inside the failing pass), not only what the
    # failing pass touched.
    weights = [mc.Parameter(numpy.full((2,), 0.5 + k, numpy.float32),
                            name="w{}".format(k)) for k in range(3)]
    for w in weights:
        w.zerograd()
    blocks = [lambda h: _breaks_in_recomputed_backward(h) * weights[0],
              lambda h: F.tanh(h) * weights[1],
              lambda h: F.tanh(h) * weights[2]]
    x = mc.Variable(f32(0.25, 0.75))
    y = mc.checkpoint_sequential(blocks, 3, x)
    with pytest.raises(ArithmeticError) as info:
        F.sum(y).backward()
    message = str(info.value)
    assert message.count("Parameters in place:") == 1
    named = message.split("Parameters in place: ")[1].split(".")[0]
    assert set(named.split(", ")) == {"w0", "w1", "w2"}


@pytest.mark.gpu
@pytest.mark.skipif(not mc.backend.available, reason="needs CuPy and a GPU")
def test_mixing_devices_fails_before_anything_is_linked():
    import cupy
    x = mc.Variable(f32(1, 2))
    g = mc.Variable(cupy.ones(2, cupy.float32))
    before = snapshot(x)
    with pytest.raises(TypeError, match="incompatible array types"):
        x * g
    assert_untouched([x], before)
    assert g.creator_node is None
    assert live_nodes_holding([x, g]) == []


def test_refused_array_assignment_leaves_the_variable_as_it_was():
    x = mc.Variable(f32(1, 2))
    before = snapshot(x)
    with pytest.raises(TypeError, match="Variable.array"):
        x.array = [3.0, 4.0]
    assert_untouched([x], before)
    assert x.node.shape == (2,) and x.node.dtype == numpy.float32


def test_refused_creator_leaves_the_graph_as_it_was():
    x = mc.Variable(f32(1, 2))
    y = x * 2
    creator, rank = y.creator_node, y.rank
    with pytest.raises(TypeError, match="creator must be a FunctionNode"):
        y.creator = "f"
    assert y.creator_node is creator and y.rank == rank
    F.sum(y).backward()
    numpy.testing.assert_array_equal(x.grad, f32(2, 2))


# ----- context managers left by an exception -------------------------------------
def test_context_managers_restore_their_state_when_the_block_raises():
    import tracemalloc
    was_tracing = tracemalloc.is_tracing()
    hook = mc.FunctionHook()
    with pytest.raises(ZeroDivisionError):
        with mc.using_config("debug", True), mc.no_backprop_mode(), hook, \
                mc.memory.measure():
            F.tanh(mc.Variable(f32(1, 2)))
            1 / 0
    assert mc.config.debug is False and mc.config.enable_backprop is True
    assert hook.name not in mc.get_function_hooks()
    assert mc.get_function_hooks() == {}
    assert tracemalloc.is_tracing() == was_tracing
    # Everything works as before afterwards.
    x = mc.Variable(f32(1, 2))
    F.sum(x * x).backward()
    numpy.testing.assert_array_equal(x.grad, f32(2, 4))


def test_a_failed_forward_inside_measure_leaves_it_usable():
    with pytest.raises(InvalidType):
        with mc.memory.measure():
            F.tanh(mc.Variable(numpy.ones(2, numpy.int32)))
    with mc.memory.measure() as m:
        F.tanh(mc.Variable(f32(1, 2)))
    assert m.timeline[0] == ("start", 0) and m.timeline[-1][0] == "end"
    assert any(event == "forward:Tanh" for event, _ in m.timeline)
