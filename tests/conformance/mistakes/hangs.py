"""Not a typical mistake but a test of the runner: backward never ends.

``Candidates.pop`` returns the top function without taking it off the heap,
so every backward loops forever.
"""

from mychain import backprop


def pop(self):
    return self.heap[0][-1]


backprop.Candidates.pop = pop
