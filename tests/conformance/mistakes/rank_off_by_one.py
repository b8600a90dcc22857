"""Mistake: an output gets its creator's rank, not one more.

Every Variable of the graph then has rank 0, and every function too, so the
heap cannot tell which function must run first: it runs them in the order
they were pushed, which is wrong on a graph with branches.
"""

from mychain import variable

LOSES = {1: "one more", 2: "outputs get one more", 7: "wrong rank"}


def creator(self, func):
    self.node.creator = func
    if func is not None:
        self.node.rank = func.rank  # the mistake: + 1 forgotten


variable.Variable.creator = variable.Variable.creator.setter(creator)
