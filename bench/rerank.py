"""Second-round reranking variants on the podcast sets (issue 15), each judged by two-fold cross-validation.

    python -m bench.rerank --into /tmp/eval-data [--out FILE]

The chosen ranking (BM25F, then the model's feedback: ``podsearch.feedback``) is run once per query with the
feedback off, 100 deep; every variant below reorders that same first pass, so a family's whole grid runs in
seconds. ``--into`` is ``podsearch eval search --into``'s folder (its ``site`` data, built on first use).
Families (docs/search.md, "Ranking", has the figures):

- ``seeds``: the feedback's seeds weighted equally (the chosen), by first-pass score or by 1/rank; 1-8 seeds;
  weight 0.4-1.2. ``diverse``: the seeds taken from different shows.
- ``lsa``: the feedback's similarity with more or less of the model's LSA part (the model's own mix is 0.1).
- ``rm3``: pseudo-relevance feedback on the query (RM3-style): the m heaviest terms of the top k episodes
  (their TF-IDF rows in the model, weighted by first-pass score; each term analysed as the index does), a
  second BM25F pass (``fast.evaluate`` of a weighted OR of ``FieldsTerm`` s, the engine's scoring) either
  mixed with the query's own words at ``lam`` (replace) or added to the first-pass score at ``beta`` (interp);
  over the top 30 (rerank) or the whole index (full); then the chosen feedback.
- ``passage``: the best transcript window of W words per episode (idf-weighted, saturated counts of the query
  words in it) added to the top 30's scores at ``gamma`` x the top score, before the feedback; the words from
  the catalog's transcript (``passage``) or from the index's positions (``passage, index``: ``Engine.passages``,
  the step the search now takes with window 800 and gamma 0.1).
- ``candidates``: the top 30 widened by the seeds' model neighbours or by the any-word ranking's top, when they
  hold a query word (scored by the any-word BM25F times ``disc``).

Each family is scored on all topical queries and on halves A / B (nDCG@10, unjudged = 0), known items
(MRR@10), and cross-validated: its best setting on half A measured on half B and the reverse (the chosen
ranking is in every grid, so "no better than chosen" is a possible answer). SQLite FTS5 comes from the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from podsearch.engines.base import EngineHit
from podsearch.evaluation.podcast import fts5_for, halves, mrr_at, read_known_items, site_data
from podsearch.evaluation.search import ndcg_at, read_qrels, read_queries
from podsearch.feedback import FEEDBACK, OFF, rerank

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
Hits = list[tuple[str, float]]
Reranker = Callable[[Hits, str], list[str]]


# -- pure parts (tested in tests/test_bench_rerank.py) ------------------------------------------------------
def best_window(tokens: np.ndarray, words: list[str], idf: dict[str, float], width: int, k1: float = 1.2) -> float:
    """The best ``width``-token window of ``tokens``: the sum over ``words`` of idf x saturated count in it."""
    if not len(tokens) or not words:
        return 0.0
    total: np.ndarray | None = None
    for w in words:
        counts = np.concatenate([[0.0], np.cumsum(tokens == w, dtype=np.float64)])
        win = counts[width:] - counts[:-width] if len(tokens) > width else counts[-1:]
        part = idf.get(w, 0.0) * win * (k1 + 1) / (win + k1)
        total = part if total is None else total + part
    return float(total.max()) if total is not None else 0.0


def seed_weights(scores: list[float], how: str) -> np.ndarray:
    """Weights of the seeds (first-pass scores, best first), summing to their count: equal, by score, by 1/rank."""
    n = len(scores)
    if how == "score":
        w = np.asarray(scores, dtype=np.float64) / (scores[0] or 1.0)
    elif how == "rank":
        w = 1.0 / np.arange(1, n + 1)
    else:
        w = np.ones(n)
    return w / w.sum() * n


def cross_validate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Two folds over the rows of one family (``params``, ``A``, ``B``, ``known``): the best setting on each half
    (ties: the better known-item MRR, then the earlier row) measured on the other."""
    on_a = max(rows, key=lambda r: (r["A"], r["known"], -rows.index(r)))
    on_b = max(rows, key=lambda r: (r["B"], r["known"], -rows.index(r)))
    return {"tuned_on_A": on_a["params"], "B_of_it": on_a["B"], "tuned_on_B": on_b["params"], "A_of_it": on_b["A"],
            "mean": (on_a["B"] + on_b["A"]) / 2}


# -- the site, its first pass and the model -----------------------------------------------------------------
@dataclass
class Site:
    """The built site of the evaluation, its first pass (the chosen ranking, feedback off) and what the
    variants read: the similarity model, the engine's searcher and analyzer, transcripts as index terms."""

    folder: Path
    library: Any = None
    model: Any = None
    searcher: Any = None
    analyzer: Any = None
    doc_ids: list[str] = field(default_factory=list)
    docnum: dict[str, int] = field(default_factory=dict)
    _stems: dict[str, str | None] = field(default_factory=dict)
    _tokens: dict[str, np.ndarray] = field(default_factory=dict)
    _idf: dict[str, float] = field(default_factory=dict)
    _any: dict[str, np.ndarray] = field(default_factory=dict)

    def open(self) -> Site:
        from podsearch.engines.whoosh.scoring import weighting
        from podsearch.service import Library

        self.library = Library(self.folder, search_deadline=0)
        self.library.feedback = OFF
        self.model = self.library.model()
        engine = self.library.engine
        self.searcher = engine._searcher(weighting(engine.ranking))
        self.analyzer = engine.analyzer("en")
        n = self.searcher.reader().doc_count_all()
        self.doc_ids = [self.searcher.stored_fields(d)["id"] for d in range(n)]
        self.docnum = {e: i for i, e in enumerate(self.doc_ids)}
        return self

    def close(self) -> None:
        self.searcher.close()
        self.library.close()

    def first_pass(self, text: str, depth: int = 100) -> Hits:
        from podsearch.errors import QueryError
        from podsearch.requests import SearchRequest

        try:
            found = self.library.ranked(SearchRequest(q=text, per_page=depth))
        except QueryError:
            return []
        return [(h.id, h.score) for h in found.hits]

    # the engine's terms and scores
    def stem(self, word: str) -> str | None:
        if word not in self._stems:
            t = self.analyzer.texts(word)
            self._stems[word] = t[0] if len(t) == 1 else None
        return self._stems[word]

    def words(self, text: str) -> list[str]:
        return list(dict.fromkeys(self.analyzer.texts(text)))

    def idf(self, term: str) -> float:
        if term not in self._idf:
            ranking = self.library.engine.ranking
            df = max(self.searcher.doc_frequency(f, term) for f in ranking.fields)
            n = len(self.doc_ids)
            self._idf[term] = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return self._idf[term]

    def bm25f(self, weighted: list[tuple[str, float]]) -> np.ndarray:
        """The engine's BM25F of a weighted OR of terms, for every document (fast.py's evaluation)."""
        from whoosh.query import Or

        from podsearch.engines.whoosh import fast
        from podsearch.engines.whoosh.bm25f import FieldsTerm

        r = self.library.engine.ranking
        if not weighted:
            return np.zeros(len(self.doc_ids))
        q = Or([FieldsTerm(t, r.boosts, r.field_b(), r.k1, boost=w) for t, w in weighted])
        return fast.evaluate(q, self.searcher)[0]

    def any_word(self, text: str) -> np.ndarray:
        if text not in self._any:
            self._any[text] = self.bm25f([(t, 1.0) for t in self.words(text)])
        return self._any[text]

    def tokens(self, episode_id: str) -> np.ndarray:
        """The transcript as index terms (words lower-cased and analysed one by one, as a window needs)."""
        if episode_id not in self._tokens:
            from podsearch.catalog import Catalog

            with Catalog.in_dir(self.folder) as catalog:
                ep = catalog.episode(episode_id)
            words = re.findall(r"\w+", ((ep.transcript_text if ep else "") or "").lower())
            self._tokens[episode_id] = np.array([self.stem(w) or "" for w in words], dtype=object)
        return self._tokens[episode_id]

    # the model's similarity
    def similarity(self, ids: list[str], seeds: list[str], lsa: float | None = None) -> np.ndarray:
        """ids x seeds: the model's text similarity (its own LSA mix, or ``lsa``); 0 for an unknown episode."""
        m = self.model
        out = np.zeros((len(ids), len(seeds)))
        rows = [(i, m.position.get(e)) for i, e in enumerate(ids)]
        cols = [(j, m.position.get(e)) for j, e in enumerate(seeds)]
        rows = [(i, p) for i, p in rows if p is not None]
        cols = [(j, p) for j, p in cols if p is not None]
        if not rows or not cols:
            return out
        at, cp = [p for _, p in rows], [p for _, p in cols]
        sims = np.asarray((m.matrix[at] @ m.matrix[cp].T).todense(), dtype=np.float64)
        w = m.params.lsa_weight if lsa is None else lsa
        if m.dense is not None and w:
            sims = (1 - w) * sims + w * (m.dense[at] @ m.dense[cp].T)
        out[np.ix_([i for i, _ in rows], [j for j, _ in cols])] = sims
        return out


# -- the variants --------------------------------------------------------------------------------------------
def chosen(hits: Hits, _text: str, site: Site) -> list[str]:
    """The first round's choice: the model's vote (``podsearch.feedback.rerank``) on the first pass, no passages
    (the ``passage, index`` family is the passage step the product now takes: ``Engine.passages``)."""
    return [h.id for h in rerank([EngineHit(e, s) for e, s in hits], site.model, FEEDBACK)]


def feedback(site: Site, hits: Hits, seeds: int = 3, weight: float = 0.8, how: str = "equal", diverse: bool = False,
             lsa: float | None = None, extra: Hits = (), depth: int = 30) -> list[str]:
    """The feedback generalised: seed weighting, seeds from different shows, the LSA mix, added candidates."""
    head, tail = list(hits[:depth]), hits[depth:]
    if len(head) < 2:
        return [e for e, _ in hits]
    picked = head[:seeds]
    if diverse:
        shows: set[Any] = set()
        picked = []
        for e, s in head:
            p = site.model.position.get(e)
            show = site.model.shows[p] if p is not None else e
            if show not in shows:
                shows.add(show)
                picked.append((e, s))
            if len(picked) == seeds:
                break
    cand = head + [x for x in extra if x[0] not in {e for e, _ in head}]
    w = seed_weights([s for _, s in picked], how)
    votes = site.similarity([e for e, _ in cand], [e for e, _ in picked], lsa) @ w / len(picked)
    top = head[0][1] or 1.0
    order = sorted(range(len(cand)), key=lambda i: (-(cand[i][1] + weight * top * votes[i]), i))
    ranked = [cand[i][0] for i in order]
    seen = set(ranked)
    return ranked + [e for e, _ in tail if e not in seen]


def expansion(site: Site, hits: Hits, k: int, m: int) -> dict[str, float]:
    """RM3's relevance model, from the model's TF-IDF rows of the top ``k``, weighted by first-pass score: the
    ``m`` heaviest index terms, weights summing to 1."""
    top = hits[0][1] or 1.0
    rows = [(site.model.position.get(e), s / top) for e, s in hits[:k]]
    rows = [(p, w) for p, w in rows if p is not None]
    if not rows:
        return {}
    v = np.asarray(site.model.matrix[[p for p, _ in rows]].T @ np.array([w for _, w in rows])).ravel()
    out: dict[str, float] = {}
    for i in np.argsort(-v)[: 2 * m]:
        t = site.stem(site.model.terms[i])
        if t is None or v[i] <= 0:
            continue
        out[t] = out.get(t, 0.0) + float(v[i])
        if len(out) >= m:
            break
    z = sum(out.values()) or 1.0
    return {t: w / z for t, w in out.items()}


def rm3(site: Site, hits: Hits, text: str, k: int = 5, m: int = 20, lam: float = 0.6, beta: float = 0.0,
        full: bool = False, then_feedback: bool = True) -> list[str]:
    """RM3: with ``beta`` 0 the query becomes ``lam`` x its words + (1 - lam) x the expansion (replace); else the
    expansion's BM25F (scaled to the top score) is added at ``beta`` (interp). Over the top 30 or the index."""
    if len(hits) < 2:
        return [e for e, _ in hits]
    exp = expansion(site, hits, k, m)
    if beta:
        scores = site.bm25f(list(exp.items()))
        head = hits[:30]
        e = np.array([scores[site.docnum[h]] for h, _ in head])
        e = e / (e.max() or 1.0)
        top = head[0][1]
        ranked: Hits = sorted([(h, s + beta * top * x) for (h, s), x in zip(head, e)], key=lambda x: -x[1])
        ranked += hits[30:]
    else:
        words = site.words(text)
        weights = {t: lam / len(words) for t in words} if words else {}
        for t, x in exp.items():
            weights[t] = weights.get(t, 0.0) + (1 - lam) * x
        scores = site.bm25f(list(weights.items()))
        if full:
            order = np.argsort(-scores)[:100]
            ranked = [(site.doc_ids[i], float(scores[i])) for i in order if scores[i] > 0]
        else:
            ranked = sorted([(h, float(scores[site.docnum[h]])) for h, _ in hits[:30]], key=lambda x: -x[1])
            ranked += hits[30:]
    return feedback(site, ranked) if then_feedback else [e for e, _ in ranked]


def passage(site: Site, hits: Hits, text: str, width: int = 800, gamma: float = 0.2, index: bool = False) -> list[str]:
    """The best ``width``-word transcript window per episode of the top 30, at ``gamma`` x the top score, then
    the chosen feedback. Words from the catalog's transcript analysed one by one, or with ``index`` the index's
    positions (``Engine.passages``, what the search now does)."""
    if len(hits) < 2 or not gamma:
        return feedback(site, hits)
    words = site.words(text)
    idf = {w: site.idf(w) for w in words}
    head = hits[:30]
    if index:
        p = np.array(site.library.engine.passages([e for e, _ in head], words, width))
    else:
        p = np.array([best_window(site.tokens(e), words, idf, width) for e, _ in head])
    p = p / (p.max() or 1.0)
    top = head[0][1]
    ranked = sorted([(e, s + gamma * top * x) for (e, s), x in zip(head, p)], key=lambda x: -x[1]) + hits[30:]
    return feedback(site, ranked)


def candidates(site: Site, hits: Hits, text: str, neighbours: int = 0, any_top: int = 0, disc: float = 1.0) -> list[str]:
    """The feedback over the top 30 widened by the seeds' model neighbours or the any-word ranking's top."""
    if len(hits) < 2:
        return [e for e, _ in hits]
    scores = site.any_word(text)
    extra: Hits = []
    if neighbours:
        for e, _ in hits[:3]:
            p = site.model.position.get(e)
            for j in (site.model.neigh_idx[p][:neighbours] if p is not None else []):
                d = site.docnum.get(site.model.ids[j])
                if d is not None and scores[d] > 0:
                    extra.append((site.doc_ids[d], disc * float(scores[d])))
    if any_top:
        extra += [(site.doc_ids[i], disc * float(scores[i])) for i in np.argsort(-scores)[:any_top] if scores[i] > 0]
    return feedback(site, hits, extra=extra)


def families(site: Site) -> dict[str, list[tuple[str, Reranker]]]:
    """Every family's grid (the chosen setting first)."""
    fam: dict[str, list[tuple[str, Reranker]]] = {}
    fam["seeds"] = [("chosen", lambda h, t: chosen(h, t, site))]
    fam["seeds"] += [(f"{how} seeds {n} weight {w}", lambda h, t, n=n, w=w, how=how: feedback(site, h, n, w, how))
                     for how in ("equal", "score", "rank") for n in (1, 3, 5, 8) for w in (0.4, 0.8, 1.2)
                     if (how, n, w) != ("equal", 3, 0.8)]
    fam["seeds"] += [(f"diverse seeds {n} weight {w}", lambda h, t, n=n, w=w: feedback(site, h, n, w, diverse=True))
                     for n in (3, 5) for w in (0.8, 1.2)]
    fam["lsa"] = [(f"lsa {x} weight {w}", lambda h, t, x=x, w=w: feedback(site, h, weight=w, lsa=x))
                  for x in (0.1, 0.0, 0.2, 0.3, 0.5) for w in (0.8, 0.6, 1.0)]
    fam["rm3"] = [("chosen", lambda h, t: chosen(h, t, site))]
    fam["rm3"] += [(f"replace k {k} m {m} lam {lam}{' full' if full else ''}{'' if fb else ' no feedback'}",
                    lambda h, t, k=k, m=m, lam=lam, full=full, fb=fb: rm3(site, h, t, k, m, lam, full=full,
                                                                          then_feedback=fb))
                   for full in (False, True) for fb in (True, False)
                   for k, m, lam in ((5, 20, 0.6), (10, 20, 0.6), (5, 10, 0.5), (5, 30, 0.7), (10, 30, 0.5))]
    fam["rm3"] += [(f"interp k {k} m {m} beta {b}", lambda h, t, k=k, m=m, b=b: rm3(site, h, t, k, m, beta=b))
                   for k in (3, 5, 10) for m in (10, 30) for b in (0.2, 0.5, 1.0)]
    fam["passage"] = [("chosen", lambda h, t: chosen(h, t, site))]
    fam["passage"] += [(f"window {w} gamma {g}", lambda h, t, w=w, g=g: passage(site, h, t, w, g))
                       for w in (200, 400, 600, 800, 1200, 2400) for g in (0.1, 0.2, 0.3)]
    fam["passage, index"] = [("chosen", lambda h, t: chosen(h, t, site))]
    fam["passage, index"] += [(f"window {w} gamma {g}", lambda h, t, w=w, g=g: passage(site, h, t, w, g, True))
                              for w in (400, 600, 800, 1200, 2400) for g in (0.05, 0.1, 0.15, 0.2)]
    fam["candidates"] = [("chosen", lambda h, t: chosen(h, t, site))]
    fam["candidates"] += [(f"neighbours {n} disc {d}", lambda h, t, n=n, d=d: candidates(site, h, t, n, disc=d))
                          for n in (10, 20, 50) for d in (1.0, 0.7)]
    fam["candidates"] += [(f"any-word top {n}", lambda h, t, n=n: candidates(site, h, t, any_top=n)) for n in (50, 100)]
    return fam


# -- the run ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.rerank", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--into", type=Path, required=True, help="the evaluation's data folder (built on first use)")
    ap.add_argument("--only", default="", help="families separated by | (default: all)")
    ap.add_argument("--out", type=Path, default=None, help="write every figure here as JSON")
    args = ap.parse_args(argv)
    evals = args.corpus / "eval"
    items = read_known_items(evals / "known_items.dev.tsv")
    topical = read_queries(evals / "topical_queries.dev.tsv")
    qrels = read_qrels(evals / "topical_qrels.dev.tsv")
    judged = sorted(q for q, j in qrels.items() if any(g > 0 for g in j.values()))
    half = halves(judged)
    known_half = halves([i.qid for i in items], {i.qid: i.kind for i in items})
    folder = site_data(args.corpus / "site", args.into / "site", lambda m: print(m, file=sys.stderr))
    site = Site(folder).open()
    fts = fts5_for(folder)
    started = time.perf_counter()
    first_t = {q: site.first_pass(topical[q]) for q in judged}
    first_k = {i.qid: site.first_pass(i.query) for i in items}
    first_ms = (time.perf_counter() - started) * 1000 / (len(first_t) + len(first_k))

    def mean(values: dict[str, float], qids: set[str] | None = None) -> float:
        return float(np.mean([v for q, v in values.items() if qids is None or q in qids]))

    fts_t = {q: ndcg_at(fts.rank(topical[q], 10), qrels[q]) for q in judged}
    fts_k = {i.qid: mrr_at(fts.rank(i.query, 10), i.target) for i in items}
    out: dict[str, Any] = {"fts5": {"topical": mean(fts_t), "A": mean(fts_t, half["A"]), "B": mean(fts_t, half["B"]),
                                    "known": mean(fts_k)}, "first_pass_ms": round(first_ms, 2), "families": {}}
    wanted = {f.strip() for f in args.only.split("|") if f.strip()}
    for fam, grid in families(site).items():
        if wanted and fam not in wanted:
            continue
        rows = []
        for name, fn in grid:
            times: list[float] = []

            def timed(hits: Hits, text: str, fn: Reranker = fn, times: list[float] = times) -> list[str]:
                t0 = time.perf_counter()
                ranked = fn(hits, text)
                times.append((time.perf_counter() - t0) * 1000)
                return ranked

            nd = {q: ndcg_at(timed(first_t[q], topical[q])[:10], qrels[q]) for q in judged}
            rr = {i.qid: mrr_at(timed(first_k[i.qid], i.query)[:10], i.target) for i in items}
            rows.append({"params": name, "topical": mean(nd), "A": mean(nd, half["A"]), "B": mean(nd, half["B"]),
                         "known": mean(rr), "known_A": mean(rr, known_half["A"]), "known_B": mean(rr, known_half["B"]),
                         "ms": round(statistics.median(times), 2)})
            print(f"{fam}: {name}", file=sys.stderr, flush=True)
        out["families"][fam] = {"rows": rows, "cv": cross_validate(rows)}
    site.close()
    fts.close()
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    f = out["fts5"]
    print(f"first pass {out['first_pass_ms']} ms a query; FTS5 topical {f['topical']:.3f} ({f['A']:.3f} / {f['B']:.3f}),"
          f" known items {f['known']:.3f}\n")
    print("| family | variant | known items MRR@10 | topical nDCG@10 | rerank ms (median) |\n|---|---|---|---|---|")
    for fam, res in out["families"].items():
        for r in res["rows"]:
            print(f"| {fam} | {r['params']} | {r['known']:.3f} ({r['known_A']:.3f} / {r['known_B']:.3f}) "
                  f"| {r['topical']:.3f} ({r['A']:.3f} / {r['B']:.3f}) | {r['ms']} |")
    print("\n| family | tuned on A -> its B | tuned on B -> its A | cross-validated mean |\n|---|---|---|---|")
    for fam, res in out["families"].items():
        cv = res["cv"]
        print(f"| {fam} | {cv['tuned_on_A']} -> {cv['B_of_it']:.3f} | {cv['tuned_on_B']} -> {cv['A_of_it']:.3f} "
              f"| {cv['mean']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
