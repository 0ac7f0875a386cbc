"""Every episode's nearest rows, precomputed blockwise on sparse matrices (never a dense N x N matrix): exact up
to :data:`EXACT_LIMIT` episodes, pruned candidates + rescoring above; and the lists after a fold-in."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..progress import no_step, stepped
from .weighting import keep_top_terms

EXACT_LIMIT = 5_000  # up to this many episodes, neighbours score every pair; above, pruned candidates + rescoring
CANDIDATES = 200  # candidates per episode rescored with the full vectors (above EXACT_LIMIT)
PRUNE_TERMS = 64  # terms per episode kept for finding candidates (above EXACT_LIMIT)
RESCORE_TERMS = 0  # > 0: rescore against only a candidate's strongest terms (0: all; 128 lost too much, see docs)


def top_neighbours(matrix: sp.csr_matrix, k: int, block_rows: int = 512, dense: np.ndarray | None = None,
                   dense_weight: float = 0.0, links: sp.csr_matrix | None = None, link_weight: float = 0.0,
                   exact_limit: int = EXACT_LIMIT, candidates: int = CANDIDATES,
                   prune_terms: int = PRUNE_TERMS, rescore_terms: int = RESCORE_TERMS,
                   step: Callable[[], None] = no_step) -> tuple[np.ndarray, np.ndarray]:
    """The k most similar rows of every row (cosine; rows are L2-normalised), computed block by block.

    With ``dense`` (LSA rows), the score is ``(1 - dense_weight) * sparse cosine + dense_weight * dense cosine``;
    with ``links`` (symmetric N x N), a linked pair scores ``s + link_weight * (1 - s)``.

    Up to ``exact_limit`` rows every pair is scored, one block of ``block_rows x N`` float32 at a time (never
    N x N). Above it, two stages, so that time and memory stay near linear: *candidates* from vectors pruned
    to their ``prune_terms`` strongest terms (a sparse product that only meets rare, strong terms), the best
    ``candidates`` of each row plus its linked rows; then each candidate is *rescored* with the full vectors.
    ``step()`` is called before each block.
    """
    n = matrix.shape[0]
    k_eff = min(k, max(n - 1, 0))
    idx = np.full((n, k), -1, dtype=np.int32)
    score = np.zeros((n, k), dtype=np.float32)
    if k_eff == 0:
        return idx, score
    if n <= exact_limit:
        _exact_neighbours(matrix, k_eff, block_rows, dense, dense_weight, links, link_weight, idx, score, step)
    else:
        _pruned_neighbours(matrix, k_eff, block_rows, dense, dense_weight, links, link_weight, idx, score,
                           max(candidates, k_eff), prune_terms, rescore_terms, step)
    return idx, score


def _exact_neighbours(matrix: sp.csr_matrix, k: int, block_rows: int, dense: np.ndarray | None, dense_weight: float,
                      links: sp.csr_matrix | None, link_weight: float, idx: np.ndarray, score: np.ndarray,
                      step: Callable[[], None] = no_step) -> None:
    n = matrix.shape[0]
    transposed = matrix.T.tocsc()
    for start in stepped(range(0, n, block_rows), step):
        stop = min(start + block_rows, n)
        sims = _block_scores(matrix, transposed, start, stop, dense, dense_weight, links, link_weight)
        _store_top(start, sims, k, idx, score)


def _block_scores(matrix: sp.csr_matrix, transposed: sp.csc_matrix, start: int, stop: int, dense: np.ndarray | None,
                  dense_weight: float, links: sp.csr_matrix | None, link_weight: float) -> np.ndarray:
    """The scores of rows ``start:stop`` against every row (dense, block x N); -1 for a row against itself."""
    sims = (matrix[start:stop] @ transposed).toarray()
    if dense is not None:
        sims *= 1 - dense_weight
        sims += dense_weight * (dense[start:stop] @ dense.T)
    if links is not None and link_weight:
        r, c = links[start:stop].nonzero()
        sims[r, c] += link_weight * (1 - sims[r, c])
    sims[np.arange(stop - start), np.arange(start, stop)] = -1.0  # never the episode itself
    return sims


def fold_neighbours(matrix: sp.csr_matrix, old: int, neigh_idx: np.ndarray, neigh_score: np.ndarray,
                    block_rows: int = 512, dense: np.ndarray | None = None, dense_weight: float = 0.0,
                    links: sp.csr_matrix | None = None, link_weight: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The neighbour lists of ``matrix`` whose first ``old`` rows have theirs in ``neigh_idx``/``neigh_score``.

    Each new row (``old:``) is scored against every row, exactly (as :func:`top_neighbours` up to its exact
    limit), a block of new rows at a time; the scores are symmetric, so the same block also says which
    earlier rows a new one enters: those whose k-th score it beats (or whose list has room) take it in.
    """
    n, k = matrix.shape[0], neigh_idx.shape[1]
    k_eff = min(k, max(n - 1, 0))
    idx = np.vstack([neigh_idx, np.full((n - old, k), -1, dtype=np.int32)])
    score = np.vstack([neigh_score, np.zeros((n - old, k), dtype=np.float32)])
    if k_eff == 0:
        return idx, score
    transposed = matrix.T.tocsc()
    for start in range(old, n, block_rows):
        stop = min(start + block_rows, n)
        sims = _block_scores(matrix, transposed, start, stop, dense, dense_weight, links, link_weight)
        _store_top(start, sims, k_eff, idx, score)
        # Rows before the block take in the block's rows that beat their k-th (later new rows get theirs above).
        kth = np.where(idx[:start, k_eff - 1] >= 0, score[:start, k_eff - 1], -np.inf)
        better = np.maximum(sims[:, :start], 0)
        rows = np.flatnonzero((better > kth).any(axis=0))
        if len(rows) == 0:
            continue
        cand_idx = np.hstack([idx[rows, :k_eff], np.broadcast_to(np.arange(start, stop, dtype=np.int32),
                                                                 (len(rows), stop - start))])
        cand_score = np.hstack([np.where(idx[rows, :k_eff] >= 0, score[rows, :k_eff], -np.inf), better[:, rows].T])
        order = np.argsort(-cand_score, axis=1, kind="stable")[:, :k_eff]  # an old neighbour wins a tie
        idx[rows, :k_eff] = np.take_along_axis(cand_idx, order, axis=1)
        score[rows, :k_eff] = np.maximum(np.take_along_axis(cand_score, order, axis=1), 0)
    return idx, score


def _pruned_neighbours(matrix: sp.csr_matrix, k: int, block_rows: int, dense: np.ndarray | None, dense_weight: float,
                       links: sp.csr_matrix | None, link_weight: float, idx: np.ndarray, score: np.ndarray,
                       candidates: int, prune_terms: int, rescore_terms: int = 0,
                       step: Callable[[], None] = no_step) -> None:
    n = matrix.shape[0]
    pruned = keep_top_terms(matrix, prune_terms, step=step)
    pruned_t = pruned.T.tocsc()
    rescore = keep_top_terms(matrix, rescore_terms, step=step) if rescore_terms else matrix
    block_rows = min(block_rows, 256)  # the block is made dense (rows x terms) for rescoring
    for start in stepped(range(0, n, block_rows), step):
        stop = min(start + block_rows, n)
        approx = (pruned[start:stop] @ pruned_t).tocsr()
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        for r in range(stop - start):
            a, b = approx.indptr[r], approx.indptr[r + 1]
            cand = approx.indices[a:b]
            if b - a > candidates:
                cand = cand[np.argpartition(-approx.data[a:b], candidates)[:candidates]]
            if links is not None:
                cand = np.union1d(cand, links.indices[links.indptr[start + r]:links.indptr[start + r + 1]])
            cand = cand[cand != start + r]
            rows.append(np.full(len(cand), start + r, dtype=np.int64))
            cols.append(cand.astype(np.int64))
        pair_rows, pair_cols = np.concatenate(rows), np.concatenate(cols)
        exact = pair_scores(rescore, start, stop, pair_rows, pair_cols, matrix[start:stop].toarray().ravel())
        if dense is not None:
            exact = (1 - dense_weight) * exact + dense_weight * np.einsum("ij,ij->i", dense[pair_rows], dense[pair_cols])
        if links is not None and link_weight:
            linked = np.asarray(links[pair_rows, pair_cols]).ravel() > 0
            exact[linked] += link_weight * (1 - exact[linked])
        width = max(len(c) for c in cols) if cols else 0
        sims = np.full((stop - start, max(width, k)), -1.0, dtype=np.float32)
        who = np.zeros_like(sims, dtype=np.int64)
        offset = 0
        for r, c in enumerate(cols):
            sims[r, :len(c)] = exact[offset:offset + len(c)]
            who[r, :len(c)] = c
            offset += len(c)
        part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        part_idx = np.take_along_axis(who, part, axis=1)
        part_scores = np.take_along_axis(sims, part, axis=1)
        part_idx[part_scores < 0] = -1
        _store(start, part_idx, part_scores, idx, score)


def pair_scores(matrix: sp.csr_matrix, start: int, stop: int, rows: np.ndarray, cols: np.ndarray,
                 block: np.ndarray | None = None, chunk: int = 4_000_000) -> np.ndarray:
    """Dot products of the row pairs (rows[p], cols[p]) of ``matrix``, every rows[p] in ``start:stop``.

    The block's rows are made dense (block x terms; or given as ``block``, flattened), then each pair reads
    the candidate's nonzeros from it: one gather per nonzero, a chunk of about ``chunk`` nonzeros at a time.
    """
    block = matrix[start:stop].toarray().ravel() if block is None else block
    width = matrix.shape[1]
    lengths = (matrix.indptr[cols + 1] - matrix.indptr[cols]).astype(np.int64)
    out = np.zeros(len(rows), dtype=np.float32)
    ends = np.cumsum(lengths)
    a = 0
    while a < len(rows):
        b = int(np.searchsorted(ends, (ends[a - 1] if a else 0) + chunk, side="right"))
        b = max(b, a + 1)
        lens = lengths[a:b]
        total = int(lens.sum())
        if total:
            first = np.cumsum(lens) - lens  # each pair's offset in the gathered run
            pos = np.repeat(matrix.indptr[cols[a:b]].astype(np.int64) - first, lens) + np.arange(total)
            flat = np.repeat((rows[a:b] - start).astype(np.int64) * width, lens) + matrix.indices[pos]
            prod = block[flat] * matrix.data[pos]
            nonempty = lens > 0
            out[a:b][nonempty] = np.add.reduceat(prod, first[nonempty])
        a = b
    return out


def _store_top(start: int, sims: np.ndarray, k: int, idx: np.ndarray, score: np.ndarray) -> None:
    """Store the best ``k`` columns of each row of the dense block ``sims`` (rows ``start:``)."""
    part = np.argpartition(-sims, k, axis=1)[:, :k] if k < sims.shape[1] else np.argsort(-sims, axis=1)[:, :k]
    _store(start, part, np.take_along_axis(sims, part, axis=1), idx, score)


def _store(start: int, part: np.ndarray, part_scores: np.ndarray, idx: np.ndarray, score: np.ndarray) -> None:
    order = np.argsort(-part_scores, axis=1, kind="stable")
    k = part.shape[1]
    idx[start:start + len(part), :k] = np.take_along_axis(part, order, axis=1)
    score[start:start + len(part), :k] = np.maximum(np.take_along_axis(part_scores, order, axis=1), 0)

