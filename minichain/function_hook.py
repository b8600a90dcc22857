"""Function hooks: code that runs around every forward and backward step.

A hook is registered either globally for this thread (``with hook:``) or on
one node (``node.add_hook(hook)``). The engine calls
``forward_preprocess``/``forward_postprocess`` around each forward and
``backward_preprocess``/``backward_postprocess`` around each backward step;
global hooks run first, then the node's own. Timers, printers, memory
profilers and the backward-order recorder are all hooks.
"""

from minichain.configuration import config


# Hooks of a node's own are rare. Until some node gets them (the first read
# of ``FunctionNode.local_function_hooks`` makes its dict) this stays False,
# and the engine need not look on each node, forward and backward, for hooks
# it cannot have. It never goes back to False.
local_hooks_in_use = False


def get_function_hooks():
    """The thread's ordered dict of globally registered hooks (name -> hook).

    Each thread has its own, made on its first use of ``config`` and kept
    with the settings ``FunctionNode.apply`` reads on every operation
    (``configuration._EngineView``), so that ``apply`` finds both in one
    thread-local read.
    """
    return config._view.function_hooks


class FunctionHook:
    """Base class: override any of the six callbacks; the rest do nothing.

    ``name`` is the key under which the hook is registered; two hooks with
    the same name cannot be registered at the same place.
    """

    name = "FunctionHook"

    def __enter__(self):
        hooks = get_function_hooks()
        if self.name in hooks:
            raise KeyError("hook {} already exists".format(self.name))
        hooks[self.name] = self
        self.added(None)
        return self

    def __exit__(self, *exc):
        self.deleted(None)
        del get_function_hooks()[self.name]

    def added(self, function=None):
        """Called when registered; ``function`` is None for a global hook."""

    def deleted(self, function=None):
        """Called when unregistered; ``function`` is None for a global hook."""

    def forward_preprocess(self, function, in_data):
        """Before ``function.forward(in_data)``."""

    def forward_postprocess(self, function, in_data):
        """After ``function.forward(in_data)``."""

    def backward_preprocess(self, function, in_data, out_grad):
        """Before ``function``'s backward; ``in_data`` has None where not retained."""

    def backward_postprocess(self, function, in_data, out_grad):
        """After ``function``'s backward."""


def hooks_for(function):
    """The hooks that apply to ``function``: global ones, then its own.

    A local hook with the same name as a global one replaces it.
    """
    hooks = get_function_hooks()
    local = function._local_function_hooks
    if local:
        hooks = dict(hooks)
        hooks.update(local)
    return hooks.values()
