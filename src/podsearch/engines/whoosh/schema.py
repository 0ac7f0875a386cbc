"""The Whoosh schema and the document every episode becomes."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from whoosh.fields import COLUMN, DATETIME, ID, KEYWORD, NUMERIC, STORED, TEXT, Schema

from ... import languages
from ..base import Document, facet_values, listing_key, people
from .analysis import mark, plain_analyzer, spoken_analyzer

# 2: text analysed per language (the mark), the analysis field; 3: the segments field (where each transcript
# segment's tokens start, and its words); 4: a word's closing "#" kept ("C#", "F#": analysis.TOKEN_PATTERN);
# 5: a joined word at its first part's position ("stay-at-home" where "stay" is: a phrase typed apart finds it);
# 6: a stop word keeps its place ("javascript python" is not a phrase of "JavaScript and Python"); 7: the persons
# field holds the transcript's speakers too (base.people); 8: the order column (base.listing_key: same-date and
# undated episodes in a list by date); 9: a dot that opens a word kept (".NET", ".env": analysis.TOKEN_PATTERN);
# 10: an ampersand joins words ("AT&T", "Q&A": analysis.JOINING); 11: half-width katakana read full-width,
# full-width letters as ASCII (languages.narrow: "ﾀｺ" is "タコ", as OpenSearch's cjk_width reads it); 12: an accented
# word of another Snowball language also as the stem of it written without accents (analysis.SpokenAnalyzer.
# _unaccented: "informacoes"); 13: a word holds the combining marks after its letters (languages.MARKS: Hindi
# "क्या" is one word, not "क" and "य"; so every Indic script, Thai, Hebrew with points, an accent written apart);
# 14: a word of another language than English is a stop word as the list spells it, before its accents are folded
# (analysis._Profile, as on OpenSearch: Swedish "år" (year) is kept where "är" (is) is dropped; "dónde", "één");
# 15: Dutch is stemmed by Snowball's first Dutch algorithm (languages.SNOWBALL "dutch_porter"), Lucene's, as on
# OpenSearch: pystemmer 3's "dutch" is Snowball 3's new one ("alle" "al" there, "all" on the node)
# 16: letters styled as mathematical letters read as the letters they style, before the stop list (languages.lower:
# "𝐞𝐞𝐧" is the stop word "een", "𝐄𝐞𝐧" no longer the capital "Een")
# 17: accents folded as OpenSearch's asciifolding folds them (languages.ascii_fold, its table read from the node),
# English, other languages and the word list alike: "første" is "forst" ("forste" finds it), "außerdem" "ausserdem"
# 18: a number written with thousands separators is one word ("1,000" is "1000": languages.THOUSANDS; it was "1" and
# "000"), digits circled with two figures or in parentheses are the digits ("⑩" is "10", "⑴" "1"), and the other
# "other numbers" are no word characters ("½": languages.NOT_WORD_NUMBERS), as on OpenSearch (issue 15)
# 19: an English word ending in "ly" or "lies" is written "li", not Snowball-stemmed (languages.ly_apart: "fairly" is
# "fairli", no longer "fair", the stem of "fairness"; "families" and "family" "famili"), as on OpenSearch (issue 15)
SCHEMA_VERSION = "19"


def make_schema(lang: str = "") -> Schema:
    """The index's schema; with ``lang``, the same fields analysed for that profile (to parse queries)."""
    ana = spoken_analyzer(lang)
    return Schema(
        id=ID(stored=True, unique=True),
        show_id=ID(stored=True, sortable=True),
        show=TEXT(analyzer=ana, stored=True),
        title=TEXT(analyzer=ana, stored=True),
        persons=TEXT(analyzer=ana, stored=True),
        person_key=KEYWORD(commas=True, lowercase=True, stored=False),
        notes=TEXT(analyzer=ana),
        transcript=TEXT(analyzer=ana),
        words=TEXT(analyzer=plain_analyzer(), phrase=False),
        published=DATETIME(stored=True, sortable=True),
        order=COLUMN(),  # where an episode goes among those of its date in a list by date (base.listing_key), UTF-8
        year=ID(stored=False, sortable=True),
        duration=NUMERIC(stored=True, sortable=True),
        language=ID(stored=True, sortable=True),
        analysis=ID(stored=False),  # the analysis profile (languages.profile): queries are analysed per profile
        link=STORED,
        audio_url=STORED,
        content_hash=STORED,
        segments=STORED,  # segment_table(): the transcript's token positions segment by segment
    )


_QUERY_SCHEMAS: dict[str, Schema] = {}


def query_schema(key: str) -> Schema:
    """The schema with its text fields analysed for profile ``key``: the query parser reads fields from it."""
    schema = _QUERY_SCHEMAS.get(key)
    if schema is None:
        schema = _QUERY_SCHEMAS[key] = make_schema(key)
    return schema


def whoosh_fields(doc: Document) -> dict[str, Any]:
    """The fields Whoosh indexes for a document (text marked with its language's analysis profile)."""
    key = languages.profile(doc.language)
    persons = ", ".join(people(doc))
    facets = facet_values(doc)
    fields: dict[str, Any] = {
        "id": doc.id,
        "show_id": doc.show_id,
        "show": mark(key, doc.show),
        "title": mark(key, doc.title),
        "persons": mark(key, persons),
        "person_key": ",".join(facets["person"]),
        "notes": mark(key, doc.notes),
        "transcript": mark(key, doc.transcript),
        "words": unique_words(doc.title, doc.show, doc.notes, doc.transcript),
        "year": facets["year"],
        "language": doc.language,
        "analysis": key,
        "link": doc.link,
        "audio_url": doc.audio_url,
        "content_hash": doc.content_hash,
        "order": listing_key(doc.id, doc.number).encode(),
    }
    if doc.segments:
        fields["segments"] = segment_table(key, doc.segments)
    if key != "en":  # the stored fields are shown as written, without the mark
        fields.update(_stored_show=doc.show, _stored_title=doc.title, _stored_persons=persons)
    if doc.published:
        fields["published"] = doc.published
    if doc.duration is not None:
        fields["duration"] = int(doc.duration)
    return fields


def segment_table(key: str, segments: tuple[str, ...]) -> bytes:
    """Where each segment's tokens start in the transcript field, and each segment's length in words: uint32
    arrays, the starts then the lengths. The transcript field is the non-empty segments joined by newlines,
    and no token spans a newline, so segment i holds the token positions from its start to the next's (an
    empty segment holds none). The moments of a search are chosen from this and the terms' positions
    (``WhooshEngine.segment_counts``) without reading the segments."""
    counts = np.asarray(_counting_analyzer().token_counts(key, segments), dtype=np.uint32)
    starts = np.zeros(len(segments), dtype=np.uint32)
    np.cumsum(counts[:-1], out=starts[1:])
    words = np.fromiter(map(len, map(str.split, segments)), dtype=np.uint32, count=len(segments))
    return starts.tobytes() + words.tobytes()


def read_segment_table(value: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, words) of a stored :func:`segment_table`, or None when there is none."""
    if not isinstance(value, bytes) or not value or len(value) % 8:
        return None
    table = np.frombuffer(value, dtype=np.uint32)
    half = len(table) // 2
    return table[:half], table[half:]


@lru_cache(maxsize=1)
def _counting_analyzer() -> Any:
    return spoken_analyzer()


def unique_words(*texts: str) -> str:
    """Each word once: the spelling and typeahead field only needs document frequencies, and a
    transcript repeats its words many times over (this halves the analysis of that field)."""
    return " ".join(dict.fromkeys(languages.words(languages.lower(" ".join(texts)))))
