"""Where arrays live: NumPy on the CPU, CuPy on a GPU when one is present.

Every function asks ``get_array_module(x)`` for the module of its inputs and
calls that module, so the same code runs on both. Without CuPy (or without a
GPU) ``available`` is False and everything is NumPy.
"""

import numpy

try:  # CuPy is optional: import it only if it is installed and sees a GPU.
    import cupy

    available = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # ImportError, or a CUDA runtime error without a device
    cupy = None
    available = False

if available:
    array_types = (numpy.ndarray, cupy.ndarray)
else:
    array_types = (numpy.ndarray,)


def _unwrap(x):
    # A Variable carries its array in ``.array``; plain arrays pass through.
    return getattr(x, "array", x) if not isinstance(x, array_types) else x


def get_array_module(*args):
    """Return ``cupy`` if any argument is (or wraps) a CuPy array, else ``numpy``."""
    if available:
        for x in args:
            if isinstance(_unwrap(x), cupy.ndarray):
                return cupy
    return numpy


def is_gpu_array(x):
    return available and isinstance(x, cupy.ndarray)


def to_cpu(array):
    """Copy an array (or each array in a list/tuple) to host memory as NumPy."""
    if isinstance(array, (list, tuple)):
        return type(array)(to_cpu(a) for a in array)
    if array is None:
        return None
    if is_gpu_array(array):
        return array.get()
    if isinstance(array, numpy.ndarray):
        return array
    if numpy.isscalar(array) and not isinstance(array, (str, bytes)):
        return numpy.asarray(array)
    raise TypeError(
        "to_cpu: expected a NumPy or CuPy array, got {}".format(type(array)))


def to_gpu(array, device=None):
    """Copy an array to the current (or given) GPU as a CuPy array.

    Raises a clear error when no GPU is available, naming how to get one.
    """
    if isinstance(array, (list, tuple)):
        return type(array)(to_gpu(a, device) for a in array)
    if array is None:
        return None
    if not available:
        raise RuntimeError(
            "to_gpu: CuPy with a working GPU is needed, but none was found. "
            "Install CuPy (pip install 'minichain[gpu]') on a machine with an "
            "NVIDIA GPU, or stay on the CPU.")
    if device is None:
        return cupy.asarray(array)
    with cupy.cuda.Device(device):
        return cupy.asarray(array)


def device_name(array):
    return "GPU" if is_gpu_array(array) else "CPU"
