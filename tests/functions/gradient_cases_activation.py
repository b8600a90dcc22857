"""Gradient-check cases for the activations: tanh, sigmoid, relu,
leaky_relu, softmax and log_softmax.

relu and leaky_relu have a kink at 0, so their inputs keep ``|x| >= 0.2``,
far more than the finite-difference step.
"""

import numpy

import minichain.functions as F
from gradient_case import Case, uniform


def away_from_zero(shape, dtype, rng):
    """``0.2 <= |x| <= 1.5`` with random signs."""
    signs = rng.choice([-1.0, 1.0], shape)
    return (numpy.asarray(signs * rng.uniform(0.2, 1.5, shape)).astype(dtype),)


SHAPES = ((3,), (2, 3), ())
SOFTMAX_SHAPES = ((2, 3), (3, 4, 2))

CASES = [
    Case("tanh", F.tanh, uniform(-2, 2), shapes=SHAPES),
    Case("sigmoid", F.sigmoid, uniform(-3, 3), shapes=SHAPES),
    Case("relu", F.relu, away_from_zero, shapes=SHAPES),
    Case("leaky_relu", F.leaky_relu, away_from_zero, shapes=SHAPES),
    Case("leaky_relu_negative_slope", lambda x: F.leaky_relu(x, slope=-0.3),
         away_from_zero, shapes=((2, 3),), covers=("leaky_relu",)),
    Case("softmax", F.softmax, uniform(-2, 2), shapes=SOFTMAX_SHAPES),
    Case("softmax_axis0", lambda x: F.softmax(x, axis=0), uniform(-2, 2),
         shapes=((3,), (2, 3)), covers=("softmax",)),
    Case("softmax_large", lambda x: F.softmax(x * 1.0 + 50.0), uniform(-2, 2),
         shapes=((2, 3),), dtypes=(numpy.float64,), covers=("softmax",)),
    Case("log_softmax", F.log_softmax, uniform(-2, 2), shapes=SOFTMAX_SHAPES),
    Case("log_softmax_last_axis", lambda x: F.log_softmax(x, axis=-1),
         uniform(-2, 2), shapes=((4,), (2, 2, 3)), covers=("log_softmax",)),
]
