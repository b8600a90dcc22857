"""minichain.datasets: small data sets made in code, and a minibatch iterator.

Nothing is downloaded: ``make_spiral`` and ``make_sine`` compute their data
from a seed, so every run (and every notebook) sees the same numbers.
"""

from minichain.datasets.iterator import SerialIterator  # NOQA
from minichain.datasets.sine import make_sine  # NOQA
from minichain.datasets.spiral import make_spiral  # NOQA
