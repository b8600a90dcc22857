"""Instructions per op of the per-op chain, counted by callgrind.

    python benchmarks/instructions.py [--ops 2000] [--collector off]

On a shared machine a wall-clock ratio moves by 10% or more from one run to
the next; the number of instructions the chain executes does not, so this is
how a change to the engine's hot path is judged (``valgrind`` must be
installed; each count takes 10-20 s). Three chains are counted, each the
benchmark's ``x*c``/``x+c`` chain of ``--ops`` operations on 10 float32,
forward then backward, after a warm-up:

* ``minichain``: ``minichain_peer.perop_once``, what ``make bench`` times
  (the graph is freed after the backward, and that is counted too);
* ``numpy``: ``harness.numpy_perop``, the hand-written NumPy it is divided by;
* ``floor``: the least a graph of minichain's shape can do (``_floor_once``
  below): the same objects per op (a node, a Variable and its VariableNode,
  two weak references, the inputs and outputs tuples), the constants made
  once as 0-d arrays (as minichain's operators do) and a heap-ordered
  backward, with none of the checks, configuration, hooks or helper calls.
  The gap between ``floor`` and ``minichain`` is what the
  engine's features cost per op.

Only what runs inside the measured call is counted (callgrind's
``--toggle-collect`` on ``functools.reduce``, which calls it): imports and
set-up are not.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WHAT = ("minichain", "numpy", "floor")


# ----- the floor: minichain's objects, nothing else -----------------------------
def _floor_once(x0, n):
    """Forward and backward of the chain with minichain's per-op objects."""
    import heapq
    import weakref

    import numpy

    from minichain.variable import Variable, VariableNode

    class Node:                       # what a FunctionNode keeps per op
        __slots__ = ("inputs", "outputs", "rank", "value", "multiply",
                     "__weakref__")

    def make(data, creator, rank):    # as variable._make_output
        var = Variable.__new__(Variable)
        var._data, var._grad_var, var._loss_scale = data, None, None
        var._node = node = VariableNode.__new__(VariableNode)
        node._variable = weakref.ref(var)
        node.creator_node, node.data, node.name = creator, None, None
        node.rank, node.requires_grad = rank, True
        node._old_style_grad_generator = None
        node.shape, node.dtype = data.shape, data.dtype
        return var

    constants = {}  # value -> the value as a read-only 0-d array, made once
    for value in (1.0001, 0.001):
        constants[value] = numpy.asarray(x0.dtype.type(value))
        constants[value].setflags(write=False)

    def op(x, value, multiply):
        f = Node()
        f.value = c = constants[value]
        f.multiply = multiply
        y = x._data * c if multiply else x._data + c
        node = x._node
        f.rank, f.inputs = node.rank, (node,)
        out = make(y, f, node.rank + 1)
        f.outputs = (weakref.ref(out._node),)
        return out

    x = make(x0, None, 0)
    y = x
    for i in range(n):
        y = op(y, 1.0001, True) if i % 2 == 0 else op(y, 0.001, False)
    grads = {y._node: x0 * 0 + 1}
    top = y._node.creator_node
    heap, pushed, order = [(-top.rank, 0, top)], {top}, 1
    while heap:
        f = heapq.heappop(heap)[2]
        g = grads.pop(f.outputs[0]())
        gx = g * f.value if f.multiply else g
        node = f.inputs[0]
        creator = node.creator_node
        if creator is None:
            x._grad_var = gx
            continue
        grads[node] = gx
        if creator not in pushed:
            pushed.add(creator)
            heapq.heappush(heap, (-creator.rank, order, creator))
            order += 1
    return x._grad_var


# ----- the child process: set up, warm up, run the counted call ------------------
REPS = 5  # chains counted, so the collector's occasional full pass averages out


def _child(what, ops, collector):
    import functools
    import gc

    sys.path[:0] = [HERE, os.path.join(HERE, "peers")]
    import harness  # noqa: F401  (first: one BLAS thread)
    import minichain_peer
    x0 = harness.start_array()
    runs = {"minichain": lambda: minichain_peer.perop_once(x0, ops, "muladd"),
            "numpy": lambda: harness.numpy_perop(x0, ops, "muladd"),
            "floor": lambda: _floor_once(x0, ops)}
    run = runs[what]
    for _ in range(3):
        run()
    if collector == "off":
        gc.disable()
    functools.reduce(lambda _, __: run(), range(REPS), None)  # counted


def count(what, ops, collector):
    """Instructions executed by ``REPS`` forwards and backwards of the chain."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--collect-atstart=no",
             "--toggle-collect=functools_reduce",
             "--callgrind-out-file=" + out, sys.executable,
             os.path.abspath(__file__), "--child", what, "--ops", str(ops),
             "--collector", collector],
            capture_output=True, text=True,
            env=dict(os.environ, OMP_NUM_THREADS="1"))
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise RuntimeError("callgrind failed for {}:\n{}".format(
            what, done.stderr[-2000:]))
    return int(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--collector", choices=("on", "off"), default="on")
    parser.add_argument("--what", default=",".join(WHAT))
    parser.add_argument("--child", choices=WHAT)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.ops, args.collector)
        return
    counts = {what: count(what, args.ops, args.collector) / (REPS * args.ops)
              for what in args.what.split(",")}
    print("instructions per op ({} ops, x*c/x+c, forward and backward, "
          "collector {})".format(args.ops, args.collector))
    for what, per_op in counts.items():
        ratio = (" ({:.2f}x NumPy)".format(per_op / counts["numpy"])
                 if "numpy" in counts and what != "numpy" else "")
        print("  {:10s} {:8.0f}{}".format(what, per_op, ratio))


if __name__ == "__main__":
    main()
