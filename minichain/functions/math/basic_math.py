"""Arithmetic: the functions behind ``+ - * / **`` and unary ``-`` on Variables.

Each operator has two forms. Between two Variables (or a Variable and an
array) it is a two-input node whose operands may broadcast; backward sums
each gradient back to its operand's shape. With a Python or NumPy scalar it
is a one-input "constant" node: the scalar is cast to the Variable's dtype,
so ``float32 * 2.5`` stays float32 (and an integer Variable times 2.5
multiplies by 2, as in Chainer).

Every backward is written with these same operators, so it can itself be
differentiated (double backprop).
"""

import numpy

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.utils.array import force_array, sum_to as sum_array_to
from minichain.variable import Variable

# ``x * c`` and ``x + c`` are the commonest operations of a learner's loop, so
# their forward (and MulConstant's backward_arrays) test for an ndarray result
# inline and call force_array only for a 0-d input's scalar (a Python call
# costs about as much as NumPy's work on a small array).
_ndarray = numpy.ndarray


def _scalar_label(value):
    """How a constant appears in a label: ``2``, ``(-2)``, ``0.1``, ``constant array``.

    The constant has been cast to the Variable's dtype, so it prints in the
    shortest form that reads back as that dtype (``x + 1`` shows ``_ + 1``,
    not ``_ + 1.0``; a float32 0.1 shows ``0.1``, not ``0.10000000149``).
    """
    if isinstance(value, backend.array_types):
        if value.ndim > 0:
            return "constant array"
        value = value[()]  # a 0-d array (see _constant) prints as its scalar
    text = str(value)  # NumPy prints its scalars in the shortest form
    if text.endswith(".0"):
        text = text[:-2]
    if float(value) < 0:
        return "({})".format(text)
    return text


def _sum_to_input(gx, node):
    """Reduce a broadcast gradient to the shape of the input ``node``."""
    if gx.shape == node.shape:
        return gx
    from minichain.functions.array.broadcast import sum_to
    return sum_to(gx, node.shape)


def _check_binary(in_types, float_only=False):
    type_check.argname(in_types, ("lhs", "rhs"))
    lhs, rhs = in_types
    if float_only:
        type_check.expect(lhs.dtype.kind == "f")
    type_check.expect(lhs.dtype == rhs.dtype)
    type_check.expect_broadcast_shapes(lhs.shape, rhs.shape)


# ----- addition ---------------------------------------------------------------
class Add(FunctionNode):
    """``lhs + rhs`` (and n-ary ``add(x0, x1, ...)``), with broadcasting."""

    @property
    def label(self):
        return "_ + _"

    def check_type_forward(self, in_types):
        if len(in_types) == 2:
            _check_binary(in_types)
            return
        # n-ary: every input in the first one's dtype, shapes broadcasting.
        for i in range(1, len(in_types)):
            type_check.expect(in_types[i].dtype == in_types[0].dtype)
        type_check.expect_broadcast_shapes(*[t.shape for t in in_types])

    def forward(self, inputs):
        if len(inputs) == 1:
            return inputs[0],  # a sum of one term: the term itself, as in Chainer
        y = inputs[0] + inputs[1]
        for x in inputs[2:]:
            y = y + x
        return force_array(y),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        return tuple([_sum_to_input(gy, self.inputs[i]) for i in indexes])

    def backward_arrays(self, indexes, grad_outputs):
        gy, = grad_outputs
        return tuple([sum_array_to(gy, self.inputs[i].shape)
                      for i in indexes])


class AddConstant(FunctionNode):
    """``x + c``: the gradient passes through unchanged."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "_ + {}".format(_scalar_label(self.value))

    def forward(self, inputs):
        y = inputs[0] + self.value
        return (y if type(y) is _ndarray else force_array(y)),

    def backward(self, indexes, grad_outputs):
        return grad_outputs

    def backward_arrays(self, indexes, grad_outputs):
        # Passed on unchanged, so this array may be shared with another
        # entry of the gradient table: the engine never adds into it.
        return grad_outputs[0],  # a plain tuple, as the engine expects


def add(*xs):
    """Elementwise sum of any number of Variables/arrays (at least one).

    With one input, as in Chainer, the result is a new Variable holding the
    input's own array, whose gradient passes straight back: a backward that
    gathers a varying number of terms (``F.add(*terms)``) needs no special
    case for one term.
    """
    if len(xs) < 1:
        raise TypeError("add: at least one input is needed, got 0")
    return Add().apply(xs)[0]


# ----- subtraction and negation -------------------------------------------------
class Sub(FunctionNode):
    """``lhs - rhs`` with broadcasting."""

    @property
    def label(self):
        return "_ - _"

    def check_type_forward(self, in_types):
        _check_binary(in_types)

    def forward(self, inputs):
        return force_array(inputs[0] - inputs[1]),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        return tuple([_sum_to_input(gy if i == 0 else -gy, self.inputs[i])
                      for i in indexes])


class SubFromConstant(FunctionNode):
    """``c - x``."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "{} - _".format(_scalar_label(self.value))

    def forward(self, inputs):
        return force_array(self.value - inputs[0]),

    def backward(self, indexes, grad_outputs):
        return -grad_outputs[0],


class Neg(FunctionNode):
    """``-x``."""

    @property
    def label(self):
        return "__neg__"

    def forward(self, inputs):
        return force_array(-inputs[0]),

    def backward(self, indexes, grad_outputs):
        return -grad_outputs[0],


class Absolute(FunctionNode):
    """``abs(x)``; the gradient at 0 is taken as 0 (the sign function)."""

    @property
    def label(self):
        return "|_|"

    def forward(self, inputs):
        self.retain_inputs((0,))
        return force_array(abs(inputs[0])),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        xp = backend.get_array_module(x.array)
        return grad_outputs[0] * force_array(xp.sign(x.array)),


# ----- multiplication -----------------------------------------------------------
class Mul(FunctionNode):
    """``lhs * rhs`` with broadcasting; floats only."""

    @property
    def label(self):
        return "_ * _"

    def check_type_forward(self, in_types):
        _check_binary(in_types, float_only=True)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return force_array(inputs[0] * inputs[1]),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x0, x1 = self.get_retained_inputs()
        result = []
        for i in indexes:
            other = x1 if i == 0 else x0
            result.append(_sum_to_input(gy * other, self.inputs[i]))
        return tuple(result)

    def backward_arrays(self, indexes, grad_outputs):
        gy, = grad_outputs  # the retained arrays sit in the input nodes
        xs = (self.inputs[0].data, self.inputs[1].data)
        return tuple([sum_array_to(force_array(gy * xs[1 - i]),
                                   self.inputs[i].shape) for i in indexes])


class MulConstant(FunctionNode):
    """``x * c``: the gradient is ``gy * c``."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "_ * {}".format(_scalar_label(self.value))

    def forward(self, inputs):
        y = inputs[0] * self.value
        return (y if type(y) is _ndarray else force_array(y)),

    def backward(self, indexes, grad_outputs):
        return MulConstant(self.value).apply(grad_outputs)

    def backward_arrays(self, indexes, grad_outputs):
        gx = grad_outputs[0] * self.value
        return (gx if type(gx) is _ndarray else force_array(gx)),


# ----- division -------------------------------------------------------------------
class Div(FunctionNode):
    """``lhs / rhs`` with broadcasting; floats only."""

    @property
    def label(self):
        return "_ / _"

    def check_type_forward(self, in_types):
        _check_binary(in_types, float_only=True)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return force_array(inputs[0] / inputs[1]),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        x0, x1 = self.get_retained_inputs()
        gx0 = gy / x1  # d(x0/x1)/dx0 = 1/x1
        result = []
        for i in indexes:
            if i == 0:
                result.append(_sum_to_input(gx0, self.inputs[0]))
            else:  # d(x0/x1)/dx1 = -x0/x1**2
                result.append(_sum_to_input(-gx0 * x0 / x1, self.inputs[1]))
        return tuple(result)


class DivFromConstant(FunctionNode):
    """``c / x``: the gradient is ``-c / x**2 * gy``."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "{} / _".format(_scalar_label(self.value))

    def forward(self, inputs):
        self.retain_inputs((0,))
        return force_array(self.value / inputs[0]),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (-self.value) / (x * x),


# ----- powers -------------------------------------------------------------------
class Pow(FunctionNode):
    """``lhs ** rhs`` for two Variables; floats only."""

    @property
    def label(self):
        return "_ ** _"

    def check_type_forward(self, in_types):
        _check_binary(in_types, float_only=True)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        self.retain_outputs((0,))
        return force_array(inputs[0] ** inputs[1]),

    def backward(self, indexes, grad_outputs):
        from minichain.functions.math.exponential import log
        gy, = grad_outputs
        x0, x1 = self.get_retained_inputs()
        y, = self.get_retained_outputs()
        result = []
        for i in indexes:
            if i == 0:  # d(a**b)/da = b * a**(b-1)
                g = gy * x1 * x0 ** (x1 - 1)
            else:  # d(a**b)/db = log(a) * a**b
                g = gy * log(x0) * y
            result.append(_sum_to_input(g, self.inputs[i]))
        return tuple(result)


class PowVarConst(FunctionNode):
    """``x ** c``: the gradient is ``c * x**(c-1) * gy``."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "_ ** {}".format(_scalar_label(self.value))

    def forward(self, inputs):
        self.retain_inputs((0,))
        return force_array(inputs[0] ** self.value),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        c = self.value
        return grad_outputs[0] * (x ** (c - 1)) * c,


class PowConstVar(FunctionNode):
    """``c ** x``: the gradient is ``log(c) * c**x * gy``."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "{} ** _".format(_scalar_label(self.value))

    def forward(self, inputs):
        self.retain_outputs((0,))
        return force_array(self.value ** inputs[0]),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        xp = backend.get_array_module(y.array)
        log_c = force_array(xp.log(self.value)).astype(y.dtype)
        return grad_outputs[0] * y * log_c,


# ----- installing the operators on Variable -------------------------------------
def _constant_or_none(value, x):
    """Classify the other operand of ``x <op> value``.

    Returns ``(kind, converted)``: ``'var'`` for a Variable, ``'array'`` for
    an array (cast to x's dtype), ``'scalar'`` for a number (cast to x's
    dtype type). Anything else is a TypeError naming what was given.
    """
    if type(value) is float or type(value) is int:  # the common case, first
        return "scalar", x._data.dtype.type(value)
    if isinstance(value, Variable):
        return "var", value
    if isinstance(value, backend.array_types):
        return "array", value.astype(x.dtype, copy=False)
    if numpy.isscalar(value) and not isinstance(value, (str, bytes)):
        if numpy.iscomplexobj(value) and x.dtype.kind != "c":
            raise TypeError(
                "Value must be a real scalar for a Variable of dtype {}.\n"
                "Actual: {!r}".format(x.dtype, value))
        return "scalar", x.dtype.type(value)
    raise TypeError(
        "Value must be a scalar, `numpy.ndarray`, `cupy.ndarray` or a "
        "`Variable`.\nActual: {}".format(type(value)))


def _binary(x, value, two_input, one_input, reflected=False):
    """``x <op> value`` for a value that is not a Python number."""
    try:
        kind, other = _constant_or_none(value, x)
    except TypeError as error:  # name the operator, e.g. "_ + _: Value ..."
        raise TypeError("{}: {}".format(two_input().label, error)) from None
    if kind == "scalar":
        return one_input(other).apply((x,))[0]
    if (kind == "array" and other.ndim == 0 and one_input is not None
            and type(other) is numpy.ndarray):
        # A 0-d NumPy array is a number; a 0-d CuPy array stays on the GPU
        # as the second input (turning it into a number waits for the GPU).
        return one_input(other.dtype.type(other)).apply((x,))[0]
    pair = (other, x) if reflected else (x, other)
    return two_input().apply(pair)[0]


def _operator(name, two_input, one_input, reflected=False):
    """Make the method ``Variable.<name>``, e.g. ``__mul__`` from ``Mul``
    (two Variables) and ``MulConstant`` (a Variable and a number).

    A Python number (``y * 2.0``) is the most common operand in a learner's
    loop, so it goes straight to the one-input node, cast to x's dtype;
    every other operand is classified by ``_binary``.

    The operator remembers its last cast: the cast (``numpy.float32(2.0)``,
    made a 0-d array by ``_constant``) costs as much as NumPy's whole
    multiplication of ten numbers, and a loop gives the same number object
    again and again. Right because the same (immutable) number, cast to the
    same dtype object for the same type of array, gives the same read-only
    constant; the four are replaced together, as one tuple, so another
    thread never sees a number with another's cast.
    """
    last = (None, None, None, None)  # (number, dtype, array type, constant)

    def operator(x, value):
        nonlocal last
        if type(value) is float or type(value) is int:
            data = x._data
            number, dtype, kind, constant = last
            if (value is not number or data.dtype is not dtype
                    or type(data) is not kind):
                constant = _constant(data.dtype.type(value), data)
                last = (value, data.dtype, type(data), constant)
            return one_input(constant).apply((x,))[0]
        return _binary(x, value, two_input, one_input, reflected)
    operator.__name__ = operator.__qualname__ = name
    return operator


def _constant(scalar, data):
    """The operand a constant node computes with: for a NumPy input, the
    cast number as a read-only 0-d array.

    Why: NumPy 2 turns a scalar operand into an array on every call, and
    that costs a third of the multiplication of ten numbers; a 0-d array
    of the same dtype gives the same numbers (both are typed operands,
    neither is "weak"), without the conversion. Read-only, because the
    operator hands the same array to every node it makes. CuPy takes
    scalars, not NumPy arrays, so a CuPy input keeps the scalar.
    """
    if type(data) is not _ndarray:
        return scalar
    array = numpy.asarray(scalar)
    array.setflags(write=False)
    return array


def _subtract_constant(c):
    return AddConstant(-c) if c == c else AddConstant(c)  # nan stays nan


def _divide_by_constant(c):
    return MulConstant(1 / c) if c != 0 else _DivByConstant(c)


def _neg(self):
    return Neg().apply((self,))[0]


def _abs(self):
    return Absolute().apply((self,))[0]


def _pos(self):
    return self


def _matmul(self, other):
    from minichain.functions.math.matmul import matmul
    return matmul(self, other)


def _rmatmul(self, other):
    from minichain.functions.math.matmul import matmul
    return matmul(other, self)


class _DivByConstant(FunctionNode):
    """``x / 0``: kept as a division so the result is inf/nan as in NumPy."""

    def __init__(self, value):
        self.value = value

    @property
    def label(self):
        return "_ / {}".format(_scalar_label(self.value))

    def forward(self, inputs):
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return force_array(inputs[0] / self.value),

    def backward(self, indexes, grad_outputs):
        return _DivByConstant(self.value).apply(grad_outputs)


def install_variable_arithmetics():
    """Attach the operators to ``Variable`` (done once, at import)."""
    Variable.__add__ = Variable.__radd__ = _operator("__add__", Add,
                                                     AddConstant)
    Variable.__sub__ = _operator("__sub__", Sub, _subtract_constant)
    Variable.__rsub__ = _operator("__rsub__", Sub, SubFromConstant,
                                  reflected=True)
    Variable.__mul__ = Variable.__rmul__ = _operator("__mul__", Mul,
                                                     MulConstant)
    Variable.__truediv__ = _operator("__truediv__", Div, _divide_by_constant)
    Variable.__rtruediv__ = _operator("__rtruediv__", Div, DivFromConstant,
                                      reflected=True)
    Variable.__pow__ = _operator("__pow__", Pow, PowVarConst)
    Variable.__rpow__ = _operator("__rpow__", Pow, PowConstVar,
                                  reflected=True)
    Variable.__neg__ = _neg
    Variable.__abs__ = _abs
    Variable.__pos__ = _pos
    Variable.__matmul__ = _matmul
    Variable.__rmatmul__ = _rmatmul


install_variable_arithmetics()
