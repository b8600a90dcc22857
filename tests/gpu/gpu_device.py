"""What every GPU test shares: the marker, the skip and the array module.

``make test-gpu`` runs ``pytest -m gpu``. Without CuPy or a GPU every test
here is *skipped* with the reason below (and the command exits 0); with one,
the same checks as on the CPU run on CuPy arrays.
"""

import pytest

from minichain import backend

REASON = ("needs CuPy and an NVIDIA GPU: minichain.backend.available is "
          "False on this machine")

gpu = [pytest.mark.gpu, pytest.mark.skipif(not backend.available,
                                           reason=REASON)]


def cupy():
    """The cupy module (only called inside tests that were not skipped)."""
    return backend.cupy


def to_device(arrays):
    """Copy a tuple of NumPy arrays (None kept) to the GPU."""
    return tuple(None if a is None else backend.to_gpu(a) for a in arrays)
