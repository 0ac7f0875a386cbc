"""Another episode's guest named near "episode" (similar/guests.py; docs/similar.md, tenth round)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podsearch.generations import Generations
from podsearch.similar import EpisodeFields, ModelParams, SimilarModel
from podsearch.similar.guests import names_near_cues

TOPICS = ["bees hive pollen honey waggle dance foraging", "rust borrow checker lifetimes ownership traits",
          "sourdough starter yeast flour crumb oven", "orbital launch rocket booster payload ascent"]
HOST = "hana_host"


def test_the_names_said_near_episode_are_capitalised_runs_of_two_words_or_more() -> None:
    text = ("Long ago Alice Smith spoke about bees and nothing else at all for quite a while today. "
            "My favourite episode? So Carl Johnson came back, and Rust was there too, with Bo.")
    found = names_near_cues(text, 6)
    assert {"carl_johnson", "so_carl_johnson"} <= found  # every run of two words or more inside a run
    assert "alice_smith" not in found  # more than six words from "episode"
    assert not {"rust", "bo", "my_favourite"} & found  # one word alone; "My favourite episode?" ends the run
    assert names_near_cues("Carl Johnson without the word", 30) == set()


def _fields(said: dict[int, str], people: dict[int, list[str]], numbers: range = range(1, 25)) -> EpisodeFields:
    """Episodes of one show on two of four topics each, the host in every one; ``said``: words added to an episode's
    transcript, ``people``: its guests."""
    n = len(numbers)
    notes = [f"{TOPICS[k % 4]} " * 3 + f"{TOPICS[k // 4 % 4]} welcome to the show" for k in numbers]
    transcripts = [said.get(k, "") for k in numbers]
    tokens = [" ".join([HOST, *people.get(k, [])]) for k in numbers]
    names = {HOST: "Hana Host", "carl_johnson": "Carl Johnson", "dee_ray": "Dee Ray"}
    return EpisodeFields([f"e{k}" for k in numbers], ["s"] * n, [f"Show #{k}" for k in numbers], notes, transcripts,
                         ["en"] * n, tokens, [""] * n, list(numbers), {"s": "Show"}, names)


def _score(model: SimilarModel, source: str, target: str) -> float:
    return float(model.scores(model.position[source])[model.position[target]])


def _reasons(model: SimilarModel, source: str, target: str) -> list[str]:
    return next(p for p in model.similar(source, 50)[0] if p.id == target).reasons


@pytest.fixture
def round_up() -> EpisodeFields:
    """e20 (rust) looks back on "the episode with Carl Johnson" (e3's and e23's guest, bees and rust) and on the
    host's; e21 says Dee Ray's name (e5's guest) with no "episode" near it."""
    said = {20: "My favourite episode was the one with Carl Johnson, and every episode with Hana Host.",
            21: "Dee Ray " + "filler words here " * 20 + "in this episode nothing else"}
    return _fields(said, {3: ["carl_johnson"], 23: ["carl_johnson"], 5: ["dee_ray"]})


def test_an_episode_that_names_an_earlier_guest_near_episode_lifts_that_episode_in_its_own_list(round_up) -> None:
    # (the lists' last stage, walk.py, off in both: its walk reweighs each list by the others, so no score is kept)
    model = SimilarModel.fit_fields(round_up, ModelParams(walk_weight=0, window_weight=0))
    plain = SimilarModel.fit_fields(round_up, ModelParams(guest_weight=0, walk_weight=0, window_weight=0))
    before, w = _score(plain, "e20", "e3"), model.params.guest_weight
    assert _score(model, "e20", "e3") == pytest.approx(before + w * (1 - before), abs=1e-5)
    assert _reasons(model, "e20", "e3")[0] == "Carl Johnson"
    rank = {m: [p.id for p in m.similar("e20", 50)[0]].index("e3") for m in (model, plain)}
    assert rank[model] < rank[plain]
    # one way: e3's list is as it was; e23 is later than e20 (a look back names an earlier episode); the host of
    # every episode is no guest; a name said far from "episode" names nothing
    for source, target in (("e3", "e20"), ("e20", "e23"), ("e20", "e7"), ("e21", "e5")):
        assert _score(model, source, target) == pytest.approx(_score(plain, source, target), abs=1e-6), (source, target)
    assert "Carl Johnson" not in _reasons(model, "e20", "e23")


def test_the_guests_named_are_kept_with_the_model_and_by_fold_in(round_up, tmp_path: Path) -> None:
    model = SimilarModel.fit_fields(round_up, ModelParams())
    gens = Generations(tmp_path / "model")
    model.save(gens)
    loaded = SimilarModel.load(gens)
    assert (loaded.neigh_idx == model.neigh_idx).all() and _reasons(loaded, "e20", "e3")[0] == "Carl Johnson"
    new = _fields({25: "Back in the episode with Dee Ray we covered it."}, {}, range(25, 26))
    folded = loaded.fold_in(new, "digest")
    refit = SimilarModel.fit_fields(_fields({**{20: round_up.transcripts[19], 21: round_up.transcripts[20]},
                                             25: new.transcripts[0]},
                                            {3: ["carl_johnson"], 23: ["carl_johnson"], 5: ["dee_ray"]},
                                            range(1, 26)), ModelParams())
    assert _reasons(folded, "e25", "e5")[0] == "Dee Ray" == _reasons(refit, "e25", "e5")[0]
    assert _reasons(folded, "e20", "e3")[0] == "Carl Johnson"
    assert loaded.guests is not None and 24 not in loaded.guests.links  # the model served is not changed
