"""Every name of SPEC §3 is importable: the contract others test against."""

import importlib

import pytest

import minichain as mc
import minichain.functions as F

TOP_LEVEL = [
    "Variable", "Parameter", "VariableNode", "FunctionNode", "Function",
    "grad", "backward", "config", "global_config", "using_config",
    "no_backprop_mode", "force_backprop_mode", "is_debug", "set_debug",
    "FunctionHook", "get_function_hooks", "function_hooks", "backend", "cuda",
    "gradient_check", "computational_graph", "memory", "checkpoint_sequential",
    "Link", "Chain", "links", "optimizers", "datasets", "visualize",
]

FUNCTIONS = [
    "identity", "Identity", "add", "exp", "log", "sin", "cos", "tanh",
    "sigmoid", "relu", "leaky_relu", "sqrt", "square", "sum", "mean", "max",
    "reshape", "transpose", "broadcast_to", "sum_to", "matmul", "linear",
    "concat", "split_axis", "get_item", "where", "clip", "dropout", "softmax",
    "log_softmax", "mean_squared_error", "softmax_cross_entropy", "accuracy",
    "forget",
]

QUALIFIED = [
    "minichain.utils.type_check.expect",
    "minichain.utils.type_check.InvalidType",
    "minichain.function_hooks.TimerHook",
    "minichain.function_hooks.PrintHook",
    "minichain.function_hooks.MemoryHook",
    "minichain.backend.get_array_module",
    "minichain.backend.available",
    "minichain.backend.to_cpu",
    "minichain.backend.to_gpu",
    "minichain.gradient_check.numerical_grad",
    "minichain.gradient_check.check_backward",
    "minichain.gradient_check.check_double_backward",
    "minichain.computational_graph.build_computational_graph",
    "minichain.memory.measure",
    "minichain.links.Linear",
    "minichain.optimizers.SGD",
    "minichain.optimizers.MomentumSGD",
    "minichain.optimizers.Adam",
]

VARIABLE_ATTRIBUTES = [
    "array", "data", "grad", "grad_var", "creator", "creator_node", "node",
    "rank", "name", "shape", "ndim", "size", "dtype", "T", "reshape",
    "transpose", "xp", "backward", "cleargrad", "unchain", "unchain_backward",
    "to_cpu", "to_gpu", "__add__", "__radd__", "__sub__", "__rsub__",
    "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__len__",
]

FUNCTION_NODE_ATTRIBUTES = [
    "forward", "forward_cpu", "forward_gpu", "backward", "apply",
    "retain_inputs", "retain_outputs", "get_retained_inputs",
    "get_retained_outputs", "check_type_forward", "backward_accumulate",
    "lazy_grad_sum", "rank", "label", "inputs", "outputs", "add_hook",
    "delete_hook", "local_function_hooks", "unchain",
]


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_name(name):
    assert hasattr(mc, name), "minichain.{} is missing".format(name)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_name(name):
    assert callable(getattr(F, name, None)), "F.{} is missing".format(name)


@pytest.mark.parametrize("path", QUALIFIED)
def test_qualified_name(path):
    module_name, _, attribute = path.rpartition(".")
    module = importlib.import_module(module_name)
    assert hasattr(module, attribute), path + " is missing"


@pytest.mark.parametrize("name", VARIABLE_ATTRIBUTES)
def test_variable_attribute(name):
    assert hasattr(mc.Variable, name), "Variable.{} is missing".format(name)


@pytest.mark.parametrize("name", FUNCTION_NODE_ATTRIBUTES)
def test_function_node_attribute(name):
    assert hasattr(mc.FunctionNode, name), "FunctionNode.{} missing".format(name)


def test_cuda_is_the_backend_alias():
    assert mc.cuda is mc.backend
