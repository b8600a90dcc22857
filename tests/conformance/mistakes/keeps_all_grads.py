"""Mistake: every variable on the way keeps its gradient, retain_grad or not.

The hand-made chain engine of chapter 03 writes ``x.grad`` on every variable
it passes; a deep network then holds one gradient per layer after backward.
"""

from mychain import backprop

LOSES = {9: "only leaves keep"}

_walk = backprop.walk


def walk(y, retain_grad=False):
    _walk(y, retain_grad=True)


backprop.walk = walk
