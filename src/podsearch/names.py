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

What each episode may be called is kept by the catalog (its ``names`` table, written with the episode by
:func:`episode_names`), so that a lookup is an index read per name, whatever the catalog's size.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Protocol

from .engines.querytext import has_syntax

MAX_NAMED = 5  # episodes a name may put first (several talks can share one title)
_SEPARATOR = re.compile(r"\s*(?::|\||\s[-–—]\s)\s*")  # "Go Time #140: Generics", "Ep. 12 | Title", "#3 - Title"
_TITLE_NUMBER = re.compile(r"(?:#|\b(?:episode|ep)\.?\s*)(\d+)\b", re.I)
_NUMBER_WORDS = r"(?:(?:episode|ep|no|number)\s)?"
# "season 1 episode 7", "season 1 ep 7", "s1 e7": the "s1e7" of a title such as "Big Tent S1E7"
_SEASON_EPISODE = re.compile(r"\b(?:season\s?|s)(\d+)\s(?:episode\s?|ep\s?|e)(\d+)\b")
_OPTIONAL_SHOW_WORDS = ("the ",), (" podcast", " show")


def key(text: str) -> str:
    """The words of ``text`` in lower case without accents or punctuation: ``Go Time #140`` -> ``go time 140``."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(re.findall(r"[^\W_]+", folded))


def episode_names(title: str, show_id: str, number: int | None) -> set[str]:
    """What a query may call an episode: its whole title and the label before the title's first separator, when
    they hold a number (a title of words alone is also a topic, and is ranked as one), and ``#<show id> <n>`` for
    its number (the feed's) and the numbers its title gives it (after ``#``, "episode" or "ep")."""
    names = {key(title), key(_SEPARATOR.split(title, maxsplit=1)[0])}
    names = {name for name in names if any(c.isdigit() for c in name)}
    numbers = {int(n) for n in _TITLE_NUMBER.findall(title)} | ({number} if number is not None else set())
    return names | {_numbered(show_id, n) for n in numbers}


def _numbered(show_id: str, number: int) -> str:
    return f"#{show_id} {number}"


class Called(Protocol):
    """Where the episodes' names are kept (the catalog)."""

    def called(self, names: list[str], limit: int) -> list[str]: ...


class Names:
    """What a catalog's shows are called, and the lookup of the episodes a text names (built once per index
    generation: the shows' titles only; the episodes' names are the catalog's)."""

    def __init__(self, shows: Iterable[tuple[str, str]]) -> None:
        self._shows: dict[str, set[str]] = {}  # a way of writing a show's title -> show ids
        for show_id, title in shows:
            for name in _show_names(title):
                self._shows.setdefault(name, set()).add(show_id)

    def named(self, text: str, catalog: Called, shows: tuple[str, ...] = ()) -> list[str]:
        """The ids of the episodes ``text`` names (at most :data:`MAX_NAMED`), [] when it names none; ``shows``:
        the shows the search is limited to. A text without a digit names nothing and costs nothing."""
        if not any(c.isdigit() for c in text) or has_syntax(re.sub(r":(?=\s|$)", " ", text)):
            return []
        typed = key(text)
        wanted = [typed] if re.search(r"[^\W\d_]", typed) else []  # (a bare number is no title)
        wanted += [short for short in [_SEASON_EPISODE.sub(r"s\1e\2", typed)] if short != typed]
        m = re.fullmatch(rf"(.*?)\s?{_NUMBER_WORDS}(\d+)", typed)
        if m:
            show, number = m.group(1).strip(), int(m.group(2))
            in_shows = self._shows.get(show, set()) if show else set(shows if len(shows) == 1 else ())
            wanted += [_numbered(show_id, number) for show_id in sorted(in_shows)]
        return catalog.called(wanted, MAX_NAMED) if wanted else []


def _show_names(show: str) -> set[str]:
    """The show's title as people shorten it: without a leading "the" or a closing "podcast" / "show", and its
    first two words or more, each also with its words run together (``gotime``, ``shipit``, ``talkpython``: the
    show's address at its site, changelog.com/gotime/140, is how many people know it)."""
    full = key(show)
    variants = {full}
    for start in _OPTIONAL_SHOW_WORDS[0]:
        variants |= {v[len(start):] for v in variants if v.startswith(start)}
    for end in _OPTIONAL_SHOW_WORDS[1]:
        variants |= {v[: -len(end)] for v in variants if v.endswith(end)}
    names = set()
    for v in variants:
        words = v.split()
        for n in range(min(2, len(words)), len(words) + 1):
            names |= {" ".join(words[:n]), "".join(words[:n])}  # (also run together, as in its address: gotime)
    return names - {""}
