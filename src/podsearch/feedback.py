"""Relevance feedback from the "nearby episodes" model: a search's best matches vouch for episodes like them.

Words alone rank an episode that says "routing" two hundred times above a short talk that is about nothing
else. The similarity model (``podsearch.similar``) already knows which episodes are about the same things;
so after the engine has ranked by words, its top ``depth`` episodes are reordered by

    score + weight * top score * (mean similarity to the ``seeds`` best matches)

(each seed counts its likeness to itself, so the best matches keep their lead unless their neighbours
agree with each other). Measured on the podcast sets (docs/search.md): topical nDCG@10 0.865 -> 0.89-0.90 on
both halves, known items unchanged. Episodes the model does not know yet (added since its last fit) get no
vote; without a model (none fitted yet) the engine's order stands.

Before the vote, the same top episodes get a small share for their best passage: ``passage`` x top score x
(the episode's best transcript window of ``window`` words / the best of the top), the window's score being the
sum over the query's words of idf x saturated count in it (``Engine.passages``; the Whoosh engine reads the
index's positions). The graders call an episode relevant when a focused segment of several minutes is about the
subject; a whole-episode frequency cannot tell such a segment from the same words spread over an hour.
Measured (docs/search.md): topical nDCG@10 0.896 -> 0.901 on both halves, known items unchanged. The passages of
the top ``passage_depth`` (20) are read: the same figures as the top 30, two thirds of the reads, and the page's
moments need the same positions (kept: ``fast.doc_positions``). ``search_passages`` (0.1) sets ``passage``.

First of all, a word an episode says only in its reads (sponsor reads, intros, outros: runs said word for word in three
or more recordings, and sections announced as sponsored, which the model finds for its reasons: ``similar/runs.py``)
counts as not said: such an episode of the top ``depth`` loses the word's share of the query's idf from its score
(:func:`said_in_reads`). Talk Python's "brought to you by OpenTelemetry support at Sentry" put two episodes that
say "OpenTelemetry" nowhere else in the top 10 for ``distributed tracing opentelemetry`` (graded 0: "sponsor reads
= 0"). Measured (docs/search.md): topical nDCG@10 0.904 -> 0.906 (half B 0.910 -> 0.916), our topical 0.8111 -> 0.8115,
every other set unchanged.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .engines.base import EngineHit
from .similar.features import fold_lower

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Feedback:
    """``depth``: the engine's top episodes that are reordered; ``seeds``: the best matches whose likeness
    counts; ``weight``: how much it counts, relative to the top score (0 turns the vote off); ``window``: the
    words of the passage an episode is judged by; ``passage``: how much its best passage counts, relative to the
    top score (0 turns it off); ``passage_depth``: the top episodes whose passages are read (at most ``depth``);
    ``reads``: a word an episode says only in its reads counts as not said (:func:`said_in_reads`)."""

    depth: int = 30
    seeds: int = 3
    weight: float = 0.8
    window: int = 1100  # positions: words said, stop words too (schema 6); 800 before, without stop words (~1,340)
    passage: float = 0.1  # the search_passages setting; 0.1 measured best (docs/search.md)
    passage_depth: int = 20  # the same figures as 30 on the dev sets, two thirds of the reads
    reads: bool = True

    @property
    def votes(self) -> bool:
        return self.weight > 0 and self.seeds > 0

    @property
    def passages(self) -> bool:
        return self.passage > 0 and self.window > 0

    @property
    def passage_top(self) -> int:
        """How many of the top episodes are judged by their passages."""
        return min(self.passage_depth, self.depth)

    @property
    def on(self) -> bool:
        return self.depth > 1 and (self.votes or self.passages or self.reads)


FEEDBACK = Feedback()
TIE = 1e-6  # scores this close (relative to the larger) are a tie in a reordered top, broken by id
OFF = Feedback(weight=0.0, passage=0.0, reads=False)
# An episode that says fewer words than this only inside runs has no read: one sentence or title shared by three
# recordings (Vaswani's abstracts of one series share theirs: 136 of 11,429 say 1-10 words only in runs; of the site
# corpus's 1,869 episodes 343 say 16 or more, Talk Python's reads and outros 60-200). Two runs' worth (runs.RUN 8).
READ_WORDS = 16
_QUERY_WORDS = re.compile(r"\w+(?:['’]\w+)*")  # a plain query's words as the model's terms are (hyphens apart)


def affinity(model: Any, ids: list[str], seeds: list[str]) -> np.ndarray:
    """Each episode of ``ids``: its mean text similarity (the model's main rows and LSA, without mention links or
    the titles' cosine: with it both search sets measured lower, docs/search.md) to the ``seeds``;
    0 for an episode the model does not know."""
    out = np.zeros(len(ids))
    rows = [(i, model.position.get(e)) for i, e in enumerate(ids)]
    rows = [(i, p) for i, p in rows if p is not None]
    cols = [p for p in (model.position.get(e) for e in seeds) if p is not None]
    if not rows or not cols:
        return out
    at = [p for _, p in rows]
    sims = np.asarray((model.matrix[at] @ model.matrix[cols].T).todense(), dtype=np.float64)
    if model.dense is not None:
        w = model.params.lsa_weight
        sims = (1 - w) * sims + w * (model.dense[at] @ model.dense[cols].T)
    out[[i for i, _ in rows]] = sims.sum(axis=1) / len(seeds)
    return out


def rerank(hits: list[EngineHit], model: Any, feedback: Feedback = FEEDBACK) -> list[EngineHit]:
    """``hits`` (best first) with the top ``feedback.depth`` reordered; scores stay in order (a reordered hit's
    score is its combined score, never below its own)."""
    head, tail = hits[: feedback.depth], hits[feedback.depth:]
    if not feedback.votes or feedback.depth < 2 or len(head) < 2:
        return hits
    top = head[0].score or 1.0
    votes = affinity(model, [h.id for h in head], [h.id for h in head[: feedback.seeds]])
    return _reordered(head, tail, [feedback.weight * top * float(v) for v in votes])


def with_passages(hits: list[EngineHit], windows: list[float], feedback: Feedback = FEEDBACK) -> list[EngineHit]:
    """``hits`` (best first) with the top ``feedback.passage_depth`` reordered by their best passages (``windows``,
    one per hit of that top: ``Engine.passages``), added at ``feedback.passage`` x top score x window / best window."""
    depth = feedback.passage_top
    head, tail, windows = hits[:depth], hits[depth:], windows[:depth]
    best = max(windows, default=0.0)
    if not feedback.passages or depth < 2 or len(head) < 2 or best <= 0:
        return hits
    top = head[0].score or 1.0
    return _reordered(head, tail, [feedback.passage * top * w / best for w in windows])


def _reordered(head: list[EngineHit], tail: list[EngineHit], shares: list[float]) -> list[EngineHit]:
    """``head`` with each hit's share added to its score and sorted again, then ``tail`` as it was."""
    scored = sorted((replace(h, score=h.score + share) for h, share in zip(head, shares)), key=lambda h: -h.score)
    # ties (within a millionth of the score: two copies of one talk score alike but for the last bits of a sum) by id,
    # the same in every build: in the engine's order they fell as the index build had numbered them, and a rebuild
    # could swap a quote's episode with its copy (our known item K310 went from first to second). Rounded to six
    # places, 39.768195 and 39.768194 were no tie, and a fresh build of the site corpus swapped them again.
    out: list[EngineHit] = []
    start = 0
    while start < len(scored):
        end = start + 1
        while end < len(scored) and scored[start].score - scored[end].score <= TIE * max(abs(scored[start].score), 1.0):
            end += 1
        out += sorted(scored[start:end], key=lambda h: h.id)
        start = end
    return out + tail


def said_in_reads(hits: list[EngineHit], model: Any, text: str, feedback: Feedback = FEEDBACK) -> list[EngineHit]:
    """``hits`` (best first) with each of the top ``feedback.depth`` that says a word of ``text`` (a plain query) only
    inside its reads (the model's ``in_runs``: sponsor reads, intros, outros; at least :data:`READ_WORDS` words of
    them) losing that word's share of the query's idf (the model's) from its score. A word the model does not know
    counts in no share; a plural or singular said outside the reads (``model`` and ``models``) is the word said."""
    runs = getattr(model, "in_runs", None)  # (None from a model saved before the runs)
    idf = getattr(getattr(model.weighting, "transformer", None), "idf_", None)
    if not feedback.reads or runs is None or idf is None or len(hits) < 2:
        return hits
    vocabulary = model.vectorizer.vocabulary_
    terms = {vocabulary[w] for w in _QUERY_WORDS.findall(fold_lower(text)) if w in vocabulary}
    total = sum(float(idf[t]) for t in terms)
    if not terms or total <= 0:
        return hits
    head, tail = hits[: feedback.depth], hits[feedback.depth:]
    shares = [0.0] * len(head)
    for n, h in enumerate(head):
        row = model.position.get(h.id)
        if row is None or not 0 <= row < runs.shape[0] or runs.indptr[row + 1] - runs.indptr[row] < READ_WORDS:
            continue
        in_reads = set(runs.indices[runs.indptr[row]:runs.indptr[row + 1]].tolist())
        lost = sum(float(idf[t]) for t in in_reads & terms if not _said_as_kin(model, row, str(model.terms[t]), in_reads))
        shares[n] = -h.score * lost / total
    return _reordered(head, tail, shares) if any(shares) else hits


def _said_as_kin(model: Any, row: int, word: str, in_reads: set[int]) -> bool:
    """Whether episode ``row`` says ``word``'s plural or singular outside its reads."""
    vocabulary = model.vectorizer.vocabulary_
    said = model.matrix.indices[model.matrix.indptr[row]:model.matrix.indptr[row + 1]]
    for kin in (word + "s", word + "es", word[:-1] if word.endswith("s") else "", word[:-2] if word.endswith("es") else ""):
        t = vocabulary.get(kin)
        if t is not None and t not in in_reads and t in said:
            return True
    return False
