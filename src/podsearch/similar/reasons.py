"""Why two episodes are near, as a person reads it: the topics both are about, at most five.

A reason is a term the two vectors share, ranked by its share of their match (the product of its two
weights). What is shown:

- the episode one of them names ("mentions episode 179"; another show's with its title: "mentions Founders Talk
  episode 93"), first;
- people as their names ("Katie Hockman", not the model's token ``katie_hockman``), then phrases ("lightning
  network"), then single words, each kind by its share of the match;
- never a single word among the language's most common (:data:`GENERAL_WORDS` of ``wordfreq``'s list:
  "versus", "seven", "east"): such a word says nothing about why two episodes belong together, though it
  may be part of a phrase ("east africa");
- never a form of another word ("don’t", "channel's") or a link's slug on its own, nor a number said in words
  ("eighteen") or an adverb of a plain word ("remarkably", "chemically"): they say how, not what;
- no word already said by a phrase shown ("network" beside "lightning network"), and no person twice: a label
  whose words are all in a fuller name shown ("Rene" beside "René Pickhardt") is left out;
- never a plain word of either episode's show's boilerplate ("companion", said in its notes' run and in other words
  in its talk), nor a person whose label says a day ("On Wednesday").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from .. import languages
from .features import fold_lower
from .signals import TERM_MARKS

GENERAL_WORDS = 5_000  # this many of the language's most frequent words (wordfreq) are never a reason alone
# Pieces of a link's address that show notes write ("www.example.de/folge.html", "tinyurl.com/x", "amzn.to/x"): never
# a topic in any language (English's list holds "http", "com", "net", not these; on the corpus's feeds "www" was a
# reason of 98 of 500 German neighbours and 259 of 500 Dutch ones, "tinyurl" of 195 of the English shows' 435)
# ("php" is a topic of the site corpus's programming shows, so not among them)
LINK_WORDS = frozenset({"www", "html", "htm", "aspx", "tinyurl", "amzn", "youtu", "linkedin"})
ENGLISH_WORDS = 50_000  # the words an adverb and its base must be among (_manner_word)
TOPIC_TERMS = 80  # a term is a topic of an episode when it is among the episode's this many strongest
TOPICAL_SHARE = 0.25  # a plain English word is a reason alone only when, in at least this share of the episodes
#                       that say it, it is said more than once or in the title or notes (repeated_share) ...
TOPICAL_EVIDENCE = 10  # ... of at least this many episodes (a word of fewer is not judged)
BOILERPLATE_SHARE = 1 / 3  # a plain word said only inside runs in this share of a show's episodes ("a recurring
BOILERPLATE_EPISODES = 3  # segment in a third of a show's episodes", weighting._show_idf), and at least this many, is
#                           the show's boilerplate (Explainer._boilerplate)
# The days of the week: no person's name says one ("On Wednesday", a plain-text transcript's line read as a speaker's
# label, was a reason of 14 of the site corpus's top fives, 6 December 2026)
WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})
NOTE_SHARE = 0.5  # a word that half the episodes saying it write between square brackets is a transcriber's note
NOTE_EVIDENCE = 3  # ... in at least this many episodes ("[applause]", "[inaudible]", "[redacted]")
PERSON, PHRASE, WORD = 0, 1, 2  # the order reasons are shown in
BATCH = 16  # a list's rows whose shared terms are found at once (Explainer.about)
_TITLE_WORD = re.compile(rf"\w[\w{TERM_MARKS}]*")  # a word of a show's title, with its marks (\w+ cut a Hindi word)


@functools.lru_cache(maxsize=8)
def general_words(language: str = "en", n: int = GENERAL_WORDS) -> frozenset[str]:
    """The ``n`` most frequent words of ``language`` (``wordfreq.top_n_list``, data shipped in the package),
    folded as the model folds its terms."""
    from wordfreq import top_n_list  # read on first use, not at import

    return frozenset(fold_lower(w) for w in top_n_list(language, n))


def _stop_ended(phrase: str, stops: frozenset[str]) -> bool:
    """Whether a phrase term ("si_invitatul") begins or ends with one of ``stops``: a model fitted before titles'
    phrases left out the stop words written with accents (Romanian "și") holds such phrases."""
    words = phrase.split("_")
    return words[0] in stops or words[-1] in stops


@functools.cache
def _has_word_list(language: str) -> bool:
    """Whether wordfreq has a list of ``language``'s words."""
    from wordfreq import available_languages

    return language in available_languages()


def says_a_day(name: str) -> bool:
    """Whether a person's name or token says a day of the week (:data:`WEEKDAYS`): no person's does."""
    return not WEEKDAYS.isdisjoint(re.split(r"[\W_]+", fold_lower(name)))


def is_general(reason: str, language: str = "en") -> bool:
    """A reason that is one of the language's most common words on its own (a phrase or a name never is)."""
    return " " not in reason and fold_lower(reason) in general_words(language)


class Explainer:
    """The reasons for pairs of rows of one model (its terms and people, read once)."""

    def __init__(self, terms: np.ndarray, person_names: dict[str, str], shows: Sequence[str] = (),
                 show_titles: dict[str, str] | None = None, vocabulary: dict[str, int] | None = None,
                 repeats: np.ndarray | None = None, given_names: frozenset[str] | None = None,
                 notes: frozenset[str] = frozenset(), languages: Sequence[str] | None = None,
                 in_runs: sp.csr_matrix | None = None) -> None:
        self.terms = terms
        # per row, the terms it says only in runs other episodes say word for word (sponsor reads: runs.py), or None
        self.in_runs = in_runs
        # each row's language ("" unknown), when known: its most common words are no reason either (general_in)
        self.languages = list(languages) if languages is not None and len(languages) == len(shows) else None
        self._general_in: dict[str, np.ndarray] = {}
        self.names = person_names
        # each row's show, the shows' titles and the terms' ids: a show's own name is no reason (_title_terms)
        self.shows = shows
        self.show_titles = show_titles or {}
        self.vocabulary = vocabulary or {}
        self._by_title: dict[str, frozenset[int]] = {}
        self._boilerplate_terms: dict[str, frozenset[int]] | None = None  # (_boilerplate)
        self.floors: np.ndarray | None = None  # each row's topic floor (_floors)
        common = general_words()
        self.kinds = np.array([PERSON if t in person_names else PHRASE if "_" in t else WORD for t in terms.tolist()],
                              dtype=np.int8)
        # Never shown alone: a common word; a person's token that does not read as a name, a common word
        # ("Proposal", "Bitcoin") or initials ("SP") as transcripts label some speakers, or a day ("On Wednesday:
        # our ATO 2023 coverage begins ..." read as a speaker's label); a word that is not one
        # topic (_readable: "we’ve", a link's slug), a number said in words or an adverb (_manner_word: "remarkably").
        self.general = np.array([k != PHRASE and (t in common or t in LINK_WORDS or k == PERSON and "_" not in t and len(t) < 3
                                                  or k == PERSON and says_a_day(t)
                                                  or k == WORD and not (_readable(t) and t not in NUMBER_WORDS
                                                                        and not _manner_word(t)))
                                 for t, k in zip(terms.tolist(), self.kinds.tolist())])
        # A plain English word that is no topic where it is said (repeats: the model's repeated_share; none for a
        # model saved before it): "dragged", "loyal", "negotiated" are said once in passing wherever they are said.
        if repeats is not None and len(repeats) == len(terms):
            english = general_words("en", ENGLISH_WORDS)
            self.general |= np.array([k == WORD and t in english for t, k in zip(terms.tolist(), self.kinds.tolist())],
                                     dtype=bool) & (np.asarray(repeats) < TOPICAL_SHARE)
        if notes:  # a transcriber's note ("[applause]", "[redacted]": transcriber_notes) is no topic of the talk
            self.general |= np.array([t in notes for t in terms.tolist()], dtype=bool)
        self.term_list: list[str] = terms.tolist()  # plain lists: a request reads a few dozen items
        self.kind_list: list[int] = self.kinds.tolist()
        # Each word of a full name (two words or more) -> those people, fullest names first: a transcript's "katie"
        # is Katie Hockman when she is a person of one of the two episodes.
        parts: dict[str, list[int]] = {}
        for term, (text, kind) in enumerate(zip(self.term_list, self.kind_list)):
            if kind == PERSON and "_" in text:
                for part in set(text.split("_")):  # tokens are folded: "rene_pickhardt"
                    parts.setdefault(part, []).append(term)
        self.name_parts = {w: sorted(ts, key=lambda t: -self.term_list[t].count("_")) for w, ts in parts.items()}
        # A first name: the first word of a full name of the vocabulary's people or of the catalog's (given_names,
        # saved with the model); alone it says nobody. Its full names among the vocabulary's people -> (the
        # person, the other words of the name): shown as that person when one person of that first name is among
        # the two episodes' people (_one_named).
        self.given = frozenset(given_names or ()) | {t.split("_")[0] for t, k in zip(self.term_list, self.kind_list)
                                                      if k == PERSON and "_" in t}
        self.first_of: dict[str, list[tuple[int, list[int]]]] = {}
        vocab = vocabulary or {t: i for i, t in enumerate(self.term_list)}
        for term, (text, kind) in enumerate(zip(self.term_list, self.kind_list)):
            if kind == PERSON and "_" in text:
                first, *rest = text.split("_")
                self.first_of.setdefault(first, []).append((term, [vocab.get(w, -1) for w in rest]))
        # A name's word shown alone (no person of the pair has it: "dmitry" said of someone absent) as the name
        # writes it ("Dmitry"), when it is written with a capital.
        self.part_labels: dict[str, str] = {}
        for word, people in self.name_parts.items():
            written = next((w for w in self.names[self.term_list[people[0]]].split() if fold_lower(w) == word), None)
            if written and written[:1].isupper():
                self.part_labels[word] = written

    def warm(self, matrix: sp.csr_matrix) -> None:
        """Work out now what the first answer would: every row's topic floor (the terms are read in __init__)."""
        self._floors(matrix)
        for show in set(self.shows):
            self._show_terms(show)
        for lang in set(self.languages or ()):
            self.general_of(lang)

    def general_in(self, row: int | None) -> np.ndarray:
        """Per term, whether it is no reason for row ``row`` (:meth:`general_of` its language)."""
        if row is None or self.languages is None or not 0 <= row < len(self.languages):
            return self.general
        return self.general_of(self.languages[row])

    def general_of(self, lang: str) -> np.ndarray:
        """Per term, whether it is no reason between episodes in ``lang``: :attr:`general` (English's most common
        words among them), the language's own :data:`GENERAL_WORDS` most common single words, and the phrases that
        begin or end with one of its stop words. Until 5 December
        2026 only English's were left out, and German neighbours were near for "beim", "gerade", "immer", Danish
        ones for "ved", "kan", "mellem", Dutch ones for "eerste", "lijkt", "elkaar"."""
        if lang in ("", "en"):
            return self.general
        found = self._general_in.get(lang)
        if found is None:
            common = general_words(lang) if _has_word_list(lang) else frozenset()
            stops = languages.stop_words(lang)  # (a phrase that begins or ends with one: "si invitatul", "pandele si")
            # (wordfreq writes "ß" as "ss": "spaß" is its "spass")
            found = self.general | np.array([(t in common or "ß" in t and t.replace("ß", "ss") in common)
                                             if k != PHRASE else _stop_ended(t, stops)
                                             for t, k in zip(self.term_list, self.kind_list)], dtype=bool)
            self._general_in[lang] = found
        return found

    def _floors(self, matrix: sp.csr_matrix) -> np.ndarray:
        """Every row's :func:`topic_floor`, worked out once per model (a few milliseconds per 10,000 rows)."""
        if self.floors is None or len(self.floors) != matrix.shape[0]:
            self.floors = np.array([topic_floor(matrix.data[matrix.indptr[r]:matrix.indptr[r + 1]])
                                    for r in range(matrix.shape[0])], dtype=np.float32)
        return self.floors

    def label(self, term: int) -> str:
        text, kind = self.term_list[term], self.kind_list[term]
        if kind == PERSON:
            return self.names[text]
        return self.part_labels.get(text, text) if kind == WORD else text.replace("_", " ")

    def reasons(self, matrix: sp.csr_matrix, base: Row | sp.csr_matrix, j: int, n: int = 5) -> list[str]:
        """At most ``n`` reasons why ``base`` (a row or a vectorized text) and row ``j`` of ``matrix`` are near."""
        return self.about(matrix, base)(j, n)

    def about(self, matrix: sp.csr_matrix, base: Row | sp.csr_matrix, rows: Sequence[int] = (),
              origin: int | None = None) -> Callable[[int, int], list[str]]:
        """:meth:`reasons` of ``base`` (row ``origin``, or a text) with any row of ``matrix``: ``base``'s terms are
        read once, and the terms shared with ``rows`` (the rows a list will ask about, in its order) are found for
        :data:`BATCH` rows at a time, as one array operation (what costs, row by row, is numpy's work per call, not
        the terms). The words of either episode's show title are not reasons (:meth:`_title_terms`)."""
        # base's topics (at or above its topic floor, not a general word) -> their place in base; -1: not one
        general = self.general_in(origin)
        topic = (base.data >= topic_floor(base.data)) & ~general[base.indices]
        at = np.full(matrix.shape[1], -1, dtype=np.int32)
        at[base.indices[topic]] = np.flatnonzero(topic).astype(np.int32)
        pending = [j for j in rows if j >= 0]
        where = {j: k for k, j in enumerate(pending)}
        ranked: dict[int, np.ndarray] = {}
        own = self._title_terms(origin) | self._said_in_runs(origin)

        def explain(j: int, n: int = 5) -> list[str]:
            if j not in ranked:
                k = where.get(j)
                batch = [j] if k is None else [r for r in pending[k:k + BATCH] if r not in ranked]
                ranked.update(zip(batch, self._ranked(matrix, base, at, batch)))
            shared = ranked[j]
            theirs = self.general_in(j)  # (an episode of another language: neither language's common words)
            if theirs is not general:
                shared = shared[~theirs[shared]]
            return self._choose(matrix, base, j, shared[: 8 * n].tolist(), n,
                                own | self._title_terms(j) | self._said_in_runs(j))

        return explain

    def _ranked(self, matrix: sp.csr_matrix, base: Row | sp.csr_matrix, at: np.ndarray, rows: list[int]) -> list[np.ndarray]:
        """For each of ``rows``, the topics it shares with ``base`` (``at``: base's topics, see :meth:`about`; the
        row's weight at or above its own topic floor), by their share of the match, strongest first (ties: lower
        term id first)."""
        ptr = matrix.indptr
        starts = ptr[rows]
        lengths = ptr[np.asarray(rows) + 1] - starts
        cols = np.concatenate([matrix.indices[s:s + n] for s, n in zip(starts.tolist(), lengths.tolist())])
        places = at[cols]
        found = np.flatnonzero(places >= 0)  # places in cols
        ends = np.cumsum(lengths)
        owner = np.searchsorted(ends, found, side="right")  # which of rows
        row_w = matrix.data[found - (ends - lengths)[owner] + starts[owner]]
        cols, base_w = cols[found], base.data[places[found]]
        keep = row_w >= self._floors(matrix)[rows][owner]
        owner, cols, share = owner[keep], cols[keep], (base_w * row_w)[keep]
        order = np.lexsort((cols, -share, owner))
        owner, cols = owner[order], cols[order]
        bounds = np.searchsorted(owner, np.arange(len(rows) + 1))
        return [cols[bounds[r]:bounds[r + 1]] for r in range(len(rows))]

    def _said_in_runs(self, row: int | None) -> frozenset[int]:
        """The terms ``row`` says only inside runs that 3 or more recordings say (its sponsor reads, intros: runs.py)
        or inside the sections it announces as sponsored (runs.sponsored_sections): no topic of it. Until 6 December
        2026 "posit", "temporal", "auth0", "nordvpn" and "bluehost" were 1.6 % of the site corpus's reasons, two
        episodes near on other topics both carrying one sponsor's read."""
        runs = self.in_runs
        if row is None or runs is None or not 0 <= row < runs.shape[0]:
            return frozenset()
        return frozenset(runs.indices[runs.indptr[row]:runs.indptr[row + 1]].tolist())

    def _title_terms(self, row: int | None) -> frozenset[int]:
        """The terms that spell the title of ``row``'s show (:meth:`_show_terms`); none for a text."""
        return self._show_terms(self.shows[row]) if row is not None and row < len(self.shows) else frozenset()

    def _show_terms(self, show: str) -> frozenset[int]:
        """The terms that spell ``show``'s title, its words and runs of them ("tent", "big_tent", "talk_python"),
        people left out: every episode of "Big Tent" says "tent", and another show's episodes that promote it too;
        a guest who has a show of their own is still a reason. And the show's boilerplate words (:meth:`_boilerplate`)."""
        if show not in self._by_title:
            words = _TITLE_WORD.findall(fold_lower(self.show_titles.get(show, "")))
            spans = ("_".join(words[a:b]) for a in range(len(words)) for b in range(a + 1, len(words) + 1))
            found = (self.vocabulary.get(span) for span in spans)
            self._by_title[show] = frozenset(t for t in found if t is not None and self.kind_list[t] != PERSON) \
                | self._boilerplate().get(show, frozenset())
        return self._by_title[show]

    def _boilerplate(self) -> dict[str, frozenset[int]]:
        """Per show, the plain English words (among :data:`ENGLISH_WORDS`) that at least :data:`BOILERPLATE_SHARE` of
        its episodes (and :data:`BOILERPLATE_EPISODES`) say only inside runs (:attr:`in_runs`): its recurring
        boilerplate, said in other words elsewhere in its episodes too ("companion": Changelog News's notes say "in
        its companion newsletter", the talk "our companion Changelog News(letter)", "today's companion email"), so no
        topic of them. Names and products are left to the runs alone: a show's own reads name "django" or "htmx", and
        two of its episodes about them share a topic."""
        if self._boilerplate_terms is None:
            self._boilerplate_terms = {}
            runs = self.in_runs
            if runs is not None and len(self.shows) == runs.shape[0] and runs.nnz:
                names = sorted(set(self.shows))
                index = {name: s for s, name in enumerate(names)}
                code = np.array([index[show] for show in self.shows], dtype=np.int64)
                sizes = np.bincount(code, minlength=len(names))
                of_show = sp.csr_matrix((np.ones(len(code), dtype=np.int32), (code, np.arange(len(code)))),
                                        shape=(len(names), len(code)))
                counts = (of_show @ (runs > 0).astype(np.int32)).tocsr()
                english = general_words("en", ENGLISH_WORDS)
                for s, name in enumerate(names):
                    row = slice(counts.indptr[s], counts.indptr[s + 1])
                    floor = max(BOILERPLATE_EPISODES, BOILERPLATE_SHARE * sizes[s])
                    found = [t for t in counts.indices[row][counts.data[row] >= floor].tolist()
                             if self.kind_list[t] == WORD and self.term_list[t] in english]
                    if found:
                        self._boilerplate_terms[name] = frozenset(found)
        return self._boilerplate_terms

    def _choose(self, matrix: sp.csr_matrix, base: Row | sp.csr_matrix, j: int, candidates: list[int], n: int,
                avoid: frozenset[int] = frozenset()) -> list[str]:
        """At most ``n`` of the ``candidates`` (term ids, strongest first) as a person reads them, none of ``avoid``."""
        kinds, terms = self.kind_list, self.term_list

        def forms(term: int) -> frozenset[str]:  # (read for the few candidates of a list, not kept per term: 22 MB
            return _forms(terms[term]) if kinds[term] == WORD else frozenset((terms[term],))  # at 10k episodes)
        people: set[int] | None = None  # the people of the two (read when a word is part of a name)
        chosen: list[int] = []
        said: set[str] = set()  # the forms of the words chosen and of the phrases' (_forms: "fuzz" says "fuzzing")
        for term in candidates:
            if term in avoid:
                continue
            if kinds[term] != PHRASE and terms[term] in self.given:  # a first name alone ("catherine", "Craig")
                person = self._one_named(base.indices, matrix.indices[matrix.indptr[j]:matrix.indptr[j + 1]],
                                         terms[term])
                if person is None or person in chosen:  # nobody of the two's, or two of that name: none
                    continue
                term = person
            elif kinds[term] == WORD and terms[term] in self.name_parts:  # "hockman" where Katie Hockman is a guest
                if people is None:
                    people = self._people(base.indices, matrix.indices[matrix.indptr[j]:matrix.indptr[j + 1]])
                person = next((p for p in self.name_parts[terms[term]] if p in people), None)
                if person is not None:
                    if person in chosen:
                        continue
                    term = person
            if kinds[term] == WORD:
                if not forms(term).isdisjoint(said):
                    continue
                said |= forms(term)
            else:  # a phrase or a name says its words ("lohuizen" beside "Marcel van Lohuizen")
                if kinds[term] == PERSON:  # one person once: "Rene" (a transcript's label) beside "René Pickhardt"
                    name = _name_words(terms[term])
                    if any(kinds[c] == PERSON and name <= _name_words(terms[c]) for c in chosen):
                        continue
                    chosen = [c for c in chosen if not (kinds[c] == PERSON and _name_words(terms[c]) < name)]
                words = {w for word in terms[term].split("_") for w in _forms(word)}
                said |= words
                chosen = [c for c in chosen if not (kinds[c] == WORD and not forms(c).isdisjoint(words))]
            chosen.append(term)
            if len(chosen) >= n:
                break
        rank = {t: r for r, t in enumerate(chosen)}
        return [self.label(t) for t in sorted(chosen, key=lambda t: (kinds[t], rank[t]))]

    def _one_named(self, a: np.ndarray, b: np.ndarray, first: str) -> int | None:
        """The one person of first name ``first`` among the two rows' people (their token, or the other words of
        their name, among a row's terms), or None: "katie" is Katie Hockman when she is a guest of one of them, and
        nobody when no Katherine or two Catherines are named."""
        found = [person for person, rest in self.first_of.get(first, ())
                 if any(person in row or (rest and all(w in row for w in rest)) for row in (a, b))]
        return found[0] if len(found) == 1 else None

    def _people(self, *rows: np.ndarray) -> set[int]:
        """The person terms among these rows' term ids."""
        return {t for row in rows for t in row[self.kinds[row] == PERSON].tolist()}


# A contraction or possessive ending: "don’t", "we’ve", "channel's", "spec'ed" (not "O'Reilly").
_FORM_ENDING = re.compile(r"['’](?:s|es|t|ts|re|ve|ll|m|d|ed|alls?)$")


def _readable(word: str) -> bool:
    """A word a person reads as one topic: not a form of another word ("don’t", "channel's") and not a link's slug
    ("planting-new-platform-roots-cloud-native-fir": five parts or more) or spelled out letters ("a-g-n-t-c-y");
    "go-fuzz", "man-in-the-middle" and "child-pays-for-parent" are words."""
    if _FORM_ENDING.search(word):
        return False
    parts = word.split("-")
    return len(parts) < 5 and not (len(parts) > 2 and all(len(p) == 1 for p in parts))


_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_NUMBERS = (*_UNITS, *_TENS, "zero", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
            "seventeen", "eighteen", "nineteen", "hundred", "thousand", "million", "billion", "trillion",
            *(f"{t}-{u}" for t in _TENS for u in _UNITS))
NUMBER_WORDS = frozenset((*_NUMBERS, *(f"{n}s" for n in _NUMBERS)))  # "eighteen", "twenty-five", "thousands"


def _manner_word(word: str) -> bool:
    """An English adverb made of a plain word ("remarkably", "chemically", "happily"): both among the language's
    :data:`ENGLISH_WORDS` most frequent, the base of five letters or more, so that names and products ending in
    -ly ("Plotly", "Fastly", "Vitaly") and nouns ("family", "supply", "assembly") are not read as adverbs."""
    if not word.endswith("ly") or len(word) < 7:
        return False
    english = general_words("en", ENGLISH_WORDS)
    if word not in english:
        return False
    bases = [word[:-2]]  # "remotely", "firstly"
    if word.endswith("ily"):
        bases.append(word[:-3] + "y")  # "happily"
    if word.endswith(("ably", "ibly")):
        bases.append(word[:-1] + "e")  # "remarkably"
    if word.endswith("ically"):
        bases.append(word[:-4])  # "chemically": "chemical"
    return any(len(b) >= 5 and b in english for b in bases)


def repeated_share(counts: sp.csr_matrix, once: float) -> np.ndarray:
    """Per term, the share of the episodes that say it where it is more than a passing word: its weighted count
    (``counts``, the fit's, fields weighed) above ``once``, one mention in the transcript, i.e. said again or in the
    title, notes or people. A topic is said again where it is said ("taproot", "sourdough", "regulators"); a plain
    word in passing ("dragged", "negotiated", "loyal") once."""
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    more = np.bincount(counts.indices[counts.data > once * (1 + 1e-6)], minlength=counts.shape[1])
    # a word of fewer episodes is not judged (1: a topic): too few to tell (the demo's 36 episodes)
    return np.where(df >= TOPICAL_EVIDENCE, more / np.maximum(df, 1), 1.0).astype(np.float32)


_BRACKETED = re.compile(r"\[([^\[\]\n]{1,60})\](?!\()")  # (not a link's text: "[gokrazy](https://...)")
_NOTE_WORD = re.compile(rf"(?:[^\W\d_][{TERM_MARKS}]*){{3,}}")  # three letters or more, with their marks ("[तालियाँ]")


def bracketed_words(text: str) -> set[str]:
    """The words (folded) a transcript writes between square brackets: the transcriber's notes, "[applause]",
    "[inaudible 00:12:03]", "[redacted]" (a name left out of a meeting's transcript)."""
    return {fold_lower(w) for span in _BRACKETED.findall(text) for w in _NOTE_WORD.findall(span)}


def transcriber_notes(bracketed: dict[str, int], vocabulary: dict[str, int], counts: sp.csr_matrix) -> list[str]:
    """The terms that at least :data:`NOTE_EVIDENCE` episodes, and half of those that hold the term anywhere, write
    between square brackets (``bracketed``: per word, the episodes that do): what the transcriber noted, not what
    was talked about. In the site corpus "redacted" (the Lightning meetings' transcripts leave out who spoke) was a
    reason of 60 neighbours, "inaudible" of 13 and "applause" of 12."""
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    return sorted(w for w, n in bracketed.items()
                  if n >= NOTE_EVIDENCE and w in vocabulary and n >= NOTE_SHARE * df[vocabulary[w]])


def given_names(names: Sequence[str]) -> frozenset[str]:
    """The first words (folded) of the names that read as a person's, two or three words each a capital and then
    small letters ("Catherine Tucker", "Katie Hockman"; not "Multiparty ECDSA", "FireHydrant Clip", "BOLT 02")."""
    found = set()
    for name in names:
        words = name.split()
        if 2 <= len(words) <= 3 and all(w[:1].isupper() and w[1:].replace("-", "").replace("'", "").islower()
                                        and w[1:].replace("-", "").replace("'", "").isalpha() for w in words):
            found.add(fold_lower(words[0]))
    return frozenset(found)


def _name_words(token: str) -> frozenset[str]:
    """A person token's words, accents folded: "rené_pickhardt" holds "rene"."""
    return frozenset(fold_lower(token).split("_"))


VARIANT_ENDINGS = ("ations", "ation", "ings", "ing", "ers", "er", "ed", "s")


def _variant(word: str) -> str:
    """What a word's plain English variants have in common, enough to tell "xpubs", "fuzzing" and "fuzzer" repeat
    "xpub" and "fuzz", "honeybees" and "boxes" repeat "honeybee" and "box", and "fermenting" repeats "fermentation"
    (not a stemmer: "running" and "run" stay apart): one ending off when four letters are left (three for a plural
    "s": "bees", "bee"), then a final "e" ("encoding", "encode": "encod"; "boxes", "boxe": "box")."""
    for ending in VARIANT_ENDINGS:
        if (word.endswith(ending) and len(word) - len(ending) >= (3 if ending == "s" else 4)
                and not word.endswith("ss")):
            word = word[: -len(ending)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


@functools.lru_cache(maxsize=65536)
def _forms(word: str) -> frozenset[str]:
    """What tells that two reasons are one word: the word, its :func:`_variant` and its English stem written without
    hyphens (Snowball: "activate", "activated" and "activation" are "activ"; "front-running" and "frontrunning",
    "signaling" and "signalling", "topology" and "topologies" are one), so a list never shows two forms of a word."""
    return frozenset((word, _variant(word), _english_stem()(word.replace("-", ""))))


@functools.cache
def _english_stem() -> Callable[[str], str]:
    return languages.stemmer("en")


def topic_floor(weights: np.ndarray, k: int = TOPIC_TERMS) -> float:
    """The weight of an episode's ``k``-th strongest term: the terms at or above it are its topics."""
    return float(np.partition(weights, len(weights) - k)[len(weights) - k]) if len(weights) > k else 0.0


class Row:
    """One sparse row as its term ids and weights: a matrix's row without scipy's slicing, or a vectorized text
    (a 1 x N ``csr_matrix`` has the same two attributes)."""

    __slots__ = ("indices", "data")

    def __init__(self, indices: np.ndarray, data: np.ndarray) -> None:
        self.indices, self.data = indices, data

    @classmethod
    def of(cls, matrix: sp.csr_matrix, i: int) -> Row:
        start, end = matrix.indptr[i], matrix.indptr[i + 1]
        return cls(matrix.indices[start:end], matrix.data[start:end])


def mention_reason(mentions: sp.csr_matrix | None, numbers: list[int | None], i: int, j: int,
                   shows: list[str] | None = None, show_titles: dict[str, str] | None = None) -> str | None:
    """"mentions episode N" when episode ``i`` names ``j`` by its number, "mentioned in episode N" the other way;
    when ``j`` is another show's (``shows``), with that show's title: "mentions Founders Talk episode 93"."""
    if mentions is None or numbers[j] is None:
        return None
    title = (show_titles or {}).get(shows[j]) if shows is not None and shows[i] != shows[j] else None
    episode = f"{title} episode {numbers[j]}" if title else f"episode {numbers[j]}"
    if mentions[i, j]:
        return f"mentions {episode}"
    if mentions[j, i]:
        return f"mentioned in {episode}"
    return None
