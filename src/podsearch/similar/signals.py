"""Label-free link signals for "nearby episodes", read from the episodes' own content.

- **Link tokens**: the web addresses in the show notes (``description_html`` hrefs), one token per site and
  per project (``github.com/dvyukov/go-fuzz`` -> ``link_github_com_dvyukov_go-fuzz``). Two episodes pointing at
  the same repository or project page share a topic; plain text extraction drops the addresses.
- **Episode mentions**: "episode 159", "ep. 42", "show #12", "#145" in an episode's notes or transcript name
  another episode of the same show by its number, or of another show when its title is said with it: just after
  ("episode 236 of Go Time", "episode 86 on Founders Talk"), just before ("Go Time #145", "Go Time episode
  145"), or a few words before in the same sentence ("Founders Talk - I'll plug episode 80"; these two for titles
  of two words or more); a title is matched with or without the spaces between its words ("GoTime"). A link whose
  last part is a number names an episode of the show it spells ("https://founderstalk.fm/93",
  "changelog.com/gotime/49"), and nothing when it spells none. A round-up ("our favourite unpopular opinions:
  episode 159, ...") is then near what it recaps.
- **Title phrases**: the word pairs of a title ("Schnorr Signatures and Taproot" -> ``schnorr_signatures``), so
  that two titles naming the same thing in two words match on it, not only on each word.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Sequence
from urllib.parse import urlsplit

import numpy as np
import scipy.sparse as sp

from .. import languages
from ..languages import fold

log = logging.getLogger(__name__)

HREF = re.compile(r"""href\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
CODE_HOSTS = {"github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "sr.ht", "git.sr.ht"}
# "episode 159", "episodes 12", "ep. 42", "show number 7", "episode #3", "#145", matched in lower-cased text. One
# pattern per keyword: each starts with a literal, which the regex engine finds fast (one alternation of them
# is ~8 times slower over a corpus). Word patterns must start a word (checked apart).
MENTIONS = tuple(re.compile(p) for p in (r"episodes?\s*(?:number\s+|no\.?\s*)?#?\s?(\d{1,4})\b",
                                         r"show\s*(?:number\s+|no\.?\s*)?#?\s?(\d{1,4})\b",
                                         r"ep\.?\s*#?\s?(\d{1,4})\b", r"#\s?(\d{1,4})\b"))
# A link whose last part is a number ("gotime.fm/145", "changelog.com/gotime/145"): an episode of the show whose title
# the link spells (its host or the part before the number), never of the episode's own show by default.
_LINK_PATH = r"\.[a-z]{2,6}/(?:[\w-]+/){0,2}"  # a host's ending and at most two path parts, up to the number
URL_NUMBER = re.compile(_LINK_PATH + r"(\d{1,4})(?![\w/-]|\.\w)")
TITLE_GAP = 60  # characters before a mention searched for another show's title
TITLE_AFTER = 40  # characters after the number searched for "of <show title>"
WORDS_BETWEEN = 25  # at most this many characters between a show's title and a mention, in one sentence
# The model's terms: a letter, then letters, digits, apostrophes and hyphens, ending on a letter or a digit; two
# characters at least (scikit-learn's token_pattern until MODEL_VERSION 13, and still how a text without a combining
# mark is read: terms() below).
TOKEN_PATTERN = r"(?u)\b[^\W\d_][\w'’-]*[^\W_]\b"
WORD = re.compile(TOKEN_PATTERN)
# The combining marks a term holds (languages.MARKS) save the variation selectors (U+FE00-FE0F, U+E0100-E01EF): they
# choose how the character before them is drawn ("™️" is "™" and U+FE0F) and are part of no word ("llm™️" is "llmtm"
# as before, not "llmtm" and a selector).
TERM_MARKS = languages.MARKS.replace("\ufe00-\ufe0f", "").replace("\U000e0100-\U000e01ef", "")
# TOKEN_PATTERN with a term running on through the marks written after its letters, and ending on one: Python's \w
# matches no mark, so the pattern alone read "नमस्ते दोस्तों, क्या बात है" as "नमस" (each word cut at its first vowel
# sign or virama, the pieces of one letter dropped). Where TOKEN_PATTERN's \b would see a word's edge beside a mark,
# this pattern sees none.
MARKED_WORD = re.compile(rf"(?<![\w{TERM_MARKS}])[^\W\d_][\w'’{TERM_MARKS}-]*(?:[^\W_]|[{TERM_MARKS}])"
                         rf"(?![\w{TERM_MARKS}])")
# The blocks where a term's mark may be (languages.may_hold_marks's, without the Greek and Cyrillic letters, the
# variation selectors and the emoji after the last mark): an English text with an emoji, a "™️" or a Greek letter is
# read by TOKEN_PATTERN (the same terms there; the pattern with marks is 4 times slower). Of the site corpus's texts
# 179 would be read by the pattern with marks if the blocks were languages.may_hold_marks's; none is.
_MAY_HOLD_TERM_MARKS = re.compile("[\u0300-\u036F\u0483-\u1DFF\u20D0-\u20FF\u2CEF-\u2DFF\u302A-\u309A\uA66F-\uABFF\uFB1E"
                                  "\uFE20-\uFE2F\U000101FD-\U0001E94A]")


def may_hold_term_marks(text: str) -> bool:
    """Whether ``text`` may hold one of :data:`TERM_MARKS` (a character of the blocks where they are)."""
    return not text.isascii() and _MAY_HOLD_TERM_MARKS.search(text) is not None


def terms(text: str) -> list[str]:
    """The model's terms of ``text`` (the vectorizer's tokenizer, after its preprocessor): :data:`MARKED_WORD`'s, and
    for a text that holds no combining mark (ASCII, or English with curly quotes, dashes and emoji:
    :func:`may_hold_term_marks`) :data:`TOKEN_PATTERN`'s, which are the same terms there, found as fast as before."""
    return (MARKED_WORD if may_hold_term_marks(text) else WORD).findall(text)


PHRASE_BREAK = re.compile(r"[.!?;:\n()\[\]\"“”,|–—-]+")  # no phrase across punctuation (nor across a hyphen)


def link_tokens(html: str) -> str:
    """One token per linked site and one per project (first two path parts) of the notes' hrefs."""
    out: dict[str, None] = {}
    for href in HREF.findall(html or ""):
        try:
            parts = urlsplit(href.strip())
        except ValueError:
            continue
        if parts.scheme not in ("http", "https") or not parts.hostname:
            continue
        host = parts.hostname.lower().removeprefix("www.")
        path = [p for p in parts.path.lower().split("/") if p][:2]
        out[_token(host)] = None
        if path and (host in CODE_HOSTS and len(path) == 2 or host not in CODE_HOSTS):
            out[_token(host + "/" + "/".join(path))] = None
    return " ".join(out)


def phrases(text: str, stop: Collection[str]) -> str:
    """The text's adjacent word pairs, as one token each ("lightning network" -> "lightning_network"); pairs
    with a stop word are left out, and none spans punctuation. Meant for titles: short, and phrase-like."""
    out = []
    for part in PHRASE_BREAK.split(text.lower()):
        words = terms(part)
        # (a word is a stop word written with its accents or without: Romanian's list writes "si", titles "și", and
        # "si invitatul", "and the guest", was the reason of 99 of 500 METOPE neighbours until 5 December 2026)
        kept = [a not in stop and fold(a) not in stop for a in words]
        out.extend(f"{a}_{b}" for a, b, x, y in zip(words, words[1:], kept, kept[1:]) if x and y)
    return " ".join(out)


def _token(text: str) -> str:
    return "link_" + re.sub(r"[^\w-]+", "_", text).strip("_-")


def episode_mentions(texts: Sequence[str], shows: Sequence[str], numbers: Sequence[int | None],
                     show_titles: dict[str, str] | None = None) -> sp.csr_matrix:
    """N x N (i, j) = 1 when episode i's text names episode j by its number (same show, or a show named just before)."""
    return resolve_mentions([mentions_in(text) for text in texts], shows, numbers, show_titles)


# Each number a text names, with the text around each place it does, and whether it was only said in links.
Mentions = list[tuple[int, list[tuple[str, str]], bool]]


def mentions_in(text: str) -> Mentions:
    """What :func:`resolve_mentions` needs of one text (a few short strings): read as the texts stream by, so
    that the texts need not be held until every episode's number is known."""
    low = text.lower()
    return [(number, [(low[max(0, start - TITLE_GAP):start], low[end:end + TITLE_AFTER]) for start in starts], link)
            for starts, number, end, link in _numbers_named(low).values()]


def resolve_mentions(found: Sequence[Mentions], shows: Sequence[str], numbers: Sequence[int | None],
                     show_titles: dict[str, str] | None = None) -> sp.csr_matrix:
    """:func:`episode_mentions` from each text's :func:`mentions_in`."""
    n = len(found)
    where: dict[tuple[str, int], list[int]] = {}
    for j, (show, number) in enumerate(zip(shows, numbers)):
        if number is not None:
            where.setdefault((show, int(number)), []).append(j)
    if not where:
        return sp.csr_matrix((n, n), dtype=np.float32)
    numbered = {show for show, _ in where}
    titled = _TitleRules([(title, show) for show, title in (show_titles or {}).items()
                          if title and title.strip() and show in numbered])
    rows: list[int] = []
    cols: list[int] = []
    for i, mentions in enumerate(found):
        if shows[i] not in numbered and not titled:
            continue
        seen: set[int] = set()
        for number, places, link in mentions:
            named = (titled.in_link(before) if link else titled.show(before, after) for before, after in places)
            show = next((s for s in named if s), None) or (None if link else shows[i])
            for j in where.get((show, number), ()):
                if j != i and j not in seen:
                    seen.add(j)
                    rows.append(i)
                    cols.append(j)
    log.debug("episode mentions: %d links among %d episodes", len(rows), n)
    return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, n))


class _TitleRules:
    """Which show's title is said with a mention, read from the text around it (see the module doc)."""

    def __init__(self, titles: list[tuple[str, str]]) -> None:
        spelled = [(r"\s*".join(map(re.escape, title.lower().split())), show) for title, show in titles]
        # Said after the number or a few words before it, a one-word title is too often a plain word ("a show
        # called Go": "episode 12 on go modules", "let's go back to episode 80"): two words or more only.
        long = [(t, s) for (t, s), (title, _) in zip(spelled, titles) if len(title.split()) >= 2]
        self.after = [(re.compile(r"^\W{0,3}(?:of|on|from)\s+(?:the\s+)?" + t + r"(?!\w)"), s) for t, s in long]
        self.before = [(re.compile(t + r"\W{0,3}$"), s) for t, s in spelled]
        self.between = [(re.compile(t + rf"[^\w.!?\n][^.!?\n]{{0,{WORDS_BETWEEN}}}$"), s) for t, s in long]
        self.host = [(re.compile(t + _LINK_PATH + "$"), s) for t, s in spelled]

    def __bool__(self) -> bool:
        return bool(self.before)

    def in_link(self, before: str) -> str | None:
        """The show a link to a number spells: its host ("founderstalk.fm/93") or the part before the number
        ("changelog.com/gotime/145")."""
        return _first(self.host, before) or _first(self.before, before)

    def show(self, before: str, after: str) -> str | None:
        """The show named just after, else just before, else a few words before in the same sentence."""
        for rules, text in ((self.after, after), (self.before, before), (self.between, before)):
            if text.strip() and (show := _first(rules, text)):
                return show
        return None


def _first(rules: list[tuple[re.Pattern[str], str]], text: str) -> str | None:
    """The show of the first rule that matches ``text``."""
    return next((show for pattern, show in rules if pattern.search(text)), None)


def _numbers_named(low: str) -> dict[int, tuple[list[int], int, int, bool]]:
    """{position of the number: (where its mentions start, the number, where it ends, said only in a link)} of every
    "episode N" (and the like) and every link whose last part is a number (its mention starts at the number, so
    that the link's host and path are the text before it).

    "Go Time show #1" starts at "show" and at "#": a show's title may end just before either.
    """
    found: dict[int, tuple[list[int], int, int, bool]] = {}
    for pattern in MENTIONS:
        for m in pattern.finditer(low):
            if pattern is not MENTIONS[-1] and m.start() and low[m.start() - 1].isalnum():
                continue  # "keep 2" is not "ep 2"
            found.setdefault(m.start(1), ([], int(m.group(1)), m.end(1), False))[0].append(m.start())
    for m in URL_NUMBER.finditer(low):
        found.setdefault(m.start(1), ([m.start(1)], int(m.group(1)), m.end(1), True))
    return found
