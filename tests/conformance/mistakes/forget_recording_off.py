"""Mistake: forget's backward recomputes ``func`` with recording off.

Backward runs the functions' backwards with recording off; without
``force_backprop_mode()`` the recomputed output has no creator, and the
backward from it reaches nothing: every input gets None.
"""

from mychain import forget
from mychain.variable import Variable

LOSES = {11: "force_backprop_mode"}


def backward(self, target_input_indexes, grad_outputs):
    xs = [Variable(x.array) for x in self.get_retained_inputs()]
    y = self.func(*xs)  # the mistake: not inside force_backprop_mode()
    y.grad_var = grad_outputs[0]
    y.backward()
    return tuple(x.grad_var for x in xs)


forget.Forget.backward = backward
