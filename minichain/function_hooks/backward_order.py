"""A hook that records the order in which backward visits functions.

The engine keeps its heap of waiting functions private: pictures are no
business of the engine. The hook does not need it. It sees every function
the engine pops (``backward_preprocess``) and knows the engine's rule, so it
keeps its own copy of the heap:

- after a function's backward, the creators of its inputs that need a
  gradient are pushed, each once per pass, keyed by ``(-rank, push order)``;
- the function popped next is the one with the highest rank.

Each time the engine pops a function, the hook takes it out of its copy and
writes down what is left: that is the heap "after the pop". If the engine
pops something the copy did not predict, the step is marked
``predicted=False`` (this happens for the second and later outputs of
``mc.backward([y0, y1])``, whose creators the hook cannot see until they are
popped).

    hook = BackwardOrderHook()
    with hook:
        loss.backward()
    print(hook.table())   # step, function, rank, heap after the pop
"""

import heapq
import itertools
import weakref

from minichain.function_hook import FunctionHook


class BackwardStep:
    """One pop of the heap.

    Attributes:
        step: 1 for the first function backward runs, 2 for the next...
        name: the function's display name (label, and its output's name).
        rank: the function's rank.
        heap: display names of the functions still waiting after the pop,
            highest rank first (the order they would pop in).
        heap_ranks: their ranks, in the same order.
        predicted: whether the hook's copy of the heap had this function on
            top (False for a function it had not seen pushed).
    """

    __slots__ = ("step", "name", "rank", "heap", "heap_ranks", "predicted",
                 "_function")

    def __init__(self, step, function, name, heap, heap_ranks, predicted):
        self.step = step
        self._function = weakref.ref(function)
        self.name = name
        self.rank = function.rank
        self.heap = heap
        self.heap_ranks = heap_ranks
        self.predicted = predicted

    @property
    def function(self):
        """The FunctionNode, or None once the graph is gone."""
        return self._function()

    def __repr__(self):
        return "BackwardStep({}, {!r}, rank={}, heap={})".format(
            self.step, self.name, self.rank, list(self.heap))


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


class BackwardOrderHook(FunctionHook):
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
        self._heap = []  # (-rank, push order, id, function), like the engine
        self._pushed = set()  # ids pushed in the current pass
        self._order = itertools.count()
        self._depth = 0  # > 0 while inside some function's backward

    def added(self, function=None):
        # A backward that raised left its step unfinished: start clean.
        self._heap, self._pushed, self._depth = [], set(), 0

    @property
    def order(self):
        """The visited FunctionNodes, in order (None for collected ones)."""
        return [s.function for s in self.steps]

    def step_of(self, function):
        """1-based step at which ``function`` ran, or None."""
        for s in self.steps:
            if s.function is function:
                return s.step
        return None

    def backward_preprocess(self, function, in_data, out_grad):
        self._depth += 1
        if self._depth > 1:
            return
        predicted = self._pop(function)
        waiting = sorted(self._heap)
        self.steps.append(BackwardStep(
            len(self.steps) + 1, function, display_name(function),
            tuple(display_name(f) for _, _, _, f in waiting),
            tuple(-key for key, _, _, _ in waiting), predicted))

    def backward_postprocess(self, function, in_data, out_grad):
        self._depth -= 1
        if self._depth > 0:
            return
        # What the engine does after a step: push the creators of the
        # inputs that need a gradient, once each.
        for node in function.inputs or ():
            creator = node.creator_node
            if (node.requires_grad and creator is not None
                    and id(creator) not in self._pushed):
                self._pushed.add(id(creator))
                heapq.heappush(self._heap, (-creator.rank, next(self._order),
                                            id(creator), creator))

    def _pop(self, function):
        """Take ``function`` out of the copy; True if it was on top.

        Functions the copy would have popped first had nothing to
        differentiate (the engine pops them silently): drop them too.
        """
        if not self._heap:  # a new pass starts
            self._pushed = set()
        if id(function) not in self._pushed:
            self._pushed.add(id(function))
            return False
        top = True
        while self._heap:
            entry = heapq.heappop(self._heap)
            if entry[3] is function:
                return top
            top = False
        return False

    def table(self):
        """The steps as text; see ``minichain.visualize.backward_order``."""
        from minichain.visualize.backward_order import order_table
        return order_table(self)
