"""How search ranks: the settings chosen on the podcast relevance sets (docs/search.md has every variant
measured, with SQLite FTS5 from the same run).

One frozen object, so that a variant is a value (``dataclasses.replace(RANKING, k1=2.0)``) that the index
takes (``SearchIndex(data, ranking=...)``) and the parsed-query cache keys on; ``bench/ranking.py`` runs
variants by parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ranking:
    """Settings of the search box's ranking.

    ``weights``: each searched field's BM25F weight (a word's frequency in the field is multiplied by it
    before the frequencies of all fields are added and saturated once: see ``podsearch.bm25f``).
    ``b``: each field's length normalisation (0 = none, 1 = full); fields not named get ``b_default``.
    ``k1``: the saturation of the combined frequency. ``relax_below``: when fewer episodes than this hold
    every word of a short query, any word will do. ``long_query_words``: a plain query of more words than
    this is ranked on any word straight away (a pasted sentence rarely has every word in one episode).
    """

    weights: tuple[tuple[str, float], ...] = (
        ("title", 1.5), ("persons", 1.3), ("show", 1.3), ("notes", 1.15), ("transcript", 1.0))
    b: tuple[tuple[str, float], ...] = field(default=())
    b_default: float = 0.75
    k1: float = 1.2
    bm25f: bool = False
    relax_below: int = 3
    long_query_words: int = 4

    @property
    def fields(self) -> list[str]:
        return [f for f, _ in self.weights]

    @property
    def boosts(self) -> dict[str, float]:
        return dict(self.weights)

    def field_b(self) -> dict[str, float]:
        return {f: dict(self.b).get(f, self.b_default) for f, _ in self.weights}


BEFORE = Ranking()  # the ranking before issue 15 (per-field BM25 added up), kept to measure against
# Chosen on the podcast sets (docs/search.md): BM25F proper over the same fields and weights, a flatter
# saturation (k1 2) and half the length normalisation (b 0.5: long episodes are not long-winded versions of
# short ones, they cover more; the same in every field, so that text imported as show notes ranks as it does
# as a transcript). The any-word fallback and the long-query rule changed nothing measurable under BM25F and
# are kept as they were.
RANKING = Ranking(bm25f=True, k1=2.0, b_default=0.5)
