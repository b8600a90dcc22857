"""Mistake: Mul's backward swaps its inputs: ``gy * a`` for ``a``.

Right for ``x * x`` and wherever a and b happen to be equal; wrong as soon
as they differ.
"""

from mychain import functions
from mychain.functions import sum_to

LOSES = {6: "look swapped", 8: "look swapped"}


def mul_backward(self, target_input_indexes, grad_outputs):
    gy, = grad_outputs
    a, b = self.get_retained_inputs()
    return sum_to(gy * a, a.shape), sum_to(gy * b, b.shape)


functions.Mul.backward = mul_backward
