"""The backward engine's part of Chainer 7.8.1's
``tests/chainer_tests/test_variable.py``, ported.

``Variable.backward`` on chains of old-style functions (which gradients are
written, which are left alone, with and without ``retain_grad``),
``backward_accumulate`` under every aliasing of its inputs, ``unchain`` and
``unchain_backward``, setting a creator, the gradient type checks, the
errors a wrong backward raises (with the line that applied the function in
debug mode), double backprop through old-style functions, ``loss_scale`` and
``lazy_grad_sum``. The rest of that file (devices, copies, printing,
``Parameter`` initialisers, ``addgrad``) is not the engine's and is left out,
as are the CuPy, iDeep and ChainerX variants.
"""

import inspect
import itertools
import warnings
from unittest import mock

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.functions import Identity


# ----- TestBackwardAccumulate: MulAdd under every aliasing of its inputs -----
class MulAdd(mc.FunctionNode):
    """``a * b + c`` whose backward adds into the gradients given to it."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b, c = inputs
        return a * b + c,

    def backward_accumulate(self, indexes, grad_outputs, grad_inputs):
        a, b = self.get_retained_inputs()
        g, = grad_outputs
        totals = []
        for i, so_far in zip(indexes, grad_inputs):
            if i == 0:
                totals.append(g * b if so_far is None else muladd(g, b, so_far))
            elif i == 1:
                totals.append(a * g if so_far is None else muladd(a, g, so_far))
            else:
                totals.append(g if so_far is None else g + so_far)
        return tuple(totals)


def muladd(a, b, c):
    return MulAdd().apply((a, b, c))[0]


KINDS = ["array", "variable", "variable-with-grad"]
CASES = ([((0, 1, 2), kinds) for kinds in itertools.product(KINDS, repeat=3)]
         + [(mapping, kinds) for mapping in [(0, 0, 1), (0, 1, 0), (0, 1, 1)]
            for kinds in itertools.product(KINDS, repeat=2)]
         + [((0, 0, 0), (kind,)) for kind in KINDS])


@pytest.mark.parametrize("mapping, kinds", CASES)
def test_backward_accumulate_agrees_with_plain_operators(mapping, kinds):
    rng = numpy.random.RandomState(0)
    data = [rng.randn(3).astype(numpy.float32) for _ in kinds]
    grads = [rng.randn(3).astype(numpy.float32) for _ in kinds]
    gy = rng.randn(3).astype(numpy.float32)

    def make_inputs():
        # Chainer's helper builds every Variable with a gradient (a slip in
        # its copy); here "variable" means no gradient yet, as its
        # parameter names say.
        return [x.copy() if kind == "array" else mc.Variable(
            x.copy(), grad=g.copy() if kind == "variable-with-grad" else None)
            for x, g, kind in zip(data, grads, kinds)]

    inputs = make_inputs()
    y = muladd(*[inputs[i] for i in mapping])
    y.grad = gy
    y.backward()

    plain = make_inputs()
    a, b, c = [plain[i] for i in mapping]
    y2 = mc.as_variable(a * b + c)
    y2.grad = gy
    y2.backward()

    for x, x2, kind in zip(inputs, plain, kinds):
        if kind != "array":
            numpy.testing.assert_allclose(x.grad, x2.grad, atol=1e-4,
                                          rtol=1e-4)


# ----- TestVariableNode ------------------------------------------------------
def test_a_node_refuses_a_grad_argument():
    with pytest.raises(ValueError):
        mc.VariableNode(mc.Variable(), "", grad=None)


# ----- TestVariable: backward on chains of old-style functions ---------------
class Constant(mc.Function):
    """Outputs fixed arrays; its backward gives zeros for every input."""

    def __init__(self, outputs):
        self.values = outputs

    def forward_cpu(self, inputs):
        return self.values

    def backward_cpu(self, inputs, grad_outputs):
        return tuple(numpy.zeros_like(x) for x in inputs)


@pytest.fixture(params=[(10,), ()], ids=["vector", "scalar"])
def shape(request):
    return request.param


def chain(shape, length):
    """``length`` Constant functions in a row; the last output has a
    gradient of zeros set. Returns every Variable, input first."""
    rng = numpy.random.RandomState(1)
    v = mc.Variable(rng.uniform(-1, 1, shape).astype(numpy.float32))
    a = rng.uniform(0.1, 10, shape).astype(numpy.float32)
    ret = [v]
    for _ in range(length):
        v = Constant((a,))(v)
        ret.append(v)
    v.grad = numpy.zeros_like(v.array)
    return ret


def check_backward(inputs, intermediates, outputs, retain_grad):
    """Backward from each output writes the inputs' gradients; with
    ``retain_grad`` also the intermediates' (and the outputs keep the
    gradient they were given); without it the intermediates are left as
    they were and the outputs' gradients are used up."""
    before = [h.grad_var for h in intermediates]
    given = [y.grad_var for y in outputs]
    for y in outputs:
        y.backward(retain_grad)
    assert all(x.grad_var is not None for x in inputs)
    if retain_grad:
        assert all(h.grad_var is not None for h in intermediates)
        assert all(y.grad_var is g for y, g in zip(outputs, given))
    else:
        assert all(h.grad_var is g for h, g in zip(intermediates, before))
        assert all(y.grad_var is None for y in outputs)


@pytest.mark.parametrize("retain_grad", [False, True])
def test_backward_along_a_chain(shape, retain_grad):
    ret = chain(shape, 2)
    check_backward((ret[0],), (ret[1],), (ret[2],), retain_grad)


@pytest.mark.parametrize("retain_grad", [False, True])
def test_backward_leaves_a_gradient_set_on_an_intermediate(shape, retain_grad):
    ret = chain(shape, 3)
    ret[1].grad = ret[3].grad
    check_backward((ret[0],), (ret[1], ret[2]), (ret[3],), retain_grad)


def test_backward_gives_a_gradient_of_the_input_shape(shape):
    x = mc.Variable(numpy.ones(shape, numpy.float32))
    y = x * x
    y.grad = numpy.zeros_like(y.array)
    y.backward()
    assert x.grad_var.shape == shape


def test_double_backprop_of_a_cube(shape):
    x = mc.Variable(numpy.random.uniform(-1, 1, shape).astype(numpy.float32))
    y = x * x * x
    y.grad = numpy.ones_like(y.array)
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    x.grad_var = None
    gx.grad = numpy.ones_like(x.array)
    gx.backward()
    numpy.testing.assert_allclose(x.grad, 6 * x.array, rtol=1e-5)


def test_backward_skips_a_function_whose_inputs_need_no_gradient(shape):
    class NeverBackward(Identity):
        def backward(self, inputs, grad_outputs):
            raise AssertionError("backward ran for inputs that need no "
                                 "gradient")

    x = mc.Variable(numpy.ones(shape, numpy.float32))
    y1, y2 = NeverBackward()(x, x)
    x.node.requires_grad = False
    y1.grad = numpy.ones_like(y1.array)
    y1.backward()


def test_unchain_keeps_the_rank_and_makes_a_leaf(shape):
    ret = chain(shape, 3)
    rank = ret[1].rank
    ret[1].unchain()
    assert ret[1].creator is None
    assert ret[1].rank == rank
    check_backward((ret[1],), (ret[2],), (ret[3],), False)


def test_unchain_one_half_of_a_split():
    x = mc.Variable(numpy.ones(10, numpy.float32))
    x.grad = numpy.zeros_like(x.array)
    y1, y2 = F.split_axis(x, [5], axis=0)
    y1.unchain()
    z1, z2 = F.sum(y1), F.sum(y2)
    w = z1 + z2
    for v in (y1, y2, z1, z2, w):
        v.grad = numpy.zeros_like(v.array)
    check_backward((x, y1), (y2, z1, z2), (w,), False)


@pytest.mark.parametrize("attribute", ["creator", "creator_node"])
def test_setting_the_creator_to_none_keeps_the_rank(shape, attribute):
    ret = chain(shape, 3)
    rank = ret[1].rank
    setattr(ret[1], attribute, None)
    assert ret[1].creator is None and ret[1].creator_node is None
    assert ret[1].rank == rank
    check_backward((ret[1],), (ret[2],), (ret[3],), False)


def test_setting_the_creator_back_restores_the_rank(shape):
    ret = chain(shape, 2)
    rank = ret[1].rank
    node = ret[1].creator_node
    ret[1].creator = None
    assert ret[1].creator is None and ret[1].rank == rank
    ret[1].node.rank = -1
    ret[1].creator_node = node
    assert ret[1].creator_node is node
    assert ret[1].rank == node.rank + 1
    check_backward((ret[0],), (ret[1],), (ret[2],), False)


def test_a_fresh_old_style_creator():
    v = mc.Variable()
    f = mc.Function()
    v.creator = f
    assert v.creator is f
    assert v.creator_node is f.node
    assert v.rank == 1


def test_a_fresh_creator_node():
    v = mc.Variable()
    f = mc.FunctionNode()
    v.creator_node = f
    assert v.creator is f and v.creator_node is f
    assert v.rank == 1


@pytest.mark.parametrize("retain_grad", [False, True])
def test_unchain_backward_makes_leaves_behind_a_variable(shape, retain_grad):
    ret = chain(shape, 3)
    ret[1].unchain_backward()
    check_backward((ret[1],), (ret[2],), (ret[3],), retain_grad)


def test_a_gradient_of_the_right_type_is_accepted():
    a = mc.Variable(numpy.empty(3, numpy.float32))
    a.grad = numpy.ndarray((3,), numpy.float32)


@pytest.mark.parametrize("shape, value, error", [
    ((), numpy.float32(), TypeError),  # a NumPy scalar, not an array
    ((3,), numpy.empty(3, numpy.float64), TypeError),
    ((3,), numpy.empty(2, numpy.float32), ValueError),
], ids=["scalar", "dtype", "shape"])
def test_a_gradient_of_the_wrong_type_is_refused(shape, value, error):
    a = mc.Variable(numpy.empty(shape, numpy.float32))
    with pytest.raises(error):
        a.grad = value


@pytest.mark.parametrize("fill", [False, True])
def test_cleargrad_forgets_the_gradient(fill):
    a = mc.Variable(numpy.empty(3, numpy.float32))
    if fill:
        a.grad = numpy.full(3, numpy.nan, numpy.float32)
    a.cleargrad()
    assert a.grad is None


# ----- TestVariableSetCreator ------------------------------------------------
def test_set_creator_and_set_creator_node_put_the_rank_one_above():
    f = mc.Function()
    f.node.rank = 10
    x = mc.Variable(numpy.zeros((2, 5), numpy.float32))
    x.set_creator(f)
    assert x.creator is f and x.rank == 11
    x = mc.Variable(numpy.zeros((2, 5), numpy.float32))
    x.set_creator_node(f.node)
    assert x.creator_node is f.node and x.rank == 11


# ----- TestVariableBackwardError ---------------------------------------------
def dummy(gradient, retain):
    """An old-style function labelled ``dummy_function`` whose backward
    returns ``gradient``."""

    class Dummy(mc.Function):
        label = "dummy_function"

        def forward(self, inputs):
            if not retain:
                self.retain_inputs(())
            return numpy.array(1, numpy.float32),

        def backward(self, inputs, grad_outputs):
            return gradient

    return Dummy()


@pytest.mark.parametrize("retain", [True, False])
@pytest.mark.parametrize("gradient, error", [
    ([1], TypeError),
    ((numpy.array([1], numpy.int32),), TypeError),
    ((numpy.array([1, 2], numpy.float32),), ValueError),
], ids=["type", "dtype", "shape"])
def test_a_wrong_gradient_is_reported_with_the_label(gradient, error, retain):
    x = mc.Variable(numpy.array([1], numpy.float32))
    y = dummy(gradient, retain)(x)
    with pytest.raises(error, match="dummy_function"):
        y.backward()


# ----- TestVariableBackwardErrorTraceback ------------------------------------
@pytest.fixture
def debug():
    with mc.using_config("debug", True):
        yield


def test_debug_mode_names_the_line_that_applied_the_function(debug):
    x = mc.Variable(numpy.array([1], numpy.float32))
    line = inspect.currentframe().f_lineno + 1
    y = dummy((numpy.array([1, 2], numpy.float32),), True)(x)  # this line
    with pytest.raises(ValueError) as info:
        y.backward()
    assert "Stacktrace" in str(info.value)
    assert "line {}".format(line) in str(info.value)


def test_debug_mode_names_the_line_of_a_numpy_error(debug):
    x = mc.Variable(numpy.array(0.0))
    line = inspect.currentframe().f_lineno + 1
    y = F.sqrt(x)  # this line
    with pytest.raises(FloatingPointError, match="line {}".format(line)):
        with numpy.errstate(divide="raise"):
            y.backward()


def test_debug_mode_stops_at_a_nan_output_gradient(debug):
    x = mc.Variable(numpy.array([1], numpy.float32))
    y = F.identity(x)
    y.grad = numpy.array([numpy.nan], numpy.float32)
    with pytest.raises(RuntimeError):
        y.backward()


def test_debug_mode_lets_integer_gradients_through(debug):
    x = mc.Variable(numpy.array([1]))
    y = F.identity(x)
    y.grad = numpy.array([0])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [0])


# ----- TestVariableDoubleBackward (and its one-element variant) --------------
class IdentityFunction(mc.Function):
    def forward(self, inputs):
        return inputs

    def backward(self, inputs, grad_outputs):
        return grad_outputs


@pytest.mark.parametrize("shape", [(), (1,)], ids=["scalar", "one-element"])
def test_a_new_style_gradient_can_be_backpropagated(shape):
    x = mc.Variable(numpy.full(shape, 42, numpy.float32))
    y = x * 2
    with warnings.catch_warnings():
        # a one-element output that is not 0-d warns, as in Chainer
        warnings.simplefilter("ignore", DeprecationWarning)
        y.backward(retain_grad=True)
        assert x.grad_var is not y.grad_var
        assert x.grad_var.creator is None
        x.grad_var.backward()
    assert y.grad_var.grad_var is None


def old_style_graph(shape, through_new_style):
    x = mc.Variable(numpy.full(shape, 42, numpy.float32))
    z = F.identity(x) if through_new_style else x
    y = IdentityFunction()(z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        y.backward(enable_double_backprop=True)
    return x, y


@pytest.mark.parametrize("shape", [(), (1,)], ids=["scalar", "one-element"])
@pytest.mark.parametrize("through_new_style", [False, True])
def test_an_old_style_gradient_cannot_be_backpropagated(shape,
                                                        through_new_style):
    x, y = old_style_graph(shape, through_new_style)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(RuntimeError):
            x.grad_var.backward()


@pytest.mark.parametrize("shape", [(), (1,)], ids=["scalar", "one-element"])
@pytest.mark.parametrize("through_new_style", [False, True])
def test_grad_of_an_old_style_gradient_is_refused(shape, through_new_style):
    x, y = old_style_graph(shape, through_new_style)
    with pytest.raises(RuntimeError):
        mc.grad([x.grad_var], [y.grad_var])


# ----- TestLossScale ---------------------------------------------------------
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
@pytest.mark.parametrize("loss_scale", [None, 1, 10])
def test_loss_scale_multiplies_the_gradients(dtype, loss_scale):
    rng = numpy.random.RandomState(2)
    x = mc.Variable(rng.uniform(-1, 1, (4, 3, 2)).astype(dtype))
    y = mc.Variable(rng.uniform(-1, 1, (4, 3, 2)).astype(dtype))
    F.sum(x * y).backward(loss_scale=loss_scale)
    if loss_scale is not None:
        x.grad /= loss_scale
        y.grad /= loss_scale
    tol = dict(rtol=1e-1, atol=1e-2) if dtype == numpy.float16 else dict(
        rtol=1e-4, atol=1e-5)
    numpy.testing.assert_allclose(y.grad, x.array, **tol)
    numpy.testing.assert_allclose(x.grad, y.array, **tol)


# ----- TestLazyGradSum -------------------------------------------------------
def mocked_node(output, gradients):
    f = mc.FunctionNode()
    f.check_type_forward = mock.MagicMock()
    f.forward_cpu = mock.MagicMock(return_value=(output,))
    f.retain_outputs((0,))
    f.backward = mock.MagicMock(return_value=gradients)
    return f


@pytest.mark.parametrize("lazy", [False, True])
def test_three_branches_sum_the_same_with_or_without_lazy_grad_sum(lazy):
    rng = numpy.random.RandomState(3)

    def draw():
        return rng.uniform(-1, 1, (2, 3)).astype(numpy.float32)

    firsts = [mc.Variable(draw()) for _ in range(3)]
    branches = [mocked_node(draw(), (g,)) for g in firsts]
    last = mocked_node(draw(), tuple(mc.Variable(draw()) for _ in range(3)))
    x = mc.Variable(draw())
    with mc.using_config("lazy_grad_sum", lazy):
        y0 = F.identity(x)
        hs = [f.apply((y0,))[0] for f in branches]
        y, = last.apply(hs)
        y.grad = numpy.ones(y.shape, y.dtype)
        y.backward()
    want = firsts[0].array + firsts[1].array + firsts[2].array
    numpy.testing.assert_allclose(x.grad, want, atol=1e-3, rtol=1e-2)
