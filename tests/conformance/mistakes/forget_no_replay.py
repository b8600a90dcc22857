"""Mistake: forget does not replay the random state (chapter 10's bug).

The recomputation in backward draws new random numbers, so a dropout inside
the forgotten function gets a second mask: the gradient belongs to another
function than the one whose output was used.
"""

from mychain import forget
from mychain.configuration import force_backprop_mode
from mychain.variable import Variable

LOSES = {11: "random state"}


def backward(self, target_input_indexes, grad_outputs):
    xs = [Variable(x.array) for x in self.get_retained_inputs()]
    with force_backprop_mode():
        y = self.func(*xs)
    y.grad_var = grad_outputs[0]
    y.backward()
    return tuple(x.grad_var for x in xs)


forget.Forget.backward = backward
