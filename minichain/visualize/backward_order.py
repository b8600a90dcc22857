"""Why backward uses a heap: the order it visits functions, and a wrong one.

A function may run its backward only once every function that used its
outputs has run: before that, its output gradient is incomplete. The engine
guarantees this by popping the highest rank first from a heap. A
``BackwardOrderHook`` records that order and the heap after each pop; this
module prints it as a table and draws it.

For contrast, :func:`depth_first_backward` visits the graph depth-first,
running each function the first time it is reached, as a first attempt at a
backward engine often does. On a graph such as ``h = 2*x; y = h + h*h`` it
runs ``h``'s creator after only the ``h`` branch has sent its gradient, and
the ``h*h`` branch's share is lost: :func:`wrong_order_example` shows the
number it gets (2) next to the right one (26).
"""

import numpy

from minichain.configuration import no_backprop_mode
from minichain.function_hooks.backward_order import (BackwardOrderHook,
                                                     display_name)
from minichain.variable import Variable
from minichain.visualize import engine_api


# ----- the table ----------------------------------------------------------------
def order_rows(hook):
    """``(step, function, rank, heap after the pop)`` per step, as plain values.

    ``hook`` is the BackwardOrderHook (minichain) or the ``record_backward``
    record (any engine) of a backward. The heap is None for an engine that
    does not expose it.
    """
    if not hasattr(hook, "steps"):
        raise TypeError("order_rows/order_table: expected the BackwardOrderHook "
                        "that recorded a backward, got {} (a record_backward "
                        "record works too)".format(type(hook)))
    return [(s.step, s.name, s.rank, None if s.heap is None else
             ", ".join("{} (rank {})".format(n, r)
                       for n, r in zip(s.heap, s.heap_ranks)) or "(empty)")
            for s in hook.steps]


def order_table(hook, pushed=False):
    """The rows of :func:`order_rows` as aligned text (stable under nbval);
    without the heap column when the engine does not expose its heap.

    ``pushed=True`` adds what each step pushed after its pop, so that a
    heap left empty by the pop is not read as the end of the walk.
    """
    steps = order_rows(hook)
    with_heap = all(heap is not None for _, _, _, heap in steps)
    rows = [("step", "function", "rank", "heap after the pop")]
    rows += [(str(a), b, str(c), d or "") for a, b, c, d in steps]
    if pushed and with_heap:
        rows = [row + (then,) for row, then in
                zip(rows, ["pushed"] + _pushed_per_step(hook.steps))]
    width = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    if not with_heap:
        width = width[:3]
    return "\n".join("  ".join(cell.rjust(w) if i in (0, 2) else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(row, width))
                               ).rstrip()
                     for row in rows)


def _pushed_per_step(steps):
    """What each step pushed: the heap the next step found before its pop,
    less the heap this step left after its own; in push order (the order
    of the function's inputs) while the graph is alive."""
    pushed = []
    for step, after in zip(steps, list(steps[1:]) + [None]):
        before_next = [] if after is None else [after.name] + list(after.heap)
        new = [name for name in before_next if name not in step.heap]
        function = getattr(step, "function", None)
        if function is not None:
            creators = [engine_api.creator_of(entry)
                        for entry in engine_api.inputs_of(function)]
            order = [engine_api.display_name(c) for c in creators
                     if c is not None]
            new.sort(key=lambda name: order.index(name) if name in order
                     else len(order))
        pushed.append(", ".join(new) or "-")
    return pushed


# ----- depth-first, for contrast ------------------------------------------------
class DepthFirstResult:
    """What a naive depth-first backward did.

    Attributes:
        order: display names of the functions, in the order they ran.
        ranks: their ranks.
        too_early: for each, True if some function that used its outputs
            had not run yet (so its output gradient was incomplete).
        grads: the gradients it computed for ``inputs`` (arrays or None).
    """

    def __init__(self, order, ranks, too_early, grads):
        self.order, self.ranks = order, ranks
        self.too_early, self.grads = too_early, grads


def depth_first_backward(output, inputs):
    """Backward by a depth-first walk that runs each function once, when reached.

    This is the *wrong* algorithm, kept to be looked at. Nothing is written
    to the Variables; the gradients of ``inputs`` are returned.
    """
    if not isinstance(output, Variable):
        raise TypeError("depth_first_backward: output must be a Variable, got "
                        "{}".format(type(output)))
    consumers = _consumers(output.creator_node)
    grads = {output.node: Variable(numpy.ones_like(output.array))}
    done, order, ranks, too_early = set(), [], [], []
    stack = [output.creator_node] if output.creator_node is not None else []
    with no_backprop_mode():
        while stack:
            func = stack.pop()
            if func in done:
                continue
            done.add(func)
            order.append(display_name(func))
            ranks.append(func.rank)
            too_early.append(any(c not in done for c in consumers.get(func, ())))
            out_grads = tuple(grads.get(ref()) for ref in func.outputs)
            targets = tuple(range(len(func.inputs)))
            for node, gx in zip(func.inputs,
                                func._backward_targets(targets, out_grads)):
                if gx is not None:
                    grads[node] = gx if node not in grads else grads[node] + gx
            # Reversed, so that the first input is explored first.
            for node in reversed(func.inputs):
                if node.creator_node is not None:
                    stack.append(node.creator_node)
    result = [grads[x.node].array if x.node in grads else None for x in inputs]
    return DepthFirstResult(order, ranks, too_early, result)


def _consumers(last):
    """function -> the functions that use its outputs, behind ``last``."""
    consumers, seen, stack = {}, set(), [last]
    while stack:
        func = stack.pop()
        if func is None or func in seen:
            continue
        seen.add(func)
        for node in func.inputs or ():
            creator = node.creator_node
            if creator is not None:
                consumers.setdefault(creator, set()).add(func)
                stack.append(creator)
    return consumers


class OrderComparison:
    """The heap's order and the depth-first order on the same graph.

    Attributes:
        hook: the BackwardOrderHook of the real backward.
        heap_grad: ``x.grad`` from the real backward.
        depth_first: the :class:`DepthFirstResult`.
        depth_first_grad: the gradient depth-first got for ``x``.
    """

    def __init__(self, hook, heap_grad, depth_first):
        self.hook = hook
        self.heap_grad = heap_grad
        self.depth_first = depth_first
        self.depth_first_grad = depth_first.grads[0]


def wrong_order_example(x_value=3.0):
    """``h = 2*x; y = h + h*h`` at ``x = x_value``: heap vs depth-first.

    dy/dx = 2 * (1 + 2h) = 26 at x = 3. Depth-first reaches ``h``'s creator
    through the ``h`` branch first, runs it with gradient 1 and gets 2.
    """
    x = Variable(numpy.array(x_value, dtype=numpy.float32), name="x")
    h = 2 * x
    h.name = "h"
    hh = h * h
    hh.name = "hh"
    y = h + hh
    y.name = "y"
    hook = BackwardOrderHook()
    with hook:
        y.backward()
    return OrderComparison(hook, x.grad.copy(), depth_first_backward(y, [x]))


# ----- figures ----------------------------------------------------------------
def plot_backward_order(hook, ax=None, title="heap order"):
    """Step (x) against rank (y): the function popped, and what waits.

    Filled dots are the function run at each step; hollow dots above a step
    are the functions still on the heap after that pop.
    """
    from matplotlib import pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    steps = [s.step for s in hook.steps]
    ranks = [s.rank for s in hook.steps]
    ax.plot(steps, ranks, "-o", color="C0", zorder=2, label="popped")
    for s in hook.steps:
        ax.annotate(s.name, (s.step, s.rank), textcoords="offset points",
                    xytext=(6, 6), fontsize=8)
        if s.heap_ranks:
            ax.scatter([s.step] * len(s.heap_ranks), s.heap_ranks,
                       facecolors="none", edgecolors="C1", zorder=3,
                       label="waiting on the heap" if s.step == _first_wait(
                           hook) else None)
    _order_axes(ax, title)
    return ax.figure


def _first_wait(hook):
    for s in hook.steps:
        if s.heap_ranks:
            return s.step
    return None


def plot_depth_first(result, ax=None, title="depth-first order"):
    """The depth-first order; functions run too early are marked red."""
    from matplotlib import pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    steps = list(range(1, len(result.order) + 1))
    ax.plot(steps, result.ranks, "-", color="C7", zorder=1)
    colors = ["C3" if early else "C0" for early in result.too_early]
    ax.scatter(steps, result.ranks, c=colors, zorder=2)
    for step, name, rank, early in zip(steps, result.order, result.ranks,
                                       result.too_early):
        ax.annotate(name + (" (too early)" if early else ""), (step, rank),
                    textcoords="offset points", xytext=(6, 6), fontsize=8,
                    color="C3" if early else "black")
    _order_axes(ax, title)
    return ax.figure


def plot_order_comparison(comparison):
    """Heap order and depth-first order side by side, with both gradients."""
    from matplotlib import pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    plot_backward_order(comparison.hook, ax=left, title="heap (by rank): "
                        "x.grad = {:g}".format(float(comparison.heap_grad)))
    plot_depth_first(comparison.depth_first, ax=right,
                     title="depth-first: x.grad = {:g} (wrong)".format(
                         float(comparison.depth_first_grad)))
    fig.tight_layout()
    return fig


def _order_axes(ax, title):
    ax.set_xlabel("backward step")
    ax.set_ylabel("rank")
    ax.set_title(title)
    ax.margins(x=0.4, y=0.25)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.yaxis.get_major_locator().set_params(integer=True)
    handles, labels = ax.get_legend_handles_labels()
    if labels:
        ax.legend(loc="best", fontsize=8)
