"""Record the order an engine really runs its functions' backwards.

minichain tells a ``FunctionHook`` about every backward it runs
(``BackwardOrderHook``). An engine a learner wrote has no hooks, so for it
this module watches instead: it walks the graph behind ``y``, replaces the
``backward`` of each function it finds by a wrapper that notes the call and
then runs the original, runs ``y.backward()``, and puts every ``backward``
back. What is recorded is what the engine did, in the order it did it; the
heap after each pop is recorded too when the engine exposes it
(``current_heap()``, see ``engine_api``).

Functions made during the backward (the recomputation inside ``forget``, the
graph of a double backprop) are not in the graph walked beforehand, so their
backwards are not recorded.

    record = record_backward(y)        # runs y.backward()
    print(order_table(record))         # step, function, rank (and heap)
    to_digraph(y, order=record)        # 'backward step k' on each function
"""

import contextlib

from minichain.function_hooks.backward_order import StepLog
from minichain.visualize import engine_api


class Step:
    """One backward the engine ran.

    Attributes:
        step: 1 for the first backward, 2 for the next...
        name: the function's display name (label, and its output's name).
        rank: the function's rank.
        heap: names of the functions still waiting after the pop, next to
            pop first; None when the engine does not expose its heap.
        heap_ranks: their ranks (None likewise).
    """

    def __init__(self, step, function, heap):
        self.step = step
        self._function = engine_api.weak(function)
        self.name = engine_api.display_name(function)
        self.rank = function.rank
        self.heap = None if heap is None else tuple(
            engine_api.display_name(f) for f in heap)
        self.heap_ranks = None if heap is None else tuple(f.rank for f in heap)

    @property
    def function(self):
        """The function, or None once the graph is gone."""
        return self._function()

    def __repr__(self):
        return "Step({}, {!r}, rank={})".format(self.step, self.name, self.rank)


class BackwardRecord(StepLog):
    """The backwards one ``y.backward()`` ran, in order (``steps``)."""

    def __init__(self):
        self.steps = []


def record_backward(y, *, retain_grad=False, enable_double_backprop=False):
    """Run ``y.backward()`` and record the order the engine ran backwards in.

    For minichain, a ``BackwardOrderHook`` records it; for any other engine,
    :func:`watching` does. Either result has ``steps``, ``order`` and
    ``step_of``, and is drawn by ``order_table``, ``plot_backward_order``
    and ``to_digraph(..., order=...)``.
    """
    engine_api.require(y, ("backward",), "record_backward")
    if _is_minichain(y):
        from minichain.function_hooks import BackwardOrderHook
        hook = BackwardOrderHook()
        with hook:
            y.backward(retain_grad=retain_grad,
                       enable_double_backprop=enable_double_backprop)
        return hook
    record = BackwardRecord()
    functions = functions_behind(y, "record_backward")

    def before(function, grad_outputs):
        record.steps.append(Step(len(record.steps) + 1, function,
                                 engine_api.current_heap(y)))

    with watching(functions, before):
        y.backward(retain_grad=retain_grad,
                   enable_double_backprop=enable_double_backprop)
    return record


def functions_behind(y, where):
    """The functions of the graph behind ``y``, in the walk's order."""
    graph = engine_api.collect(y, where)
    return [node for node in graph.nodes if not graph.is_variable(node)]


@contextlib.contextmanager
def watching(functions, before, after=None):
    """While the block runs, ``before(function, grad_outputs)`` is called
    just before each of ``functions`` runs its backward, and
    ``after(function)`` just after it returns (or raises).

    The wrapper is an attribute of the function object itself, which the
    engine's ``func.backward(...)`` finds before the class's method; it is
    removed at the end of the block, even when the block raises.
    """
    wrapped = []
    try:
        for function in functions:
            _wrap(function, before, after)
            wrapped.append(function)
        yield
    finally:
        for function in wrapped:
            del function.backward


def _wrap(function, before, after):
    original = function.backward
    ref = engine_api.weak(function)

    def backward(target_input_indexes, grad_outputs):
        watched = ref()
        before(watched, grad_outputs)
        try:
            return original(target_input_indexes, grad_outputs)
        finally:
            if after is not None:
                after(watched)

    try:
        function.backward = backward
    except AttributeError:
        raise TypeError(
            "record_backward: cannot watch the backward of {} (its objects "
            "take no attributes, e.g. __slots__ without __dict__)".format(
                type(function).__name__)) from None


def _is_minichain(value):
    from minichain.variable import Variable
    return isinstance(value, Variable)

