"""Bad input across the public API: one table, each row a test.

Every row is (entry point, what is wrong, a call that makes the bad call,
the exception type, a regex its message must match). The regexes insist on
what issue 8 asks of every message: the function's name (its label), what
was expected and what came.

``docs/errors.md`` shows the same rows; ``test_docs_list_exactly_these_rows``
keeps the two equal. After changing ROWS, rewrite the doc's table with

    python3 tests/test_errors.py --write-doc
"""

import os
import pathlib
import re
import sys
import warnings
from collections import namedtuple

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import backend
from minichain import configuration
from minichain import gradient_check as gc
from minichain.computational_graph import build_computational_graph
from minichain.functions.activation.tanh import Tanh
from minichain.functions.connection.linear import Linear as LinearNode
from minichain.utils import type_check

Row = namedtuple("Row", "entry bad call exc pattern gpu")

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "errors.md"
START, END = "<!-- rows:start -->", "<!-- rows:end -->"


def row(entry, bad, call, exc, pattern, gpu=False):
    return Row(entry, bad, call, exc, pattern, gpu)


# ----- inputs -------------------------------------------------------------------
def a32(*shape):
    return numpy.ones(shape, numpy.float32)


def v32(*shape):
    return mc.Variable(a32(*shape))


def vint(*shape):
    return mc.Variable(numpy.ones(shape, numpy.int32))


def v64(*shape):
    return mc.Variable(numpy.ones(shape, numpy.float64))


def labels(*values):
    return numpy.array(values, numpy.int32)


def invalid(label, expect, actual):
    """The regex of an InvalidType message: header, Expect and Actual lines."""
    return r"in: {} \(Forward\).*Expect: {}.*Actual: {}".format(
        re.escape(label), expect, actual)


def with_debug(call):
    def run():
        with mc.using_config("debug", True):
            return call()
    return run


def set_attr(obj, name, value):
    setattr(obj, name, value)


def backward_of(node_class, x=None):
    """Apply ``node_class`` to a (2, 3) input and backprop through it."""
    x = v32(2, 3) if x is None else x
    y, = node_class().apply((x,))
    F.sum(y).backward()


# ----- function nodes with bugs, for the engine's own checks ----------------------
class Double(mc.FunctionNode):
    def forward(self, xs):
        return xs[0] * 2,

    def backward(self, indexes, gys):
        return gys[0] * 2,


class ReturnsArray(mc.FunctionNode):
    def forward(self, xs):
        return xs[0] * 2


class ReturnsFloat(mc.FunctionNode):
    def forward(self, xs):
        return 1.0,


class ReturnsNumpyScalar(mc.FunctionNode):
    def forward(self, xs):
        return xs[0].sum(),  # a numpy.float32, not a 0-d array


class NoForward(mc.FunctionNode):
    pass


class GradWrongShape(Double):
    def backward(self, indexes, gys):
        return mc.Variable(a32(3)),


class GradWrongDtype(Double):
    def backward(self, indexes, gys):
        return mc.Variable(gys[0].array.astype(numpy.float64)),


class GradTooMany(Double):
    def backward(self, indexes, gys):
        return gys[0], gys[0]


class GradArray(Double):
    def backward(self, indexes, gys):
        return gys[0].array,


class GradNone(Double):
    def backward(self, indexes, gys):
        return None


class GradNaN(Double):
    def backward(self, indexes, gys):
        return mc.Variable(gys[0].array * numpy.float32("nan")),


class GradBareVariable(Double):
    def backward(self, indexes, gys):
        return gys[0]


class NeedsMatrix(mc.FunctionNode):
    def check_type_forward(self, in_types):
        type_check.expect(in_types[0].ndim == 2)

    def forward(self, xs):
        return xs[0],


def apply_twice():
    node = Double()
    x = v32(2)
    node.apply((x,))
    node.apply((x,))


class OldDouble(mc.Function):
    def forward(self, xs):
        return xs[0] * 2,

    def backward(self, xs, gys):
        return gys[0] * 2,


class OldReturnsArray(mc.Function):
    def forward(self, xs):
        return xs[0] * 2


class OldGradWrongShape(OldDouble):
    def backward(self, xs, gys):
        return a32(5),


class OldGradNotTuple(OldDouble):
    def backward(self, xs, gys):
        return gys[0]


def _in_types():
    return type_check.get_types([a32(2, 3)])


def call_twice():
    f = OldDouble()
    f(v32(2))
    f(v32(2))


def env_flag(value):
    def run():
        old = os.environ.get("MINICHAIN_DEBUG")
        os.environ["MINICHAIN_DEBUG"] = value
        try:
            return configuration._env_flag("MINICHAIN_DEBUG", False)
        finally:
            if old is None:
                del os.environ["MINICHAIN_DEBUG"]
            else:
                os.environ["MINICHAIN_DEBUG"] = old
    return run


def hook_registered_twice():
    hook = mc.FunctionHook()
    with hook:
        with hook:
            pass


def node_hook_twice():
    node = Double()
    node.add_hook(mc.FunctionHook())
    node.add_hook(mc.FunctionHook())


def measure_reentered():
    m = mc.memory.measure()
    with m:
        with m:
            pass


def gpu_mix():
    import cupy
    return v32(2) + mc.Variable(cupy.ones(2, cupy.float32))


def gpu_mix_apply():
    import cupy
    return F.add(v32(2), mc.Variable(cupy.ones(2, cupy.float32)))


# ----- links and optimizers ------------------------------------------------------
def linear_link(*args, **kwargs):
    return mc.links.Linear(*args, **kwargs)


def sgd_on_linear(**kwargs):
    link = mc.links.Linear(3, 2)
    return link, mc.optimizers.SGD(**kwargs).setup(link)


def update_with_grad(grad):
    link, opt = sgd_on_linear()
    # Past the .grad setter's own check, as a buggy hook or rule could.
    link.W._grad_var = mc.Variable(grad)
    opt.update()


def update_with_nan_grad(bad=numpy.nan):
    link, opt = sgd_on_linear()
    grad = numpy.zeros((2, 3), numpy.float32)
    grad[0, 0] = bad
    link.W.grad = grad
    with mc.using_config("debug", True):
        opt.update()


def update_with(lossfun):
    link, opt = sgd_on_linear()
    opt.update(lossfun, link)


# ----- the table -------------------------------------------------------------------
NOT_ARRAY = "inputs must be Variables or NumPy/CuPy arrays, got <class '{}'>"
VALUE = r"^{} Value must be a scalar.*Actual: <class '{}'>"
ROWS = [
    # Variable ----------------------------------------------------------------------
    row("Variable", "a list as data", lambda: mc.Variable([1.0, 2.0]), TypeError,
        r"Variable: data must be a NumPy or CuPy array \(or None\), got "
        r"<class 'list'>"),
    row("Variable", "a Python float as data", lambda: mc.Variable(1.0), TypeError,
        r"Variable: data must be a NumPy or CuPy array.*got <class 'float'>"),
    row("Variable", "a NumPy scalar as data",
        lambda: mc.Variable(numpy.float32(1)), TypeError,
        r"Variable: data must be.*got <class 'numpy.float32'>"),
    row("Variable", "volatile= (the v1 API)",
        lambda: mc.Variable(a32(2), volatile=True), ValueError,
        r"Variable: the volatile argument is not supported.*no_backprop_mode"),
    row("Variable", "an unknown keyword", lambda: mc.Variable(a32(2), foo=1),
        TypeError, r"Variable: unexpected keyword arguments \['foo'\]"),
    row("Variable", "requires_grad not a bool",
        lambda: mc.Variable(a32(2), requires_grad="yes"), TypeError,
        r"Variable: requires_grad must be a bool, got <class 'str'>"),
    row("Variable", "name not a str", lambda: mc.Variable(a32(2), name=3),
        TypeError, r"Variable: name must be a str or None, got <class 'int'>"),
    row("Variable", ".grad of the wrong shape",
        lambda: set_attr(v32(2), "grad", a32(3)), ValueError,
        r"Variable.grad: Shape of data and grad mismatch\ngrad: \(3,\) != "
        r"data: \(2,\)"),
    row("Variable", ".grad of the wrong dtype",
        lambda: set_attr(v32(2), "grad", numpy.ones(2)), TypeError,
        r"Variable.grad: Dtype of data and grad mismatch\ngrad: float64 != "
        r"data: float32"),
    row("Variable", ".grad a list", lambda: set_attr(v32(2), "grad", [1.0, 2.0]),
        TypeError, r"Variable.grad: Type of grad is invalid.*Actual: <class "
        r"'list'>"),
    row("Variable", ".array = a list",
        lambda: set_attr(v32(2), "array", [1.0, 2.0]), TypeError,
        r"Variable.array: must be a NumPy or CuPy array \(or None\), got "
        r"<class 'list'>"),
    row("Variable", ".data = a float", lambda: set_attr(v32(2), "data", 1.0),
        TypeError, r"Variable.array: must be a NumPy or CuPy array.*got <class "
        r"'float'>"),
    row("Variable", ".creator = an int", lambda: set_attr(v32(2), "creator", 5),
        TypeError, r"creator must be a FunctionNode \(or an old-style "
        r"Function\) or None, got <class 'int'>"),
    row("Variable", ".name = an int", lambda: set_attr(v32(2), "name", 5),
        TypeError, r"Variable.name must be a str or None, got <class 'int'>"),
    row("Variable", ".shape with no array", lambda: mc.Variable().shape,
        AttributeError, r"Variable.shape: this variable holds no array"),
    row("Variable", "len() with no array", lambda: len(mc.Variable()),
        AttributeError, r"Variable.__len__: this variable holds no array"),
    row("Variable", "len() of a 0-d variable", lambda: len(v32()), TypeError,
        r"Variable.__len__: len\(\) of unsized object \(a 0-d variable, "
        r"shape \(\)\)"),
    row("Variable", "bool()", lambda: bool(v32()), TypeError,
        r"Variables cannot be evaluated as Python bool"),
    row("Variable", "== between Variables", lambda: v32() == v32(), TypeError,
        r"Variables do not support == operator.*`array`"),
    row("Variable", "hash()", lambda: hash(v32()), TypeError,
        r"unhashable type: 'Variable'"),
    # Parameter ---------------------------------------------------------------------
    row("Parameter", "a str initializer", lambda: mc.Parameter("0", (2,)),
        TypeError, r"Parameter: initializer must be an array, a number, a "
        r"callable f\(shape, dtype, xp\) or None, got <class 'str'>"),
    row("Parameter", "a list initializer", lambda: mc.Parameter([1.0, 2.0]),
        TypeError, r"Parameter: initializer must be .*got <class 'list'>"),
    row("Parameter", "a negative size", lambda: mc.Parameter(0.0, (-1,)),
        ValueError, r"Parameter: sizes in shape must not be negative, got "
        r"\(-1,\)"),
    row("Parameter", "shape a str", lambda: mc.Parameter(0.0, "ab"), TypeError,
        r"Parameter: shape must be an int or a tuple of ints, got 'ab'"),
    row("Parameter", "an initializer returning the wrong shape",
        lambda: mc.Parameter(lambda shape, dtype, xp: xp.zeros(3, dtype), (2,)),
        ValueError, r"Parameter: the initializer .* must return an array of "
        r"shape \(2,\), got \(3,\)"),
    row("Parameter", "initialize() with shape None",
        lambda: mc.Parameter(0.0).initialize(None), TypeError,
        r"Parameter: shape must be an int or a tuple of ints, got None"),
    row("Parameter", ".grad of the wrong shape",
        lambda: set_attr(mc.Parameter(a32(2)), "grad", a32(3)), ValueError,
        r"Variable.grad: Shape of data and grad mismatch\ngrad: \(3,\) != "
        r"data: \(2,\)"),
    # operators ---------------------------------------------------------------------
    row("Variable operators", "x + list", lambda: v32(3) + [1, 2, 3], TypeError,
        VALUE.format(r"_ \+ _:", "list")),
    row("Variable operators", "list + x (reflected)", lambda: [1, 2, 3] + v32(3),
        TypeError, VALUE.format(r"_ \+ _:", "list")),
    row("Variable operators", "x + None", lambda: v32(3) + None, TypeError,
        VALUE.format(r"_ \+ _:", "NoneType")),
    row("Variable operators", "x * str", lambda: v32(3) * "a", TypeError,
        VALUE.format(r"_ \* _:", "str")),
    row("Variable operators", "x ** list", lambda: v32(3) ** [2], TypeError,
        VALUE.format(r"_ \*\* _:", "list")),
    row("Variable operators", "x / None", lambda: v32(3) / None, TypeError,
        VALUE.format("_ / _:", "NoneType")),
    row("Variable operators", "x @ list", lambda: v32(2, 2) @ [[1.0]],
        TypeError, "MatMul: " + NOT_ARRAY.format("list")),
    row("Variable operators", "x + complex scalar", lambda: v32(3) + 1j,
        TypeError, r"_ \+ _: Value must be a real scalar for a Variable of dtype "
        r"float32.*Actual: 1j"),
    row("Variable operators", "shapes that do not broadcast",
        lambda: v32(2, 3) + v32(3, 2), mc.type_check.InvalidType,
        r"in: _ \+ _ \(Forward\).*cannot broadcast.*lhs.shape = \(2, 3\)"
        r".*rhs.shape = \(3, 2\)"),
    row("Variable operators", "an empty operand that does not broadcast",
        lambda: v32(2, 3) * v32(0), mc.type_check.InvalidType,
        r"in: _ \* _ \(Forward\).*cannot broadcast.*rhs.shape = \(0,\)"),
    row("Variable operators", "float32 + float64 Variable",
        lambda: v32(2) + v64(2), mc.type_check.InvalidType,
        invalid("_ + _", r"lhs\.dtype == rhs\.dtype", "float32 != float64")),
    row("Variable operators", "float32 - int32 Variable",
        lambda: v32(2) - vint(2), mc.type_check.InvalidType,
        invalid("_ - _", r"lhs\.dtype == rhs\.dtype", "float32 != int32")),
    row("Variable operators", "@ with mismatched inner sizes",
        lambda: v32(2, 3) @ v32(2, 3), mc.type_check.InvalidType,
        invalid("MatMul", r"a\.shape\[-1\] == b\.shape\[-2\]", "3 != 2")),
    row("Variable operators", "@ with a 0-d operand", lambda: v32(2, 3) @ v32(),
        mc.type_check.InvalidType, invalid("MatMul", r"b\.ndim >= 2", "0 < 2")),
    row("Variable methods", "reshape to a different size",
        lambda: v32(2, 3).reshape(5), mc.type_check.InvalidType,
        invalid("Reshape", r"x\.size == prod\(\[5\]\)", "6 != 5")),
    row("Variable methods", "transpose with a repeated axis",
        lambda: v32(2, 3).transpose(0, 0), mc.type_check.InvalidType,
        invalid("Transpose", r"axes is a permutation of range\(x\.ndim\)",
                r"axes = \(0, 0\)")),
    row("Variable methods", "indexing out of bounds", lambda: v32(2, 3)[5],
        IndexError, r"GetItem: cannot index an array of shape \(2, 3\) with "
        r"\(5,\): index 5 is out of bounds"),
    row("Variable methods", "mean over a missing axis",
        lambda: v32(2, 3).mean(axis=2), ValueError,
        r"Mean: axis 2 is out of bounds for an array of dimension 2"),
    row("Variable methods", "to_gpu without a GPU", lambda: v32(2).to_gpu(),
        RuntimeError, r"to_gpu: CuPy with a working GPU is needed"),
    # Variable.backward -------------------------------------------------------------
    row("Variable.backward", "a non-scalar output without .grad",
        lambda: (v32(2, 3) * 2).backward(), RuntimeError,
        r"backward: the output has shape \(2, 3\) \(6 elements\) and no "
        r"gradient was set.*F.sum"),
    row("Variable.backward", "no array", lambda: mc.Variable().backward(),
        RuntimeError, r"Variable.backward: the variable holds no array"),
    row("Variable.backward", "loss_scale a str",
        lambda: F.sum(v32(2) * 2).backward(loss_scale="a"), TypeError,
        r"Variable.backward: loss_scale must be a positive number or None, "
        r"got 'a'"),
    row("Variable.backward", "loss_scale 0",
        lambda: F.sum(v32(2) * 2).backward(loss_scale=0), ValueError,
        r"Variable.backward: loss_scale must be positive, got 0"),
    row("Variable.backward", "loss_scale NaN",
        lambda: F.sum(v32(2) * 2).backward(loss_scale=float("nan")),
        ValueError, r"Variable.backward: loss_scale must be positive, got nan"),
    row("Variable.backward", "NaN in a gradient (debug mode)",
        with_debug(lambda: backward_of(GradNaN)), RuntimeError,
        r"NaN is detected on backward computation of GradNaN"),
    row("Variable.backward", "NaN inside a backward's own ops (debug mode)",
        with_debug(lambda: F.sum(F.sqrt(mc.Variable(a32(2) * 0)) * 0)
                   .backward()),
        RuntimeError, r"NaN is detected on forward computation of _ / _.*"
        r"Stacktrace of the function is below"),
    # mc.grad -----------------------------------------------------------------------
    row("mc.grad", "outputs a Variable, not a list",
        lambda: mc.grad(v32(), [v32()]), TypeError,
        r"grad: outputs must be a tuple or a list, not <class "
        r"'minichain.variable.Variable'>"),
    row("mc.grad", "inputs a Variable, not a list",
        lambda: mc.grad([v32()], v32()), TypeError,
        r"grad: inputs must be a tuple or a list, not"),
    row("mc.grad", "an array among the inputs",
        lambda: mc.grad([F.sum(v32(2) * 2)], [a32(2)]), TypeError,
        r"grad: inputs\[0\] must be a Variable, got <class 'numpy.ndarray'>"),
    row("mc.grad", "None among the outputs", lambda: mc.grad([None], [v32()]),
        TypeError, r"grad: outputs\[0\] must be a Variable, got <class "
        r"'NoneType'>"),
    row("mc.grad", "grad_outputs of another length",
        lambda: mc.grad([F.sum(v32(2))], [v32(2)], grad_outputs=[None, None]),
        ValueError, r"grad: grad_outputs must be of the same length as outputs.*"
        r"len\(outputs\) = 1, len\(grad_outputs\) = 2"),
    row("mc.grad", "grad_outputs a number",
        lambda: mc.grad([F.sum(v32(2))], [v32(2)], grad_outputs=1), TypeError,
        r"grad: grad_outputs must be a tuple or a list or None, not <class "
        r"'int'>"),
    row("mc.grad", "grad_inputs of another length",
        lambda: mc.grad([F.sum(v32(2))], [v32(2)], grad_inputs=[None] * 3),
        ValueError, r"grad: grad_inputs must be of the same length as inputs"
        r".*len\(inputs\) = 1, len\(grad_inputs\) = 3"),
    row("mc.grad", "grad_outputs of the wrong shape",
        lambda: mc.grad([v32(2, 3) * 2], [v32(2)], grad_outputs=[a32(3)]),
        ValueError, r"grad: grad_outputs\[0\]: Shape of data and grad mismatch"
        r"\ngrad: \(3,\) != data: \(2, 3\)"),
    row("mc.grad", "grad_outputs of the wrong dtype",
        lambda: mc.grad([v32(2) * 2], [v32(2)], grad_outputs=[numpy.ones(2)]),
        TypeError, r"grad: grad_outputs\[0\]: Dtype of data and grad "
        r"mismatch\ngrad: float64 != data: float32"),
    row("mc.grad", "grad_inputs of the wrong shape",
        lambda: mc.grad([F.sum(v32(2, 3))], [v32(2, 3)],
                        grad_inputs=[a32(3)]),
        ValueError, r"grad: grad_inputs\[0\]: Shape of data and grad mismatch"
        r"\ngrad: \(3,\) != data: \(2, 3\)"),
    row("mc.grad", "loss_scale a str",
        lambda: mc.grad([F.sum(v32(2))], [v32(2)], loss_scale="2"), TypeError,
        r"grad: loss_scale must be a positive number or None, got '2'"),
    # mc.backward -------------------------------------------------------------------
    row("mc.backward", "outputs a Variable, not a list",
        lambda: mc.backward(v32(2)), TypeError,
        r"backward: outputs must be a tuple or a list, not"),
    row("mc.backward", "an int among the outputs", lambda: mc.backward([1]),
        TypeError, r"backward: outputs\[0\] must be a Variable, got <class "
        r"'int'>"),
    row("mc.backward", "grad_outputs of the wrong shape",
        lambda: mc.backward([v32(2, 3) * 2], [a32(3)]), ValueError,
        r"backward: grad_outputs\[0\]: Shape of data and grad mismatch\n"
        r"grad: \(3,\) != data: \(2, 3\)"),
    row("mc.backward", "retain_grad= (Variable.backward's keyword)",
        lambda: mc.backward([v32(2) * 2], retain_grad=True), TypeError,
        r"backward: unexpected keyword arguments \['retain_grad'\]"),
    row("mc.backward", "an output without .grad (warns, skips it)",
        lambda: mc.backward([v32(2) * 2]), RuntimeWarning,
        r"outputs contains a Variable without grad.*does not set default grad"),
    # FunctionNode.apply ------------------------------------------------------------
    row("FunctionNode.apply", "one node applied twice", apply_twice,
        RuntimeError, r"Double: a FunctionNode instance cannot be applied "
        r"twice"),
    row("FunctionNode.apply", "a Variable instead of a tuple",
        lambda: Double().apply(v32(2)), TypeError,
        r"Double: apply takes a tuple \(or list\) of inputs, got <class "
        r"'minichain.variable.Variable'>; write apply\(\(x,\)\)"),
    row("FunctionNode.apply", "None instead of a tuple",
        lambda: Double().apply(None), TypeError,
        r"Double: apply takes a tuple \(or list\) of inputs, got <class "
        r"'NoneType'>"),
    row("FunctionNode.apply", "a list among the inputs",
        lambda: Double().apply(([1.0],)), TypeError,
        "Double: " + NOT_ARRAY.format("list")),
    row("FunctionNode.apply", "called like a function",
        lambda: Double()(v32(2)), RuntimeError,
        r"\(Double\).*called as if it were a callable\. Use apply\(\) method"),
    row("FunctionNode.apply", "forward returns an array, not a tuple",
        lambda: ReturnsArray().apply((v32(2),)), TypeError,
        r"forward output must be a tuple \(ReturnsArray\)\nActual: <class "
        r"'numpy.ndarray'>"),
    row("FunctionNode.apply", "forward returns a float",
        lambda: ReturnsFloat().apply((v32(2),)), TypeError,
        r"forward output must be a tuple of ndarrays.\nFunction: ReturnsFloat"
        r"\nActual output types: \(<class 'float'>,\)"),
    row("FunctionNode.apply", "forward returns a NumPy scalar (0-d result)",
        lambda: ReturnsNumpyScalar().apply((v32(2),)), TypeError,
        r"Function: ReturnsNumpyScalar\nActual output types: \(<class "
        r"'numpy.float32'>,\)"),
    row("FunctionNode.apply", "two inputs to a one-input function",
        lambda: Tanh().apply((v32(2), v32(2))), mc.type_check.InvalidType,
        r"in: Tanh \(Forward\).*Invalid number of arguments\nExpect: 1 "
        r"argument\(s\) \(x\)\nActual: 2 argument\(s\)"),
    row("FunctionNode.apply", "one input to Linear",
        lambda: LinearNode().apply((v32(2, 3),)), mc.type_check.InvalidType,
        r"in: Linear \(Forward\).*Invalid number of arguments\nExpect: 2 "
        r"argument\(s\) \(x, W\)\nActual: 1 argument\(s\)"),
    row("FunctionNode.apply", "no forward written",
        lambda: NoForward().apply((v32(2),)), NotImplementedError,
        r"NoForward implements neither forward nor forward_cpu"),
    row("FunctionNode.apply", "check_type_forward fails",
        lambda: NeedsMatrix().apply((v32(2),)), mc.type_check.InvalidType,
        invalid("NeedsMatrix", r"in_types\[0\]\.ndim == 2", "1 != 2")),
    row("FunctionNode.apply", "NaN in an output (debug mode)",
        with_debug(lambda: F.log(mc.Variable(-a32(2)))), RuntimeError,
        r"NaN is detected on forward computation of log"),
    row("FunctionNode.apply", "CuPy and NumPy inputs mixed", gpu_mix_apply,
        TypeError, r"incompatible array types are mixed in the forward input "
        r"\(_ \+ _\)", gpu=True),
    row("FunctionNode.backward", "a gradient of the wrong shape",
        lambda: backward_of(GradWrongShape), ValueError,
        r"Function `GradWrongShape` \(GradWrongShape\) has a bug.*Shape of "
        r"data and grad mismatch\ngrad: \(3,\) != data: \(2, 3\)"),
    row("FunctionNode.backward", "a gradient of the wrong shape (debug mode)",
        with_debug(lambda: backward_of(GradWrongShape)), ValueError,
        r"shape of gradients returned from backward is incorrect: "
        r"input-index=0, actual \(3,\) != expected \(2, 3\)\n"
        r"Function `GradWrongShape` \(GradWrongShape\) has a bug"),
    row("FunctionNode.backward", "a gradient of the wrong dtype",
        lambda: backward_of(GradWrongDtype), TypeError,
        r"`GradWrongDtype` \(GradWrongDtype\) has a bug.*grad: float64 != "
        r"data: float32"),
    row("FunctionNode.backward", "too many gradients",
        lambda: backward_of(GradTooMany), ValueError,
        r"number of gradients returned from backward is incorrect: 2 != "
        r"expected 1\n  function=GradTooMany"),
    row("FunctionNode.backward", "an array instead of a Variable",
        lambda: backward_of(GradArray), ValueError,
        r"GradArray \(GradArray\) returned <class 'numpy.ndarray'> for input 0;"
        r" a Variable is expected"),
    row("FunctionNode.backward", "None instead of a tuple",
        lambda: backward_of(GradNone), TypeError,
        r"GradNone \(GradNone\): backward must return a tuple of gradients.*"
        r"got <class 'NoneType'>"),
    row("FunctionNode.backward", "a bare Variable (missing comma)",
        lambda: backward_of(GradBareVariable), TypeError,
        r"GradBareVariable.backward returned a Variable; it must return a "
        r"tuple.*`return gx,`"),
    # Function (old style) ----------------------------------------------------------
    row("Function", "an instance called twice", call_twice, RuntimeError,
        r"OldDouble: an old-style Function instance cannot be called twice.*"
        r"copy.copy\(template\)\(x\)"),
    row("Function", "a list as input", lambda: OldDouble()([1.0]), TypeError,
        "OldDouble: " + NOT_ARRAY.format("list")),
    row("Function", "forward returns an array, not a tuple",
        lambda: OldReturnsArray()(v32(2)), TypeError,
        r"OldReturnsArray.forward must return a tuple, got <class "
        r"'numpy.ndarray'>"),
    row("Function", "backward returns the wrong shape",
        lambda: F.sum(OldGradWrongShape()(v32(2, 3))).backward(), ValueError,
        r"\(OldGradWrongShape\) has a bug.*grad: \(5,\) != data: \(2, 3\)"),
    row("Function", "backward returns an array, not a tuple",
        lambda: F.sum(OldGradNotTuple()(v32(2))).backward(), TypeError,
        r"OldGradNotTuple.backward must return a tuple, got <class "
        r"'numpy.ndarray'>"),
    # configuration -----------------------------------------------------------------
    row("configuration", "reading an unknown key", lambda: mc.config.no_such_key,
        AttributeError, r"no_such_key"),
    row("configuration", "an unknown key of global_config",
        lambda: mc.global_config.no_such_key, AttributeError,
        r"global config has no key 'no_such_key'"),
    row("configuration", "set_debug with a str", lambda: mc.set_debug("yes"),
        TypeError, r"set_debug: debug must be True or False, got 'yes'"),
    row("configuration", "MINICHAIN_DEBUG=yes", env_flag("yes"), ValueError,
        r"environment variable MINICHAIN_DEBUG must be 0 or 1, got 'yes'"),
    # type_check --------------------------------------------------------------------
    row("type_check", "expect(False) outside a function",
        lambda: type_check.expect(False), type_check.InvalidType,
        r"Expect: True\nActual: False"),
    row("type_check", "expect() of a str", lambda: type_check.expect("a"),
        TypeError, r"expect\(\) takes comparisons such as in_types\[0\]\.ndim"
        r" == 2, or plain bools; got 'a'"),
    row("type_check", "expect() of None", lambda: type_check.expect(None),
        TypeError, r"expect\(\) takes comparisons.*got None"),
    row("type_check", "a shape index past ndim",
        lambda: type_check.expect(_in_types()[0].shape[5] == 1), IndexError,
        r"cannot evaluate in_types\[0\]\.shape\[5\]: tuple index out of "
        r"range \(in_types\[0\]\.shape is \(2, 3\)\)"),
    row("type_check", "an input index past the inputs",
        lambda: _in_types()[3], IndexError,
        r"in_types\[3\] does not exist: there are only 1 inputs"),
    row("type_check", "argname with too many names",
        lambda: type_check.argname(_in_types(), ("x", "y")),
        type_check.InvalidType, r"Invalid number of arguments\nExpect: 2 "
        r"argument\(s\) \(x, y\)\nActual: 1 argument\(s\)"),
    # hooks -------------------------------------------------------------------------
    row("hooks", "add_hook with a non-hook", lambda: Double().add_hook(1),
        TypeError, r"Hook must be of type FunctionHook \(Double.add_hook got "
        r"<class 'int'>\)"),
    row("hooks", "the same hook name twice on a node", node_hook_twice,
        KeyError, r"Hook FunctionHook already exists"),
    row("hooks", "delete_hook of an unknown name",
        lambda: Double().delete_hook("nope"), KeyError,
        r"Hook nope does not exist"),
    row("hooks", "one global hook entered twice", hook_registered_twice,
        KeyError, r"hook FunctionHook already exists"),
    # backend -----------------------------------------------------------------------
    row("backend", "to_gpu without a GPU", lambda: backend.to_gpu(a32(2)),
        RuntimeError, r"to_gpu: CuPy with a working GPU is needed, but none "
        r"was found"),
    row("backend", "to_cpu of a str", lambda: backend.to_cpu("a"), TypeError,
        r"to_cpu: expected a NumPy or CuPy array, got <class 'str'>"),
    row("backend", "to_cpu of an object", lambda: backend.to_cpu(object()),
        TypeError, r"to_cpu: expected a NumPy or CuPy array, got <class "
        r"'object'>"),
    row("backend", "a CuPy Variable plus a NumPy Variable", gpu_mix, TypeError,
        r"incompatible array types are mixed in the forward input", gpu=True),
]

# F: every float-only function refuses int data, a list and None, by label.
FLOAT_ONLY = [
    ("exp", F.exp, "exp"), ("log", F.log, "log"), ("sin", F.sin, "sin"),
    ("cos", F.cos, "cos"), ("tanh", F.tanh, "Tanh"),
    ("sigmoid", F.sigmoid, "Sigmoid"), ("relu", F.relu, "ReLU"),
    ("leaky_relu", F.leaky_relu, "LeakyReLU"), ("sqrt", F.sqrt, "sqrt"),
    ("square", F.square, "square"), ("sum", F.sum, "Sum"),
    ("mean", F.mean, "Mean"), ("max", F.max, "Max"), ("min", F.min, "Min"),
    ("softmax", F.softmax, "Softmax"),
    ("log_softmax", F.log_softmax, "LogSoftmax"),
    ("clip", lambda x: F.clip(x, 0.0, 1.0), "Clip"),
    ("dropout", F.dropout, "Dropout"),
]
for _name, _f, _label in FLOAT_ONLY:
    ROWS += [
        row("F." + _name, "int32 data", lambda f=_f: f(vint(2, 3)),
            mc.type_check.InvalidType,
            invalid(_label, r"x\.dtype\.kind == f", "i != f")),
        row("F." + _name, "a list", lambda f=_f: f([1.0, 2.0]), TypeError,
            _label + ": " + NOT_ARRAY.format("list")),
        row("F." + _name, "None", lambda f=_f: f(None), TypeError,
            _label + ": " + NOT_ARRAY.format("NoneType")),
    ]

# F: every other function refuses a list and None as its array, by label.
OTHERS = [
    ("identity", F.identity, "Identity"),
    ("reshape", lambda x: F.reshape(x, (2,)), "Reshape"),
    ("transpose", F.transpose, "Transpose"),
    ("broadcast_to", lambda x: F.broadcast_to(x, (2,)), "BroadcastTo"),
    ("sum_to", lambda x: F.sum_to(x, (1,)), "SumTo"),
    ("concat", lambda x: F.concat((x, x)), "Concat"),
    ("split_axis", lambda x: F.split_axis(x, 2, 0), "SplitAxis"),
    ("get_item", lambda x: F.get_item(x, 0), "GetItem"),
    ("where", lambda x: F.where(numpy.ones(2, bool), x, x), "Where"),
    ("matmul", lambda x: F.matmul(x, x), "MatMul"),
    ("linear", lambda x: F.linear(v32(2, 2), x), "Linear"),
    ("mean_squared_error", lambda x: F.mean_squared_error(x, x),
     "MeanSquaredError"),
    ("softmax_cross_entropy",
     lambda x: F.softmax_cross_entropy(x, labels(0, 0)), "SoftmaxCrossEntropy"),
    ("accuracy", lambda x: F.accuracy(x, labels(0, 0)), "Accuracy"),
]
for _name, _f, _label in OTHERS:
    ROWS += [
        row("F." + _name, "a list", lambda f=_f: f([1.0, 2.0]), TypeError,
            _label + ": " + NOT_ARRAY.format("list")),
    ]
    if _name != "identity":  # Chainer's identity passes a None input on
        ROWS += [row("F." + _name, "None", lambda f=_f: f(None), TypeError,
                     _label + ": " + NOT_ARRAY.format("NoneType"))]

ROWS += [
    row("F.accuracy", "int32 scores", lambda: F.accuracy(vint(2, 3), labels(0, 1)),
        mc.type_check.InvalidType,
        invalid("Accuracy", r"y\.dtype\.kind == f", "i != f")),
    row("F.accuracy", "labels with an extra axis",
        lambda: F.accuracy(v32(2, 3), numpy.zeros((2, 1), numpy.int32)),
        mc.type_check.InvalidType,
        invalid("Accuracy", r"t\.ndim == y\.ndim - 1", "2 != 1")),
    row("F.softmax_cross_entropy", "labels with an extra axis",
        lambda: F.softmax_cross_entropy(v32(2, 3),
                                        numpy.zeros((2, 1), numpy.int32)),
        mc.type_check.InvalidType,
        invalid("SoftmaxCrossEntropy", r"t\.ndim == x\.ndim - 1", "2 != 1")),
    row("F.where", "a condition of another shape",
        lambda: F.where(numpy.ones(3, bool), v32(2), v32(2)),
        mc.type_check.InvalidType,
        r"in: Where \(Forward\).*cannot broadcast.*x0.shape = \(3,\)"),
    row("F.leaky_relu", "slope a str", lambda: F.leaky_relu(v32(2), "a"),
        TypeError, r"leaky_relu: slope must be a number, got 'a'"),
    row("F.leaky_relu", "slope None", lambda: F.leaky_relu(v32(2), None),
        TypeError, r"leaky_relu: slope must be a number, got None"),
    row("F.clip", "a bound that is a str", lambda: F.clip(v32(2), "0", 1.0),
        TypeError, r"clip: x_min must be a number or None, got '0'"),
    row("F.softmax", "axis a str", lambda: F.softmax(v32(2, 3), axis="1"),
        TypeError, r"softmax: axis must be an int, got '1'"),
    row("F.softmax", "axis out of range", lambda: F.softmax(v32(2, 3), axis=5),
        mc.type_check.InvalidType, invalid("Softmax", r"x\.ndim > 5", "2 <= 5")),
    row("F.log_softmax", "axis None", lambda: F.log_softmax(v32(2, 3), None),
        TypeError, r"log_softmax: axis must be an int, got None"),
    row("F.concat", "axis a str", lambda: F.concat((v32(2), v32(2)), "0"),
        TypeError, r"concat: axis must be an int, got '0'"),
    row("F.split_axis", "axis a float", lambda: F.split_axis(v32(4), 2, 0.0),
        TypeError, r"split_axis: axis must be an int, got 0.0"),
    row("F.split_axis", "cut points that are not ints",
        lambda: F.split_axis(v32(4), [1.5], 0), TypeError,
        r"split_axis: indices_or_sections must be an int or a sequence of "
        r"ints, got \[1.5\]"),
    row("F.sum", "keepdims a str", lambda: F.sum(v32(2, 3), keepdims="no"),
        TypeError, r"sum: keepdims must be True or False, got 'no'"),
    row("F.max", "keepdims None", lambda: F.max(v32(2, 3), keepdims=None),
        TypeError, r"max: keepdims must be True or False, got None"),
    row("F.matmul", "transa a str",
        lambda: F.matmul(v32(2, 3), v32(2, 3), transa="yes"), TypeError,
        r"matmul: transa must be True or False, got 'yes'"),
    row("F.softmax_cross_entropy", "ignore_label a str",
        lambda: F.softmax_cross_entropy(v32(2, 3), labels(0, 1),
                                        ignore_label="-1"),
        TypeError, r"softmax_cross_entropy: ignore_label must be an int, got "
        r"'-1'"),
    row("F.softmax_cross_entropy", "an unknown reduce",
        lambda: F.softmax_cross_entropy(v32(2, 3), labels(0, 1), reduce="sum"),
        ValueError, r"softmax_cross_entropy: reduce must be 'mean' or 'no', got "
        r"'sum'"),
    row("F.broadcast_to", "a negative size",
        lambda: F.broadcast_to(v32(1), (-1,)), ValueError,
        r"broadcast_to: sizes in shape must not be negative, got \(-1,\)"),
    row("F.dropout", "ratio NaN", lambda: F.dropout(v32(2), float("nan")),
        ValueError, r"dropout: ratio must be in \[0, 1\), got nan"),
    row("F.identity", "a Python float", lambda: F.identity(1.0), TypeError,
        "Identity: " + NOT_ARRAY.format("float")),
    row("F.add", "no input", lambda: F.add(), TypeError,
        r"add: at least one input is needed, got 0"),
    row("F.add", "mixed dtypes", lambda: F.add(v32(2), v64(2)),
        mc.type_check.InvalidType,
        invalid("_ + _", r"lhs\.dtype == rhs\.dtype", "float32 != float64")),
    row("F.add", "a third input of another dtype",
        lambda: F.add(v32(2), v32(2), v64(2)), mc.type_check.InvalidType,
        invalid("_ + _", r"in_types\[2\]\.dtype == in_types\[0\]\.dtype",
                "float64 != float32")),
    row("F.add", "a third input that does not broadcast",
        lambda: F.add(v32(2), v32(2), v32(3)), mc.type_check.InvalidType,
        r"in: _ \+ _ \(Forward\).*cannot broadcast.*x2.shape = \(3,\)"),
    row("F.max", "an empty axis", lambda: F.max(v32(0, 3), axis=0), ValueError,
        r"Max: cannot take the max over axis 0 of length 0 \(x.shape = "
        r"\(0, 3\)\)"),
    row("F.min", "an empty array", lambda: F.min(v32(0)), ValueError,
        r"Min: cannot take the min over axis 0 of length 0"),
    row("F.max", "axis out of range", lambda: F.max(v32(2, 3), axis=2),
        ValueError, r"Max: axis 2 is out of bounds for an array of dimension 2"),
    row("F.sum", "axis out of range", lambda: F.sum(v32(2, 3), axis=5),
        ValueError, r"Sum: axis 5 is out of bounds for an array of dimension 2"),
    row("F.sum", "axis a str", lambda: F.sum(v32(2, 3), axis="a"), TypeError,
        r"Sum: axis must be None, an int or a tuple of ints, got 'a'"),
    row("F.sum", "a repeated axis", lambda: F.sum(v32(2, 3), axis=(0, -2)),
        ValueError, r"Sum: duplicate value in axis: \(0, -2\)"),
    row("F.mean", "axis out of range", lambda: F.mean(v32(2, 3), axis=-3),
        ValueError, r"Mean: axis -3 is out of bounds"),
    row("F.softmax", "an empty class axis", lambda: F.softmax(v32(2, 0)),
        mc.type_check.InvalidType,
        invalid("Softmax", r"x\.shape\[1\] > 0", "0 <= 0")),
    row("F.log_softmax", "an empty class axis",
        lambda: F.log_softmax(v32(2, 0)), mc.type_check.InvalidType,
        invalid("LogSoftmax", r"x\.shape\[1\] > 0", "0 <= 0")),
    row("F.sum", "axis 0 of a 0-d array", lambda: F.sum(v32(), axis=0),
        ValueError, r"Sum: axis 0 is out of bounds for an array of dimension 0"),
    row("F.split_axis", "a 0-d array", lambda: F.split_axis(v32(), 1, 0),
        mc.type_check.InvalidType, invalid("SplitAxis", r"x\.ndim > 0",
                                           "0 <= 0")),
    row("F.concat", "0-d arrays", lambda: F.concat((v32(), v32())),
        mc.type_check.InvalidType,
        invalid("Concat", r"in_types\[0\]\.ndim > 1", "0 <= 1")),
    row("F.get_item", "an index into a 0-d array", lambda: F.get_item(v32(), 0),
        IndexError, r"GetItem: cannot index an array of shape \(\) with "
        r"\(0,\): too many indices"),
    row("F.transpose", "axes for a 0-d array",
        lambda: F.transpose(v32(), (0,)), mc.type_check.InvalidType,
        invalid("Transpose", r"axes is a permutation of range\(x\.ndim\) = "
                r"range\(0\)", r"axes = \(0,\)")),
    row("F.softmax_cross_entropy", "0-d scores",
        lambda: F.softmax_cross_entropy(v32(), numpy.zeros((), numpy.int32)),
        mc.type_check.InvalidType,
        invalid("SoftmaxCrossEntropy", r"x\.ndim >= 2", "0 < 2")),
    row("F.where", "condition None", lambda: F.where(None, v32(2), v32(2)),
        TypeError, r"where: condition must be a boolean array or Variable, got "
        r"<class 'NoneType'>"),
    row("F.softmax", "a 0-d array", lambda: F.softmax(v32()),
        mc.type_check.InvalidType, invalid("Softmax", r"x\.ndim > 1", "0 <= 1")),
    row("F.log_softmax", "a 1-d array", lambda: F.log_softmax(v32(3)),
        mc.type_check.InvalidType,
        invalid("LogSoftmax", r"x\.ndim > 1", "1 <= 1")),
    row("F.reshape", "shape None", lambda: F.reshape(v32(2, 3), None), TypeError,
        r"reshape: shape must be an int or a tuple of ints, got None"),
    row("F.reshape", "shape a str", lambda: F.reshape(v32(2, 3), "23"), TypeError,
        r"reshape: shape must be an int or a tuple of ints, got '23'"),
    row("F.reshape", "another size", lambda: F.reshape(v32(2, 3), (4,)),
        mc.type_check.InvalidType,
        invalid("Reshape", r"x\.size == prod\(\[4\]\)", "6 != 4")),
    row("F.reshape", "two -1", lambda: F.reshape(v32(2, 3), (-1, -1)),
        ValueError, r"reshape: at most one -1 is allowed in the shape, got "
        r"\(-1, -1\)"),
    row("F.transpose", "too few axes", lambda: F.transpose(v32(2, 3), (0,)),
        mc.type_check.InvalidType,
        invalid("Transpose", r"axes is a permutation of range\(x\.ndim\) = "
                r"range\(2\)", r"axes = \(0,\)")),
    row("F.transpose", "an axis out of range",
        lambda: F.transpose(v32(2, 3), (0, 2)), mc.type_check.InvalidType,
        invalid("Transpose", "axes is a permutation", r"axes = \(0, 2\)")),
    row("F.transpose", "axes a str", lambda: F.transpose(v32(2, 3), "ab"),
        TypeError, r"transpose: axes must be None or a tuple of ints, got 'ab'"),
    row("F.broadcast_to", "shape None", lambda: F.broadcast_to(v32(3), None),
        TypeError, r"broadcast_to: shape must be an int or a tuple of ints"),
    row("F.broadcast_to", "a shape it does not broadcast to",
        lambda: F.broadcast_to(v32(2, 3), (3, 3)), mc.type_check.InvalidType,
        r"in: BroadcastTo \(Forward\).*cannot broadcast.*\(2, 3\).*\(3, 3\)"),
    row("F.sum_to", "a shape that does not broadcast to x",
        lambda: F.sum_to(v32(2, 3), (4,)), mc.type_check.InvalidType,
        invalid("SumTo", r"shape \(4,\) broadcasts to x\.shape",
                r"x\.shape = \(2, 3\)")),
    row("F.sum_to", "a longer shape", lambda: F.sum_to(v32(2, 3), (4, 2, 3)),
        mc.type_check.InvalidType,
        invalid("SumTo", r"shape \(4, 2, 3\) broadcasts", r"x\.shape")),
    row("F.sum_to", "shape None", lambda: F.sum_to(v32(2, 3), None), TypeError,
        r"sum_to: shape must be an int or a tuple of ints, got None"),
    row("F.matmul", "mismatched inner sizes",
        lambda: F.matmul(v32(2, 3), v32(2, 3)), mc.type_check.InvalidType,
        invalid("MatMul", r"a\.shape\[-1\] == b\.shape\[-2\]", "3 != 2")),
    row("F.matmul", "1-d operands", lambda: F.matmul(v32(3), v32(3)),
        mc.type_check.InvalidType, invalid("MatMul", r"a\.ndim >= 2", "1 < 2")),
    row("F.matmul", "int32 operands", lambda: F.matmul(vint(2, 2), vint(2, 2)),
        mc.type_check.InvalidType,
        invalid("MatMul", r"a\.dtype\.kind == f", "i != f")),
    row("F.matmul", "float32 @ float64", lambda: F.matmul(v32(2, 3), v64(3, 2)),
        mc.type_check.InvalidType,
        invalid("MatMul", r"a\.dtype == b\.dtype", "float32 != float64")),
    row("F.linear", "in sizes differ", lambda: F.linear(v32(2, 3), v32(4, 2)),
        mc.type_check.InvalidType,
        invalid("Linear", r"x\.shape\[1\] == W\.shape\[1\]", "3 != 2")),
    row("F.linear", "bias of the wrong size",
        lambda: F.linear(v32(2, 3), v32(4, 3), v32(5)), mc.type_check.InvalidType,
        invalid("Linear", r"b\.shape\[0\] == W\.shape\[0\]", "5 != 4")),
    row("F.linear", "a 1-d x", lambda: F.linear(v32(3), v32(4, 3)),
        mc.type_check.InvalidType,
        invalid("Linear", r"x\.ndim > n_batch_axes = 1",
                r"x\.ndim = 1 \(x\.shape = \(3,\)\)")),
    row("F.linear", "a 0-d x", lambda: F.linear(v32(), v32(4, 3)),
        mc.type_check.InvalidType,
        invalid("Linear", r"x\.ndim > n_batch_axes = 1", r"x\.ndim = 0")),
    row("F.linear", "int32 x and W", lambda: F.linear(vint(2, 3), vint(4, 3)),
        mc.type_check.InvalidType,
        invalid("Linear", r"x\.dtype\.kind == f", "i != f")),
    row("F.linear", "float64 W with float32 x",
        lambda: F.linear(v32(2, 3), v64(4, 3)), mc.type_check.InvalidType,
        invalid("Linear", r"W\.dtype == x\.dtype", "float64 != float32")),
    row("F.linear", "W None", lambda: F.linear(v32(2, 3), None), TypeError,
        "Linear: " + NOT_ARRAY.format("NoneType")),
    row("F.linear", "n_batch_axes 0",
        lambda: F.linear(v32(2, 3), v32(4, 3), n_batch_axes=0), ValueError,
        r"linear: n_batch_axes must be at least 1, got 0"),
    row("F.concat", "shapes differ off the axis",
        lambda: F.concat((v32(2, 3), v32(3, 3)), axis=1),
        mc.type_check.InvalidType,
        invalid("Concat", r"in_types\[1\]\.shape\[0\] == in_types\[0\]\."
                r"shape\[0\]", "3 != 2")),
    row("F.concat", "no inputs", lambda: F.concat(()), mc.type_check.InvalidType,
        invalid("Concat", r"in_types\.size > 0", "0 <= 0")),
    row("F.concat", "dtypes differ", lambda: F.concat((v32(2, 3), v64(2, 3))),
        mc.type_check.InvalidType,
        invalid("Concat", r"in_types\[1\]\.dtype == in_types\[0\]\.dtype",
                "float64 != float32")),
    row("F.concat", "axis out of range",
        lambda: F.concat((v32(2, 3), v32(2, 3)), axis=3),
        mc.type_check.InvalidType,
        invalid("Concat", r"in_types\[0\]\.ndim > 3", "2 <= 3")),
    row("F.split_axis", "sections that do not divide",
        lambda: F.split_axis(v32(2, 3), 2, axis=1), mc.type_check.InvalidType,
        invalid("SplitAxis", r"x\.shape\[1\] % 2 == 0", "1 != 0")),
    row("F.split_axis", "0 sections", lambda: F.split_axis(v32(2, 3), 0, axis=1),
        ValueError, r"split_axis: the number of sections must be at least 1, "
        r"got 0"),
    row("F.split_axis", "axis out of range",
        lambda: F.split_axis(v32(2, 3), 1, axis=3), mc.type_check.InvalidType,
        invalid("SplitAxis", r"x\.ndim > 3", "2 <= 3")),
    row("F.get_item", "an index out of bounds",
        lambda: F.get_item(v32(2, 3), (0, 7)), IndexError,
        r"GetItem: cannot index an array of shape \(2, 3\) with \(0, 7\): "
        r"index 7 is out of bounds"),
    row("F.get_item", "a str index", lambda: F.get_item(v32(2, 3), "a"),
        IndexError, r"GetItem: cannot index an array of shape \(2, 3\) with "
        r"\('a',\): only integers"),
    row("F.get_item", "a float index", lambda: F.get_item(v32(2, 3), 1.5),
        IndexError, r"GetItem: .*with \(1.5,\): only integers"),
    row("F.where", "a float condition",
        lambda: F.where(a32(2), v32(2), v32(2)), TypeError,
        r"where: condition must have dtype bool, got float32"),
    row("F.where", "shapes that do not broadcast",
        lambda: F.where(numpy.ones((2, 3), bool), v32(2, 3), v32(3, 2)),
        mc.type_check.InvalidType,
        r"in: Where \(Forward\).*cannot broadcast.*x2.shape = \(3, 2\)"),
    row("F.where", "dtypes differ",
        lambda: F.where(numpy.ones(2, bool), v32(2), v64(2)),
        mc.type_check.InvalidType,
        invalid("Where", r"x\.dtype == y\.dtype", "float32 != float64")),
    row("F.clip", "x_min above x_max", lambda: F.clip(v32(2), 1.0, 0.0),
        ValueError, r"clip: x_min \(1.0\) must not exceed x_max \(0.0\)"),
    row("F.clip", "neither bound", lambda: F.clip(v32(2), None, None),
        ValueError, r"clip: give at least one of x_min and x_max"),
    row("F.dropout", "ratio 1", lambda: F.dropout(v32(2), 1.0), ValueError,
        r"dropout: ratio must be in \[0, 1\), got 1.0"),
    row("F.dropout", "a negative ratio", lambda: F.dropout(v32(2), -0.5),
        ValueError, r"dropout: ratio must be in \[0, 1\), got -0.5"),
    row("F.dropout", "ratio a str", lambda: F.dropout(v32(2), "a"), TypeError,
        r"dropout: ratio must be a number in \[0, 1\), got 'a'"),
    row("F.mean_squared_error", "shapes differ",
        lambda: F.mean_squared_error(v32(2, 3), v32(3, 2)),
        mc.type_check.InvalidType,
        invalid("MeanSquaredError", r"x0\.shape == x1\.shape",
                r"\(2, 3\) != \(3, 2\)")),
    row("F.mean_squared_error", "dtypes differ",
        lambda: F.mean_squared_error(v32(2), v64(2)), mc.type_check.InvalidType,
        invalid("MeanSquaredError", r"x0\.dtype == x1\.dtype",
                "float32 != float64")),
    row("F.mean_squared_error", "int32 data",
        lambda: F.mean_squared_error(vint(2), vint(2)),
        mc.type_check.InvalidType,
        invalid("MeanSquaredError", r"x0\.dtype\.kind == f", "i != f")),
    row("F.softmax_cross_entropy", "float labels",
        lambda: F.softmax_cross_entropy(v32(2, 3), a32(2)), TypeError,
        r"softmax_cross_entropy: labels t must have an integer dtype.*got "
        r"float32"),
    row("F.softmax_cross_entropy", "a list of labels",
        lambda: F.softmax_cross_entropy(v32(2, 3), [0, 1]), TypeError,
        r"softmax_cross_entropy: labels t must be an integer array or "
        r"Variable, got <class 'list'>"),
    row("F.softmax_cross_entropy", "one label too many",
        lambda: F.softmax_cross_entropy(v32(2, 3), labels(0, 1, 2)),
        mc.type_check.InvalidType,
        invalid("SoftmaxCrossEntropy", r"x\.shape\[0\] == t\.shape\[0\]",
                "2 != 3")),
    row("F.softmax_cross_entropy", "a label out of range",
        lambda: F.softmax_cross_entropy(v32(2, 3), labels(0, 5)), ValueError,
        r"softmax_cross_entropy: labels must be in \[0, 3\) or equal to "
        r"ignore_label \(-1\); got \[5\]"),
    row("F.softmax_cross_entropy", "a 1-d x",
        lambda: F.softmax_cross_entropy(v32(3), labels(0, 0, 0)),
        mc.type_check.InvalidType,
        invalid("SoftmaxCrossEntropy", r"x\.ndim >= 2", "1 < 2")),
    row("F.softmax_cross_entropy", "int32 scores",
        lambda: F.softmax_cross_entropy(vint(2, 3), labels(0, 1)),
        mc.type_check.InvalidType,
        invalid("SoftmaxCrossEntropy", r"x\.dtype\.kind == f", "i != f")),
    row("F.accuracy", "float labels", lambda: F.accuracy(v32(2, 3), a32(2)),
        TypeError, r"accuracy: labels t must be an integer array or Variable,"
        r" got float32"),
    row("F.accuracy", "one label too many",
        lambda: F.accuracy(v32(2, 3), labels(0, 1, 2)),
        mc.type_check.InvalidType,
        invalid("Accuracy", r"y\.shape\[0\] == t\.shape\[0\]", "2 != 3")),
    row("F.forget", "func not callable", lambda: F.forget(1, v32(2)), TypeError,
        r"forget: func must be callable, got <class 'int'>"),
    row("F.forget", "func returns an int",
        lambda: F.forget(lambda a: 1, v32(2)), RuntimeError,
        r"A tuple of Variables or a Variable are expected, but <class 'int'> "
        r"is returned"),
    row("F.forget", "func returns a tuple with an array 2nd",
        lambda: F.forget(lambda a: (a * 1, a.array), v32(2)), RuntimeError,
        r"2nd element of a returned tuple is not Variable, but is "
        r"<class 'numpy.ndarray'>"),
    row("F.forget", "a list as input", lambda: F.forget(F.tanh, [1.0]),
        TypeError, r"forget: inputs must be Variables or NumPy/CuPy arrays; "
        r"input 0 is <class 'list'>"),
    row("F.forget", "None as input", lambda: F.forget(F.tanh, v32(2), None),
        TypeError, r"forget: inputs must be .*; input 1 is <class 'NoneType'>"),
    # gradient_check ----------------------------------------------------------------
    row("gradient_check", "numerical_grad with eps 0",
        lambda: gc.numerical_grad(lambda: (a32(2),), (a32(2),), (a32(2),),
                                  eps=0),
        ValueError, r"numerical_grad: eps must be positive, got 0"),
    row("gradient_check", "numerical_grad with inputs an array",
        lambda: gc.numerical_grad(lambda: (a32(2),), a32(2), (a32(2),)),
        TypeError, r"numerical_grad: inputs must be a tuple or list of arrays,"
        r" got <class 'numpy.ndarray'>"),
    row("gradient_check", "numerical_grad with f not callable",
        lambda: gc.numerical_grad(1, (a32(2),), (a32(2),)), TypeError,
        r"numerical_grad: f must be callable, got <class 'int'>"),
    row("gradient_check", "check_backward with a list of floats",
        lambda: gc.check_backward(F.tanh, [1.0, 2.0], None), TypeError,
        r"check_backward: x_data must hold arrays, got <class 'float'>"),
    row("gradient_check", "check_backward with func not callable",
        lambda: gc.check_backward(1, a32(2), a32(2)), TypeError,
        r"check_backward: func must be callable, got <class 'int'>"),
    row("gradient_check", "check_backward with y_grad of another shape",
        lambda: gc.check_backward(F.tanh, numpy.ones(2), numpy.ones(3)),
        ValueError, r"Shapes and/or dtypes of outputs and output gradients do "
        r"not match.*\(2,\):float64.*\(3,\):float64"),
    row("gradient_check", "check_backward with int data",
        lambda: gc.check_backward(F.tanh, numpy.ones(2, numpy.int32),
                                  numpy.ones(2, numpy.int32)),
        mc.type_check.InvalidType,
        invalid("Tanh", r"x\.dtype\.kind == f", "i != f")),
    row("gradient_check", "check_double_backward with y_grad of another shape",
        lambda: gc.check_double_backward(F.tanh, numpy.ones(2), numpy.ones(3),
                                         numpy.ones(2)),
        ValueError, r"Shapes and/or dtypes of outputs and output gradients"),
    # computational_graph and visualize ---------------------------------------------
    row("computational_graph", "an int among the outputs",
        lambda: build_computational_graph([1]), TypeError,
        r"element of outputs must be either Variable, VariableNode,  or "
        r"FunctionNode.\nbuild_computational_graph got: <class 'int'>"),
    row("computational_graph", "None as outputs",
        lambda: build_computational_graph(None), TypeError,
        r"element of outputs must be either Variable.*got: <class "
        r"'NoneType'>"),
    row("computational_graph", "an unknown rankdir",
        lambda: build_computational_graph([v32(2) * 2], rankdir="XX"),
        ValueError, r"rankdir must be in TB, BT, LR or RL\. "
        r"\(build_computational_graph got 'XX'\)"),
    row("computational_graph", "dump to another format",
        lambda: build_computational_graph([v32(2) * 2]).dump("png"),
        NotImplementedError, r"Currently, only dot format is supported\. "
        r"\(dump got format='png'\)"),
    row("visualize", "draw an array", lambda: mc.visualize.draw(a32(2)),
        TypeError, r"element of outputs must be either Variable.*got: <class "
        r"'numpy.ndarray'>"),
    row("visualize", "to_digraph of an int", lambda: mc.visualize.to_digraph(1),
        TypeError, r"element of outputs must be either Variable.*got: <class "
        r"'int'>"),
    row("visualize", "order_table of None", lambda: mc.visualize.order_table(None),
        TypeError, r"order_rows/order_table: expected the BackwardOrderHook that "
        r"recorded a backward, got <class 'NoneType'>"),
    row("visualize", "depth_first_backward of an array",
        lambda: mc.visualize.depth_first_backward(a32(2), []), TypeError,
        r"depth_first_backward: output must be a Variable, got <class "
        r"'numpy.ndarray'>"),
    row("visualize", "checkpoint_bound with 0 segments",
        lambda: mc.visualize.checkpoint_bound(8, 0, 1), ValueError,
        r"checkpoint_bound: n_blocks and segments must be positive ints, got "
        r"segments=0"),
    row("visualize", "plot_memory of a list",
        lambda: mc.visualize.plot_memory([("start", 0)]), TypeError,
        r"plot_memory: timelines must be a dict name -> timeline.*got <class "
        r"'list'>"),
    row("visualize", "plot_memory in an unknown unit",
        lambda: mc.visualize.plot_memory({"a": [("start", 0)]}, unit="GB"),
        ValueError, r"plot_memory: unit must be one of B, KiB, MiB, got 'GB'"),
    row("visualize", "to_digraph with order an int",
        lambda: mc.visualize.to_digraph(v32(2) * 2, order=3), TypeError,
        r"to_digraph: order must be a BackwardOrderHook or a list of "
        r"FunctionNodes, got <class 'int'>"),
    row("visualize", "to_svg of an int", lambda: mc.visualize.to_svg(3),
        TypeError, r"to_svg: expected a graphviz Digraph or DOT text, got "
        r"<class 'int'>"),
    # memory and checkpointing ------------------------------------------------------
    row("memory.measure", "an unknown device",
        lambda: mc.memory.measure(device="tpu").__enter__(), ValueError,
        r"memory: device must be 'cpu' or 'gpu', got 'tpu'"),
    row("memory.measure", "one block entered twice", measure_reentered,
        RuntimeError, r"memory.measure: this measure block is already open"),
    row("checkpoint_sequential", "0 segments",
        lambda: mc.checkpoint_sequential([F.tanh], 0, v32(2)), ValueError,
        r"checkpoint_sequential: segments must be a positive int, got 0"),
    row("checkpoint_sequential", "segments a str",
        lambda: mc.checkpoint_sequential([F.tanh], "2", v32(2)), ValueError,
        r"checkpoint_sequential: segments must be a positive int, got '2'"),
    row("checkpoint_sequential", "no functions",
        lambda: mc.checkpoint_sequential([], 1, v32(2)), ValueError,
        r"checkpoint_sequential needs at least one function"),
    row("checkpoint_sequential", "a function that is not callable",
        lambda: mc.checkpoint_sequential([F.tanh, 1], 1, v32(2)), TypeError,
        r"checkpoint_sequential: functions\[1\] must be callable, got <class "
        r"'int'>"),
    row("checkpoint_sequential", "a list as input",
        lambda: mc.checkpoint_sequential([F.tanh], 1, [1.0]), TypeError,
        r"forget: inputs must be Variables or NumPy/CuPy arrays; input 0 is "
        r"<class 'list'>"),
    # links -------------------------------------------------------------------------
    row("Link/Chain", "calling a Link without forward",
        lambda: mc.Link()(v32(2)), NotImplementedError,
        r"Link defines no forward\(\)"),
    row("Link/Chain", "a chain as its own child", lambda: _self_child(),
        ValueError, r"Loop: a chain cannot be its own child"),
    row("Link/Chain", "init_scope before super().__init__()",
        lambda: _no_super_init(), RuntimeError,
        r"NoSuperInit.init_scope\(\): call super\(\).__init__\(\) first"),
    row("Link/Chain", "to_gpu without a GPU", lambda: mc.Link().to_gpu(),
        RuntimeError, r"Link.to_gpu\(\): CuPy with a working GPU is needed"),
    row("links.Linear", "a negative out_size", lambda: linear_link(4, -3),
        ValueError, r"Linear: out_size must be a positive int, got -3"),
    row("links.Linear", "out_size 0", lambda: linear_link(4, 0), ValueError,
        r"Linear: out_size must be a positive int, got 0"),
    row("links.Linear", "in_size a str", lambda: linear_link("4", 3),
        ValueError, r"Linear: in_size must be a positive int or None, got '4'"),
    row("links.Linear", "int32 input to a lazy layer",
        lambda: linear_link(3)(numpy.ones((2, 4), numpy.int32)),
        mc.type_check.InvalidType,
        invalid("Linear", r"x\.dtype\.kind == f and x\.ndim >= 2",
                r"x\.dtype = int32, x\.shape = \(2, 4\)")),
    row("links.Linear", "a 1-d input to a lazy layer",
        lambda: linear_link(3)(a32(4)), mc.type_check.InvalidType,
        invalid("Linear", r"x\.dtype\.kind == f and x\.ndim >= 2",
                r"x\.dtype = float32, x\.shape = \(4,\)")),
    row("links.Linear", "a list input to a lazy layer",
        lambda: linear_link(3)([[1.0, 2.0]]), TypeError,
        r"Linear: the input must be a Variable or a NumPy/CuPy array, got "
        r"<class 'list'>"),
    row("links.Linear", "None input to a lazy layer",
        lambda: linear_link(3)(None), TypeError,
        r"Linear: the input must be a Variable.*<class 'NoneType'>"),
    row("links.Linear", "input of the wrong width",
        lambda: linear_link(4, 3)(a32(2, 5)), mc.type_check.InvalidType,
        invalid("Linear", r"x\.shape\[1\] == W\.shape\[1\]", "5 != 4")),
    row("links.Linear", "float64 input to float32 weights",
        lambda: linear_link(4, 3)(numpy.ones((2, 4))), mc.type_check.InvalidType,
        invalid("Linear", r"W\.dtype == x\.dtype", "float32 != float64")),
    row("links.Linear", "a 1-d input to a sized layer",
        lambda: linear_link(4, 3)(a32(4)), mc.type_check.InvalidType,
        invalid("Linear", r"x\.ndim > n_batch_axes = 1", r"x\.ndim = 1")),
    # optimizers --------------------------------------------------------------------
    row("optimizers", "setup with a non-Link",
        lambda: mc.optimizers.SGD().setup(1), TypeError,
        r"SGD.setup: expected a Link, got <class 'int'>"),
    row("optimizers", "update before setup", lambda: mc.optimizers.SGD().update(),
        RuntimeError, r"SGD.update: call setup\(link\) before update\(\)"),
    row("optimizers", "a learning rate that is a str",
        lambda: mc.optimizers.SGD(lr="0.1"), TypeError,
        r"SGD: hyperparameter lr must be a number, got '0.1'"),
    row("optimizers", "Adam's alpha None",
        lambda: mc.optimizers.Adam(alpha=None), TypeError,
        r"Adam: hyperparameter alpha must be a number, got None"),
    row("optimizers", "MomentumSGD's momentum a list",
        lambda: mc.optimizers.MomentumSGD(momentum=[0.9]), TypeError,
        r"MomentumSGD: hyperparameter momentum must be a number, got \[0.9\]"),
    row("optimizers", "update(lossfun) with lossfun not callable",
        lambda: sgd_on_linear()[1].update(1), TypeError,
        r"SGD.update: lossfun must be callable, got <class 'int'>"),
    row("optimizers", "lossfun returns an array",
        lambda: update_with(lambda link: a32()), TypeError,
        r"SGD.update: lossfun must return a Variable \(the loss\), got <class "
        r"'numpy.ndarray'>"),
    row("optimizers", "lossfun returns a non-scalar loss",
        lambda: update_with(lambda link: link(a32(4, 3))), RuntimeError,
        r"backward: the output has shape \(4, 2\) \(8 elements\)"),
    row("optimizers", "a gradient of the wrong shape",
        lambda: update_with_grad(a32(3, 2)), ValueError,
        r"SGD: the gradient of /W has shape \(3, 2\) and dtype float32, but "
        r"the parameter has shape \(2, 3\)"),
    row("optimizers", "inf in a gradient (debug mode)",
        lambda: update_with_nan_grad(numpy.inf), RuntimeError,
        r"SGD: NaN or inf in the gradient of /W; no parameter was updated"),
    row("optimizers", "NaN in a gradient (debug mode)", update_with_nan_grad,
        RuntimeError, r"SGD: NaN or inf in the gradient of /W; no parameter "
        r"was updated"),
    # datasets ----------------------------------------------------------------------
    row("datasets", "make_spiral with 0 points",
        lambda: mc.datasets.make_spiral(0), ValueError,
        r"make_spiral needs ints n_per_class >= 1 and n_classes >= 1, got 0 "
        r"and 3"),
    row("datasets", "make_spiral with a str",
        lambda: mc.datasets.make_spiral("10"), ValueError,
        r"make_spiral needs ints.*got '10'"),
    row("datasets", "make_sine with -1 points",
        lambda: mc.datasets.make_sine(-1), ValueError,
        r"make_sine needs an int n >= 1, got -1"),
    row("datasets", "SerialIterator with batch_size 0",
        lambda: mc.datasets.SerialIterator(a32(4), 0), ValueError,
        r"SerialIterator: batch_size must be an int >= 1, got 0"),
    row("datasets", "SerialIterator with batch_size a str",
        lambda: mc.datasets.SerialIterator(a32(4), "2"), ValueError,
        r"SerialIterator: batch_size must be an int >= 1, got '2'"),
    row("datasets", "SerialIterator over an empty data set",
        lambda: mc.datasets.SerialIterator(a32(0), 2), ValueError,
        r"SerialIterator: the data set is empty"),
    row("datasets", "SerialIterator over arrays of different lengths",
        lambda: mc.datasets.SerialIterator((a32(4), a32(3)), 2), ValueError,
        r"SerialIterator: the arrays of the data set have different lengths"),
]


def _self_child():
    class Loop(mc.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.me = self
    return Loop()


def _no_super_init():
    class NoSuperInit(mc.Link):
        def __init__(self):
            with self.init_scope():
                pass
    return NoSuperInit()


# ----- the tests -------------------------------------------------------------------
def _param(r):
    marks = [pytest.mark.gpu, pytest.mark.skipif(
        not backend.available, reason="needs CuPy and a GPU")] if r.gpu else []
    if r.entry in ("backend", "Variable methods", "Link/Chain") and \
            "without a GPU" in r.bad:
        marks = [pytest.mark.skipif(backend.available, reason="a GPU is present")]
    return pytest.param(r, marks=marks, id="{}: {}".format(r.entry, r.bad))


@pytest.mark.parametrize("r", [_param(r) for r in ROWS])
def test_bad_input_gives_a_clear_error(r):
    if issubclass(r.exc, Warning):
        with pytest.warns(r.exc) as record:
            r.call()
        message = str(record[0].message)
    else:
        with pytest.raises(r.exc) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's NaN
                r.call()
        message = str(info.value)
        if r.exc is KeyError and info.value.args:
            message = str(info.value.args[0])
    assert re.search(r.pattern, message, re.DOTALL), (
        "message does not match {!r}:\n{}".format(r.pattern, message))


def test_every_entry_point_has_one_section():
    headings = [line for line in render_rows().splitlines()
                if line.startswith("### ")]
    assert len(headings) == len(set(headings)) == len(counts())


SPEC_ENTRY_POINTS = [
    "Variable", "Parameter", "Variable operators", "Variable methods",
    "Variable.backward", "FunctionNode.apply", "FunctionNode.backward",
    "Function", "mc.grad", "mc.backward", "configuration", "type_check",
    "hooks", "backend", "gradient_check", "computational_graph", "visualize",
    "memory.measure", "checkpoint_sequential", "Link/Chain", "links.Linear",
    "optimizers", "datasets",
] + ["F." + name for name in (
    "identity add exp log sin cos tanh sigmoid relu leaky_relu sqrt square "
    "sum mean max min reshape transpose broadcast_to sum_to matmul linear "
    "concat split_axis get_item where clip dropout softmax log_softmax "
    "mean_squared_error softmax_cross_entropy accuracy forget").split()]


def test_every_spec_entry_point_has_rows():
    # SPEC section 3, entry by entry: each is tried with some bad input.
    missing = [name for name in SPEC_ENTRY_POINTS if name not in counts()]
    assert missing == []
    assert sorted(counts()) == sorted(SPEC_ENTRY_POINTS)


def test_rows_are_unique():
    keys = [(r.entry, r.bad) for r in ROWS]
    assert len(keys) == len(set(keys))


def test_config_is_left_as_it_was():
    # Rows switch debug mode on inside ``with``; none may leak it.
    assert mc.config.debug is False


def grouped_rows():
    """ROWS with each entry point's rows together, entry points in order of
    first appearance (stable: rows keep their order within an entry)."""
    first = {}
    for i, r in enumerate(ROWS):
        first.setdefault(r.entry, i)
    return sorted(ROWS, key=lambda r: first[r.entry])


def render_rows():
    """The doc's tables: one per entry point."""
    lines, entry = [], None
    for r in grouped_rows():
        if r.entry != entry:
            entry = r.entry
            count = sum(1 for s in ROWS if s.entry == entry)
            if lines:
                lines.append("")
            lines += ["### {} ({} bad inputs)".format(entry, count), "",
                      "| bad input | error | message matches (regex) |",
                      "|---|---|---|"]
        exc = r.exc.__name__ + (" (GPU only)" if r.gpu else "")
        pattern = r.pattern.replace("\n", r"\n").replace("|", r"\|")
        code = "`` {} ``" if "`" in pattern else "`{}`"  # Markdown code span
        lines.append("| {} | {} | {} |".format(r.bad, exc, code.format(pattern)))
    return "\n".join(lines)


def counts():
    result = {}
    for r in ROWS:
        result[r.entry] = result.get(r.entry, 0) + 1
    return result


def test_docs_list_exactly_these_rows():
    text = DOC.read_text()
    assert START in text and END in text
    between = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert between == render_rows(), (
        "docs/errors.md is out of date: python3 tests/test_errors.py "
        "--write-doc")


def test_docs_total_is_the_number_of_rows():
    assert "{} bad inputs in all".format(len(ROWS)) in DOC.read_text()


def write_doc():
    text = DOC.read_text()
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    head = re.sub(r"\d+ bad inputs in all", "{} bad inputs in all".format(
        len(ROWS)), head)
    DOC.write_text(head + START + "\n" + render_rows() + "\n" + END + tail)


if __name__ == "__main__":
    if "--write-doc" in sys.argv:
        write_doc()
    for entry, n in counts().items():
        print("{:28s} {}".format(entry, n))
    print("total", len(ROWS))
