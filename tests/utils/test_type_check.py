"""Tests for minichain.utils.type_check, grouped by the idea each one checks.

Every expression is checked twice, as the module is meant to be used: what it
prints (that is the error message a user reads) and what it evaluates to.
"""

import builtins
import copy
import itertools
import operator
import pickle
import traceback

import numpy
import pytest

from minichain.utils import type_check as T


def variable(value, name="x"):
    return T.make_variable(value, name)


def failure_message(*conditions):
    """The message of the InvalidType that ``expect(*conditions)`` raises."""
    with pytest.raises(T.InvalidType) as info:
        T.expect(*conditions)
    return str(info.value)


# --- The leaves: constants and variables ------------------------------------


def test_constant_prints_with_repr_and_evaluates_to_itself():
    # Inside an expression a constant prints as Python would write it (as in
    # Chainer): strings keep their quotes, types print as <class ...>.
    assert str(T.Constant(3)) == "3"
    assert T.eval(T.Constant(3)) == 3
    assert str(T.Constant("f")) == "'f'"
    assert str(T.Constant(numpy.float32)) == "<class 'numpy.float32'>"


def test_constant_tuples_and_lists_print_their_items_with_repr():
    assert str(T.Constant((2,))) == "(2,)"
    assert str(T.Constant((2, 3))) == "(2, 3)"
    assert str(T.Constant(())) == "()"
    # NumPy scalars print as their Python value, not NumPy 2's np.int64(2).
    assert str(T.Constant((numpy.int64(2), numpy.int64(3)))) == "(2, 3)"
    assert str(T.Constant([1, "a"])) == "[1, 'a']"


def test_a_checked_comparison_prints_its_plain_sides_with_str():
    # The Expect line words a plain side with str, as Chainer's does.
    kind = variable(numpy.dtype("int32"), "x").kind
    assert str(kind == "f") == "x.kind == 'f'"
    assert failure_message(kind == "f") == "Expect: x.kind == f\nActual: i != f"


def test_variable_prints_its_name_and_evaluates_to_its_value():
    x = variable(10, "x")
    assert str(x) == "x"
    assert T.eval(x) == 10
    assert "x" in repr(x)


def test_eval_leaves_plain_values_alone_and_reaches_into_containers():
    x = variable(10)
    assert T.eval(5) == 5
    assert T.eval([x, (x, 1)]) == [10, (10, 1)]


# --- Attribute access, indexing and calls -----------------------------------


class Box:
    value = 42
    name = "boxed"


def test_getattr_builds_a_node_that_looks_up_lazily():
    x = variable(Box())
    node = x.value
    assert isinstance(node, T.GetAttr)
    assert str(node) == "x.value"
    assert T.eval(node) == 42


def test_getattr_is_free_for_any_public_name_even_name():
    # A node's own fields are private, so ``.name`` is an attribute lookup too.
    node = variable(Box()).name
    assert isinstance(node, T.GetAttr)
    assert T.eval(node) == "boxed"


def test_private_names_are_real_attribute_errors():
    with pytest.raises(AttributeError):
        variable(1)._repr_html_
    with pytest.raises(AttributeError):
        variable(1).__deepcopy_something__


@pytest.mark.parametrize(
    "make_key, text",
    [
        (lambda: 1, "x[1]"),
        (lambda: slice(1, 2), "x[1:2]"),
        (lambda: slice(None, 2), "x[:2]"),
        (lambda: slice(1, None), "x[1:]"),
        (lambda: slice(None), "x[:]"),
        (lambda: slice(None, None, 2), "x[::2]"),
        (lambda: slice(0, 3, 2), "x[0:3:2]"),
        (lambda: (slice(1, 2), Ellipsis), "x[1:2, ...]"),
        (lambda: (1,), "x[1,]"),
        (lambda: Ellipsis, "x[...]"),
    ],
)
def test_getitem_prints_keys_as_written(make_key, text):
    data = numpy.arange(12).reshape(4, 3)
    key = make_key()
    node = variable(data)[key]
    assert isinstance(node, T.GetItem)
    assert str(node) == text
    numpy.testing.assert_array_equal(T.eval(node), data[key])


def test_getitem_key_may_itself_be_an_expression():
    x = variable((5, 6, 7), "x")
    n = variable(1, "n")
    assert str(x[n + 1]) == "x[n + 1]"
    assert T.eval(x[n + 1]) == 7
    assert str(x[n:]) == "x[n:]"
    assert T.eval(x[n:]) == (6, 7)


def test_call_prints_like_python_and_evaluates():
    total = variable(sum, "sum")
    node = total([1, 2, 3])
    assert isinstance(node, T.Call)
    assert str(node) == "sum([1, 2, 3])"
    assert T.eval(node) == 6


def test_call_arguments_may_hold_expressions():
    x = variable(4, "x")
    node = variable(max, "max")(x, [x, 9][1])
    # ``[x, 9][1]`` is a plain list index, done now: it leaves just 9.
    assert str(node) == "max(x, 9)"
    assert T.eval(node) == 9
    node = variable(sum, "sum")([x, 1])
    assert str(node) == "sum([x, 1])"
    assert T.eval(node) == 5


# --- Operators and their parentheses ----------------------------------------

BINARY_OPERATORS = [
    ("+", operator.add),
    ("-", operator.sub),
    ("*", operator.mul),
    ("/", operator.truediv),
    ("//", operator.floordiv),
    ("%", operator.mod),
    ("**", operator.pow),
    ("<<", operator.lshift),
    (">>", operator.rshift),
    ("&", operator.and_),
    ("^", operator.xor),
    ("|", operator.or_),
]


@pytest.mark.parametrize("symbol, function", BINARY_OPERATORS)
def test_binary_operator_prints_and_evaluates(symbol, function):
    x, y = variable(7, "x"), variable(3, "y")
    node = function(x, y)
    assert isinstance(node, T.BinaryOperator)
    assert str(node) == f"x {symbol} y"
    assert T.eval(node) == function(7, 3)


@pytest.mark.parametrize("symbol, function", BINARY_OPERATORS)
def test_binary_operator_with_a_plain_value_on_either_side(symbol, function):
    x = variable(7, "x")
    assert str(function(x, 2)) == f"x {symbol} 2"
    assert T.eval(function(x, 2)) == function(7, 2)
    assert str(function(2, x)) == f"2 {symbol} x"
    assert T.eval(function(2, x)) == function(2, 7)


def test_power_computes_power_not_modulo():
    # Chainer's ``**`` node computes ``%`` (7 % 3 == 1); ours is a real power.
    x, y = variable(7, "x"), variable(3, "y")
    assert T.eval(x**y) == 343
    assert T.eval(x**2) == 49
    assert T.eval(2**y) == 8


@pytest.mark.parametrize(
    "symbol, function, expected",
    [("-", operator.neg, -7), ("+", operator.pos, 7), ("~", operator.invert, -8)],
)
def test_unary_operator_prints_and_evaluates(symbol, function, expected):
    node = function(variable(7, "x"))
    assert isinstance(node, T.UnaryOperator)
    assert str(node) == f"{symbol}x"
    assert T.eval(node) == expected


@pytest.mark.parametrize(
    "build, text",
    [
        (lambda x: x + (x - x), "x + (x - x)"),
        (lambda x: (x + x) - x, "x + x - x"),
        (lambda x: x - (x + x), "x - (x + x)"),
        (lambda x: x * (x + x), "x * (x + x)"),
        (lambda x: x + x * x, "x + x * x"),
        (lambda x: x / (x * x), "x / (x * x)"),
        (lambda x: x**x**x, "x ** x ** x"),
        (lambda x: (x**x) ** x, "(x ** x) ** x"),
        (lambda x: -(x + x), "-(x + x)"),
        (lambda x: -x + x, "-x + x"),
        (lambda x: -(x**x), "-x ** x"),
        (lambda x: (-x) ** x, "(-x) ** x"),
        (lambda x: (x | x) & x, "(x | x) & x"),
        (lambda x: x << x + x, "x << x + x"),
        (lambda x: (x + x).real, "(x + x).real"),
        (lambda x: (-x).real, "(-x).real"),
        (lambda x: T.Constant(-2) ** x, "(-2) ** x"),
        (lambda x: x - T.Constant(-2), "x - -2"),
        (lambda x: x + 1 == 3, "x + 1 == 3"),
        (lambda x: (x == 1) == (x == 2), "(x == 1) == (x == 2)"),
    ],
)
def test_parentheses_follow_python_precedence(build, text):
    assert str(build(variable(3, "x"))) == text


def test_every_nesting_of_two_operators_prints_what_it_computes():
    # The printed form, read back by Python, must compute what the tree does.
    # That only holds if every needed parenthesis (and no wrong one) is there.
    symbols = [symbol for symbol, _ in BINARY_OPERATORS]
    values = {"a": 7, "b": 3, "c": 2}
    a, b, c = (variable(value, name) for name, value in values.items())
    trees = []
    for (_, outer), (_, inner) in itertools.product(BINARY_OPERATORS, repeat=2):
        trees += [outer(inner(a, b), c), outer(a, inner(b, c)), outer(-a, inner(b, c))]
        trees += [-outer(a, b), inner(outer(a, b), outer(b, c))]
    assert len(trees) == 5 * len(symbols) ** 2
    for tree in trees:
        try:
            expected = T.eval(tree)
        except (ZeroDivisionError, TypeError) as error:
            # 7 // 0, or 7 / 3 << 1: the printed form must fail the same way.
            with pytest.raises(type(error)):
                builtins.eval(str(tree), {}, dict(values))
            continue
        assert builtins.eval(str(tree), {}, dict(values)) == expected, str(tree)


def test_numpy_scalars_on_the_left_defer_to_the_expression():
    # Without ``__array_ufunc__ = None`` NumPy would build an object array.
    node = numpy.int64(2) * variable(3, "x")
    assert isinstance(node, T.BinaryOperator)
    assert str(node) == "2 * x"
    assert T.eval(node) == 6


def test_expressions_copy_and_pickle_like_ordinary_objects():
    node = variable(3, "x") + 1
    assert str(copy.deepcopy(node)) == "x + 1"
    restored = pickle.loads(pickle.dumps(node))
    assert str(restored) == "x + 1"
    assert T.eval(restored) == 4


# --- Comparisons and expect --------------------------------------------------


@pytest.mark.parametrize(
    "build, expect_text, actual_text",
    [
        (lambda x: x == 2, "x == 2", "1 != 2"),
        (lambda x: x != 1, "x != 1", "1 == 1"),
        (lambda x: x < 1, "x < 1", "1 >= 1"),
        (lambda x: x <= 0, "x <= 0", "1 > 0"),
        (lambda x: x > 1, "x > 1", "1 <= 1"),
        (lambda x: x >= 2, "x >= 2", "1 < 2"),
    ],
)
def test_failed_comparison_reports_values_with_the_inverse_operator(
    build, expect_text, actual_text
):
    condition = build(variable(1, "x"))
    assert isinstance(condition, T.Testable)
    assert str(condition) == expect_text
    with pytest.raises(T.InvalidType) as info:
        T.expect(condition)
    assert info.value.expect == expect_text
    assert info.value.actual == actual_text
    assert str(info.value) == f"Expect: {expect_text}\nActual: {actual_text}"


@pytest.mark.parametrize(
    "build", [lambda x: x == 1, lambda x: x != 2, lambda x: x < 2,
              lambda x: x <= 1, lambda x: x > 0, lambda x: x >= 1]
)
def test_holding_comparison_passes_and_evaluates_to_true(build):
    condition = build(variable(1, "x"))
    assert T.eval(condition) is True
    assert T.expect(condition) is None


def test_reflected_comparison_is_printed_from_the_expression_side():
    # Python turns ``2 < x`` into ``x > 2`` before we ever see it.
    condition = 2 < variable(1, "x")
    assert str(condition) == "x > 2"
    assert failure_message(condition) == "Expect: x > 2\nActual: 1 <= 2"


def test_expect_stops_at_the_first_failure_in_order():
    x = variable(1, "x")
    message = failure_message(x == 1, x == 5, x == 6)
    assert message == "Expect: x == 5\nActual: 1 != 5"


def test_expect_never_evaluates_conditions_after_a_failure():
    # ``shape[1]`` of a 1-d input would raise IndexError if it were evaluated.
    (t,) = T.get_types([numpy.zeros(3)])
    message = failure_message(t.ndim >= 2, t.shape[1] == 3)
    assert message == "Expect: in_types[0].ndim >= 2\nActual: 1 < 2"


def test_expect_accepts_plain_bools():
    assert T.expect(True, numpy.bool_(True)) is None
    with pytest.raises(T.InvalidType) as info:
        T.expect(True, False)
    assert (info.value.expect, info.value.actual) == ("True", "False")
    assert str(info.value) == "Expect: True\nActual: False"


def test_expect_rejects_things_that_are_not_conditions():
    with pytest.raises(TypeError, match="comparisons"):
        T.expect(variable(2, "x") + 1)
    with pytest.raises(TypeError, match="comparisons"):
        T.expect(1)


BOOL_MESSAGE = (
    "An Expr instance cannot be evaluated as bool. Please use "
    "minichain.utils.type_check.eval() to evaluate an expression."
)


@pytest.mark.parametrize(
    "use",
    [
        lambda x: bool(x == 1),
        lambda x: not x,
        lambda x: (x == 1) and (x == 2),
        lambda x: 0 < x < 3,  # a chained comparison is an ``and``
        lambda x: x if x else None,
    ],
)
def test_truth_value_of_an_expression_is_an_error(use):
    with pytest.raises(RuntimeError) as info:
        use(variable(1, "x"))
    assert str(info.value) == BOOL_MESSAGE


def test_iterating_an_expression_is_an_error_not_an_endless_loop():
    (t,) = T.get_types([numpy.zeros((2, 3))])
    with pytest.raises(TypeError, match="cannot iterate"):
        tuple(t.shape)
    with pytest.raises(TypeError, match="cannot iterate"):
        2 in t.shape


# --- Errors found only when evaluating ---------------------------------------


def test_out_of_range_index_fails_at_evaluation_with_the_expression_named():
    (t,) = T.get_types([numpy.zeros(3)])
    node = t.shape[3]  # building the node is fine; nothing is looked at yet
    with pytest.raises(IndexError) as info:
        T.eval(node)
    assert str(info.value) == (
        "cannot evaluate in_types[0].shape[3]: tuple index out of range "
        "(in_types[0].shape is (3,))"
    )
    # Inside expect the same IndexError surfaces, not a confusing InvalidType.
    with pytest.raises(IndexError, match=r"in_types\[0\]\.shape\[3\]"):
        T.expect(t.shape[3] == 1)


def test_missing_attribute_fails_at_evaluation_with_the_expression_named():
    (t,) = T.get_types([numpy.zeros(3)])
    node = t.colour
    with pytest.raises(AttributeError, match=r"cannot evaluate in_types\[0\]\.colour"):
        T.eval(node)


def test_indexing_past_the_last_input_says_how_many_there_are():
    in_types = T.get_types([numpy.zeros(3)])
    with pytest.raises(IndexError, match=r"in_types\[1\] does not exist.*only 1"):
        in_types[1]


# --- Type information of inputs ----------------------------------------------


def test_get_types_describes_each_array():
    in_types = T.get_types([numpy.zeros((2, 3), numpy.float32), numpy.zeros((), "i")])
    assert isinstance(in_types, T.TypeInfoTuple)
    assert len(in_types) == 2
    x, s = in_types  # a real tuple, so it unpacks
    assert str(x) == "in_types[0]"
    assert str(x.shape[1]) == "in_types[0].shape[1]"
    assert T.eval(x.shape) == (2, 3)
    assert T.eval(x.shape[1]) == 3
    assert T.eval(x.ndim) == 2
    assert T.eval(x.size) == 6
    assert T.eval(x.dtype) == numpy.float32
    assert T.eval(s.shape) == ()
    assert T.eval(s.ndim) == 0
    assert T.eval(s.size) == 1


def test_in_types_size_prints_without_parentheses():
    in_types = T.get_types([numpy.zeros(1), numpy.zeros(1)])
    assert str(in_types.size()) == "in_types.size"
    assert T.eval(in_types.size()) == 2
    assert failure_message(in_types.size() == 3) == (
        "Expect: in_types.size == 3\nActual: 2 != 3"
    )


def test_dtype_messages_match_chainer():
    (t,) = T.get_types([numpy.zeros(1, numpy.float64)])
    assert failure_message(t.dtype == numpy.float32) == (
        "Expect: in_types[0].dtype == <class 'numpy.float32'>\n"
        "Actual: float64 != <class 'numpy.float32'>"
    )
    (t,) = T.get_types([numpy.zeros(1, numpy.int32)])
    assert failure_message(t.dtype.kind == "f") == (
        "Expect: in_types[0].dtype.kind == f\nActual: i != f"
    )


def test_shape_messages_print_tuples_plainly():
    (t,) = T.get_types([numpy.zeros(2)])
    assert failure_message(t.shape == (2, 3)) == (
        "Expect: in_types[0].shape == (2, 3)\nActual: (2,) != (2, 3)"
    )


# --- Helpers -----------------------------------------------------------------


def test_argname_renames_inputs_in_messages():
    in_types = T.get_types([numpy.zeros((2, 3)), numpy.zeros((5, 4))])
    T.argname(in_types, ("x", "w"))
    x, w = in_types
    assert str(x.shape[1]) == "x.shape[1]"
    assert failure_message(x.shape[1] == w.shape[0]) == (
        "Expect: x.shape[1] == w.shape[0]\nActual: 3 != 5"
    )


def test_argname_with_the_wrong_count_says_so():
    in_types = T.get_types([numpy.zeros(1)])
    with pytest.raises(T.InvalidType) as info:
        T.argname(in_types, ("x", "w"))
    assert str(info.value) == (
        "Invalid number of arguments\nExpect: 2 argument(s) (x, w)\n"
        "Actual: 1 argument(s)")
    assert (info.value.expect, info.value.actual) == ("2 argument(s)", "1 argument(s)")


def test_prod_prints_as_a_call_and_multiplies():
    assert str(T.prod([])) == "prod([])"
    assert T.eval(T.prod([])) == 1
    x, y = T.get_types([numpy.zeros((2, 3)), numpy.zeros(5)])
    assert str(T.prod(x.shape)) == "prod(in_types[0].shape)"
    assert T.eval(T.prod(x.shape)) == 6
    assert str(T.prod([x.shape[0], 4])) == "prod([in_types[0].shape[0], 4])"
    assert T.eval(T.prod([x.shape[0], 4])) == 8
    assert failure_message(T.prod(x.shape) == y.size) == (
        "Expect: prod(in_types[0].shape) == in_types[1].size\nActual: 6 != 5"
    )


class FakeDeviceArray:
    """Stands in for ``cupy.ndarray``, whose class lives under ``cupy``."""

    __module__ = "cupy._core.core"
    shape = (2,)
    dtype = numpy.dtype(numpy.float32)


def test_same_types():
    a, b = numpy.zeros(2), numpy.ones(3)
    assert T.same_types(a, b) is True
    assert T.same_types() is True
    assert T.same_types(FakeDeviceArray(), FakeDeviceArray()) is True
    assert T.same_types(a, FakeDeviceArray()) is False
    with pytest.raises(T.InvalidType):
        T.expect(T.same_types(a, FakeDeviceArray()))


def test_make_variable():
    v = T.make_variable([1, 2], "pair")
    assert isinstance(v, T.Variable)
    assert str(v[0]) == "pair[0]"
    assert T.eval(v[1]) == 2


# --- Broadcasting ------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes",
    [[(2, 3), (3,)], [(2, 1), (1, 4)], [(), (5,)], [(0,), (1,)],
     [(4, 1, 3), (2, 1), (3,)], [(7,)]],
)
def test_broadcastable_shapes_pass_and_return_numpy_result(shapes):
    assert T.expect_broadcast_shapes(*shapes) == numpy.broadcast_shapes(*shapes)


def test_two_shapes_that_do_not_broadcast_are_named_lhs_and_rhs():
    with pytest.raises(T.InvalidType) as info:
        T.expect_broadcast_shapes((2, 3), (4,))
    assert str(info.value) == (
        "cannot broadcast inputs of the following shapes:\n"
        "lhs.shape = (2, 3)\n"
        "rhs.shape = (4,)"
    )


def test_more_shapes_that_do_not_broadcast_are_numbered():
    with pytest.raises(T.InvalidType) as info:
        T.expect_broadcast_shapes((2, 3), (3,), (0, 1))
    assert str(info.value) == (
        "cannot broadcast inputs of the following shapes:\n"
        "x0.shape = (2, 3)\n"
        "x1.shape = (3,)\n"
        "x2.shape = (0, 1)"
    )
    with pytest.raises(ValueError):  # numpy agrees that these do not broadcast
        numpy.broadcast_shapes((2, 3), (3,), (0, 1))


def test_broadcast_accepts_shape_expressions():
    a, b = T.get_types([numpy.zeros((2, 3)), numpy.zeros(4)])
    with pytest.raises(T.InvalidType, match=r"lhs\.shape = \(2, 3\)"):
        T.expect_broadcast_shapes(a.shape, b.shape)
    a, b = T.get_types([numpy.zeros((2, 3)), numpy.zeros(3)])
    assert T.expect_broadcast_shapes(a.shape, b.shape) == (2, 3)


# --- InvalidType -------------------------------------------------------------


def test_invalid_type_message():
    error = T.InvalidType("x == 1", "2 != 1")
    assert str(error) == "Expect: x == 1\nActual: 2 != 1"
    assert (error.expect, error.actual, error.msg) == ("x == 1", "2 != 1", None)
    error = T.InvalidType("x == 1", "2 != 1", msg="custom")
    assert str(error) == "custom"
    assert error.expect == "x == 1"


@pytest.mark.parametrize("msg", [None, "custom message"])
def test_invalid_type_pickles(msg):
    error = T.InvalidType("x == 1", "2 != 1", msg)
    restored = pickle.loads(pickle.dumps(error))
    assert type(restored) is T.InvalidType
    assert restored.args == error.args
    assert (restored.expect, restored.actual, restored.msg) == ("x == 1", "2 != 1", msg)


def test_with_header_names_the_function():
    error = T.InvalidType("x == 1", "2 != 1").with_header("TC")
    assert str(error) == (
        "\nInvalid operation is performed in: TC (Forward)\n\n"
        "Expect: x == 1\nActual: 2 != 1"
    )
    assert (error.expect, error.actual) == ("x == 1", "2 != 1")


# --- invoke_check: the engine's entry point ----------------------------------


class MyFunc:
    """The least a function node needs for invoke_check."""

    label = "MyFunc"

    def check_type_forward(self, in_types):
        T.expect(in_types[0].ndim >= 2)


def test_invoke_check_message_has_the_header():
    with pytest.raises(T.InvalidType) as info:
        T.invoke_check(MyFunc(), [numpy.zeros(3)])
    assert str(info.value) == (
        "\nInvalid operation is performed in: MyFunc (Forward)\n\n"
        "Expect: in_types[0].ndim >= 2\nActual: 1 < 2"
    )
    assert info.value.expect == "in_types[0].ndim >= 2"
    assert info.value.actual == "1 < 2"


def test_invoke_check_passes_silently_on_good_input():
    assert T.invoke_check(MyFunc(), [numpy.zeros((2, 3))]) is None


def test_invoke_check_traceback_still_points_into_check_type_forward():
    with pytest.raises(T.InvalidType) as info:
        T.invoke_check(MyFunc(), [numpy.zeros(3)])
    functions = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "check_type_forward" in functions
    assert info.value.__suppress_context__


def test_invoke_check_uses_a_custom_label_and_argname():
    class Linear:
        @property
        def label(self):
            return "MyLabel"

        def check_type_forward(self, in_types):
            T.argname(in_types, ("x", "w"))
            x, w = in_types
            T.expect(x.shape[1] == w.shape[0])

    with pytest.raises(T.InvalidType) as info:
        T.invoke_check(Linear(), [numpy.zeros((2, 3)), numpy.zeros((5, 4))])
    assert str(info.value) == (
        "\nInvalid operation is performed in: MyLabel (Forward)\n\n"
        "Expect: x.shape[1] == w.shape[0]\nActual: 3 != 5"
    )
    with pytest.raises(T.InvalidType) as info:
        T.invoke_check(Linear(), [numpy.zeros((2, 3))])
    assert str(info.value) == (
        "\nInvalid operation is performed in: MyLabel (Forward)\n\n"
        "Invalid number of arguments\nExpect: 2 argument(s) (x, w)\n"
        "Actual: 1 argument(s)"
    )


def test_invoke_check_lets_other_errors_through_unchanged():
    class Careless:
        label = "Careless"

        def check_type_forward(self, in_types):
            T.expect(in_types[0].shape[2] == 1)

    with pytest.raises(IndexError, match=r"in_types\[0\]\.shape\[2\]"):
        T.invoke_check(Careless(), [numpy.zeros(3)])


@pytest.mark.gpu
def test_invoke_check_on_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    with pytest.raises(T.InvalidType) as info:
        T.invoke_check(MyFunc(), [cupy.zeros(3, cupy.float32)])
    assert str(info.value).endswith("Expect: in_types[0].ndim >= 2\nActual: 1 < 2")
    (t,) = T.get_types([cupy.zeros((2, 3), cupy.float32)])
    assert T.eval(t.dtype) == numpy.float32
    assert T.eval(t.size) == 6
    assert T.same_types(cupy.zeros(1), cupy.ones(2)) is True
    assert T.same_types(cupy.zeros(1), numpy.ones(2)) is False
