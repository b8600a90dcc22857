"""``PrintHook``: print what goes into every forward and backward step.

For each step it prints the function's label and, for every input, the
multi-line ``Variable.debug_print()`` block (device, shape, dtype, mean and
std). Inputs whose arrays the graph did not keep (not retained) print as
``(removed)``: in backward the hook sees only what the function retained,
which makes the memory choices of each function visible. In backward it also
prints the output gradients.
"""

import sys
import warnings

from minichain import backend
from minichain.function_hook import FunctionHook
from minichain.variable import Variable


class PrintHook(FunctionHook):
    """Print the inputs (and output gradients) of every step.

    Args:
        sep: deprecated and ignored (kept for Chainer's signature).
        end: written after each printed item.
        file: where to write (default ``sys.stdout``).
        flush: flush ``file`` after each step.
    """

    name = "PrintHook"

    def __init__(self, sep=None, end="\n", file=sys.stdout, flush=True):
        if sep is not None:
            warnings.warn("PrintHook: sep is deprecated and has no effect; "
                          "use end", DeprecationWarning, stacklevel=2)
        self.end = end
        self.file = file
        self.flush = flush

    def _print(self, text):
        self.file.write(text + self.end)

    def _report(self, function, in_data, out_grad=None):
        self._print("function\t{}".format(function.label))
        self._print("input data")
        for array in in_data:
            if array is None:
                self._print("(removed)")
            else:
                self._print(Variable(array).debug_print())
        if out_grad:
            self._print("output gradient")
            for gy in out_grad:
                self._print(_gradient_block(gy))
        if self.flush and hasattr(self.file, "flush"):
            self.file.flush()

    def forward_preprocess(self, function, in_data):
        self._report(function, in_data)

    def backward_preprocess(self, function, in_data, out_grad):
        self._report(function, in_data, out_grad)


def _gradient_block(gy):
    """Debug print of a gradient: a zero Variable whose ``grad`` is ``gy``."""
    if gy is None:
        return Variable().debug_print()
    xp = backend.get_array_module(gy)
    holder = Variable(xp.zeros_like(gy))
    holder.grad = gy
    return holder.debug_print()
