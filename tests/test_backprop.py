"""The backward engine, ``mc.grad`` and ``mc.backward`` (chainer-semantics §5)."""
import gc
import warnings
import weakref

import numpy
import pytest

import minichain as mc
from graph_helpers import traced  # tests/graph_helpers.py
from minichain import FunctionNode, Parameter, Variable


def f64(value):
    return numpy.asarray(value, dtype=numpy.float64)


# ----- order and accumulation (§5.2, §5.6) -----------------------------------
def test_heap_order_and_each_backward_once():
    log = []
    x = Variable(f64(1))
    a = traced(log, "a", x)
    b = traced(log, "b", x)
    c = traced(log, "c", a)
    d = traced(log, "d", b, c)
    d.backward()
    assert log == ["d", "c", "b", "a"]
    assert x.grad == 2


def test_equal_ranks_leave_the_heap_in_push_order():
    log = []
    x = Variable(f64(1))
    ys = [traced(log, name, x) for name in "pqr"]
    traced(log, "top", *ys).backward()
    assert log == ["top", "p", "q", "r"]


def test_diamond():
    x = Variable(f64(3))
    a = 2 * x
    b = 3 * x
    (a * b).backward()
    assert x.grad == 36


def test_shared_node_with_two_outputs_runs_once():
    log = []
    x = Variable(f64([1, 2]))
    h = traced(log, "h", x)
    y0 = h * 3
    y1 = h * 4
    mc.backward([y0, y1], [f64([2, 20]), f64([200, 2000])])
    numpy.testing.assert_array_equal(x.grad, [806, 8060])
    assert log == ["h"]


def test_gradients_of_the_middle_are_dropped_once_used():
    # With retain_grad False no intermediate gradient survives the pass.
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    y.backward()
    assert h.grad_var is None and y.grad_var is None


def test_sibling_output_preset_grad_is_not_consumed():
    # Chainer's Variable.backward would add y1's pre-set grad into x.grad
    # and clear it; minichain, like chainer.grad, leaves it alone.
    class Split(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(), inputs[0].copy()

        def backward(self, indexes, grad_outputs):
            g0, g1 = grad_outputs
            total = g0 if g1 is None else g1 if g0 is None else g0 + g1
            return total,

    x = Variable(f64([1, 2]))
    y0, y1 = Split().apply((x,))
    y1.grad = f64([10, 10])
    y0.grad = f64([1, 1])
    y0.backward()
    numpy.testing.assert_array_equal(x.grad, [1, 1])
    numpy.testing.assert_array_equal(y1.grad, [10, 10])


def test_unchained_function_between_forward_and_backward_is_skipped():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    h.creator.unchain()
    y.backward()
    assert x.grad is None


# ----- depth (SPEC §3: no recursion) -----------------------------------------
def test_chain_of_100000_functions_backprops_and_is_freed():
    x = Variable(f64(1))
    y = x
    for _ in range(100000):
        y = y + 1.0
    first = weakref.ref(x.node)  # the graph holds x's node ...
    last = weakref.ref(y.creator)
    y.backward()
    assert x.grad == 1 and y.array == 100001
    del y
    gc.collect()
    assert last() is None  # ... and frees the whole chain afterwards
    assert first() is x.node


def test_graph_of_12000_functions_with_heavy_reuse():
    log = []

    class Hook(mc.FunctionHook):
        name = "count"

        def backward_preprocess(self, function, in_data, out_grad):
            log.append(function)

    x = Variable(f64(0.5))
    h = x
    for _ in range(3000):
        h = (h + h) * 0.5 + (x - x)  # every value is used twice
    with Hook():
        h.backward()
    assert x.grad == 1
    assert len(log) == len(set(log)) == 12000


# ----- Parameter buffers -----------------------------------------------------
def test_parameter_owned_buffer_accumulates_in_place():
    p = Parameter(f64([1, 2]))
    p.zerograd()
    buffer = p.grad
    for _ in range(2):
        y = p * 3
        y.grad = f64([1, 1])
        y.backward()
    assert p.grad is buffer
    numpy.testing.assert_array_equal(buffer, [6, 6])


def test_parameter_grad_set_by_the_user_is_never_written():
    p = Parameter(f64([1, 2]))
    mine = f64([1, 1])
    p.grad = mine
    y = p * 3
    y.grad = f64([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(mine, [1, 1])
    numpy.testing.assert_array_equal(p.grad, [4, 4])


def test_parameter_buffer_is_not_written_under_double_backprop():
    p = Parameter(f64([1, 2]))
    p.zerograd()
    buffer = p.grad
    y = p * p
    y.grad = f64([1, 1])
    y.backward(enable_double_backprop=True)
    assert not buffer.any()
    numpy.testing.assert_array_equal(p.grad, [2, 4])
    assert p.grad_var.creator is not None


# ----- mc.grad (§5.9) --------------------------------------------------------
def test_grad_leaves_input_grad_unchanged():
    x = Variable(f64(3))
    x.grad = f64(5)
    gx, = mc.grad([x ** 3], [x])
    assert gx.array == 27 and x.grad == 5


def test_grad_set_grad_overwrites():
    x = Variable(f64(3))
    x.grad = f64(5)
    mc.grad([x ** 3], [x], set_grad=True)
    assert x.grad == 27


def test_grad_of_unreachable_input_is_none():
    x, u = Variable(f64(3)), Variable(f64(1))
    assert mc.grad([x * 2], [u]) == [None]
    gx, gu = mc.grad([x * 2], [x, u])
    assert gx.array == 2 and gu is None


def test_grad_inputs_are_added():
    x = Variable(f64(3))
    gx, = mc.grad([x ** 3], [x], grad_inputs=[f64(100)])
    assert gx.array == 127


def test_grad_loss_scale():
    x = Variable(f64(3))
    gx, = mc.grad([x ** 3], [x], loss_scale=2)
    assert gx.array == 54


def test_grad_with_given_output_gradient():
    x = Variable(f64([1, 2]))
    gx, = mc.grad([x * 3], [x], grad_outputs=[f64([1, 10])])
    numpy.testing.assert_array_equal(gx.array, [3, 30])


def test_grad_double():
    x = Variable(f64(3))
    gx, = mc.grad([x ** 3], [x], enable_double_backprop=True)
    ggx, = mc.grad([gx], [x])
    assert gx.array == 27 and ggx.array == 18


def test_grad_with_respect_to_an_intermediate():
    x = Variable(f64(2))
    h = x * 3
    y = h * h + x
    gh, = mc.grad([y], [h])
    assert gh.array == 12 and x.grad is None and h.grad is None


def test_grad_with_respect_to_two_connected_inputs():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    gx, gh = mc.grad([y], [x, h])
    assert gx.array == 36 and gh.array == 12


def test_grad_walks_only_the_needed_subgraph():
    log = []
    x, w = Variable(f64(2)), Variable(f64(5))
    a = traced(log, "a", x)
    b = traced(log, "b", w)
    y = traced(log, "y", a, b)
    mc.grad([y], [x])
    assert log == ["y", "a"]


def test_grad_retain_grad_stores_on_intermediates():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    gx, = mc.grad([y], [x], retain_grad=True, loss_scale=2)
    assert h.grad == 24 and h._loss_scale == 2 and x.grad is None


def test_grad_with_a_deleted_retained_output():
    class TwoOut(FunctionNode):
        def forward(self, inputs):
            self.retain_outputs((0,))
            x, = inputs
            return numpy.asarray(numpy.exp(x)), numpy.asarray(x * 2)

        def backward(self, indexes, grad_outputs):
            y0, = self.get_retained_outputs()
            g0, g1 = grad_outputs
            gx = 0
            if g0 is not None:
                gx = g0 * y0
            if g1 is not None:
                gx = g1 * 2 + gx
            return gx,

    x = Variable(f64(0.0))
    y0, y1 = TwoOut().apply((x,))
    del y0
    gc.collect()
    gx, = mc.grad([y1], [x])
    assert gx.array == 2


def test_grad_after_unchain_of_one_split_branch():
    x = Variable(f64(2))
    a = x * 3
    b = x * 5
    a.unchain()
    gx, = mc.grad([a + b], [x])
    assert gx.array == 5


@pytest.mark.parametrize("call, error, message", [
    (lambda y, x: mc.grad(y, [x]), TypeError,
     "outputs must be a tuple or a list, not"),
    (lambda y, x: mc.grad([y], x), TypeError,
     "inputs must be a tuple or a list, not"),
    (lambda y, x: mc.grad([y], [x], grad_outputs=1), TypeError,
     "grad_outputs must be a tuple or a list or None, not"),
    (lambda y, x: mc.grad([y], [x], grad_inputs=1), TypeError,
     "grad_inputs must be a tuple or a list or None, not"),
    (lambda y, x: mc.grad([y], [x], grad_outputs=[None, None]), ValueError,
     r"grad_outputs must be of the same length as outputs.\n"
     r"len\(outputs\) = 1, len\(grad_outputs\) = 2"),
    (lambda y, x: mc.grad([y], [x], grad_inputs=[None, None]), ValueError,
     "grad_inputs must be of the same length as inputs"),
])
def test_grad_argument_checks(call, error, message):
    x = Variable(f64(1))
    with pytest.raises(error, match=message):
        call(x * 2, x)


# ----- mc.backward (§5.10) ---------------------------------------------------
def test_backward_from_several_outputs_consumes_their_grads():
    log = []
    x = Variable(f64([1, 2]))
    h = traced(log, "h", x)
    y0, y1 = h * 3, h * 4
    y0.grad = f64([2, 20])
    y1.grad = f64([200, 2000])
    mc.backward([y0, y1])
    numpy.testing.assert_array_equal(x.grad, [806, 8060])
    assert log == ["h"] and y0.grad is None and y1.grad is None


def test_backward_duplicate_outputs_use_the_gradient_once():
    x = Variable(f64(1))
    y = x * 3
    y.grad = f64(1)
    with pytest.warns(RuntimeWarning, match="duplicate outputs"):
        mc.backward([y, y])
    assert x.grad == 3


def test_backward_missing_grad_warns_and_sets_no_default():
    x = Variable(f64(1))
    y = x * 3
    with pytest.warns(RuntimeWarning, match="does not set default grad"):
        mc.backward([y])
    assert x.grad is None


@pytest.mark.parametrize("keyword", ["retain_grad", "loss_scale"])
def test_backward_rejects_variable_backward_keywords(keyword):
    x = Variable(f64(1))
    with pytest.raises(TypeError, match=keyword):
        mc.backward([x * 2], **{keyword: 1})


def test_backward_argument_checks():
    x = Variable(f64(1))
    with pytest.raises(TypeError, match="outputs must be a tuple or a list"):
        mc.backward(x)
    with pytest.raises(ValueError, match="same length"):
        mc.backward([x], [f64(1), f64(1)])
    with pytest.raises(TypeError, match="must be a Variable"):
        mc.backward([f64(1)])


def test_backward_double_backprop():
    x = Variable(f64(2))
    y = x ** 3
    y.grad = f64(1)
    mc.backward([y], enable_double_backprop=True)
    gx = x.grad_var
    x.cleargrad()
    gx.backward()
    assert x.grad == 12


def test_no_warning_when_every_output_has_a_grad():
    x = Variable(f64(1))
    y = x * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mc.backward([y], [f64(1)])
    assert x.grad == 3


def test_failed_backward_leaves_leaf_gradients_unchanged():
    class Boom(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            raise ValueError("boom")

    x = Variable(f64(2))
    x.grad = f64(1)
    before = x.grad_var
    y = x * 3 + Boom().apply((x,))[0]  # x * 3 reaches x first
    with pytest.raises(ValueError, match="boom"):
        y.backward()
    assert x.grad_var is before and x.grad == 1
