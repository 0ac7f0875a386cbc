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

Both are bounded by the lists: the walk reads a block of rows at a time (sparse, at most ``walk_neighbours ^
walk_steps`` entries a row), the windows one show at a time.
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
