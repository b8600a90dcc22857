"""Mistake: every function's backward ignores the gradient it receives.

It returns the local derivative alone (``dy/dx``), as if the upstream
gradient were always one: right for ``y.backward()`` on ``y = f(x)`` itself,
wrong as soon as anything comes after ``f``. The engine is right, so only the
tasks that judge the learner's functions fail.
"""

import numpy

from mychain import functions
from mychain.functions import broadcast_to, matmul, sum_to, transpose
from mychain.variable import Variable

LOSES = {6: "upstream gradient of 1", 8: "upstream gradient of 1"}


def _ones(shape):
    return Variable(numpy.ones(shape))


def add_backward(self, target_input_indexes, grad_outputs):
    a_shape, b_shape = self.shapes
    return _ones(a_shape), _ones(b_shape)


def mul_backward(self, target_input_indexes, grad_outputs):
    a, b = self.get_retained_inputs()
    return sum_to(broadcast_to(b, numpy.broadcast_shapes(a.shape, b.shape)),
                  a.shape), sum_to(a, b.shape)


def exp_backward(self, target_input_indexes, grad_outputs):
    y, = self.get_retained_outputs()
    return y,


def tanh_backward(self, target_input_indexes, grad_outputs):
    y, = self.get_retained_outputs()
    return 1 - y * y,


def sum_backward(self, target_input_indexes, grad_outputs):
    return _ones(self.x_shape),


def matmul_backward(self, target_input_indexes, grad_outputs):
    a, b = self.get_retained_inputs()
    ones = Variable(numpy.ones((a.shape[0], b.shape[1])))
    return matmul(ones, transpose(b)), matmul(transpose(a), ones)


functions.Add.backward = add_backward
functions.Mul.backward = mul_backward
functions.Exp.backward = exp_backward
functions.Tanh.backward = tanh_backward
functions.Sum.backward = sum_backward
functions.MatMul.backward = matmul_backward
