"""``forget``: trade compute for memory by recomputing a function in backward.

Backward needs the arrays that functions retained in forward. Over a deep
chain those arrays are most of the memory a training step takes.
``forget(func, *xs)`` runs ``func`` once without a graph, so only its inputs
and outputs stay alive. Backward then runs ``func`` a second time, this time
with a graph, and backpropagates through that fresh graph. The cost is one
extra forward of ``func``.

Chainer's version of this idea has three gaps, and this one fills them:

* **Randomness.** The random state is saved when the forward starts and put
  back for the recomputation, so ``F.dropout`` inside ``func`` draws the
  same mask twice. The gradient is then exactly the one without ``forget``.
* **Double backprop.** With ``enable_double_backprop=True`` the recomputed
  graph is hung below the node's real inputs, so the returned gradients can
  be differentiated again.
* **Stateful code.** ``config.in_recomputing`` is True during the
  recomputation, so code with state can skip its update the second time
  (a running mean, a call counter).

Memory cost of ``forget(func, x)``: ``x`` and the outputs, kept from forward
to backward; during its backward, one graph of ``func``, which exists only
while this node runs its backward and shrinks as that backward walks down
it (``_Recomputation``). See ``docs/forget.md`` for the bound on a chain of
blocks and the measured figures.
"""

import weakref

import numpy

from minichain import backend
from minichain.function_hook import FunctionHook
from minichain.configuration import (config, force_backprop_mode,
                                     no_backprop_mode, using_config)
from minichain.function_node import FunctionNode
from minichain.variable import Variable


class Forget(FunctionNode):
    """Runs ``func`` without a graph in forward and again with one in backward.

    All inputs are retained. Nothing that ``func`` computes inside is kept,
    except its outputs (which the caller holds anyway).
    """

    def __init__(self, func, anchored=False, keep_graph=False):
        if not callable(func):
            raise TypeError("forget: func must be callable, got {}".format(
                type(func)))
        self.func = func
        # An anchored node has one extra, last input: a 0-d Variable that
        # requires a gradient (see ``forget``). ``func`` never sees it.
        self.anchored = anchored
        # keep_graph: build the graph in forward and keep it until backward
        # instead of recomputing it (see ``checkpoint_sequential``: only for
        # a segment whose backward comes right after its forward).
        self.keep_graph = keep_graph
        self._kept = None  # (inputs, outputs, recomputation) of that graph
        self._random_state = None

    @property
    def label(self):
        return "Forget"

    def forward(self, inputs):
        if self.anchored:
            inputs = inputs[:-1]
        self.retain_inputs(tuple(range(len(inputs))))
        self._random_state = _random().get_state()
        if self.keep_graph and config.enable_backprop:
            xs = [Variable(x) for x in inputs]  # leaves of the kept graph
            recomputation = _Recomputation(release=True)
            with recomputation:  # notes the functions, to free them later
                outputs = _call_func(self.func, xs)
            recomputation.collecting = False
            self._kept = (xs, outputs, recomputation)
            return tuple([y.array for y in outputs])
        xs = [Variable(x) for x in inputs]
        with no_backprop_mode(), using_config("will_recompute", True):
            outputs = _call_func(self.func, xs)
        return tuple([y.array for y in outputs])

    def backward(self, target_input_indexes, grad_outputs):
        if all(gy is None for gy in grad_outputs):
            return (None,) * len(target_input_indexes)
        kept, self._kept = self._kept, None  # a kept graph serves once
        retained = self.get_retained_inputs()
        if config.enable_backprop:
            # The outer backward runs with enable_double_backprop=True: the
            # gradients we return must carry a graph.
            del kept
            gxs = _double_backward(self.func, retained, grad_outputs,
                                   self._random_state)
        else:
            if kept is not None:
                xs, outputs, recomputation = kept
            else:
                targets = set(target_input_indexes)
                xs = [Variable(x.array, requires_grad=i in targets)
                      for i, x in enumerate(retained)]
                recomputation = _Recomputation(release=True)
                with force_backprop_mode(), \
                        using_config("in_recomputing", True), \
                        _replayed_random(self._random_state), recomputation:
                    outputs = _call_func(self.func, xs)
                recomputation.collecting = False
            del kept
            with force_backprop_mode(), recomputation:
                seed = _GradientSeed(grad_outputs).apply(outputs)[0]
                del outputs  # the graph keeps what its backward needs
                # A backward pass, not ``grad``: Parameters used inside
                # ``func`` are leaves of the recomputed graph and get their
                # ``.grad`` as in any backward (once; in place into a buffer
                # they own). The inputs ``xs`` are leaves too: their
                # gradients are ours.
                seed.backward()
            gxs = [x.grad_var for x in xs]
        n = len(gxs)  # an anchor's index is n: it gets no gradient
        return tuple([gxs[i] if i < n else None
                      for i in target_input_indexes])


def _double_backward(func, inputs, grad_outputs, random_state):
    """Gradients of ``func`` at ``inputs`` that can be differentiated again.

    ``func`` is run again on ``identity(x)`` of each real input ``x``, cut
    loose while the inner backward runs (so that pass stops there) and
    joined again afterwards, so that the gradients' own graph reaches ``x``.
    ``forget`` and ``checkpoint_revolve`` both take this path under
    ``enable_double_backprop=True``.
    """
    from minichain.functions.array.identity import IdentityNode
    links = [IdentityNode().apply((x,))[0] for x in inputs]
    creators = [x.creator_node for x in links]
    for x in links:
        x.unchain()
    with force_backprop_mode(), using_config("in_recomputing", True), \
            _replayed_random(random_state):
        outputs = _call_func(func, links)
    with force_backprop_mode():
        seed = _GradientSeed(grad_outputs).apply(outputs)[0]
        del outputs
        seed.backward(enable_double_backprop=True)
    for x, creator in zip(links, creators):
        x.node.set_creator_node(creator)  # hang the graph below the input
    return [x.grad_var for x in links]


class _GradientSeed(FunctionNode):
    """Joins the recomputed outputs into one scalar that backward starts from.

    Its backward hands each output the gradient the outer backward gave the
    Forget node for it. One node for all outputs means an output that
    appears twice, or that is one of the inputs, still gets its gradient.
    """

    def __init__(self, grad_outputs):
        self.grad_outputs = grad_outputs

    def forward(self, inputs):
        xp = backend.get_array_module(*inputs)
        return xp.zeros((), dtype=numpy.float32),

    def backward(self, target_input_indexes, grad_outputs):
        return tuple([self.grad_outputs[i] for i in target_input_indexes])


class _Recomputation(FunctionHook):
    """Frees the recomputed arrays one function at a time during backward.

    While ``collecting``, it notes every function the recomputation applies.
    Afterwards, once the inner backward has run such a function's backward,
    it drops the outputs that function kept: every function that reads them
    has a higher rank and so has already had its backward. The recomputed
    segment thus shrinks as backward walks down it, instead of staying
    whole until the end. Not used with double backprop, whose gradients'
    graph still needs those arrays.
    """

    def __init__(self, release):
        self.name = "Forget.recomputation.{}".format(id(self))
        self.release = release
        self.collecting = True
        self.functions = weakref.WeakSet()

    def __enter__(self):
        return super().__enter__() if self.release else self

    def __exit__(self, *exc):
        if self.release:
            super().__exit__(*exc)

    def forward_postprocess(self, function, in_data):
        if self.collecting:
            self.functions.add(function)

    def backward_postprocess(self, function, in_data, out_grad):
        if function in self.functions:
            function._retained_output_data = None
            for ref in function.outputs or ():
                node = ref()
                if node is not None:
                    node.data = None


def forget(func, *xs):
    """Call ``func(*xs)`` without keeping its intermediate arrays.

    Forward runs ``func`` with no graph; backward runs it again with one and
    backpropagates through it. Memory: only ``xs`` and the outputs are kept.
    Time: one more forward of ``func``.

    Args:
        func: a callable taking Variables and returning a Variable or a
            tuple of Variables. It may close over Parameters (links); their
            gradients are accumulated in backward.
        *xs: Variables or arrays (arrays become Variables that require a
            gradient, so that this node joins the graph).

    Returns:
        A Variable, or a tuple of Variables when ``func`` returns a tuple of
        two or more.

    >>> x = Variable(numpy.array([1.0, 2.0], numpy.float32))
    >>> y = forget(lambda a: a * a + a, x)
    >>> F.sum(y).backward()
    >>> x.grad   # 2x + 1
    array([3., 5.], dtype=float32)
    """
    return _forget(func, xs)


def _forget(func, xs, keep_graph=False):
    """``forget(func, *xs)``; ``keep_graph`` as in ``Forget``."""
    for i, x in enumerate(xs):
        if not isinstance(x, (Variable,) + backend.array_types):
            raise TypeError("forget: inputs must be Variables or NumPy/CuPy "
                            "arrays; input {} is {}".format(i, type(x)))
    xs = [x if isinstance(x, Variable) else Variable(x, requires_grad=True)
          for x in xs]
    # The engine visits a node only if some input needs a gradient. When
    # none does (say, the first block of a network, fed a batch that needs
    # no gradient), Parameters used inside ``func`` would get none: an
    # extra 0-d input that needs one keeps the node on the backward path.
    anchored = not any([x.requires_grad for x in xs])
    node = Forget(func, anchored, keep_graph)
    if anchored:
        xp = backend.get_array_module(*[x.array for x in xs])
        xs.append(Variable(xp.zeros((), dtype=numpy.float32)))
    ys = node.apply(xs)
    return ys[0] if len(ys) == 1 else ys


def _call_func(func, xs):
    """Call ``func`` and check that it returned Variables; always a tuple."""
    outputs = func(*xs)
    if isinstance(outputs, tuple):
        for i, y in enumerate(outputs):
            if not isinstance(y, Variable):
                raise RuntimeError(
                    "{} element of a returned tuple is not Variable, but is {}"
                    .format(ordinal(i + 1), type(y)))
        return outputs
    if isinstance(outputs, Variable):
        return (outputs,)
    raise RuntimeError(
        "A tuple of Variables or a Variable are expected, but {} is returned."
        .format(type(outputs)))


def ordinal(n):
    """English ordinal of a positive integer: 1st, 2nd, 3rd, 4th, 11th, 21st.

    The teens (11th, 12th, 13th, and so 111th) take "th" whatever their last
    digit is.
    """
    if n % 100 in (11, 12, 13):
        return "{}th".format(n)
    return "{}{}".format(n, {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"))


def _random():
    from minichain import random
    return random


class _replayed_random:
    """Put the forward's random state back for the recomputation.

    On exit the state from just before (the backward's own) is restored, so
    drawing the same numbers again does not shift what comes after.
    """

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        random = _random()
        self.outer = random.get_state()
        random.set_state(self.state)

    def __exit__(self, *exc):
        _random().set_state(self.outer)
