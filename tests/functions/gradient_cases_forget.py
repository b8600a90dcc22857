"""Gradient-check cases for ``F.forget``: the recomputed graph must give
the same first and second derivatives as the function it wraps, for one,
two and three outputs, nested, and with dropout inside (seeded, so every
call of the case draws the same mask and finite differences make sense).
"""

import minichain as mc
import minichain.functions as F
from gradient_case import Case, uniform


def one_output(x, y):
    return F.forget(lambda a, b: F.tanh(a) * b + F.sin(a * b), x, y)


def two_outputs(x):
    return F.forget(lambda a: (F.exp(a), a * a), x)


def three_outputs(x, y):
    return F.forget(lambda a, b: (a + b, a * b, F.sin(a) * b), x, y)


def nested(x):
    return F.forget(lambda a: F.forget(lambda b: F.tanh(b) * b, a) * a, x)


def with_dropout(x):
    mc.random.seed(7)  # the same mask on every call of the case
    return F.forget(lambda a: F.dropout(a * a, ratio=0.5), x)


CASES = [
    Case("forget", one_output, uniform(-1, 1, n=2)),
    Case("forget_two_outputs", two_outputs, uniform(-1, 1), covers=("forget",)),
    Case("forget_three_outputs", three_outputs, uniform(-1, 1, n=2),
         covers=("forget",)),
    Case("forget_nested", nested, uniform(-1, 1), covers=("forget",)),
    Case("forget_dropout", with_dropout, uniform(-1, 1), shapes=((4, 3),),
         covers=("forget", "dropout"), random=True),
]
