"""Mistake: ``Add`` and ``Mul`` sum the gradient back to the shape of their
*second* operand only.

Right whenever the broadcast input is on the right (``x * b`` for a bias
``b``), wrong as soon as it is on the left (``b * x``), where the first
operand's gradient keeps the shape of the output.
"""

from mychain import functions
from mychain.functions import sum_to

LOSES = {8: "whichever side"}


def add_backward(self, target_input_indexes, grad_outputs):
    gy, = grad_outputs
    a_shape, b_shape = self.shapes
    return gy, sum_to(gy, b_shape)


def mul_backward(self, target_input_indexes, grad_outputs):
    gy, = grad_outputs
    a, b = self.get_retained_inputs()
    return gy * b, sum_to(gy * a, b.shape)


functions.Add.backward = add_backward
functions.Mul.backward = mul_backward
