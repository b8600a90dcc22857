"""``matmul``: matrix products, batched over leading axes that broadcast.

For ``y = a @ b`` the gradients are again matrix products::

    ga = gy @ b.T        gb = a.T @ gy

With transposed operands (``transa``/``transb``) the same rule holds for
the transposed matrices; the backward below folds the transposes into the
flags instead of materialising them. Leading (batch) axes broadcast like
NumPy's ``matmul``, so each gradient is summed back to its operand's shape.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils import type_check
from minichain.utils.array import force_array
from minichain.utils import arguments


def _matrix(x, transpose):
    """``x`` with its last two axes swapped if ``transpose`` (a view)."""
    return x.swapaxes(-1, -2) if transpose else x


class MatMul(FunctionNode):
    """``y = op(a) @ op(b)`` where ``op`` transposes the last two axes on
    request; ``a: (..., n, k)``, ``b: (..., k, m)``, ``y: (..., n, m)``."""

    def __init__(self, transa=False, transb=False):
        self.transa = transa
        self.transb = transb

    @property
    def label(self):
        return "MatMul"

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("a", "b"))
        a, b = in_types
        type_check.expect(
            a.dtype.kind == "f",
            a.dtype == b.dtype,
            a.ndim >= 2,
            b.ndim >= 2,
        )
        a_inner = a.shape[-2] if self.transa else a.shape[-1]
        b_inner = b.shape[-1] if self.transb else b.shape[-2]
        type_check.expect(a_inner == b_inner)
        a_shape, b_shape = type_check.eval(a.shape), type_check.eval(b.shape)
        type_check.expect_broadcast_shapes(a_shape[:-2], b_shape[:-2])

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        a, b = inputs
        xp = backend.get_array_module(a)
        y = xp.matmul(_matrix(a, self.transa), _matrix(b, self.transb))
        return force_array(y),

    def backward(self, indexes, grad_outputs):
        from minichain.functions.array.broadcast import sum_to
        a, b = self.get_retained_inputs()
        gy, = grad_outputs
        result = []
        if 0 in indexes:
            if self.transa:  # a.T receives gy @ op(b).T, so a gets op(b) @ gy.T
                ga = matmul(b, gy, transa=self.transb, transb=True)
            else:            # a receives gy @ op(b).T
                ga = matmul(gy, b, transb=not self.transb)
            result.append(sum_to(ga, a.shape))
        if 1 in indexes:
            if self.transb:  # b.T receives op(a).T @ gy, so b gets gy.T @ op(a)
                gb = matmul(gy, a, transa=True, transb=self.transa)
            else:            # b receives op(a).T @ gy
                gb = matmul(a, gy, transa=not self.transa)
            result.append(sum_to(gb, b.shape))
        return tuple(result)


def matmul(a, b, transa=False, transb=False):
    """Matrix product of the last two axes, batched over the others.

    Args:
        a: Variable or array of floats, shape ``(..., n, k)`` (``(..., k, n)``
            with ``transa``).
        b: Variable or array of the same dtype, shape ``(..., k, m)``
            (``(..., m, k)`` with ``transb``).
        transa, transb: transpose the last two axes of ``a`` / ``b`` first.

    Returns:
        A Variable of shape ``(..., n, m)``; the leading axes of ``a`` and
        ``b`` broadcast against each other as in ``numpy.matmul``. Both
        operands need at least 2 axes. ``a @ b`` on Variables calls this.

    >>> a = Variable(numpy.array([[1.0, 2.0]]))        # (1, 2)
    >>> b = Variable(numpy.array([[3.0], [4.0]]))      # (2, 1)
    >>> matmul(a, b).array
    array([[11.]])
    """
    arguments.check_bool("matmul", "transa", transa)
    arguments.check_bool("matmul", "transb", transb)
    return MatMul(transa, transb).apply((a, b))[0]
