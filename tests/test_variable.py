"""Variable: construction, attributes, printing, gradients, graph surgery,
operators and ``backward`` (chainer-semantics §1)."""
import operator
import warnings

import numpy
import pytest

import minichain as mc
from minichain import Variable


def f32(value):
    return numpy.asarray(value, dtype=numpy.float32)


def f64(value):
    return numpy.asarray(value, dtype=numpy.float64)


# ----- constructor (§1.1) ----------------------------------------------------
@pytest.mark.parametrize("data", [1, 1.5, [1.0, 2.0], numpy.float32(1), "a"])
def test_constructor_rejects_non_arrays(data):
    with pytest.raises(TypeError, match=type(data).__name__) as info:
        Variable(data)
    # Chainer's text starts with a stray " or"; ours names what is expected.
    assert str(info.value).startswith("Variable: data must be a NumPy or CuPy")


def test_constructor_accepts_none_and_arrays():
    assert Variable().array is None
    x = Variable(f32([1, 2]), name="x")
    assert x.name == "x" and x.node.name == "x"


def test_requires_grad_must_be_bool():
    with pytest.raises(TypeError, match="bool"):
        Variable(f32(1), requires_grad=1)


def test_volatile_is_rejected_and_points_to_no_backprop_mode():
    with pytest.raises(ValueError, match="no_backprop_mode"):
        Variable(f32(1), volatile=True)


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError):
        Variable(f32(1), colour="red")


def test_constructor_grad_is_wrapped_without_validation():
    g = f32([3, 4])
    assert Variable(f32([1, 2]), grad=g).grad is g
    x = Variable(f32([1, 2]), grad=f64([1, 2, 3]))
    assert x.grad.shape == (3,)  # not validated, as in Chainer


# ----- array, data, shape (§1.2–§1.4) ----------------------------------------
def test_array_and_data_are_the_same_object():
    a = f32([1, 2])
    x = Variable(a)
    assert x.array is a and x.data is a


@pytest.mark.parametrize("attr", ["array", "data"])
def test_assigning_the_array_updates_node_shape_and_dtype(attr):
    x = Variable(numpy.zeros((3, 2), numpy.float32))
    new = numpy.zeros((2, 4), numpy.float64)
    setattr(x, attr, new)
    assert x.array is new and x.data is new
    assert x.shape == (2, 4) and x.node.shape == (2, 4)
    assert x.dtype == numpy.float64 and x.node.dtype == numpy.float64


def test_assigning_the_array_replaces_retained_data():
    x = Variable(f32([1, 2]))
    x.node.retain_data()
    new = f32([3, 4, 5])
    x.array = new
    assert x.node.data is new


def test_shape_ndim_size_dtype_come_from_the_array():
    x = Variable(numpy.zeros((2, 3), numpy.float32))
    assert (x.shape, x.ndim, x.size, x.dtype) == ((2, 3), 2, 6, numpy.float32)
    assert len(x) == 2


@pytest.mark.parametrize("attr", ["shape", "ndim", "size", "dtype"])
def test_empty_variable_has_no_shape(attr):
    with pytest.raises(AttributeError):
        getattr(Variable(), attr)


def test_len_of_zero_dim_variable_is_a_type_error():
    with pytest.raises(TypeError, match="unsized"):
        len(Variable(f32(1)))


# ----- name, label, printing (§1.5) ------------------------------------------
def test_repr_and_str():
    x = Variable(f64([1, 2]), name="x")
    assert repr(x) == "variable x([1., 2.])"
    # str carries the name too, as in Chainer (this used to pin a str
    # without it, which was a mistake of the semantics notes, §1.5).
    assert str(x) == "variable x([1. 2.])"
    assert repr(Variable()) == "variable(None)"
    assert str(Variable()) == "variable(None)"


def test_summary_names_the_variable_or_its_address():
    assert Variable(f32(1), name="x").summary() == "<variable x>"
    y = Variable(f32(1))
    assert y.summary() == "<variable at {:#x}>".format(id(y))


@pytest.mark.parametrize("shape, label", [
    ((2, 5), "(2, 5), float32"),
    ((), "float32"),
    ((1,), "(1), float32"),
])
def test_label(shape, label):
    assert Variable(numpy.zeros(shape, numpy.float32)).label == label


def test_name_is_stored_on_the_node():
    x = Variable(f32(1))
    x.name = "w"
    assert x.node.name == "w"


# ----- grad and grad_var (§1.6) ----------------------------------------------
def test_grad_is_the_array_of_grad_var():
    x = Variable(f32([1, 2]))
    g = f32([3, 4])
    x.grad = g
    assert x.grad is g and x.grad_var.array is g
    assert x.grad_var.requires_grad


@pytest.mark.parametrize("bad", [[1.0, 2.0], numpy.float32(1), 1.0])
def test_grad_rejects_non_arrays(bad):
    x = Variable(f32([1, 2]))
    with pytest.raises(TypeError, match="Type of grad is invalid"):
        x.grad = bad
    assert x.grad is None


def test_grad_rejects_wrong_dtype_and_shape():
    x = Variable(f32([1, 2]))
    with pytest.raises(TypeError, match="Dtype of data and grad mismatch"):
        x.grad = f64([1, 2])
    with pytest.raises(ValueError, match="Shape of data and grad mismatch"):
        x.grad = f32([1, 2, 3])
    with pytest.raises(TypeError):
        x.grad_var = Variable(f64([1, 2]))
    with pytest.raises(ValueError):
        x.grad_var = Variable(f32([1]))


def test_none_grad_is_always_accepted():
    x = Variable(f32([1, 2]), grad=f32([1, 1]))
    x.grad = None
    assert x.grad is None
    x.grad_var = None
    assert x.grad_var is None


def test_grad_var_keeps_identity():
    x = Variable(f32([1, 2]))
    gv = Variable(f32([1, 1]))
    x.grad_var = gv
    assert x.grad_var is gv


def test_cleargrad():
    x = Variable(f32([1, 2]), grad=f32([1, 1]))
    x.cleargrad()
    assert x.grad_var is None


def test_zerograd_is_deprecated_and_zeros_in_place():
    x = Variable(f32([1, 2]))
    with pytest.warns(DeprecationWarning, match="cleargrad"):
        x.zerograd()
    numpy.testing.assert_array_equal(x.grad, [0, 0])
    buffer = x.grad
    buffer += 3
    x.grad_var.creator_node = mc.FunctionNode()
    with pytest.warns(DeprecationWarning):
        x.zerograd()
    assert x.grad is buffer and not buffer.any()
    assert x.grad_var.creator_node is None
    empty = Variable()
    with pytest.warns(DeprecationWarning):
        empty.zerograd()
    assert empty.grad is None


# ----- requires_grad (§1.7) --------------------------------------------------
def test_requires_grad_is_read_only():
    x = Variable(f32(1))
    with pytest.raises(AttributeError):
        x.requires_grad = False


def test_requires_grad_false_never_receives_a_gradient():
    x = Variable(f32(2), requires_grad=False)
    w = Variable(f32(3))
    (x * w).backward()
    assert x.grad is None and w.grad == 2


def test_outputs_require_grad_if_any_input_does_even_without_backprop():
    a = Variable(f32(1), requires_grad=False)
    b = Variable(f32(1))
    assert not (a + a).requires_grad
    assert (a + b).requires_grad
    with mc.no_backprop_mode():
        y = a + b
    assert y.requires_grad and y.creator is None


def test_array_operand_becomes_input_without_gradient():
    x = Variable(f32([1, 2]))
    y = x + f32([3, 4])
    assert not y.creator.inputs[1].requires_grad


# ----- creator and rank (§1.8) -----------------------------------------------
def test_user_variable_is_a_root():
    x = Variable(f32(1))
    assert x.rank == 0 and x.creator is None and x.creator_node is None


@pytest.mark.parametrize("attr", ["creator", "creator_node"])
def test_setting_the_creator_sets_the_rank(attr):
    v = Variable()
    f = mc.FunctionNode()
    setattr(v, attr, f)
    assert v.creator_node is f and v.rank == 1
    f2 = mc.FunctionNode()
    f2.rank = 4
    setattr(v, attr, f2)
    assert v.rank == 5


@pytest.mark.parametrize("attr", ["creator", "creator_node"])
def test_setting_creator_to_none_unchains_and_keeps_rank(attr):
    x = Variable(f32(2))
    y = (x * x) * x
    rank = y.rank
    setattr(y, attr, None)
    assert y.creator is None and y.rank == rank == 2


def test_creator_is_the_old_style_function_and_creator_node_its_adapter():
    x = Variable(f32([1, 2]))
    f = mc.functions.Identity()
    y = f(x)
    assert y.creator is f
    assert type(y.creator_node).__name__ == "FunctionAdapter"
    v = Variable()
    v.creator = mc.functions.Identity()
    assert type(v.creator_node).__name__ == "FunctionAdapter"


# ----- operators (§1.9) ------------------------------------------------------
def test_ndarray_op_variable_gives_a_variable_with_the_variable_dtype():
    x = Variable(f32([1, 2]))
    for y in (f64([1, 1]) + x, f64([1, 1]) * x, f64([3, 3]) - x,
              f64([1, 1]) / x, x + f64([1, 1])):
        assert isinstance(y, Variable) and y.dtype == numpy.float32


def test_scalar_constants_keep_the_variable_dtype():
    x = Variable(f32([1, 2]))
    for y in (x + 1, 1 + x, x - 2.5, 2.5 - x, x * numpy.float64(2),
              x / 3, 3 / x, x ** 2, 2 ** x, -x, abs(x)):
        assert y.dtype == numpy.float32


def test_integer_variable_times_float_casts_the_constant():
    x = Variable(numpy.array([1, 2]))
    numpy.testing.assert_array_equal((x * 2.5).array, [2, 4])


def test_unary_plus_returns_self():
    x = Variable(f32(1))
    assert (+x) is x


def test_other_operand_types_are_rejected():
    x = Variable(f32([1, 2]))
    with pytest.raises(TypeError, match="list"):
        x + [1]
    with pytest.raises(TypeError, match="Value must be a scalar"):
        x * "a"


def test_dtype_mismatch_between_variables_is_invalid_type():
    x = Variable(f32([1, 2]))
    with pytest.raises(mc.type_check.InvalidType) as info:
        x + Variable(f64([1, 2]))
    assert str(info.value) == (
        "\nInvalid operation is performed in: _ + _ (Forward)\n\n"
        "Expect: lhs.dtype == rhs.dtype\nActual: float32 != float64")


def test_integer_product_needs_float_kind():
    x = Variable(numpy.array([1, 2]))
    with pytest.raises(mc.type_check.InvalidType,
                       match="lhs.dtype.kind == f\nActual: i != f"):
        x * Variable(numpy.array([3, 4]))


def test_broadcast_gradient_is_summed_back_to_each_operand():
    a = Variable(f32([1, 2, 3]))
    b = Variable(numpy.ones((2, 3), numpy.float32))
    y = a + b
    y.grad = numpy.ones((2, 3), numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(a.grad, [2, 2, 2])
    numpy.testing.assert_array_equal(b.grad, numpy.ones((2, 3)))


@pytest.mark.parametrize("symbol, compare", [
    ("==", operator.eq), ("!=", operator.ne), ("<", operator.lt),
    ("<=", operator.le), (">", operator.gt), (">=", operator.ge)])
def test_comparisons_raise(symbol, compare):
    x = Variable(f32(1))
    with pytest.raises(TypeError, match="Variables do not support {} operator"
                       .format(symbol)):
        compare(x, x)


def test_bool_and_hash_raise():
    x = Variable(f32(1))
    with pytest.raises(TypeError, match="cannot be evaluated as Python bool"):
        bool(x)
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


# ----- unchain, unchain_backward (§1.12–§1.13) -------------------------------
def test_unchain_makes_a_leaf_that_receives_the_gradient():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    rank = h.rank
    h.unchain()
    assert h.creator is None and h.rank == rank
    y.backward()
    assert h.grad == 12 and x.grad is None


def test_unchain_backward_makes_every_ancestor_a_root():
    x = Variable(f64(2))
    a = x * 2
    b = a + 1
    c = b * a
    functions = [a.creator, b.creator, c.creator]
    c.unchain_backward()
    for v in (a, b, c):
        assert v.creator is None
    for f in functions:
        assert f.inputs is None
    c.backward()
    assert x.grad is None and c.grad == 1


# ----- backward (§1.14) ------------------------------------------------------
def test_backward_seeds_one_and_consumes_the_output_gradient():
    x = Variable(f64(2))
    y = x * x
    y.backward()
    assert x.grad == 4 and y.grad is None


def test_backward_with_retain_grad_puts_the_same_gradient_object_back():
    x = Variable(f64(2))
    y = x * x
    gy = Variable(f64(1))
    y.grad_var = gy
    y.backward(retain_grad=True)
    assert y.grad_var is gy


def test_leaf_gradients_accumulate_into_a_new_variable():
    x = Variable(f64(2))
    y = x * x
    y.backward()
    first = x.grad_var
    y.backward()
    assert x.grad == 8 and x.grad_var is not first and first.array == 4


def test_non_scalar_output_without_grad_is_a_clear_error():
    x = Variable(f32([1, 2]))
    y = x * 2
    with pytest.raises(RuntimeError, match="no gradient was set"):
        y.backward()
    y.grad = f32([1, 1])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [2, 2])
    assert y.grad is None
    with pytest.raises(RuntimeError, match="no gradient was set"):
        y.backward()  # the gradient was consumed


def test_one_element_output_warns_and_zero_dim_does_not():
    x = Variable(f32([2]))
    with pytest.warns(DeprecationWarning, match="only one element"):
        (x * x).backward()
    assert x.grad.shape == (1,) and x.grad[0] == 4
    z = Variable(f32(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (z * z).backward()
    assert z.grad == 4


def test_retain_grad_false_leaves_intermediate_grads_alone():
    x = Variable(f64(2))
    h = x * 3
    h.grad = f64(100)
    y = h * h
    y.backward()
    assert h.grad == 100 and x.grad == 36


def test_retain_grad_true_fills_intermediates_and_the_output():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    y.backward(retain_grad=True)
    assert h.grad == 12 and y.grad == 1 and x.grad == 36


def test_loss_scale_scales_leaf_gradients_and_is_recorded():
    x = Variable(f64(2))
    y = x * x
    y.backward(loss_scale=10)
    assert x.grad == 40 and x._loss_scale == 10


def test_loss_scale_does_not_scale_a_preset_output_gradient():
    x = Variable(f64(2))
    y = x * x
    y.grad = f64(1)
    y.backward(loss_scale=10)
    assert x.grad == 4


def test_loss_scale_recorded_on_intermediates_with_retain_grad():
    x = Variable(f64(2))
    h = x * 3
    y = h * h
    y.backward(retain_grad=True, loss_scale=2)
    assert h.grad == 24 and h._loss_scale == 2


def test_backward_on_a_leaf_gives_it_one():
    v = Variable(f64(5))
    v.backward()
    assert v.grad == 1


def test_backward_from_a_no_backprop_output_does_not_reach_inputs():
    x = Variable(f64(5))
    with mc.no_backprop_mode():
        y = x * 2
    y.backward()
    assert y.grad == 1 and x.grad is None


def test_double_backprop():
    x = Variable(f64(2))
    y = x ** 3
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    assert gx.array == 12 and gx.creator is not None
    x.cleargrad()
    gx.backward()
    assert x.grad == 12  # 6x


def test_without_double_backprop_the_gradient_has_no_creator():
    x = Variable(f64(2))
    (x ** 3).backward()
    assert x.grad_var.creator is None


def test_backward_runs_with_enable_backprop_equal_to_the_flag():
    seen = []

    class Spy(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0].copy(),

        def backward(self, indexes, grad_outputs):
            seen.append(mc.config.enable_backprop)
            return grad_outputs

    for flag in (False, True):
        x = Variable(f64(1))
        Spy().apply((x,))[0].backward(enable_double_backprop=flag)
    assert seen == [False, True]


def test_backward_of_an_empty_variable_is_an_error():
    with pytest.raises(RuntimeError):
        Variable().backward()


def test_array_methods_build_the_graph():
    x = Variable(numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
    assert x.T.shape == (3, 2) and x.T.creator is not None
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((6,)).shape == (6,)
    assert x.transpose().shape == (3, 2)
    assert x.transpose(1, 0).shape == (3, 2)
    assert x[0].shape == (3,) and x[:, 1].creator.label == "GetItem"
    assert x[1, 2].item() == 5.0
    m = x.mean()
    assert m.shape == () and m.array == 2.5
    m.backward()
    numpy.testing.assert_allclose(x.grad, numpy.full((2, 3), 1 / 6))
