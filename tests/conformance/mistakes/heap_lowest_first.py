"""Mistake: the heap pops the function of *lowest* rank first.

``heapq`` pops the smallest key; pushing ``rank`` instead of ``-rank`` runs
the functions nearest the leaves first, before the functions that use their
outputs have sent their gradients.
"""

import heapq

from mychain import backprop

LOSES = {7: "heapq pops the smallest key"}


def push(self, func):
    if func is not None and func not in self.pushed:
        self.pushed.add(func)
        heapq.heappush(self.heap, (func.rank, next(self.counter), func))


backprop.Candidates.push = push
