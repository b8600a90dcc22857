"""``linear``: the fully connected layer, ``y = x W^T + b``.

Shapes: ``x`` is ``(N, in)``, ``W`` is ``(out, in)``, ``b`` is ``(out,)``
and ``y`` is ``(N, out)``. The gradients are matrix products again:

    gx = gy W        (N, in)   = linear(gy, W^T)
    gW = gy^T x      (out, in) = linear(gy^T, x^T)
    gb = sum_N gy    (out,)

so the backward is written with ``linear`` itself, and double backprop
works. Only the gradients that are asked for are computed: the input batch
of the first layer needs no ``gx``, and skipping it saves a whole product.

When ``W`` is a Parameter that owns its gradient buffer, ``gy^T x`` is added
into that buffer block by block instead of being computed as a whole and
then added (``backward_accumulate`` below).
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import type_check

# Rows of the weight gradient computed per block in the fused accumulation.
_ROWS_PER_BLOCK = 64


class Linear(FunctionNode):
    """``y = x @ W.T (+ b)`` on 2-d ``x``; inputs ``(x, W)`` or ``(x, W, b)``."""

    @property
    def label(self):
        return "Linear"

    def check_type_forward(self, in_types):
        if (type_check.light_pass(in_types) and len(in_types) in (2, 3)
                and _types_fit(*in_types)):
            return  # the common case, checked cheaply; the DSL gives messages
        if len(in_types) <= 2:  # one input: W is what is missing
            type_check.argname(in_types, ("x", "W"))
        else:
            type_check.argname(in_types, ("x", "W", "b"))
        x, W = in_types[0], in_types[1]
        type_check.expect(
            x.dtype.kind == "f",
            W.dtype == x.dtype,
            x.ndim == 2,
            W.ndim == 2,
            x.shape[1] == W.shape[1],
        )
        if len(in_types) == 3:
            b = in_types[2]
            type_check.expect(b.dtype == x.dtype, b.ndim == 1,
                              b.shape[0] == W.shape[0])

    def forward(self, inputs):
        x, W = inputs[0], inputs[1]
        self.retain_inputs((0, 1))
        y = x @ W.T  # BLAS reads the transposed view; nothing is copied
        if len(inputs) == 3:
            y += inputs[2]
        return y,

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy, = grad_outputs
        from minichain.functions.array.broadcast import sum_to
        from minichain.functions.array.transpose import transpose
        result = []
        for i in indexes:
            if i == 0:
                result.append(linear(gy, transpose(W)))
            elif i == 1:
                result.append(linear(transpose(gy), transpose(x)))
            else:
                result.append(sum_to(gy, self.inputs[2].shape))
        return tuple(result)

    def backward_arrays(self, indexes, grad_outputs):
        # The same products on plain arrays, without the cost of applying
        # Transpose and Linear nodes (see FunctionNode.backward_arrays).
        # ``gx`` is computed last, as a hand-written step does: the next
        # backward (the activation's) reads it while it is still in cache.
        gy, = grad_outputs
        x, W = self.inputs[0].data, self.inputs[1].data
        result = {}
        for i in sorted(indexes, reverse=True):
            if i == 0:
                result[i] = gy @ W
            elif i == 1:
                result[i] = gy.T @ x
            else:
                result[i] = force_array(gy.sum(axis=0))
        return tuple([result[i] for i in indexes])

    def backward_accumulate(self, target_input_indexes, grad_outputs,
                            grad_inputs):
        """Add ``gW`` and ``gb`` straight into owned Parameter buffers.

        Why: the default computes ``gW = gy^T x`` as a new (out, in) array and
        then adds it to the buffer. For a 1024x1024 float32 layer that
        temporary is 4 MiB, and in the ``forget`` benchmark it sits on top of
        the activations at the peak, pushing memory past the 2 sqrt(L)
        bound. Computing ``gy^T x`` a block of rows at a time into a small
        scratch array and adding each block in place needs 64 rows' worth
        (256 KiB) instead. This is only allowed where the engine says the
        buffer is ours to write (``backprop._owns_buffer``: a Parameter's own
        gradient, no double backprop); otherwise the default path runs.
        """
        from minichain.backprop import _owns_buffer
        fused = [k for k, i in enumerate(target_input_indexes)
                 if i > 0 and grad_inputs[k] is not None and _owns_buffer(
                     self.inputs[i].get_variable_or_none(), grad_inputs[k])]
        if not fused:
            return super().backward_accumulate(
                target_input_indexes, grad_outputs, grad_inputs)

        gy = grad_outputs[0].array
        x = self.get_retained_inputs()[0].array
        for k in fused:
            buffer = grad_inputs[k].array
            if target_input_indexes[k] == 1:
                _add_weight_gradient(buffer, gy, x)
            else:
                buffer += gy.sum(axis=0)

        rest = [k for k in range(len(target_input_indexes)) if k not in fused]
        totals = list(grad_inputs)
        if rest:
            others = super().backward_accumulate(
                tuple([target_input_indexes[k] for k in rest]), grad_outputs,
                tuple([grad_inputs[k] for k in rest]))
            for k, total in zip(rest, others):
                totals[k] = total
        return tuple(totals)


def _types_fit(x, W, b=None):
    """Plain-Python version of ``check_type_forward``'s conditions."""
    return (x.dtype.kind == "f" and W.dtype == x.dtype and len(x.shape) == 2
            and len(W.shape) == 2 and x.shape[1] == W.shape[1]
            and (b is None or (b.dtype == x.dtype and len(b.shape) == 1
                               and b.shape[0] == W.shape[0])))


def _add_weight_gradient(buffer, gy, x):
    """``buffer += gy^T x`` in blocks of rows, with one small scratch array."""
    xp = backend.get_array_module(buffer)
    n_out = buffer.shape[0]
    rows = min(_ROWS_PER_BLOCK, n_out)
    scratch = xp.empty((rows, buffer.shape[1]), dtype=buffer.dtype)
    for start in range(0, n_out, rows):
        stop = min(start + rows, n_out)
        block = scratch[:stop - start]
        xp.matmul(gy[:, start:stop].T, x, out=block)
        buffer[start:stop] += block


def linear(x, W, b=None, n_batch_axes=1):
    """Fully connected layer ``y = x W^T + b``.

    Args:
        x: input of shape ``(N, in)``; with more axes, the first
            ``n_batch_axes`` are batch axes and the rest are flattened into
            ``in``.
        W: weight of shape ``(out, in)``.
        b: optional bias of shape ``(out,)``.
        n_batch_axes: how many leading axes of ``x`` are batch axes.

    Returns a Variable of shape ``x.shape[:n_batch_axes] + (out,)``, in the
    dtype of ``x`` (which ``W`` and ``b`` must share).
    """
    if n_batch_axes < 1:
        raise ValueError("linear: n_batch_axes must be at least 1, got {}"
                         .format(n_batch_axes))
    inputs = (x, W) if b is None else (x, W, b)
    shape = getattr(x, "shape", None)
    if shape is None:  # not an array: apply names the type
        return Linear().apply(inputs)[0]
    if len(shape) <= n_batch_axes:
        from minichain.utils.type_check import InvalidType
        raise InvalidType(
            "x.ndim > n_batch_axes = {}".format(n_batch_axes),
            "x.ndim = {} (x.shape = {})".format(len(shape), shape),
        ).with_header("Linear")
    if len(shape) == n_batch_axes + 1 and n_batch_axes == 1:
        return Linear().apply(inputs)[0]
    from minichain.functions.array.reshape import reshape
    batch_shape = tuple(shape[:n_batch_axes])
    batch = 1
    for s in batch_shape:
        batch *= s
    x2 = reshape(x, (batch, -1))
    y = Linear().apply((x2,) + inputs[1:])[0]
    return reshape(y, batch_shape + (y.shape[1],))
