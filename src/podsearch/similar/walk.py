"""The lists' last stage (docs/similar.md, nineteenth round): a short walk over the lists, and the episodes of its
show that a cue window names by topic.

- **The walk** (``walk_weight``): a random walk with restart from each episode over the graph of the lists (every
  episode's first ``walk_neighbours`` members, the edges weighed by their list scores, each row summing to 1),
  ``walk_steps`` steps of ``r <- (1 - walk_alpha) e_i + walk_alpha r P``; the walk's mass on each member of i's list,
  over its largest on any other episode, is mixed into the member's score: ``(1 - walk_weight) s + walk_weight r``.
  A member that the episode's other near episodes also hold near rises; one near on a word or two of its own falls.
- **Window links** (``window_weight``): each cue window (rerank.py: the words around "episode") is matched against
  every other episode of its show (the cosine with the episode's row); the best ``window_top`` at a cosine of at
  least ``window_floor`` are *named* by the window ("we have another episode that covered deepfakes in some
  detail"), and enter the episode's list, as a guest named there does (guests.py): ``s + window_weight (1 - s)``.
  One way: a look back names an episode; the episode named does not name it.

- **Reciprocal neighbours** (``reciprocal_weight``; off, twentieth round): the overlap of two episodes' expanded
  k-reciprocal sets (Zhong et al. 2017, re-identification's k-reciprocal reranking): an episode's reciprocal set is
  itself and the first ``reciprocal_neighbours`` of its list that hold it among their first as many; a member's own
  set at half that joins when two thirds of it are in the first; each member weighed ``exp(s - 1)`` (``s`` its list
  score, 0 when it is not in the list, 1 for the episode itself), the weights averaged over the episode and its
  first ``reciprocal_expand - 1`` members; the overlap is the weighted Jaccard of two such vectors. Mixed into each
  member's score, ``(1 - reciprocal_weight) s + reciprocal_weight x``, ``x`` 1 for an episode it names or is named by.

All are bounded by the lists: the walk reads a block of rows at a time (sparse, at most ``walk_neighbours ^
walk_steps`` entries a row), the windows one show at a time, the reciprocal sets are sparse (a row holds at most
``reciprocal_neighbours`` + 1 episodes before the expansion, the square of it after) and their overlaps are read for
the lists' members only, a block of rows at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from ..progress import no_step

BLOCK = 256  # rows of the walk made dense at a time (BLOCK x N float32: 100 MB at 100,000 episodes)
WINDOW_BLOCK = 512  # windows matched at a time against their show (WINDOW_BLOCK x the show's episodes, dense)


def list_graph(neigh_idx: np.ndarray, neigh_score: np.ndarray, k: int) -> sp.csr_matrix:
    """The row-normalised transition matrix of every list's first ``k`` members, weighed by their scores."""
    n = neigh_idx.shape[0]
    idx, score = neigh_idx[:, :k], np.maximum(neigh_score[:, :k], 0)
    keep = (idx >= 0) & (score > 0)
    rows = np.repeat(np.arange(n), keep.sum(axis=1))
    graph = sp.csr_matrix((score[keep].astype(np.float64), (rows, idx[keep])), shape=(n, n))
    sums = np.asarray(graph.sum(axis=1)).ravel()
    return (sp.diags(np.divide(1.0, sums, out=np.zeros_like(sums), where=sums > 0)) @ graph).tocsr()


def walk_at_members(graph: sp.csr_matrix, neigh_idx: np.ndarray, rows: Sequence[int], alpha: float,
                    steps: int, step: Callable[[], None] = no_step) -> np.ndarray:
    """For each of ``rows``, the walk's mass on each member of its list (``neigh_idx[row]``; 0 where none), over the
    walk's largest mass on any episode but the start (``step()`` before each block of rows: a fit's stop)."""
    n = graph.shape[0]
    rows = np.asarray(rows, dtype=np.int64)
    out = np.zeros((len(rows), neigh_idx.shape[1]), dtype=np.float32)
    for a in range(0, len(rows), BLOCK):
        step()
        at = rows[a:a + BLOCK]
        start = sp.csr_matrix((np.ones(len(at)), (np.arange(len(at)), at)), shape=(len(at), n))
        reached, total = start, (1 - alpha) * start
        for t in range(1, steps + 1):
            reached = reached @ graph
            total = total + ((1 - alpha) * alpha ** t if t < steps else alpha ** t) * reached
        dense = total.astype(np.float32).toarray()
        dense[np.arange(len(at)), at] = 0
        top = dense.max(axis=1, keepdims=True)
        dense = np.divide(dense, top, out=np.zeros_like(dense), where=top > 0)
        members = neigh_idx[at]
        out[a:a + len(at)] = np.where(members >= 0, np.take_along_axis(dense, np.maximum(members, 0), axis=1), 0)
    return out


def window_links(windows: sp.csr_matrix, owner: np.ndarray, matrix: sp.csr_matrix, shows: list[str], top: int,
                 floor: float, rows: Sequence[int] | None = None, step: Callable[[], None] = no_step) -> sp.csr_matrix:
    """N x N, (i, j) the best cosine of a cue window of i among the ``top`` best of that window over the other
    episodes of i's show, when at least ``floor`` (the windows of ``rows`` only, when given; ``step()`` before each
    show and each block of its windows: a fit's stop)."""
    n = matrix.shape[0]
    shows_arr = np.array(shows)
    wanted = np.ones(len(owner), dtype=bool) if rows is None else np.isin(owner, np.asarray(rows, dtype=np.int64))
    found: dict[tuple[int, int], float] = {}
    for show in np.unique(shows_arr[owner[wanted]]) if wanted.any() else []:
        step()
        members = np.flatnonzero(shows_arr == show)
        their = matrix[members].T.tocsc()
        m = min(top, len(members))
        mine_all = np.flatnonzero(wanted & (shows_arr[owner] == show))
        for a in range(0, len(mine_all), WINDOW_BLOCK):
            step()
            mine = mine_all[a:a + WINDOW_BLOCK]
            cos = (windows[mine] @ their).toarray()
            cos[members[None, :] == owner[mine][:, None]] = -1  # an episode's own windows do not name it
            best = np.argsort(-cos, axis=1, kind="stable")[:, :m]
            values = np.take_along_axis(cos, best, axis=1)
            for w, (cols, vals) in enumerate(zip(best, values)):
                i = int(owner[mine[w]])
                for c, v in zip(cols.tolist(), vals.tolist()):
                    if v >= floor and v > 0:
                        j = int(members[c])
                        found[(i, j)] = max(found.get((i, j), 0.0), v)
    if not found:
        return sp.csr_matrix((n, n), dtype=np.float32)
    (r, c), v = zip(*found.keys()), list(found.values())
    return sp.csr_matrix((np.array(v, dtype=np.float32), (np.array(r), np.array(c))), shape=(n, n))


def _firsts(neigh_idx: np.ndarray, k: int) -> sp.csr_matrix:
    """N x N, 1 at every episode itself and the first ``k`` members of its list."""
    n = neigh_idx.shape[0]
    idx = neigh_idx[:, :k]
    keep = idx >= 0
    rows = np.r_[np.arange(n), np.repeat(np.arange(n), keep.sum(axis=1))]
    cols = np.r_[np.arange(n), idx[keep]]
    return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, n))


def reciprocal_vectors(neigh_idx: np.ndarray, neigh_score: np.ndarray, k: int, expand: int) -> sp.csr_matrix:
    """Every episode's expanded k-reciprocal set as a weighed row (the module's docstring), averaged over the episode
    and its first ``expand - 1`` members."""
    n = neigh_idx.shape[0]
    first = _firsts(neigh_idx, k)
    reciprocal = first.multiply(first.T).tocsr()
    half_first = _firsts(neigh_idx, max(1, k // 2))
    half = half_first.multiply(half_first.T).tocsr()
    overlap = (reciprocal @ half.T).multiply(reciprocal).tocoo()  # (i, q in R(i)): |R(i) & H(q)|
    size = half.getnnz(axis=1)
    joins = overlap.data >= 2 / 3 * size[overlap.col]
    joined = sp.csr_matrix((np.ones(int(joins.sum()), dtype=np.float32), (overlap.row[joins], overlap.col[joins])),
                           shape=(n, n))
    members = (reciprocal + joined @ half).tocsr()
    members.data[:] = 1
    score = sp.csr_matrix((neigh_score[neigh_idx >= 0].astype(np.float32),
                           (np.repeat(np.arange(n), (neigh_idx >= 0).sum(axis=1)), neigh_idx[neigh_idx >= 0])),
                          shape=(n, n)) + sp.identity(n, dtype=np.float32, format="csr")
    listed = members.multiply(score).tocsr()  # the members' scores where the list holds them
    listed.data = (np.exp(listed.data - 1) - np.exp(-1)).astype(np.float32)
    weights = members * np.float32(np.exp(-1)) + listed
    near = _firsts(neigh_idx, max(0, expand - 1))
    near = sp.diags(1 / np.asarray(near.sum(axis=1)).ravel()).astype(np.float32) @ near
    return (near @ weights.tocsr()).tocsr()


def reciprocal_overlap(vectors: sp.csr_matrix, neigh_idx: np.ndarray, rows: Sequence[int],
                       step: Callable[[], None] = no_step) -> np.ndarray:
    """For each of ``rows``, the weighed Jaccard overlap of its :func:`reciprocal_vectors` row with each member's (0
    where none): the sum of the smaller weights over the sum of the larger (``step()`` before each block of rows)."""
    rows = np.asarray(rows, dtype=np.int64)
    k = neigh_idx.shape[1]
    totals = np.asarray(vectors.sum(axis=1)).ravel()
    out = np.zeros((len(rows), k), dtype=np.float32)
    for a in range(0, len(rows), BLOCK):
        step()
        at = rows[a:a + BLOCK]
        mine = vectors[at].toarray()
        members = neigh_idx[at]
        pair_row, pair_col = np.nonzero(members >= 0)
        theirs = vectors[members[pair_row, pair_col]]
        pair = np.repeat(np.arange(len(pair_row)), np.diff(theirs.indptr))
        smaller = np.minimum(mine[pair_row[pair], theirs.indices], theirs.data)
        shared = np.bincount(pair, weights=smaller, minlength=len(pair_row))
        union = totals[at][pair_row] + totals[members[pair_row, pair_col]] - shared
        out[a + pair_row, pair_col] = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
    return out
