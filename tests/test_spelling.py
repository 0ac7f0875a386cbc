"""The "did you mean" rules shared by the engines (``engines/spelling.py``), on a made-up vocabulary: which
replacement is tried, and when one is offered."""

from __future__ import annotations

import pytest
from conftest import ENGINES, imported_library

from podsearch.engines.spelling import suggestion
from podsearch.requests import SearchRequest
from podsearch.service import Library

# word -> the episodes holding it
EPISODES = {
    "toxic": {1, 2}, "taxi": {3, 4, 5, 6}, "waste": {1, 3}, "ceremony": {1}, "topic": set(range(10, 40)),
    "clarity": set(range(20, 30)), "charity": {7}, "majors": {7}, "libhoney": {7},
    "python": set(range(100, 170)), "pyto": {200}, "kimchi": {8}, "kitchen": set(range(300, 315)), "zero": {50},
    "volcanic": {60}, "volcano": set(range(60, 70)),
    "kubernetes": set(range(400, 440)), "kuberentes": {400},  # a typo in one transcript
    "vulkan": {61}, "volkano": set(range(62, 64)),  # a word few hold, beside one not much more frequent
}


class Vocabulary:
    def held(self, words: list[str]) -> dict[str, int]:
        return {w: len(EPISODES.get(w, ())) for w in words}

    def form(self, word: str) -> str:
        return word

    def candidates(self, words: list[str]) -> dict[str, list[str]]:  # what an engine answers: the nearest, then
        from podsearch.engines.spelling import closeness  # the more frequent

        near = {word: [w for w in EPISODES if w[0] == word[0] and closeness(word, w)[0] <= 2] for word in words}
        return {word: sorted(near[word], key=lambda w: (closeness(word, w)[0], -len(EPISODES[w])))[:5] for word in words}

    def in_language(self, asked: list[tuple[str, tuple[str, ...] | None]]) -> set[tuple[str, tuple[str, ...] | None]]:
        return set(asked)

    def languages_of(self, words: list[str]) -> dict[str, list[str] | None]:
        return dict.fromkeys(words)  # (cannot tell)


def count(text: str) -> int:
    sets = [EPISODES.get(w, set()) for w in text.lower().split()]
    return len(set.intersection(*sets)) if sets else 0


def test_a_replacement_as_near_as_the_nearest_is_tried_when_the_nearest_finds_nothing() -> None:
    # "taxic" is one edit from "taxi" (the nearer by its common beginning) and from "toxic": only "toxic" is said
    # with "waste ceremony"
    assert suggestion("taxic waste ceremony", Vocabulary(), count, None) == "toxic waste ceremony"
    assert suggestion("caarity majors libhoney", Vocabulary(), count, 0) == "charity majors libhoney"
    # a farther word is never tried before a nearer one: "toxlc" is one edit from "toxic" and two from "topic"
    assert suggestion("toxlc ceremony", Vocabulary(), count, 0) == "toxic ceremony"
    assert suggestion("toxlc majors", Vocabulary(), count, 0) == ""  # "topic majors": nothing either


def test_nothing_is_offered_that_finds_no_more() -> None:
    assert suggestion("toxic waste", Vocabulary(), count, None) == ""  # every word known
    assert suggestion("taxic libhoney", Vocabulary(), count, None) == ""  # no replacement is said with it
    assert suggestion("zzzz waste", Vocabulary(), count, None) == ""  # no replacement at all


def test_of_replacements_as_near_the_one_that_finds_the_most_is_offered() -> None:
    """``pyton`` is one edit from "pyto" (the longer common beginning, tried first) and from "python": the site
    corpus answered "pyto" (1 episode) for it, not "python" (671). A common beginning shorter by more than a letter
    is tried after: "kimchee" is "kimchi", not the more frequent "kitchen"."""
    assert suggestion("pyton", Vocabulary(), count, 0) == "python"
    assert suggestion("kimchee", Vocabulary(), count, 0) == "kimchi"


def test_a_short_word_is_corrected_by_one_edit_at_most() -> None:
    """Two edits are too many for a word of five letters or fewer (as Lucene's fuzziness AUTO): ``zebra`` was
    offered "zero"; a longer word keeps two (``volcanoes`` -> "volcano", ``vulcanec`` -> "volcanic")."""
    assert suggestion("zebra", Vocabulary(), count, 0) == ""
    assert suggestion("volcanoes", Vocabulary(), count, 0) == "volcano"
    assert suggestion("vulcanec", Vocabulary(), count, 0) == "volcanic"



def test_a_word_a_few_episodes_hold_is_a_typo_when_a_word_as_near_is_held_far_more_often() -> None:
    """``kuberentes`` (a typo in one site transcript, 1 episode) found that episode and was offered nothing, where
    ``kubernetes`` is held by 423; a rare word beside one not ``RARE_FACTOR`` times as frequent is left as typed."""
    assert suggestion("kuberentes", Vocabulary(), count, 1) == "kubernetes"
    assert suggestion("volkano", Vocabulary(), count, 2) == ""  # "volcano": 10, five times as often
    assert suggestion("kubernetes", Vocabulary(), count, 40) == ""


def test_keeping_puts_back_the_words_a_suggestion_should_not_replace() -> None:
    from podsearch.engines.spelling import keeping

    assert keeping("voclano eruption", "volcano erupting", ["eruption"]) == "volcano eruption"
    assert keeping("Pynchon kuberentes", "Python kubernetes", ["Pynchon"]) == "Pynchon kubernetes"
    assert keeping("Pynchon", "Python", ["Pynchon"]) == "Pynchon"
    assert keeping('"voclano" title:eruption', '"volcano" title:erupting', ["eruption"]) == '"volcano" title:eruption'


# -- on a real index of several languages (Whoosh and OpenSearch): a word typed with its accents is the word the index folds
ACCENTED = [
    {"id": "de-1", "show": "Energie", "show_id": "energie", "language": "de", "title": "Die größte Enttäuschung",
     "transcript": "Das war die größte Enttäuschung der Woche. Welche Gründe sprechen für einen Speicher?"},
    {"id": "pt-1", "show": "Florais", "show_id": "florais", "language": "pt", "title": "Emoções e doenças",
     "transcript": "As emoções negativas causam doenças."},
    {"id": "es-1", "show": "Radio", "show_id": "radio", "language": "es", "title": "La adaptación de impedancias",
     "transcript": "Hablamos de la adaptación de impedancias entre la antena y la línea."},
    *({"id": f"nl-{i}", "show": "Haags", "show_id": "haags", "language": "nl", "title": f"De grote emoties {i}",
       "transcript": f"Een grote stap voor de partijen en veel emoties, deel {i}, met een guide."} for i in range(21)),
    {"id": "pt-2", "show": "Florais", "show_id": "florais", "language": "pt", "title": "A informação e a cura",
     "transcript": "A informação que recebemos pode curar."},
    *({"id": f"es-{i}", "show": "Radio", "show_id": "radio", "language": "es", "title": f"Boletín {i}",
       "transcript": f"Más información sobre la radio, parte {i}."} for i in range(2, 23)),
    {"id": "en-typo", "show": "Ops", "show_id": "ops", "language": "en", "title": "Clusters",
     "transcript": "We moved the cluster to kuberentes last year."},
    *({"id": f"en-{i}", "show": "Ops", "show_id": "ops", "language": "en", "title": f"Ops {i}",
       "transcript": f"Running kubernetes in production, part {i}."} for i in range(21)),
    {"id": "de-p", "show": "Energie", "show_id": "energie", "language": "de", "title": "Wahlkampf",
     "transcript": "Die Parteien streiten über den Speicher."},
]


@pytest.fixture(scope="module", params=ENGINES)
def accented(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Library:
    """ACCENTED imported, on Whoosh and on OpenSearch (an index of its own on the session's node)."""
    with imported_library(ACCENTED, request.param, request, tmp_path_factory.mktemp("accented")) as library:
        yield library


@pytest.mark.parametrize("q", ["größte", "Gründe", "emoções", "größte Enttäuschung"])
def test_a_word_typed_with_its_accents_is_no_typo(accented: Library, q: str) -> None:
    """The word list folds accents; the speller looked the typed word up unfolded, so every accented word was unknown
    and "größte" was offered the Dutch "grote", "emoções" the Dutch "emoties", "Gründe" "Grunde" (5 December 2026).
    Nor is a word typed with its accents a typo in the few episodes that hold it, when a word as near is held 20
    times as often in another language ("größte": "grote", "Gründe": "guide")."""
    result = accented.search(SearchRequest(q=q, per_page=5))
    assert result.total >= 1 and not result.suggestion and not result.corrected, (result.suggestion, result.corrected)


def test_a_word_another_language_writes_without_its_accents_is_offered_so_when_nothing_is_found(accented: Library) -> None:
    """Portuguese "impedâncias" is the Spanish episode's "impedancias": read in Spanish the accent keeps it from being
    stemmed alike, and nothing is found; the word as the index writes it is offered."""
    typed = accented.search(SearchRequest(q="impedâncias", per_page=5, correct=False))
    assert typed.total == 0 and typed.suggestion == "impedancias"
    assert [h.id for h in accented.search(SearchRequest(q=typed.suggestion, per_page=5)).hits] == ["es-1"]


def test_a_word_few_episodes_hold_is_no_typo_of_another_languages_word(accented: Library) -> None:
    """A word held by a few episodes is a typo in them when a word as near is held 20 times as often: a word of their
    language. Until 5 December 2026 any language's: Portuguese "informacao" (the word list's "informação") was offered
    the Spanish "informacion". An English typo in an English episode is still answered."""
    assert not accented.search(SearchRequest(q="informacao", per_page=5, correct=False)).suggestion
    assert accented.search(SearchRequest(q="kuberentes", per_page=5, correct=False)).suggestion == "kubernetes"
    # the German "parteien" (1 episode) is no typo of the Dutch "partijen" (21): until 5 December 2026 OpenSearch,
    # which did not say the languages of a word's episodes, offered it
    parteien = accented.search(SearchRequest(q="parteien", per_page=5, correct=False))
    assert [h.id for h in parteien.hits] == ["de-p"] and not parteien.suggestion, parteien.suggestion


TYPOS = ["kuberentes", "kubernetse", "informacao", "parteien", "emocoes", "grote emotis", "partijn stap",
         "kubernets producton clustr informacion radoi emoties partijen grotte",
         "größte Enttäuschng"]


@pytest.mark.opensearch
@pytest.mark.parametrize("accented", ["opensearch"], indirect=True)  # (Whoosh's vocabulary is its index in memory)
def test_did_you_mean_asks_the_node_a_few_times_whatever_the_words(accented: Library, monkeypatch) -> None:
    """Each of "did you mean"'s questions (a word's near spellings, whether each is a word of the language, how often
    they are held, the languages of a word's episodes) is asked of every word at once: one request on OpenSearch (a
    suggester a word; ``_msearch``). Until 6 December 2026 one word, and one spelling, at a time: 12 typos made about 85
    requests one after the other on the site corpus. The suggestions are those of asking one at a time."""
    from podsearch.engines.opensearch import OpenSearchVocabulary
    from podsearch.engines.spelling import suggestion

    engine = accented.engine
    vocabulary = OpenSearchVocabulary(engine, engine.read_as())

    class OneAtATime:
        """The questions of the Vocabulary protocol asked one word at a time."""

        held, form = vocabulary.held, vocabulary.form

        def candidates(self, words: list[str]) -> dict[str, list[str]]:
            return {w: vocabulary.candidates([w]).get(w, []) for w in words}

        def in_language(self, asked: list[tuple[str, tuple[str, ...] | None]]) -> set:
            return {one for one in asked if vocabulary.in_language([one])}

        def languages_of(self, words: list[str]) -> dict[str, list[str] | None]:
            return {w: vocabulary.languages_of([w])[w] for w in words}

    asked: list[str] = []
    request = engine.client.request

    def counted(method: str, path: str, *args, **kwargs):
        if path.endswith(("/_search", "/_msearch")):  # (not the served index's stamp, read again now and then)
            asked.append(path)
        return request(method, path, *args, **kwargs)

    monkeypatch.setattr(engine.client, "request", counted)
    found, before = {}, {}
    for text in TYPOS:
        asked.clear()
        before[text] = suggestion(text, OneAtATime(), lambda words: 10, 0), len(asked)
        asked.clear()
        found[text] = suggestion(text, vocabulary, lambda words: 10, 0), len(asked)
    assert {t: s for t, (s, _) in found.items()} == {t: s for t, (s, _) in before.items()}
    assert found["kuberentes"][0] == "kubernetes" and found["partijn stap"][0] == "partijen stap"
    long = TYPOS[7]
    assert found[long][0].split()[:4] == ["kubernetes", "production", "cluster", "informacion"], found[long]
    assert all(n <= 6 for _, n in found.values()), found  # (held, near spellings, of the language, and for a word
    # a few episodes hold: held, their languages, of theirs)
    assert before[long][1] >= 4 * found[long][1], (before[long], found[long])  # (one word at a time: 14 searches; 3)
