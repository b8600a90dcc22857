"""minichain.links (imported as ``L``): ready-made links with parameters.

``Linear`` is the fully connected layer; ``MLP`` stacks them into the small
example model the training chapter uses.
"""

from minichain.links.linear import Linear  # NOQA
from minichain.links.mlp import MLP  # NOQA
