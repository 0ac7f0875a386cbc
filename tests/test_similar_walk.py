"""The lists' last stage: a short walk over the lists, and the episodes of its show a cue window names by topic
(similar/walk.py; docs/similar.md, nineteenth round)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from podsearch.catalog import Catalog
from podsearch.generations import Generations
from podsearch.similar import ModelParams, SimilarModel
from podsearch.similar.walk import list_graph, reciprocal_overlap, reciprocal_vectors, walk_at_members, window_links


def test_the_walk_weighs_a_member_the_other_members_hold_near_above_one_they_do_not() -> None:
    # 0 lists 1, 2 and 3 alike; 1 and 2 list each other (and 0), 3 lists only 4 and 5.
    idx = np.array([[1, 2, 3], [0, 2, -1], [0, 1, -1], [4, 5, -1], [3, 5, -1], [3, 4, -1]], dtype=np.int32)
    score = np.where(idx >= 0, 0.5, 0).astype(np.float32)
    mass = walk_at_members(list_graph(idx, score, 3), idx, [0], alpha=0.5, steps=3)[0]
    assert np.isclose(mass[0], mass[1]) and mass[1] > mass[2]  # 1 and 2 (alike), then 3
    assert mass.max() == 1.0  # over the walk's largest mass on another episode


def test_a_reciprocal_neighbour_overlaps_more_than_a_hub_that_lists_others() -> None:
    # 0, 1 and 2 list each other first; 5 is in every list of 0-4 (a hub) but lists 3 and 4, which list it back.
    idx = np.array([[1, 2, 5], [0, 2, 5], [0, 1, 5], [4, 5, -1], [3, 5, -1], [3, 4, -1]], dtype=np.int32)
    score = np.where(idx >= 0, 0.5, 0).astype(np.float32)
    vectors = reciprocal_vectors(idx, score, k=3, expand=2)
    overlap = reciprocal_overlap(vectors, idx, [0, 3])
    assert overlap[0, 0] > overlap[0, 2] >= 0  # 0's reciprocal 1 above the hub 5
    assert overlap[1, 1] > 0 and overlap[1, 1] > overlap[0, 2]  # 3 and 5 are reciprocal
    dense = vectors.toarray()  # the Jaccard as its definition says, for 0 and 1
    assert np.isclose(overlap[0, 0], np.minimum(dense[0], dense[1]).sum() / np.maximum(dense[0], dense[1]).sum())


def test_the_reciprocal_stage_reorders_the_lists_keeps_their_members_and_named_episodes_first(sample_data: Path):
    with Catalog.in_dir(sample_data) as cat:
        plain = SimilarModel.fit(cat, ModelParams())
        mixed = SimilarModel.fit(cat, ModelParams(reciprocal_weight=0.2))
    assert not np.array_equal(plain.neigh_idx, mixed.neigh_idx)  # some list reordered
    for i in range(len(plain.ids)):
        assert set(plain.neigh_idx[i][plain.neigh_idx[i] >= 0]) == set(mixed.neigh_idx[i][mixed.neigh_idx[i] >= 0])
        for j in mixed._named(i):  # an episode it names counts as reciprocal: never below what it scored
            at_plain, at_mixed = plain.neigh_idx[i] == j, mixed.neigh_idx[i] == j
            if at_plain.any():
                assert mixed.neigh_score[i][at_mixed][0] >= plain.neigh_score[i][at_plain][0] - 1e-6
    i = int(np.argmax((mixed.neigh_idx >= 0).sum(axis=1)))
    served = mixed.scores(i)  # members at their list scores, the rest below them
    members = mixed.neigh_idx[i][mixed.neigh_idx[i] >= 0]
    others = np.setdiff1d(np.arange(len(mixed.ids)), np.r_[members, i])
    assert np.allclose(served[members], mixed.neigh_score[i][:len(members)])
    assert len(others) == 0 or served[others].max() <= served[members].min() + 1e-6


def test_a_window_names_the_best_episodes_of_its_own_show_at_the_floor_or_above() -> None:
    # terms: 0 deepfakes, 1 kubernetes, 2 coffee, 3 the window's passing words
    rows = sp.csr_matrix(np.array([[0, 0, 1, 0], [0.8, 0.6, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]], dtype=np.float32))
    shows = ["a", "a", "a", "b"]
    windows = sp.csr_matrix(np.array([[0.6, 0, 0, 0.8],  # of episode 0: "another episode on deepfakes"
                                      [0, 0, 0.1, 0.99]], dtype=np.float32))  # of episode 2: words in passing
    links = window_links(windows, np.array([0, 2]), rows, shows, top=1, floor=0.15)
    assert links.nnz == 1 and np.isclose(links[0, 1], 0.48)  # episode 1 of its show; not 3 (another show)
    assert window_links(windows, np.array([0, 2]), rows, shows, top=3, floor=0.5).nnz == 0  # none at 0.5


def test_a_back_reference_by_topic_brings_its_episode_into_the_list(site_index: Path) -> None:
    """Practical AI #80 says of #49 only "we have another episode that covered deepfakes in some detail, and we'll
    for sure link that in our show notes" (the editors' link is a dev pair): by the whole episodes #49 is far down
    #80's ranking, past its 50 (198th before the nineteenth round); that window's best match in the show is #49, and
    the served list holds it in its top 10."""
    model = SimilarModel.load(Generations(site_index / "model"))
    i, j = model.position["changelog:practicalai:80"], model.position["changelog:practicalai:49"]
    assert model.window_links is not None and model.window_links[i, j] >= model.params.window_floor
    text_only = model.scores(i, mentions=False)
    text_only[i] = -1
    assert int((text_only > text_only[j]).sum()) >= 50
    assert "changelog:practicalai:49" in [n.id for n in model.similar("changelog:practicalai:80", 10)[0]]
