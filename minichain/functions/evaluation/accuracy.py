"""``accuracy``: the fraction of samples whose top-scoring class is right.

Not differentiable (an argmax has no useful gradient): it is a node only so
that it shows in graphs and hooks like every other function.
"""

from minichain import backend
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.utils import type_check


class Accuracy(FunctionNode):
    """Inputs ``(y, t)``: scores ``(N, C, ...)`` and labels ``(N, ...)``."""

    def __init__(self, ignore_label=None):
        self.ignore_label = ignore_label

    @property
    def label(self):
        return "Accuracy"

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("y", "t"))
        y, t = in_types
        type_check.expect(y.dtype.kind == "f", t.ndim == y.ndim - 1,
                          y.shape[0] == t.shape[0])

    def forward(self, inputs):
        y, t = inputs
        xp = backend.get_array_module(y)
        predicted = y.argmax(axis=1)
        correct = predicted == t
        if self.ignore_label is None:
            value = correct.mean(dtype=y.dtype) if t.size else 0.0
        else:
            counted = t != self.ignore_label
            total = counted.sum()
            value = (correct & counted).sum() / total if total else 0.0
        return force_array(xp.asarray(value, dtype=y.dtype)),


def accuracy(y, t, ignore_label=None):
    """Fraction of correct argmax predictions, as a 0-d Variable.

    Args:
        y: scores ``(N, C)`` (class axis 1), Variable or array.
        t: integer labels ``(N,)``, Variable or array.
        ignore_label: samples with this label are not counted.

    Returns a 0-d Variable in ``y``'s dtype; it has no gradient.
    """
    labels = getattr(t, "array", t)
    if getattr(labels, "dtype", None) is None or labels.dtype.kind not in "iu":
        raise TypeError("accuracy: labels t must be an integer array or "
                        "Variable, got {}".format(
                            getattr(labels, "dtype", type(labels))))
    return Accuracy(ignore_label).apply((y, t))[0]
