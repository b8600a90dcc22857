"""The per-op hot path: what it must keep doing while it does less.

``FunctionNode.apply`` and the backward step run once per operation, so
they read as little as they can (see docs/benchmarks.md). These tests
attack each shortcut: the type-check gate that no longer reads
``__dict__``, the hooks read as one thread-local attribute, the constant
operators that test their result's type themselves, the engine asking
a class's ``backward_accumulate`` only when it has one, the common cases
``apply`` and ``_walk`` write out inline (each built both ways and
compared, and fed what a wrong ``backward_arrays`` returns), and the
constant of ``x * c`` kept as a read-only 0-d array.
"""

import gc
import threading
from contextlib import nullcontext

import numpy as np
import pytest

import minichain as mc
import minichain.functions as F
from minichain import function_hook
from minichain.functions.math.basic_math import AddConstant, MulConstant
from minichain.utils import type_check

# Tests of the fast path's own shortcuts (see tests/conftest.py).
pytestmark = pytest.mark.fast_path


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


# ----- apply's common case, written out: one Variable in, one array out --------
# ``apply`` handles a plain Variable as its only input, and a single ndarray as
# its only output, without the general helpers. Each test builds the same node
# both ways (a Parameter input, or a list of two outputs, takes the general
# way) and asks that nothing tells them apart.

class _Scale(mc.FunctionNode):
    """``y = k x``; with ``twice``, returns ``(y, y)`` (the general way)."""

    def __init__(self, k=3.0, twice=False, retain=False):
        self.k, self.twice, self.retain = k, twice, retain

    def forward(self, inputs):
        if self.retain:
            self.retain_inputs((0,))
            self.retain_outputs((0,))
        y = inputs[0] * self.k
        return (y, y.copy()) if self.twice else (y,)

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * self.k,


def _state(x, node, y):
    """What apply wrote, in terms both ways can be compared by."""
    created = node.inputs is not None
    return {
        "rank": node.rank, "y.rank": y.node.rank,
        "inputs": created and node.inputs[0] is x.node,
        "outputs": created and [r() for r in node.outputs] == [y.node],
        "creator": y.creator_node is (node if created else None),
        "requires_grad": y.requires_grad, "array": y.array.tolist(),
        "dtype": y.dtype, "retained": [
            n.data is not None for n in (node.inputs or ())] + [
            y.node.data is not None],
        "lazy": node.lazy_grad_sum,
    }


@pytest.mark.parametrize("config", [
    {}, {"enable_backprop": False}, {"lazy_grad_sum": True},
    {"type_check": False}, {"debug": True}])
@pytest.mark.parametrize("retain", [False, True])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_one_variable_in_builds_what_the_general_way_builds(
        config, retain, requires_grad):
    deep = mc.Variable(np.arange(3, dtype=np.float32))
    for _ in range(4):  # a rank above 0, to see it carried
        deep = deep * 2.0
    plain = mc.Variable(deep.array.copy())
    param = mc.Parameter(deep.array.copy())  # a Parameter: the general way
    for x in (plain, param):  # the same place in a graph for both
        x.node.set_creator_node(deep.creator_node)
        x.node.requires_grad = requires_grad
    made = []
    with mc.using_config(*next(iter(config.items()))) if config else \
            nullcontext():
        for x in (plain, param):
            node = _Scale(retain=retain)
            made.append(_state(x, node, node.apply((x,))[0]))
    assert made[0] == made[1]
    recorded = config != {"enable_backprop": False}
    assert (made[0]["rank"], made[0]["y.rank"]) == ((4, 5) if recorded
                                                    else (0, 0))


def test_the_common_case_still_refuses_a_second_apply_and_a_bad_output():
    x = mc.Variable(np.ones(2, dtype=np.float32))
    node = _Scale()
    node.apply((x,))
    with pytest.raises(RuntimeError, match="cannot be applied twice"):
        node.apply((x,))

    class Scalar(mc.FunctionNode):  # a NumPy scalar is not an array output
        def forward(self, inputs):
            return inputs[0].sum(),

    with pytest.raises(TypeError, match="tuple of ndarrays"):
        Scalar().apply((x,))
    before = (x.node.rank, x.creator_node, x.grad)
    assert before == (0, None, None)  # the input is as it was


def test_the_common_case_runs_hooks_and_the_type_check():
    seen = []

    class Watch(mc.FunctionHook):
        name = "Watch"

        def forward_preprocess(self, function, in_data):
            seen.append(("pre", function.label, len(in_data)))

        def forward_postprocess(self, function, in_data):
            seen.append(("post", function.label, len(in_data)))

    class Picky(_Scale):
        def check_type_forward(self, in_types):
            type_check.expect(in_types[0].dtype == np.float64)

    x = mc.Variable(np.ones(2, dtype=np.float32))
    with Watch():
        _Scale().apply((x,))
    assert seen == [("pre", "_Scale", 1), ("post", "_Scale", 1)]
    with pytest.raises(type_check.InvalidType):
        Picky().apply((x,))
    node = _Scale()
    node.add_hook(Watch())
    seen.clear()
    node.apply((x,))
    assert [s[0] for s in seen] == ["pre", "post"]


def test_two_outputs_and_one_output_give_the_same_first_output():
    x = mc.Variable(np.arange(4, dtype=np.float32))
    one, = _Scale().apply((x,))
    first, second = _Scale(twice=True).apply((x,))
    assert one.array.tolist() == first.array.tolist() == second.array.tolist()
    assert one.node.rank == first.node.rank == second.node.rank == 1
    F.sum(first + second).backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0, 3.0, 3.0])


# ----- the backward step's common case, written out --------------------------
# ``_walk`` calls ``backward_arrays`` itself when no graph is recorded, no
# hook watches and the class keeps the default ``backward_accumulate``; all
# else goes through ``_call_backward``. What ``backward_arrays`` returns is
# checked either way, and an error names the line that applied the function.

class _ArraysReturn(mc.FunctionNode):
    """``2 x``, whose ``backward_arrays`` returns what it is told to."""

    def __init__(self, give):
        self.give = give

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2.0,

    def backward_arrays(self, indexes, grad_outputs):
        return self.give(grad_outputs[0] * 2)


@pytest.mark.parametrize("give, expected", [
    (lambda g: [g], TypeError),        # a list, not a tuple
    (lambda g: (g, g), TypeError),     # two gradients for one target
    (lambda g: (), TypeError),         # none
    (lambda g: g, TypeError),          # the array, without the comma
    (lambda g: None, TypeError),
    (lambda g: ([1.0],), TypeError),   # not an array
])
def test_what_backward_arrays_returns_is_checked(give, expected):
    x = mc.Variable(np.ones(3, dtype=np.float32))
    y, = _ArraysReturn(give).apply((x,))
    with pytest.raises(expected, match="_ArraysReturn"):
        F.sum(y).backward()
    assert x.grad is None  # nothing was written


def test_an_error_in_backward_arrays_names_the_line_that_applied_it():
    def fail(g):
        raise ZeroDivisionError("boom")

    x = mc.Variable(np.ones(3, dtype=np.float32))
    with mc.using_config("debug", True):
        y, = _ArraysReturn(fail).apply((x,))  # the stack is recorded here
    # backward outside debug mode: the inline call is taken, and the error
    # still carries the stack, as Chainer's does
    with pytest.raises(ZeroDivisionError) as info:
        F.sum(y).backward()
    message = str(info.value)
    assert "boom" in message and "Stacktrace of the function" in message
    assert "test_an_error_in_backward_arrays_names_the_line" in message
    assert message.count("Stacktrace of the function") == 1


def test_a_wrong_shape_from_backward_arrays_carries_the_stack_once():
    x = mc.Variable(np.ones(3, dtype=np.float32))
    with mc.using_config("debug", True):
        y, = _ArraysReturn(lambda g: (g[:2],)).apply((x,))
        with pytest.raises(ValueError) as info:
            F.sum(y).backward()
    assert str(info.value).count("Stacktrace of the function") == 1
    assert "shape of gradients returned from backward is incorrect" in str(
        info.value)


def test_backward_arrays_switched_off_on_the_class_falls_back(monkeypatch):
    x = mc.Variable(np.arange(3, dtype=np.float32))
    F.sum(x * 2.5).backward()  # the inline call has run for MulConstant
    expected = x.grad.copy()
    x.cleargrad()
    calls = []
    original = MulConstant.backward

    def counted(self, indexes, grad_outputs):
        calls.append(1)
        return original(self, indexes, grad_outputs)

    monkeypatch.setattr(MulConstant, "backward_arrays", None)
    monkeypatch.setattr(MulConstant, "backward", counted)
    F.sum(x * 2.5).backward()
    assert calls == [1]
    np.testing.assert_array_equal(x.grad, expected)


# ----- the constant of ``x * c`` as a read-only 0-d array -----------------------
NUMBERS = [2.5, -0.0, 0.0, 3, -7, 1e-3, float("inf")]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64,
                                   np.int32, np.int64])
@pytest.mark.parametrize("op", ["mul", "add", "sub", "rsub", "div", "rdiv",
                                "pow", "rpow"])
def test_a_constant_gives_the_numbers_of_numpy_with_its_cast(dtype, op):
    forms = {"mul": lambda a, c: a * c, "add": lambda a, c: a + c,
             "sub": lambda a, c: a - c, "rsub": lambda a, c: c - a,
             "div": lambda a, c: a / c, "rdiv": lambda a, c: c / a,
             "pow": lambda a, c: a ** c, "rpow": lambda a, c: c ** a}
    form = forms[op]
    floats = np.dtype(dtype).kind == "f"
    if not floats and op in ("div", "rdiv", "pow", "rpow"):
        return  # integer division and powers: other nodes, other rules
    values = np.array([0.5, 1.0, 2.0, 3.0], dtype=dtype) if floats else \
        np.array([1, 2, 3, 4], dtype=dtype)
    for number in NUMBERS:
        if not floats and (isinstance(number, float)
                           and not np.isfinite(number)):
            continue
        cast = np.dtype(dtype).type(number)
        with np.errstate(all="ignore"):
            if op == "div" and cast != 0:  # x * (1 / c), as in Chainer
                expected = values * (1 / cast)
            else:
                expected = form(values, cast)
            got = form(mc.Variable(values.copy()), number).array
        assert got.dtype == expected.dtype
        assert got.tobytes() == expected.tobytes(), (op, number, dtype)


def test_the_shared_constant_cannot_be_written_through_a_node():
    x = mc.Variable(np.ones(3, dtype=np.float32))
    first = (x * 2.5).creator_node
    second = (x * 2.5).creator_node
    assert first.value is second.value  # one cast, shared by both nodes
    with pytest.raises(ValueError, match="read-only"):
        first.value[...] = 100.0
    assert (x * 2.5).array.tolist() == [2.5, 2.5, 2.5]
    assert first.label == "_ * 2.5" and (x + -1.0).creator_node.label == \
        "_ + (-1)"


def test_each_dtype_gets_its_own_constant():
    a = mc.Variable(np.full(2, 0.1, dtype=np.float32))
    b = mc.Variable(np.full(2, 0.1, dtype=np.float64))
    for _ in range(3):  # the cache alternates between the two dtypes
        ya, yb = a * 0.1, b * 0.1
        assert ya.dtype == np.float32 and yb.dtype == np.float64
        assert ya.creator_node.value.dtype == np.float32
        assert yb.creator_node.value.dtype == np.float64
        assert yb.array.tolist() == [0.1 * 0.1] * 2


def test_a_constant_for_another_array_type_stays_a_scalar():
    # CuPy multiplies by a scalar but refuses a NumPy array: the 0-d array
    # is made only for a NumPy input.
    from minichain.functions.math.basic_math import _constant

    class OtherArray:
        pass

    scalar = np.float32(2.5)
    assert _constant(scalar, OtherArray()) is scalar
    made = _constant(scalar, np.ones(2, dtype=np.float32))
    assert type(made) is np.ndarray and made.shape == () and \
        not made.flags.writeable


def test_the_remembered_constant_follows_the_type_of_array():
    # The operator remembers its last cast; an input of another array type
    # (CuPy's, on a GPU; here a NumPy subclass stands in for it) with the
    # same number and dtype must not get the NumPy 0-d array made for the
    # previous input, but its own constant.
    class OtherArray(np.ndarray):
        pass

    plain = mc.Variable(np.ones(2, dtype=np.float32))
    other = mc.Variable(np.ones(2, dtype=np.float32).view(OtherArray))
    for _ in range(2):
        assert type((plain * 2.5).creator_node.value) is np.ndarray
        assert type((other * 2.5).creator_node.value) is np.float32
        assert type((plain + 2.5).creator_node.value) is np.ndarray
