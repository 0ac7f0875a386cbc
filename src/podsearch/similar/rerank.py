"""The precomputed lists reordered by two signals that need a pair's two episodes (docs/similar.md, fifth round).

Each list's members (the top ``neighbours`` of the blended text score, found by :mod:`neighbours`) stay; their
order and scores change:

- **pseudo-relevance feedback** (``prf_weight``): each episode's row plus ``prf_alpha`` times the mean of its
  ``prf_neighbours`` first neighbours' rows on the terms at least two of them hold (what its topic's episodes
  share), renormalised; a pair's score mixes in the cosine of their expanded rows,
  ``s = (1 - prf_weight) * text + prf_weight * cos(expanded)``;
- **back-references** (``cue_weight``): where an episode's notes or transcript say "episode" ("that episode
  with the lawyer", "our episodes on fuzzing"), the ``cue_width`` words either side are a *cue window*,
  weighed as an episode row; the pair's cue score is the best cosine of a window of either episode with the
  whole other one, and lifts the score: ``s + cue_weight * max(0, cue - s)``. Round-ups and sequels describe
  the episodes they look back on in a sentence or two, which the whole-episode vectors drown.

Then the mention bonus, as in the first stage. The work is bounded by the lists: one small product per episode
and list, never a pass over all pairs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from ..progress import no_step, stepped
from .neighbours import pair_scores
from .params import ModelParams
from .weighting import keep_top_terms

CUE = re.compile(r"(?:episodes?|eps?)(?![\w'’-])", re.IGNORECASE)  # a word naming an episode (at a word start)
CUE_START = re.compile(r"[Ee][Pp]")  # where one may start: found by a plain scan, then checked (4x faster)
IN_WORD = re.compile(r"[\w'’-]")
WORD = re.compile(r"\S+")
WORD_CHARS = (12, 64)  # characters read per word wanted either side of a cue: a first guess, then enough


def cue_windows(text: str, width: int) -> list[str]:
    """The ``width`` words either side of every cue word of ``text`` ("episode", "episodes", "ep"); windows that
    overlap are merged. Only the text near each cue is split into words."""
    spans: list[list[int]] = []
    for start in CUE_START.finditer(text):
        at = start.start()
        match = CUE.match(text, at)
        if match is None or (at > 0 and IN_WORD.match(text, at - 1)):
            continue
        lo, hi = _words_before(text, at, width), _words_after(text, match.end(), width)
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return [text[lo:hi] for lo, hi in spans]


def _words_before(text: str, at: int, n: int) -> int:
    for per_word in WORD_CHARS:
        base = max(0, at - per_word * (n + 1))
        words = [m for m in WORD.finditer(text, base, at) if m.end() < at]  # not the cue word's own start ("(")
        if base > 0 and words and words[0].start() == base:
            words = words[1:]  # a word cut by the slice
        if len(words) >= n or base == 0:
            break
    return words[-n].start() if n and len(words) >= n else (words[0].start() if words else at)


def _words_after(text: str, at: int, n: int) -> int:
    for per_word in WORD_CHARS:
        stop = min(len(text), at + per_word * (n + 1))
        words = [m for m in WORD.finditer(text, at, stop) if m.start() > at]
        if len(words) > n or stop == len(text):  # one more than needed: the n-th is whole
            break
    return words[n - 1].end() if n and len(words) >= n else (words[-1].end() if words else at)


def reranking(params: ModelParams) -> bool:
    return params.prf_weight > 0 or params.cue_weight > 0


def expanded_rows(matrix: sp.csr_matrix, neigh_idx: np.ndarray, k: int, alpha: float, terms: int,
                  block_rows: int = 512, step: Callable[[], None] = no_step) -> sp.csr_matrix:
    """Each row plus ``alpha`` times the mean of its ``k`` first neighbours' rows, on the terms at least two of them
    hold, cut to its ``terms`` strongest and L2-normalised (pseudo-relevance feedback); a block of rows at a time,
    so that the neighbours' summed rows are never held for every episode."""
    n = matrix.shape[0]
    present = matrix.copy()
    present.data[:] = 1
    blocks = []
    for start in stepped(range(0, n, block_rows), step):
        idx = neigh_idx[start:start + block_rows, :k]
        valid = idx >= 0
        counts = valid.sum(axis=1)
        pick = sp.csr_matrix((np.ones(int(valid.sum()), dtype=np.float32), idx[valid], np.r_[0, np.cumsum(counts)]),
                             shape=(len(idx), n))
        support = (pick @ present).tocsr()
        support.data = (support.data >= 2).astype(np.float32)
        shared = sp.diags(alpha / np.maximum(counts, 1).astype(np.float32)) @ (pick @ matrix).multiply(support)
        blocks.append(keep_top_terms((matrix[start:start + block_rows] + shared).tocsr(), terms))
    return normalize(sp.vstack(blocks, format="csr")).astype(np.float32)


def cue_scores(windows: sp.csr_matrix, owner: np.ndarray, matrix: sp.csr_matrix, pattern: sp.csr_matrix,
               step: Callable[[], None] = no_step) -> sp.csr_matrix:
    """For every pair (i, j) of ``pattern`` (symmetric), the best cosine of a cue window of i with the row of j.

    ``windows`` are the weighed windows, ``owner`` their episodes (in increasing order)."""
    n = matrix.shape[0]
    out = pattern.astype(np.float32).tocsr(copy=True)
    out.data[:] = 0
    if windows.shape[0] == 0:
        return out
    starts = np.searchsorted(owner, np.arange(n + 1))
    for i in stepped(np.flatnonzero(np.diff(starts)), step):
        a, b = out.indptr[i], out.indptr[i + 1]
        if a == b:
            continue
        cols = out.indices[a:b]
        best = (windows[starts[i]:starts[i + 1]] @ matrix[cols].T).toarray().max(axis=0)
        out.data[a:b] = best
    return out


def rerank(neigh_idx: np.ndarray, text_rows: sp.csr_matrix, dense: np.ndarray | None, params: ModelParams,
           main: sp.csr_matrix, windows: sp.csr_matrix | None, owner: np.ndarray | None,
           links: sp.csr_matrix | None, rows: Sequence[int] | None = None,
           step: Callable[[], None] = no_step) -> tuple[np.ndarray, np.ndarray]:
    """The lists ``neigh_idx`` (of ``rows``, by default all) reordered and rescored (module doc).

    ``text_rows`` give the text cosine (the main and title rows side by side, :func:`titles.joined`), ``dense``
    the LSA rows, ``main`` the main rows (what feedback expands and windows are matched with)."""
    n, k = neigh_idx.shape
    rows = np.arange(n) if rows is None else np.unique(np.asarray(rows, dtype=np.int64))
    out_idx = neigh_idx.copy()
    out_score = np.zeros((n, k), dtype=np.float32)
    expanded = (expanded_rows(main, neigh_idx, params.prf_neighbours, params.prf_alpha, params.max_terms_per_doc,
                              step=step) if params.prf_weight > 0 else None)
    cue = None
    if params.cue_weight > 0 and windows is not None and owner is not None:
        r = np.repeat(np.arange(n), k)
        c = neigh_idx.ravel()
        keep = c >= 0
        pattern = sp.csr_matrix((np.ones(int(keep.sum()), dtype=np.float32), (r[keep], c[keep])), shape=(n, n))
        pattern = ((pattern + pattern.T) > 0).astype(np.float32).tocsr()
        directed = cue_scores(windows, owner, main, pattern, step)
        cue = directed.maximum(directed.T).tocsr()
    w, b, beta = params.lsa_weight, params.prf_weight, params.cue_weight
    block = min(params.block_rows, 128)  # pair_scores makes a block of rows dense (128 x terms float32)
    for start in stepped(range(0, len(rows), block), step):
        at = rows[start:start + block]
        members = neigh_idx[at]
        valid = members >= 0
        pair_rows, pair_cols = np.repeat(at, valid.sum(axis=1)), members[valid].astype(np.int64)
        if len(pair_rows) == 0:
            continue
        s = _dots(text_rows, at, pair_rows, pair_cols)
        if dense is not None:
            s = (1 - w) * s + w * np.einsum("ij,ij->i", dense[pair_rows], dense[pair_cols])
        if expanded is not None:
            s = (1 - b) * s + b * _dots(expanded, at, pair_rows, pair_cols)
        if cue is not None:
            s = s + beta * np.maximum(0, np.asarray(cue[pair_rows, pair_cols]).ravel() - s)
        if links is not None and params.mention_weight:
            linked = np.asarray(links[pair_rows, pair_cols]).ravel() > 0
            s[linked] += params.mention_weight * (1 - s[linked])
        scores = np.full(members.shape, -np.inf, dtype=np.float32)
        scores[valid] = s
        order = np.argsort(-scores, axis=1, kind="stable")
        out_idx[at] = np.where(np.take_along_axis(valid, order, axis=1), np.take_along_axis(members, order, axis=1), -1)
        out_score[at] = np.maximum(np.take_along_axis(scores, order, axis=1), 0)
    return out_idx, out_score


def _dots(matrix: sp.csr_matrix, at: np.ndarray, pair_rows: np.ndarray, pair_cols: np.ndarray) -> np.ndarray:
    """The dot products of the rows ``pair_rows`` (each among ``at``, sorted) with ``pair_cols``."""
    local = np.searchsorted(at, pair_rows)
    return pair_scores(matrix, 0, len(at), local, pair_cols, matrix[at].toarray().ravel(), chunk=1_000_000)
