"""The OpenSearch engine's analysis: OpenSearch's analyzers (one per language profile) and their Python twin,
which the answer builder uses to mark matches, give the same terms for the real multilingual feeds."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from opensearch_node import Cluster, request
from test_languages_corpus import FEEDS

from podsearch import languages
from podsearch.engines.opensearch.analysis import PythonAnalyzer, analysis_settings, python_analyzer

pytestmark = pytest.mark.opensearch

SAMPLES = [
    ("en", "The runners are running; don't stop O'Reilly's node.js talk on HTTP/2 and Python 3.12, 1,000 times!"),
    ("en", "Café naïve résumé — Ümlaut straße foo_bar real-gas wi-fi e-mail. Um, yeah, like, okay so ok"),
    ("en", "C# and F# beside C++ (C#/.NET); issue#5, ## headings, c## and x#y are not such words"),
    ("en", "AT&T, Q&A and R&D; a & b, x&&y, c#&f#, B&amp;B, 3&4, the .env of .NET and .5 ...net e.g. .x"),
    ("de", "Die Häuser und die Gärten für Kinder; Straße, das ist's"),
    ("fr", "l'homme et la femme, l’été"),
    ("tr", "İstanbul'da kitaplar"),
    ("plain", "麻実子のいもほり倶楽部2024 東京都 한국어 텍스트 ｶﾀｶﾅ ＡＢＣ"),
    # a word runs on through its combining marks (vowel signs, the virama, the nukta; not the danda)
    ("hi", "नमस्ते दोस्तों, क्या बात है। किसान को पानी और घास की ज़रूरत है॥ स्वास्थ्य-योग"),
    ("plain", "আমার সোনার বাংলা। வணக்கம் நண்பர்களே ਪੰਜਾਬੀ ગુજરાતી"),
    # asciifolding folds Latin letters alone: a mark written apart, Greek, Cyrillic, Hebrew points stay
    ("en", "cafe\u0301 nai\u0308ve café naïve Ångström ﬁsh"),
    ("plain", "שָׁלוֹם עוֹלָם مَرْحَبًا بِكُمْ"),
    ("ru", "ёлка и йод"),
    # asciifolding's own table (languages.ascii_fold): ø, æ, ß spelled, ŋ, ĸ, ƀ folded, ª left
    ("da", "Første spørgsmål om Ærø, ŋ ĸ ƀ ª œuvre"),
    # letters styled as mathematical letters are the letters they style, before the stop list (sp_styled, schema 12)
    ("nl", "𝐞𝐞𝐧 𝐧𝐢𝐞𝐮𝐰𝐞 𝐚𝐟𝐥𝐞𝐯𝐞𝐫𝐢𝐧𝐠, 𝐊𝐞𝐫𝐬𝐭 met 𝘬𝘰𝘧𝘧𝘪𝘦 over ℎ𝑢𝑖𝑧𝑒𝑛 ℝ𝕆𝕊𝔼 𝟐𝟎𝟐𝟒 en 𝖆𝖑𝖑𝖊𝖘"),
    ("en", "𝐓𝐡𝐞 𝐁𝐢𝐭𝐜𝐨𝐢𝐧 𝐬𝐡𝐨𝐰 𝘪𝘴 𝙗𝙖𝙘𝙠"),
    # digits written small or circled are the digits (sp_styled, schema 14)
    ("en", "The I²C bus, H₂O, O(n²), x³ and ① ② ⁴ ₉"),
    ("el", "ελληνικά άνθρωπος"),
    # half-width katakana: a voicing mark composed with its kana (ｶﾞ is ガ), else a character of its own (ｱﾞ, 代ﾞ),
    # or, after no letter, nothing; the katakana middle dot breaks words
    ("plain", "ﾒｷｼｺのﾀｺｽとｶﾞｽ代 ﾊﾟﾝﾀﾞ ｳﾞｨ ﾜﾞ カﾞ ｱﾞ 代ﾞ ｶﾞﾞ x ﾞ y ﾟ代 aﾞ トム・クルーズ ｶﾞｽ･ﾀｺ"),
    ("pt", "A somatização e as informações do coração; apresentação"),
    # the stop words of Snowball's lists (languages.index_stop_words), as Whoosh drops them: después, agora, après
    # are words
    ("es", "Después del apagón, además, actualmente, y cómo"),
    ("pt", "E agora, ali, é o início"),
    ("fr", "Après la pluie, alors"),
    ("ro", "Și acum, si acesta"),
    # an underscore joins a word, with no parts (as on Whoosh): schema 10
    ("en", "utm_source=rss OP_RETURN _generics_ foo_bar.baz __init__ a_1 snake_case_words op_return2 _ ___ x_ _y"),
    ("de", "Die utm_source und über_alles"),
    # a number written with thousands separators is one number ("1000"); any other comma between digits breaks the
    # word; an "other number" two digits spell is the digits, a fraction no word (issue 15, schema 15)
    ("en", "$1,000 and 12,500,000 or 1,000.50; 10,000th 3,14 1,2,3 1,0000 1,000,0000 x1,000 (1,000) 1,000,000,000,000,000"),
    ("de", "Es kostet 1,000 Euro, 3,5 Prozent"),
    ("en", "½ cup, ⅓ more, 1½ hours, step ⑩ after ⑴ and ⒈, ⓫ ➓ ¾"),
]


def _texts(corpus: Path) -> list[tuple[str, str]]:
    out = []
    for feed, lang in FEEDS.items():
        root = ET.parse(corpus / "feeds" / "real" / f"{feed}_200.xml").getroot()
        for item in root.iter("item"):
            for tag in ("title", "description"):
                text = item.findtext(tag) or ""
                text = html.unescape(re.sub(r"<[^>]+>", " ", text))[:2000]
                if text.strip():
                    out.append((languages.profile(lang), text))
    return out


def test_python_analysis_splits_words_as_opensearch_does(opensearch: Cluster, corpus: Path) -> None:
    """Tokens, parts, case, width, accents, stop words and CJK bigrams agree (unstemmed: the Snowball versions of
    Lucene and pystemmer differ for some words of some languages, Dutch most; the engine's matched terms come from
    the Python side, so a stem they disagree on only goes unmarked)."""
    settings = analysis_settings()
    for name, analyzer in list(settings["analyzer"].items()):
        settings["analyzer"][name + "_unstemmed"] = {**analyzer, "filter": [f for f in analyzer["filter"]
                                                                             if not f.startswith("sp_stem_")]}
    index = f"{opensearch.url}/analysis-parity"
    status, answer = request(index, "PUT", {"settings": {"analysis": settings}})
    assert status == 200, answer
    texts = SAMPLES + _texts(corpus)
    assert len({key for key, _ in texts}) >= 10
    total = agree = 0
    for key, text in texts:
        status, answer = request(f"{index}/_analyze", "POST", {"analyzer": f"sp_{key}_unstemmed", "text": text})
        assert status == 200, answer
        theirs = Counter(t["token"] for t in answer["tokens"])
        unstemmed = PythonAnalyzer(key)
        unstemmed.stem = None
        ours = Counter(unstemmed.texts(text))
        if (key, text) in SAMPLES:
            assert ours == theirs, text
        total += sum(theirs.values())
        agree += sum((theirs & ours).values())
    # what differs: letters of Unicode's mathematical alphabets, emoji sequences
    assert agree / total >= 0.985, agree / total


def test_english_stems_mostly_agree(opensearch: Cluster, corpus: Path) -> None:
    """Lucene's English Snowball and pystemmer's are different releases ("universities": "univers" and
    "universiti"): nearly every English word still stems alike."""
    index = f"{opensearch.url}/analysis-english"
    status, answer = request(index, "PUT", {"settings": {"analysis": analysis_settings()}})
    assert status == 200, answer
    total = agree = 0
    for key, text in _texts(corpus):
        if key != "en":
            continue
        status, answer = request(f"{index}/_analyze", "POST", {"analyzer": "sp_en", "text": text})
        theirs = Counter(t["token"] for t in answer["tokens"])
        total += sum(theirs.values())
        agree += sum((theirs & Counter(python_analyzer("en").texts(text))).values())
    assert total > 5_000
    assert agree / total >= 0.98, agree / total


def test_ascii_text_is_analysed_as_any_text_is(corpus: Path) -> None:
    """Text of ASCII alone, curly quotes and dashes aside (most of a transcript), is analysed lower-cased at once
    with a regular expression of ASCII words; its terms and spans must be those of the letter-by-letter analysis
    (``_unicode_spans``), which the test above holds to OpenSearch's."""
    import random

    from podsearch.ingest.transcripts import parse_transcript

    texts = [text for _, text in SAMPLES] + [
        "it’s a ‘quote’ — “x”…y–z a…b a’b’c x’ y ’x", "'a' b' x'.y rock'n'roll C#'s c#sharp c## c++x",
        "U.S.A. e.g. 2:2 1,000.5 a.b:c x_y foo__bar 3.12.1", "Straße İstanbul café"]
    rng = random.Random(3)
    for path in sorted((corpus / "site" / "transcripts").rglob("*.json"))[::20]:
        segments = parse_transcript(path.read_bytes(), "application/json", url=str(path))
        texts += [s.text for s in segments]
    assert len(texts) > 3000 and sum(not t.isascii() for t in texts) > 30
    for key in ("en", "de", "fr"):
        analyzer = PythonAnalyzer(key)
        for text in texts:
            reference = list(analyzer._unicode_spans(text))
            assert list(analyzer.spans(text)) == reference, (key, text)
            assert analyzer.texts(text) == [t for t, _, _ in reference], (key, text)
            wanted = {t for t, _, _ in reference if rng.random() < 0.2}
            assert analyzer.term_spans(text, wanted) == [s for s in reference if s[0] in wanted], (key, text)


ACCENTED = [
    ("pt", "Como surge a somatização? As informações do coração, a apresentação da experiência com os florais"),
    ("es", "Hablamos de la energía de las baterías y de la tecnología"),  # (información: the two Snowballs differ)
    ("de", "Im Café über die Häuser und Gärten"),
    ("fr", "Les élèves à l'école préférée"),
    ("it", "La città e l'attività dell'università"),
    ("en", "Café naïve résumé"),
]


def test_an_accented_word_is_also_indexed_as_its_stem_written_without_accents(opensearch: Cluster) -> None:
    """In a language stemmed before its accents are folded (not English), the index holds an accented word's stem
    and, at its place, the stem of it written without accents (sp_unaccented, sp_once: "somatização" is "somatiz"
    and "somatizaca", what "somatizacao" typed is), as Whoosh's index does; queries are read one stem a word. The
    node and the twin agree, stemmed (until the evening of 5 December 2026 the node held "somatiz" alone: "somatizacao", "energia"
    found nothing on OpenSearch)."""
    index = f"{opensearch.url}/analysis-unaccented"
    status, answer = request(index, "PUT", {"settings": {"analysis": analysis_settings()}})
    assert status == 200, answer
    for key, text in ACCENTED:
        for suffix, parts in (("", True), ("_q", False)):
            status, answer = request(f"{index}/_analyze", "POST", {"analyzer": f"sp_{key}{suffix}", "text": text})
            assert status == 200, answer
            theirs = Counter(t["token"] for t in answer["tokens"])
            assert Counter(PythonAnalyzer(key, parts=parts).texts(text)) == theirs, (key, suffix, text)
    terms = python_analyzer("pt").texts("somatização informações")
    assert terms == ["somatiz", "somatizaca", "inform", "informaco"], terms
    assert python_analyzer("pt", parts=False).texts("somatização somatizacao") == ["somatiz", "somatizaca"]
    assert python_analyzer("en").texts("Café résumé") == ["cafe", "resum"]  # (English folds first: one stem)


def test_every_kana_with_a_half_width_voicing_mark_is_read_as_the_node_reads_it(opensearch: Cluster) -> None:
    """cjk_width composes a half-width voicing mark with the katakana before it (``ｶﾞｽ`` is ``ガス``); until 6 December
    2026 the twin read it as a character of its own (``カ゛``, ``゛ス``), and a match on ``ｶﾞｽ`` was not marked."""
    index = f"{opensearch.url}/analysis-kana"
    status, answer = request(index, "PUT", {"settings": {"analysis": analysis_settings()}})
    assert status == 200, answer
    kana = [*range(0x3041, 0x3097), *range(0x30A1, 0x30FB), *range(0x30FC, 0x30FF), *range(0xFF66, 0xFF9E)]
    texts = [chr(c) + mark + "ｽ" for c in kana for mark in "ﾞﾟ"]
    differ = []
    for text in texts:
        status, answer = request(f"{index}/_analyze", "POST", {"analyzer": "sp_plain", "text": text})
        theirs = [t["token"] for t in answer["tokens"]]
        if python_analyzer("plain").texts(text) != theirs:
            differ.append((text, theirs))
    assert differ == [], differ[:10]
    assert python_analyzer("plain").texts("ｶﾞｽ代") == ["ガス", "ス代"]
    assert [text for _, *text in python_analyzer("plain").spans("ｶﾞｽ代")] == [[0, 3], [2, 4]]  # the marks at ｶﾞｽ, ｽ代
