"""The reference path and the fast path are one engine.

``mc.reference_mode()`` runs the engine as the chapters print it
(``FunctionNode._apply_reference``, ``backprop._walk_reference``); the
default runs the fast path of chapter 13. This file runs 600 random programs
on both and compares, exactly:

* the values of every Variable the program makes (bit for bit);
* every gradient the program reads: leaves' ``.grad`` after one or two
  ``backward()`` calls, ``grad()``'s results, retained gradients, second
  derivatives (bit for bit, dtype included);
* the order in which backward takes the functions (recorded at the heap, so
  recording it changes neither path);
* every event a function hook sees (forward and backward, pre and post,
  with the arrays it is shown), and at each event which of the gradient
  arrays shown before are still alive: both paths must free each gradient
  at the same moment, not only by the end of the pass;
* what the graph keeps: each function's rank, inputs, retained arrays and
  whether its output Variables are still alive once the program drops them.

Where the paths may differ, they do not: no case here is excused. (This
test found one: with a hook watching, the fast loop kept the arrays it had
shown the hooks until the next step, one step longer than the reference.)
The only difference left is not in the arrays: on the reference path a
gradient is a Variable, so each live gradient carries a Variable's few
hundred bytes of bookkeeping more during a pass.
"""

import heapq
import weakref

import numpy
import pytest

import minichain as mc
import minichain.functions as F
from minichain import backprop

N_PROGRAMS = 600
SHAPES = ((), (3,), (2, 3), (1, 3), (2, 1))


class _Order:
    """Stands in for ``heapq`` inside backprop: records each function popped."""

    def __init__(self):
        self.popped = []
        self.heappush = heapq.heappush

    def heappop(self, heap):
        entry = heapq.heappop(heap)
        self.popped.append((entry[2].label, entry[2].rank))
        return entry


class _Recorder(mc.FunctionHook):
    """Every hook event, with the arrays it is shown (as bytes)."""

    name = "Recorder"

    def __init__(self):
        self.events = []
        self.shown = []  # weak references to every gradient array shown

    def _note(self, what, function, *groups):
        # Which gradient arrays shown so far are still alive: the paths must
        # free each one at the same moment, not only by the end of the pass.
        alive = tuple(ref() is not None for ref in self.shown)
        self.events.append((what, function.label, alive) + tuple(
            tuple(_fingerprint(a) for a in group) for group in groups))
        if what.startswith("backward"):
            self.shown += [weakref.ref(g) for g in groups[-1]
                           if isinstance(g, numpy.ndarray)]

    def forward_preprocess(self, function, in_data):
        self._note("forward_pre", function, in_data)

    def forward_postprocess(self, function, in_data):
        self._note("forward_post", function, in_data)

    def backward_preprocess(self, function, in_data, out_grad):
        self._note("backward_pre", function, in_data, out_grad)

    def backward_postprocess(self, function, in_data, out_grad):
        self._note("backward_post", function, in_data, out_grad)


def _fingerprint(a):
    """An array (or None, or a Variable) as exactly comparable data."""
    if isinstance(a, mc.Variable):
        a = a.array
    if a is None:
        return None
    a = numpy.asarray(a)
    return (a.shape, a.dtype.str, a.tobytes())


class _Program:
    """A random program, drawn from one seed: the same on both paths."""

    def __init__(self, seed):
        rng = numpy.random.default_rng(seed)
        self.rng = rng
        self.dtype = numpy.float32 if rng.random() < 0.5 else numpy.float64
        self.n_inputs = int(rng.integers(1, 4))
        self.n_steps = int(rng.integers(1, 9))
        self.shapes = [SHAPES[int(rng.integers(len(SHAPES)))]
                       for _ in range(self.n_inputs)]
        self.values = [rng.uniform(0.5, 2.0, s).astype(self.dtype)
                       for s in self.shapes]
        self.steps = [self._draw_step(k) for k in range(self.n_steps)]
        features = ("hook", "retain_grad", "double", "grad_api", "twice",
                    "param", "zerograd", "forget", "unchain", "no_grad_input")
        self.features = {f: bool(rng.random() < 0.3) for f in features}

    def _draw_step(self, k):
        rng = self.rng
        n = self.n_inputs + k
        op = ("add", "sub", "mul", "div", "sin", "tanh", "exp", "square",
              "add_c", "mul_c", "rsub_c", "pow_c", "sum", "sum_to",
              "broadcast", "identity")[int(rng.integers(16))]
        recent = max(0, n - 3)
        i = int(rng.integers(recent, n)) if rng.random() < 0.7 else int(
            rng.integers(n))
        j = int(rng.integers(n))
        if rng.random() < 0.2:
            j = i  # f(x, x)
        return op, i, j, float(rng.choice([0.5, 2.0, -1.5, 3.0]))


def _apply(op, a, b, c):
    """One step of a program on Variables (shapes broadcast as NumPy's)."""
    if op in ("add", "sub", "mul", "div"):
        try:
            shape = numpy.broadcast_shapes(a.shape, b.shape)
        except ValueError:  # shapes that cannot meet: b's total instead
            b, shape = F.sum(b), a.shape
        a, b = F.broadcast_to(a, shape), F.broadcast_to(b, shape)
        if op == "div":
            return a / (F.square(b) + 1.0)
        return {"add": a + b, "sub": a - b, "mul": a * b}[op]
    if op == "sum":
        return F.sum(a)
    if op == "sum_to":
        return F.sum_to(a, a.shape[-1:]) if a.ndim else a * 1.0
    if op == "broadcast":
        return F.broadcast_to(a, (2,) + a.shape)
    unary = {"sin": F.sin, "tanh": F.tanh, "exp": lambda v: F.exp(v * 0.25),
             "square": F.square, "identity": F.identity,
             "add_c": lambda v: v + c, "mul_c": lambda v: v * c,
             "rsub_c": lambda v: c - v, "pow_c": lambda v: (v * v + 1.0) ** 1.5}
    return unary[op](a)


def _run_program(program, reference):
    """Run ``program`` on one path; return everything that is compared."""
    order = _Order()
    recorder = _Recorder()
    p, feat = program, program.features
    seen = {"values": [], "grads": []}
    with mc.using_config("reference_mode", reference):
        original = backprop.heapq
        backprop.heapq = order
        try:
            if feat["hook"]:
                with recorder:
                    result = _build_and_differentiate(p, seen)
            else:
                result = _build_and_differentiate(p, seen)
        finally:
            backprop.heapq = original
    seen.update(order=order.popped, events=recorder.events, graph=result)
    return seen


def _build_and_differentiate(p, seen):
    feat = p.features
    leaves = []
    for k, v in enumerate(p.values):
        if feat["param"] and k == 0:
            leaf = mc.Parameter(v.copy())
            if feat["zerograd"]:
                leaf.zerograd()  # its own buffer: added into in place
        else:
            leaf = mc.Variable(v.copy(), requires_grad=not (
                feat["no_grad_input"] and k == p.n_inputs - 1
                and p.n_inputs > 1))
        leaves.append(leaf)
    values = list(leaves)
    for op, i, j, c in p.steps:
        if feat["forget"] and op in ("mul", "sin"):
            y = F.forget(lambda a, b, op=op: _apply(op, a, b, c),
                         values[i], values[j])
        else:
            y = _apply(op, values[i], values[j], c)
        values.append(y)
    loss = F.sum(values[-1] * values[-1]) if values[-1].ndim else values[-1]
    seen["values"] = [_fingerprint(v) for v in values] + [_fingerprint(loss)]
    graph_before = _describe_graph(loss)
    if feat["unchain"] and len(values) > p.n_inputs + 1:
        values[p.n_inputs].unchain()  # its creator is cut off
    wanted = [x for x in leaves if x.requires_grad]
    if feat["grad_api"]:
        gxs = mc.grad([loss], wanted, retain_grad=feat["retain_grad"],
                      enable_double_backprop=feat["double"])
        seen["grads"].append([_fingerprint(g) for g in gxs])
        if feat["double"] and gxs[0] is not None:
            total = F.sum(gxs[0] * gxs[0])
            g2 = mc.grad([total], wanted[:1])
            seen["grads"].append([_fingerprint(g) for g in g2])
    else:
        loss.backward(retain_grad=feat["retain_grad"],
                      enable_double_backprop=feat["double"])
        seen["grads"].append([_fingerprint(x.grad) for x in leaves])
        if feat["retain_grad"]:
            seen["grads"].append([_fingerprint(v.grad) for v in values])
        if feat["double"] and leaves[0].grad_var is not None and (
                leaves[0].grad_var.creator_node is not None):
            g = leaves[0].grad_var
            for x in leaves:
                x.cleargrad()
            F.sum(g * g).backward()
            seen["grads"].append([_fingerprint(x.grad) for x in leaves])
        elif feat["twice"]:
            loss.backward()  # gradients add up across calls
            seen["grads"].append([_fingerprint(x.grad) for x in leaves])
    graph_after = _describe_graph(loss)
    alive = _what_stays_alive(values, leaves, loss)
    return graph_before, graph_after, alive


def _describe_graph(loss):
    """Each function behind ``loss`` (depth first, inputs in order): its
    label, rank, and the arrays it retains."""
    out, stack, done = [], [loss.node], set()
    while stack:
        node = stack.pop()
        func = node.creator_node
        if func is None or id(func) in done:
            continue
        done.add(id(func))
        inputs = func.inputs or ()
        out.append((func.label, func.rank, len(inputs),
                    tuple(_fingerprint(n.data) for n in inputs),
                    tuple(_fingerprint(a) for a in
                          (func._retained_output_data or ()))))
        stack.extend(inputs)
    return out


def _what_stays_alive(values, leaves, loss):
    """Drop the program's names for the intermediate Variables: which of
    them does the graph still keep alive (through ``loss``)?"""
    refs = [weakref.ref(v) for v in values[len(leaves):]]
    del values[:]
    return [ref() is not None for ref in refs]


@pytest.mark.parametrize("chunk", range(12))
def test_random_programs_are_the_same_on_both_paths(chunk):
    per_chunk = N_PROGRAMS // 12
    for seed in range(chunk * per_chunk, (chunk + 1) * per_chunk):
        program = _Program(seed)
        fast = _run_program(program, reference=False)
        reference = _run_program(_Program(seed), reference=True)
        for key in ("values", "grads", "order", "events", "graph"):
            assert fast[key] == reference[key], (
                "seed {}: the paths differ in {} ({})".format(
                    seed, key, program.steps))


def test_the_programs_reach_every_feature():
    """The draw is broad enough: each feature, diamond and f(x, x) occurs."""
    programs = [_Program(seed) for seed in range(N_PROGRAMS)]
    for feature in programs[0].features:
        assert sum(p.features[feature] for p in programs) >= 50, feature
    same_twice = sum(any(i == j for op, i, j, c in p.steps
                         if op in ("add", "mul", "sub", "div"))
                     for p in programs)
    broadcasting = sum(len({s for s in p.shapes}) > 1 for p in programs)
    assert same_twice >= 50 and broadcasting >= 200


@pytest.mark.fast_path  # the default must be the fast path here
def test_the_switch_runs_the_reference_functions(monkeypatch):
    """``mc.reference_mode()`` runs exactly the reference functions, and the
    default exactly the fast ones (so the comparison above compares two
    different paths)."""
    calls = []
    for module, name in ((backprop, "_walk_reference"), (backprop, "_walk"),
                         (mc.FunctionNode, "_apply_reference")):
        original = getattr(module, name)

        def spy(*args, _name=name, _original=original):
            calls.append(_name)
            return _original(*args)
        monkeypatch.setattr(module, name, spy)
    x = mc.Variable(numpy.ones(3, dtype=numpy.float32))
    F.sum(F.sin(x)).backward()
    assert calls == ["_walk"]
    calls.clear()
    with mc.reference_mode():
        assert mc.config.reference_mode is True
        F.sum(F.sin(x)).backward()
    assert calls[:2] == ["_apply_reference"] * 2  # sin, sum
    assert "_walk_reference" in calls and "_walk" not in calls
    assert mc.config.reference_mode is False


def test_the_reference_gradients_travel_as_variables(monkeypatch):
    """On the reference path no ``backward_arrays`` runs: every backward is
    the Variables one the chapters write."""
    from minichain.functions.math.basic_math import MulConstant
    called = []
    monkeypatch.setattr(MulConstant, "backward_arrays",
                        lambda self, *a: called.append(1) or (None,))
    x = mc.Variable(numpy.ones(3))
    with mc.reference_mode():
        F.sum(x * 2.0).backward()
    assert called == [] and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_the_printed_reference_loop_is_short():
    """The chapters print the reference loop: at most 20 code lines, and no
    names of the fast path in it."""
    import inspect
    import tokenize
    import io
    lines, names = 0, set()
    for function in (backprop._walk_reference, backprop._step_reference):
        source = inspect.getsource(function)
        code = set()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME:
                names.add(tok.string)
            if tok.type not in (tokenize.COMMENT, tokenize.NL,
                                tokenize.NEWLINE, tokenize.STRING,
                                tokenize.INDENT, tokenize.DEDENT,
                                tokenize.ENDMARKER):
                code.add(tok.start[0])
        lines += len(code)
    assert lines <= 20, lines
    fast = {"backward_arrays", "_DEFAULT_ACCUMULATE", "arrays", "plain",
            "take", "_ndarray", "_walk", "_add_gradient", "_call_backward"}
    assert not names & fast, names & fast
