"""Nearby episodes: the model, its persistence, /similar over the sample, re-broadcasts flagged as duplicates."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from podsearch.catalog import Catalog
from podsearch.generations import Generations
from podsearch.sample import sample_feeds
from podsearch.similar import EpisodeFields, ModelParams, SimilarModel, top_neighbours, weighted_counts
from podsearch.similar.signals import episode_mentions, link_tokens, phrases

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


def test_pruned_candidates_with_room_for_every_row_equal_the_exact_neighbours():
    m = sp.random(80, 50, density=0.2, random_state=5, format="csr", dtype=np.float32)
    m = sp.csr_matrix(m.multiply(1 / np.sqrt(m.multiply(m).sum(axis=1) + 1e-9)))
    links = sp.csr_matrix((np.ones(4, dtype=np.float32), ([3, 9, 40, 3], [9, 3, 3, 40])), shape=(80, 80))
    exact_idx, exact_score = top_neighbours(m, 6, block_rows=16, links=links, link_weight=0.3, exact_limit=10_000)
    idx, score = top_neighbours(m, 6, block_rows=16, links=links, link_weight=0.3, exact_limit=0,
                                candidates=80, prune_terms=50)
    np.testing.assert_allclose(score, exact_score, rtol=1e-5, atol=1e-6)
    # linked pairs are candidates even when few candidates come from the text
    idx, score = top_neighbours(m, 6, links=links, link_weight=1.0, exact_limit=0, candidates=6, prune_terms=2)
    assert set(idx[3][:2]) == {9, 40} and idx[40][0] == 3 and score[3][0] == pytest.approx(1.0)


def test_pruned_neighbours_find_most_of_the_exact_top_ten():
    rng = np.random.default_rng(11)
    topics = rng.random((12, 300)) ** 8  # 12 topics over 300 terms; episodes are noisy mixtures of one topic
    rows = np.vstack([topics[t] + 0.05 * rng.random(300) ** 8 for t in rng.integers(0, 12, 600)])
    rows[rows < np.quantile(rows, 0.85, axis=1, keepdims=True)] = 0
    m = sp.csr_matrix(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float32)
    exact, exact_score = top_neighbours(m, 10, exact_limit=10_000)
    approx, score = top_neighbours(m, 10, exact_limit=0, candidates=40, prune_terms=16)
    shared = np.mean([len(set(exact[i]) & set(approx[i])) / 10 for i in range(600)])
    assert shared >= 0.8, shared  # many near ties inside a topic: the rest are as good, as the scores show
    assert score.sum() / exact_score.sum() >= 0.99, score.sum() / exact_score.sum()
    np.testing.assert_allclose(score[:, 0], (m[np.arange(600)].multiply(m[approx[:, 0]])).sum(axis=1).A1, rtol=1e-5)


def test_link_tokens_one_per_site_and_project():
    html = ('<a href="https://github.com/dvyukov/go-fuzz#trophies">x</a> <a href="https://www.Example.org/a/b/c">y</a>'
            '<a href="javascript:alert(1)">z</a> <a href="https://github.com/golang">g</a>')
    assert link_tokens(html).split() == ["link_github_com", "link_github_com_dvyukov_go-fuzz", "link_example_org",
                                         "link_example_org_a_b"]


def test_episode_mentions_by_number_in_the_show_or_a_named_show():
    texts = ["As we said on episode 2, and in Other Show #1.", "Nothing here but #1 priorities.", "episode 3 is me",
             "", "Go back to ep. 2"]
    shows = ["a", "a", "a", "b", "c"]
    named = episode_mentions(texts, shows, [1, 2, 3, 1, None], {"b": "Other Show"})
    assert {(int(i), int(j)) for i, j in zip(*named.nonzero())} == {(0, 1), (0, 3), (1, 0)}


def test_another_shows_episode_is_named_by_its_title_after_or_a_few_words_before():
    """The site corpus: Ship It! #20 says "founders talk - I'll plug episode 80" and #40 "so it's episode 86 on
    Founders Talk" (both were read as Ship It!'s own 80 and 86), Changelog News #5 "that's episode 236 of Go
    Time"; a Go Time episode's "Request for Commits we are back for episode #15 of GoTime" is its own show's."""
    texts = ["We're dogging Founders Talk - I'll plug episode 80, with a co-founder.",  # ship it
             "So it's episode 86 on Founders Talk. Check it out.",  # ship it
             "That's episode 236 of Go Time, a good listen.",  # news
             "Request for Commits we are back for episode #15 of GoTime.",  # go time
             "I liked Founders Talk. Then in episode 80 we fixed it.",  # ship it: another sentence
             "Founders Talk, all about leading teams and growing up, was great in episode 86",  # ship it: too far
             "", "", "", "", "", "", "", ""]
    shows = ["ship"] * 2 + ["news", "go", "ship", "ship"] + ["ship", "ship", "ft", "ft", "go", "go", "rfc", "rfc"]
    numbers = [20, 40, 5, 15, 21, 22, 80, 86, 80, 86, 236, 14, 15, 1]
    named = episode_mentions(texts, shows, numbers, {"ft": "Founders Talk", "go": "Go Time",
                                                     "rfc": "Request for Commits", "ship": "Ship It!"})
    links = {(int(i), int(j)) for i, j in zip(*named.nonzero())}
    assert links == {(0, 8), (1, 9), (2, 10), (4, 6), (5, 7)}, links
    # a one-word title is said after the number or words before it only as a plain word: "on go modules"
    named = episode_mentions(["Episode 12 on go modules. Let's go back to episode 13.", "", "", "", ""],
                             ["a", "a", "a", "go", "go"], [11, 12, 13, 12, 13], {"go": "Go"})
    assert {(int(i), int(j)) for i, j in zip(*named.nonzero())} == {(0, 1), (0, 2)}


def test_a_link_to_an_episode_page_names_the_show_it_spells_and_only_that():
    """The site corpus's transcripts link what they recall: "[in that episode](https://changelog.com/gotime/49)",
    "[founderstalk.fm/93](https://founderstalk.fm/93)". A link ending in a number that spells no show's title (an
    issue, a pull request) names no episode, not even of the episode's own show."""
    texts = ["Go support in VS Code, [in that episode](https://changelog.com/gotime/49) - I'm blanking on it.",
             "Did you know Adam talked to a founder? [founderstalk.fm/93](https://founderstalk.fm/93). Ok.",
             "See https://github.com/golang/go/issues/49 and https://example.com/page/93, or gotime.fm/93x.",
             "", ""]
    shows = ["go", "news", "go", "go", "ft"]
    named = episode_mentions(texts, shows, [106, 6, 107, 49, 93], {"go": "Go Time", "ft": "Founders Talk",
                                                                   "news": "Changelog News"})
    assert {(int(i), int(j)) for i, j in zip(*named.nonzero())} == {(0, 3), (1, 4)}


def test_title_phrases_are_word_pairs_without_stop_words_or_punctuation():
    title = "Schnorr Signatures and the Taproot Upgrade: Lightning, Network"
    assert phrases(title, ENGLISH_STOP_WORDS).split() == ["schnorr_signatures", "taproot_upgrade"]


def test_each_field_is_saturated_before_its_weight():
    """1 + log(tf) per field, then the weights: a word said 400 times in one field weighs 1 + log 400, not 400."""
    fields = [(["bees bees bees bees", "wasp"], 2.0), (["bees", "wasp"], 1.0)]
    vectorizer, counts = weighted_counts(fields, ModelParams())
    bees = vectorizer.vocabulary_["bees"]
    assert counts[0, bees] == pytest.approx(2 * (1 + np.log(4)) + 1)
    _, raw = weighted_counts(fields, ModelParams(field_sublinear=False))
    assert raw[0, bees] == pytest.approx(2 * 4 + 1)


def test_a_shared_title_phrase_brings_episodes_nearer_than_the_same_words_apart():
    titles = ["Lightning Network basics", "Lightning Network future", "Network tools for lightning mistakes"]
    titles += [f"{a} {b}" for a in ("sourdough", "rocket", "honeybee", "compiler") for b in ("basics", "history",
                                                                                              "tools", "mistakes", "future")]
    n = len(titles)
    fields = EpisodeFields([f"e{i}" for i in range(n)], [f"s{i % 4}" for i in range(n)], titles,
                           ["a conversation with friends"] * n, [""] * n, ["en"] * n, [""] * n)
    model = SimilarModel.fit_fields(fields, ModelParams())
    picked = {p.id: p for p in model.similar("e0", 5)[0]}
    assert "lightning network" in picked["e1"].reasons
    plain = SimilarModel.fit_fields(fields, ModelParams(title_phrases=False))
    assert "lightning_network" not in plain.vectorizer.vocabulary_
    apart = {p.id: p.score for p in plain.similar("e0", 5)[0]}
    assert picked["e1"].score - picked["e2"].score > apart["e1"] - apart["e2"] + 0.1  # the phrase is the gap


def test_compatibility_characters_fold_to_lower_case_terms():
    # "llm™" decomposes to "llmTM"; scikit-learn lower-cases before it strips accents, and warned about (and
    # never matched) such terms. pytest turns warnings into errors here.
    titles = ["Benchmarking LLM™ inference", "Training LLM™ adapters", "Quantised llmtm weights"] * 3
    n = len(titles)
    fields = EpisodeFields([f"e{i}" for i in range(n)], ["s"] * n, titles, [""] * n, [""] * n, ["en"] * n, [""] * n)
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert "llmtm" in model.vectorizer.vocabulary_
    assert not [t for t in model.vectorizer.vocabulary_ if t != t.lower()]
    assert model.vectorize("LLM™").nnz == 1


def test_an_episode_that_names_another_has_it_near_with_the_reason():
    topics = ["bees hive pollen honey waggle dance foraging", "rust borrow checker lifetimes ownership traits",
              "sourdough starter yeast flour crumb oven", "orbital launch rocket booster payload ascent"]
    notes, numbers = [], []
    for n in range(1, 25):
        text = f"{topics[n % 4]} " * 3 + "welcome to the show thanks to our sponsor"
        if n == 20:
            text = topics[1] + " as we discussed on episode 3 years ago"  # 3 is about bees, 20 about rust
        notes.append(text)
        numbers.append(n)
    fields = EpisodeFields([f"e{n}" for n in numbers], ["s"] * 24, [f"Show #{n}" for n in numbers], notes,
                           [""] * 24, ["en"] * 24, [""] * 24, [""] * 24, numbers, {"s": "Show"})
    model = SimilarModel.fit_fields(fields, ModelParams())
    picked, _ = model.similar("e20", 10)
    assert "e3" in [p.id for p in picked]
    assert next(p for p in picked if p.id == "e3").reasons[0] == "mentions episode 3"
    back, _ = model.similar("e3", 30)
    assert next(p for p in back if p.id == "e20").reasons[0] == "mentioned in episode 20"
    plain = SimilarModel.fit_fields(fields, ModelParams(mention_weight=0))
    assert "e3" not in [p.id for p in plain.similar("e20", 10)[0]]


def test_an_episode_named_in_another_show_reads_with_that_shows_title(tmp_path: Path):
    """Across shows the reason names the show ("mentions Founders Talk episode 3"): "episode 3" alone would read as
    the page's own show's #3. Kept by a saved model, and by fold-in for a show first seen there."""
    topics = ["bees hive pollen honey waggle dance foraging", "rust borrow checker lifetimes ownership traits",
              "sourdough starter yeast flour crumb oven", "orbital launch rocket booster payload ascent"]
    ids, shows, notes, numbers = [], [], [], []
    for n in range(1, 25):
        ids.append(f"e{n}")
        shows.append("ft" if n < 12 else "si")
        numbers.append(n)
        notes.append(f"{topics[n % 4]} " * 3 + "welcome to the show thanks to our sponsor")
    notes[19] = topics[1] + " as we heard in episode 3 of Founders Talk"  # e20 (Ship It!) names e3 (Founders Talk)
    notes[20] = topics[2] + " as we said in episode 17"  # e21 names e17, its own show's
    fields = EpisodeFields(ids, shows, [f"Episode {n}" for n in numbers], notes, [""] * 24, ["en"] * 24, [""] * 24,
                           [""] * 24, numbers, {"ft": "Founders Talk", "si": "Ship It!"})
    model = SimilarModel.fit_fields(fields, ModelParams())

    def reason(m: SimilarModel, source: str, target: str) -> str:
        return next(p for p in m.similar(source, 30)[0] if p.id == target).reasons[0]

    assert reason(model, "e20", "e3") == "mentions Founders Talk episode 3"
    assert reason(model, "e3", "e20") == "mentioned in Ship It! episode 20"
    assert reason(model, "e21", "e17") == "mentions episode 17"
    gens = Generations(tmp_path / "model")
    model.save(gens)
    loaded = SimilarModel.load(gens)
    assert reason(loaded, "e20", "e3") == "mentions Founders Talk episode 3"
    new = EpisodeFields(["n1"], ["cc"], ["Changelog #1"], [topics[3] + " like episode 4 of Founders Talk said"], [""],
                        ["en"], [""], [""], [1], {"cc": "The Changelog", "ft": "Founders Talk", "si": "Ship It!"})
    folded = loaded.fold_in(new, "digest")
    assert reason(folded, "e4", "n1") == "mentioned in The Changelog episode 1"
    assert reason(folded, "e20", "e3") == "mentions Founders Talk episode 3"


def test_lsa_blend_scores_match_precomputed_neighbours(sample_data: Path):
    with Catalog.in_dir(sample_data) as cat:
        model = SimilarModel.fit(cat, ModelParams(lsa_components=3, lsa_weight=0.4))
    assert model.dense is not None and model.dense.shape == (36, 3)
    i = model.position[BEES]
    scores = model.scores(i)
    top = [j for j in np.argsort(-scores) if j != i][:5]
    assert list(model.neigh_idx[i][:5]) == top
    np.testing.assert_allclose(model.neigh_score[i][:5], scores[top], rtol=1e-4)


def test_save_load_round_trip_answers_the_same(sample_data: Path, tmp_path: Path):
    with Catalog.in_dir(sample_data) as cat:
        model = SimilarModel.fit(cat, ModelParams(lsa_components=3, lsa_weight=0.3))
    gens = Generations(tmp_path / "model")
    model.save(gens)
    loaded = SimilarModel.load(gens)
    assert SimilarModel.saved_params(gens)["lsa_components"] == 3
    assert [n.id for n in loaded.similar(BEES, 5)[0]] == [n.id for n in model.similar(BEES, 5)[0]]
    text = "honeybee foragers dance on the comb"
    assert [n.id for n in loaded.similar_to_text(text, 3)] == [n.id for n in model.similar_to_text(text, 3)]


def test_show_noise_hosts_and_sponsors_are_not_reasons(sample_data: Path):
    with Catalog.in_dir(sample_data) as cat:
        model = SimilarModel.fit(cat)
    for episode_id in model.ids:
        picked, _ = model.similar(episode_id, 10)
        for item in picked:
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
        assert 0 < item["score"] < 1 and isinstance(item["reasons"], list)
    assert body["similar"][0]["reasons"]
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


@pytest.mark.parametrize("path", ["/similar/{}", "/api/v1/episodes/{}", "/episodes/{}"])
def test_a_404_does_not_repeat_a_long_id(client, path: str):
    resp = client.get(path.format("x" * 100_000))
    assert resp.status_code == 404
    body = resp.get_data(as_text=True)
    assert "x" * 300 not in body and "100000 characters" in body
    assert len(body) < 20_000  # the 404 page with the site's layout is about 12 KB; JSON well under 1 KB


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


@pytest.mark.parametrize("body", ["[" * 60000, '{"text": ' + "[" * 30000 + "]" * 30000 + "}", "{", '"text"', "[]",
                                  '{"text": 5}', "\xff\xfe", '{"text": "a", "x": ' + '{"y": ' * 8000 + "1" + "}" * 8001])
def test_a_posted_body_that_is_no_text_is_a_400(client, body: str):
    """A body nested deeper than Python's JSON decoder goes raised RecursionError: a 500."""
    for path in ("/similar", "/api/v1/similar"):
        resp = client.post(path, data=body.encode("utf-8", "surrogateescape"), content_type="application/json")
        assert resp.status_code == 400, (path, body[:20], resp.status_code)
        assert resp.get_json()["error"]["message"] == 'Send JSON like {"text": "..."}.'


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


def test_the_same_transcript_in_another_show_is_a_duplicate_whatever_its_score(tmp_path: Path):
    """A "best of" feed's byte-for-byte copy of a Go Time episode scored 0.797 against it on the site corpus (each
    show weighs its words by its own frequencies), below the text threshold, and was its first neighbour. The same
    transcript (``fields.text_print``) makes two episodes one recording; kept through a save and a fold-in."""
    topics = ["honey bees waggle dance forage hive", "volcano lava magma eruption crater", "sourdough starter flour",
              "rocket launch orbit payload", "jazz trumpet improvisation swing", "chess opening gambit endgame"]
    talk = " ".join(f"Today we talk about {t} and why {t} matters, part {n}." for n, t in enumerate(topics * 3))
    ids, shows, titles, notes, transcripts = [], [], [], [], []
    for n in range(24):
        ids.append(f"e{n}"), shows.append(f"s{n % 4}"), titles.append(f"{topics[n % 6].split()[0]} {n}")
        notes.append(topics[n % 6]), transcripts.append(f"{topics[n % 6]} {topics[(n + 1) % 6]} " * 30)
    transcripts[0] = talk
    ids.append("best-of/e0"), shows.append("best-of"), titles.append("The best of the year")
    notes.append("Our favourite moments, remastered: " + topics[3] * 4), transcripts.append(talk.upper())
    n = len(ids)
    fields = EpisodeFields(ids, shows, titles, notes, transcripts, ["en"] * n, [""] * n)
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert model.text_score(0, n - 1) < ModelParams().duplicate_threshold  # the scores alone do not say it
    gens = Generations(tmp_path / "model")
    model.save(gens)
    late = EpisodeFields(["late"], ["s1"], ["late"], ["jazz"], [topics[4] * 40], ["en"], [""])
    for m in (model, SimilarModel.load(gens), model.fold_in(late, "d2")):
        picked, duplicates = m.similar("e0", 10)
        assert [d.id for d in duplicates] == ["best-of/e0"] and "best-of/e0" not in {p.id for p in picked}
        assert [d.id for d in m.similar("best-of/e0", 10)[1]] == ["e0"]


def test_each_language_loses_its_own_function_words_not_the_others():
    """German function words do not pass for a topic, and a Dutch stop word ("door") stays an English topic."""
    german = ["und der die das mit einem nicht auch {t} {t} {t}", "und der die das mit einem nicht auch {t} {t}"]
    topics_de = ["bienen honig", "bienen wabe", "raketen start", "raketen nutzlast"] * 3
    topics_en = ["door hinge carpentry", "door lock carpentry", "rocket launch", "rocket payload"] * 3
    notes = [german[i % 2].format(t=t) for i, t in enumerate(topics_de)] + [t + " " + t for t in topics_en]
    n = len(notes)
    langs = ["de"] * len(topics_de) + ["en"] * len(topics_en)
    fields = EpisodeFields([f"e{i}" for i in range(n)], [f"s{i % 5}" for i in range(n)], [""] * n, notes,
                           [""] * n, langs, [""] * n)
    model = SimilarModel.fit_fields(fields, ModelParams())
    vocab = model.vectorizer.vocabulary_
    german_rows = model.matrix[: len(topics_de)]
    for word in ("und", "der", "die", "das", "mit", "einem", "nicht", "auch"):
        if word in vocab:
            assert german_rows[:, vocab[word]].nnz == 0, word
    for i in range(len(topics_de)):
        picked, _ = model.similar(f"e{i}", 3)
        for p in picked:
            assert not {"und", "der", "die", "das", "mit", "einem", "nicht", "auch"} & set(p.reasons), p
    assert model.matrix[len(topics_de):, vocab["door"]].nnz > 0  # English "door" is a topic here


def test_a_catalog_whose_every_word_is_in_every_episode_still_gets_a_model(tmp_path: Path) -> None:
    """25 templated titles and no transcripts: the document-frequency cut leaves no word; the import still works."""
    import json

    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl
    from podsearch.requests import SearchRequest
    from podsearch.service import Library

    lines = [{"id": f"e{n}", "show": "Templated", "title": f"Episode {n} of the show", "segments": []} for n in range(25)]
    path = tmp_path / "eps.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report = import_jsonl(load_config({"data": str(tmp_path / "data")}, environ={}), path)
    assert report.model == "refitted"
    library = Library(tmp_path / "data")
    try:
        assert library.search(SearchRequest(q="episode")).total == 25
        assert all(item.id != "e0" for item in library.similar("e0", 5).similar)
    finally:
        library.close()


def test_a_tag_is_the_same_tag_in_any_case(tmp_path: Path) -> None:
    """The dev labels spell one tag "P2P" once and "p2p" six times: P@5 counts them as one tag."""
    from podsearch.evaluation.similar import read_tags, tag_metrics

    path = tmp_path / "tags.tsv"
    path.write_text("guid\ttags\na\tP2P, research\nb\tp2p\nc\tmining\n", encoding="utf-8")
    tags = read_tags(path)
    assert tags == {"a": {"p2p", "research"}, "b": {"p2p"}, "c": {"mining"}}
    ranked = {"a": ["b", "c"], "b": ["a", "c"], "c": ["a", "b"]}
    figures = tag_metrics(lambda guid, k, allowed: ranked[guid][:k], tags, set(tags), k=1)
    assert figures["p@1"] == round(2 / 3, 4)  # a and b share p2p; c shares nothing
