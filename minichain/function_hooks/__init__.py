"""Ready-made function hooks (register with ``with hook:`` or ``add_hook``).

One import per line, one hook per module: add yours at the end.
"""

from minichain.function_hooks.print_hook import PrintHook  # NOQA
from minichain.function_hooks.timer import TimerHook  # NOQA
from minichain.function_hooks.backward_order import BackwardOrderHook  # NOQA
from minichain.function_hooks.memory_hook import MemoryHook  # NOQA
