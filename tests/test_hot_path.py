"""The per-op hot path: what it must keep doing while it does less.

``FunctionNode.apply`` and the backward step run once per operation, so
they read as little as they can (see docs/benchmarks.md). These tests
attack each shortcut: the type-check gate that no longer reads
``__dict__``, the hooks read as one thread-local attribute, the constant
operators that test their result's type themselves, and the engine asking
a class's ``backward_accumulate`` only when it has one.
"""

import gc
import threading

import numpy as np
import pytest

import minichain as mc
import minichain.functions as F
from minichain import function_hook
from minichain.functions.math.basic_math import AddConstant, MulConstant
from minichain.utils import type_check


def _new_objects(run):
    """Objects the collector tracks that ``run()`` left alive, by type."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        before = {id(o) for o in gc.get_objects()}
        kept = run()
        new = [type(o).__name__ for o in gc.get_objects()
               if id(o) not in before]
    finally:
        if was:
            gc.enable()
    del kept
    return new


def test_an_operation_leaves_no_dict_behind():
    # Reading a node's __dict__ makes Python build one: an object more per
    # op for the collector, and slower attribute access after it.
    def chain():
        y = mc.Variable(np.ones(3, dtype=np.float32))
        for i in range(200):
            y = y * 1.5 if i % 2 else y + 0.5
        return y

    new = _new_objects(chain)
    assert new.count("dict") == 0
    assert new.count("VariableNode") >= 200


class _Counted:
    """Counts the calls of ``type_check.invoke_check`` while it is active."""

    def __init__(self, monkeypatch):
        self.calls = 0
        original = type_check.invoke_check

        def counting(node, arrays):
            self.calls += 1
            return original(node, arrays)

        monkeypatch.setattr(type_check, "invoke_check", counting)


class _Checked(mc.FunctionNode):
    def check_type_forward(self, in_types):
        type_check.expect(in_types[0].dtype.kind == "f")

    def forward(self, inputs):
        return inputs[0] * 2,


class _Unchecked(mc.FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,


@pytest.mark.parametrize("cls, on_instance, expected", [
    (_Unchecked, False, 0),     # the default checks nothing: skipped
    (_Checked, False, 1),       # a class's own check runs
    (_Unchecked, True, 1),      # one set on the instance runs
    (_Checked, True, 1),        # ... and replaces the class's
])
def test_the_type_check_gate(monkeypatch, cls, on_instance, expected):
    counted = _Counted(monkeypatch)
    node = cls()
    seen = []
    if on_instance:
        node.check_type_forward = lambda in_types: seen.append(len(in_types))
    node.apply((mc.Variable(np.ones(2)),))
    assert counted.calls == expected
    assert seen == ([1] if on_instance else [])


def test_the_gate_is_off_with_type_check_off(monkeypatch):
    counted = _Counted(monkeypatch)
    with mc.using_config("type_check", False):
        _Checked().apply((mc.Variable(np.ones(2)),))
    assert counted.calls == 0


def test_a_check_set_on_an_instance_still_refuses():
    node = _Unchecked()
    node.check_type_forward = lambda in_types: type_check.expect(
        in_types.size() == 2)
    with pytest.raises(type_check.InvalidType):
        node.apply((mc.Variable(np.ones(2)),))


def test_each_thread_starts_with_no_hooks_of_its_own():
    seen = {}

    class Watch(mc.FunctionHook):
        name = "watch"

        def forward_preprocess(self, function, in_data):
            seen.setdefault(threading.current_thread().name, 0)
            seen[threading.current_thread().name] += 1

    def other_thread():
        seen["hooks there"] = dict(function_hook.get_function_hooks())
        F.exp(mc.Variable(np.ones(2)))

    with Watch():
        F.exp(mc.Variable(np.ones(2)))
        worker = threading.Thread(target=other_thread, name="worker")
        worker.start()
        worker.join()
    assert seen["hooks there"] == {}
    assert seen[threading.current_thread().name] == 1
    assert "worker" not in seen
    assert function_hook.get_function_hooks() == {}


def test_get_function_hooks_is_the_dict_apply_reads():
    assert function_hook.get_function_hooks() is \
        mc.config._view.function_hooks


@pytest.mark.parametrize("make", [lambda x: x * 2.5, lambda x: x + 2.5])
def test_constant_operators_keep_a_0d_result_an_array(make):
    x = mc.Variable(np.array(3.0, dtype=np.float32))
    y = make(x)
    assert type(y.array) is np.ndarray and y.array.shape == ()
    assert y.dtype == np.float32
    y.backward()
    assert type(x.grad) is np.ndarray and x.grad.shape == ()


def test_mul_constant_backward_arrays_gives_an_array_for_0d():
    x = mc.Variable(np.array(3.0, dtype=np.float32))
    node = (x * 2.0).creator_node
    gx, = node.backward_arrays((0,), (np.array(1.0, dtype=np.float32),))
    assert type(gx) is np.ndarray and gx == 2.0 and gx.dtype == np.float32


@pytest.mark.parametrize("cls", [MulConstant, AddConstant])
def test_constant_nodes_agree_with_their_variable_backward(cls):
    rng = np.random.default_rng(0)
    for shape in ((), (3,), (2, 4)):
        x = mc.Variable(rng.uniform(-2, 2, shape).astype(np.float32))
        y, = cls(np.float32(1.75)).apply((x,))
        gy = rng.uniform(-2, 2, shape).astype(np.float32)
        on_arrays, = y.creator_node.backward_arrays((0,), (gy,))
        on_variables, = y.creator_node.backward((0,), (mc.Variable(gy),))
        assert np.array_equal(on_arrays, on_variables.array)
        assert not np.shares_memory(on_arrays, x.array)


class _Accumulating(mc.FunctionNode):
    """``2 x``, with a backward_accumulate that counts its calls."""

    calls = 0

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2.0,

    def backward_arrays(self, indexes, grad_outputs):
        return grad_outputs[0] * 2,

    def backward_accumulate(self, indexes, grad_outputs, grad_inputs):
        type(self).calls += 1
        return super().backward_accumulate(indexes, grad_outputs, grad_inputs)


def test_backward_accumulate_runs_only_when_there_is_a_gradient_to_add_into():
    _Accumulating.calls = 0
    x = mc.Variable(np.ones(3))
    y, = _Accumulating().apply((x,))
    F.sum(y).backward()                       # x has no gradient yet
    assert _Accumulating.calls == 0
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 2.0])
    y, = _Accumulating().apply((x,))
    F.sum(y).backward()                       # now it has one
    assert _Accumulating.calls == 1
    np.testing.assert_array_equal(x.grad, [4.0, 4.0, 4.0])


class _Keeps(mc.FunctionNode):
    """Retains what it is told to: ``apply`` reads one flag for both."""

    def __init__(self, inputs=None, outputs=None):
        self.keep_inputs, self.keep_outputs = inputs, outputs

    def forward(self, inputs):
        if self.keep_inputs is not None:
            self.retain_inputs(self.keep_inputs)
        if self.keep_outputs is not None:
            self.retain_outputs(self.keep_outputs)
        return inputs[0] + inputs[1], inputs[0] * inputs[1]


@pytest.mark.parametrize("keep_inputs, keep_outputs", [
    (None, None), ((1,), None), (None, (1,)), ((0, 1), (0,)), ((), ())])
def test_retained_arrays_are_exactly_those_asked_for(keep_inputs,
                                                     keep_outputs):
    a, b = mc.Variable(np.ones(2)), mc.Variable(np.full(2, 3.0))
    node = _Keeps(keep_inputs, keep_outputs)
    outs = node.apply((a, b))
    kept_in = [i for i, n in enumerate(node.inputs) if n.data is not None]
    assert kept_in == sorted(keep_inputs or ())
    kept_out = [i for i, y in enumerate(outs) if y.node.data is not None]
    assert kept_out == sorted(keep_outputs or ())
    retained = node.get_retained_outputs()
    assert [r.array.tolist() for r in retained] == [
        outs[i].array.tolist() for i in (keep_outputs or ())]
    for i in keep_inputs or ():
        assert node.inputs[i].data is (a, b)[i].array


def test_nothing_is_retained_without_a_graph():
    node = _Keeps((0, 1), (0, 1))
    with mc.no_backprop_mode():
        outs = node.apply((mc.Variable(np.ones(2)), mc.Variable(np.ones(2))))
    assert node.inputs is None and node._retained_output_data is None
    assert all(y.node.data is None for y in outs)
