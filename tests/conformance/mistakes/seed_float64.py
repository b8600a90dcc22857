"""Mistake: backward starts from float64 ones, whatever y's dtype.

``numpy.ones(y.shape)`` instead of ``numpy.ones_like(y.array)``: right
numbers, wrong dtype, so a float32 network gets float64 gradients (and
every backward after the first function computes in float64).
"""

import numpy

from mychain import backprop
from mychain.variable import Variable

LOSES = {3: "start from ones of y's own dtype"}

_walk = backprop.walk


def walk(y, retain_grad=False):
    if y.grad_var is None and y.array.size == 1:
        y.grad_var = Variable(numpy.ones(y.array.shape))  # the mistake
        try:
            _walk(y, retain_grad)
        finally:
            if not retain_grad:
                y.grad_var = None
        return
    _walk(y, retain_grad)


backprop.walk = walk
