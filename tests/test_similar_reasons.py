"""Why two episodes are near: reasons a listener reads (names, phrases, topic words; never a general word)."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from podsearch import languages
from podsearch.catalog import Catalog
from podsearch.generations import Generations
from podsearch.reindex import import_lines
from podsearch.similar import EpisodeFields, ModelParams, SimilarModel, episode_texts, features, runs, signals
from podsearch.similar.reasons import BATCH, GENERAL_WORDS, Row, general_words, is_general


def test_general_words_are_the_languages_most_common_from_wordfreq():
    words = general_words()
    assert GENERAL_WORDS - 50 <= len(words) <= GENERAL_WORDS  # a few fold together ("café", "cafe")
    # the words the demo showed as reasons before (issue 16), and everyday ones
    assert {"versus", "dropped", "seven", "bowl", "east", "the", "year", "great"} <= words
    assert not {"taproot", "sourdough", "honeybee", "kubernetes", "schnorr", "volcanoes"} & words
    assert is_general("Seven") and not is_general("east africa") and not is_general("Katie Hockman")


def _fields() -> EpisodeFields:
    """24 episodes in 4 shows on 6 topics; e0 and e1 (other topics, other shows) share a guest, a title phrase, a
    rare word and general words said often."""
    topics = ["sourdough starter crumb", "rocket booster ascent", "honeybee waggle comb", "compiler parser lexer",
              "glacier moraine crevasse", "violin bow rosin"]
    n = 24
    titles = [f"{topics[i % 6].split()[1].title()} notes {i}" for i in range(n)]
    titles[0], titles[1] = "Lightning Network watchtowers", "The Lightning Network after watchtowers"
    notes = [f"{topics[i % 6]} " * 2 for i in range(n)]
    shared = ("watchtowers " * 2 + "seven east versus dropped bowl " * 2
              + "we’ve channel's new-platform-roots-cloud-native a-g-n-t " * 2)
    notes[0] += shared
    notes[1] += shared
    people = [""] * n
    people[0] = people[1] = "katie_hockman"
    transcripts = [f"{topics[i % 6]} " * 20 for i in range(n)]
    return EpisodeFields([f"e{i}" for i in range(n)], [f"s{i % 4}" for i in range(n)], titles, notes, transcripts,
                         ["en"] * n, people, None, None, None, {"katie_hockman": "Katie Hockman"})


def test_reasons_are_the_guest_by_name_then_phrases_then_topic_words_never_general_words():
    model = SimilarModel.fit_fields(_fields(), ModelParams())
    near = {p.id: p for p in model.similar("e0", 5)[0]}
    reasons = near["e1"].reasons
    assert reasons[:2] == ["Katie Hockman", "lightning network"], reasons
    assert "watchtowers" in reasons and len(reasons) <= 5
    assert {"seven", "east", "versus"} <= set(model.vectorizer.vocabulary_)  # shared by the two, and rare here
    assert not {"seven", "east", "versus", "dropped", "bowl"} & set(reasons)
    # nor a form of another word or a link's slug (the site corpus showed "we’ve", "channel's", "planting-new-...")
    forms = {"we’ve", "channel's", "new-platform-roots-cloud-native", "a-g-n-t"}
    fields = _fields()
    fields.notes[0] += " o'reilly man-in-the-middle" * 2  # a name and a topic that look alike stay
    fields.notes[1] += " o'reilly man-in-the-middle" * 2
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert forms | {"o'reilly", "man-in-the-middle"} <= set(model.vectorizer.vocabulary_)
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 20)
    assert {"watchtowers", "o'reilly", "man-in-the-middle"} <= set(wide) and not forms & set(wide), wide
    assert not {"lightning", "network"} & set(reasons)  # the phrase says them
    assert not [r for r in reasons if "_" in r]


def test_no_reason_on_the_sample_is_a_general_word(sample_data: Path):
    model = SimilarModel.load(Generations(sample_data / "model"))
    neighbours = with_reasons = nearest_with_reasons = 0
    for episode_id in model.ids:
        picked, _ = model.similar(episode_id, 10)
        for item in picked:
            neighbours += 1
            with_reasons += bool(item.reasons)
            assert len(item.reasons) <= 5
            assert not [r for r in item.reasons if is_general(r)], (episode_id, item)
            assert not [r for r in item.reasons if "_" in r], item.reasons
        nearest_with_reasons += bool(picked[0].reasons)
    # A neighbour with no shared topic (near through its title or the LSA part) shows none rather than noise.
    assert nearest_with_reasons >= 0.9 * len(model.ids) and with_reasons >= 0.75 * neighbours


def test_a_lists_reasons_found_together_are_each_pairs_reasons_alone(sample_data: Path):
    """A list's rows are read a batch at a time (Explainer.about); each answer is what the pair alone gives, in
    whatever order the rows are asked and whether or not they are in the list."""
    model = SimilarModel.load(Generations(sample_data / "model"))
    asked = with_reasons = 0
    for i in range(len(model.ids)):
        base = Row.of(model.matrix, i)
        rows = [j for j in model.neigh_idx[i].tolist() if j >= 0 and j != i]
        alone = {j: model.reasons(base, j, 5) for j in rows}
        explain = model.explainer.about(model.matrix, base, rows)
        assert {j: explain(j, 5) for j in reversed(rows)} == alone  # the last batch first
        explain = model.explainer.about(model.matrix, base, rows[: BATCH // 2])
        assert {j: explain(j, 5) for j in rows} == alone  # half of them outside the list given
        asked += len(rows)
        with_reasons += sum(bool(r) for r in alone.values())
    assert asked > 2 * BATCH * len(model.ids) and with_reasons > asked // 4, (asked, with_reasons)


def test_a_person_is_shown_once_by_the_fullest_name():
    """A transcript labels a speaker "Rene" where the feed names "René Pickhardt": both episodes have both tokens,
    and the reasons name him once, in full (a site corpus pair showed "René Pickhardt, Rene")."""
    fields = _fields()
    fields.people[0] = fields.people[1] = "rene katie_hockman rené_pickhardt"
    fields.person_names.update({"rene": "Rene", "rené_pickhardt": "René Pickhardt"})
    model = SimilarModel.fit_fields(fields, ModelParams())
    reasons = {p.id: p for p in model.similar("e0", 5)[0]}["e1"].reasons
    assert "René Pickhardt" in reasons and "Katie Hockman" in reasons, reasons
    assert "Rene" not in reasons, reasons


def test_a_guests_first_name_is_shown_as_the_guest_and_variants_of_a_word_once():
    """Go Time #187 -> #145 on the site corpus showed "fuzzing, go-fuzz, fuzz, katie": #187's guest is Katie Hockman
    and #145's transcript says "Katie"; "fuzz" and "fuzzing" are one topic."""
    fields = _fields()
    fields.people[1], fields.people[6] = "", "katie_hockman"  # Katie Hockman is a guest of e0 (and e6), not of e1
    for i in (0, 1):
        fields.transcripts[i] += " katie fuzz fuzzing fuzzer " * 6 + " fermentation fermenting " * 4
    model = SimilarModel.fit_fields(fields, ModelParams())
    reasons = {p.id: p for p in model.similar("e0", 5)[0]}["e1"].reasons
    assert "Katie Hockman" in reasons and "katie" not in reasons, reasons
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 8)  # room for every variant
    assert len(wide) < 8 and "Katie Hockman" in wide, wide
    assert len({"fuzz", "fuzzing", "fuzzer"} & set(wide)) == 1, wide
    assert len({"fermentation", "fermenting"} & set(wide)) == 1, wide


def test_a_name_word_is_read_accents_folded_and_an_absent_persons_word_as_the_name_writes_it():
    """A transcript's "rene" beside a guest René Pickhardt is his name (the model folds accents in words and person
    tokens alike); "dmitry", a word of the name of someone who is no person of either episode, is shown "Dmitry",
    not lower case (a site corpus pair showed "dmitry")."""
    fields = _fields()
    fields.people[0], fields.people[1] = "rené_pickhardt", ""
    fields.people[6] = fields.people[7] = "rené_pickhardt dmitry_petukhov"  # both names are in the vocabulary
    fields.person_names.update({"rené_pickhardt": "René Pickhardt", "dmitry_petukhov": "Dmitry Petukhov"})
    for i in (0, 1):
        fields.transcripts[i] += " rene pathfinding dmitry " * 6
    model = SimilarModel.fit_fields(fields, ModelParams())
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 8)
    assert "René Pickhardt" in wide and "rene" not in wide, wide
    # a first name alone of someone of neither episode says nobody: not shown (it was "Dmitry" until 5 December)
    assert not {"Dmitry", "dmitry", "Dmitry Petukhov"} & set(wide), wide


def test_plural_variants_are_one_reason():
    """The demo showed "bees, honeybee, waggle, bee, honeybees": a plural in -es and a short plural are variants too."""
    from podsearch.similar.reasons import _variant

    for a, b in [("bees", "bee"), ("honeybees", "honeybee"), ("boxes", "box"), ("matches", "match"),
                 ("fuzzing", "fuzz"), ("fermenting", "fermentation"), ("encodes", "encoding"), ("xpubs", "xpub")]:
        assert _variant(a) == _variant(b), (a, b)
    for a, b in [("running", "run"), ("bee", "be"), ("class", "clas")]:
        assert _variant(a) != _variant(b), (a, b)
    fields = _fields()
    for i in (0, 1):
        fields.transcripts[i] += " honeybee honeybees bee bees waggle " * 6
    model = SimilarModel.fit_fields(fields, ModelParams())
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 8)
    assert len({"honeybee", "honeybees"} & set(wide)) == 1 and len({"bee", "bees"} & set(wide)) == 1, wide


def test_forms_of_one_word_are_one_reason():
    """The site corpus's lists showed "activate, activation", "encrypted, encryption", "topology, topologies",
    "front-running, frontrunning", "signaling, signalling" (167 of 9,345 neighbours): one word's forms (its English
    stem, hyphens aside) are shown once; versions and other words stay apart."""
    from podsearch.similar.reasons import _forms

    for a, b in [("activate", "activation"), ("activated", "activation"), ("encrypted", "encryption"),
                 ("topologies", "topology"), ("front-running", "frontrunning"), ("signaling", "signalling"),
                 ("retrieval", "retrieve"), ("fuzzer", "fuzz")]:
        assert _forms(a) & _forms(b), (a, b)
    for a, b in [("musig1", "musig2"), ("proof-of-stake", "proof-of-work"), ("bolt11", "bolt12"), ("cyber", "cybersecurity"),
                 ("interviewer", "interviewee")]:
        assert not _forms(a) & _forms(b), (a, b)
    fields = _fields()
    for i in (0, 1):
        fields.transcripts[i] += " activation activate activated encryption encrypted " * 6
    model = SimilarModel.fit_fields(fields, ModelParams())
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 8)
    assert len({"activation", "activate", "activated"} & set(wide)) == 1, wide
    assert len({"encryption", "encrypted"} & set(wide)) == 1, wide


def test_numbers_in_words_and_adverbs_of_plain_words_are_not_reasons_alone():
    """The demo showed "eighteen" and "remarkably", "chemically" (and the site corpus "indefinitely", "remotely"):
    they say how much or how, not what. Names and products ending in -ly ("Plotly", "Fastly") and nouns
    ("assembly") are words like any other."""
    from podsearch.similar.reasons import _manner_word

    assert all(_manner_word(w) for w in ("remarkably", "chemically", "happily", "indefinitely", "remotely"))
    assert not any(_manner_word(w) for w in ("plotly", "fastly", "vitaly", "assembly", "family", "supply", "italy"))
    fields = _fields()
    said = " eighteen twenty-five remarkably chemically indefinitely plotly anomaly"
    for i in (0, 1):
        fields.transcripts[i] += said * 6
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert set(said.split()) <= set(model.vectorizer.vocabulary_)
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 20)
    assert {"plotly", "anomaly"} <= set(wide), wide
    assert not {"eighteen", "twenty-five", "remarkably", "chemically", "indefinitely"} & set(wide), wide


def test_a_shows_own_title_is_no_reason_its_host_or_guest_still_is():
    """Every episode of "Big Tent" says "tent" (and other shows' episodes that promote it): on the site corpus
    "tent", "spotlight", "talk python", "backstage" were 158 of 46,886 reasons. The words of either episode's show
    title are not reasons; a person whose name is in a title still is."""
    fields = _fields()
    for i in (0, 1):
        fields.notes[i] += " tent kites" * 4
    control = SimilarModel.fit_fields(fields, ModelParams())
    assert {"tent", "kites"} <= set(next(p for p in control.similar("e0", 5)[0] if p.id == "e1").reasons[:5] +
                                    control.reasons(control.matrix[0], 1, 20))
    fields = fields._replace(show_titles={"s0": "Big Tent", "s1": "Katie Hockman's Kites", "s2": "Other", "s3": "More"})
    model = SimilarModel.fit_fields(fields, ModelParams())
    reasons = next(p for p in model.similar("e0", 5)[0] if p.id == "e1").reasons
    back = next(p for p in model.similar("e1", 5)[0] if p.id == "e0").reasons
    for shown in (reasons, back):
        assert not {"tent", "kites", "big tent"} & set(shown), shown
        assert shown[:2] == ["Katie Hockman", "lightning network"] and "watchtowers" in shown, shown


def test_a_first_name_alone_is_the_one_person_of_that_name_of_the_two_and_a_word_in_passing_is_no_reason():
    """Issue 16: "catherine" is no reason unless one Catherine is among the two's people (then her full name), and a
    plain English word said once in passing wherever it is said ("dragged") is no topic; a topic said again is."""
    fields = _fields()
    for i in range(12):  # said once, in passing, in half the episodes (enough to judge: TOPICAL_EVIDENCE)
        fields.transcripts[i] += " dragged"
    for i in (0, 1):  # a topic of both: said again and again
        fields.transcripts[i] += " sourdough" * 4 + " catherine"
    fields.people[0] += " catherine_tucker"
    fields.people[5] += " catherine_tucker"  # (two episodes each: the people are terms of the model)
    fields.people[1] += " catherine_smith"  # another Catherine
    fields.people[6] += " catherine_smith"
    names = {**(fields.person_names or {}), "catherine_tucker": "Catherine Tucker", "catherine_smith": "Catherine Smith"}
    fields = fields._replace(person_names=names)
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert {"dragged", "catherine", "sourdough", "catherine_tucker", "catherine_smith"} <= set(model.vectorizer.vocabulary_)
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 20)
    assert "sourdough" in wide and not {"dragged", "catherine", "Catherine", "Catherine Tucker",
                                        "Catherine Smith"} & set(wide), wide
    # one Catherine among the two's people: her full name
    fields.people[1] = fields.people[1].replace(" catherine_smith", "")
    model = SimilarModel.fit_fields(fields, ModelParams())
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 20)
    assert "Catherine Tucker" in wide and not {"catherine", "Catherine Smith"} & set(wide), wide


def test_a_transcribers_note_is_no_reason():
    """"[redacted]" (the Lightning meetings' transcripts leave out who spoke), "[applause]", "[inaudible]" were
    reasons of site neighbours (60, 12, 13 of the top fives): what the transcriber noted, not a topic. A word said
    as a topic elsewhere, and bracketed only now and then, stays one."""
    fields = _fields()
    for i in (0, 1, 7, 13):  # noted in four episodes, e0 and e1 among them, and said plainly in none
        fields.transcripts[i] += " [redacted] said so. [Applause] and [inaudible 00:12:03]" * 3
    for i in (0, 1):  # a topic of both, once between brackets
        fields.transcripts[i] += " sourdough" * 4 + " [sourdough starter demo]"
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert {"redacted", "applause", "inaudible"} <= set(model.vectorizer.vocabulary_)
    wide = model.reasons(model.matrix[model.position["e0"]], model.position["e1"], 20)
    assert "sourdough" in wide and not {"redacted", "applause", "inaudible"} & set(wide), wide
    assert model.notes == ["applause", "inaudible", "redacted"]


GERMAN = [  # (show, title, text): two episodes about heat pumps that also say the same everyday German words
    ("energie", "Wärmepumpe im Altbau", "Gerade im Altbau ist die Wärmepumpe immer ein Thema, vielleicht beim Heizkörper. "
     "Die Wärmepumpe braucht eine Heizlast. Gerade das ist immer wichtig, vielleicht beim Umbau. Viel Spaß!"),
    ("heizen", "Heizlast und Wärmepumpe", "Die Heizlast entscheidet, gerade beim Neubau. Eine Wärmepumpe läuft immer, "
     "vielleicht auch nachts. Gerade die Heizlast zählt, beim Planen vielleicht immer. Viel Spaß dabei!"),
    ("energie", "Balkonkraftwerk mit Speicher", "Ein Balkonkraftwerk spart Strom. Der Speicher hält den Strom."),
    ("heizen", "Fußball und Bundesliga", "Die Bundesliga spielt am Samstag. Der Ball rollt im Stadion."),
    ("energie", "Rezepte für den Winter", "Suppe kochen mit Kartoffeln und Lauch, dazu Brot."),
    ("heizen", "Reisen nach Italien", "Mit dem Zug nach Rom, dann ans Meer und in die Berge."),
]


def _german() -> EpisodeFields:
    n = len(GERMAN)
    return EpisodeFields([f"d{i}" for i in range(n)], [s for s, _, _ in GERMAN], [t for _, t, _ in GERMAN],
                         [""] * n, [x for _, _, x in GERMAN], ["de"] * n, [""] * n)


EVERYDAY_GERMAN = {"gerade", "immer", "vielleicht", "beim", "spaß"}  # among German's most common, in no stop list


def test_a_languages_most_common_words_are_no_reasons_in_that_language():
    """Only English's most common words were left out: German neighbours were near for "beim", "gerade", "immer",
    Danish ones for "ved", "kan", Dutch ones for "eerste", "elkaar" (the corpus's feeds, until 5 December 2026)."""
    assert EVERYDAY_GERMAN - {"spaß"} | {"spass"} <= general_words("de")  # (wordfreq writes "ß" as "ss")
    assert not {"warmepumpe", "heizlast"} & general_words("de")
    model = SimilarModel.fit_fields(_german(), ModelParams())
    assert EVERYDAY_GERMAN <= set(model.vectorizer.vocabulary_)  # (no stop word list drops them)
    wide = model.reasons(Row.of(model.matrix, 0), model.position["d1"], 20)
    assert not EVERYDAY_GERMAN & set(wide), wide
    reasons = {p.id: p.reasons for p in model.similar("d0", 3)[0]}["d1"]
    assert "heizlast" in reasons and not EVERYDAY_GERMAN & set(reasons), reasons


def test_a_loaded_model_reads_its_episodes_languages_from_the_catalog(tmp_path: Path):
    """A saved model does not keep its rows' languages: the library gives them from the catalog."""
    import json

    from podsearch.config import load_config
    from podsearch.reindex import import_jsonl
    from podsearch.service import Library

    path = tmp_path / "de.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "show": show, "title": title, "transcript": text,
                                        "language": "de"}, ensure_ascii=False) + "\n"
                            for i, (show, title, text) in enumerate(GERMAN)), encoding="utf-8")
    import_jsonl(load_config({"data": str(tmp_path / "data")}, environ={}), path)
    library = Library(tmp_path / "data")
    try:
        near = {s.id: s.reasons for s in library.similar("d0", 3).similar}
        assert "d1" in near and not EVERYDAY_GERMAN & set(near["d1"]), near
        assert "heizlast" in near["d1"] or "Heizlast" in near["d1"], near
    finally:
        library.close()


ROMANIAN = [("metope", f"METOPE cu Theodor Paleologu și invitatul {guest} – {day}.11.2025",
             f"Theodor Paleologu discută cu {guest} despre {topic}.")
            for guest, day, topic in [("Mihai Ghyka", "18", "monarhie și istorie"), ("Cristian Preda", "11", "Europa și vot"),
                                      ("Horia Patapievici", "04", "cultură și istorie"),
                                      ("Valentin Negoi", "28", "economie și vot")]]
ROMANIAN += [("alta", "Grădina de toamnă", "Plantăm lalele și narcise în grădină."),
             ("alta", "Bucătăria de iarnă", "Gătim ciorbă de fasole cu afumătură.")]


def test_a_phrase_with_a_stop_word_of_its_language_is_no_reason():
    """Romanian's stop list writes "si"; the titles say "și": "si invitatul" ("and the guest") was the reason of 99 of
    500 METOPE neighbours on the corpus's feeds, "pandele si" and "si ioana" of others (until 5 December 2026)."""
    n = len(ROMANIAN)
    fields = EpisodeFields([f"r{i}" for i in range(n)], [s for s, _, _ in ROMANIAN], [t for _, t, _ in ROMANIAN],
                           [""] * n, [x for _, _, x in ROMANIAN], ["ro"] * n, [""] * n)
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert not [t for t in model.vectorizer.vocabulary_ if t.startswith("si_") or t.endswith("_si")]
    for i in range(4):
        for item in model.similar(f"r{i}", 3)[0]:
            assert not [r for r in item.reasons if "si" in r.split()], (i, item)
    # a model whose phrases were made without the list (fitted before, or its rows' languages unknown then): the
    # reasons leave such phrases out once the rows' languages are known
    model = SimilarModel.fit_fields(fields._replace(languages=[""] * n), ModelParams())
    vocabulary = model.vectorizer.vocabulary_
    assert {"si_invitatul", "paleologu_si", "mihai_ghyka"} <= set(vocabulary)
    wide = model.reasons(Row.of(model.matrix, 0), model.position["r1"], 40)
    assert "si invitatul" in wide and "paleologu si" in wide, wide
    model.languages, model._explainer = ["ro"] * n, None
    wide = model.reasons(Row.of(model.matrix, 0), model.position["r1"], 40)
    assert not [r for r in wide if "si" in r.split()], wide
    general = model.explainer.general_of("ro")
    assert general[vocabulary["si_invitatul"]] and general[vocabulary["paleologu_si"]]
    assert not general[vocabulary["mihai_ghyka"]] and not model.explainer.general_of("en")[vocabulary["si_invitatul"]]


def test_pieces_of_a_links_address_are_no_reasons():
    """Show notes write links: "www", in no language's list of common words, was a reason of 98 of 500 German
    neighbours and 259 of 500 Dutch ones on the corpus's feeds (5 December 2026)."""
    fields = _german()
    for i in (0, 1):
        fields.notes[i] = "Mehr unter www.sonnefreihaus.de/folge.html und tinyurl.com/heizlast, amzn.to/speicher"
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert {"www", "html", "tinyurl", "amzn"} <= set(model.vectorizer.vocabulary_)
    wide = model.reasons(Row.of(model.matrix, 0), model.position["d1"], 40)
    assert not {"www", "html", "tinyurl", "amzn"} & set(wide), wide


def test_a_links_query_string_encoded_letters_and_e_mail_addresses_are_no_terms():
    """A link's pieces were terms, and reasons: percent-encoded letters of Portuguese and Japanese links ("c3" 100 times
    among 500 Portuguese neighbours' reasons, "e3"), "si" of YouTube's "?si=" (96), "gmail" of an address (206; the
    corpus's feeds, until 5 December 2026). A link's host and path are still its words; the words around it stay."""
    fields = _german()
    for i in (0, 1):
        fields.notes[i] = ("Heizlast erklärt: https://pt.wikipedia.org/wiki/Informa%C3%A7%C3%A3o und "
                           "https://youtu.be/Xk3?si=AbCd (Video), Fragen an sonne.team@gmail.com oder www.e3dc.de. "
                           "Mehr unter tinyurl.com/heizlast2 und HTTP/2, 24/7, Wärmepumpe")
    model = SimilarModel.fit_fields(fields, ModelParams())
    vocabulary = set(model.vectorizer.vocabulary_)
    pieces = {"c3", "a7", "a3", "si", "abcd", "gmail", "sonne", "team"}
    assert not pieces & vocabulary, pieces & vocabulary
    assert {"heizlast", "video", "fragen", "informacao", "wikipedia", "youtu", "heizlast2"} <= vocabulary
    wide = model.reasons(Row.of(model.matrix, 0), model.position["d1"], 40)
    assert "heizlast" in wide and not (pieces | {"youtu"}) & set(wide), wide


JAPANESE = [("radio", "ラジオ ドラマ の エピソード", "ラジオ ドラマ を 作りました 感想 を ください"),
            ("radio", "ラジオ ドラマ 第二回", "ラジオ ドラマ の 続き です 感想 を ください"),
            ("garden", "いもほり 倶楽部", "さつまいも を 掘りました"),
            ("garden", "家庭菜園 の 話", "トマト と きゅうり を 育てて います"),
            ("cook", "たこ焼き パーティ", "たこ焼き を 焼きました"),
            ("cook", "すき焼き の 夜", "すき焼き を 食べました")]


def test_japanese_terms_and_reasons_keep_their_voicing_marks():
    """The model folded accents by stripping every combining mark: ジ lost its dakuten, and the Japanese show's
    reasons read "ラシオ", "トラマ", "くたさい" (the corpus's feeds, until 5 December 2026)."""
    n = len(JAPANESE)
    fields = EpisodeFields([f"j{i}" for i in range(n)], [s for s, _, _ in JAPANESE], [t for _, t, _ in JAPANESE],
                           [""] * n, [x for _, _, x in JAPANESE], ["ja"] * n, [""] * n)
    model = SimilarModel.fit_fields(fields, ModelParams())
    vocabulary = set(model.vectorizer.vocabulary_)
    assert {"ラジオ", "ドラマ", "ください"} <= vocabulary, vocabulary
    assert not {"ラシオ", "トラマ", "くたさい"} & vocabulary
    reasons = {p.id: p.reasons for p in model.similar("j0", 3)[0]}["j1"]
    assert "ラジオ" in reasons or "ドラマ" in reasons or "ラジオ ドラマ" in reasons, reasons
    assert not [r for r in reasons if "ラシオ" in r or "トラマ" in r], reasons


SPONSOR = ("This episode is brought to you by Zorblax, the durable ledger for quantum payroll teams. "
           "Try Zorblax free for thirty days at zorblax.example/podcast and tell them we sent you.")


def _sponsored(topical: tuple[int, ...] = ()) -> EpisodeFields:
    """:func:`_fields` with one sponsor read in e0, e1 and two more episodes (``topical``: those that also talk
    about the sponsor's product outside the read)."""
    fields = _fields()
    for i in (0, 1, 8, 15):  # (four topics: four recordings)
        fields.transcripts[i] += f" {SPONSOR} " + fields.transcripts[i]
    for i in topical:
        fields.transcripts[i] += " We moved our payroll to a zorblax cluster, and zorblax sharding broke." * 2
    return fields


def _wide(model: SimilarModel, a: str, b: str) -> list[str]:
    return model.reasons(Row.of(model.matrix, model.position[a]), model.position[b], 20)


def test_a_word_said_only_in_a_sponsor_read_is_no_reason(tmp_path: Path):
    """Issue 16: "posit", "temporal", "auth0", "workos", "nordvpn", "bluehost" were 1.6 % of the site corpus's
    reasons (398 of 25,594 in the top fives): two episodes near on other topics both carrying one sponsor's read. A
    word an episode says only inside runs of words said in 3 or more recordings is no reason of it; said as a topic
    too, it is one; an episode folded in later, or the model saved and loaded, reads the same."""
    ads = {"zorblax", "payroll", "ledger", "quantum"}
    model = SimilarModel.fit_fields(_sponsored(), ModelParams())
    assert ads <= set(model.vectorizer.vocabulary_)
    wide = _wide(model, "e0", "e1")
    assert "watchtowers" in wide and not ads & set(wide), wide
    # the same read in two recordings only is no run: its words are reasons as before
    fields = _fields()
    for i in (0, 1):
        fields.transcripts[i] += f" {SPONSOR}"
    assert "zorblax" in _wide(SimilarModel.fit_fields(fields, ModelParams()), "e0", "e1")
    # said outside the read by both: a topic of both
    talked = SimilarModel.fit_fields(_sponsored(topical=(0, 1)), ModelParams())
    assert {"zorblax", "payroll"} <= set(_wide(talked, "e0", "e1"))
    # by one of them only: no topic of the other
    assert not ads & set(_wide(SimilarModel.fit_fields(_sponsored(topical=(0,)), ModelParams()), "e0", "e1"))
    # kept with the model, and a new episode with the read is read against its runs
    generations = Generations(tmp_path / "model")
    model.save(generations)
    loaded = SimilarModel.load(generations)
    assert _wide(loaded, "e0", "e1") == wide
    late = EpisodeFields(["e24"], ["s2"], ["Lightning watchtowers again"], ["watchtowers " * 3],
                         [f"watchtowers lightning network {SPONSOR} watchtowers"], ["en"], [""])
    folded = loaded.fold_in(late, "digest")
    assert "watchtowers" in _wide(folded, "e24", "e0") and not ads & set(_wide(folded, "e24", "e0"))
    assert "watchtowers" in _wide(folded, "e0", "e24") and not ads & set(_wide(folded, "e0", "e24"))


def test_runs_counted_a_part_at_a_time_are_the_runs_counted_at_once(monkeypatch: pytest.MonkeyPatch):
    """The runs are counted a part of them at a time (bounded memory), each run's part told by its first words: the
    same runs, and the same words said only inside them, as counted at once."""
    fields = _sponsored()
    fields.transcripts[3] += f" {SPONSOR} {SPONSOR}"  # (said twice in one recording: counts once)

    def counted() -> tuple[np.ndarray, list[list[int]]]:
        counter = runs.RunCounter()
        counter.add(fields.titles, fields.transcripts, fields.notes, [""] * len(fields.ids))
        found, only = counter.finish()
        return found.hashes, [o.tolist() for o in only]

    whole, only = counted()
    assert len(whole) and sum(map(len, only))
    total = sum(len(runs.word_hashes(f"{t}\n{n}")) - runs.RUN + 1 for t, n in zip(fields.transcripts, fields.notes))
    for part in (total // 3, 500, 37):
        monkeypatch.setattr(runs, "PART", part)
        got, got_only = counted()
        assert np.array_equal(got, whole) and got_only == only, part

def test_a_word_written_with_accents_in_a_sponsor_read_is_no_reason():
    """The runs' words were read lower-cased only and the model's terms are folded ("Zörbláx" is the term "zorblax"):
    a word written with accents in a read was matched to no term and stayed a reason (until 6 December 2026)."""
    fields = _fields()
    read = SPONSOR.replace("Zorblax", "Zörbláx").replace("ledger", "lédger")
    for i in (0, 1, 8, 15):
        fields.transcripts[i] += f" {read} " + fields.transcripts[i]
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert {"zorblax", "ledger", "payroll"} <= set(model.vectorizer.vocabulary_)
    wide = _wide(model, "e0", "e1")
    assert "watchtowers" in wide and not {"zorblax", "ledger", "payroll", "quantum"} & set(wide), wide


def test_a_word_in_typographic_quotes_in_a_sponsor_read_is_no_reason():
    """A run's words were cut at ASCII punctuation alone, and the model's terms end at any: a word in typographic
    quotes (”Kaffe50”, ‘ledger’), or a Japanese sentence before its full stop or in its quotes, was matched to
    no term and stayed a reason (until 6 December 2026: 175 of the 17 multilingual feeds' top-5 reasons, the monthly
    call for listeners' mail of a Japanese show, "暑い時の工夫何してますか" 20, "方もお話聞かせて下さい" 20, ...)."""
    fields = _fields()
    read = SPONSOR.replace("Zorblax", "”Zorblax”").replace("ledger", "‘ledger’") + " 今月のテーマは「暑い時の工夫」です。"
    for i in (0, 1, 8, 15):
        fields.transcripts[i] += f" {read} " + fields.transcripts[i]
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert {"zorblax", "ledger", "今月のテーマは", "暑い時の工夫"} <= set(model.vectorizer.vocabulary_)
    wide = _wide(model, "e0", "e1")
    assert "watchtowers" in wide and not {"zorblax", "ledger", "今月のテーマは", "暑い時の工夫"} & set(wide), wide

# Two weeks' sponsored items, each a new text (no run), between the news items' headings (lines: a transcript's
# segments), the second closed by a thanks
ITEMS = ("[Zorblax ships quantum payroll](https://zorblax.example/blog/payroll)\n"
         "Zorblax just published how their quantum ledger runs payroll for a thousand teams.\n"
         "Read the zorblax recap at zorblax.example, or follow the link in the newsletter.",
         "[Why payroll ledgers stall](https://zorblax.example/blog/stall)\n"
         "The Zorblax team measured ledger stalls in quantum payroll clusters and wrote it all up.\n"
         "Thanks to Zorblax for sponsoring this week's news.")


def _section(announce: str, topical: bool = False) -> EpisodeFields:
    """:func:`_fields` with a sponsored item in e0 and e1, announced by ``announce`` ("" none), then a news item
    (``topical``: about zorblax too)."""
    fields = _fields()
    after = "Zorblax sharding broke our payroll again. " * 2 if topical else "Lightning watchtowers again. "
    for i, item in ((0, ITEMS[0]), (1, ITEMS[1])):
        fields.transcripts[i] += (f"\nOk, on to the news.\n{announce}\n{item}\n"
                                  f"[Watchtowers, again](https://example.org/{i})\n{after}")
    return fields


def _unthanked(fields: EpisodeFields) -> EpisodeFields:
    """``fields`` with the items' thanks to their sponsor said as news (a thanks names the sponsor, and its item is
    sponsored announced or not: test_a_sponsor_thanked_without_an_announcement_...)."""
    fields.transcripts[:2] = [t.replace("Thanks to Zorblax for sponsoring", "Zorblax wrote") for t in fields.transcripts[:2]]
    return fields


def test_a_word_said_only_in_a_sponsored_section_is_no_reason(tmp_path: Path):
    """Issue 16: Changelog News's "Sponsored News" item is a new text each week, so no run of words repeats it, and
    "depot" (42), "retool" (18), "sentry", "socket", "tigerdata" were still reasons of its episodes' neighbours (the
    site corpus's top fives, 6 December 2026). A section the episode announces as sponsored (a short line saying so:
    "It's now time for sponsored news!", "(sponsored)") runs to the next heading after its text or through the line
    thanking the sponsor: what is said only there is no reason."""
    ads = {"zorblax", "payroll", "ledger", "quantum"}
    plain = _wide(SimilarModel.fit_fields(_unthanked(_section("")), ModelParams()), "e0", "e1")
    assert {"zorblax", "payroll"} <= set(plain), plain  # (not announced: a topic of both)
    for announce in ("It's now time for sponsored news!", "Sponsored", "(sponsored)"):
        model = SimilarModel.fit_fields(_section(announce), ModelParams())
        wide = _wide(model, "e0", "e1")
        assert "watchtowers" in wide and not ads & set(wide), (announce, wide)
    # a line that says "sponsored" in passing announces nothing
    for said in ("Is that side of it sponsored, right?", "These transcripts are sponsored by Zorblax."):
        assert "zorblax" in _wide(SimilarModel.fit_fields(_unthanked(_section(said)), ModelParams()), "e0", "e1"), said
    # the news item after the section is the episode's: talked about there by both, a topic of both
    talked = _wide(SimilarModel.fit_fields(_section("Sponsored news!", topical=True), ModelParams()), "e0", "e1")
    assert {"zorblax", "payroll"} <= set(talked), talked
    # saved and loaded, and an episode folded in later, read the same
    generations = Generations(tmp_path / "model")
    model.save(generations)
    loaded = SimilarModel.load(generations)
    assert _wide(loaded, "e0", "e1") == wide
    late = EpisodeFields(["e24"], ["s2"], ["Lightning watchtowers again"], ["watchtowers " * 3],
                         [f"watchtowers lightning network\nSponsored news!\n{ITEMS[0]}\n"
                          "[Watchtowers](https://example.org/w)\nwatchtowers"], ["en"], [""])
    folded = loaded.fold_in(late, "digest")
    assert "watchtowers" in _wide(folded, "e24", "e0") and not ads & set(_wide(folded, "e24", "e0"))
    # the catalog's episodes are read a segment a line
    lines = ["Ok, on to the news.", "It's now time for sponsored news!", *ITEMS[0].split("\n"),
             "[Watchtowers](https://example.org/w)", "Lightning watchtowers again."]
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps({"id": "n1", "show": "News", "title": "News #1", "segments": [
        {"start": float(i), "text": text} for i, text in enumerate(lines)]}) + "\n", encoding="utf-8")
    with Catalog.in_dir(tmp_path / "data") as catalog:
        import_lines(catalog, export)
        transcript = episode_texts(catalog).transcripts[0]
    words = [w.decode() for w in runs._words(transcript)]
    [(a, b)] = runs.sponsored_sections(transcript)
    assert words[a:a + 2] == ["it", "s"] and words[b:] == ["watchtowers", "https", "example", "org", "w", "lightning",
                                                           "watchtowers", "again"], words[a:]


# Two weeks' sponsored items with no heading after them and no thanks (lines: a transcript's segments), each ended by
# the sponsor's call to go somewhere, then the week's next news item
READS = ("Zorblax just shipped quantum payroll for a thousand teams, and the ledger never stalls.\n"
         "Learn more and try it free by going to zorblax.com/podcast\n"
         "Once again that's zorblax.com/podcast",
         "The Zorblax team measured ledger stalls in quantum payroll clusters and wrote it all up.\n"
         "Check the link in the show notes and get a demo today. Why not, right?")


def _read(announce: str, topical: bool = False) -> EpisodeFields:
    """:func:`_fields` with a sponsored item in e0 and e1 announced by ``announce`` ("" none) and ended by its call to
    action alone, then a news item (``topical``: about zorblax too)."""
    fields = _fields()
    after = ("Zorblax sharding broke our payroll again, see github.com/zorblax/issues. " * 2 if topical
             else "Lightning watchtowers again, see github.com/lnd/watchtowers.")
    for i in (0, 1):
        fields.transcripts[i] += f"\nOk, on to the news.\n{announce}\n{READS[i]}\n{after}\nThat is the news for now."
    return fields


def test_a_sponsored_item_without_a_heading_or_thanks_ends_at_its_call_to_action():
    """Issue 16: Changelog News #44-#84 announce their sponsored item ("It's now time for Sponsored News!") with no
    heading after it and no thanks, so the section was the announcement alone and "nats", "synadia", "tailscale",
    "hasura", "neo4j", "warp" stayed reasons (58 in the site corpus's top fives, 6 December 2026). The item ends at
    the sponsor's call to go somewhere: an address said ("go to synadia.com/changelog", and the short lines saying it
    again), a link written as an address, the link in the show notes, a code to use. An announcement may be the first
    sentence of a longer line ("Sponsored News time, y'all. Two weeks back I told you about ...")."""
    ads = {"zorblax", "payroll", "ledger", "quantum"}
    plain = _wide(SimilarModel.fit_fields(_read(""), ModelParams()), "e0", "e1")
    assert {"zorblax", "payroll"} <= set(plain), plain  # (not announced: a topic of both)
    for announce in ("It's now time for Sponsored News!", "Sponsored News time, y'all. It's a good one this week."):
        wide = _wide(SimilarModel.fit_fields(_read(announce), ModelParams()), "e0", "e1")
        assert "watchtowers" in wide and not ads & set(wide), (announce, wide)
    # the news item after the call is the episode's
    talked = _wide(SimilarModel.fit_fields(_read("Sponsored news!", topical=True), ModelParams()), "e0", "e1")
    assert {"zorblax", "payroll"} <= set(talked), talked

    def section(*lines: str) -> list[str]:
        text = "\n".join(lines)
        words = [w.decode() for w in runs._words(text)]
        return [" ".join(words[a:b]) for a, b in runs.sponsored_sections(text)]

    news = "Stallman was right, says Ploum."
    assert section(news, "It's now time for sponsored news!", *READS[0].split("\n"), news) == [
        "it s now time for sponsored news zorblax just shipped quantum payroll for a thousand teams and the ledger "
        "never stalls learn more and try it free by going to zorblax com podcast once again that s zorblax com "
        "podcast"]
    # a link written as an address, a code to use; a site named in passing or a link's address is no call
    for call in ("Visit [zorblax.dev](https://zorblax.dev/?utm_source=news) and get started today.",
                 "Don't forget to use code NEWS when you sign up.", "Begin your journey at Zorblax.com/developer"):
        assert section("Sponsored News!", "UnsuckJS.com is a cool microsite, [Zorblax](https://zorblax.dev) too.",
                       call, news)[0].endswith(runs._words(call)[-1].decode()), call
    # a long line saying an address after the call is the next item; no call: the announcement alone
    assert section("Sponsored News!", "Learn more at zorblax.com/podcast", "An npm user launched " + "a troll " * 6
                   + "at http://everything.npm.lol", news) == ["sponsored news learn more at zorblax com podcast"]
    # no call: the announcement and the item's first line (until 6 December 2026 the announcement alone)
    assert section("Sponsored News!", "Zorblax is great.", "So is caniuse.com, a site.", news) == [
        "sponsored news zorblax is great"]
    assert section("Sponsored News!", "[Caniuse](https://caniuse.com)", news) == ["sponsored news"]
    # the first sentence of a longer line announces, and alone it is the section; a later sentence does not
    assert section("Sponsored News time, y'all. Two weeks back I told you about Zorblax and its payroll.", news) == [
        "sponsored news time y all"]
    assert section("Zorblax is great. " * 3 + "But this is not sponsored content.", "Zorblax.com/x") == []


def test_a_long_announcing_line_that_calls_or_thanks_is_its_section_whole():
    """A longer line whose first sentence announces ("Sponsored News time, y'all.") and whose rest calls the listener
    somewhere, thanks the sponsor, or is followed by a heading holds the whole item: the section is the line, not its
    first sentence alone (which the announcement is only when nothing ends the item)."""
    news = "Stallman was right, says Ploum."
    announce = "Sponsored News time, y'all. Zorblax shipped quantum payroll for a thousand teams,"
    for rest in (" try it at zorblax.com/podcast today.", " thanks to Zorblax for sponsoring this week."):
        line = announce + rest
        text = "\n".join([news, line, news])
        words = [w.decode() for w in runs._words(text)]
        first = len(runs._words(news))
        assert runs.sponsored_sections(text) == [(first, first + len(runs._words(line)))], (rest, words)
    line = announce + " and the ledger never stalls."
    text = "\n".join([news, line, "[Ploum: Stallman was right](https://ploum.net/x)", news])
    first = len(runs._words(news))
    assert runs.sponsored_sections(text) == [(first, first + len(runs._words(line)))]
    # nothing ends it: the first sentence alone
    text = "\n".join([news, line, news])
    assert runs.sponsored_sections(text) == [(first, first + len(runs._words("Sponsored News time, y'all.")))]


def test_a_label_of_the_catalogs_other_languages_opens_a_sponsored_list():
    """The sections were announced in English alone. In the corpus's 17 other feeds no line says "gesponsord",
    "patrocinado", "gesponsert", "sponsrad", "Werbung" or "Anzeige"; a Swedish show's notes list its sponsors' codes
    under "SAMARBETEN:" ("collaborations"), each week a little changed (no run), and "angardsbergen", "ymr" and
    "kaffe20" were reasons (6 December 2026). A label that marks an advertisement in the catalog's languages, on a line
    of its own, opens a section; before a colon, the list after it to the next label or the text's end."""
    codes = ("SAMARBETEN:\nYMR Trackclub använd kaffe20 för 20% rabatt på hela sortimentet.\n"
             "Ängårdsbergen Trail Run Kaffe50 ger 50kr rabatt på anmälan",
             "SAMARBETEN:\nYMR Trackclub kaffe20 ger 20% rabatt i en vecka till.\n"
             "Ängårdsbergen Trail Run: Kaffe50 ger 50kr rabatt")
    fields = _fields()
    for i in (0, 1):
        fields.notes[i] += f"\nVi springer maraton i Bålsta.\n{codes[i]}"
    wide = _wide(SimilarModel.fit_fields(fields, ModelParams()), "e0", "e1")
    assert "watchtowers" in wide and not {"ymr", "trackclub", "kaffe20", "kaffe50", "angardsbergen"} & set(wide), wide
    plain = _fields()
    for i in (0, 1):
        plain.notes[i] += f"\nVi springer maraton i Bålsta.\n{codes[i].replace('SAMARBETEN:', 'Veckans lopp:')}"
    assert {"angardsbergen", "kaffe50"} & set(_wide(SimilarModel.fit_fields(plain, ModelParams()), "e0", "e1"))

    def section(*lines: str) -> list[str]:
        text = "\n".join(lines)
        words = [w.decode() for w in runs._words(text)]
        return [" ".join(words[a:b]) for a, b in runs.sponsored_sections(text)]

    assert section("Om avsnittet", "SAMARBETEN:", "YMR kaffe20", "Länkar:", "kafferum.se") == ["samarbeten ymr kaffe20"]
    assert section("Folge 3", "Werbung:", "Solakon 5% Rabatt", "Anker Solix") == ["werbung solakon 5 rabatt anker solix"]
    assert section("Folge 3", "[Anzeige]", "Solakon 5% Rabatt") == ["anzeige solakon 5 rabatt"]  # (its first line)
    # the words in a sentence are no label: "samarbete" is also cooperation
    assert section("Organisationen for Islamisk Samarbejde spiller en rolle.", "Werbung ist überall.") == []


def _sections(*lines: str) -> list[str]:
    """The sponsored sections of these lines, as their words."""
    text = "\n".join(lines)
    words = [w.decode() for w in runs._words(text)]
    return [" ".join(words[a:b]) for a, b in runs.sponsored_sections(text)]


def test_a_term_of_several_words_is_said_only_inside_when_one_of_its_words_is():
    """A German show's notes carry the same affiliate links in every episode ("https://bit.ly/AnkerSOLIX-Balkonkraftwerk-
    Podcast-Folge35"), said inside runs; a term of several words was said only inside when each of its words was, and
    "balkonkraftwerk" is the show's topic, said outside too: the slugs stayed reasons (34 and 34 of the corpus's 17
    multilingual feeds' top fives, 6 December 2026). Every saying of the term says "ankersolix": it is only inside."""
    fields = _fields()
    link = ("Zuverlässiges Balkonkraftwerk System von Anker SOLIX: https://bit.ly/AnkerSOLIX-Balkonkraftwerk-Podcast-Folge35 "
            "und die Checkliste für dein Projekt herunterladen")
    for i in (0, 1, 8, 15):
        fields.notes[i] += f"\n{link}\n"
    for i in (0, 1):
        fields.transcripts[i] += " Mein Balkonkraftwerk auf dem Dach. " * 2
    model = SimilarModel.fit_fields(fields, ModelParams())
    slug = "ankersolix-balkonkraftwerk-podcast-folge35"
    assert slug in model.vectorizer.vocabulary_
    wide = _wide(model, "e0", "e1")
    assert "watchtowers" in wide and slug not in wide, wide


def test_a_sponsor_thanked_without_an_announcement_is_no_reason():
    """Changelog News #40 and #42 (its first sponsored items, 6 December 2026) announce nothing: a news item names its
    sponsor ("Up next a solid writeup by Arnaud Lauret at Postman ... It's sponsored content.") and a line thanks it
    ("Thanks to our friends at Postman for ... sponsoring this episode"), or the thanks comes first and the item after
    it; "postman" and "api-first" stayed reasons between them. The item is the lines, within 12 of the thanks, from the
    first to the last that names the sponsor."""
    news = "Passkeys: what the heck and why?! Neal says they are the future of logins."
    assert _sections("Tailscale fixed two bugs by reading ifconfig.", "Up next a solid writeup by Ann at Zorblax on "
                     "quantum payroll. It's sponsored content.", "Ann says quantum payroll should be reusable.",
                     "Thanks to our friends at Zorblax for putting out good content and for sponsoring this episode.",
                     news) == ["up next a solid writeup by ann at zorblax on quantum payroll it s sponsored content ann "
                               "says quantum payroll should be reusable thanks to our friends at zorblax for putting out "
                               "good content and for sponsoring this episode"]
    assert _sections("The full report is a PDF.", "Big thanks to the team at Zorblax for sponsoring this week's news.",
                     "[Changelog++ It's better!](https://changelog.com/++)", "Kin writes: as evangelist at Zorblax ...",
                     "Read the rest of the [post](https://www.zorblax.com/payroll?utm_source=news).", news) == [
        "big thanks to the team at zorblax for sponsoring this week s news changelog it s better https changelog com "
        "kin writes as evangelist at zorblax read the rest of the post https www zorblax com payroll utm source news"]
    fields = _unthanked(_section(""))
    plain = _wide(SimilarModel.fit_fields(fields, ModelParams()), "e0", "e1")
    assert {"zorblax", "payroll"} <= set(plain), plain  # (no thanks: a topic of both)
    for i in (0, 1):
        fields.transcripts[i] += "\nThanks to our friends at Zorblax for sponsoring this week's news."
    wide = _wide(SimilarModel.fit_fields(fields, ModelParams()), "e0", "e1")
    assert "watchtowers" in wide and not {"zorblax", "payroll", "ledger", "quantum"} & set(wide), wide


def test_a_sponsored_item_ends_at_a_link_that_calls():
    """Changelog News #73's sponsored item ends at "[Sign up](https://sentry.io/...) and bring your questions!": a
    link whose text calls to act, its address the sponsor's; it was no call, and "sluggish" stayed a reason."""
    news = "Stallman was right, says Ploum."
    assert _sections("Let's do some sponsored news!", "On Thursday Zorblax is doing a free webinar:",
                     "> Nothing drives users away faster than sluggish payroll.",
                     "[Sign up](https://zorblax.example/webinar?utm_source=news) and bring your questions!", news) == [
        "let s do some sponsored news on thursday zorblax is doing a free webinar nothing drives users away faster than "
        "sluggish payroll sign up https zorblax example webinar utm source news and bring your questions"]
    # a link named otherwise is no call
    assert _sections("Sponsored News!", "Zorblax is great.", "[Zorblax](https://zorblax.example/?utm_source=news).",
                     news) == ["sponsored news zorblax is great"]


def test_a_sentence_naming_the_days_sponsors_is_no_reason():
    """Go Time's early episodes name their sponsors in the talk, each time in other words ("our sponsors for today
    are Toptal and Compose", "Our first sponsor for today is Toptal", "today's show is sponsored by Toptal"): no run,
    and "toptal" (11) and "backtrace" (6) were reasons of the site corpus's top fives (6 December 2026). A sentence of
    at most 24 words that says "sponsor", "sponsors", "sponsored by" or "brought to you by" is no topic of the talk."""
    said = ("Welcome back, it's episode {i} and our sponsors today are Zorblax and Quantum Payroll.",
            "Today's show is sponsored by Zorblax and Quantum Payroll, thanks to them.")
    fields = _fields()
    for i in (0, 1):
        fields.transcripts[i] = said[i].format(i=i) + "\n" + fields.transcripts[i] + "\nOur first sponsor is Zorblax."
    wide = _wide(SimilarModel.fit_fields(fields, ModelParams()), "e0", "e1")
    assert "watchtowers" in wide and not {"zorblax", "payroll", "quantum"} & set(wide), wide
    assert _sections("I have a GitHub Sponsors page, it is just for fun.") == []
    assert _sections("So, the ledger. This episode is brought to you by Zorblax! Back to the ledger.") == [
        "this episode is brought to you by zorblax"]


def test_a_discount_offered_is_no_reason():
    """A German show's notes offer its affiliates' discounts ("➡️ 5% Rabatt mit "Sonne5"", "Mit dem Code SONNEFREI8
    gibt es 8% Rabatt für dich."), each week a little changed, with no label: "rabatt" (11) and "sonne5" stayed
    reasons (the corpus's 17 multilingual feeds' top fives, 6 December 2026). A sentence of at most 24 words that
    gives a percentage off ("5% Rabatt", "20% off") or a code with a digit after the word for code is no topic."""
    assert _sections("Balkonkraftwerk von ECOFLOW", '➡️ 5% Rabatt mit "Sonne5"', "Speicher selbst nachrüsten?") == [
        "➡️ 5 rabatt mit sonne5"]
    assert _sections("Ein Speicher. Mit dem Code SONNEFREI8 gibt es 8% Rabatt für dich. Und mehr.") == [
        "mit dem code sonnefrei8 gibt es 8 rabatt fur dich"]
    assert _sections("Be sure to use code: PODCAST20 at checkout.") == ["be sure to use code podcast20 at checkout"]
    # a status code, a word that begins with "code", a number off: no offer
    assert _sections("The server answers status code 404 here.", "See codex32 on GitHub.", "We were 20 % of the way.",
                     "That is 2 off by one errors.") == []
    fields = _fields()
    offers = ('Zorblax Ledger: 5% Rabatt mit "Quantum5" auf alles.', "Mit dem Code QUANTUM5 gibt es 5% Rabatt bei Zorblax.")
    for i in (0, 1):
        fields.notes[i] += f"\nUnser Partner:\n{offers[i]}\n"
    wide = _wide(SimilarModel.fit_fields(fields, ModelParams()), "e0", "e1")
    assert "watchtowers" in wide and not {"zorblax", "quantum5", "rabatt"} & set(wide), wide


def test_a_plain_word_of_a_shows_boilerplate_is_no_reason_of_its_episodes():
    """Changelog News's notes say "All links mentioned in this episode ... are in its companion newsletter" (a run), its
    talk "our companion Changelog News(letter)", "today's companion email" (no run), and "companion" was a reason
    between two of its episodes (6 of the site corpus's top fives, 6 December 2026), as "podcast" was of the corpus's
    17 multilingual feeds' (243). A plain English word that a third of a show's episodes say only inside runs is that
    show's boilerplate, no reason of its episodes; a name its reads say ("zorblax") is left to the runs alone."""
    fields = _fields()
    for i in (0, 4, 8, 12, 2):  # (most of show s0's episodes, and one of s2: not s0's show noise)
        fields.notes[i] += "\nAll links mentioned in this episode of the show are in its companion newsletter from Zorblax."
    for i, said in ((0, "Our companion email from Zorblax has dark mode now. Read the companion, Zorblax says."),
                    (1, "Zorblax wrote me, their companion email is great. A companion to read, says Zorblax.")):
        fields.transcripts[i] += f"\n{said}"
    model = SimilarModel.fit_fields(fields, ModelParams())
    e0, e1 = model.position["e0"], model.position["e1"]
    for a, b in ((e0, e1), (e1, e0)):  # (either episode's show's)
        wide = model.explainer.about(model.matrix, Row.of(model.matrix, a), origin=a)(b, 20)
        assert "watchtowers" in wide and "zorblax" in wide and "companion" not in wide, wide


def test_a_day_read_as_a_speakers_label_is_no_person():
    """A plain-text transcript's line "On Wednesday: our ATO 2023 coverage begins ..." is read as said by "On Wednesday",
    a person of the episode, and "On Wednesday" was a reason of 14 of the site corpus's top fives (6 December 2026).
    A person's label with a day of the week in it is no reason; a guest still is."""
    fields = _fields()
    fields.people[0] = fields.people[1] = "katie_hockman on_wednesday"
    fields.person_names["on_wednesday"] = "On Wednesday"
    # (and named near "episodes" by another episode of e0's show: read as naming e0's guest, guests.py)
    fields.transcripts[4] += "\nWe have awesome episodes coming up this week. On Wednesday: a talk on sourdough.\n"
    model = SimilarModel.fit_fields(fields, ModelParams())
    assert "on_wednesday" in model.vectorizer.vocabulary_
    wide = _wide(model, "e0", "e1")
    assert "Katie Hockman" in wide and "On Wednesday" not in wide, wide
    assert model.guests is not None and model.guests.name(4, 0) == "On Wednesday"
    assert not [p for p in model.similar("e4", 24)[0] if "On Wednesday" in p.reasons]


# Four topics, two Hindi episodes each in two shows (farming, cricket, cooking, yoga; a transcriber's note, "[तालियाँ]",
# applause, in four), and English episodes beside them.
HINDI = [("hi-farm-1", "खेती", "गेहूं की खेती और मानसून",
          "नमस्ते दोस्तों, आज हम गेहूं की खेती की बात करेंगे। मानसून से पहले ट्रैक्टर तैयार रखें, गेहूं को पानी चाहिए। [तालियाँ]"),
         ("hi-farm-2", "गाँव", "मानसून में गेहूं",
          "इस साल मानसून देर से आया। [तालियाँ] गेहूं के खेत में ट्रैक्टर चलाना मुश्किल था, किसान परेशान थे।"),
         ("hi-cricket-1", "खेती", "बल्लेबाज़ और गेंदबाज़",
          "कल के मैच में बल्लेबाज़ ने शतक बनाया। [तालियाँ] गेंदबाज़ को पिच से मदद नहीं मिली, बल्लेबाज़ हावी रहे।"),
         ("hi-cricket-2", "गाँव", "पिच और गेंदबाज़ी",
          "यह पिच गेंदबाज़ के लिए अच्छी है। बल्लेबाज़ को संभल कर खेलना होगा, गेंदबाज़ तैयार हैं। [तालियाँ]"),
         ("hi-cook-1", "खेती", "दाल का तड़का",
          "आज रसोई में दाल बनाएंगे। तड़का के लिए जीरा और हल्दी चाहिए, फिर मसाला डालें।"),
         ("hi-cook-2", "गाँव", "हल्दी और जीरा",
          "हल्दी और जीरा हर मसाला डिब्बे में होते हैं। तड़का लगाते समय जीरा पहले डालें।"),
         ("hi-yoga-1", "खेती", "सुबह का प्राणायाम",
          "प्राणायाम से सांस गहरी होती है। हर आसन के बाद प्राणायाम करें, अंत में शवासन।"),
         ("hi-yoga-2", "गाँव", "आसन और प्राणायाम",
          "यह आसन रीढ़ के लिए अच्छा है। आसन के बाद दस मिनट प्राणायाम और फिर शवासन करें।")]
ENGLISH = [("en-bees-1", "Field Notes", "Honeybees in winter", "The honeybee colony clusters; the beekeeper checks the hive."),
           ("en-bees-2", "Garden Talk", "A hive of honeybees", "Our beekeeper opened the hive; every honeybee was calm."),
           ("en-rust-1", "Field Notes", "Rust lifetimes", "The borrow checker and lifetimes: Rust's ownership explained."),
           ("en-rust-2", "Garden Talk", "Ownership in Rust", "Rust ownership, the borrow checker, lifetimes again."),
           ("en-bread-1", "Field Notes", "Sourdough starter", "Feed the sourdough starter; the crumb of the loaf."),
           ("en-bread-2", "Garden Talk", "A sourdough loaf", "A sourdough loaf with an open crumb from a young starter.")]


def test_hindi_terms_and_reasons_are_whole_words_with_their_marks():
    """Python's ``\\w`` matches no combining mark (a vowel sign, the virama, the anusvara), and the model's pattern read
    ``मानसून`` as "नस", ``ट्रैक्टर`` as "टर" and ``गेहूं`` as nothing: a Hindi episode was near another for pieces
    of words, and they were its reasons (until 5 December 2026). The words of a show's title and the transcriber's notes
    are found whole too, and are no reasons. English reads as before."""
    episodes = HINDI + ENGLISH
    n = len(episodes)
    fields = EpisodeFields([i for i, _, _, _ in episodes], [s for _, s, _, _ in episodes], [t for _, _, t, _ in episodes],
                           [""] * n, [x for _, _, _, x in episodes], ["hi"] * len(HINDI) + ["en"] * len(ENGLISH), [""] * n,
                           None, None, {"खेती": "प्राणायाम की बातें", "गाँव": "गाँव की बातें"})
    model = SimilarModel.fit_fields(fields, ModelParams())
    vocabulary = set(model.vectorizer.vocabulary_)
    assert {"गेहूं", "मानसून", "ट्रैक्टर", "बल्लेबाज़", "गेंदबाज़", "हल्दी", "प्राणायाम"} <= vocabulary, vocabulary
    assert not {"नस", "टर", "बल"} & vocabulary
    words = {i: set(languages.words(features.fold_lower(f"{t} {x}"))) for i, _, t, x in episodes}
    for i, _, _, _ in episodes:
        picked = model.similar(i, 3)[0]
        pair = i[:-1] + ("2" if i.endswith("1") else "1")
        assert picked[0].id == pair, (i, [(p.id, p.reasons) for p in picked])
        reasons = picked[0].reasons
        assert reasons, i
        # each reason is a word (or words) both episodes say whole: never a piece of one
        assert all(set(r.split()) <= words[i] & words[pair] for r in reasons), (i, reasons)
        if i.startswith("hi-"):
            assert any(unicodedata.category(c) in ("Mn", "Mc") for r in reasons for c in r), (i, reasons)
        assert "तालियाँ" not in reasons, (i, reasons)  # (a transcriber's note)
    hindi = {p.id: p.reasons for p in model.similar("hi-farm-1", 3)[0]}["hi-farm-2"]
    assert {"गेहूं", "मानसून"} & set(hindi), hindi
    yoga = {p.id: p.reasons for p in model.similar("hi-yoga-1", 3)[0]}["hi-yoga-2"]
    assert "शवासन" in yoga and "प्राणायाम" not in yoga, yoga  # (a word of the show's title)


def test_a_term_keeps_its_marks_but_no_variation_selector():
    """``signals.TERM_MARKS`` is every combining mark but the variation selectors: ``™️`` is "™" and U+FE0F, which
    is of category Mn; with it "llm™️" (folded "llmtm" and the selector) would be a new term, and was not before. A text
    without a mark is read by the old pattern (the same terms, as fast)."""
    marks = re.compile(f"[{signals.TERM_MARKS}]")
    selectors = {*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
    wrong = [c for c in range(sys.maxunicode + 1) if bool(marks.match(chr(c))) != (
        unicodedata.category(chr(c)) in {"Mn", "Mc", "Me"} and c not in selectors)]
    assert wrong == []
    # a text is read by the old pattern only when none of its characters is in a block that holds a term's mark
    assert all(signals.may_hold_term_marks("a" + chr(c)) for c in range(sys.maxunicode + 1) if marks.match(chr(c)))
    assert not signals.may_hold_term_marks("It’s “quoted” — llm™️ 🙂 θ и")
    analyze = SimilarModel.fit_fields(EpisodeFields(["a", "b"], ["s", "s"], ["llm tm", "llm tm"], ["", ""], ["", ""],
                                                    ["en", "en"], ["", ""]), ModelParams()).vectorizer.build_analyzer()
    for text in ("Benchmarking LLM™️ inference, tm️ 🙂 don't stay-at-home C3PO x2 _a_ o'reilly-",
                 "Benchmarking LLM™ inference, it’s “quoted” — naïve café"):
        assert analyze(text) == [t for t in re.findall(signals.TOKEN_PATTERN, features.model_text(text))
                                 if t not in ENGLISH_STOP_WORDS], text
    assert signals.terms("नमस्ते दोस्तों, क्या बात है। किसान को पानी और घास की ज़रूरत है") == [
        "नमस्ते", "दोस्तों", "क्या", "बात", "है", "किसान", "को", "पानी", "और", "घास", "की", "ज़रूरत", "है"]
    assert signals.terms("cocai\u0308ne தமிழ் llm™️") == ["cocai\u0308ne", "தமிழ்", "llm"]
