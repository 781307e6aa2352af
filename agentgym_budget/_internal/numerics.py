"""Matrix products that give the same bits on any number of threads, so ``--threads`` stays an operational setting.

PyTorch's x86 CPU wheels multiply matrices with Intel oneMKL, which on some processors (seen on an
AVX-512 Xeon) splits a product's inner sum across threads: a linear layer's backward pass then rounds
differently on one thread and on two, and training on ``--threads 2`` makes other weights than on
``--threads 1``. oneMKL's strict conditional numerical reproducibility (``MKL_CBWR=AUTO,STRICT``) keeps
the sums in one order whatever the thread count, at a small cost on one thread (3,000 rounds of a tiny
model's output-layer products: 7.9-8.3 CPU s without it, 8.3-8.4 with, two runs each on a busy machine).
oneMKL reads the variable once, at its first call in the process, so the package sets it on import,
before any model library multiplies anything; a value the user set is kept (``MKL_CBWR=AUTO`` for the
fastest code path, at the price of that guarantee). Builds without oneMKL (aarch64 wheels) ignore it.
"""

from __future__ import annotations

import os

__all__ = ["REPRODUCIBLE_MKL", "keep_matrix_products_reproducible"]

REPRODUCIBLE_MKL = "AUTO,STRICT"
"""oneMKL's code path for this processor, with results independent of the number of threads."""


def keep_matrix_products_reproducible() -> str:
    """Set ``MKL_CBWR`` to :data:`REPRODUCIBLE_MKL` unless the environment sets it; returns the value in effect.

    Takes effect only if oneMKL has not run in this process yet (importing ``torch`` alone does not run it).

    Example:
        >>> keep_matrix_products_reproducible() == os.environ["MKL_CBWR"]
        True
    """
    return os.environ.setdefault("MKL_CBWR", REPRODUCIBLE_MKL)
