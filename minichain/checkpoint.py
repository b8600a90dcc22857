"""Checkpointing a sequence of functions: ``forget`` applied per segment.

A chain of ``L`` blocks keeps ``L`` activations for backward. Cut it into
``s`` segments and wrap each in ``F.forget``: forward then keeps only the
``s`` segment boundaries (the checkpoints), and backward rebuilds one
segment of ``L/s`` activations at a time. The memory for activations falls
from ``L`` to about ``s + L/s``, smallest at ``s = sqrt(L)`` (16 instead of
64 for ``L = 64``); the price is one more forward of the whole chain.

Almost: the last segment keeps its graph from forward to backward instead
of being recomputed. Its backward is the first to run, right after the
forward, when the other segments hold only their checkpoints, so keeping
its activations then costs no more memory than recomputing them would, and
the extra forward shrinks by one segment. (Its graph is dropped as its
backward runs; a second backward, or double backprop, recomputes it.)
"""

import functools

import numpy

from minichain import backend
from minichain.configuration import (config, force_backprop_mode,
                                     no_backprop_mode, using_config)
from minichain.function_node import FunctionNode
from minichain.functions.util.forget import (
    _double_backward, _forget, _GradientSeed, _random, _Recomputation,
    _replayed_random)
from minichain.variable import Variable


def checkpoint_sequential(functions, segments, x):
    """Apply ``functions`` in order to ``x``, forgetting inside each segment.

    Args:
        functions: a list of callables (functions or links); each takes the
            previous one's output.
        segments: into how many contiguous groups to cut the list; the
            groups differ in length by at most one, longer ones first.
            More segments than functions gives one function per segment.
        x: the input Variable or array.

    Returns:
        The output of the last function (a Variable, or a tuple if the last
        function returns one).

    >>> x = Variable(numpy.ones((2, 3), numpy.float32))
    >>> blocks = [lambda h: F.tanh(h) for _ in range(4)]
    >>> y = checkpoint_sequential(blocks, 2, x)   # 2 segments of 2 blocks
    """
    functions = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError("checkpoint_sequential: segments must be a positive "
                         "int, got {!r}".format(segments))
    if not functions:
        raise ValueError("checkpoint_sequential needs at least one function")
    for i, f in enumerate(functions):
        if not callable(f):
            raise TypeError("checkpoint_sequential: functions[{}] must be "
                            "callable, got {}".format(i, type(f)))
    h = x if isinstance(x, tuple) else (x,)
    groups = split_into_segments(functions, segments)
    for k, group in enumerate(groups):
        h = _forget(_Segment(group), h, keep_graph=k == len(groups) - 1)
        if not isinstance(h, tuple):
            h = (h,)
    return h[0] if len(h) == 1 else h


def split_into_segments(functions, segments):
    """Cut a list into ``min(segments, len)`` contiguous, near-equal groups.

    >>> split_into_segments([1, 2, 3, 4, 5], 2)
    [[1, 2, 3], [4, 5]]
    """
    n = len(functions)
    segments = min(segments, n)
    size, extra = divmod(n, segments)
    groups, start = [], 0
    for k in range(segments):
        stop = start + size + (1 if k < extra else 0)
        groups.append(functions[start:stop])
        start = stop
    return groups


class _Segment:
    """One segment: the functions of a group applied one after another."""

    def __init__(self, functions):
        self.functions = functions

    def __call__(self, *h):
        for f in self.functions:
            h = f(*h)
            if not isinstance(h, tuple):
                h = (h,)
        return h[0] if len(h) == 1 else h


# ----- optimal schedules (Revolve) -------------------------------------------
#
# ``checkpoint_sequential`` is one point of a family. For any number
# ``budget`` of activations held at once, the schedule below makes the
# fewest calls of the blocks. The game is a variant of the one Griewank and
# Walther's Revolve solves (ACM TOMS 26(1), 2000, Algorithm 799): here a
# taped block shares the slots with the checkpoints (chapter 14 compares the
# two). The cost model: a chain ``h_i = f_i(h_{i-1})``,
# i = 1..n, from an input the caller holds. A stored checkpoint takes one
# slot, and so does each block run with its graph ("taped": its graph keeps
# its output). Every call of a block counts one. With ``M`` slots,
#
#     R(n, M) = n                       if n <= M  (tape all, then backward)
#     R(n, 1) = n (n + 1) / 2           (for each block from the last: advance
#                                        to its input, tape it, backward)
#     R(n, M) = min over 0 < m < n of  m + R(n - m, M - 1) + R(m, M)
#
# (advance m blocks without a graph and store h_m; reverse the other n - m
# blocks with one slot less; free h_m and reverse the first m with all M).

def revolve_cost(length, budget):
    """R(length, budget): the fewest block calls, forward and backward.

    Named after Griewank and Walther's Revolve, but this is the variant of
    course chapter 14, where ``x`` takes no slot and a taped run from ``x``
    or a checkpoint may cover several blocks (from the value just reached,
    one, as in Revolve): never more than Revolve's own count T, often less.
    Optimal within those rules; a longer tape from the value just reached
    would be cheaper still (4 calls for ``length`` 3, budget 2).

    Memoised: the table for a length is filled once, one row per budget,
    and kept (``length`` 1024 with a budget of 12 takes about a tenth of a
    second; budgets near ``length / 2`` take seconds).

    >>> revolve_cost(64, 6)    # 2.9 forwards' worth, 6 activations held
    185
    """
    _check_size("revolve_cost", length, budget)
    if budget >= length:
        return length
    return int(_cost_rows(length, budget)[budget][0][length])


def revolve_schedule(length, budget):
    """The variant's schedule for ``length`` blocks and ``budget`` slots.

    The cheapest within chapter 14's rules (``revolve_cost`` calls).

    A list of actions, each a tuple; ranges name blocks ``start+1 .. stop``
    and positions name activations ``h_i`` (``h_0`` is the input):

    * ``("advance", start, stop)``: from ``h_start``, call the blocks with no
      graph to get ``h_stop`` (``stop - start`` calls);
    * ``("store", i)``: keep ``h_i`` (the value just reached) as a checkpoint;
    * ``("taped", start, stop)``: from ``h_start``, call the blocks with
      their graph (``stop - start`` calls, as many slots);
    * ``("backward", start, stop)``: backpropagate through those taped
      blocks, from the gradient at ``h_stop`` to the one at ``h_start``;
      their graph is freed;
    * ``("free", i)``: drop the checkpoint ``h_i``.

    Everything up to the first ``backward`` is the forward pass. Among
    equally cheap first checkpoints the farthest is taken.

    >>> revolve_schedule(3, 2)
    [('advance', 0, 2), ('store', 2), ('taped', 2, 3), ('backward', 2, 3),
     ('free', 2), ('taped', 0, 2), ('backward', 0, 2)]
    """
    _check_size("revolve_schedule", length, budget)
    return list(_schedule(int(length), int(budget)))


@functools.lru_cache(maxsize=64)
def _schedule(length, budget):
    """The schedule as a tuple, made once per size: a node keeps it between
    forward and backward, and a training loop asks for the same one at
    every step (for L = 256 it is a few thousand small tuples)."""
    rows = _cost_rows(length, budget) if budget < length else None
    actions = []
    _reverse(0, length, budget, rows, actions)
    return tuple(actions)


@functools.lru_cache(maxsize=64)
def _schedule_parts(length, budget):
    """The schedule cut before its first backward: (forward, backward)."""
    schedule = _schedule(length, budget)
    first = [action[0] for action in schedule].index("backward")
    return schedule[:first], schedule[first:]


def schedule_calls(schedule):
    """The block calls a schedule makes: its advances and taped runs."""
    return sum(action[2] - action[1] for action in schedule
               if action[0] in ("advance", "taped"))


def _reverse(start, n, budget, rows, actions):
    """Append the actions that reverse blocks ``start+1 .. start+n``.

    ``h_start`` is available (the input or a checkpoint someone else pays
    for). The first part is a recursion with one slot less, at most
    ``budget`` deep; the second part loops, so a long chain with one slot
    does not recurse at all.
    """
    while n > 0:
        if n <= budget:  # everything fits: tape it all
            actions += [("taped", start, start + n),
                        ("backward", start, start + n)]
            return
        if budget == 1:  # one slot: only the last block can be taped
            actions += [("advance", start, start + n - 1),
                        ("taped", start + n - 1, start + n),
                        ("backward", start + n - 1, start + n)]
            n -= 1
            continue
        m = int(rows[budget][1][n])
        actions += [("advance", start, start + m), ("store", start + m)]
        _reverse(start + m, n - m, budget - 1, rows, actions)
        actions.append(("free", start + m))
        n = m


_ROWS = {}  # length -> {budget: (cost, split)}; arrays indexed by n


def _cost_rows(length, budget):
    """Rows of R and of the best first checkpoint, budgets 1..``budget``.

    Row ``M`` is filled left to right: R(n, M) needs R(m, M) for m < n and
    the whole row ``M - 1``; one NumPy expression takes the minimum over m.
    """
    longer = [key for key in _ROWS if key >= length]  # a longer table serves
    length = min(longer) if longer else length
    rows = _ROWS.setdefault(length, {})
    n_all = numpy.arange(length + 1, dtype=numpy.int64)
    if 1 not in rows:
        rows[1] = (n_all * (n_all + 1) // 2, n_all - 1)
    for M in range(2, budget + 1):
        if M in rows:
            continue
        previous = rows[M - 1][0]
        cost = n_all.copy()  # R(n, M) = n for n <= M
        split = numpy.zeros(length + 1, dtype=numpy.int64)
        for n in range(M + 1, length + 1):
            m = n_all[1:n]
            total = m + previous[n - m] + cost[1:n]
            best = n - 1 - int(numpy.argmin(total[::-1]))  # the farthest m
            cost[n], split[n] = total[best - 1], best
        rows[M] = (cost, split)
    return rows


def _check_size(where, length, budget):
    for name, value in (("length", length), ("budget", budget)):
        if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) \
                or value < 1:
            raise ValueError("{}: {} must be a positive int, got {!r}".format(
                where, name, value))


# ----- running a schedule -----------------------------------------------------

def checkpoint_revolve(functions, x, budget):
    """Apply ``functions`` in order to ``x``; backward on the variant's schedule.

    The schedule is ``revolve_schedule``'s, optimal within chapter 14's rules.
    Note the order: ``x`` comes second, where ``checkpoint_sequential`` takes
    ``(functions, segments, x)``.

    The forward runs the schedule's first sweep: it advances without a
    graph, keeps the checkpoints the schedule stores, and tapes the last
    blocks. Backward runs the rest. The blocks are called exactly
    ``revolve_cost(len(functions), budget)`` times in all, and at most
    ``budget`` block outputs (checkpoints plus taped blocks) are held at
    once; ``x`` is the caller's and is not counted. In memory, two more
    arrays are in flight at the worst moment (the gradient waiting, the
    array being made), and a third when, after the first backward, a
    one-block tape from the value just reached fills the last free slot
    (its graph keeps that value): see docs/forget.md.

    As in ``F.forget``: the random state is replayed for every recomputed
    block (``F.dropout`` draws the same mask), ``config.in_recomputing`` is
    True while blocks are called again in backward (``will_recompute`` while
    the forward advances past them), and ``enable_double_backprop=True``
    works; it recomputes the whole chain once with its graph, since the
    gradients must then carry a graph back to ``x``.

    Args:
        functions: a list of callables (functions or links); each takes one
            Variable (the previous one's output) and returns one Variable.
            They may use Parameters; their gradients are accumulated.
        x: the input Variable or array.
        budget: a positive int, the block outputs that may be held at once
            (chapter 14's ``M`` slots).
            ``budget >= len(functions)`` is the plain chain.

    Returns:
        The output of the last function, a Variable.

    >>> x = Variable(numpy.ones((2, 3), numpy.float32))
    >>> blocks = [lambda h: F.tanh(h) for _ in range(64)]
    >>> y = checkpoint_revolve(blocks, x, 6)   # 185 calls, 6 outputs held
    """
    functions = _checked_functions("checkpoint_revolve", functions)
    if isinstance(budget, bool) or not isinstance(
            budget, (int, numpy.integer)) or budget < 1:
        raise ValueError("checkpoint_revolve: budget must be a positive int "
                         "(the block outputs held at once), got {!r}".format(
                             budget))
    if not isinstance(x, (Variable,) + backend.array_types):
        raise TypeError("checkpoint_revolve: x must be a Variable or a "
                        "NumPy/CuPy array, got {}".format(type(x)))
    x = x if isinstance(x, Variable) else Variable(x)
    inputs = [x]
    if not x.requires_grad:  # as in forget: keeps the node on backward's path
        inputs.append(Variable(x.xp.zeros((), dtype=numpy.float32)))
    return _Revolve(functions, len(functions), int(budget)).apply(inputs)[0]


def _checked_functions(where, functions):
    functions = list(functions)
    if not functions:
        raise ValueError("{} needs at least one function".format(where))
    for i, f in enumerate(functions):
        if not callable(f):
            raise TypeError("{}: functions[{}] must be callable, got {}"
                            .format(where, i, type(f)))
    return functions


class _Revolve(FunctionNode):
    """One node for the whole chain; its backward runs the schedule's rest.

    Inputs: ``x`` (and a 0-d anchor when ``x`` needs no gradient); output:
    the last block's output. Between forward and backward it holds the
    checkpoints and the taped blocks the schedule holds at that moment
    (a ``_ScheduleRun``).
    """

    def __init__(self, functions, length, budget):
        self.functions = functions
        # Everything up to the first backward is the forward sweep.
        self.forward_part, self.backward_part = _schedule_parts(length, budget)
        self._run = None
        self._random_state = None

    @property
    def label(self):
        return "Revolve"

    def forward(self, inputs):
        self.retain_inputs((0,))
        self._random_state = _random().get_state()
        if not config.enable_backprop:  # no backward will come
            with no_backprop_mode():
                return _call_chain(self.functions, Variable(inputs[0])).array,
        run = _ScheduleRun(self.functions, inputs[0], self._random_state)
        run.execute(self.forward_part)
        self._run = run
        return run.tape[1].array,

    def backward(self, target_input_indexes, grad_outputs):
        gy = grad_outputs[0]
        if gy is None:
            return (None,) * len(target_input_indexes)
        x = self.get_retained_inputs()[0]
        if config.enable_backprop:  # double backprop: the whole chain, taped
            self._run = None
            gx, = _double_backward(functools.partial(_call_chain,
                                                     self.functions),
                                   [x], (gy,), self._random_state)
        else:
            run, self._run = self._run, None
            if run is None:  # a second backward: redo the forward sweep
                run = _ScheduleRun(self.functions, x.array, self._random_state)
                with using_config("in_recomputing", True), \
                        _replayed_random(self._random_state):
                    run.execute(self.forward_part)
            run.gradient, run.input_needs_grad = gy, 0 in target_input_indexes
            with using_config("in_recomputing", True), \
                    _replayed_random(self._random_state):
                run.execute(self.backward_part)
            gx = run.gradient
        return tuple([gx if i == 0 else None for i in target_input_indexes])


class _ScheduleRun:
    """The state of one schedule being run: what the schedule holds.

    ``stored``: the checkpoints, position -> array (``h_0`` is ``x``), with
    the random state each was reached with (``random_states``), so that a
    run from it draws what the first run drew. ``running``: the value last
    reached, (position, array). ``tape``: (the leaf its run started from,
    its last output, the hook that frees its arrays during backward).
    ``gradient``: the gradient at the lowest position reversed so far.
    """

    def __init__(self, functions, x, random_state):
        self.functions = functions
        self.stored, self.random_states = {0: x}, {0: random_state}
        self.running, self.tape, self.gradient = None, None, None
        self.input_needs_grad = True

    def execute(self, actions):
        for action in actions:
            getattr(self, action[0])(*action[1:])

    def advance(self, start, stop):
        h = self._start_from(start, requires_grad=False)
        # These blocks will be called again (taped, later): as forget's
        # first run, the call says so to code that keeps state.
        with no_backprop_mode(), using_config("will_recompute", True):
            h = _call_chain(self.functions[start:stop], h)
        self.running = (stop, h.array)

    def store(self, position):
        self.stored[position] = self.running[1]
        self.random_states[position] = _random().get_state()

    def free(self, position):
        del self.stored[position], self.random_states[position]

    def taped(self, start, stop):
        leaf = self._start_from(
            start, requires_grad=start > 0 or self.input_needs_grad)
        recomputation = _Recomputation(release=True)
        with force_backprop_mode(), recomputation:  # notes what to free
            h = _call_chain(self.functions[start:stop], leaf)
        recomputation.collecting = False
        self.running, self.tape = (stop, h.array), (leaf, h, recomputation)

    def backward(self, start, stop):
        (leaf, h, recomputation), self.tape = self.tape, None
        self.running = None
        with force_backprop_mode(), recomputation:
            seed = _GradientSeed((self.gradient,)).apply((h,))[0]
            del h  # the graph keeps what its backward needs, no more
            self.gradient = None  # the seed holds it while it is needed
            # A backward pass, as in forget: Parameters inside the blocks
            # are leaves of this graph and get their .grad here.
            seed.backward()
        self.gradient = leaf.grad_var

    def _start_from(self, position, requires_grad):
        """A new leaf holding ``h_position``: the running value, or a
        checkpoint (then the random state it was reached with is put back)."""
        if self.running is not None and self.running[0] == position:
            return Variable(self.running[1], requires_grad=requires_grad)
        _random().set_state(self.random_states[position])
        return Variable(self.stored[position], requires_grad=requires_grad)


def _call_chain(functions, h):
    for i, f in enumerate(functions):
        h = f(h)
        if not isinstance(h, Variable):
            raise RuntimeError("a block of checkpoint_revolve must return one "
                               "Variable, but {} returned {}".format(
                                   getattr(f, "__name__", f), type(h)))
    return h
