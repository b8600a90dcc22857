# %% [markdown]
# # 08 · Hooks, type checks and debug mode
#
# You will look inside a running graph without changing a single function:
# hooks that are called around every forward and backward step (to print,
# time or measure memory), type checks that refuse bad inputs in plain
# words, and debug mode, which stops at the first NaN and, when a backward
# fails, names the line that built the function.
#
# Several cells below print errors made on purpose: read them.

# %%
import inspect
import math

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.function_hooks import MemoryHook, PrintHook, TimerHook
from minichain.utils import type_check

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## By hand: a place to hook in
#
# A hook is an object with a few methods that the code applying functions
# calls at fixed points: before and after each forward, before and after
# each backward. By hand, a list of hooks and an `apply` that calls them is
# all it takes. Our `hand_apply` runs a real FunctionNode's `forward` on
# arrays, with the hooks around it.

# %%
hand_hooks = []


def hand_apply(function, inputs):
    for hook in hand_hooks:
        hook.forward_preprocess(function, inputs)
    outputs = function.forward(inputs)
    for hook in hand_hooks:
        hook.forward_postprocess(function, inputs)
    return outputs


class LabelRecorder:
    """Writes down the label of every function whose forward runs."""

    def __init__(self):
        self.labels = []

    def forward_preprocess(self, function, in_data):
        self.labels.append(function.label)

    def forward_postprocess(self, function, in_data):
        pass                                 # nothing to do after a forward


from minichain.functions.activation.tanh import Tanh
from minichain.functions.math.exponential import Exp

x_array = np.array([0.5, 1.0])
by_hand = LabelRecorder()
hand_hooks.append(by_hand)
hand_apply(Exp(), hand_apply(Tanh(), (x_array,)))
hand_hooks.remove(by_hand)
print("seen by hand:", by_hand.labels)
print("their classes:", [type(f).__name__ for f in (Tanh(), Exp())])

# %% [markdown]
# A function's `label` is its name in printouts. Most classes use their own
# name (`Tanh`); some choose a shorter one: `Exp` is labelled `exp`. A
# multiplication by a Python number (class `MulConstant`) is labelled with
# it, `_ * 2`; one of two Variables (class `Mul`), `_ * _`. Hooks that
# group by label show the label; `TimerHook`, below, groups by class.

# %% [markdown]
# ## The real hooks
#
# In minichain a `with hook:` block registers the hook for its duration.
# `FunctionNode.apply` calls the registered hooks around `forward`, as
# `hand_apply` did, and chapter 05's loop does the same around each backward
# step. With a hook on, backward runs each function's `backward` on
# Variables (*the path on Variables*), so the hook sees every function it
# applies; the gradients are identical. The base class, printed below, provides
# registration (`__enter__`, `__exit__`) and six methods that do nothing
# until a subclass overrides them.

# %%
print(inspect.getsource(mc.FunctionHook))

# %% [markdown]
# The engine just calls these methods, so our recorder works as is; mixing
# in `mc.FunctionHook` adds registration with `with`. Registered for real,
# the same recorder sees the same functions:

# %%
class RegisteredLabelRecorder(LabelRecorder, mc.FunctionHook):
    pass          # our two methods first, then the base class's (`with` too)


x = mc.Variable(x_array, name="x")
with RegisteredLabelRecorder() as real:
    y = F.exp(F.tanh(x))
print("seen for real:", real.labels)
assert real.labels == by_hand.labels == ["Tanh", "exp"]

# %% [markdown]
# ## Hooks see backward too, and it nests
#
# A function's `backward` is written with minichain functions on Variables.
# On the path on Variables, backward applies these functions, and their
# forwards run *inside* the backward step that applied them. A hook that
# prints an indented line per step shows the nesting: `Tanh`'s backward
# applies `TanhGrad`, a function of its own, and `_ * 2`'s backward applies
# `_ * 2` to the incoming gradient.

# %%
class StepPrinter(mc.FunctionHook):
    def __init__(self):
        self.depth = 0

    def _enter(self, phase, function):
        print("  " * self.depth + f"{phase} {function.label}")
        self.depth += 1

    def _leave(self):
        self.depth -= 1

    def forward_preprocess(self, function, in_data):
        self._enter("forward ", function)

    def forward_postprocess(self, function, in_data):
        self._leave()

    def backward_preprocess(self, function, in_data, out_grad):
        self._enter("backward", function)

    def backward_postprocess(self, function, in_data, out_grad):
        self._leave()


x = mc.Variable(np.array([0.5, 1.0]), name="x")
with StepPrinter():
    y = F.tanh(x * 2)
    y.grad = np.ones(2)
    y.backward()

# %% [markdown]
# Backward runs three ways (double backprop: chapter 11):
#
# | when | loop | each function's backward |
# |---|---|---|
# | default | fast `_walk` | `backward_arrays` on arrays (chapter 03), else `backward` |
# | a hook, or double backprop | fast `_walk` | `backward` on Variables: the path on Variables |
# | `mc.reference_mode()` | chapter 05's `_walk_reference` | `backward` on Variables |
#
# `backward_arrays` applies no functions for a hook to see, so a hook
# measures the path on Variables, not a plain run.

# %% [markdown]
# ## Ready-made hooks: print, time, memory
#
# `PrintHook` prints what goes into each step: the function's label, a
# block per input and, in backward, one per incoming gradient `gy`, shown
# (by its one printer, `Variable.debug_print`, as in Chainer) as a Variable
# whose array is zeros and whose `.grad` is `gy`: read its `- grad:` line
# (mean=1), not `statistics`. All it prints for the backward of `x * 2`,
# sent to a string (its `file` argument) to mask the memory address:
# `(removed)` is the input `_ * 2` did not keep (chapter 07); the second
# block is the forward of `_ * 2` nested in that step, on `gy`.

# %%
import io
import re

x = mc.Variable(np.array([1.0, 2.0], dtype=np.float32), name="x")
y = x * 2
y.grad = np.ones(2, dtype=np.float32)
log = io.StringIO()
with PrintHook(file=log):
    y.backward()
printed = re.sub(r"0x[0-9a-f]+", "0x…", log.getvalue())   # differs each run
print(printed.rstrip())
lines = printed.splitlines()
assert lines.count("function\t_ * 2") == 2 and lines[2] == "(removed)"
assert "- grad: mean=1.00000000, std=0.00000000" in lines
assert "- statistics: mean=0.00000000, std=0.00000000" in lines   # gy's zeros

# %% [markdown]
# `TimerHook` and `MemoryHook` record, per step, the time taken and the bytes
# allocated (on the path on Variables). They watch a two-layer network:
# 512 points of 32 features, 512 hidden units (an activation is 512 × 512
# float32 values, 1 MiB), 4 outputs. `F.linear(x, W)` is `x Wᵀ`;
# `F.mean_squared_error` is PyTorch's `F.mse_loss`; `mc.Parameter`
# is a Variable that chapter 12's optimizers update. First, one training
# step as `StepPrinter` shows it. You need not follow every line: look at
# the indentation, backward's own functions nested inside its steps.

# %%
MiB = 2 ** 20
rng = np.random.default_rng(0)
x = rng.normal(size=(512, 32)).astype(np.float32)
t = rng.normal(size=(512, 4)).astype(np.float32)      # the targets
W1 = mc.Parameter(rng.normal(size=(512, 32)).astype(np.float32) * 0.1)
W2 = mc.Parameter(rng.normal(size=(4, 512)).astype(np.float32) * 0.1)


def step():
    W1.cleargrad()
    W2.cleargrad()
    h = F.relu(F.linear(x, W1))
    loss = F.mean_squared_error(F.linear(h, W2), t)
    loss.backward()


step()          # a first run fills caches (imports, buffers): not measured
with StepPrinter():
    step()
print("2 / (512 * 4) =", 2 / (512 * 4))

# %% [markdown]
# The backward of `MeanSquaredError` computes `(y - t) · (gy · 2/2048)`
# for the output `y` (the loss is a mean over 512 × 4 values): `_ - _`,
# `_ * 0.0009765625` and `_ * _`. A weight's
# gradient is `linear(gyᵀ, xᵀ)`, hence two `Transpose`s; `h`'s is
# `linear(gy, Wᵀ)`, one.
#
# Times vary, so the table prints only the calls per class:

# %%
with TimerHook() as timer, MemoryHook() as memory:
    step()
for name, record in timer.summary().items():
    print(f"{name:22s} {record['occurrence']} call(s)")
calls = {name: record["occurrence"] for name, record in timer.summary().items()}
assert calls["ReLU"] == calls["MeanSquaredError"] == 2
assert all(n == 1 for name, n in calls.items()
           if name not in ("Linear", "Transpose", "ReLU", "MeanSquaredError"))

# %% [markdown]
# `TimerHook` groups by function class, forwards and backwards together. So the
# step calls `linear` twice, yet `Linear` counts seven calls: 2 forwards, the 2
# backward steps, and 3 `Linear`s applied inside those backwards, for the
# gradients of `h`, `W2` and `W1` (`x` is an array: it needs none).
# `Transpose`: 1 + 2 + 2 = 5. `ReLU`, `MeanSquaredError`: 1 forward + 1
# backward; the rest, applied only inside backwards: 1 forward.
#
# `MemoryHook`'s rows (two below), named `phase:label` (`MulConstant`'s is
# `forward:_ * 0.0009765625`), give the bytes its calls left alive,
# summed (**allocated**), and the most one call used at once (**peak**). A
# nested call counts twice: in its own row and in its caller's.
# `forward:ReLU`'s 1.0 MiB is its output, one activation; `ReLUGrad`'s
# peak exceeds its 1.0 MiB output by temporaries freed before it returns.
# Note 1 explains the row names and every non-zero row.

# %%
table = memory.summary()
HEADER = f"{'event':30s} {'allocated':>9s} {'peak':>9s}  calls"


def memory_row(event):
    """One row of MemoryHook's summary, in MiB to a tenth."""
    record = table[event]
    return (f"{event:30s} {record['allocated_bytes'] / MiB:5.1f} MiB "
            f"{record['peak_bytes'] / MiB:5.1f} MiB  {record['occurrence']}")


print(HEADER)
print(memory_row("forward:ReLU"))
print(memory_row("forward:ReLUGrad"))
assert abs(table["forward:ReLU"]["allocated_bytes"] - 512 * 512 * 4) < 2048
assert "forward:_ * 0.0009765625" in table and "MulConstant" in timer.summary()

# %% [markdown]
# ## A hook on one function only
#
# `with hook:` watches every function. `add_hook` on a function node,
# `y.creator_node.add_hook(hook)`, watches that node. Added after the forward,
# it sees that node's backward step and nothing else; a global hook beside it
# sees every step.

# %%
class BackwardLabels(mc.FunctionHook):
    def __init__(self, name):
        # hooks are keyed by `name`: give each its own (a local hook of the
        # same name would silently replace the global one for that function)
        self.name = name
        self.labels = []

    def backward_preprocess(self, function, in_data, out_grad):
        self.labels.append(function.label)


x = mc.Variable(np.array(0.5), name="x")
y = F.tanh(F.tanh(x) * 3)
local = BackwardLabels("local labels")
y.creator_node.add_hook(local)
with BackwardLabels("global labels") as everywhere:
    y.backward()
print("local hook:  ", local.labels)
print("global hook: ", everywhere.labels)
assert local.labels == ["Tanh"] and everywhere.labels == ["Tanh", "_ * 3", "Tanh"]

# %% [markdown]
# ## Type checks: say what you accept
#
# A function that gets inputs it cannot handle should say so in words,
# before NumPy fails somewhere deep inside with a message about broadcasting.
# By hand, that is an `if` and a message in `forward`. (`message` runs a
# call that fails and returns its error, without the traceback.)

# %%
def message(call):
    try:
        call()
    except Exception as error:
        return f"{type(error).__name__}: {str(error).strip()}"


class HandDot(mc.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        if a.shape[-1] != b.shape[-2]:
            raise TypeError(f"Expect: a.shape[-1] == b.shape[-2]\n"
                            f"Actual: {a.shape[-1]} != {b.shape[-2]}")
        return a @ b,

# %%
hand_message = message(lambda: HandDot().apply((np.ones((2, 3)), np.ones((2, 3)))))
print(hand_message)

# %% [markdown]
# minichain's functions write the same promises in
# `check_type_forward(in_types)`, with the small expression language of
# `minichain.utils.type_check`. `in_types` holds one stand-in per input: a
# condition such as `a.shape[-1] == b.shape[-2]` on them is recorded, not
# evaluated at once, so the error can print it as written next to the values
# that broke it. `argname` names the inputs for the messages, `expect`
# checks conditions, and the last two lines check that the batch dimensions
# broadcast (`eval` gets the actual value now):

# %%
from minichain.functions.math.matmul import MatMul

print(inspect.getsource(MatMul.check_type_forward))

# %% [markdown]
# The same mistake with the real `F.matmul` gives the same numbers, with
# the function's name; the error is an `InvalidType`, not a `TypeError`, so
# `except TypeError` will not catch it:

# %%
real_message = message(lambda: F.matmul(np.ones((2, 3)), np.ones((2, 3))))
print(real_message)
assert real_message.startswith("InvalidType") and not issubclass(
    type_check.InvalidType, TypeError)
assert (hand_message.splitlines()[-1] == real_message.splitlines()[-1]
        == "Actual: 3 != 2")

# %% [markdown]
# Our own function can use the language too. `ScaleRows` multiplies each
# row of a matrix by one number, so it wants a 2-D float matrix and a vector
# with one entry per row:

# %%
class ScaleRows(mc.FunctionNode):
    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "scale"))
        x, scale = in_types
        type_check.expect(
            x.dtype.kind == "f",
            x.ndim == 2,
            scale.ndim == 1,
            scale.shape[0] == x.shape[0],
        )

    def forward(self, inputs):
        x, scale = inputs
        return x * scale[:, None],

# %%
print(message(lambda: ScaleRows().apply((np.ones((3, 2)), np.ones(2)))))

# %% [markdown]
# Checks can be switched off with `mc.using_config("type_check", False)`.
# The same mistake then reaches NumPy, whose message knows nothing about
# `ScaleRows`:

# %%
with mc.using_config("type_check", False):
    print(message(lambda: ScaleRows().apply((np.ones((3, 2)), np.ones(2)))))

# %% [markdown]
# ## Debug mode: stop at the first NaN
#
# A NaN spreads: every operation with a NaN input gives NaN, so by the time
# the loss is NaN, the place it was born is far away. Here `log` of a
# negative number makes one. NumPy warns (we catch the warning to print it
# without the file's path), but nothing stops, and the NaN flows to the end:

# %%
import warnings

x = mc.Variable(np.array([2.0, -1.0, 3.0]), name="x")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = F.sum(F.exp(F.log(x) * 0.5))
for warning in caught:
    print(f"{warning.category.__name__}: {warning.message}")
print("y =", y.array)
assert np.isnan(y.array)

# %% [markdown]
# With debug mode on, every forward output, and every gradient in backward,
# is checked, and the first NaN
# stops the computation, naming the function that made it
# (`np.errstate` silences NumPy's warning, seen above):

# %%
with mc.using_config("debug", True), np.errstate(invalid="ignore"):
    print(message(lambda: F.sum(F.exp(F.log(x) * 0.5))))

# %% [markdown]
# A NaN born in backward stops it the same way. `sqrt`'s backward divides
# the incoming gradient by `2√z`; at `z = 0`, under `* 0`, that is `0 / 0`.
# Forward has no NaN. `Sqrt` has no `backward_arrays` (the table above),
# so its backward runs on Variables even on the default path: it is built
# from functions, whose forwards run inside it, and the check catches the
# NaN in `_ / _`, hence "forward computation" in the message. A NaN made
# inside a `backward_arrays` reads "backward computation of" its label.
# We print the first line (the rest is the stack):

# %%
z = mc.Variable(np.array([0.0]))
with mc.using_config("debug", True), np.errstate(invalid="ignore"):
    forward_out = F.sum(F.sqrt(z) * 0)
    caught = message(lambda: forward_out.backward())
print(caught.splitlines()[0])
assert forward_out.array == 0 and caught.startswith("RuntimeError: NaN is detected")
assert "_ / _" in caught.splitlines()[0]

# %% [markdown]
# Debug mode also records, for each function, the line that applied it. An
# error in a backward (which runs far from the code that built the graph)
# then says where the function came from. `BuggyDouble` returns a gradient
# of the wrong shape:

# %%
class BuggyDouble(mc.FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, target_input_indexes, grad_outputs):
        return F.sum(grad_outputs[0]) * 2,       # bug: the sum loses the shape


with mc.using_config("debug", True):
    x = mc.Variable(np.array([1.0, 2.0]), name="x")
    y = BuggyDouble().apply((x,))[0]

# %% [markdown]
# Its backward fails with the message chapter 06 showed. Debug mode adds the
# stack of the line that applied `BuggyDouble`, recorded then, so the
# backward below shows it though it runs outside debug mode. We print only
# that stack's last line, the one in this notebook (the others are
# Jupyter's):

# %%
try:
    F.sum(y).backward()
except ValueError as error:
    head, stack = str(error).split("Stacktrace of the function is below:")
    print(head.strip())
    print("... the line that applied it:", stack.strip().splitlines()[-1].strip())

# %% [markdown]
# Debug mode costs a stack capture per function (the recorded line) and a
# pass over every array (the NaN check). On small arrays, where that
# overhead is most of the work, it makes each call many times slower (the
# times vary by machine; the cell asserts more than twice): that is why it is
# off by default:

# %%
import time


def seconds_per_call(debug, calls=200):
    """The best of five timings of ``calls`` tanh applications, per call."""
    v = mc.Variable(np.ones(3))
    best = math.inf
    for _ in range(5):
        with mc.using_config("debug", debug):
            start = time.perf_counter()
            for _ in range(calls):
                F.tanh(v)
            best = min(best, time.perf_counter() - start)
    return best / calls


debug, plain = seconds_per_call(True), seconds_per_call(False)
print(f"per call: {debug * 1e6:.1f} µs in debug mode, {plain * 1e6:.1f} µs without;"
      f" more than twice as slow: {debug > 2 * plain}")
assert debug > 2 * plain

# %% [markdown]
# ## If you know PyTorch
#
# - `y.creator_node.add_hook(hook)` ≈ `grad_fn.register_prehook` /
#   `register_hook`: code run before / after one node's backward;
# - debug mode ≈ `torch.autograd.detect_anomaly()`, which also records the
#   line that built each node and stops at a NaN (gradients only; debug
#   mode checks forward outputs too);
# - `TimerHook`, `MemoryHook` ≈ `torch.profiler` (`profile_memory=True`);
# - a `with hook:` block watching every function ≈
#   `torch.overrides.TorchFunctionMode`, or
#   `torch.utils._python_dispatch.TorchDispatchMode`, which also sees
#   backward's operations;
# - `Tensor.register_hook` (on a tensor's gradient): minichain has none.

# %% [markdown]
# ## Now build it: no task
#
# Hooks, type checks and debug mode are not part of `mychain`; the next
# task, Task 11, follows chapter 10.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: the check prints `right`,
# `not yet:` and a hint, or `not answered yet` while the answer is still
# `None`. The checks are ordinary Python in `notebooks/exercises/ch08.py`.

# %%
from exercises import ch08

# %% [markdown]
# **1.** Write a hook class `BackwardCounter` (a subclass of
# `mc.FunctionHook`) whose attribute `count` starts at 0 and counts the
# backward steps it sees, and assign the class to `answer_1`.

# %%
# class BackwardCounter(mc.FunctionHook):
#     ...
answer_1 = None
ch08.check_1(answer_1)

# %% [markdown]
# **2.** Write a FunctionNode `Outer` (`y = a bᵀ` for two vectors, of shape
# `(len(a), len(b))`) whose `check_type_forward` requires two 1-D float
# inputs: `forward` and `check_type_forward` only, no backward. Assign the
# class to `answer_2`.

# %%
# class Outer(mc.FunctionNode):
#     ...
answer_2 = None
ch08.check_2(answer_2)

# %% [markdown]
# **3.** In `z = F.sum(F.sqrt(F.log(x)) + F.exp(x))` with
# `x = [0.5, 2.0]`, which function makes the first NaN? Use debug mode to
# find out and assign its label (a string) to `answer_3`.

# %%
answer_3 = None
ch08.check_3(answer_3)

# %% [markdown]
# ## Notes (for the curious)
#
# **Note 1: nested calls; MemoryHook's table, row by row.** Nested calls
# count twice, so `TimerHook`'s rows add up to more than `total_time()`,
# which counts only the outermost steps:

# %%
rows = sum(record["elapsed_time"] for record in timer.summary().values())
print("sum of the rows > total_time():", rows > timer.total_time())
assert rows > timer.total_time()

# %% [markdown]
# In a row's name, `forward:` is any forward call, those inside a backward
# too. **allocated** adds up what each call left alive; **peak** is the most
# any call used above its starting level. Row by row (those at 0.0 in both
# come last):
#
# - `forward:Linear`, 2.1 MiB: its five float32 outputs, split below; its
#   peak, 1.0, the largest call's, is below that sum;
# - `backward:Linear`, 1.1 MiB: the three gradients its nested `Linear`s
#   made, counted again;
# - `backward:ReLU`: its `ReLUGrad`, counted again;
# - the 0.0 rows: views (`Transpose`) or the loss's KiB-sized arrays;
# - `forward:ReLUGrad`'s temporaries: the mask `y > 0`, 256 KiB, and
#   NumPy's cast buffer (`np.getbufsize()` float32 values, 32 KiB).

# %%
zero = [event for event, record in table.items()      # 0.0 in both
        if max(abs(record["allocated_bytes"]), record["peak_bytes"]) < MiB / 20]
print(HEADER)
for event in table:
    if event not in zero:
        print(memory_row(event))
print(f"0.0 MiB in both figures: {', '.join(zero)}\n")
assert zero == [e for e in table if "Linear" not in e and "ReLU" not in e]

KiB = 2 ** 10
outputs = {"x W1ᵀ": (512, 512), "h W2ᵀ": (512, 4),             # 2 forwards
           "h's gradient": (512, 512), "W2's gradient": W2.shape,
           "W1's gradient": W1.shape}                        # 3 in backward
sizes = {name: np.prod(shape) * 4 for name, shape in outputs.items()}  # float32
linear_bytes = sum(sizes.values())
print(f"forward:Linear {linear_bytes / MiB:.1f} MiB = "
      + " + ".join(f"{name} {n // KiB} KiB" for name, n in sizes.items()))
assert abs(table["forward:Linear"]["allocated_bytes"] - linear_bytes) < 2048
gradients = {name: n for name, n in sizes.items() if "gradient" in name}
nested = sum(gradients.values())
print(f"backward:Linear {nested / MiB:.1f} MiB = "
      + " + ".join(f"{name} {n // KiB} KiB" for name, n in gradients.items()))
# within 4 KiB: the path on Variables (hooks force it) also makes small
# Python objects (Variables, nodes)
assert abs(table["backward:Linear"]["allocated_bytes"] - nested) < 4 * KiB

mask = 512 * 512 * np.dtype(bool).itemsize               # ReLUGrad's y > 0
cast = np.getbufsize() * np.dtype(np.float32).itemsize   # NumPy's cast buffer
relu_grad = table["forward:ReLUGrad"]
extra = relu_grad["peak_bytes"] - relu_grad["allocated_bytes"]
print(f"forward:ReLUGrad's peak - allocated: {extra / MiB:.1f} MiB; the mask:"
      f" {mask // KiB} KiB; the cast buffer: {cast // KiB} KiB")
assert abs(extra - mask - cast) < 4 * KiB and cast < mask / 4
