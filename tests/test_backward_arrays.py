"""FunctionNode.backward_arrays: when the engine uses it, and that it agrees
with the Variable-based backward it stands in for."""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.function_hook import FunctionHook
from minichain.function_node import FunctionNode

# Tests of the fast path's own shortcuts (see tests/conftest.py).
pytestmark = pytest.mark.fast_path


class Twice(FunctionNode):
    """``2 x``, recording which backward ran."""

    def __init__(self, calls, arrays=None):
        self.calls = calls
        if arrays is not None:
            self.result = arrays

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        self.calls.append("backward")
        return grad_outputs[0] * 2.0,

    def backward_arrays(self, indexes, grad_outputs):
        self.calls.append("arrays")
        return getattr(self, "result", (grad_outputs[0] * 2,))


def _x():
    return mc.Variable(numpy.arange(3, dtype=numpy.float32))


def test_plain_backward_uses_the_arrays():
    calls, x = [], _x()
    y = Twice(calls).apply((x,))[0]
    y.grad = numpy.ones(3, numpy.float32)
    y.backward()
    assert calls == ["arrays"]
    assert x.grad.tolist() == [2, 2, 2] and x.grad.dtype == numpy.float32
    assert isinstance(x.grad_var, mc.Variable)


def test_grad_uses_the_arrays():
    calls, x = [], _x()
    y = Twice(calls).apply((x,))[0]
    gx, = mc.grad([F.sum(y)], [x])
    assert calls == ["arrays"] and gx.array.tolist() == [2, 2, 2]


def test_double_backprop_uses_backward():
    calls, x = [], _x()
    y = Twice(calls).apply((x,))[0]
    F.sum(y * y).backward(enable_double_backprop=True)
    assert calls == ["backward"]
    assert x.grad_var.creator is not None  # a graph was recorded


@pytest.mark.parametrize("where", ["global", "local"])
def test_a_hook_sees_the_nodes_of_backward(where):
    calls, x = [], _x()
    node = Twice(calls)
    y = node.apply((x,))[0]
    hook = FunctionHook()
    if where == "global":
        with hook:
            F.sum(y).backward()
    else:
        node.add_hook(hook)
        F.sum(y).backward()
    assert calls == ["backward"]
    assert x.grad.tolist() == [2, 2, 2]


@pytest.mark.parametrize("bad", [[numpy.ones(3)], (numpy.ones(3), None),
                                 (1.0,)])
def test_a_wrong_result_is_named(bad):
    x = _x()
    y = Twice([], arrays=bad).apply((x,))[0]
    with pytest.raises(TypeError, match="Twice.*backward_arrays"):
        F.sum(y).backward()


def _losses():
    rng = numpy.random.RandomState(0)
    x = rng.uniform(0.5, 1.5, (4, 3)).astype(numpy.float32)
    w = rng.uniform(-1, 1, (2, 3)).astype(numpy.float32)
    b = rng.uniform(-1, 1, 2).astype(numpy.float32)
    t = numpy.array([0, 1, 1, 0], numpy.int32)
    return x, w, b, {
        "mul": lambda v: v[0] * v[0],
        "mul_constant": lambda v: v[0] * 1.5,
        "sin": lambda v: F.sin(v[0]),
        "cos": lambda v: F.cos(v[0]),
        "exp": lambda v: F.exp(v[0]),
        "log": lambda v: F.log(v[0]),
        "tanh": lambda v: F.tanh(v[0]),
        "relu": lambda v: F.relu(v[0] - 1.0),
        "linear": lambda v: F.linear(v[0], v[1], v[2]),
        "softmax_cross_entropy": lambda v: F.softmax_cross_entropy(
            F.linear(v[0], v[1], v[2]), t),
    }


@pytest.mark.parametrize("name", sorted(_losses()[3]))
def test_arrays_and_variables_give_the_same_gradients(name):
    x, w, b, losses = _losses()

    def gradients(hooked):
        v = [mc.Variable(a.copy()) for a in (x, w, b)]
        loss = F.sum(losses[name](v))
        if hooked:  # a hook makes the engine use the Variable backward
            with FunctionHook():
                loss.backward()
        else:
            loss.backward()
        return [None if u.grad is None else u.grad for u in v]

    for fast, reference in zip(gradients(False), gradients(True)):
        assert (fast is None) == (reference is None)
        if fast is not None:
            assert fast.dtype == reference.dtype == numpy.float32
            numpy.testing.assert_allclose(fast, reference, rtol=1e-6)


# ----- the array path of a plain backward, and its rarer cases ---------------
def test_a_function_with_nothing_to_differentiate_is_passed_over():
    calls = []
    x = mc.Variable(numpy.arange(3, dtype=numpy.float32), requires_grad=False)
    y = Twice(calls).apply((x,))[0]
    y.grad = numpy.ones(3, numpy.float32)
    y.backward()  # y's creator is reached from the seed, but has no target
    assert calls == [] and x.grad is None


def test_a_none_gradient_leaves_the_input_without_one():
    calls, x = [], _x()
    y = Twice(calls, arrays=(None,)).apply((x,))[0]
    F.sum(y).backward()
    assert calls == ["arrays"] and x.grad is None


def test_a_debug_forward_is_named_when_its_backward_arrays_fails():
    x = _x()
    with mc.using_config("debug", True):
        y = Twice([], arrays=[numpy.ones(3)]).apply((x,))[0]
    loss = F.sum(y)
    with pytest.raises(TypeError, match="(?s)backward_arrays.*Stacktrace"):
        loss.backward()  # backward itself runs outside debug mode
    assert x.grad is None


def test_a_gradient_of_the_wrong_shape_is_named_on_the_array_path():
    x = _x()
    y = Twice([], arrays=(numpy.ones(4, numpy.float32),)).apply((x,))[0]
    with pytest.raises(ValueError, match="Twice"):
        F.sum(y).backward()
    assert x.grad is None


@pytest.mark.parametrize("name", sorted(_losses()[3]))
@pytest.mark.parametrize("general", ["retain_grad", "debug", "grad"])
def test_a_plain_backward_and_the_other_modes_agree(name, general):
    # A plain backward runs on bare arrays; retain_grad, debug mode and
    # grad() keep more bookkeeping. Same arrays in, same numbers out.
    x, w, b, losses = _losses()

    def gradients(how):
        v = [mc.Variable(a.copy()) for a in (x, w, b)]
        loss = F.sum(losses[name](v))
        if how == "plain":
            loss.backward()
            return [u.grad for u in v]
        if how == "grad":
            return [None if g is None else g.array
                    for g in mc.grad([loss], v)]
        with mc.using_config("debug", how == "debug"):
            loss.backward(retain_grad=how == "retain_grad")
        return [u.grad for u in v]

    for plain, general_ in zip(gradients("plain"), gradients(general)):
        assert (plain is None) == (general_ is None)
        if plain is not None:
            numpy.testing.assert_array_equal(plain, general_)
