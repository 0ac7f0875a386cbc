"""Fold-in: a few added episodes go into the saved similarity model without a refit, close to what a refit gives.

Real catalogs (eight shows of the corpus site, or the bundled sample), the real pipeline (``rebuild_derived``,
``podsearch import``) and the real saved model generations on disk.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from podsearch.catalog import Catalog
from podsearch.cli import main
from podsearch.config import load_config
from podsearch.episodes import Episode
from podsearch.generations import Generations
from podsearch.progress import Progress
from podsearch.reindex import Report, ingest, rebuild_derived
from podsearch.similar import FOLD_IN_SHARE, ModelParams, SimilarModel
from podsearch.web import create_app

SHOWS = ["afk", "backstage", "bigtent", "brainscience", "founderstalk", "rfc", "shipit", "spotlight"]  # 313 episodes
BEES = "tag:example.org,2024:field-notes/ep-01"


@pytest.fixture(scope="module")
def site_build(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Episode]]:
    """Eight shows of the corpus site, indexed and fitted without a reserve of 20 episodes (returned, to add later)."""
    data = tmp_path_factory.mktemp("foldin") / "data"
    config = load_config({"data": str(data)}, environ={})
    with Catalog.in_dir(data) as cat:
        report = ingest(config, cat, [str(corpus / "site" / "feeds" / f"{show}.xml") for show in SHOWS])
        assert (report.new, report.errors) == (313, [])
        ids = sorted(cat.hashes())
        reserve = [cat.episode(i) for i in ids[5::15][:20]]
        with cat.transaction():
            for ep in reserve:
                cat.delete_episode(ep.id)
    assert rebuild(data).model == "refitted"  # 293 episodes: up to 14 folded in
    return data, reserve


@pytest.fixture
def site(site_build: tuple[Path, list[Episode]], tmp_path: Path) -> tuple[Path, list[Episode]]:
    """A private copy of the build, and the reserve."""
    data = tmp_path / "data"
    shutil.copytree(site_build[0], data)
    return data, site_build[1]


def rebuild(data: Path, **kwargs: object) -> Report:
    report = Report()
    with Catalog.in_dir(data) as cat:
        rebuild_derived(data, cat, report, Progress(), **kwargs)  # type: ignore[arg-type]
    return report


def put_back(data: Path, episodes: list[Episode]) -> None:
    with Catalog.in_dir(data) as cat, cat.transaction():
        for ep in episodes:
            assert cat.upsert_episode(ep) == "new"


def saved(data: Path) -> dict:
    return SimilarModel.saved_params(Generations(data / "model"))


def load(data: Path) -> SimilarModel:
    return SimilarModel.load(Generations(data / "model"))


def test_a_few_added_episodes_are_folded_in_close_to_a_full_refit(site: tuple[Path, list[Episode]]):
    data, reserve = site
    added = reserve[:12]
    assert len(added) <= FOLD_IN_SHARE * len(load(data).ids)
    first = Generations(data / "model").current()
    put_back(data, added)
    report = rebuild(data)
    assert report.model == "folded in 12"
    assert Generations(data / "model").current() != first  # a new generation, swapped in whole
    assert saved(data)["folded"] == 12
    folded = load(data)
    with Catalog.in_dir(data) as cat:
        assert sorted(folded.ids) == sorted(cat.hashes())
        full = SimilarModel.fit(cat)
    assert saved(data)["digest"] == full.digest  # the next run finds the model in line with the catalog
    assert rebuild(data).model == "unchanged"

    def top(model: SimilarModel, episode_id: str, k: int = 10) -> list[str]:
        picked, duplicates = model.similar(episode_id, k)
        return [n.id for n in picked + duplicates][:k]

    # The added episodes' own lists: nearly those of a refit (only the vocabulary and weights differ a little).
    overlap = [len(set(top(folded, ep.id)) & set(top(full, ep.id))) / 10 for ep in added]
    assert np.mean(overlap) >= 0.8 and min(overlap) >= 0.5, overlap
    # The old episodes whose refitted top 10 holds an added episode mostly have it too (inserted into their list).
    pairs = [(o, ep.id) for ep in added for o in full.ids if o != ep.id and ep.id in top(full, o)]
    assert len(pairs) >= 20
    kept = np.mean([ep in top(folded, o) for o, ep in pairs])
    assert kept >= 0.8, kept
    # The stored scores are the folded model's own (text and mentions), and its text scores are the refit's up to
    # the drift of the weights. (An old episode naming an added one by number is only linked by the next refit.)
    for ep in added:
        i, f = folded.position[ep.id], full.position[ep.id]
        own, text, refit = folded.scores(i), folded.scores(i, mentions=False), full.scores(f, mentions=False)
        for j, score in zip(folded.neigh_idx[i][:10].tolist(), folded.neigh_score[i][:10].tolist()):
            assert score == pytest.approx(own[j], abs=1e-5)
            assert text[j] == pytest.approx(refit[full.position[folded.ids[j]]], abs=0.05)
    print(f"fold-in vs refit: top-10 overlap of the added {np.mean(overlap):.3f} (min {min(overlap)}), "
          f"added kept in old lists {kept:.3f} of {len(pairs)}")


def test_an_added_copy_enters_the_list_of_the_episode_it_copies(site: tuple[Path, list[Episode]]):
    data, _ = site
    with Catalog.in_dir(data) as cat:
        source = cat.episode(sorted(cat.hashes())[40])
        copy = cat.episode(source.id)
        copy.id = source.id + "-rebroadcast"
        copy.title = "Rerun: " + source.title
        with cat.transaction():
            assert cat.upsert_episode(copy) == "new"
    assert rebuild(data).model == "folded in 1"
    model = load(data)
    picked, duplicates = model.similar(source.id, 10)
    assert copy.id in [n.id for n in duplicates + picked][:2]
    assert model.neigh_idx[model.position[source.id]][0] == model.position[copy.id]
    assert model.neigh_idx[model.position[copy.id]][0] == model.position[source.id]


def test_removed_changed_new_params_full_or_too_many_mean_a_full_refit(sample_data: Path):
    data = sample_data  # 36 episodes: one may be folded in, two may not

    def add(*names: str) -> None:
        with Catalog.in_dir(data) as cat, cat.transaction():
            for name in names:
                ep = cat.episode(BEES)
                ep.id, ep.title = name, f"{name}: {ep.title}"
                assert cat.upsert_episode(ep) == "new"

    with Catalog.in_dir(data) as cat:  # removed
        cat.delete_episode(sorted(cat.hashes())[7])
    assert rebuild(data).model == "refitted"
    with Catalog.in_dir(data) as cat:  # changed
        ep = cat.episode(sorted(cat.hashes())[9])
        ep.title += " (remastered)"
        assert cat.upsert_episode(ep) == "updated"
    assert rebuild(data).model == "refitted"
    add("one")  # added, but other parameters
    assert rebuild(data, params=ModelParams(neighbours=30)).model == "refitted"
    assert saved(data)["folded"] == 0
    add("two")  # added, with --full
    assert rebuild(data, full=True, params=ModelParams(neighbours=30)).model == "refitted"
    add("three", "four")  # 2 > 5% of 37
    assert rebuild(data, params=ModelParams(neighbours=30)).model == "refitted"
    add("five")  # while one is folded in
    assert rebuild(data, params=ModelParams(neighbours=30)).model == "folded in 1"
    assert len(load(data).ids) == 40


def test_the_folded_count_adds_up_across_runs_until_the_threshold(site: tuple[Path, list[Episode]]):
    data, reserve = site
    put_back(data, reserve[:6])
    assert rebuild(data).model == "folded in 6"
    put_back(data, reserve[6:12])
    assert rebuild(data).model == "folded in 6"
    assert saved(data)["folded"] == 12
    put_back(data, reserve[12:15])  # 15 since the fit: refit, and the count starts again
    assert rebuild(data).model == "refitted"
    assert saved(data)["folded"] == 0 and len(load(data).ids) == 308


def _export_line(path: Path, episode_id: str, title: str, text: str) -> Path:
    line = {"id": episode_id, "show": "Field Notes Reruns", "title": title,  # (a feed's show takes no import)
            "description": "<p>A rerun.</p>", "transcript": text, "language": "en"}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def test_similar_answers_for_an_episode_added_by_podsearch_import(sample_data: Path, runner, tmp_path: Path):
    with Catalog.in_dir(sample_data) as cat:
        bees = cat.episode(BEES)
    export = _export_line(tmp_path / "new.jsonl", "bees-rerun", "Rerun: " + bees.title, bees.transcript_text)
    result = runner.invoke(main, ["--data", str(sample_data), "import", str(export)])
    assert result.exit_code == 0, result.output
    assert "model: folded in 1" in result.output
    client = create_app(load_config({"data": str(sample_data)}, environ={}), {"TESTING": True}).test_client()
    resp = client.get(f"/similar/{quote('bees-rerun', safe='')}")
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert [i["id"] for i in body["duplicates"] + body["similar"]][0] == BEES
    body = client.get(f"/similar/{quote(BEES, safe='')}").get_json()
    assert "bees-rerun" in [i["id"] for i in body["duplicates"] + body["similar"]][:2]
    # A second import: 2 folded in would pass 5% of the sample's 36 episodes, so the count saved by the
    # first import makes this one refit.
    assert saved(sample_data)["folded"] == 1
    export = _export_line(tmp_path / "more.jsonl", "bees-rerun-2", "Rerun again", bees.transcript_text)
    result = runner.invoke(main, ["--data", str(sample_data), "import", str(export)])
    assert result.exit_code == 0 and "model: refitted" in result.output, result.output
    assert saved(sample_data)["folded"] == 0


def test_an_episode_of_a_show_the_model_never_saw_is_folded_in_with_the_global_weights(sample_data: Path, runner,
                                                                                       tmp_path: Path):
    with Catalog.in_dir(sample_data) as cat:
        bees = cat.episode(BEES)
    line = {"id": "guest-bees", "show": "Brand New Show", "show_id": "brand-new-show", "title": "Bees, again",
            "transcript": " ".join(bees.transcript_text.split()[: len(bees.transcript_text.split()) // 2])}
    (tmp_path / "new.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = runner.invoke(main, ["--data", str(sample_data), "import", str(tmp_path / "new.jsonl")])
    assert result.exit_code == 0 and "model: folded in 1" in result.output, result.output
    model = load(sample_data)
    assert model.can_fold_in() and "brand-new-show" not in model.weighting.show_freqs.shows
    picked, duplicates = model.similar("guest-bees", 3)
    assert [n.id for n in duplicates + picked][0] == BEES
