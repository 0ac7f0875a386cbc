"""Why two episodes are near: the terms that weigh most in their match, and the episode one names."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def term_reasons(matrix: sp.csr_matrix, terms: np.ndarray, base: sp.csr_matrix, j: int, n: int = 5) -> list[str]:
    """The terms that weigh most in the match of ``base`` with row ``j``: the largest products of the two vectors.

    Works on the CSR arrays directly: slicing a scipy row costs more than the whole product.
    """
    m = matrix
    cols, vals = m.indices[m.indptr[j]:m.indptr[j + 1]], m.data[m.indptr[j]:m.indptr[j + 1]]
    common, at_base, at_row = np.intersect1d(base.indices, cols, assume_unique=True, return_indices=True)
    if len(common) == 0:
        return []
    prod = base.data[at_base] * vals[at_row]
    order = np.argsort(-prod, kind="stable")[:n]
    return [str(terms[common[o]]) for o in order]


def mention_reason(mentions: sp.csr_matrix | None, numbers: list[int | None], i: int, j: int) -> str | None:
    """"mentions episode N" when episode ``i`` names ``j`` by its number, "mentioned in episode N" the other way."""
    if mentions is None:
        return None
    if mentions[i, j] and numbers[j] is not None:
        return f"mentions episode {numbers[j]}"
    if mentions[j, i] and numbers[j] is not None:
        return f"mentioned in episode {numbers[j]}"
    return None
