"""The real non-English feeds of the corpus: each language's titles found from other inflections, Japanese
found from a fragment, the language facet equal to what the feeds declare, and detection when they do not.

The feeds are parsed and stored directly (no fetching: their transcript links point at the internet).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from podsearch import languages
from podsearch.catalog import Catalog
from podsearch.documents import CatalogDocuments
from podsearch.ingest.feeds import parse_feed
from podsearch.requests import SearchRequest
from podsearch.service import Library

pytestmark = pytest.mark.slow

FEEDS = {  # Podcast Index id: the language the feed declares
    "4136555": "da", "4246304": "ro", "5652208": "nl", "6566330": "nl", "6789137": "nl", "6747728": "es",
    "7303283": "es", "6864091": "de", "7132985": "de", "7579747": "de", "7508737": "ja", "6569725": "sv",
    "7155284": "pt", "6945761": "hi", "6268335": "en", "6599995": "en", "7171762": "en",
}

# (start of the episode's title, a query with the title's words in another inflection); "AND" makes every
# word count, so the any-word fallback cannot find the episode through one word alone.
INFLECTED = [
    ("da", "Dreyfusaffæren og det splittede Frankrig", "splittede AND Frankrigs"),
    ("da", "Tito - Jugoslaviens modsætningsfulde marskal", "Jugoslavien AND marskaller"),
    ("ro", "METOPE cu Theodor Paleologu și invitatul Horia-Roman Patapievici", "invitați AND Patapievici"),
    ("nl", "6. Rechtse partijen weigeren toon te matigen", "partij AND weigeren"),
    ("nl", "2. Mag je embryo’s kweken voor onderzoek?", "embryo AND kweek AND onderzoeken"),
    ("nl", "Verslaafd Op Doktersrecept!", "doktersrecepten"),
    ("es", "136 - Los 10 mandamientos del cable coaxial", "mandamiento AND conector AND coaxiales"),
    ("es", "135 - Recordando la Dana y transformación", "recordar AND transformaciones"),
    ("de", "Die meisten Wärmepumpen sind falsch ausgelegt", "Wärmepumpe AND falsche"),
    ("de", "Balkonkraftwerk mit Speicher aufbauen", "Balkonkraftwerke AND Speichern"),
    ("de", "Verschollen im Bermudadreieck", "Bermudadreiecks"),
    ("sv", "107. Hur springer man bra på Lidingöloppet?", "springa AND Lidingöloppets"),
    ("pt", "A CRUELDADE como Causa da Doença", "crueldades AND doenças"),
    ("pt", "O ORGULHO como Causa da Doença", "orgulhos"),
]

JAPANESE = [  # fragments of titles of 清順★麻実子のいもほり倶楽部
    ("123-1 古民家でたこ焼きパーティ", "たこ焼き"),
    ("123-1 古民家でたこ焼きパーティ", "古民家"),
    ("122-1 新宿御苑の中心で母に感謝", "新宿御苑"),
    ("121-2 夢工房じゃないけど夢グループ", "夢工房"),
]


def _path(corpus: Path, feed: str) -> Path:
    return corpus / "feeds" / "real" / f"{feed}_200.xml"


@pytest.fixture(scope="module")
def real(corpus: Path, tmp_path_factory: pytest.TempPathFactory):
    data = tmp_path_factory.mktemp("real") / "data"
    data.mkdir(parents=True)
    counts: Counter[str] = Counter()
    with Catalog.in_dir(data) as catalog:
        with catalog.transaction():
            for feed in FEEDS:
                parsed = parse_feed(_path(corpus, feed).read_bytes(), str(_path(corpus, feed)), show_id=f"feed-{feed}")
                catalog.upsert_show(parsed.show)
                for ep in parsed.episodes:
                    catalog.upsert_episode(ep)
                counts[feed] = len(parsed.episodes)
        library = Library(data)
        library.engine.sync(CatalogDocuments(catalog), full=True)
        titles = {ep.id: ep.title for ep in catalog.episodes()}
    yield {"library": library, "titles": titles, "counts": counts}
    library.close()


def _top(real: dict, q: str, n: int = 3, **kw) -> list[str]:
    result = real["library"].search(SearchRequest(q=q, per_page=n, **kw))
    return [real["titles"][h.id] for h in result.hits]


def test_every_language_of_the_feeds_is_present(real: dict) -> None:
    assert set(FEEDS.values()) >= {"da", "ro", "nl", "es", "de", "ja"}
    assert {lang for lang, _, _ in INFLECTED} | {"ja"} == set(FEEDS.values()) - {"en", "hi"}


@pytest.mark.parametrize("lang, title, q", INFLECTED, ids=[f"{lang}-{q}" for lang, _, q in INFLECTED])
def test_another_inflection_finds_the_title_in_the_top_3(real: dict, lang: str, title: str, q: str) -> None:
    top = _top(real, q)
    assert any(t.startswith(title) for t in top), (q, top)
    # the same query restricted to its language finds it too
    assert any(t.startswith(title) for t in _top(real, q, language=lang))


@pytest.mark.parametrize("title, fragment", JAPANESE, ids=[f for _, f in JAPANESE])
def test_a_fragment_of_a_japanese_title_finds_its_episode(real: dict, title: str, fragment: str) -> None:
    top = _top(real, fragment)
    assert any(t.startswith(title) for t in top), (fragment, top)


def _declared(path: Path) -> str:
    channel = ET.parse(path).getroot().find("channel")
    assert channel is not None
    return languages.primary(channel.findtext("language") or "")


def test_the_language_facet_counts_match_the_feeds(real: dict, corpus: Path) -> None:
    expected: Counter[str] = Counter()
    for feed, lang in FEEDS.items():
        assert _declared(_path(corpus, feed)) == lang  # read from the XML, independently of the parser
        expected[lang] += real["counts"][feed]
    result = real["library"].search(SearchRequest(q="", per_page=1))
    assert {row["value"]: row["count"] for row in result.facets["language"]} == dict(expected)
    assert result.total == sum(expected.values())
    assert {row["label"] for row in result.facets["language"]} >= {"Danish", "Romanian", "Dutch", "German",
                                                                    "Spanish", "Japanese"}


@pytest.mark.parametrize("feed, lang", [("6569725", "sv"), ("7155284", "pt"), ("4136555", "da"), ("6864091", "de"),
                                        ("7508737", "ja"), ("4246304", "ro")])
def test_a_feed_that_declares_no_language_is_detected(corpus: Path, feed: str, lang: str) -> None:
    data = re.sub(rb"<language>.*?</language>", b"", _path(corpus, feed).read_bytes(), flags=re.S)
    episodes = parse_feed(data, f"{feed}.xml").episodes
    found = Counter(languages.primary(ep.language) for ep in episodes)
    assert found[lang] >= 0.95 * len(episodes), found
