"""``softmax_cross_entropy``: the classification loss on raw scores.

With scores ``x`` of shape ``(N, C)`` and integer labels ``t`` of shape
``(N,)``, the loss of sample ``i`` is ``-log_softmax(x)[i, t[i]]``; samples
labelled ``ignore_label`` contribute nothing. (More axes are allowed: ``x``
``(N, C, d1, ...)`` with ``t`` ``(N, d1, ...)``; the class axis is 1.)

Backward, with ``p = softmax(x)`` and one-hot labels ``T``:
``gx = (p - T) * gy / count``. Two details matter:

* The one-hot array and the mask are built in ``x``'s dtype. Subtracting an
  integer one-hot from float32 scores would give float64 and silently run
  the whole backward in float64 (DeZero's MLP is twice as slow for this).
* When backward records a graph (``enable_double_backprop=True``) it is
  written with minichain's ``softmax`` and operators on the retained ``x``,
  so the loss can be differentiated twice; otherwise the same formula runs
  on plain arrays, in place, with no nodes to pay for.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.functions.activation.log_softmax import _log_softmax_array
from minichain.utils.array import force_array
from minichain.variable import Variable
from minichain.utils import arguments
from minichain.utils import type_check


class SoftmaxCrossEntropy(FunctionNode):
    """Inputs ``(x, t)``: float scores and integer labels; no gradient for t."""

    def __init__(self, normalize=True, reduce="mean", ignore_label=-1):
        self.normalize = normalize
        self.reduce = reduce
        self.ignore_label = ignore_label

    @property
    def label(self):
        return "SoftmaxCrossEntropy"

    def check_type_forward(self, in_types):
        if (type_check.light_pass(in_types) and len(in_types) == 2
                and _types_fit(*in_types)):
            return  # the common case, checked cheaply; the DSL gives messages
        type_check.argname(in_types, ("x", "t"))
        x, t = in_types
        type_check.expect(
            x.dtype.kind == "f",
            t.dtype.kind == "i",
            x.ndim >= 2,
            t.ndim == x.ndim - 1,
            x.shape[0] == t.shape[0],
        )
        for axis in range(2, type_check.eval(x.ndim)):
            type_check.expect(x.shape[axis] == t.shape[axis - 1])

    def forward(self, inputs):
        x, t = inputs
        xp = backend.get_array_module(x)
        self.retain_inputs((0, 1))
        # Usually every label is a class and none is ignored: then two
        # reductions say so, and the loss needs no masks.
        all_valid = _all_labels_valid(t, x.shape[1], self.ignore_label)
        if all_valid:
            self._count = t.size
        else:
            valid = t != self.ignore_label
            self._count = int(valid.sum())  # the coefficient's count
            _check_labels(xp, t, x.shape[1], self.ignore_label)
        safe_t = t if all_valid else xp.where(valid, t, 0)  # masked below
        log_p = _log_softmax_array(x, axis=1)
        # Kept for backward_arrays: softmax(x) is exp(log_p), one pass over
        # the scores instead of four (Chainer's ``cache_score`` does this).
        self._log_p = log_p
        losses = -_pick(xp, log_p, safe_t)
        if not all_valid:
            losses *= valid.astype(x.dtype)
        if self.reduce == "no":
            return losses,
        return force_array(losses.sum() * x.dtype.type(self._coefficient(t)),
                           x.dtype),

    def _coefficient(self, t):
        """``1 / count``: valid labels if normalize, else the batch size."""
        if self.normalize:
            count = self._count  # counted by forward
        else:
            count = t.shape[0]
        return 1.0 / max(count, 1)

    def backward(self, indexes, grad_outputs):
        x, t = self.get_retained_inputs()
        gy, = grad_outputs
        xp = backend.get_array_module(x.array)
        onehot, mask = _onehot_and_mask(xp, t.array, x.shape[1], x.dtype,
                                        self.ignore_label)
        from minichain.functions.activation.log_softmax import log_softmax
        from minichain.functions.array.reshape import reshape
        from minichain.functions.math.exponential import exp
        if self.reduce == "no":   # one gradient per sample: (N, 1, d1, ...)
            scale = reshape(gy, gy.shape[:1] + (1,) + gy.shape[1:])
        else:                     # a 0-d gradient for the mean
            scale = gy * self._coefficient(t.array)
        # softmax(x) as exp(log_softmax(x)): the forward's log_p, so the
        # numbers round as in backward_arrays, bit for bit.
        gx = (exp(log_softmax(x, axis=1)) * mask - onehot) * scale
        return tuple([gx if i == 0 else None for i in indexes])

    def backward_arrays(self, indexes, grad_outputs):
        # The same formula on arrays, in place (FunctionNode.backward_arrays).
        x, t = self.inputs[0].data, self.inputs[1].data
        gy, = grad_outputs
        xp = backend.get_array_module(x)
        gx = xp.exp(self._log_p)  # softmax(x), from the forward's log_p
        if self._count == t.size and x.ndim == 2:
            # No ignored label: subtract 1 at each label, no one-hot array.
            gx[xp.arange(len(t)), t] -= 1
        else:
            onehot, mask = _onehot_and_mask(xp, t, x.shape[1], x.dtype,
                                            self.ignore_label)
            gx *= mask
            gx -= onehot
        if self.reduce == "no":
            gx *= gy.reshape(gy.shape[:1] + (1,) + gy.shape[1:])
        else:
            gx *= gy * x.dtype.type(self._coefficient(t))
        return tuple([gx if i == 0 else None for i in indexes])


def _types_fit(x, t):
    """Plain-Python version of ``check_type_forward``'s conditions."""
    return (x.dtype.kind == "f" and t.dtype.kind == "i"
            and len(x.shape) >= 2 and len(t.shape) == len(x.shape) - 1
            and x.shape[0] == t.shape[0] and x.shape[2:] == t.shape[1:])


def _onehot_and_mask(xp, t, n_classes, dtype, ignore_label):
    """One-hot labels ``(N, C, ...)`` and the valid-sample mask ``(N, 1, ...)``.

    Both in ``dtype`` (the scores' float dtype), never in the label's int
    dtype. An ignored label matches no class, so its one-hot row is zero.
    """
    classes = xp.arange(n_classes).reshape((1, n_classes) + (1,) * (t.ndim - 1))
    onehot = (t[:, None] == classes).astype(dtype)
    mask = (t[:, None] != ignore_label).astype(dtype)
    return onehot, mask


def _pick(xp, a, t):
    """``a[i, t[i], ...]``: each sample's entry at its label's class."""
    if a.ndim == 2:  # plain indexing costs less than take_along_axis
        return a[xp.arange(len(t)), t]
    return xp.take_along_axis(a, t[:, None], axis=1)[:, 0]


def _all_labels_valid(t, n_classes, ignore_label):
    """Is every label a class (in ``[0, n_classes)``) and none ignored?"""
    if t.size == 0:
        return True
    low, high = int(t.min()), int(t.max())
    return 0 <= low and high < n_classes and not low <= ignore_label <= high


def _check_labels(xp, t, n_classes, ignore_label):
    bad = (t != ignore_label) & ((t < 0) | (t >= n_classes))
    if bool(bad.any()):
        values = backend.to_cpu(t[bad])
        raise ValueError(
            "softmax_cross_entropy: labels must be in [0, {}) or equal to "
            "ignore_label ({}); got {}".format(n_classes, ignore_label,
                                               sorted(set(values.tolist()))[:10]))


def softmax_cross_entropy(x, t, normalize=True, reduce="mean",
                          ignore_label=-1):
    """Cross-entropy of ``softmax(x)`` against integer labels ``t``.

    Args:
        x: float scores ``(N, C)`` (or ``(N, C, d1, ...)``), not probabilities.
        t: integer labels ``(N,)`` (or ``(N, d1, ...)``), array or Variable.
        normalize: with ``reduce='mean'``, divide by the number of labels
            that are not ``ignore_label`` (True) or by ``N`` (False).
        reduce: ``'mean'`` gives a 0-d loss; ``'no'`` gives one loss per
            sample, shape ``t.shape`` (0 where the label is ignored).
        ignore_label: samples with this label add nothing to the loss.

    Returns a Variable in ``x``'s dtype.
    """
    arguments.check_int("softmax_cross_entropy", "ignore_label", ignore_label)
    if reduce not in ("mean", "no"):
        raise ValueError("softmax_cross_entropy: reduce must be 'mean' or "
                         "'no', got {!r}".format(reduce))
    label_array = t.array if isinstance(t, Variable) else t
    if not isinstance(label_array, backend.array_types):
        raise TypeError("softmax_cross_entropy: labels t must be an integer "
                        "array or Variable, got {}".format(type(t)))
    if label_array.dtype.kind not in "iu":
        raise TypeError("softmax_cross_entropy: labels t must have an integer "
                        "dtype (int32 or int64), got {}"
                        .format(label_array.dtype))
    if label_array.dtype.kind == "u":
        label_array = label_array.astype(backend.get_array_module(
            label_array).int64)
    return SoftmaxCrossEntropy(normalize, reduce, ignore_label).apply(
        (x, label_array))[0]
