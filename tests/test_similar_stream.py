"""The similarity model fitted a chunk of episodes at a time (the build's path: ``SimilarModel.fit`` over
``episode_chunks``) is the model fitted on every episode at once (``fit_fields``, what ``eval similar`` scores):
the same terms, the same rows bit for bit, the same neighbours and mentions, and a fit holds one chunk's texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import podsearch.similar.model as model_module
from podsearch.catalog import Catalog
from podsearch.similar import EpisodeFields, ModelParams, SimilarModel, episode_texts
from podsearch.similar import fields as fields_module
from podsearch.similar.features import TermCounter, weighted_fields
from podsearch.similar.signals import TITLE_AFTER, TITLE_GAP, episode_mentions, mentions_in, resolve_mentions


def _same_model(a: SimilarModel, b: SimilarModel) -> None:
    assert a.ids == b.ids and a.shows == b.shows
    assert a.vectorizer.vocabulary_ == b.vectorizer.vocabulary_
    for x, y in ((a.matrix, b.matrix), *(((a.mentions, b.mentions),) if a.mentions is not None else ())):
        assert x.shape == y.shape
        assert np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices)
        assert np.array_equal(x.data, y.data)  # bit for bit, not approximately
    assert b.mentions is None if a.mentions is None else b.mentions is not None
    assert np.array_equal(a.neigh_idx, b.neigh_idx) and np.array_equal(a.neigh_score, b.neigh_score)
    assert (a.dense is None) == (b.dense is None)
    if a.dense is not None:
        assert np.array_equal(a.dense, b.dense)
    assert a.numbers == b.numbers and a.person_names == b.person_names


@pytest.mark.parametrize("chunk", [1, 7, 36])
def test_a_fit_in_chunks_is_the_fit_at_once(sample_data: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    with Catalog.in_dir(sample_data) as catalog:
        at_once = SimilarModel.fit_fields(episode_texts(catalog), ModelParams())
        held: list[int] = []
        chunks = fields_module.episode_chunks

        def watched(cat: Catalog, size: int = chunk, **options: Any) -> Any:
            for part in chunks(cat, chunk, **options):
                held.append(len(part.transcripts))
                yield part

        monkeypatch.setattr(model_module, "episode_chunks", watched)
        streamed = SimilarModel.fit(catalog, ModelParams())
    assert max(held) == chunk and sum(held) == 36  # never more than one chunk of transcripts at a time
    _same_model(at_once, streamed)
    assert streamed.similar(streamed.ids[0], 5)[0] == at_once.similar(at_once.ids[0], 5)[0]


def _numbered(n: int) -> EpisodeFields:
    topics = ["bees hive pollen honey waggle", "rust borrow checker lifetimes", "sourdough starter yeast crumb"]
    notes = [f"{topics[i % 3]} " * 3 + (f"as we said on episode {(i * 7) % n + 1} and Other Show #2" if i % 4 else "")
             for i in range(n)]
    return EpisodeFields([f"e{i}" for i in range(n)], [f"s{i % 2}" for i in range(n)], [f"Show #{i + 1}" for i in range(n)],
                         notes, [f"speaker talk {topics[(i + 1) % 3]}" for i in range(n)], ["en"] * n,
                         [f"guest_{i % 5}" for i in range(n)], [""] * n, [i % 20 + 1 for i in range(n)],
                         {"s0": "Show", "s1": "Other Show"}, {f"guest_{i}": f"Guest {i}" for i in range(5)})


def _split(fields: EpisodeFields, size: int) -> list[EpisodeFields]:
    n = len(fields.ids)
    return [EpisodeFields(*(f[k:k + size] if isinstance(f, list) else f for f in fields)) for k in range(0, n, size)]


def test_mentions_and_numbers_survive_the_chunks() -> None:
    fields = _numbered(40)
    at_once = SimilarModel.fit_fields(fields, ModelParams())
    assert at_once.mentions is not None and at_once.mentions.nnz > 20
    _same_model(at_once, SimilarModel.fit_chunks(_split(fields, 6), ModelParams()))


def test_mentions_read_apart_then_resolved_are_episode_mentions() -> None:
    fields = _numbered(40)
    texts = [f"{a} {b}" for a, b in zip(fields.notes, fields.transcripts)]
    expected = episode_mentions(texts, fields.shows, fields.numbers, fields.show_titles)
    found = resolve_mentions([mentions_in(t) for t in texts], fields.shows, fields.numbers, fields.show_titles)
    assert expected.nnz > 20 and (expected != found).nnz == 0
    assert all(len(before) <= TITLE_GAP and len(after) <= TITLE_AFTER
               for m in map(mentions_in, texts) for _, places, _ in m for before, after in places)


def test_term_counts_in_chunks_are_the_counts_at_once() -> None:
    fields = _numbered(40)
    params = ModelParams(min_df=1, max_df=1.0, max_features=12)  # the cap breaks ties by the terms' order
    one = TermCounter(params)
    one.add(weighted_fields(fields, params))
    vec_one, counts_one = one.finish()
    many = TermCounter(params)
    for part in _split(fields, 3):
        many.add(weighted_fields(part, params))
    vec_many, counts_many = many.finish()
    assert vec_one.vocabulary_ == vec_many.vocabulary_ and len(vec_one.vocabulary_) == 12  # of 22 terms
    assert isinstance(counts_many, sp.csr_matrix) and (counts_one != counts_many).nnz == 0


def test_an_empty_catalog_still_says_what_to_do(tmp_path: Path) -> None:
    from podsearch.errors import IndexMissing

    with Catalog.in_dir(tmp_path) as catalog, pytest.raises(IndexMissing, match="reindex"):
        SimilarModel.fit(catalog, ModelParams())


def test_term_counts_are_the_plain_weighted_counts_of_the_kept_terms() -> None:
    """The chunked counter against a dense count of every field by hand: the terms in at least ``min_df`` and at
    most ``max_df`` of the episodes, the ``max_features`` of them with the largest weighted totals (ties: the
    alphabetical order), columns alphabetical, each row's weighted sum of its fields' counts."""
    fields = _numbered(40)
    params = ModelParams(min_df=2, max_df=0.7, max_features=9, field_sublinear=False)
    weighted = weighted_fields(fields, params)
    counter = TermCounter(params)
    for part in _split(fields, 7):
        counter.add(weighted_fields(part, params))
    vectorizer, counts = counter.finish()

    analyze = counter.analyze
    rows: list[dict[str, float]] = [{} for _ in fields.ids]
    for texts, weight in weighted:
        for row, text in zip(rows, texts):
            for term in analyze(text):
                row[term] = row.get(term, 0.0) + weight
    terms = sorted({t for row in rows for t in row})
    df = {t: sum(t in row for row in rows) for t in terms}
    kept = [t for t in terms if 2 <= df[t] <= 0.7 * len(rows)]
    totals = {t: sum(row.get(t, 0.0) for row in rows) for t in kept}
    kept = sorted(sorted(kept, key=lambda t: -totals[t])[:9])
    assert 9 < len([t for t in terms if 2 <= df[t] <= 0.7 * len(rows)])  # the cap did drop terms
    assert sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.get) == kept
    expected = np.array([[row.get(t, 0.0) for t in kept] for row in rows], dtype=np.float32)
    assert np.allclose(counts.toarray(), expected, rtol=1e-6)
    assert counts.has_sorted_indices and counts.indices.dtype == np.int32 and counts.nnz == np.count_nonzero(expected)


def test_weighing_in_place_is_weighing_a_copy() -> None:
    """The fit weighs its counts in place (no copy of a matrix that is gigabytes at 100,000 episodes); fold-in
    and other callers that keep their counts get a copy weighed, their matrix untouched. Both give the same rows."""
    from podsearch.similar.weighting import Weighting

    fields = _numbered(40)
    params = ModelParams(min_df=1)
    counter = TermCounter(params)
    counter.add(weighted_fields(fields, params))
    vec, counts = counter.finish()
    kept = counts.copy()
    copied = Weighting(params, vec.vocabulary_).rows(counts, fields.shows, fields.languages)
    assert (counts != kept).nnz == 0 and np.array_equal(counts.data, kept.data)  # untouched
    in_place = Weighting(params, vec.vocabulary_).rows(counts, fields.shows, fields.languages, in_place=True)
    assert np.array_equal(copied.indptr, in_place.indptr) and np.array_equal(copied.indices, in_place.indices)
    assert np.array_equal(copied.data, in_place.data) and copied.dtype == np.float32
    assert not np.array_equal(counts.data[:10], kept.data[:10]) or counts.nnz != kept.nnz  # used up


def test_a_fit_counted_in_other_processes_is_the_fit_in_one(sample_data: Path) -> None:
    """Large fits tokenise and count their chunks in a pool of processes (features.PooledCounter): the same model,
    bit for bit, and no process left once the fit is done."""
    import multiprocessing

    with Catalog.in_dir(sample_data) as catalog:
        one = SimilarModel.fit(catalog, ModelParams())
        chunks = list(fields_module.episode_chunks(catalog, 5))
    before = set(multiprocessing.active_children())
    pooled = SimilarModel.fit_chunks(chunks, ModelParams(), one.digest, procs=2)
    _same_model(one, pooled)
    assert set(multiprocessing.active_children()) <= before


def test_speaker_labels_that_name_a_role_are_not_people(tmp_path: Path) -> None:
    """The people field (and so the reasons "a shared guest") holds named speakers and the feed's persons, not the
    role labels transcripts use: "Audience Member", "New Speaker", "Speaker B" (all in the site corpus) or
    "Speaker 1" and "Host"; a name that holds such a word only inside a longer word ("Hostetler") stays."""
    import json

    from podsearch.reindex import import_lines

    labels = ["Katie Hockman", "Erik St. Martin", "Audience Member", "New Speaker", "Speaker B", "Speaker 1", "Host",
              "Co-Host", "Jingle", "Q", "Mia Hostetler"]
    line = {"id": "ep-1", "show": "Talk", "title": "Fuzzing", "persons": ["René Pickhardt", "Mystery Guest"],
            "segments": [{"start": float(i), "speaker": s, "text": f"words {i}"} for i, s in enumerate(labels)]}
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with Catalog.in_dir(tmp_path / "data") as catalog:
        import_lines(catalog, export)
        fields = episode_texts(catalog)
    assert fields.people == ["rené_pickhardt katie_hockman erik_st_martin mia_hostetler"]
    assert fields.person_names == {"rené_pickhardt": "René Pickhardt", "katie_hockman": "Katie Hockman",
                                   "erik_st_martin": "Erik St. Martin", "mia_hostetler": "Mia Hostetler"}
