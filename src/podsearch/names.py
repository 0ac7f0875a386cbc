"""Episodes named by what a person types: their whole title, or their show and number.

Someone who types ``go time 140``, ``Go Time #140``, ``practical ai episode 206`` or ``talk python 453`` wants
that episode, and words alone do not find it first: "go", "time" and "140" are said in many episodes, and a
title's three words weigh little against an hour of transcript. So a query that *names* an episode is answered
with that episode first (``Library._ranked``), the rest ranked as usual. A query names an episode when, its
case, accents and punctuation aside:

- it is the episode's whole title, or the label before a title's separator (``Go Time #140`` for
  "Go Time #140: Generics"), when that holds a number (``Bitcoin Core 0.21.0``): a title of words alone
  ("Lightning Network Routing", "uv") is also a topic, and is ranked as one (a topical query that is such a
  title found a talk its graders judged barely relevant first);
- it is the show's title (or its first two words or more, ``talk python`` for "Talk Python To Me"; a leading
  "the" and a closing "podcast" may be left out), optionally "episode", "ep" or "no", then the episode's number
  (the feed's ``itunes:episode``, or the number after ``#`` or "episode" in the title);
- with the search limited to one show, the number alone (``140``, ``#140``, ``episode 140``).

A query with syntax (quotes, ``-word``, ``field:``, operators, patterns) names nothing: it says what it wants.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .engines.querytext import has_syntax

if TYPE_CHECKING:
    from .catalog import Catalog

MAX_NAMED = 5  # episodes a name may put first (several talks can share one title)
_SEPARATOR = re.compile(r"\s*(?::|\||\s[-–—]\s)\s*")  # "Go Time #140: Generics", "Ep. 12 | Title", "#3 - Title"
_TITLE_NUMBER = re.compile(r"(?:#|\b(?:episode|ep)\.?\s*)(\d+)\b", re.I)
_NUMBER_WORDS = r"(?:(?:episode|ep|no|number)\s)?"
_OPTIONAL_SHOW_WORDS = ("the ",), (" podcast", " show")


def key(text: str) -> str:
    """The words of ``text`` in lower case without accents or punctuation: ``Go Time #140`` -> ``go time 140``."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(re.findall(r"[^\W_]+", folded))


class Names:
    """What a catalog's shows are called, and the lookups of the episodes a text names (the catalog's indexes
    find them by a number of their title or their show and number: a query without a digit costs nothing)."""

    def __init__(self, shows: Iterable[tuple[str, str]]) -> None:
        self._shows: dict[str, set[str]] = {}  # a way of writing a show's title -> show ids
        for show_id, title in shows:
            for name in _show_names(title):
                self._shows.setdefault(name, set()).add(show_id)

    def named(self, text: str, catalog: Catalog, shows: tuple[str, ...] = ()) -> list[str]:
        """The ids of the episodes ``text`` names (at most :data:`MAX_NAMED`), [] when it names none; ``shows``:
        the shows the search is limited to."""
        if not text.strip() or has_syntax(re.sub(r":(?=\s|$)", " ", text)):
            return []
        typed = key(text)
        digits = re.findall(r"\d+", typed)
        if not digits:
            return []
        words = [w for w in typed.split() if not w.isdigit()]
        first = words[0] if words and words[0].isascii() else ""  # (SQLite folds the case of ASCII only)
        found = ([i for i, title, _ in _holding(catalog, max(digits, key=len), first) if typed in _title_names(title)]
                 if words else [])  # (a bare number is no title: with a show, below, it is that show's number)
        m = re.fullmatch(rf"(.*?)\s?{_NUMBER_WORDS}(\d+)", typed)
        if m:
            show, number = m.group(1).strip(), int(m.group(2))
            in_shows = self._shows.get(show, set()) if show else set(shows if len(shows) == 1 else ())
            if in_shows:
                for show_id in sorted(in_shows):
                    found += [i for i, title, _ in _holding(catalog, m.group(2), show_id=show_id)
                              if number in _title_numbers(title)]
                    found += catalog.numbered(show_id, number)
        return list(dict.fromkeys(found))[:MAX_NAMED]


def _holding(catalog: Catalog, digits: str, word: str = "", show_id: str = "") -> list[tuple[str, str, str]]:
    """The catalog's episodes whose title holds this number (not as a part of a longer one)."""
    alone = re.compile(rf"(?<!\d){digits}(?!\d)")
    return [row for row in catalog.titles_holding(digits, word, show_id) if alone.search(row[1])]


def _title_names(title: str) -> set[str]:
    """The whole title, and the label before its first separator, that hold a number: a title of words alone is
    also a topic, and ranked as one."""
    names = {key(title), key(_SEPARATOR.split(title, maxsplit=1)[0])}
    return {name for name in names if any(c.isdigit() for c in name)}


def _title_numbers(title: str) -> set[int]:
    """The numbers a title gives its episode: after ``#``, "episode" or "ep"."""
    return {int(n) for n in _TITLE_NUMBER.findall(title)}


def _show_names(show: str) -> set[str]:
    """The show's title as people shorten it: without a leading "the" or a closing "podcast" / "show", and its
    first two words or more."""
    full = key(show)
    variants = {full}
    for start in _OPTIONAL_SHOW_WORDS[0]:
        variants |= {v[len(start):] for v in variants if v.startswith(start)}
    for end in _OPTIONAL_SHOW_WORDS[1]:
        variants |= {v[: -len(end)] for v in variants if v.endswith(end)}
    names = set()
    for v in variants:
        words = v.split()
        names |= {" ".join(words[:n]) for n in range(min(2, len(words)), len(words) + 1)}
    return names - {""}
