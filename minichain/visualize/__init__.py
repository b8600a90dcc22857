"""Pictures of the machine: the graph, the backward order, memory over time.

One idea per module:

- ``ascii``: the reference's arrow drawing ``x <--- f <--- y``, as text.
- ``dot``: finding Graphviz's ``dot`` (or its pip-installable port).
- ``graphviz_render``: a ``graphviz.Digraph`` with shapes, dtypes, values,
  gradients, ranks and the backward visiting order.
- ``backward_order``: the heap's visiting order as a table and a figure,
  next to a depth-first order that gets the gradient wrong.
- ``memory_plot``: bytes held over a forward and backward, plain vs forget.
- ``animate``: backward step by step, as an HTML player (graph, gradients,
  heap, bytes held), recorded by a hook from what the engine did.
- ``player``: that player's HTML, every frame drawn in advance, so that it
  steps even where JupyterLab runs no script (an untrusted notebook).
- ``record``: the order an engine really ran its backwards, for an engine
  with no hooks (a learner's own).
- ``engine_api``: how the pictures reach the graph of any engine with
  minichain's public API (``docs/build-your-own-engine.md``).

The figure modules import matplotlib and graphviz only when called.
"""

from minichain.visualize import ascii  # NOQA
from minichain.visualize.animate import animate_backward  # NOQA
from minichain.visualize import dot  # NOQA
from minichain.visualize.ascii import draw  # NOQA
from minichain.visualize.backward_order import (  # NOQA
    depth_first_backward, order_table, plot_backward_order,
    plot_order_comparison, wrong_order_example)
from minichain.visualize.dot import GraphvizNotFoundError  # NOQA
from minichain.visualize.graphviz_render import to_digraph, to_svg  # NOQA
from minichain.visualize.record import record_backward  # NOQA
from minichain.visualize.memory_plot import (  # NOQA
    checkpoint_bound, plot_memory, plot_plain_vs_forget)
