"""NumPy 2 dtype rules (issue 8, item 6).

- Results keep the inputs' float dtype (float16, float32, float64): Python
  numbers, NumPy scalars and 0-d arrays mixed in take the Variable's dtype
  instead of promoting it, and so do gradients, first and second order.
- NumPy scalars never leak out: every output and every gradient is a real
  ``numpy.ndarray``, 0-d included.
- Integer (and bool) inputs get a clear error, naming the function, where a
  float is needed; functions that only move data keep the integer dtype.
"""

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def data(dtype, shape=(2, 3)):
    values = numpy.linspace(0.1, 0.9, int(numpy.prod(shape)))
    return values.reshape(shape).astype(dtype)


def labels():
    return numpy.array([0, 2], numpy.int32)


# Each case: a function of one (2, 3) Variable returning a Variable.
CASES = {
    "exp": F.exp, "log": F.log, "sin": F.sin, "cos": F.cos, "tanh": F.tanh,
    "sigmoid": F.sigmoid, "relu": F.relu,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.3), "sqrt": F.sqrt,
    "square": F.square, "sum": F.sum, "sum axis=1": lambda x: F.sum(x, 1),
    "mean": F.mean, "Variable.mean axis=0": lambda x: x.mean(axis=0),
    "max": F.max, "min axis=0": lambda x: F.min(x, axis=0),
    "reshape": lambda x: F.reshape(x, (3, 2)),
    "transpose": F.transpose, ".T": lambda x: x.T,
    "broadcast_to": lambda x: F.broadcast_to(x, (4, 2, 3)),
    "sum_to": lambda x: F.sum_to(x, (1, 3)),
    "matmul": lambda x: F.matmul(x, x, transb=True),
    "linear": lambda x: F.linear(x, x, x[:, 0]),
    "concat": lambda x: F.concat((x, x * 2), axis=1),
    "split_axis": lambda x: F.split_axis(x, 3, axis=1)[1],
    "get_item": lambda x: F.get_item(x, (slice(None), [0, 0, 2])),
    "x[0, 1] (0-d)": lambda x: x[0, 1],
    "where": lambda x: F.where(x.array > 0.5, x, x * 3),
    "clip": lambda x: F.clip(x, 0.2, 0.7),
    "dropout": lambda x: F.dropout(x, 0.5),
    "softmax": F.softmax, "log_softmax": F.log_softmax,
    "mean_squared_error": lambda x: F.mean_squared_error(x, x * 0.5),
    "softmax_cross_entropy": lambda x: F.softmax_cross_entropy(x, labels()),
    "identity": F.identity, "add (3 inputs)": lambda x: F.add(x, x, x),
    "forget": lambda x: F.forget(lambda a: F.tanh(a) * a, x),
    # Operators with every kind of constant: the Variable's dtype wins.
    "x + python float": lambda x: x + 0.5,
    "x - python int": lambda x: x - 2,
    "x * numpy.float64": lambda x: x * numpy.float64(1.5),
    "x / numpy.int64": lambda x: x / numpy.int64(3),
    "x ** python float": lambda x: x ** 1.5,
    "x ** python int": lambda x: x ** 3,
    "2.0 - x": lambda x: 2.0 - x, "3 / x": lambda x: 3 / x,
    "2 ** x": lambda x: 2 ** x, "-x": lambda x: -x,
    "x + 0-d float64 array": lambda x: x + numpy.array(0.25),
    "x * float64 array": lambda x: x * numpy.full((2, 3), 2.0),
    "float64 array + x": lambda x: numpy.full((2, 3), 2.0) + x,
    "x * int64 array": lambda x: x * numpy.arange(6).reshape(2, 3),
    "x @ x.T": lambda x: x @ x.T, "x * x": lambda x: x * x,
    "x / x": lambda x: x / x, "x ** x": lambda x: x ** x,
}


def _assert_real_array(array, dtype, what):
    assert type(array) is numpy.ndarray, "{}: {} is a {}".format(
        what, array, type(array))
    assert array.dtype == dtype, "{}: {} instead of {}".format(
        what, array.dtype, numpy.dtype(dtype))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("name", sorted(CASES))
def test_results_and_gradients_keep_the_float_dtype(name, dtype):
    x = mc.Variable(data(dtype))
    with numpy.errstate(all="ignore"):
        y = CASES[name](x)
        _assert_real_array(y.array, dtype, name + " output")
        loss = F.sum(y * y)
        _assert_real_array(loss.array, dtype, name + " loss")
        loss.backward()
    _assert_real_array(x.grad, dtype, name + " gradient")


SECOND_ORDER = ["exp", "log", "tanh", "sigmoid", "sqrt", "square", "sum",
                "mean", "max", "matmul", "linear", "softmax", "log_softmax",
                "mean_squared_error", "softmax_cross_entropy", "get_item",
                "x ** python float", "3 / x", "2 ** x", "forget", "clip",
                "broadcast_to", "sum_to"]


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order_gradients_keep_the_float_dtype(name, dtype):
    x = mc.Variable(data(dtype))
    y = F.sum(CASES[name](x) ** 2)
    gx, = mc.grad([y], [x], enable_double_backprop=True)
    _assert_real_array(gx.array, dtype, name + " first-order gradient")
    ggx, = mc.grad([F.sum(gx * gx)], [x])
    _assert_real_array(ggx.array, dtype, name + " second-order gradient")


# ----- 0-d: no NumPy scalar anywhere -------------------------------------------------
ZERO_D = {
    "exp": F.exp, "tanh": F.tanh, "sqrt": F.sqrt, "sum": F.sum, "max": F.max,
    "x + 1": lambda x: x + 1, "2 * x": lambda x: 2 * x, "x ** 2": lambda x: x ** 2,
    "-x": lambda x: -x, "x * x": lambda x: x * x, "x / x": lambda x: x / x,
    "clip": lambda x: F.clip(x, 0.0, 1.0), "relu": F.relu,
    "reshape to (1,) and back": lambda x: F.reshape(F.reshape(x, (1,)), ()),
    "broadcast_to (3,) then sum": lambda x: F.sum(F.broadcast_to(x, (3,))),
    "where": lambda x: F.where(numpy.array(True), x, x * 2),
}


@pytest.mark.parametrize("name", sorted(ZERO_D))
def test_0d_results_and_gradients_are_arrays_not_numpy_scalars(name):
    x = mc.Variable(numpy.array(0.5, numpy.float32))
    y = ZERO_D[name](x)
    _assert_real_array(y.array, numpy.float32, name + " output")
    assert y.shape == ()
    y.backward()
    _assert_real_array(x.grad, numpy.float32, name + " gradient")
    gx, = mc.grad([ZERO_D[name](x)], [x], enable_double_backprop=True)
    _assert_real_array(gx.array, numpy.float32, name + " mc.grad")


@pytest.mark.parametrize("name,make", [
    ("loss", lambda x: F.softmax_cross_entropy(x, labels())),
    ("accuracy", lambda x: F.accuracy(x, labels())),
    ("mean_squared_error", lambda x: F.mean_squared_error(x, x * 0)),
    ("mean", F.mean), ("sum", F.sum), ("min", F.min),
])
def test_reductions_to_a_scalar_return_0d_arrays(name, make):
    y = make(mc.Variable(data(numpy.float32)))
    _assert_real_array(y.array, numpy.float32, name)
    assert y.shape == ()


def test_leaf_backward_seed_is_a_0d_array():
    x = mc.Variable(numpy.array(3.0, numpy.float32))
    x.backward()
    _assert_real_array(x.grad, numpy.float32, "seed")


def test_numerical_grad_returns_arrays_of_the_input_dtype():
    x = data(numpy.float32)
    gx, = mc.gradient_check.numerical_grad(
        lambda: (x * x,), (x,), (numpy.ones_like(x),))
    _assert_real_array(gx, numpy.float32, "numerical_grad")


def test_optimizer_updates_keep_parameter_dtypes():
    for make in (lambda: mc.optimizers.SGD(lr=0.1),
                 lambda: mc.optimizers.MomentumSGD(lr=0.1),
                 mc.optimizers.Adam):
        link = mc.links.Linear(3, 2)
        link.to_cpu()
        optimizer = make().setup(link)
        x = data(numpy.float32)
        for _ in range(3):
            link.cleargrads()
            F.sum(link(x)).backward(loss_scale=128.0)
            optimizer.update()
        for p in link.params():
            _assert_real_array(p.array, numpy.float32, "parameter")
            _assert_real_array(p.grad, numpy.float32, "gradient")


def test_lazy_linear_takes_the_input_float_dtype():
    link = mc.links.Linear(2)
    y = link(data(numpy.float64))
    assert link.W.dtype == numpy.float64 and link.b.dtype == numpy.float64
    _assert_real_array(y.array, numpy.float64, "lazy Linear")


# ----- integers: a clear error where a float is needed -----------------------
FLOAT_ONLY = {
    "exp": (F.exp, "exp"), "log": (F.log, "log"), "sin": (F.sin, "sin"),
    "tanh": (F.tanh, "Tanh"), "sigmoid": (F.sigmoid, "Sigmoid"),
    "relu": (F.relu, "ReLU"), "sqrt": (F.sqrt, "sqrt"),
    "sum": (F.sum, "Sum"), "mean": (F.mean, "Mean"), "max": (F.max, "Max"),
    "softmax": (F.softmax, "Softmax"), "clip": (
        lambda x: F.clip(x, 0, 1), "Clip"),
    "dropout": (F.dropout, "Dropout"),
    "matmul": (lambda x: F.matmul(x, x, transb=True), "MatMul"),
    "linear": (lambda x: F.linear(x, x), "Linear"),
    "mean_squared_error": (lambda x: F.mean_squared_error(x, x),
                           "MeanSquaredError"),
    "softmax_cross_entropy": (
        lambda x: F.softmax_cross_entropy(x, labels()), "SoftmaxCrossEntropy"),
}
INTS = [numpy.int8, numpy.int32, numpy.int64, numpy.uint8, numpy.bool_]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("name", sorted(FLOAT_ONLY))
def test_integer_input_gets_a_clear_error(name, dtype):
    f, label = FLOAT_ONLY[name]
    x = mc.Variable(numpy.ones((2, 3), dtype))
    with pytest.raises(InvalidType) as info:
        f(x)
    message = str(info.value)
    kind = numpy.dtype(dtype).kind
    assert "Invalid operation is performed in: {} (Forward)".format(
        label) in message
    assert "dtype.kind == f" in message
    assert "Actual: {} != f".format(kind) in message


@pytest.mark.parametrize("name,make", [
    ("identity", F.identity), ("reshape", lambda x: F.reshape(x, (3, 2))),
    ("transpose", F.transpose), ("get_item", lambda x: x[1]),
    ("concat", lambda x: F.concat((x, x))),
    ("split_axis", lambda x: F.split_axis(x, 3, axis=1)[0]),
    ("broadcast_to", lambda x: F.broadcast_to(x, (2, 2, 3))),
    ("where", lambda x: F.where(x.array > 0, x, x)),
    ("-x", lambda x: -x), ("x + 1", lambda x: x + 1),
])
def test_data_movers_keep_integer_dtypes(name, make):
    x = mc.Variable(numpy.arange(6, dtype=numpy.int32).reshape(2, 3))
    y = make(x)
    _assert_real_array(y.array, numpy.int32, name)


def test_integer_variable_plus_python_float_is_refused_or_kept_int():
    # Documented: a constant takes the Variable's dtype, so x_int + 0.5
    # truncates the constant (NumPy 2 would promote to float64). minichain
    # keeps the Variable's dtype everywhere; cast the data to float first.
    x = mc.Variable(numpy.arange(3, dtype=numpy.int32))
    y = x + 1.5
    _assert_real_array(y.array, numpy.int32, "int + float")
    numpy.testing.assert_array_equal(y.array, [1, 2, 3])


@pytest.mark.gpu
@pytest.mark.skipif(not mc.backend.available, reason="needs CuPy and a GPU")
@pytest.mark.parametrize("name", sorted(
    name for name in CASES  # the cases that mix in NumPy arrays are left out
    if "array" not in name and name not in ("where", "softmax_cross_entropy")))
def test_cupy_results_keep_the_float_dtype_and_device(name):
    import cupy
    x = mc.Variable(cupy.asarray(data(numpy.float32)))
    y = CASES[name](x)
    assert type(y.array) is cupy.ndarray and y.dtype == numpy.float32
    F.sum(y * y).backward()
    assert type(x.grad) is cupy.ndarray and x.grad.dtype == numpy.float32
