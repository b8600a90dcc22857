"""Mistake: forget keeps the graph of its function instead of forgetting it.

Its forward runs the function with the graph recorded and keeps the output,
and its backward backpropagates through that kept graph: the gradients are
right, but nothing is saved and nothing is recomputed.
"""

from mychain import forget
from mychain.variable import Variable

LOSES = {11: "no_backprop_mode"}


def forward(self, inputs):
    self.xs = [Variable(x) for x in inputs]
    self.kept = self.func(*self.xs)
    return self.kept.array,


def backward(self, target_input_indexes, grad_outputs):
    self.kept.grad_var = grad_outputs[0]
    self.kept.backward()
    return tuple(x.grad_var for x in self.xs)


forget.Forget.forward = forward
forget.Forget.backward = backward
