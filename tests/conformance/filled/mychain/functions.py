"""The functions: each a FunctionNode, forward beside backward.

Every ``forward`` works on a tuple of arrays and returns a tuple of arrays.
Every ``backward`` works on Variables, with these same functions, so that
running it with recording on (``enable_double_backprop=True``) records the
gradient's own graph, which can be differentiated again (chapter 11). A
backward must multiply by the gradient that arrives, ``grad_outputs``: the
chain rule is ``dL/dx = dL/dy * dy/dx``, and ``dL/dy`` is rarely all ones.

Given, as worked examples: ``Neg``, ``Sub``, ``Transpose``, ``BroadcastTo``
and ``SumTo``. Yours: ``Add``, ``Mul``, ``Exp``, ``Tanh`` (Task 6, after
chapter 04) and ``Sum``, ``MatMul`` with broadcasting in ``Add`` and ``Mul``
(Task 8, after chapter 06). The lowercase functions at the end are the way
to call them: ``exp(x)`` is ``Exp().apply((x,))[0]``.
"""

import numpy

from mychain.function_node import FunctionNode
from mychain.variable import Variable


# ----- given: worked examples ---------------------------------------------------
class Neg(FunctionNode):
    """y = -x. dy/dx = -1, so the gradient is ``-gy``."""

    def forward(self, inputs):
        x, = inputs
        return numpy.asarray(-x),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return -gy,


class Sub(FunctionNode):
    """y = a - b, shapes broadcast. dy/da = 1, dy/db = -1, each summed back
    to its input's shape (chapter 06)."""

    def forward(self, inputs):
        a, b = inputs
        self.shapes = a.shape, b.shape
        return numpy.asarray(a - b),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        a_shape, b_shape = self.shapes
        return sum_to(gy, a_shape), sum_to(-gy, b_shape)


class Transpose(FunctionNode):
    """y = x.T (axes reversed). Its backward transposes the gradient back."""

    def forward(self, inputs):
        x, = inputs
        return numpy.asarray(x.T),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return transpose(gy),


class BroadcastTo(FunctionNode):
    """y = x broadcast to ``shape``: each element of x is copied to many
    places of y, so its gradient is the sum over those places: ``SumTo``
    (chapter 06, "broadcast_to and sum_to are each other's backward")."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        self.x_shape = x.shape
        return numpy.broadcast_to(x, self.shape).copy(),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return sum_to(gy, self.x_shape),


class SumTo(FunctionNode):
    """y = x summed down to ``shape``, the shape x was broadcast from: the
    leading axes x has in excess, and the axes where ``shape`` has 1."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, inputs):
        x, = inputs
        self.x_shape = x.shape
        lead = x.ndim - len(self.shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(self.shape) if n == 1)
        y = x.sum(axis=axes, keepdims=True)
        return numpy.asarray(y.reshape(self.shape)),

    def backward(self, target_input_indexes, grad_outputs):
        gy, = grad_outputs
        return broadcast_to(gy, self.x_shape),


# ----- Task 6 (chapter 04): add, mul, exp, tanh ---------------------------------
class Add(FunctionNode):
    """y = a + b."""

    def forward(self, inputs):
        """Task 6 (chapter 04): return ``a + b`` (a tuple of one array).

        Task 8 (chapter 06): the two shapes may differ and broadcast; note
        them (``self.shapes``) for backward.
        """
        a, b = inputs
        self.shapes = a.shape, b.shape
        return numpy.asarray(a + b),

    def backward(self, target_input_indexes, grad_outputs):
        """Task 6 (chapter 04): dy/da = dy/db = 1, so both inputs get ``gy``.

        Task 8 (chapter 06): an input that was broadcast gets ``gy`` summed
        back to its own shape (``sum_to``).
        """
        gy, = grad_outputs
        a_shape, b_shape = self.shapes
        return sum_to(gy, a_shape), sum_to(gy, b_shape)


class Mul(FunctionNode):
    """y = a * b (elementwise)."""

    def forward(self, inputs):
        """Task 6 (chapter 04): return ``a * b``; keep both inputs for
        backward (``retain_inputs``). Task 8: the shapes may broadcast."""
        a, b = inputs
        self.retain_inputs((0, 1))
        return numpy.asarray(a * b),

    def backward(self, target_input_indexes, grad_outputs):
        """Task 6 (chapter 04): dy/da = b and dy/db = a, each times ``gy``,
        written with Variables (``get_retained_inputs``). Task 8: each summed
        back to its input's shape (``sum_to``)."""
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        return sum_to(gy * b, a.shape), sum_to(gy * a, b.shape)


class Exp(FunctionNode):
    """y = exp(x)."""

    def forward(self, inputs):
        """Task 6 (chapter 04): return ``exp(x)``, and keep the output:
        backward needs ``y``, not ``x`` (``retain_outputs``; chapter 03
        prints minichain's ``Exp``)."""
        x, = inputs
        self.retain_outputs((0,))
        return numpy.asarray(numpy.exp(x)),

    def backward(self, target_input_indexes, grad_outputs):
        """Task 6 (chapter 04): dy/dx = exp(x) = y, so the gradient is
        ``gy * y``, with ``y`` from ``get_retained_outputs``."""
        gy, = grad_outputs
        y, = self.get_retained_outputs()
        return gy * y,


class Tanh(FunctionNode):
    """y = tanh(x)."""

    def forward(self, inputs):
        """Task 6 (chapter 04): return ``tanh(x)``, keeping the output
        (chapter 07 says why tanh keeps its output)."""
        x, = inputs
        self.retain_outputs((0,))
        return numpy.asarray(numpy.tanh(x)),

    def backward(self, target_input_indexes, grad_outputs):
        """Task 6 (chapter 04): dy/dx = 1 - tanh(x)² = 1 - y², so the
        gradient is ``gy * (1 - y * y)``: written with Variables, this is
        what makes the second derivative of tanh work (chapter 11)."""
        gy, = grad_outputs
        y, = self.get_retained_outputs()
        return gy * (1 - y * y),


# ----- Task 8 (chapter 06): sum, matmul -----------------------------------------
class Sum(FunctionNode):
    """y = the sum of every element of x, a 0-d array."""

    def forward(self, inputs):
        """Task 8 (chapter 06): return the sum as a 0-d array
        (``numpy.asarray``), noting x's shape for backward."""
        x, = inputs
        self.x_shape = x.shape
        return numpy.asarray(x.sum()),

    def backward(self, target_input_indexes, grad_outputs):
        """Task 8 (chapter 06): every element of x adds to y once, so each
        gets ``gy``: ``broadcast_to(gy, x's shape)``. A gradient has the
        shape of its variable."""
        gy, = grad_outputs
        return broadcast_to(gy, self.x_shape),


class MatMul(FunctionNode):
    """y = a @ b, for 2-D a of shape (m, k) and b of shape (k, n)."""

    def forward(self, inputs):
        """Task 8 (chapter 06): return ``a @ b``, keeping both inputs
        (``retain_inputs``): each one's gradient needs the other."""
        a, b = inputs
        self.retain_inputs((0, 1))
        return numpy.asarray(a @ b),

    def backward(self, target_input_indexes, grad_outputs):
        """Task 8 (chapter 06): ``ga = gy @ b.T`` and ``gb = a.T @ gy``: the
        shapes choose the formula ((m, n) @ (n, k) gives a's (m, k)).
        Written with ``matmul`` and ``transpose`` on Variables."""
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        return matmul(gy, transpose(b)), matmul(transpose(a), gy)


# ----- how to call them (given) -------------------------------------------------
def _operands(a, b):
    """``a`` and ``b`` as Variables or arrays; a Python number becomes an
    array of the other side's dtype, so ``x * 2`` keeps x's float32."""
    def dtype_of(v):
        return v.dtype if isinstance(v, (Variable, numpy.ndarray)) else None

    if not isinstance(a, (Variable, numpy.ndarray)):
        a = numpy.asarray(a, dtype=dtype_of(b))
    if not isinstance(b, (Variable, numpy.ndarray)):
        b = numpy.asarray(b, dtype=dtype_of(a))
    return a, b


def add(a, b):
    return Add().apply(_operands(a, b))[0]


def sub(a, b):
    return Sub().apply(_operands(a, b))[0]


def mul(a, b):
    return Mul().apply(_operands(a, b))[0]


def neg(x):
    return Neg().apply((x,))[0]


def exp(x):
    return Exp().apply((x,))[0]


def tanh(x):
    return Tanh().apply((x,))[0]


def sum(x):
    return Sum().apply((x,))[0]


def matmul(a, b):
    return MatMul().apply((a, b))[0]


def transpose(x):
    return Transpose().apply((x,))[0]


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (``x`` itself when it has that shape)."""
    if tuple(x.shape) == tuple(shape):
        return x
    return BroadcastTo(shape).apply((x,))[0]


def sum_to(x, shape):
    """``x`` summed down to ``shape`` (``x`` itself when it has that shape)."""
    if tuple(x.shape) == tuple(shape):
        return x
    return SumTo(shape).apply((x,))[0]


from mychain.forget import forget  # NOQA  (Task 11: F.forget, as in minichain)
