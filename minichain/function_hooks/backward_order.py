"""A hook that records the order in which backward visits functions.

The order recorded is the engine's own, not a recomputation of it. The hook
writes a function down when the engine is about to run its backward
(``backward_preprocess``), in the sequence the engine makes those calls,
together with what the engine's heap holds at that moment: the functions
still waiting after the pop (``backprop.current_pass().heap``). There is no
second copy of the heap to keep in step with the engine, so the table and
the pictures drawn from it cannot drift from what backward does, whatever
the graph (a backward that returns no gradient for an input, ``mc.grad``
walking only part of a graph, several outputs given to ``mc.backward``).

    hook = BackwardOrderHook()
    with hook:
        loss.backward()
    print(hook.table())   # step, function, rank, heap after the pop
"""

import weakref

from minichain import backprop
from minichain.function_hook import FunctionHook


class BackwardStep:
    """One pop of the heap.

    Attributes:
        step: 1 for the first function backward runs, 2 for the next...
        name: the function's display name (label, and its output's name).
        rank: the function's rank.
        heap: display names of the functions still waiting after the pop,
            highest rank first (the order they will pop in); None if the
            backward was not run by minichain's engine.
        heap_ranks: their ranks, in the same order (None likewise).
    """

    __slots__ = ("step", "name", "rank", "heap", "heap_ranks", "_function")

    def __init__(self, step, function, waiting):
        self.step = step
        self._function = weakref.ref(function)
        self.name = display_name(function)
        self.rank = function.rank
        self.heap = self.heap_ranks = None
        if waiting is not None:
            self.heap = tuple(display_name(f) for f in waiting)
            self.heap_ranks = tuple(f.rank for f in waiting)

    @property
    def function(self):
        """The FunctionNode, or None once the graph is gone."""
        return self._function()

    def __repr__(self):
        return "BackwardStep({}, {!r}, rank={}, heap={})".format(
            self.step, self.name, self.rank,
            None if self.heap is None else list(self.heap))


def display_name(function):
    """``label`` of ``function``, with ``-> name`` when an output is named.

    Several functions often share a label (``_ * _``); naming the variable
    each produces is what tells them apart in a table.
    """
    for ref in function.outputs or ():
        node = ref()
        if node is not None and node.name is not None:
            return "{} -> {}".format(function.label, node.name)
    return function.label


class StepLog:
    """What a record of one backward offers: its ``steps``, read three ways.

    Shared by this hook (minichain's engine) and
    ``minichain.visualize.record_backward`` (any engine).
    """

    @property
    def order(self):
        """The functions, in the order their backward ran (None for collected ones)."""
        return [s.function for s in self.steps]

    def step_of(self, function):
        """1-based step at which ``function`` ran, or None."""
        for s in self.steps:
            if s.function is function:
                return s.step
        return None

    def table(self):
        """The steps as text; see ``minichain.visualize.backward_order``."""
        from minichain.visualize.backward_order import order_table
        return order_table(self)


class BackwardOrderHook(StepLog, FunctionHook):
    """Records each backward step: function, rank and the heap after the pop.

    Attributes:
        steps: list of :class:`BackwardStep`, in visiting order.

    Backward passes run inside another function's backward (for example the
    recomputation inside ``F.forget``) are not recorded as steps of the
    outer pass.
    """

    name = "BackwardOrderHook"

    def __init__(self):
        self.steps = []
        self._depth = 0  # > 0 while inside some function's backward

    def added(self, function=None):
        # A backward that raised left its step unfinished: start clean.
        self._depth = 0

    def backward_preprocess(self, function, in_data, out_grad):
        self._depth += 1
        if self._depth > 1:
            return
        # The engine's entries are (-rank, push order, function): sorted,
        # they are in the order the heap will pop them.
        run = backprop.current_pass()
        waiting = None if run is None else [f for _, _, f in sorted(run.heap)]
        self.steps.append(BackwardStep(len(self.steps) + 1, function, waiting))

    def backward_postprocess(self, function, in_data, out_grad):
        self._depth -= 1
