"""Evaluation of "nearby episodes": labelled related pairs and topic tags in, recall/MRR/P@5 out.

Inputs (the ones of ``../shared/corpus/eval``):

- related pairs, ``source_guid<TAB>target_guid`` with a header row: an editor linked the target from the
  source's show notes. Per pair: is the target in the source's top 10 (recall@10), and 1/rank (MRR@10).
- topic tags, ``guid<TAB>tag,tag,...`` with a header row. Per labelled episode: the share of its top 5
  neighbours that share at least one tag with it (P@5), averaged over the labelled episodes.

Unlabelled episodes are *unknown*, not wrong, so the main P@5 ranks only labelled episodes (the
"condensed list" convention for incomplete judgments): each system's ranking is restricted to the
labelled episodes before its top 5 is taken. ``p5_all`` is also reported, where unlabelled neighbours in
the unrestricted top 5 count as misses; it is lower for every system and orders them the same way.

Every system is measured in the same run on the same labels: our model, the neighbours by date or episode
number within the show (what podcast sites show today), Whoosh's ``more_like`` on the transcript, plain
scikit-learn ``TfidfVectorizer`` (defaults, and with ``sublinear_tf``) and random episodes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..catalog import Catalog
from ..errors import PodsearchError

log = logging.getLogger(__name__)

# A system: (episode id, depth, allowed candidates or None) -> ids, best first, never the episode itself.
Ranker = Callable[[str, int, "set[str] | None"], list[str]]
BASELINES = ("by_date", "whoosh_more_like", "tfidf_default", "tfidf_sublinear", "random")


class SimilarEvalError(PodsearchError):
    """An evaluation input is missing or malformed, or the data folder cannot be evaluated."""


# -- labels ---------------------------------------------------------------------------------------
def _rows(path: Path | str, columns: int) -> Iterable[tuple[int, list[str]]]:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SimilarEvalError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    for n, line in enumerate(lines, 1):
        if not line.strip() or n == 1 and line.lower().startswith(("source_guid", "guid")):
            continue
        parts = line.rstrip("\n").split("\t")
        if len(parts) != columns or not all(p.strip() for p in parts):
            raise SimilarEvalError(f"{path}:{n}: expected {columns} tab-separated columns.")
        yield n, [p.strip() for p in parts]


def read_pairs(path: Path | str) -> list[tuple[str, str]]:
    return [(a, b) for _, (a, b) in _rows(path, 2)]


def read_tags(path: Path | str) -> dict[str, set[str]]:
    """{episode: its tags}; a tag is compared without its case (the dev labels spell one tag ``P2P`` once and
    ``p2p`` six times)."""
    return {guid: {t.strip().casefold() for t in tags.split(",") if t.strip()} for _, (guid, tags) in _rows(path, 2)}


# -- metrics --------------------------------------------------------------------------------------
def pair_metrics(rank: Ranker, pairs: list[tuple[str, str]], known: set[str], k: int = 10) -> dict[str, Any]:
    """recall@k and MRR@k over the pairs whose two episodes exist."""
    usable = [(s, t) for s, t in pairs if s in known and t in known and s != t]
    cache: dict[str, list[str]] = {}
    hits, rr = 0, 0.0
    for source, target in usable:
        if source not in cache:
            cache[source] = rank(source, k, None)[:k]
        top = cache[source]
        if target in top:
            hits += 1
            rr += 1.0 / (top.index(target) + 1)
    n = len(usable)
    return {f"recall@{k}": round(hits / n, 4) if n else 0.0, f"mrr@{k}": round(rr / n, 4) if n else 0.0,
            "pairs": n, "pairs_skipped": len(pairs) - n}


def tag_metrics(rank: Ranker, tags: dict[str, set[str]], known: set[str], k: int = 5) -> dict[str, Any]:
    """P@k among labelled episodes (main figure) and P@k with unlabelled neighbours counted as misses."""
    labelled = {g: t for g, t in tags.items() if g in known and t}
    candidates = set(labelled)
    among, over_all = [], []
    for guid, mine in labelled.items():
        top = rank(guid, k, candidates)[:k]
        among.append(sum(1 for o in top if labelled[o] & mine) / k)
        top_all = rank(guid, k, None)[:k]
        over_all.append(sum(1 for o in top_all if labelled.get(o, set()) & mine) / k)
    n = len(labelled)
    return {f"p@{k}": round(float(np.mean(among)), 4) if n else 0.0,
            f"p@{k}_all": round(float(np.mean(over_all)), 4) if n else 0.0,
            "episodes": n, "episodes_skipped": len(tags) - n}


def reason_metrics(model: Any, k: int = 10) -> dict[str, Any]:
    """What the reasons shown with every episode's top ``k`` are: how many, and the share that are general
    words (one of the language's most common words on its own, ``similar.reasons.is_general``)."""
    from ..similar.reasons import is_general

    shown = general = neighbours = empty = 0
    for episode_id in model.ids:
        for item in model.similar(episode_id, k)[0]:
            neighbours += 1
            empty += not item.reasons
            shown += len(item.reasons)
            general += sum(1 for r in item.reasons if is_general(r))
    return {"reasons_shown": shown, "reasons_per_neighbour": round(shown / max(neighbours, 1), 2),
            "neighbours_without_reasons": round(empty / max(neighbours, 1), 4),
            "reasons_general_share": round(general / max(shown, 1), 4)}


# -- systems --------------------------------------------------------------------------------------
def _top(scores: np.ndarray, ids: list[str], self_pos: int, depth: int, allowed: np.ndarray | None) -> list[str]:
    scores = scores.astype(np.float64, copy=True)
    scores[self_pos] = -np.inf
    if allowed is not None:
        scores[~allowed] = -np.inf
    depth = min(depth, int(np.isfinite(scores).sum()))
    if depth <= 0:
        return []
    part = np.argpartition(-scores, depth - 1)[:depth]
    order = part[np.lexsort((part, -scores[part]))]  # ties by position: deterministic
    return [ids[j] for j in order]


class MatrixRanker:
    """Cosine neighbours over L2-normalised rows of a sparse (or dense) matrix."""

    def __init__(self, matrix: Any, ids: list[str], drop_at: float | None = None) -> None:
        self.matrix = matrix
        self.ids = ids
        self.position = {e: i for i, e in enumerate(ids)}
        self.drop_at = drop_at  # near-duplicates at or above this score are flagged, not recommended

    def scores(self, i: int) -> np.ndarray:
        row = self.matrix[i]
        out = self.matrix @ row.T
        return np.asarray(out.toarray() if sp.issparse(out) else out).ravel()

    def text_scores(self, i: int, scores: np.ndarray) -> np.ndarray:
        """The scores that decide near-duplicates (the text alone)."""
        return scores

    def __call__(self, episode_id: str, depth: int, candidates: set[str] | None) -> list[str]:
        i = self.position[episode_id]
        scores = self.scores(i)
        allowed = None
        if candidates is not None:
            allowed = np.zeros(len(self.ids), dtype=bool)
            allowed[[self.position[c] for c in candidates if c in self.position]] = True
        if self.drop_at is not None:
            text_scores = self.text_scores(i, scores)
            allowed = (allowed if allowed is not None else np.ones(len(self.ids), dtype=bool)) & (text_scores < self.drop_at)
        return _top(scores, self.ids, i, depth, allowed)


class ModelRanker(MatrixRanker):
    def __init__(self, model: Any) -> None:
        super().__init__(model.matrix, model.ids, drop_at=model.params.duplicate_threshold)
        self.model = model

    def scores(self, i: int) -> np.ndarray:
        return self.model.scores(i)

    def text_scores(self, i: int, scores: np.ndarray) -> np.ndarray:
        return self.model.scores(i, mentions=False)


def ours(model: Any) -> Ranker:
    """Our model, ranked as it serves: near-duplicates left out, exactly as ``/similar/<id>`` does."""
    return ModelRanker(model)


def by_date(catalog: Catalog) -> Ranker:
    """Neighbours in the show's own order (date, then season and episode number): nearest first, newer on ties."""
    per_show: dict[str, list[tuple[Any, ...]]] = {}
    for ep in catalog.episodes():
        per_show.setdefault(ep.show_id, []).append((ep.published or "", ep.season or 0, ep.number or 0, ep.id))
    order: dict[str, list[str]] = {}
    where: dict[str, tuple[str, int]] = {}
    for show, rows in per_show.items():
        order[show] = [r[3] for r in sorted(rows)]
        for pos, episode_id in enumerate(order[show]):
            where[episode_id] = (show, pos)

    def rank(episode_id: str, depth: int, candidates: set[str] | None) -> list[str]:
        show, pos = where[episode_id]
        seq = order[show]
        out = []
        for step in range(1, len(seq)):
            for j in (pos + step, pos - step):
                if 0 <= j < len(seq) and (candidates is None or seq[j] in candidates):
                    out.append(seq[j])
            if len(out) >= depth:
                break
        return out[:depth]

    return rank


def whoosh_more_like(data_dir: Path, catalog: Catalog) -> Ranker:
    """Whoosh's ``more_like`` over the transcript field of the real search index."""
    from ..engines import open_engine

    index = open_engine(data_dir)
    total = len(catalog.hashes())

    def rank(episode_id: str, depth: int, candidates: set[str] | None) -> list[str]:
        text = " ".join(s.text for s in catalog.segments(episode_id))
        hits = index.more_like(episode_id, text, k=total if candidates is not None else depth)
        out = [h for h, _ in hits if h != episode_id and (candidates is None or h in candidates)]
        return out[:depth]

    return rank


def plain_tfidf(ids: list[str], texts: list[str], **options: Any) -> Ranker:
    """scikit-learn ``TfidfVectorizer`` over title + notes + transcript, with the given options only."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return MatrixRanker(TfidfVectorizer(**options).fit_transform(texts).tocsr(), ids)


def random_neighbours(ids: list[str], seed: int = 0) -> Ranker:
    def rank(episode_id: str, depth: int, candidates: set[str] | None) -> list[str]:
        rng = np.random.default_rng([seed, sum(episode_id.encode())])
        pool = [e for e in ids if e != episode_id and (candidates is None or e in candidates)]
        return [pool[j] for j in rng.permutation(len(pool))[:depth]]

    return rank


# -- the run --------------------------------------------------------------------------------------
@dataclass
class Result:
    systems: dict[str, dict[str, Any]] = field(default_factory=dict)
    episodes: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"episodes": self.episodes, "model_params": self.params, "systems": self.systems}

    def beats_baselines(self, name: str = "ours") -> dict[str, bool]:
        """For each metric, whether ``name`` is strictly above every other system."""
        mine = self.systems[name]
        out = {}
        for metric in ("recall@10", "mrr@10", "p@5"):
            if metric in mine:
                out[metric] = all(mine[metric] > other[metric] for sys_name, other in self.systems.items()
                                  if sys_name != name and metric in other)
        return out


def evaluate(data_dir: Path | str, pairs: list[tuple[str, str]] | None = None, tags: dict[str, set[str]] | None = None,
             baselines: Iterable[str] = BASELINES, params: Any = None, model: Any = None,
             progress: Callable[[str], None] | None = None) -> Result:
    """Fit our model on the catalog of ``data_dir`` (unless ``model`` is given) and score it and the baselines."""
    from ..similar import ModelParams, SimilarModel, episode_texts

    data_dir = Path(data_dir)
    if not (data_dir / Catalog.FILENAME).exists():
        raise SimilarEvalError(f"No catalog in {data_dir}. Run 'podsearch --data {data_dir} reindex' first.")
    baselines = list(baselines)
    unknown = set(baselines) - set(BASELINES)
    if unknown:
        raise SimilarEvalError(f"Unknown baseline(s): {', '.join(sorted(unknown))}. Choose from {', '.join(BASELINES)}.")
    catalog = Catalog.in_dir(data_dir)
    try:
        fields = episode_texts(catalog)
        ids = fields[0]
        known = set(ids)
        systems: dict[str, Ranker] = {}
        started = time.perf_counter()
        if model is None:
            model = SimilarModel.fit_fields(fields, params or ModelParams())
        result = Result(episodes=len(ids), params=model.params.to_dict())
        fit_seconds = time.perf_counter() - started
        systems["ours"] = ours(model)
        texts = [f"{t} {d} {x}" for t, d, x in zip(fields[2], fields[3], fields[4])]
        builders: dict[str, Callable[[], Ranker]] = {
            "by_date": lambda: by_date(catalog),
            "whoosh_more_like": lambda: whoosh_more_like(data_dir, catalog),
            "tfidf_default": lambda: plain_tfidf(ids, texts),
            "tfidf_sublinear": lambda: plain_tfidf(ids, texts, sublinear_tf=True),
            "random": lambda: random_neighbours(ids),
        }
        for name in baselines:
            systems[name] = builders[name]()
        for name, rank in systems.items():
            t0 = time.perf_counter()
            figures: dict[str, Any] = {}
            if pairs is not None:
                figures.update(pair_metrics(rank, pairs, known))
            if tags is not None:
                figures.update(tag_metrics(rank, tags, known))
            figures["seconds"] = round(time.perf_counter() - t0 + (fit_seconds if name == "ours" else 0.0), 2)
            if name == "ours":
                figures.update(reason_metrics(model))
            result.systems[name] = figures
            if progress:
                progress(name)
        return result
    finally:
        catalog.close()
