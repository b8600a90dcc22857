"""minichain: a small define-by-run autodiff package in the spirit of Chainer."""
