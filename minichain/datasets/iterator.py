"""A tiny minibatch iterator: shuffled batches, epoch by epoch.

Training rarely uses the whole data set per step: it walks it in
*minibatches*, in a new random order every *epoch* (one pass over the
data), so each step sees a different sample and the order carries no
pattern the model could learn.
"""

import numpy


class SerialIterator:
    """Yield minibatches of a data set, one epoch after another.

    Args:
        dataset: an array, or a tuple of arrays of the same length (e.g.
            ``(x, t)``); a batch is then a tuple of the same arrays indexed
            by the batch's example indices.
        batch_size: examples per batch. The last batch of an epoch is
            shorter when ``batch_size`` does not divide the data (Chainer's
            iterator instead fills it from the next epoch).
        repeat: if False, iteration stops after one epoch.
        shuffle: a new random order every epoch (else the data's order).
        seed: seed of the iterator's own NumPy Generator, so the order of
            batches is reproducible and independent of other random draws.

    Attributes:
        epoch: completed epochs.
        iteration: batches yielded so far.
        is_new_epoch: True right after the last batch of an epoch.
        epoch_detail: epochs as a float (``epoch + position / N``).
    """

    def __init__(self, dataset, batch_size, repeat=True, shuffle=True,
                 seed=0):
        arrays = dataset if isinstance(dataset, tuple) else (dataset,)
        sizes = {len(a) for a in arrays}
        if len(sizes) != 1:
            raise ValueError("SerialIterator: the arrays of the data set have "
                             "different lengths {}".format(sorted(sizes)))
        if 0 in sizes:
            raise ValueError("SerialIterator: the data set is empty")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("SerialIterator: batch_size must be an int >= "
                             "1, got {!r}".format(batch_size))
        self.dataset = dataset
        self._arrays = arrays
        self._size = sizes.pop()
        self.batch_size = batch_size
        self.repeat = repeat
        self.shuffle = shuffle
        self.seed = seed
        self.reset()

    def reset(self):
        """Start again from epoch 0 with the initial seed."""
        self._rng = numpy.random.default_rng(self.seed)
        self.epoch = 0
        self.iteration = 0
        self.is_new_epoch = False
        self._position = 0
        self._order = self._new_order()

    def _new_order(self):
        if self.shuffle:
            return self._rng.permutation(self._size)
        return numpy.arange(self._size)

    def __len__(self):
        """Batches per epoch."""
        return -(-self._size // self.batch_size)

    def __iter__(self):
        return self

    def __next__(self):
        if not self.repeat and self.epoch > 0:
            raise StopIteration
        start = self._position
        index = self._order[start:start + self.batch_size]
        self._position = start + len(index)
        self.iteration += 1
        self.is_new_epoch = self._position >= self._size
        if self.is_new_epoch:
            self.epoch += 1
            self._position = 0
            self._order = self._new_order()
        batch = tuple(a[index] for a in self._arrays)
        return batch if isinstance(self.dataset, tuple) else batch[0]

    next = __next__

    @property
    def epoch_detail(self):
        return self.epoch + self._position / self._size
