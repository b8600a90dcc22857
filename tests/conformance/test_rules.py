"""Every rule a task states is tried by a check: the audit, as a table.

Each row names a task body of the skeleton (``build_your_own/mychain``), a
rule its docstring states (words copied from it), and the checks that try
that rule. The tests below keep the table honest both ways: each rule's
words are still in that docstring, each check named exists and belongs to
a task the docstring names, and each task body has at least one rule in
the table. A docstring that gains a rule without a check, or a check renamed,
fails here.
"""

import re

import pytest

from conformance_engines import SKELETON
from minichain.conformance.checks import CHECKS
from test_skeleton import task_bodies

# (task body, words of its docstring stating one rule, checks that try it)
RULES = [
    ("variable.Variable.__init__", "Refuse anything that is not a "
     "``numpy.ndarray`` (a Python number, a list, a NumPy scalar",
     ["refuses_non_arrays"]),
    ("variable.Variable.__init__", "whose message names ``Variable``, says "
     "what it expects and what it got", ["refuses_non_arrays"]),
    ("variable.Variable.__init__", "Keep the array as ``self.array``",
     ["new_variable"]),
    ("variable.Variable.__init__", "a new Variable is a leaf (no creator, "
     "rank 0)", ["new_variable"]),
    ("variable.Variable.__init__", "Start with no gradient", ["new_variable"]),
    ("variable.Variable.creator", "set the node's rank to ``func.rank + 1``",
     ["creator_link", "apply_ranks"]),
    ("variable.Variable.creator", "``None`` makes the Variable a leaf again "
     "and leaves its rank as it is", ["creator_link"]),
    ("function_node.FunctionNode.apply", "``inputs`` is a tuple (or list)",
     ["apply_runs_forward"]),
    ("function_node.FunctionNode.apply", "an array among them becomes a leaf",
     ["apply_takes_arrays"]),
    ("function_node.FunctionNode.apply", "One node, one application",
     ["applied_once"]),
    ("function_node.FunctionNode.apply", "raise a ``RuntimeError`` that says "
     "to make a new instance, before running forward again",
     ["applied_once"]),
    ("function_node.FunctionNode.apply", "Call ``self.forward`` with the "
     "tuple of the inputs' arrays", ["apply_runs_forward"]),
    ("function_node.FunctionNode.apply", "Make one new Variable per output "
     "array", ["apply_runs_forward", "apply_two_outputs"]),
    ("function_node.FunctionNode.apply", "Only while "
     "``config.enable_backprop`` is True", ["no_backprop"]),
    ("function_node.FunctionNode.apply", "``self.inputs`` = the tuple of the "
     "inputs' nodes", ["apply_links", "apply_two_outputs"]),
    ("function_node.FunctionNode.apply", "``self.rank`` = the largest input "
     "rank (0 for no inputs)", ["apply_ranks"]),
    ("function_node.FunctionNode.apply", "``self.outputs`` = a tuple of "
     "``weakref.ref(y.node)``", ["apply_links"]),
    ("function_node.FunctionNode.apply", "``y.creator = self`` for each "
     "output", ["apply_links", "apply_two_outputs"]),
    ("function_node.FunctionNode.apply", "the arrays of the retained inputs "
     "and outputs go into their nodes", ["retained_arrays_kept"]),
    ("function_node.FunctionNode.apply", "a tuple even for one",
     ["apply_runs_forward"]),
    ("backprop.walk", "``y.grad_var`` if the user set one",
     ["given_starting_gradient"]),
    ("backprop.walk", "ones of ``y``'s shape and dtype (``numpy.ones_like``, "
     "wrapped in a Variable)", ["starting_gradient"]),
    ("backprop.walk", "raise a ``RuntimeError`` that says to set ``y.grad`` "
     "first", ["no_starting_gradient"]),
    ("backprop.walk", "nodes, not Variables, because the user may have "
     "dropped a Variable in the middle", ["dropped_middle"]),
    ("backprop.walk", "(None for one that got none)", ["handed_and_returned"]),
    ("backprop.walk", "call ``func.backward(tuple(range(len(func.inputs))), "
     "those gradients)``", ["handed_and_returned"]),
    ("backprop.walk", "store each one for its input node (skip None)",
     ["handed_and_returned", "two_leaves"]),
    ("backprop.walk", "go on with that input's creator",
     ["chain", "random_chains"]),
    ("backprop.walk", "A leaf (a node without creator) keeps its gradient on "
     "its Variable", ["chain", "two_leaves"]),
    ("backprop.walk", "Variables in the middle get none", ["middle_dropped"]),
    ("function_node.FunctionNode.retain_inputs", "``indexes`` is any "
     "iterable of input positions", ["retained_in_order"]),
    ("function_node.FunctionNode.retain_inputs", "Store them as a tuple",
     ["retained_in_order"]),
    ("function_node.FunctionNode.retain_inputs", "backward may run after the "
     "user dropped the Variable", ["retained_arrays_kept"]),
    ("function_node.FunctionNode.retain_inputs", "an array no backward needs "
     "is freed as soon as its user drops it",
     ["unneeded_arrays_freed", "retained_arrays_kept"]),
    ("function_node.FunctionNode.retain_outputs", "``apply`` puts the arrays "
     "into the output nodes", ["retained_values", "retained_arrays_kept"]),
    ("function_node.FunctionNode.get_retained_inputs", "One Variable per "
     "index given to ``retain_inputs``, in that order",
     ["retained_values", "retained_in_order"]),
    ("function_node.FunctionNode.get_retained_inputs", "``()`` when nothing "
     "was retained", ["retained_values"]),
    ("function_node.FunctionNode.get_retained_inputs", "a new one around the "
     "retained array if its user dropped it", ["retained_arrays_kept"]),
    ("function_node.FunctionNode.get_retained_outputs", "even when the user "
     "dropped the output Variable itself", ["retained_arrays_kept"]),
    ("backprop.add_gradient", "needs the *sum* of what arrives",
     ["used_twice", "used_k_times", "leaf_branch"]),
    ("backprop.add_gradient", "For a node in the middle the sum lives in the "
     "table", ["middle_used_twice"]),
    ("backprop.add_gradient", "leaves keep adding across ``backward`` calls "
     "until ``cleargrad()``", ["across_calls"]),
    ("backprop.add_gradient", "never add into an existing array in place",
     ["used_twice", "used_k_times", "shared_gradient"]),
    ("functions.Add.forward", "return ``a + b``", ["add_first"]),
    ("functions.Add.forward", "the two shapes may differ and broadcast",
     ["broadcasting", "broadcast_expressions"]),
    ("functions.Add.backward", "both inputs get ``gy``",
     ["add_first", "random_expressions"]),
    ("functions.Add.backward", "an input that was broadcast gets ``gy`` "
     "summed back to its own shape", ["broadcasting",
                                      "broadcast_expressions"]),
    ("functions.Mul.forward", "keep both inputs for backward",
     ["functions_keep"]),
    ("functions.Mul.backward", "dy/da = b and dy/db = a, each times ``gy``",
     ["mul_first", "random_expressions"]),
    ("functions.Mul.backward", "written with Variables", ["mul_second"]),
    ("functions.Mul.backward", "each summed back to its input's shape",
     ["broadcasting", "broadcast_expressions"]),
    ("functions.Exp.forward", "keep the output: backward needs ``y``, not "
     "``x``", ["functions_keep"]),
    ("functions.Exp.backward", "the gradient is ``gy * y``",
     ["exp_first", "exp_second"]),
    ("functions.Tanh.forward", "keeping the output", ["functions_keep"]),
    ("functions.Tanh.backward", "the gradient is ``gy * (1 - y * y)``",
     ["tanh_first"]),
    ("functions.Tanh.backward", "makes the second derivative of tanh work",
     ["tanh_second"]),
    ("backprop.Candidates.push", "put ``func`` on the heap, once",
     ["wrong_order_example", "branched_order"]),
    ("backprop.Candidates.push", "Ignore None", ["branched_order",
                                                 "deep_chain"]),
    ("backprop.Candidates.pop", "take the function of highest rank off the "
     "heap", ["wrong_order_example", "branched_order", "deep_chain"]),
    ("functions.Sum.forward", "return the sum as a 0-d array",
     ["sum_first"]),
    ("functions.Sum.forward", "noting x's shape for backward",
     ["sum_first"]),
    ("functions.Sum.backward", "A gradient has the shape of its variable",
     ["sum_first"]),
    ("functions.MatMul.forward", "keeping both inputs",
     ["matmul_first", "matmul_second"]),
    ("functions.MatMul.backward", "``ga = gy @ b.T`` and ``gb = a.T @ gy``",
     ["matmul_first", "matmul_layer"]),
    ("functions.MatMul.backward", "Written with ``matmul`` and "
     "``transpose`` on Variables", ["matmul_second"]),
    ("backprop.retain_gradients", "Each output whose Variable is still alive",
     ["middle_kept"]),
    ("backprop.retain_gradients", "Without ``retain_grad`` the gradients in "
     "the middle stay in the table", ["middle_dropped"]),
    ("configuration.no_backprop_mode", "computes ``y`` as usual, but ``y`` "
     "has no creator", ["no_backprop"]),
    ("configuration.no_backprop_mode", "backward from it reaches nothing",
     ["no_backprop"]),
    ("configuration.no_backprop_mode", "keeps no inputs, outputs or retained "
     "arrays", ["no_backprop"]),
    ("configuration.force_backprop_mode", "switches recording back on inside "
     "a ``no_backprop_mode()`` block", ["force_backprop"]),
    ("configuration.force_backprop_mode", "or inside a backward, which runs "
     "with recording off", ["force_in_backward"]),
    ("forget.Forget.forward", "Retain every input", ["forget_gradient"]),
    ("forget.Forget.forward", "Save NumPy's random state first",
     ["forget_replays_random"]),
    ("forget.Forget.forward", "inside ``no_backprop_mode()``, so that no "
     "function inside records a graph or keeps an array",
     ["forget_keeps_nothing"]),
    ("forget.Forget.forward", "return its output's array",
     ["forget_gradient"]),
    ("forget.Forget.backward", "Make *new leaf* Variables around the "
     "retained inputs' arrays", ["forget_input_once"]),
    ("forget.Forget.backward", "Call ``func`` on them inside "
     "``force_backprop_mode()``", ["forget_recomputes", "forget_gradient"]),
    ("forget.Forget.backward", "replay the random state forward saved",
     ["forget_replays_random"]),
    ("forget.Forget.backward", "then put back the state you found",
     ["forget_replays_random"]),
    ("forget.Forget.backward", "with the gradient that arrived "
     "(``grad_outputs[0]``) as its starting gradient",
     ["forget_gradient", "forget_in_a_chain"]),
    ("forget.Forget.backward", "Return the new leaves' gradients",
     ["forget_gradient", "forget_in_a_chain"]),
]

BODIES = task_bodies(SKELETON)
BY_NAME = {one.name: one for one in CHECKS}


@pytest.mark.parametrize("body, words, checks", RULES,
                         ids=["{}: {}".format(b, w[:30]) for b, w, _ in RULES])
def test_each_rule_is_in_its_docstring_and_tried_by_its_checks(body, words,
                                                                checks):
    number, _, docstring = BODIES[body]
    assert words in " ".join(docstring.split())
    # A docstring may state a rule of a later task ("Task 8: the shapes may
    # broadcast"): the check may belong to any task the docstring names.
    tasks = {number} | {int(n) for n in re.findall(r"Task (\d+)", docstring)}
    for name in checks:
        assert name in BY_NAME, name
        assert BY_NAME[name].task in tasks, (body, name)


def test_every_task_body_has_its_rules_in_the_table():
    assert {body for body, _, _ in RULES} == set(BODIES)


def test_every_check_tries_a_rule_or_says_why_not():
    """Checks no rule names are the suite's own extra cases; list them, so
    that a new check is placed in the table or here on purpose."""
    named = {name for _, _, checks in RULES for name in checks}
    extra = {"backward_twice", "backward_reads_retained", "float32_kept",
             "mul_second", "exp_second", "forget_in_a_chain",
             "mode_after_error", "forget_keeps_nothing"}
    assert set(BY_NAME) - named <= extra, set(BY_NAME) - named - extra
