"""The library's front door for the CLI and the web app: one object over the catalog, index and model.

It opens things lazily (no work at import or construction time) and reopens the index and the model
when a reindex has swapped in a new generation.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import languages
from .answers import SearchResult, SimilarItem, SimilarResult, person_label, search_answer
from .catalog import Catalog
from .engines import Engine, open_engine
from .engines.base import EngineHit, EngineQuery, EngineResult, listing_key
from .engines.querytext import any_word_first, fields_dropped, filter_names, has_syntax, phrases_as_words, plain_words
from .engines.spelling import keeping, words_of_the_language
from .episodes import Episode, Segment, Show, person_key
from .errors import DataUnreadable, EngineUnavailable, IndexMissing, NotFound, PodsearchError, QueryError, TimedOut
from .feedback import FEEDBACK, Feedback, rerank, said_in_reads, with_passages
from .generations import Generations
from .languages import detect_language, fold, primary
from .languages import words as words_of
from .load import LoadCounters, read_load
from .names import Names
from .report import Report
from .requests import MAX_K, MAX_PREFIX_CHARS, MAX_TEXT_CHARS, SearchRequest
from .similar import Neighbour, SimilarModel
from .similar.persist import health as model_health

QUOTE_SLOP = 3  # places a remembered quote's words may be apart, when as typed no episode says it
SAID_WORDS = 6  # from this many words a plain query may be a sentence remembered (a topic is a few words: "bias and
# fairness in ai", said by two episodes, one of them about something else, put them first: topical 0.904 -> 0.893)
SPOKEN_WORDS = 5  # ... or this many, when a word is one of speech (_SPOKEN: a topic is never "you're", "my", "we")
_SPOKEN = re.compile(r"(?i)\b(?:i|me|my|you|your|we|our|us|he|him|his|she|her|they|them|their)\b"
                     r"|\w['’](?:m|re|ve|ll|d)\b|n['’]t\b")
SAID_MOST_WORDS = 24  # ... and at most this many: a pasted paragraph is no sentence remembered (80 common words
# at 10k: 36 ms of CPU as any words, 84 ms with the phrase looked for)
SAID_AMONG = 100  # the ranking's first episodes among which a sentence said as typed is looked for
SAID_MAX = 3  # a sentence said (nearly) as typed by at most this many of them puts them first (_said)
AROUND = 120.0  # seconds of an episode around a moment whose neighbours /similar/<id>?t= finds
PEOPLE_FIRST = 3  # typeahead: persons whose name the prefix begins, before the episode titles

log = logging.getLogger(__name__)

class Library:
    """The catalog, the search engine and the similarity model of one data folder.

    ``engine``: the engine to search with (default: the embedded Whoosh index in ``data_dir``).
    """

    @classmethod
    def from_config(cls, config: Any) -> Library:
        """The library of a config's data folder, searching with the engine it names."""
        lib = cls(config.data_dir, engine=open_engine(config.data_dir, config),
                  search_deadline=float(config.search_deadline))
        lib.feedback = replace(FEEDBACK, passage=float(config.search_passages))
        return lib

    def __init__(self, data_dir: Path | str, engine: Engine | None = None, search_deadline: float = 1.0) -> None:
        self.data_dir = Path(data_dir)
        self.engine: Engine = engine or open_engine(self.data_dir)
        self.search_deadline = search_deadline  # seconds of engine work per search; 0: none
        # Counted in memory; written to the data folder (for ``podsearch stats``) by a serving library only
        # (web/app.py): a CLI search wrote its own one search over the server's counters.
        self.load = LoadCounters()
        self.model_generations = Generations(self.data_dir / "model")
        self._local = threading.local()
        self._model: SimilarModel | None = None
        self._model_stamp: tuple[str, float] = ("", 0.0)
        self._model_lock = threading.Lock()
        self._model_failed: tuple[tuple[str, float], DataUnreadable] | None = None  # (stamp, why) of a damaged model
        # Title, show, date, link and language of every episode the model knows, loaded with the model:
        # /similar is then a lookup (a reindex that changes any episode refits the model, so they stay in step).
        self._summaries: dict[str, tuple[str, str, str | None, str, str]] = {}
        self._show_names: dict[str, str] = {}
        self.feedback: Feedback = FEEDBACK  # relevance feedback from the model (feedback.py)
        self._feedback_failed = False  # the model could not be loaded for feedback (logged once)
        self._unwarmed = ""  # what warm() last found missing (logged when it changes, not every look)
        self._names: tuple[tuple[str, float], Names] | None = None  # (engine stamp, the episodes' names)
        self._names_lock = threading.Lock()
        self._shows: tuple[Any, list[Show]] | None = None  # ((engine stamp, last run's end), the catalog's shows)

    # -- resources ------------------------------------------------------------------------------
    @property
    def catalog(self) -> Catalog:
        """A catalog connection for this thread (SQLite connections stay in their thread)."""
        cat = getattr(self._local, "catalog", None)
        if cat is None:
            cat = self._local.catalog = Catalog.existing(self.data_dir)
        return cat

    def close(self) -> None:
        cat = getattr(self._local, "catalog", None)
        if cat is not None:
            cat.close()
            self._local.catalog = None

    def warm(self) -> None:
        """Load what the first search and the first /similar would otherwise load (the server calls this before
        it says it is ready): the index's per-generation facet values and the similarity model with what its reasons
        read, where they exist."""
        missing, damaged = [], False
        for load in (self.engine.warm, lambda: self.model().warm()):
            try:
                load()
            # none yet, (DataUnreadable) one that cannot be read, or a search cluster that does not answer: served
            # without it (until 5 December 2026 serve ended in a traceback when OpenSearch was down at its start)
            except (IndexMissing, EngineUnavailable) as exc:
                missing.append(str(exc))
                damaged = damaged or isinstance(exc, (DataUnreadable, EngineUnavailable))
        said, self._unwarmed = self._unwarmed, "; ".join(missing)
        if self._unwarmed and self._unwarmed != said:  # (the server's warmer looks every 2 s)
            log.log(logging.ERROR if damaged else logging.INFO, "nothing to warm: %s", self._unwarmed)

    def model(self) -> SimilarModel:
        stamp = self.model_generations.stamp()
        with self._model_lock:
            if self._model is None or stamp != self._model_stamp:
                failed = self._model_failed
                if failed is not None and failed[0] == stamp:  # (not read again every request and every warm)
                    raise failed[1].with_traceback(None)
                try:
                    self._model = SimilarModel.load(self.model_generations)
                except DataUnreadable as exc:
                    self._model_failed = (stamp, exc)
                    raise
                self._model_failed = None
                self._summaries = {i: (*row[:4], primary(row[4])) for i, row in self.catalog.summaries().items()}
                # each row's language, for its reasons (a language's most common words are none): not saved with it
                self._model.languages = [self._summaries[i][4] if i in self._summaries else "" for i in self._model.ids]
                self._show_names = {s.id: s.title for s in self.catalog.shows()}
                self._model_stamp = stamp
            return self._model

    def _summary(self, episode_id: str) -> tuple[str, str, str | None, str, str] | None:
        """(title, show id, published, link, primary language code)."""
        found = self._summaries.get(episode_id)
        if found is None:  # an episode newer than the model: read it from the catalog
            ep = self.catalog.episode(episode_id, with_segments=False)
            if ep is None:
                return None
            found = (ep.title, ep.show_id, ep.published, ep.link, primary(ep.language))
        return found

    # -- queries ----------------------------------------------------------------------------------
    def search(self, req: SearchRequest, deadline: float | None = None) -> SearchResult:
        """The answer to a search, within ``search_deadline`` seconds of engine work: when the deadline passes the
        answer holds the best of what was read (``timed_out``), or Overloaded when that is nothing. ``deadline``
        (``time.monotonic()``'s clock; :meth:`deadline`): one several searches of a request share."""
        started = time.perf_counter()
        deadline = deadline if deadline is not None else self.deadline()
        query, found = self._found(req, deadline)
        result = search_answer(req.q, query.page, query.per_page, found, self.catalog, self.engine.analyzer,
                               took_ms=0.0, segment_counts=self.engine.segment_counts, deadline=deadline,
                               person=query.filters.person)
        if found.without_fields is not None:
            result.anywhere = fields_dropped(found.corrected or query.text)
        # the whole search, the page's snippets and moments too (until 5 December 2026 the engine's part only: a
        # page of 100 hits of ten fuzzy words said 136 ms and took 0.9 s)
        result.took_ms = round((time.perf_counter() - started) * 1000, 2)
        return result

    def ranked(self, req: SearchRequest) -> EngineResult:
        """What :meth:`search` ranks, without building the page's snippets and moments: the engine's result
        with the page's hits in the order the search shows them (``podsearch eval search`` scores this)."""
        return self._found(req)[1]

    def deadline(self) -> float | None:
        """When a search starting now must end (None: no deadline)."""
        return time.monotonic() + self.search_deadline if self.search_deadline > 0 else None

    def _found(self, req: SearchRequest, deadline: float | None = None) -> tuple[EngineQuery, EngineResult]:
        """The engine's question and its ranked answer, within the deadline, counted in the load counters."""
        deadline = deadline if deadline is not None else self.deadline()
        try:
            query = req.engine_query(deadline)
            found = self._ranked(query)
            if req.correct and found.suggestion and not found.timed_out:
                # a word no episode holds, a typo, is corrected; a word of the language it would replace stays
                # as typed ("Pynchon" is no "python"), and the others are corrected without it ("voclano eruption",
                # suggested "volcano erupting": "eruption" is held under its stem alone)
                real = words_of_the_language(query.text, found.suggestion, self.engine.read_as(query.filters.language))
                text = keeping(query.text, found.suggestion, real) if real else found.suggestion
                # (the suggestion is written with single spaces: " tide ", kept as typed, was "corrected" to "tide",
                # the same search, its suggestion "time" lost; until 5 December 2026)
                if " ".join(text.split()).lower() != " ".join(query.text.split()).lower():
                    found = self._corrected(query, found, text)
            if req.correct and not found.total and not found.timed_out:  # (a phrase no episode says)
                found = self._unquoted(query, found)
            if not found.total and not found.timed_out:
                found.notes = [*self._too_common(query), *found.notes]
                found.without_fields = self._without_fields(query, found)
            found.no_duration = self._no_duration(query, found)
            found.notes = [*filter_names(query.text), *found.notes]
        except QueryError:
            self.load.add("refused")
            raise
        self.load.add("searches")
        if req.expensive:
            self.load.add("expensive")
        if found.timed_out:
            self.load.add("timed_out")
            if not found.hits:
                raise TimedOut(f"The search found nothing within its {self.search_deadline:g} s; try fewer or more "
                                 "precise words, or again in a moment.")
        return query, found

    def _corrected(self, query: EngineQuery, found: EngineResult, text: str) -> EngineResult:
        """The answer for ``text``, the query's spelling suggestion (or the part of it that replaces no word of the
        language), which is only offered when a word of the query is one no episode holds (it matches nothing: the
        any-word fallback, or a long query's any-word reading, ranked the others without it) and the correction
        finds clearly more (``engines/spelling.py``); else ``found``."""
        better = self._ranked(replace(query, text=text, suggest=False))
        if better.timed_out or not better.total:
            return found
        better.corrected = text
        return better

    def _unquoted(self, query: EngineQuery, found: EngineResult) -> EngineResult:
        """The answer for the query's phrases read as words, when as phrases they found nothing (a quote remembered
        with a word missing, swapped or wrong) and the query is phrases and words alone (``"sourdough starter" -rye``
        finding nothing is an answer); else ``found``. Said as ``corrected`` (the words searched instead) and in a
        note."""
        words_only = phrases_as_words(query.text)
        if has_syntax(words_only):
            return found
        loose = [(phrases_as_words(query.text, slop=QUOTE_SLOP), "say them a few words apart"), (words_only, "hold them")]
        for words, how in loose:
            if words == query.text:  # (a phrase typed with the slop already: its words are left to try)
                continue
            better = self._ranked(replace(query, text=words, suggest=False))
            if better.timed_out:
                return found
            if better.relaxed and not better.all_words:  # (no episode holds every word: "waggle dance" found
                continue  # 90 episodes saying "dance", said to hold the quoted words)
            if better.total:
                if better.relaxed or any_word_first(words):  # (ranked on any word: some hold them all, or none)
                    how = "hold some of them"
                better.corrected = words
                better.notes = [f"No episode says the quoted words as typed; these {how}.", *better.notes]
                return better
        return found

    def _counted(self, query: EngineQuery) -> int | None:
        """How many episodes ``query`` finds, as the engine counts them for a page of one hit (no facets, no
        suggestion); None when the deadline passed first, or when the engine refuses it: a count only says more of
        a search that went well (``+title:[c TO d] +title:zzzq`` found nothing, its range 111 title words, and its
        count without the fields refused the range over every field's words: the search was a 400)."""
        try:
            counted = self.engine.search(replace(query, page=1, per_page=1, facets=False, suggest=False))
        except QueryError:
            return None
        return None if counted.timed_out else counted.total

    def _no_duration(self, query: EngineQuery, found: EngineResult) -> int | None:
        """With a duration filter: how many episodes the words (as searched) find that have no known length, which
        the filter leaves out (only some feeds say an episode's length: 147 of the site corpus's 1,869 episodes;
        ``bitcoin`` at least a minute long found 0 and did not say why, until 6 December 2026). One count;
        None without a duration filter or past the deadline."""
        f = query.filters
        if (f.duration_min is None and f.duration_max is None) or found.timed_out:
            return None
        unknown = replace(f, duration_min=None, duration_max=None, no_duration=True)
        return self._counted(replace(query, text=found.corrected or query.text, filters=unknown))

    def _without_fields(self, query: EngineQuery, found: EngineResult) -> int | None:
        """For a search in fields that found nothing (``title:generics``: the site's Changelog titles are "Go Time
        #140"): how many episodes its words find in any field. One count; None for a query that names no field
        of words, or past the deadline."""
        text = found.corrected or query.text
        words = fields_dropped(text)
        if words == text or not plain_words(words).strip():
            return None
        return self._counted(replace(query, text=words))

    def _too_common(self, query: EngineQuery) -> list[str]:
        """A note for a query that found nothing because each of its words is a stop word of a language it was read
        in (the asked one, else each of the index's: the index leaves them out, ``to be or not to be``, ``die der
        und``), or because it holds no word at all (symbols, emoji); [] for any other."""
        words = list(dict.fromkeys(w.lower() for w in words_of(plain_words(query.text))))
        if not words and plain_words(query.text).strip():  # ("🚀", "→": 0 episodes, and nothing said why)
            return ["The query holds no word: symbols and emoji are not searched. Type the words you remember."]
        if not words:
            return []
        if all(any(self.engine.analyzer(p).texts(w) for w in words) for p in self.engine.read_as(query.filters.language)):
            return self._unwritten(words)
        return [f"Each word of the query is too common to be searched ({', '.join(words[:8])}): the index leaves "
                "such words out. Add a word that says what the episode is about."]

    def _unwritten(self, words: list[str]) -> list[str]:
        """A note for a query that found nothing whose words are all of a script no language of the index is
        written in (``東京`` over English episodes: until 6 December 2026 nothing said why, while emoji did); []
        for any other, and when an index's language could be written in it (a language analysed as ``plain``
        may be written in any script)."""
        scripts = languages.scripts_of(" ".join(words))
        held = self.engine.read_as("")
        if not scripts or any(languages.PROFILE_SCRIPTS.get(p) in {None, *scripts} for p in held):
            return []
        names = sorted({languages.name(p) for p in held})
        return [f"No episode is in a language written in {' or '.join(sorted(scripts))} script ({', '.join(words[:4])}):"
                f" the episodes are in {', '.join(names)}. Search in the episodes' language."]

    def _ranked(self, query: EngineQuery) -> EngineResult:
        """The engine's answer; ranked by relevance, its top episodes reordered by their best passages and the
        model's feedback (the engine is asked for that many, and the page asked for is cut from them), an
        episode the query names (``names.py``) first."""
        fb = self.feedback
        end = query.page * query.per_page
        start = end - query.per_page
        named = self._named(query)
        sentence = not named and self._sentence(query)
        # (past the reordered top, the engine's order is the order; but with a named episode put first, every page
        # is cut from the one list: paged from the engine's, one episode fell between the top and the next page)
        if not ((fb.on or named or sentence) and query.sort == "relevance" and query.text.strip()
                and (start < fb.depth or named or sentence)):
            return self.engine.search(query)
        depth = max(end, fb.depth)
        found = self.engine.search(replace(query, page=1, per_page=max(depth, SAID_AMONG if sentence else 0)))
        if sentence:
            named = self._said(query, [h.id for h in found.hits])
        found.hits = found.hits[:depth]
        found.hits = self._reordered(found, fb, query.text) if fb.on and any(found.terms.values()) else found.hits
        place = {h.id: n for n, h in enumerate(found.hits)}
        named = self._allowed(named, query) if any(i not in place for i in named) else named
        if named:
            top = max((h.score for h in found.hits), default=1.0)
            if found.total <= len(place):  # (every match is at hand: count a named episode the words missed)
                found.total += sum(i not in place for i in named)
            named = sorted(named, key=lambda i: place.get(i, len(place)))  # (two named alike: in the ranking's order)
            found.hits = [EngineHit(i, top) for i in named] + [h for h in found.hits if h.id not in named]
            found.suggestion = ""  # (the query is a title: nothing to correct)
        found.hits = found.hits[start:end]
        return found

    def _cached_shows(self) -> list[Show]:
        """The catalog's shows, read again when the index or the last finished run is another (a reindex or an
        import that updates the index in place keeps its generation): the typeahead read them all, and their titles
        again for a multiword prefix, at every keystroke."""
        last = self.catalog.last_run()
        stamp = (self.engine.stamp(), last["finished"] if last else None)
        cached = self._shows
        if cached is None or cached[0] != stamp:
            cached = self._shows = (stamp, self.catalog.shows())
        return cached[1]

    def _named(self, query: EngineQuery) -> list[str]:
        """The episodes a relevance search's text names (by title, or show and number); [] for most queries."""
        if query.sort != "relevance" or not any(c.isdigit() for c in query.text):  # (a name holds a number)
            return []
        stamp = self.engine.stamp()
        with self._names_lock:
            if self._names is None or self._names[0] != stamp:
                self._names = (stamp, Names((s.id, s.title) for s in self.catalog.shows()))
            names = self._names[1]
        return names.named(query.text, self.catalog, query.filters.shows)

    @staticmethod
    def _sentence(query: EngineQuery) -> bool:
        """Whether a query may be a sentence remembered: plain words, ``SAID_WORDS`` to ``SAID_MOST_WORDS`` of them
        (from ``SPOKEN_WORDS`` when one is a word of speech, a personal pronoun or a contraction: "You're just
        compounding your crimes"), ranked by relevance."""
        text = query.text.strip()
        least = SPOKEN_WORDS if _SPOKEN.search(text) else SAID_WORDS
        return (query.sort == "relevance" and least <= len(text.split()) <= SAID_MOST_WORDS  # (most queries
                and '"' not in text and not has_syntax(text) and any_word_first(text))  # stop at the count)

    def _said(self, query: EngineQuery, among: list[str]) -> list[str]:
        """The few episodes (at most ``SAID_MAX``) that say a sentence (:meth:`_sentence`) in its order, a few
        places apart at most (``QUOTE_SLOP``): a quote typed without its quotes, ranked on any word, came
        first for 4 of the dev set's 10 quotes and was not in the top 10 for 2 (``except if you want to buy
        drugs``). Looked for ``among`` the ranking's first ``SAID_AMONG`` (the dev set's and our own 24
        quotes: the deepest at 62): over every episode, the phrase of common words tripled the CPU of such a
        query at 10k (15.6 -> 46.6 ms); among them, 14.8 -> 21.9 ms. [] when more episodes say it, or none in
        time."""
        if not among:
            return []
        said = self.engine.search(replace(query, text=f'"{query.text.strip()}"~{QUOTE_SLOP}', page=1,
                                          per_page=SAID_MAX + 1, facets=False, suggest=False,
                                          filters=replace(query.filters, ids=tuple(among))))
        return [h.id for h in said.hits] if not said.timed_out and 1 <= said.total <= SAID_MAX else []

    def _allowed(self, ids: list[str], query: EngineQuery) -> list[str]:
        """The named episodes that are in the index and pass the query's filters (asked when the engine's top did
        not hold them all)."""
        allowed = self.engine.search(EngineQuery(text="", filters=replace(query.filters, ids=tuple(ids)),
                                                 per_page=len(ids), facets=False, suggest=False, deadline=query.deadline))
        passed = {h.id for h in allowed.hits}
        return [i for i in ids if i in passed]

    def _reordered(self, found: EngineResult, fb: Feedback, text: str) -> list[EngineHit]:
        """The engine's top hits reordered: a word said only in a hit's reads counts as not said (a plain query's), then
        by their best passages and the model's vote."""
        hits = found.hits
        model = self._feedback_model() if fb.votes or fb.reads else None
        if fb.reads and model is not None and not has_syntax(text):
            hits = said_in_reads(hits, model, text, fb)
        # (a search cut short by its deadline, approximate already, is not rated: rating the 1,152 words of 26
        # two-letter prefixes took 0.6 s past the deadline on the site corpus, 5 December 2026)
        if fb.passages and len(hits) > 1 and not found.timed_out:
            head = [h.id for h in hits[: fb.passage_top]]
            hits = with_passages(hits, self.engine.passages(head, sorted(found.terms.get("transcript", ())), fb.window), fb)
        return rerank(hits, model, fb) if model is not None and fb.votes else hits

    def _feedback_model(self) -> SimilarModel | None:
        """The similarity model for the feedback, or None (none fitted yet, or one that cannot be read: logged once)."""
        try:
            return self.model()
        except IndexMissing:  # no model fitted yet: the engine's order
            return None
        except PodsearchError as exc:  # said in a line (a catalog it cannot open: the search says it too)
            if not self._feedback_failed:
                log.error("relevance feedback is off: %s", exc)
                self._feedback_failed = True
            return None
        except Exception:  # a model that cannot be read must not fail the search (/similar reports it)
            if not self._feedback_failed:
                log.exception("relevance feedback is off: the similarity model could not be loaded")
                self._feedback_failed = True
            return None

    def suggest(self, prefix: str, limit: int = 8) -> list[dict[str, str]]:
        """Typeahead: shows whose title starts with (a word of) the prefix, then up to ``PEOPLE_FIRST`` persons
        whose name starts with it, episode titles, the other persons and words of the index that complete its last
        word."""
        prefix = prefix.strip().lower()
        if not prefix:
            return []
        if len(prefix) > MAX_PREFIX_CHARS:
            raise QueryError(f"The prefix is longer than {MAX_PREFIX_CHARS} characters.")
        out: list[dict[str, str]] = []
        seen: set[str] = set()

        def add(kind: str, text: str, **extra: str) -> None:
            key = kind + text.lower()
            if key not in seen and len(out) < limit:
                seen.add(key)
                out.append({"kind": kind, "text": text, **extra})

        # (the search's deadline: on OpenSearch a hung node held each typeahead request 30 s, opensearch_timeout)
        deadline = self.deadline()
        found = self.engine.suggest(prefix, limit, deadline)
        plain = fold(prefix)
        if plain != prefix:  # typed with accents: the index's words and titles are read folded (café = cafe), and
            # a name may be kept as written (a person's): both readings, as typed first (until 5 December 2026
            # "café", "résum" and "Ödeg" were offered nothing on Whoosh, where "cafe" found cafe and cafeteria)
            more = self.engine.suggest(plain, limit, deadline)
            found = {kind: list(dict.fromkeys([*found.get(kind, []), *more.get(kind, [])])) for kind in
                     dict.fromkeys([*found, *more])}
        for show in self._cached_shows():
            title = show.title.lower()
            if any(t.startswith(p) or any(w.startswith(p) for w in t.split())
                   for t, p in ((title, prefix), (fold(title), plain))):
                add("show", show.title, id=show.id)
        keys = [key for _, key in found.get("person", [])]
        names = self.catalog.person_names(keys) if keys else {}
        # a person whose name the whole prefix begins comes before titles that may hold only its last word: eight
        # titles with a word in "r" ("Welcome Remarks") left no room for Mat Ryer after "mat r"
        for key in keys[:PEOPLE_FIRST]:
            add("person", person_label(key, names))
        analyzers = [self.engine.analyzer(key) for key in self.engine.read_as()]
        for episode_id, title in self._titles_of_the_words_before(prefix, found.get("episode", []), analyzers):
            add("episode", title, id=episode_id)
        for key in keys:
            add("person", person_label(key, names))
        for _, text in found.get("term", []):
            if any(a.texts(text) for a in analyzers):  # not a word the index leaves out ("the", "they", "there":
                add("term", text)  # each led to a page that found nothing)
        return out

    def _titles_of_the_words_before(self, prefix: str, episodes: list[tuple[str, str]],
                                    analyzers: list[Any]) -> list[tuple[str, str]]:
        """The typeahead's episode titles that hold a word typed before the last one, or whose show's title does
        (the engine ranks those first): a title that holds only a word the last one starts is about something
        else. Until 5 December 2026 "kubernetes o" and "go concurrency p" were offered eight Bitcoin titles ("Ocean
        Tides", "OP_RETURN") and no word ("operator", "patterns"). One word typed: every title it starts."""
        before = words_of(prefix)[:-1]
        said = [set(a.texts(" ".join(before))) for a in analyzers] if before else []
        if not episodes or not any(said):
            return episodes
        shows = {show.id: show.title for show in self._cached_shows()}
        show_of = self.catalog.show_ids([episode_id for episode_id, _ in episodes])

        def holds(text: str) -> bool:
            return any(words & set(a.texts(text)) for a, words in zip(analyzers, said, strict=True))

        return [(episode_id, title) for episode_id, title in episodes
                if holds(title) or holds(shows.get(show_of.get(episode_id, ""), ""))]

    def episode(self, episode_id: str, with_segments: bool = True) -> Episode:
        ep = self.catalog.episode(episode_id, with_segments)
        if ep is None:
            raise NotFound.unknown("episode", episode_id)
        return ep

    def segments(self, episode_id: str, first: int = 0, stop: int | None = None) -> list[Segment]:
        """The episode's transcript segments at places ``first`` to ``stop`` (from 0): one part of its page."""
        return self.catalog.segments(episode_id, first, stop)

    def segment_starts(self, episode_id: str, first: int = 0, stop: int | None = None) -> list[float | None]:
        """Where the episode's transcript segments at places ``first`` to ``stop`` start (None: no time), without
        their text."""
        return self.catalog.segment_starts(episode_id, first, stop)

    def segment_playing(self, episode_id: str, t: float) -> int:
        """The place of the transcript segment playing at second ``t`` (``Catalog.segment_playing``; -1: none)."""
        return self.catalog.segment_playing(episode_id, t)

    def segment_seconds_before(self, episode_id: str, first: int, seconds: set[int]) -> set[int]:
        return self.catalog.segment_seconds_before(episode_id, first, seconds)

    def segment_count(self, episode_id: str) -> int:
        return self.catalog.segment_count(episode_id)

    def episode_gone(self, episode_id: str) -> tuple[bool, str | None]:
        """Whether the episode has left its feed: still stored and searchable, no longer published (docs/ingest.md);
        and since when, as ``2026-12-05T23:40:39Z`` (the run that first found it gone; None if it is in its feed or
        was found gone before the catalog kept that, schema 7)."""
        gone, since = self.catalog.left_feed(episode_id)
        return gone, None if since is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))

    def show(self, show_id: str) -> Show:
        show = self.catalog.show(show_id)
        if show is None:
            raise NotFound.unknown("show", show_id)
        return show

    def shows(self) -> list[Show]:
        return self.catalog.shows()

    def person_name(self, key: str) -> str:
        """A person's name as written, from the key the person filter takes (``person=ian mcallister``)."""
        key = person_key(key)
        return person_label(key, self.catalog.person_names([key]))

    def episodes_of(self, show_id: str, limit: int = 500) -> list[Episode]:
        """A show's first ``limit`` episodes, newest first; those of one date (or none) by their numbers, the
        highest first, then the unnumbered by their ids' numbers (``listing_key``: as ``sort=date`` lists them on
        either engine): the site corpus's 341 undated Go Time episodes were listed #1, #10, #100, #101 ... by their
        ids as text."""
        self.show(show_id)
        episodes = sorted(self.catalog.episodes(show_id), reverse=True,
                          key=lambda e: (e.published or "", listing_key(e.id, e.number)))
        return episodes[:limit]

    def recent(self, limit: int = 10) -> list[Episode]:
        out = []
        for ep in self.catalog.episodes(include_gone=False):
            out.append(ep)
            if len(out) >= limit:
                break
        return out

    def similar(self, episode_id: str, k: int = 10, *, t: float | None = None, same_show: bool = True,
                shows: list[str] | None = None, exclude_shows: list[str] | None = None,
                min_score: float = 0.0, same_language: bool = True) -> SimilarResult:
        """The episodes nearest in topic; with ``same_language`` (the default) only those in the episode's
        language (episodes of no known language are kept: their language was not declared nor detected)."""
        if not 1 <= k <= MAX_K:
            raise QueryError(f"k must be between 1 and {MAX_K}.")
        if not 0.0 <= min_score <= 1.0:
            raise QueryError("min_score must be between 0 and 1.")
        model = self.model()
        if episode_id not in model.position:
            self.episode(episode_id)  # NotFound for unknown ids
            raise IndexMissing("This episode is newer than the similarity model; run 'podsearch reindex'.")
        opts = dict(same_show=same_show, shows=shows, exclude_shows=exclude_shows, min_score=min_score)
        lang = self._language(episode_id) if same_language else ""
        duplicates: list[Neighbour] = []
        if t is not None:
            if t < 0:
                raise QueryError("t must be 0 or more seconds.")
            # (the text of those two minutes alone: every segment's was read, 0.6 s of CPU for a transcript of
            # 300,000 cues, until 6 December 2026)
            text = self.catalog.text_between(episode_id, t - AROUND / 2, t + AROUND / 2)
            if not text.strip():
                raise QueryError(f"The episode has no transcript around {t:g} s.")
            kept = self._in_language(model.similar_to_text(text, MAX_K if lang else k, exclude=episode_id, **opts),
                                     lang, k)
        else:
            picked, duplicates = model.similar(episode_id, k, **opts)
            kept = self._in_language(picked, lang, k)
            if len(kept) < len(picked):
                # some of the first k are in another language: look through all MAX_K kept neighbours
                picked, duplicates = model.similar(episode_id, MAX_K, **opts)
                kept = self._in_language(picked, lang, k)
        return SimilarResult(id=episode_id, similar=self._items(kept), duplicates=self._items(duplicates), t=t)

    def similar_to_text(self, text: str, k: int = 10, *, same_language: bool = True, **opts: Any) -> SimilarResult:
        """Episodes near in topic to ``text``; with ``same_language``, only those in the language the text is
        detected in (when the detector is sure; else any)."""
        if not text.strip():
            raise QueryError("text is empty.")
        if len(text) > MAX_TEXT_CHARS:
            raise QueryError(f"text is longer than {MAX_TEXT_CHARS:,} characters.")
        if not 1 <= k <= MAX_K:
            raise QueryError(f"k must be between 1 and {MAX_K}.")
        lang = detect_language(text) if same_language else ""
        picked = self.model().similar_to_text(text, MAX_K if lang else k, **opts)
        return SimilarResult(id=None, similar=self._items(self._in_language(picked, lang, k)))

    def _language(self, episode_id: str) -> str:
        """Callers have loaded the model (and with it the summaries) for this request."""
        found = self._summary(episode_id)
        return found[4] if found else ""

    def _in_language(self, neighbours: list[Neighbour], lang: str, k: int) -> list[Neighbour]:
        """The first ``k`` neighbours in ``lang`` or of no known language (all of them when ``lang`` is "")."""
        if not lang:
            return neighbours[:k]
        return [n for n in neighbours if self._language(n.id) in {lang, ""}][:k]

    def _items(self, neighbours: list[Neighbour]) -> list[SimilarItem]:
        out = []  # the model, loaded by the caller, brought the summaries
        for n in neighbours:
            found = self._summary(n.id)
            if found is None:
                continue
            title, show_id, published, link, language = found
            out.append(SimilarItem(id=n.id, title=title, show=self._show_names.get(show_id, show_id),
                                   show_id=show_id, published=published, url=link, score=n.score,
                                   reasons=n.reasons, duplicate=n.duplicate, language=language))
        return out

    # -- operations -------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        counts = self.catalog.counts()
        last = self.catalog.last_run()
        out: dict[str, Any] = dict(counts)
        out["data"] = str(self.data_dir)
        out["engine"] = self.engine.name
        try:
            exists = self.engine.exists()
            out["index_generation"] = self.engine.stamp()[0]
            try:
                out["index_documents"] = self.engine.doc_count() if exists else 0
            except DataUnreadable as exc:  # said, with the other figures (until 5 December 2026 a traceback)
                out["index_documents"], out["index_error"] = 0, str(exc)
            out["index_bytes"] = self.engine.size_bytes() if exists and "index_error" not in out else 0
        except EngineUnavailable as exc:  # a search cluster down: said with the catalog's and the model's figures
            # (until 5 December 2026 stats said that line alone, and --json printed nothing a monitor could read)
            out.update(index_generation="", index_documents=0, index_bytes=0, index_error=str(exc))
        model = self.model_generations.current()
        out["model_generation"] = model.name if model is not None else ""
        problem = model_health(self.model_generations)  # read from its parameters and file sizes, not loaded
        if problem:  # (until 5 December 2026 stats said nothing of the model: a stale or cut one looked healthy)
            out["model_error"] = problem
        if last:
            out["last_reindex"] = {
                "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(last["finished"])),
                "age_seconds": round(time.time() - last["finished"], 1),
                "failed": last.get("failed", False),
                "errors": last.get("errors", [])[:20],
                # Each host the run could not reach, once: why, and how many links it cost.
                "unreachable_hosts": [{k: h.get(k) for k in ("host", "cause", "failed", "skipped")}
                                      for h in last.get("unreachable_hosts", [])],
                "feeds_dropped": last.get("feeds_dropped", []),
                # what the run did and said (reindex --json has it all; until 5 December 2026 stats said none of
                # it: a feed that moved, a show recognised, webhooks that failed showed as "failed": false alone);
                # every count of the report (until 6 December 2026 a list that left out the transcripts not
                # modified, empty, and read again for a new parser)
                "counts": Report.counts(last),
                "moves": last.get("moves", [])[:20],
                "notes": last.get("notes", [])[:20],
                "warnings": last.get("warnings", [])[:20],
                "webhooks": last.get("webhooks", {}),
                "webhook_errors": last.get("webhook_errors", [])[:20],
            }
        else:
            out["last_reindex"] = None
        out["unfinished_reindexes"] = [  # started since, not finished: stopped by an error, killed, or running now
            {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(run["started"])), "aborted": run["aborted"]}
            for run in self.catalog.unfinished_since()]
        out["server_load"] = read_load(self.data_dir)
        return out

    def ready(self) -> dict[str, Any]:
        """What /readyz reports; raises IndexMissing when not ready."""
        docs = self.engine.doc_count()
        engine = self.engine.health()
        self.model()
        last = self.catalog.last_run()
        out = {"status": "ready", "index_generation": self.engine.stamp()[0], "episodes": docs,
               "pid": os.getpid(),
               "last_reindex_age_seconds": round(time.time() - last["finished"], 1) if last else None}
        if engine:
            out["engine"] = engine
        return out


def segments_around(segments: list[Segment], t: float, window: float = AROUND) -> str:
    """The text of the two minutes around second ``t`` (for "similar to this moment"), from a list of segments: what
    ``Catalog.text_between`` reads of an episode."""
    lo, hi = t - window / 2, t + window / 2
    return " ".join(s.text for s in segments if s.start is not None and lo <= s.start <= hi)
