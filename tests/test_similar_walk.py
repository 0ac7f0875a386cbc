"""The lists' last stage: a short walk over the lists, and the episodes of its show a cue window names by topic
(similar/walk.py; docs/similar.md, nineteenth round)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from podsearch.generations import Generations
from podsearch.similar import SimilarModel
from podsearch.similar.walk import list_graph, walk_at_members, window_links


def test_the_walk_weighs_a_member_the_other_members_hold_near_above_one_they_do_not() -> None:
    # 0 lists 1, 2 and 3 alike; 1 and 2 list each other (and 0), 3 lists only 4 and 5.
    idx = np.array([[1, 2, 3], [0, 2, -1], [0, 1, -1], [4, 5, -1], [3, 5, -1], [3, 4, -1]], dtype=np.int32)
    score = np.where(idx >= 0, 0.5, 0).astype(np.float32)
    mass = walk_at_members(list_graph(idx, score, 3), idx, [0], alpha=0.5, steps=3)[0]
    assert np.isclose(mass[0], mass[1]) and mass[1] > mass[2]  # 1 and 2 (alike), then 3
    assert mass.max() == 1.0  # over the walk's largest mass on another episode


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
