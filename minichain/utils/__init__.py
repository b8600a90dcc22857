"""Helpers that the engine and the functions share but that are not autodiff.

``minichain.utils.type_check`` is the small language in which a function
states what inputs it accepts (``in_types[0].ndim >= 2``), and which turns a
broken promise into a readable ``InvalidType`` message.
"""
