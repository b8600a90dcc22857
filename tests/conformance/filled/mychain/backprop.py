"""The backward engine: from an output back to every leaf behind it.

``Variable.backward`` calls ``backward`` (given), which switches recording
to ``enable_double_backprop`` and runs your loop, ``walk``. The loop grows
with the chapters, as the hand-made engine of the course does:

- chapter 03 (Task 3): follow the creators down a chain, handing each
  function the gradient of its output;
- chapter 04 (Task 5): *add* the gradients that reach a variable along
  several paths;
- chapter 05 (Task 7): run the functions from the highest rank down, with a
  heap, so that each runs once, after everything that used its outputs;
- chapter 07 (Task 9): keep the gradients of the middle on request.
"""

# heapq, numpy and Variable are for the code you write.
import heapq  # NOQA
import itertools
import weakref

import numpy  # NOQA

from mychain.configuration import using_config
from mychain.variable import Variable  # NOQA


def backward(y, retain_grad=False, enable_double_backprop=False):
    """Run ``walk`` from ``y`` with recording set as asked (given).

    With ``enable_double_backprop=False`` (the default) the functions'
    backwards run with recording off, so the gradients have no graph and
    nothing is kept for a second derivative. With True they record one,
    and each gradient can be differentiated again (chapter 11).
    """
    with using_config("enable_backprop", enable_double_backprop):
        walk(y, retain_grad)


def walk(y, retain_grad=False):
    """Task 3 (chapter 03): backpropagate from ``y`` to every leaf behind it.

    1. The starting gradient: ``y.grad_var`` if the user set one; else, when
       ``y`` has one element, ones of ``y``'s shape and dtype
       (``numpy.ones_like``, wrapped in a Variable); else raise a
       ``RuntimeError`` that says to set ``y.grad`` first.
    2. Keep a table from node to the gradient that has reached it, a dict
       ``{y.node: that gradient}``: nodes, not Variables, because the user
       may have dropped a Variable in the middle.
    3. Visit the functions, starting from ``y.creator``. For each one:
       its output gradients are ``grads.get(ref())`` for each ``ref`` in
       ``func.outputs`` (None for one that got none); call
       ``func.backward(tuple(range(len(func.inputs))), those gradients)``,
       which returns one gradient Variable (or None) per input; store each
       one for its input node (skip None); and go on with that input's
       creator, if it has one.
    4. A leaf (a node without creator) keeps its gradient on its Variable,
       ``grad_var``, if the Variable is still alive. Variables in the middle
       get none (Task 9 adds ``retain_grad``).

    On a chain a plain list of the functions to visit is enough, and so is
    storing each gradient with ``=``. Later tasks change two lines of this
    loop: Task 5 stores every gradient with ``add_gradient``, Task 7 keeps
    the functions to visit in ``Candidates``. Task 9 calls
    ``retain_gradients`` when ``retain_grad`` is True.
    """
    seed = y.grad_var
    if seed is None:
        if y.array.size != 1:
            raise RuntimeError(
                "backward: y has shape {} and no gradient; set y.grad first"
                .format(y.array.shape))
        seed = Variable(numpy.ones_like(y.array))
    grads = {y.node: seed}
    candidates = Candidates()
    candidates.push(y.creator)
    while len(candidates):
        func = candidates.pop()
        if retain_grad:
            retain_gradients(func, grads)
        grad_outputs = tuple(grads.get(ref()) for ref in func.outputs)
        grad_inputs = func.backward(tuple(range(len(func.inputs))),
                                    grad_outputs)
        for node, gx in zip(func.inputs, grad_inputs):
            if gx is not None:
                add_gradient(grads, node, gx)
                candidates.push(node.creator)


def retain_gradients(func, grads):
    """Task 9 (chapter 07): give ``func``'s outputs their gradients.

    ``walk`` calls this for each function it visits when
    ``retain_grad=True``, right after it has looked up the function's
    output gradients in the table ``grads``. Each output whose Variable is
    still alive (``node.get_variable_or_none()``) and whose node has a
    gradient gets it as its ``grad_var``. Without ``retain_grad`` the
    gradients in the middle stay in the table and are gone after backward:
    a deep network would otherwise keep one gradient per layer.
    """
    for ref in func.outputs:
        node = ref()
        variable = None if node is None else node.get_variable_or_none()
        if variable is not None and node in grads:
            variable.grad_var = grads[node]


def add_gradient(grads, node, gx):
    """Task 5 (chapter 04): add ``gx`` to the gradient ``node`` has so far.

    A variable reached along several paths (a branch, or ``f(x, x)``) needs
    the *sum* of what arrives. For a node in the middle the sum lives in
    the table ``grads`` (store ``gx`` if the node has nothing yet). A leaf
    (no creator) keeps its sum on its Variable's ``grad_var``, added to what
    it already holds, so leaves keep adding across ``backward`` calls until
    ``cleargrad()`` (chapter 04, "Leaves keep adding, across calls").

    Make the sum a new Variable (``old + gx``), never add into an existing
    array in place: a backward may hand the same gradient to two inputs
    (``x + y`` does), and writing into it would change both.

    Then call this from your loop (Task 3) instead of storing with ``=``.
    """
    if node.creator is None:
        variable = node.get_variable_or_none()
        if variable is not None:
            old = variable.grad_var
            variable.grad_var = gx if old is None else old + gx
    elif node in grads:
        grads[node] = grads[node] + gx
    else:
        grads[node] = gx


class Candidates:
    """The functions waiting for their backward, highest rank first.

    Task 7 (chapter 05): ``push`` and ``pop``. The heap ``self.heap`` holds
    ``(-rank, order, func)`` entries: Python's ``heapq`` pops the smallest
    key, so the key is ``-rank``; ``order``, from ``self.counter``, breaks
    ties in the order the functions were pushed (and keeps two functions
    from ever being compared). Every consumer of an output has a higher
    rank than the function that made it, so popping the highest rank first
    runs a function only after every function that used its outputs.

    Then use it in your loop (Task 3): push ``y.creator``, pop until empty,
    and after each function push its inputs' creators. The loop is a
    ``while`` loop, so a chain of 10 000 functions needs no recursion.
    """

    def __init__(self):
        self.heap = []
        self.pushed = set()  # each function is pushed once per backward
        self.counter = itertools.count()
        _forget_finished()
        _running.append(weakref.ref(self))  # see current_heap

    def push(self, func):
        """Task 7 (chapter 05): put ``func`` on the heap, once.

        Ignore None (a leaf has no creator) and a function already pushed
        in this backward.
        """
        if func is not None and func not in self.pushed:
            self.pushed.add(func)
            heapq.heappush(self.heap, (-func.rank, next(self.counter), func))

    def pop(self):
        """Task 7 (chapter 05): take the function of highest rank off the heap
        and return it."""
        return heapq.heappop(self.heap)[-1]

    def __len__(self):
        return len(self.heap)


# ----- for pictures (given) ---------------------------------------------------
_running = []  # weak references to the Candidates of running backwards


def _forget_finished():
    """Drop the references to Candidates whose backward has returned."""
    while _running and _running[-1]() is None:
        _running.pop()


def current_heap():
    """The functions waiting in the innermost backward now running, next to
    pop first; ``None`` when no backward runs (given).

    ``minichain.visualize`` reads this to draw the heap of your engine (an
    engine without it is drawn without its heap). A backward's
    ``Candidates`` is freed when ``walk`` returns, so the newest one still
    alive is the innermost running one.
    """
    _forget_finished()
    if not _running:
        return None
    entries = sorted(_running[-1]().heap, key=lambda entry: entry[:2])
    return [entry[-1] for entry in entries]

