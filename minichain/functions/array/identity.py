"""Identity: the simplest function, and the one the reference draws.

``F.identity`` is a FunctionNode; ``F.Identity`` is the old-style Function of
the reference (``y = F.Identity()(x)`` draws ``x <--- f <--- y``).
"""

from minichain.function import Function
from minichain.function_node import FunctionNode


class IdentityNode(FunctionNode):
    """Returns its inputs unchanged; gradients pass straight through."""

    @property
    def label(self):
        return "Identity"

    def forward(self, inputs):
        return tuple(inputs)

    def backward(self, indexes, grad_outputs):
        return grad_outputs


def identity(*inputs):
    """Return the inputs unchanged (one Variable, or a tuple for several)."""
    outputs = IdentityNode().apply(inputs)
    return outputs[0] if len(outputs) == 1 else outputs


class Identity(Function):
    """Old-style identity function: ``y = Identity()(x)``."""

    def check_type_forward(self, in_types):
        pass

    def forward(self, inputs):
        return tuple(inputs)

    def backward(self, inputs, grad_outputs):
        return tuple(grad_outputs)
