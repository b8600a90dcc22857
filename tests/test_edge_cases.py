"""The acceptance edge cases of chainer-semantics §13, one test per item.

``test_13_<n>_<what>`` is item n of §13. Most items are also covered in more
depth by the module tests (test_variable.py, test_backprop.py, ...); this
file is the checklist.
"""
import gc
import re
import threading
import warnings

import numpy
import pytest

from graph_helpers import Traced as T  # §13.9 writes these nodes T(...)
import minichain as mc
import minichain.functions as F
from minichain import Function, FunctionNode, Variable, VariableNode
from minichain.utils import type_check

from minichain.computational_graph import build_computational_graph
from minichain.functions import forget


def f32(value):
    return numpy.asarray(value, dtype=numpy.float32)


def f64(value):
    return numpy.asarray(value, dtype=numpy.float64)


def test_13_1_diamond():
    x = Variable(f64(3))
    a = 2 * x
    b = 3 * x
    c = a * b
    c.backward()
    assert x.grad == 36


def test_13_2_repeated_input():
    x = Variable(f64(3))
    (x * x).backward()
    assert x.grad == 6
    x = Variable(f64(3))
    (x + x).backward()
    assert x.grad == 2
    log = []
    x = Variable(f64(3))
    T(log, "f").apply((x, x))[0].backward()
    assert x.grad == 2 and log == ["f"]


def test_13_3_backward_twice_doubles():
    x = Variable(f64(2))
    y = x * x
    y.backward()
    assert x.grad == 4 and y.grad is None
    y.backward()
    assert x.grad == 8 and y.grad is None


def test_13_4_retain_grad():
    x = Variable(f64(2))
    h = 3 * x
    y = h * h
    y.backward()
    assert h.grad is None
    x = Variable(f64(2))
    h = 3 * x
    h.grad = f64(100)
    y = h * h
    y.backward()
    assert h.grad == 100
    x = Variable(f64(2))
    h = 3 * x
    y = h * h
    y.backward(retain_grad=True)
    assert h.grad == 12 and y.grad == 1


def test_13_5_non_scalar_output():
    x = Variable(f32([1, 2]))
    y = x * 2
    with pytest.raises(RuntimeError, match="no gradient was set"):
        y.backward()
    y.grad = f32([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [2, 2])
    assert y.grad is None


def test_13_6_one_element_output_warns():
    x = Variable(f32([3]))
    with pytest.warns(DeprecationWarning, match="one element"):
        (x * 1).backward()
    assert x.grad.shape == (1,) and x.grad[0] == 1
    x = Variable(f32(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * 1).backward()


def test_13_7_no_backprop_mode_and_threads():
    x = Variable(f32(1))
    with mc.no_backprop_mode():
        assert (x + 1).creator is None
        with mc.force_backprop_mode():
            assert (x + 1).creator is not None
        seen = []
        thread = threading.Thread(target=lambda: seen.append((x + 1).creator))
        thread.start()
        thread.join()
        assert seen[0] is not None  # the other thread builds its graph
    assert (x + 1).creator is not None


def test_13_8_rank():
    a, b = Variable(f32(1)), Variable(f32(1))
    fa, fb = FunctionNode(), FunctionNode()
    fb.rank = 2
    a.creator_node, b.creator_node = fa, fb
    assert (a.rank, b.rank) == (1, 3)
    y = T([], "t").apply((a, b))[0]
    assert y.rank == 4
    y.unchain()
    assert y.rank == 4 and y.creator is None


def test_13_9_heap_order():
    log = []
    x = Variable(f64(1))
    a = T(log, "a").apply((x,))[0]
    b = T(log, "b").apply((x,))[0]
    c = T(log, "c").apply((a,))[0]
    d = T(log, "d").apply((b, c))[0]
    d.backward()
    assert log == ["d", "c", "b", "a"]
    log = []
    x = Variable(f64([1, 2]))
    h = T(log, "h").apply((x,))[0]
    y0, y1 = 3 * h, 4 * h
    mc.backward([y0, y1], [f64([2, 20]), f64([200, 2000])])
    numpy.testing.assert_array_equal(x.grad, [806, 8060])
    assert log == ["h"]


def test_13_10_unchain_and_unchain_backward():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    h.unchain()
    y.backward()
    assert h.grad == 12 and x.grad is None
    x = Variable(f64(2))
    a = x * 3
    b = a + 1
    c = a * b
    c.unchain_backward()
    assert all(v.creator is None for v in (a, b, c))


def test_13_11_gradient_validation():
    x = Variable(f32([1, 2]))
    with pytest.raises(TypeError):
        x.grad = f64([1, 2])
    with pytest.raises(ValueError):
        x.grad = f32([1, 2, 3])
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]
    with pytest.raises(TypeError):
        x.grad = numpy.float32(1)

    class BadShape(FunctionNode):
        @property
        def label(self):
            return "bad_shape_label"

        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            return Variable(f32([1, 2, 3])),

    y = BadShape().apply((x,))[0]
    y.grad = f32([1, 1])
    with pytest.raises(ValueError, match="bad_shape_label"):
        y.backward()


def test_13_12_wrong_number_of_gradients():
    class TwoGrads(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            return grad_outputs[0], grad_outputs[0]

    y = TwoGrads().apply((Variable(f32(1)),))[0]
    with pytest.raises(ValueError, match="number of gradients returned from "
                                         "backward is incorrect"):
        y.backward()


def test_13_13_debug_nan():
    x = Variable(f32([1, 2]))
    y = F.identity(x)
    y.grad = f32([numpy.nan, 0])
    y.backward()  # not in debug mode: the NaN just flows
    assert numpy.isnan(x.grad[0])
    with mc.using_config("debug", True):
        x = Variable(f32([1, 2]))
        y = F.identity(x)
        y.grad = f32([numpy.nan, 0])
        with pytest.raises(RuntimeError, match="NaN is detected on backward "
                                               "computation of Identity"):
            y.backward()
        with pytest.raises(RuntimeError, match="NaN is detected on forward "
                                               "computation of log"):
            with numpy.errstate(invalid="ignore"):
                F.log(Variable(f32([-1])))


def test_13_14_invalid_type_exact_text():
    class MyFunc(FunctionNode):
        def check_type_forward(self, in_types):
            type_check.expect(in_types[0].ndim >= 2)

        def forward(self, inputs):
            return inputs[0].copy(),

    with pytest.raises(type_check.InvalidType) as info:
        MyFunc().apply((f32([1, 2]),))
    assert str(info.value) == (
        "\nInvalid operation is performed in: MyFunc (Forward)\n\n"
        "Expect: in_types[0].ndim >= 2\nActual: 1 < 2")
    with mc.using_config("type_check", False):
        y, = MyFunc().apply((f32([1, 2]),))
    assert y.shape == (2,)


class KeepsSecond(FunctionNode):
    """``(a * b, 2a)``; keeps input b and output 0 (enough for backward)."""

    def forward(self, inputs):
        self.retain_inputs((1,))
        self.retain_outputs((0,))
        a, b = inputs
        return numpy.asarray(a * b), numpy.asarray(a * 2)

    def backward(self, indexes, grad_outputs):
        b, = self.get_retained_inputs()
        y0, = self.get_retained_outputs()
        g0, g1 = grad_outputs
        ga = gb = None
        if g0 is not None:
            ga, gb = g0 * b, g0 * y0 / b  # y0 / b is a
        if g1 is not None:
            ga = g1 * 2 if ga is None else ga + g1 * 2
        return ga, gb


def test_13_15_retain_inputs_and_outputs():
    # an input that is not retained is gone once its Variable is
    a, b = Variable(f64(3)), Variable(f64(5))
    f = KeepsSecond()
    f.apply((a, b))
    del a
    gc.collect()
    assert f.inputs[0].data is None and f.inputs[1].data is b.array

    # nothing retained: empty tuples
    class KeepsNothing(FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

    nothing = KeepsNothing()
    nothing.apply((f64(1),))
    assert nothing.get_retained_inputs() == ()
    assert nothing.get_retained_outputs() == ()

    # a retained output whose Variable was deleted is rebuilt in backward
    a = Variable(f64(3))
    f = KeepsSecond()
    y0, y1 = f.apply((a, b))
    del y0
    gc.collect()
    assert f.outputs[0]() is None
    ga, gb = mc.grad([y1], [a, b], grad_outputs=[f64(1)])
    assert ga.array == 2 and gb is None
    rebuilt, = f.get_retained_outputs()
    assert rebuilt.array == 15 and rebuilt.creator is f


def test_13_16_old_style_function():
    class Id(Function):
        def forward(self, inputs):
            return tuple(inputs)

        def backward(self, inputs, grad_outputs):
            self.inputs_seen = inputs
            return grad_outputs[0], None

    a, b = Variable(f32([1, 2])), Variable(f32([3, 4]))
    f = Id()
    y = f(a, b)
    assert type(y) is tuple  # two outputs
    f1 = Id()
    y = f1(a)
    assert isinstance(y, Variable)
    assert f1.inputs[0].data is a.array  # inputs retained by default

    class FirstOnly(Function):
        def forward(self, inputs):
            return inputs[0] + inputs[1],

        def backward(self, inputs, grad_outputs):
            return grad_outputs[0], None

    z = FirstOnly()(a, b)
    z.grad = f32([1, 1])
    z.backward(enable_double_backprop=True)
    assert b.grad is None
    with pytest.raises(RuntimeError, match="cannot twice-differentiate"):
        a.grad_var.backward()

    class Warns(Function):
        def forward(self, inputs):
            self.retain_outputs((0,), retain_after_backward=True)
            return tuple(inputs)

    with pytest.warns(DeprecationWarning):
        Warns()(a)


def test_13_17_applying_twice():
    f = T([], "t")
    x = Variable(f32(1))
    f.apply((x,))
    with pytest.raises(RuntimeError, match="cannot be applied twice"):
        f.apply((x,))


def test_13_18_calling_a_node():
    with pytest.raises(RuntimeError, match=r"apply\(\)"):
        FunctionNode()(Variable(f32(1)))


def test_13_19_grad():
    x = Variable(f64(3))
    x.grad = f64(5)
    y = x ** 3
    gx, = mc.grad([y], [x])
    assert gx.array == 27 and x.grad == 5
    mc.grad([y], [x], set_grad=True)
    assert x.grad == 27
    assert mc.grad([y], [Variable(f64(1))]) == [None]
    assert mc.grad([y], [x], grad_inputs=[f64(100)])[0].array == 127
    assert mc.grad([y], [x], loss_scale=2)[0].array == 54
    gx, = mc.grad([x ** 3], [x], enable_double_backprop=True)
    assert mc.grad([gx], [x])[0].array == 18


@pytest.mark.parametrize("n, ordinal", [(1, "1st"), (2, "2nd"), (3, "3rd"),
                                        (4, "4th"), (11, "11th"),
                                        (12, "12th"), (13, "13th"),
                                        (21, "21st"), (22, "22nd"),
                                        (101, "101st"), (111, "111th"),
                                        (112, "112th")])
def test_13_20_forget_ordinal(n, ordinal):
    # Chainer prints "111st" and "112nd"; minichain writes "111th", "112th".
    x = Variable(f32([1, 2]))
    with pytest.raises(RuntimeError, match="(?<!\\d){}.*int".format(ordinal)):
        forget(lambda v: (v,) * (n - 1) + (1,), x)


def test_13_20_forget_plain_int():
    x = Variable(f32([1, 2]))
    with pytest.raises(RuntimeError, match="int"):
        forget(lambda v: 1, x)


def test_13_21_forget_double_backprop_works():
    # Chainer refuses double backprop through forget; minichain supports it
    # (a deliberate deviation, see docs/chainer-differences.md).
    x = Variable(f64(2))
    y = forget(lambda v: v * v * v, x)
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    assert gx.array == 12  # 3x^2
    x.cleargrad()
    gx.backward()
    assert x.grad == 12  # 6x


def test_13_21_forget_returns_a_variable_for_one_output():
    x = Variable(f32([1, 2]))
    assert isinstance(forget(lambda v: v * 2, x), Variable)
    assert isinstance(forget(lambda v: (v * 2,), x), Variable)
    pair = forget(lambda v: (v * 2, v * 3), x)
    assert type(pair) is tuple and len(pair) == 2


def test_13_21_forget_fills_link_parameter_grads():
    link = mc.links.Linear(2, 3)
    x = Variable(f32([[1, 2]]))
    y = forget(link, x)
    y.grad = numpy.ones((1, 3), numpy.float32)
    y.backward()
    numpy.testing.assert_allclose(link.W.grad, numpy.ones((3, 1)) * [[1, 2]])
    numpy.testing.assert_allclose(link.b.grad, [1, 1, 1])


def test_13_22_hook_order_and_errors():
    events = []

    class Rec(mc.FunctionHook):
        name = "Rec"

        def added(self, function=None):
            events.append("added")

        def deleted(self, function=None):
            events.append("deleted")

        def forward_preprocess(self, function, in_data):
            events.append("fpre " + function.label)

        def forward_postprocess(self, function, in_data):
            events.append("fpost " + function.label)

        def backward_preprocess(self, function, in_data, out_grad):
            events.append("bpre " + function.label)

        def backward_postprocess(self, function, in_data, out_grad):
            events.append("bpost " + function.label)

    x = Variable(f64(2))
    with Rec():
        y = x * 3
        y.backward()
    label = y.creator.label
    assert events == ["added", "fpre " + label, "fpost " + label,
                      "bpre " + label,
                      "fpre " + label, "fpost " + label,  # inside backward
                      "bpost " + label, "deleted"]
    with Rec():
        with pytest.raises(KeyError):
            with Rec():
                pass
    node = T([], "t")
    node.add_hook(Rec())
    with pytest.raises(KeyError):
        node.add_hook(Rec())
    with pytest.raises(TypeError):
        node.add_hook("not a hook")
    with pytest.raises(KeyError):
        node.delete_hook("missing")


def test_13_23_graph_counts_and_dump():
    x1 = Variable(f32([[1, 2]]), name="x1")
    x2 = Variable(f32([[3, 4]]), name="x2")
    x3 = Variable(f32([[5, 6]]), name="x3")
    y = 0.3 * (x1 + x2) + x3
    g = build_computational_graph([y])
    assert len(g.nodes) == 9 and len(g.edges) == 8
    dump = build_computational_graph([y], rankdir="LR").dump()
    assert "rankdir=LR" in dump and 'label="x1: ' in dump
    bare = build_computational_graph([y], remove_variable=True)
    text = bare.dump()
    for node in bare.nodes:
        if isinstance(node, VariableNode):
            ident = bare.node_id(node) if hasattr(bare, "node_id") else str(
                id(node))
            assert not re.search(r"(?<!\w){}(?!\w)".format(re.escape(ident)),
                                 text)


def test_13_24_operator_edge_cases():
    x = Variable(f32([1, 2]))
    y = f64([1, 1]) + x
    assert isinstance(y, Variable) and y.dtype == numpy.float32
    assert (x + f64([1, 1])).dtype == numpy.float32
    with pytest.raises(TypeError):
        x + [1]
    with pytest.raises(TypeError):
        x == x
    with pytest.raises(TypeError):
        bool(x)
    with pytest.raises(TypeError):
        hash(x)


def test_13_25_loss_scale():
    x = Variable(f64(2))
    y = x * x
    y.backward(loss_scale=10)
    assert x.grad == 40 and x._loss_scale == 10
