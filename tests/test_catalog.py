"""The SQLite catalog: idempotent upserts, gone marking, round trips."""

from __future__ import annotations

from pathlib import Path

from podsearch.catalog import Catalog
from podsearch.episodes import Episode, Person, Segment, Show


def _episode(i: int, text: str = "hello") -> Episode:
    return Episode(id=f"ep/{i}?x=1", show_id="s", title=f"Episode {i}", persons=[Person("Ana", role="host")],
                   segments=[Segment(text=text, start=1.5, end=3.0, speaker="Ana")])


def test_upsert_is_idempotent_and_detects_changes(tmp_path: Path):
    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="Show"))
        assert cat.upsert_episode(_episode(1)) == "new"
        assert cat.upsert_episode(_episode(1)) == "unchanged"
        assert cat.upsert_episode(_episode(1, "changed")) == "updated"
        ep = cat.episode("ep/1?x=1")
        assert ep is not None and ep.segments == [Segment(text="changed", start=1.5, end=3.0, speaker="Ana")]
        assert ep.persons == [Person("Ana", role="host")]


def test_gone_episodes_are_kept_and_marked_unless_pruned(tmp_path: Path):
    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="Show"))
        for i in range(3):
            cat.upsert_episode(_episode(i))
        assert cat.mark_gone("s", ["ep/0?x=1", "ep/1?x=1"]) == 1
        assert cat.counts()["episodes"] == 3 and cat.counts()["episodes_gone"] == 1
        assert cat.mark_gone("s", ["ep/0?x=1"], prune=True) == 2
        assert cat.counts()["episodes"] == 1
        assert cat.counts()["segments"] == 1  # segments of deleted episodes go with them


def test_transaction_rolls_back_on_error(tmp_path: Path):
    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="Show"))
        try:
            with cat.transaction():
                cat.upsert_episode(_episode(1))
                raise RuntimeError("crash mid-feed")
        except RuntimeError:
            pass
        assert cat.episode("ep/1?x=1") is None


def test_the_write_ahead_log_shrinks_back_after_a_big_import(tmp_path: Path, monkeypatch):
    """A big transaction grows the WAL; with the server's connection still open it would keep that size."""
    monkeypatch.setattr(Catalog, "WAL_LIMIT_BYTES", 256 << 10)
    wal = tmp_path / (Catalog.FILENAME + "-wal")
    with Catalog.in_dir(tmp_path) as server, Catalog.in_dir(tmp_path) as importer:
        assert server.counts()["episodes"] == 0
        importer.upsert_show(Show(id="s", title="Show"))
        with importer.transaction():
            for i in range(300):
                importer.upsert_episode(_episode(i, "word " * 2000))
        grown = wal.stat().st_size
        assert grown > 2 << 20
        importer.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        importer.upsert_episode(_episode(1000))  # the next write starts the log over, cut to the limit
        assert wal.stat().st_size <= 256 << 10 < grown
        assert server.counts()["episodes"] == 301


def test_what_a_query_may_call_an_episode_follows_it(tmp_path: Path):
    """The names table (names.py): written with the episode, changed with its title, gone with it; a catalog of
    schema 3 gets its episodes' names when opened."""
    from dataclasses import replace

    from podsearch.names import episode_names

    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="Show"))
        first = replace(_episode(7), number=70)
        cat.upsert_episode(first)
        assert episode_names(first.title, "s", 70) == {"episode 7", "#s 7", "#s 70"}
        assert cat.called(["episode 7"], 5) == cat.called(["#s 70"], 5) == cat.called(["#s 7"], 5) == ["ep/7?x=1"]
        cat.upsert_episode(replace(first, title="Herons", number=None))  # renamed, unnumbered: no name left
        assert cat.called(["episode 7", "#s 7", "#s 70"], 5) == []
        cat.upsert_episode(first)
        assert cat.mark_gone("s", []) == 1 and cat.called(["episode 7"], 5) == []  # gone: called nothing
        assert cat.mark_gone("s", [], prune=True) == 1
        assert cat.db.execute("SELECT COUNT(*) FROM names").fetchone()[0] == 0
        cat.upsert_episode(first)
        cat.db.executescript("DROP TABLE names; UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    with Catalog.in_dir(tmp_path) as cat:
        assert cat.schema_version() == 8
        assert cat.called(["episode 7"], 5) == cat.called(["#s 70"], 5) == ["ep/7?x=1"]


def test_people_keep_the_spelling_with_capitals(tmp_path: Path):
    """The people table (schema 5): a person's name as written, by key; a spelling with capitals wins over one
    without, else the first stays; a catalog of schema 4 gets its episodes' people when opened."""
    from dataclasses import replace

    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="Show"))
        cat.upsert_episode(replace(_episode(1), persons=[Person("ian mcallister")]))
        cat.upsert_episode(replace(_episode(2), persons=[Person("Ian McAllister")],
                                   segments=[Segment("Hello.", speaker="Ada deLuca")]))
        cat.upsert_episode(replace(_episode(3), persons=[Person("Ian Mcallister")]))
        assert cat.person_names(["ian mcallister", "ada deluca", "nobody"]) == {
            "ian mcallister": "Ian McAllister", "ada deluca": "Ada deLuca"}
        cat.db.executescript("DROP TABLE people; UPDATE meta SET value = '4' WHERE key = 'schema_version';")
    with Catalog.in_dir(tmp_path) as cat:
        assert cat.schema_version() == 8
        assert cat.person_names(["ian mcallister", "ada deluca"]) == {
            "ian mcallister": "Ian McAllister", "ada deluca": "Ada deLuca"}


def test_a_speaker_label_that_names_no_one_is_no_person(tmp_path: Path):
    """"Q", "Jingle", "Break" and "Question" were people of the site corpus's facets and typeahead (speaker labels of
    its transcripts): the people of an episode are its persons and the speakers that name someone."""
    from dataclasses import replace

    from podsearch.documents import CatalogDocuments
    from podsearch.episodes import people_named

    labels = ["Q", "Jingle", "Break", "Question", "Questions", "Ads", "Speaker 2", "Audience Member", "Intro", "Ada deLuca",
              "Iron Man"]  # ("Questions" was still offered as a person by the typeahead: the plural, 5 December)
    ep = replace(_episode(1), segments=[Segment(f"Line {n}.", speaker=label) for n, label in enumerate(labels)])
    assert people_named(ep) == ["Ana", "Ada deLuca", "Iron Man"]
    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="Show"))
        cat.upsert_episode(ep)
        assert set(cat.person_names(["q", "jingle", "ada deluca"])) == {"ada deluca"}
        doc = next(iter(CatalogDocuments(cat).documents([ep.id])))
        assert "Jingle" not in doc.speakers and "Ada deLuca" in doc.speakers


def test_an_alias_goes_with_its_episode(tmp_path: Path):
    """An item's new id recorded for an episode (ingest/identity.py:reconcile) is deleted with the episode."""
    with Catalog.in_dir(tmp_path) as cat:
        cat.upsert_show(Show(id="s", title="S"))
        cat.upsert_episode(Episode(id="old", show_id="s", title="One", published="2024-01-01T10:00:00Z"))
        cat.add_alias("s", "new", "old")
        assert cat.aliases("s", ["new", "other"]) == {"new": "old"} and cat.aliases("t", ["new"]) == {}
        assert cat.mark_gone("s", [], prune=True) == 1 and cat.aliases("s", ["new"]) == {}
