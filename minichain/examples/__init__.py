"""minichain.examples: complete programs the course chapters import.

``spiral``: an MLP trained on the spiral data (the training chapter).
Import a module explicitly (``from minichain.examples import spiral``);
nothing here is loaded by ``import minichain``.
"""
