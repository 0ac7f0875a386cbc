"""Words an episode says only inside runs that other episodes say word for word: its intros, outros and sponsor reads
("Temporal is the durable execution platform ...", "go to nordvpn.com/changelog"). Such a word is no topic of the
episode, so it is never a reason of it (reasons.py), though it stays one of its terms: the fit reads the runs as
before (leaving them out of it cost pairs: docs/similar.md, eighteenth round).

A run is :data:`RUN` words in a row (case and punctuation aside) said in :data:`SAID_IN` or more recordings (two
episodes with one transcript, :func:`~.fields.text_print`, count once). The fit keeps each episode's words as hashes
(:class:`RunCounter`, 4 bytes a word) while it reads the chunks, then counts the runs and finds, per episode, the
words said only inside repeated ones. The repeated runs are kept with the model (:class:`Runs`), so that an episode
folded in later is read against them. A section the episode announces as sponsored, or whose sponsor it thanks, a
sentence that names the day's sponsors or offers a discount (:func:`sponsored_sections`: a new text each week, so no
run) is read as a run: a word said only inside runs or such sections is no reason. Words
are matched to the model's terms folded as they are (lower case, no accents) and cut where they are (at punctuation,
typographic or not).
"""

from __future__ import annotations

import functools
import re
import string
import zlib
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from ..progress import no_step, stepped
from .features import fold_lower

RUN = 8  # words in a run
SAID_IN = 3  # recordings that say a run for it to be boilerplate
PART = 4_000_000  # runs counted at once (memory: 8 bytes each, twice)
_MIX = np.uint64(0x100000001B3)  # (FNV's 64-bit prime) a run's hash: its words' hashes mixed in their order
_BITS = (1 << 22) - 1  # Runs.bits
_PART_WORDS = 3  # a run's first words that tell the part it is counted in (_part_runs)
_SPACES = bytes.maketrans(string.punctuation.encode(), b" " * len(string.punctuation))
# Punctuation beyond ASCII's, read as a space as the model's terms end there (a word in typographic quotes, "”Kaffe50”",
# or before a Japanese full stop was matched to no term until 6 December 2026, and stayed a reason): Latin-1's, the
# general punctuation (quotes, dashes, the ellipsis, bullets, primes), the Devanagari danda, the CJK and the
# full-width forms' (not the CJK tone marks, U+302A-U+302F, which are a word's)
_PUNCTUATION = re.compile("[\u00a1\u00a7\u00ab\u00b6\u00b7\u00bb\u00bf\u2010-\u2027\u2030-\u205e\u3001-\u3003"
                          "\u3008-\u3011\u3014-\u301f\u30fb\u0964\u0965\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")
SECTION_LINES = 12  # the lines after its announcement a sponsored section may run to (sponsored_sections)
ANNOUNCEMENT_WORDS = 12  # a line announcing a section says at most this many words (its links' addresses aside)
# "It's now time for Sponsored News!", "Sponsored:", "(sponsored)": "sponsored" before a word other than "by" or on its
# own; not "state-sponsored hackers", "the DigitalOcean side is sponsored, right?", "these transcripts are sponsored by"
# In the catalog's other languages, a label on a line of its own ("SAMARBETEN:", "collaborations", the list of a
# Swedish show's sponsors' codes in its notes; "Werbung", "[Anzeige]", "Gesponsord:"): the words that mark an
# advertisement in Swedish, German, Dutch, Danish, Norwegian, Spanish, Portuguese and Romanian (of them only
# "samarbeten" is in the corpus's feeds, 6 December 2026; no feed says the others)
_LABELS = ("samarbeten?|sponsrad|sponsrat|reklam|gesponsert|werbung|anzeige|gesponsord|advertentie|sponsoreret|sponset"
           "|reklame|patrocinad[oa]|publicidade?|sponsorizat|publicitate")
_ANNOUNCED = re.compile(rf"(?<![\w-])sponsored\s+(?!by\b)[^\W\d_]|[(\[]sponsored[)\]]|^\W*(?:sponsored|{_LABELS})\W*$",
                        re.I)
_MAY_ANNOUNCE = re.compile(f"sponsored|{_LABELS}", re.I)  # (a short line that may announce one)
# (a text that may: "sponsored" anywhere, or a label at a line's start, each found at the speed of a plain search;
# the alternation of the labels searched at every character took 10 s for the site corpus's texts, not 0.7 s)
_MAY_SPONSOR = re.compile("sponsored", re.I)
_MAY_LABEL = re.compile(rf"\n[^\w\n]{{0,3}}(?:{_LABELS})\b", re.I)
_LISTING = re.compile(r"^[^\w:]*[^\W\d_]+\s*:\W*$")  # a label before a list ("SAMARBETEN:", "Sponsored:")
_LABEL_LINE = re.compile(r"^[^:\n]{1,40}:\s*$")  # the next list's label ("Mein YouTube Kanal:", "Links:")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")  # where a line's first sentence ends
# A heading: a line that is a link alone ("[Title](https://...)"), perhaps after a short label ("Coolest code: [..](..)"),
# or a Markdown heading ("## Sponsors")
_HEADING = re.compile(r"\s*(?:#{1,6}\s+\S|(?:[^\W\d_][\w ]{0,30}:\s*)?\[[^\[\]\n]+\]\([^()\s]+\)\s*$)")
_THANKS = re.compile(r"(?<![\w-])sponsoring\b", re.I)  # "Thanks to Depot for sponsoring Changelog News"
_LINK_TARGET = re.compile(r"\]\([^()\s]*\)")
# The sponsor's call to go somewhere, which ends its read: a web address said (a scheme, or a domain with a path:
# "http://hasura.io/hasuracon", "neo4j.com/nodes", "go to synadia.com/changelog") or written as a link's text
# ("[head over to speakeasyapi.dev](...)"), but not a site named in passing ("UnsuckJS.com is a cool microsite");
# the link in the show notes ("Check the link in the show notes"); a code to use ("use code CHANGELOG")
_TLD = r"(?-i:com|org|net|io|dev|ai|app|co|sh|so|fm|tv|gg|me|xyz|cloud|tech)"  # (lower case: not "ASP.NET")
_ADDRESS = re.compile(rf"\b(?:https?://|www\.)\S|\bdot\s+{_TLD}\b|(?<![\w.@-])[a-z\d][\w-]*(?:\.[\w-]+)*\.{_TLD}/\w"
                      rf"|\[[^\[\]]*(?<![\w.@-])[a-z\d][\w-]*(?:\.[\w-]+)*\.{_TLD}\b[^\[\]]*\]", re.I)
# A link whose text is a call to act, "[Sign up](https://sentry.io/resources/...)" (its address is the sponsor's, read
# after _LINK_TARGET took it away)
_CALL_LINK = re.compile(r"\[\W*(?:sign\s*up|register|learn\s+more|get\s+started|start\s+(?:free|now|today)"
                        r"|try\s+(?:it|\w+\s+free)|book\s+a\s+demo|join\s+(?:us|now|today|free)|claim|grab)\b[^\[\]]*\]", re.I)
# "Thanks to our friends at Postman for sponsoring", "... for putting out good content and for sponsoring": the sponsor
# thanked (_sponsor_words)
_THANKED = re.compile(r"\bthanks?\s+(?:you\s+)?to\s+([^.!?\n]{1,60}?)\s+for\s+(?:[^.!?\n]{0,80}?\band\s+for\s+)?sponsoring\b",
                      re.I)
# A sentence that names the day's sponsors ("our sponsors for today are Toptal and Compose", "Our first sponsor today is
# Toptal", "today's show is sponsored by Toptal"): "sponsor", "sponsors" or "sponsored by" in lower case ("GitHub
# Sponsors" is a product), "brought to you by"
_NAMES_SPONSOR = re.compile(r"\b(?-i:sponsors?)\b|\bsponsored\s+by\b|\bbrought\s+to\s+you\s+by\b", re.I)
_SENTENCES = re.compile(r"[^.!?]+(?:[.!?]+|$)")
# A discount offered: a percentage and a word for discount ("5% Rabatt", "20% off"), or a code that holds a digit
# after the word for code ("Mit dem Code SONNEFREI8", "use code PODCAST20") in the catalog's languages
_DISCOUNT = re.compile(r"\d\s*%\s*(?:off|rabatt|rabat|korting|descuento|desconto|reducere|sconto|remise|discount|alennus)\b"
                       r"|\b(?:code|coupon|gutschein|rabattcode|kortingscode|rabatkode|kod|c[oó]digo|cup[oó]n|cupom)\b\W{0,3}"
                       r"(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[\w-]+", re.I)
OFFER_WORDS = 24  # a sentence that offers a discount or names the sponsors says at most this many words
# (the lines that may name the day's sponsors or offer a discount: each pattern looked for, over the text lower-cased,
# when its plain string is in it; _DISCOUNT searched over the site corpus's texts took 4 s, these 0.5 s)
_NAMING_CUES = (("sponsor", re.compile("sponsor")), ("brought to you", re.compile("brought to you")))
_OFFER_CUES = (("%", re.compile(r"%\s*[^\W\d_]")), *((w, re.compile(rf"{w}\b\W{{0,3}}[\w-]*\d")) for w in (
    "code", "coupon", "gutschein", "kod", "kode", "codigo", "código", "cupon", "cupón", "cupom")))
_POINTER = re.compile(r"\blinks?\b[^.!?\n]{0,20}?\bin\s+(?:the|your|our)\s+(?:show\s*notes|chapter\s+data|newsletter"
                      r"|description)|\buse\s+(?:the\s+)?(?:promo\s+|discount\s+|coupon\s+)?code\b", re.I)


def _words(text: str) -> list[bytes]:
    """The words of ``text``, folded as the model's terms are (:func:`~.features.fold_lower`: "René" is "rene"), its
    punctuation a space, ASCII or not (:data:`_PUNCTUATION`: "”Kaffe50”" is "kaffe50")."""
    if not text.isascii():
        text = _PUNCTUATION.sub(" ", fold_lower(text))
    return text.lower().encode("utf-8", "replace").translate(_SPACES).split()


def word_hashes(text: str) -> np.ndarray:
    """Each word's CRC-32, the words read lower-cased and without their accents, as the model's terms (a word written
    with accents was not matched to its term until 6 December 2026, and stayed a reason), with punctuation as a
    space (the same in every process and every run, unlike Python's ``hash``: runs are saved with the model)."""
    words = _words(text)
    return np.fromiter(map(zlib.crc32, words), dtype=np.uint32, count=len(words))


def sponsored_sections(text: str) -> list[tuple[int, int]]:
    """The sections ``text`` announces as sponsored, as ranges of its words (:func:`word_hashes`' places), read by its
    lines (a transcript's segments, the notes' lines). A line of at most :data:`ANNOUNCEMENT_WORDS` words, or a longer
    line's first sentence, that says so ("It's now time for sponsored news!", "Sponsored", "(sponsored)"; a label of
    the catalog's other languages alone on its line, "SAMARBETEN:", "Werbung") opens it, and it runs, within
    :data:`SECTION_LINES` lines, to the heading that follows its text (a line that is a link alone, the next item's
    title) or through the line that thanks the sponsor ("thanks to X for sponsoring"); with neither, through the
    sponsor's call to go somewhere (:func:`_called`: "go to synadia.com/changelog", "the link in the show notes"). A
    label before a colon opens a list, which runs to the next label ("Links:") or the text's end. With none of them,
    it is the announcement and the item's first line (a longer line's first sentence: that sentence alone). A sponsor
    thanked with no announcement makes its item of the lines around the thanks that name it (:func:`_thanked`), and a
    sentence that names the day's sponsors or offers a discount is one too (:func:`_sentences`). Such an item is a new
    text each week (no run: "Depot just published their 2025 recap ..."), and what it says is the sponsor's topic,
    not the episode's."""
    low = text.lower()  # (the words looked for first, as plain searches: a regular expression's alternation tried at
    # every character of the site corpus's texts took 4 s, these 0.2 s)
    announced = "sponsored" in low or _MAY_LABEL.search(f"\n{text[:80]}") is not None \
        or _MAY_LABEL.search(text) is not None
    naming = _lines_saying(low, _NAMING_CUES)
    offering = _lines_saying(low, _OFFER_CUES)
    if not (announced or naming or offering):
        return []
    lines = text.split("\n")
    found = _announced(lines) if announced else []  # (first line, end line, words of the announcement alone)
    if thanked := [a for a in naming if "sponsoring" in lines[a].lower()]:
        found = _thanked(lines, found, thanked)
    said = _sentences(lines, naming, offering)
    if not (found or said):
        return []
    starts = np.cumsum([0] + [len(_words(line)) for line in lines])
    spans = [(int(starts[a]), int(starts[a] + alone if b == a + 1 and alone else starts[b]))
             for a, b, alone in found if starts[b] > starts[a]]
    spans += [(int(starts[a]) + x, int(starts[a]) + y) for a, x, y in said]
    merged: list[tuple[int, int]] = []  # (a sentence within a section is that section)
    for a, b in sorted(spans):
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _announced(lines: list[str]) -> list[tuple[int, int, int]]:
    """The sections announced (:func:`sponsored_sections`): per section its first line, its end line and the words of
    the announcement when it is a longer line's first sentence alone (else 0)."""
    found: list[tuple[int, int, int]] = []
    for a, line in enumerate(lines):
        if (not _MAY_SPONSOR.search(line) and (len(line) > 40 or not _MAY_ANNOUNCE.search(line))  # (a label: short)
                or found and a < found[-1][1]):  # (within the section before)
            continue
        # (a longer line: its first sentence, "Sponsored News time, y'all. Two weeks back I told you about ...")
        said = [line] if _said_words(line) <= ANNOUNCEMENT_WORDS else _SENTENCE.split(line.strip(), maxsplit=1)
        if _said_words(said[0]) > ANNOUNCEMENT_WORDS or not _ANNOUNCED.search(said[0]):
            continue
        stop = min(len(lines), a + 1 + SECTION_LINES)
        end = a + 1 if len(said) > 1 and (_THANKS.search(said[1]) or _calls(said[1])) else 0
        body, listing = len(said) > 1, _LISTING.match(line) is not None
        for j in range(a + 1, stop if not end else a + 1):
            if not lines[j].strip():
                continue
            if listing and _LABEL_LINE.match(lines[j]):  # (a list's end: the next list's label)
                end = j
                break
            if _HEADING.match(lines[j]):
                if body:
                    end = j
                    break
                continue
            body = True
            if _THANKS.search(lines[j]):
                end = j + 1
                break
        if listing and not end and stop == len(lines):  # (a list to the end of the text)
            end = stop
        # (with no end found, an announcement alone on its line opens the item's first paragraph: "Sponsored News!",
        # then "Take Postman's 2023 State of the API survey! ..."; until 6 December 2026 it was the announcement alone)
        ended = end or _called(lines, a + 1, stop)
        end = ended or (a + 1 if len(said) > 1 or listing else _paragraph(lines, a + 1, stop))
        # (the announcement alone, its line's first sentence, only when nothing ends the section: a line whose rest
        # thanks or calls, or that a heading follows, is the section's whole)
        found.append((a, end, len(_words(said[0])) if len(said) > 1 and not ended else 0))
    return found


def _paragraph(lines: Sequence[str], start: int, stop: int) -> int:
    """The end of the first line of text in ``lines[start:stop]`` (not a heading), or ``start`` when there is none."""
    for j in range(start, stop):
        if lines[j].strip():
            return start if _HEADING.match(lines[j]) else j + 1
    return start


def _lines_saying(low: str, cues: Sequence[tuple[str, re.Pattern[str]]]) -> list[int]:
    """The lines of ``low`` (a text lower-cased) where one of the ``cues``' patterns is found (each looked for when its
    plain string is in the text), in order."""
    ends = None
    found = set()
    for plain, pattern in cues:
        for m in pattern.finditer(low) if plain in low else ():
            if ends is None:
                ends = np.cumsum([len(line) + 1 for line in low.split("\n")])
            found.add(int(np.searchsorted(ends, m.start(), side="right")))
    return sorted(found)


def _thanked(lines: list[str], found: list[tuple[int, int, int]], thanks: list[int]) -> list[tuple[int, int, int]]:
    """``found`` and the items of a sponsor thanked with no announcement (:func:`sponsored_sections`; ``thanks``: the
    lines that may thank one): the lines, within :data:`SECTION_LINES` of the thanks, from the first to the last that
    names the sponsor ("Up next a solid writeup by Arnaud Lauret at Postman ...", "Thanks to our friends at Postman for
    sponsoring"), the thanks among them."""
    inside = np.zeros(len(lines) + 1, dtype=bool)
    for a, b, _ in found:
        inside[a:b] = True
    out = list(found)
    for t in thanks:
        m = _THANKED.search(lines[t]) if not inside[t] else None
        names = _sponsor_words(m.group(1)) if m else None
        if not names:
            continue
        naming = re.compile(rf"(?<![^\W_])(?:{'|'.join(map(re.escape, names))})(?![^\W_])", re.I)
        a = b = t
        for j in range(max(0, t - SECTION_LINES), t):
            if not inside[j] and naming.search(lines[j]) and not inside[j:t].any():
                a = j
                break
        for j in range(min(len(lines) - 1, t + SECTION_LINES), t, -1):
            if not inside[j] and naming.search(lines[j]) and not inside[t:j].any():
                b = j
                break
        inside[a:b + 1] = True
        out.append((a, b + 1, 0))
    return sorted(out)


def _sponsor_words(thanked: str) -> list[str]:
    """The words that name a sponsor in what a thanks says of it ("our friends at Postman": "Postman"; "the team at Neo4j",
    "Depot"): those after its last "at" written with a capital."""
    name = re.split(r"\s+at\s+", thanked)[-1]
    return [w for w in re.findall(r"[^\W_][\w+-]*", name) if len(w) > 2 and not w.islower()]


def _sentences(lines: list[str], naming: list[int], offering: list[int]) -> list[tuple[int, int, int]]:
    """The sentences of at most :data:`OFFER_WORDS` words that name the day's sponsors ("our sponsors for today are
    Toptal and Compose") or offer a discount ("5% Rabatt mit "Sonne5"", "Mit dem Code SONNEFREI8 ..."), each as its
    line and its first and end word in the line (:func:`sponsored_sections`; ``naming``, ``offering``: the lines that
    may)."""
    spans = []
    names = set(naming)
    for a in sorted(names | set(offering)):
        line = lines[a]
        for m in _SENTENCES.finditer(line):
            sentence = m.group()
            if ((a in names and _NAMES_SPONSOR.search(sentence) or _DISCOUNT.search(sentence))
                    and _said_words(sentence) <= OFFER_WORDS):
                first = len(_words(line[:m.start()]))
                spans.append((a, first, first + len(_words(sentence))))
    return [(a, x, y) for a, x, y in spans if y > x]


def _said_words(line: str) -> int:
    """The words of ``line``, its links' addresses aside."""
    return len(_LINK_TARGET.sub("]", line).split())


def _calls(line: str) -> bool:
    """Whether ``line`` calls the listener somewhere (:data:`_ADDRESS`, :data:`_POINTER`)."""
    line = _LINK_TARGET.sub("]", line)
    return bool(_POINTER.search(line) or _ADDRESS.search(line) or _CALL_LINK.search(line))


def _called(lines: Sequence[str], start: int, stop: int) -> int:
    """The end of a sponsor's read without a heading or thanks after it: past the first line of ``lines[start:stop]``
    that calls the listener somewhere and the short lines right after it that do too ("Once again that's
    http://hasura.io/hasuracon", "That's N E O 4 J dot com slash developer"); 0 when none does."""
    for j in range(start, stop):
        if _calls(lines[j]):
            while j + 1 < stop and len(lines[j + 1].split()) <= ANNOUNCEMENT_WORDS and _calls(lines[j + 1]):
                j += 1
            return j + 1
    return 0


def _run_hashes(words: np.ndarray) -> np.ndarray:
    """The hash of the run starting at each word, 64 bits (none when the text is shorter than a run). (With 32 bits
    the site corpus's 15 million runs made 400 of its 19,000 repeated ones by chance.)"""
    n = len(words) - RUN + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    words = words.astype(np.uint64)
    out = words[:n].copy()
    for k in range(1, RUN):
        out *= _MIX
        out ^= words[k:k + n]
    return out


def _part_runs(words: np.ndarray, part: int, parts: int) -> np.ndarray:
    """The hashes (:func:`_run_hashes`) of the runs of ``words`` in ``part`` of ``parts`` (a power of two): those whose
    first :data:`_PART_WORDS` words, mixed as the hash mixes them first, end in the part's bits. Only these runs'
    hashes are finished (the whole hash of every run made and read for every part: 0.6 s of the site corpus's fit, in
    4 parts; now 0.4 s). One run is always in one part; the parts are near even (site corpus: the largest 1.01 x the
    mean of 4, 1.08 x of 64, 1.43 x of 256, a common run of three words weighing more then; with two words 2.8 x)."""
    n = len(words) - RUN + 1
    if parts == 1 or n <= 0:
        return _run_hashes(words)
    out = words[:n].astype(np.uint64)
    for k in range(1, _PART_WORDS):
        out *= _MIX
        out ^= words[k:k + n]
    at = np.flatnonzero((out & np.uint64(parts - 1)) == part)
    out = out[at]
    for k in range(_PART_WORDS, RUN):
        out *= _MIX
        out ^= words[at + k]
    return out


def _distinct(values: np.ndarray) -> np.ndarray:
    """``values`` sorted, each once (``np.unique`` of numpy 2 hashes, several times slower on these arrays)."""
    values = np.sort(values)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def _among(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Per value, whether it is in ``sorted_set`` (a sorted array, not empty)."""
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values


class RunCounter:
    """Every episode's words as hashes, in the fit's order, until :meth:`finish` counts their runs."""

    def __init__(self) -> None:
        self.words: list[np.ndarray] = []
        self.titles: list[str] = []
        self.recording: list[bool] = []  # False: the same transcript as an earlier episode's (its runs count once)
        self.sections: list[list[tuple[int, int]]] = []  # each episode's sponsored sections (sponsored_sections)
        self.seen: set[str] = set()

    def add(self, titles: Sequence[str], transcripts: Sequence[str], notes: Sequence[str],
            prints: Sequence[str], step: Callable[[], None] = no_step) -> None:
        texts = [f"{transcript}\n{note}" for transcript, note in zip(transcripts, notes)]
        chunk = [word_hashes(text) for text in stepped(texts, step)]
        self.sections.extend(sponsored_sections(text) for text in stepped(texts, step))
        del texts
        # (one array per chunk, cut into views: small arrays would stay in the heap once let go)
        joined = np.concatenate(chunk) if chunk else np.zeros(0, dtype=np.uint32)
        ends = np.cumsum([len(w) for w in chunk]).tolist()
        del chunk
        self.words.extend(joined[a:b] for a, b in zip([0, *ends], ends))
        for title, mark in zip(titles, prints):
            self.titles.append(title)
            self.recording.append(not mark or mark not in self.seen)
            self.seen.add(mark)

    def finish(self, step: Callable[[], None] = no_step) -> tuple[Runs, list[np.ndarray]]:
        """The runs said in :data:`SAID_IN` or more recordings, and per episode the words it says only inside them
        (:meth:`Runs.only_inside`); the episodes' words are let go. The runs are counted a part at a time (at most
        about :data:`PART` at once), a run's part told by its first two words (:func:`_part_runs`)."""
        total = sum(max(len(w) - RUN + 1, 0) for w in self.words)
        parts = 1 << max(0, (-(-total // PART) - 1).bit_length())  # (a power of two)
        found: list[np.ndarray] = []
        for part in range(parts):
            runs = (_part_runs(w, part, parts) for w, counted in stepped(zip(self.words, self.recording), step)
                    if counted)
            every = np.concatenate([_distinct(r) for r in runs] or [np.zeros(0, dtype=np.uint64)])
            step()
            every.sort()
            n = len(every) - SAID_IN + 1
            # (each repeated run once: its every third-or-later saying was kept, and a corpus whose episodes share
            # their texts, the bench's resampled 10k, had so many that their one sort below took 8.7 s)
            found.append(_distinct(every[:n][every[SAID_IN - 1:] == every[:n]]) if n > 0 else every[:0])
            del every
            step()
        # (the parts' sorted runs merged: a stable sort of 32 sorted runs of 16 million in all took 0.8 s, the default
        # sort 2.8 s, load 8)
        every = np.concatenate(found) if found else np.zeros(0, dtype=np.uint64)
        del found
        every.sort(kind="stable")
        repeated = Runs(every[np.r_[True, every[1:] != every[:-1]]] if len(every) else every)
        del every
        step()
        only = [repeated.only_inside(w, title, sections)
                for w, title, sections in stepped(zip(self.words, self.titles, self.sections), step)]
        self.words.clear()
        self.sections.clear()
        return repeated, only


class Runs:
    """The runs said in :data:`SAID_IN` or more recordings (sorted hashes)."""

    def __init__(self, hashes: np.ndarray) -> None:
        self.hashes = np.asarray(hashes, dtype=np.uint64)

    @functools.cached_property
    def bits(self) -> np.ndarray:
        """A first look by the low bits (4 MB, read at random far faster than a search of the runs; made when an
        episode is first read against them: a server that folds none in never makes it)."""
        bits = np.zeros(_BITS + 1, dtype=bool)
        bits[self.hashes & np.uint64(_BITS)] = True
        return bits

    def among(self, runs: np.ndarray) -> np.ndarray:
        """The places of ``runs`` that are among these."""
        maybe = np.flatnonzero(self.bits[runs & np.uint64(_BITS)])
        return maybe[_among(runs[maybe], self.hashes)] if len(maybe) and len(self.hashes) else maybe[:0]

    @staticmethod
    def term_hashes(vocabulary: dict[str, int], step: Callable[[], None] = no_step) -> dict[int, list[int]]:
        """The terms of ``vocabulary`` by the hash of each of their words (:func:`word_hashes`): a term written with a
        hyphen or an apostrophe ("multi-factor", a link's slug "ankersolix-balkonkraftwerk-podcast-folge35") is read
        as several words, and is said only inside when one of them is (every saying of the term says that word);
        phrases of titles, "_"-joined, are a title's own."""
        terms: dict[int, list[int]] = {}
        for term, i in stepped(vocabulary.items(), step):
            if "_" not in term:
                for word in set(word_hashes(term).tolist()):
                    terms.setdefault(word, []).append(i)
        return terms

    def of_texts(self, titles: Sequence[str], transcripts: Sequence[str], notes: Sequence[str],
                 vocabulary: dict[str, int]) -> sp.csr_matrix:
        """Per episode (new ones, folded in), the terms of ``vocabulary`` it says only inside these runs (or its
        sponsored sections)."""
        texts = [f"{transcript}\n{note}" for transcript, note in zip(transcripts, notes)]
        return self.terms_of([self.only_inside(word_hashes(text), title, sponsored_sections(text))
                              for title, text in zip(titles, texts)], vocabulary)

    def terms_of(self, only: list[np.ndarray], vocabulary: dict[str, int],
                 step: Callable[[], None] = no_step) -> sp.csr_matrix:
        """Episodes x terms: 1 where the episode says the term only inside these runs (``only``: each episode's
        :meth:`only_inside`; a term of several words: one of them)."""
        terms = self.term_hashes(vocabulary, step)
        rows = []
        for words in stepped(only, step):
            # (a term of several words: one of them said only inside is enough, as every saying of the term says it;
            # until 6 December 2026 each of them had to be, and a German show's affiliate links' slugs,
            # "ankersolix-balkonkraftwerk-podcast-folge35", stayed reasons: "balkonkraftwerk" is said outside too)
            found = {i for h in words.tolist() for i in terms.get(h, ())}
            rows.append(np.array(sorted(found), dtype=np.int32))
        return as_matrix(rows, len(vocabulary))

    def only_inside(self, words: np.ndarray, title: str, sections: Sequence[tuple[int, int]] = ()) -> np.ndarray:
        """The ``words`` (:func:`word_hashes`) said only inside these runs or the episode's sponsored ``sections``
        (:func:`sponsored_sections`), the title's words left out (a title is the episode's own)."""
        none = np.zeros(0, dtype=np.uint32)
        starts = self.among(_run_hashes(words)) if len(self.hashes) else none
        if not len(starts) and not sections:
            return none
        size = len(words) + RUN
        bounds = np.r_[starts, np.array([a for a, _ in sections], dtype=np.int64)].astype(np.int64)
        ends = np.r_[starts + RUN, np.array([b for _, b in sections], dtype=np.int64)].astype(np.int64)
        inside = np.cumsum(np.bincount(bounds, minlength=size) - np.bincount(ends, minlength=size))[:len(words)] > 0
        said = _distinct(words[inside])
        if not len(said):
            return none
        outside = np.r_[words[~inside], word_hashes(title)]
        at = np.minimum(np.searchsorted(said, outside), len(said) - 1)
        also = np.zeros(len(said), dtype=bool)  # the words said inside that are said outside too
        also[at[said[at] == outside]] = True
        return said[~also]


def as_matrix(rows: Iterable[np.ndarray], terms: int) -> sp.csr_matrix:
    """Per-episode term ids as a rows x terms matrix of ones (how the model keeps and saves them)."""
    rows = list(rows)
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])].astype(np.int64)
    indices = np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, dtype=np.int32)
    return sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(len(rows), terms))
