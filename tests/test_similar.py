"""Nearby episodes: the model, its persistence, /similar over the sample, re-broadcasts flagged as duplicates."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
import scipy.sparse as sp

from podsearch.catalog import Catalog
from podsearch.generations import Generations
from podsearch.sample import sample_feeds
from podsearch.similar import ModelParams, SimilarModel, top_neighbours

BEES = "tag:example.org,2024:field-notes/ep-01"
SIGNAL_4 = "https://example.org/signal-path/episodes/4?v=1"  # has '/', ':' and '?'
HOSTS = {"maya", "okafor", "tomás", "tomas", "ferreira", "priya", "raman", "maya_okafor", "priya_raman"}


def url(episode_id: str, **params: object) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"/similar/{quote(episode_id, safe='')}" + (f"?{query}" if query else "")


def shows_of(data: Path) -> dict[str, str]:
    with Catalog.in_dir(data) as cat:
        return {ep.id: ep.show_id for ep in cat.episodes()}


# -- the model ------------------------------------------------------------------------------------
def test_blockwise_neighbours_equal_the_full_product():
    rng = np.random.default_rng(7)
    m = sp.random(60, 40, density=0.2, random_state=3, format="csr", dtype=np.float32)
    m = sp.csr_matrix(m.multiply(1 / np.sqrt(m.multiply(m).sum(axis=1) + 1e-9)))
    idx, score = top_neighbours(m, 5, block_rows=7)
    full = (m @ m.T).toarray()
    np.fill_diagonal(full, -1)
    for i in rng.choice(60, 10, replace=False):
        assert i not in idx[i]
        np.testing.assert_allclose(score[i], np.sort(full[i])[::-1][:5], rtol=1e-5)


def test_lsa_blend_scores_match_precomputed_neighbours(sample_data: Path):
    with Catalog.in_dir(sample_data) as cat:
        model = SimilarModel.fit(cat, ModelParams(lsa_components=8, lsa_weight=0.4))
    assert model.dense is not None and model.dense.shape == (36, 8)
    i = model.position[BEES]
    scores = model.scores(i)
    top = [j for j in np.argsort(-scores) if j != i][:5]
    assert list(model.neigh_idx[i][:5]) == top
    np.testing.assert_allclose(model.neigh_score[i][:5], scores[top], rtol=1e-4)


def test_save_load_round_trip_answers_the_same(sample_data: Path, tmp_path: Path):
    with Catalog.in_dir(sample_data) as cat:
        model = SimilarModel.fit(cat, ModelParams(lsa_components=8, lsa_weight=0.3))
    gens = Generations(tmp_path / "model")
    model.save(gens)
    loaded = SimilarModel.load(gens)
    assert SimilarModel.saved_params(gens)["lsa_components"] == 8
    assert [n.id for n in loaded.similar(BEES, 5)[0]] == [n.id for n in model.similar(BEES, 5)[0]]
    text = "honeybee foragers dance on the comb"
    assert [n.id for n in loaded.similar_to_text(text, 3)] == [n.id for n in model.similar_to_text(text, 3)]


def test_show_noise_hosts_and_sponsors_are_not_reasons(sample_data: Path):
    with Catalog.in_dir(sample_data) as cat:
        model = SimilarModel.fit(cat)
    for episode_id in model.ids:
        picked, _ = model.similar(episode_id, 10)
        for item in picked:
            assert item.reasons, item
            assert not HOSTS & set(item.reasons), (episode_id, item)
            assert all(re.fullmatch(r"[^\W\d_][\w'’ -]*", r) for r in item.reasons), item.reasons
    # the sponsor read of each show is in every one of its episodes: show noise, dropped
    noise_terms = {model.terms[t] for terms in model.noise.values() for t in terms}
    assert {"trailmark", "okafor"} & noise_terms


# -- /similar/<id> ----------------------------------------------------------------------------------
def test_similar_by_id_with_encoded_slash_colon_question_mark(client, sample_data: Path):
    encoded = url(SIGNAL_4)
    assert "%2F" in encoded and "%3A" in encoded and "%3F" in encoded
    resp = client.get(encoded)
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert body["id"] == SIGNAL_4
    assert len(body["similar"]) == 10
    for item in body["similar"]:
        assert item["id"] != SIGNAL_4
        assert set(item) >= {"id", "title", "show", "published", "url", "score", "reasons"}
        assert 0 < item["score"] < 1 and item["reasons"]
    scores = [i["score"] for i in body["similar"]]
    assert scores == sorted(scores, reverse=True)


def test_similar_finds_the_topic_across_shows(client, sample_data: Path):
    body = client.get(url(BEES, k=2)).get_json()
    titles = [i["title"] for i in body["similar"]]
    assert titles == ["Hive Minds: Swarm Robotics Learns from Bees", "Liquid Gold: Tasting Single-Flower Honey"]
    assert {"bees", "honeybee"} & set(body["similar"][0]["reasons"])


def test_unknown_id_is_a_json_404(client):
    resp = client.get(url("no/such:episode?x=1"))
    assert resp.status_code == 404
    assert resp.is_json and resp.get_json()["error"]["message"]


@pytest.mark.parametrize("k", [1, 3, 50])
def test_k(client, k: int):
    items = client.get(url(BEES, k=k)).get_json()["similar"]
    assert len(items) == min(k, 35)
    assert BEES not in {i["id"] for i in items}


@pytest.mark.parametrize("k", [0, 51, "x"])
def test_bad_k_is_a_400(client, k: object):
    resp = client.get(url(BEES, k=k))
    assert resp.status_code == 400 and resp.get_json()["error"]


def test_same_show_show_and_exclude_show(client, sample_data: Path):
    shows = shows_of(sample_data)
    other = [i["id"] for i in client.get(url(BEES, k=20, same_show="false")).get_json()["similar"]]
    assert other and all(shows[e] != "field-notes" for e in other)
    only = [i["id"] for i in client.get(url(BEES, k=20, show="the-long-table")).get_json()["similar"]]
    assert len(only) == 12 and all(shows[e] == "the-long-table" for e in only)
    rest = [i["id"] for i in client.get(url(BEES, k=50, exclude_show="the-long-table,signal-path")).get_json()["similar"]]
    assert len(rest) == 11 and all(shows[e] == "field-notes" for e in rest)


def test_min_score(client):
    everything = client.get(url(BEES, k=50)).get_json()["similar"]
    cut = everything[3]["score"]
    kept = client.get(url(BEES, k=50, min_score=cut)).get_json()["similar"]
    assert [i["id"] for i in kept] == [i["id"] for i in everything if i["score"] >= cut]
    assert client.get(url(BEES, min_score=0.99)).get_json()["similar"] == []


def test_moment_t_gives_neighbours_of_those_two_minutes(client, sample_data: Path):
    with Catalog.in_dir(sample_data) as cat:
        segments = cat.segments(BEES)
    # the sponsor read sits at ~1312 s; the waggle-dance talk at ~262-516 s
    dance = client.get(url(BEES, t=380, k=3)).get_json()
    assert dance["t"] == 380
    assert BEES not in {i["id"] for i in dance["similar"]}
    assert dance["similar"][0]["title"] in {"Hive Minds: Swarm Robotics Learns from Bees",
                                             "Liquid Gold: Tasting Single-Flower Honey"}
    whole = client.get(url(BEES, k=3)).get_json()
    assert dance["similar"][0]["score"] != whole["similar"][0]["score"]  # scored on the moment, not the episode
    end = max(s.start for s in segments if s.start is not None)
    resp = client.get(url(BEES, t=end + 3600))
    assert resp.status_code == 400 and "around" in resp.get_json()["error"]["message"]
    assert client.get(url(BEES, t=-5)).status_code == 400


def test_free_text_get_and_post(client):
    body = client.get("/similar?text=sourdough+starter+wild+yeast+bread&k=3").get_json()
    assert body["id"] is None and len(body["similar"]) == 3
    assert any(r in {"sourdough", "yeast", "bread", "starter"} for r in body["similar"][0]["reasons"])
    posted = client.post("/similar?k=3", json={"text": "sourdough starter wild yeast bread"}).get_json()
    assert [i["id"] for i in posted["similar"]] == [i["id"] for i in body["similar"]]
    assert client.get("/similar?text=").status_code == 400
    assert client.get("/similar?text=zzqx+qqzx").status_code == 400


# -- re-broadcasts --------------------------------------------------------------------------------
def rebroadcast_feed(src: Path, dest: Path) -> None:
    """A second show that re-broadcasts the bees episode: same text, another guid, title and show."""
    xml = src.read_text(encoding="utf-8")
    head = xml[: xml.index("<item>")]
    items = re.findall(r"<item>.*?</item>", xml, flags=re.S)
    bees = next(i for i in items if "field-notes/ep-01<" in i)
    bees = bees.replace("tag:example.org,2024:field-notes/ep-01", "tag:example.org,2024:rerun/bees")
    bees = bees.replace("<title>The Waggle Dance Decoded</title>", "<title>Rerun: The Waggle Dance Decoded</title>")
    head = head.replace("<title>Field Notes</title>", "<title>Science Reruns</title>", 1)
    dest.write_text(head + bees + "\n</channel>\n</rss>\n", encoding="utf-8")


def test_rebroadcast_in_another_feed_is_a_duplicate_not_a_recommendation(tmp_path: Path, runner):
    from podsearch.cli import main
    from podsearch.service import Library

    root = tmp_path / "site"
    shutil.copytree(Path(sample_feeds()[0]).parents[1], root)
    rebroadcast_feed(root / "feeds" / "field-notes.xml", root / "feeds" / "reruns.xml")
    feeds = sorted(str(p) for p in (root / "feeds").glob("*.xml"))
    config = tmp_path / "site.toml"
    config.write_text("feeds = [" + ", ".join(f'"{f}"' for f in feeds) + "]\n", encoding="utf-8")
    data = tmp_path / "data"
    result = runner.invoke(main, ["--data", str(data), "--config", str(config), "-q", "reindex"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lib = Library(data)
    try:
        result = lib.similar(BEES, 10)
        assert "tag:example.org,2024:rerun/bees" in {d.id for d in result.duplicates}
        assert "tag:example.org,2024:rerun/bees" not in {s.id for s in result.similar}
        assert all(d.duplicate and d.score >= 0.9 for d in result.duplicates)
        assert result.similar[0].title == "Hive Minds: Swarm Robotics Learns from Bees"
        rerun = lib.similar("tag:example.org,2024:rerun/bees", 10)
        assert BEES in {d.id for d in rerun.duplicates} and BEES not in {s.id for s in rerun.similar}
    finally:
        lib.close()
