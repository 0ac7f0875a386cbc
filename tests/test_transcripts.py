"""Tests of podsearch.ingest.transcripts against the real transcripts of the shared corpus."""

from __future__ import annotations

import csv
import gzip
import json
import os
import random
import re
from pathlib import Path

import pytest

from podsearch.episodes import Segment, TranscriptLink
from podsearch.errors import TranscriptError
from podsearch.ingest.transcripts import (
    HTML,
    JSON,
    PLAIN,
    RICHNESS,
    SRT,
    VTT,
    decode_bytes,
    normalize_mime,
    parse_time,
    parse_transcript,
    pick_order,
    sniff_format,
)

CORPUS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared test corpus; skipped when absent unless PODSEARCH_REQUIRE_CORPUS=1."""
    if not CORPUS_DIR.is_dir():
        message = f"shared corpus not found at {CORPUS_DIR}"
        if os.environ.get("PODSEARCH_REQUIRE_CORPUS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return CORPUS_DIR


@pytest.fixture(scope="session")
def examples(corpus: Path) -> Path:
    return corpus / "transcripts" / "examples"


@pytest.fixture(scope="session")
def site_rows(corpus: Path) -> list[dict[str, str]]:
    with open(corpus / "site" / "INDEX.tsv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows and set(rows[0]) >= {"guid", "show", "transcript_path", "transcript_type"}
    return rows


def _site_file(
    corpus: Path, rows: list[dict[str, str]], show: str, mime: str, needle: bytes = b""
) -> tuple[Path, bytes]:
    """The first transcript of ``show`` with type ``mime`` (and containing ``needle``)."""
    for row in rows:
        if row["show"] == show and row["transcript_type"] == mime:
            path = corpus / "site" / row["transcript_path"]
            data = path.read_bytes()
            if needle in data:
                return path, data
    raise AssertionError(f"no {mime} transcript of {show} in the corpus")


def _turns(segments: list[Segment]) -> list[tuple[str, float | None]]:
    """(speaker, start) of each speaker turn: consecutive segments of one speaker collapsed."""
    turns: list[tuple[str, float | None]] = []
    for seg in segments:
        if not turns or turns[-1][0] != seg.speaker:
            turns.append((seg.speaker, seg.start))
    return turns


# ---------------------------------------------------------------------------------------- parse_time


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("01:02:03", 3723.0),
        ("02:03", 123.0),
        ("0:53", 53.0),
        ("01:02:03.5", 3723.5),
        ("01:02:03,250", 3723.25),
        ("00:00:00.179", 0.179),
        ("100:00:00", 360000.0),
        (12, 12.0),
        (12.5, 12.5),
        ("12.5", 12.5),
        (" 7 ", 7.0),
        ("", None),
        (None, None),
        ("abc", None),
        ("1:2:3:4", None),
        (-1, None),
        (float("nan"), None),
        (True, None),
        ([1], None),
    ],
)
def test_parse_time(value: object, expected: float | None) -> None:
    result = parse_time(value)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


# -------------------------------------------------------------------------------- types and ordering


def test_normalize_mime() -> None:
    assert normalize_mime("Text/VTT; charset=UTF-8") == VTT
    assert (
        normalize_mime("application/srt") == normalize_mime("text/srt") == normalize_mime("application/x-subrip") == SRT
    )
    assert normalize_mime("application/json") == JSON
    assert normalize_mime("") == ""
    assert normalize_mime("application/octet-stream") == "application/octet-stream"
    assert RICHNESS == (JSON, VTT, SRT, HTML, PLAIN)


def test_pick_order_richest_first_and_stable() -> None:
    links = [
        TranscriptLink(url="a.txt", type="text/plain"),
        TranscriptLink(url="b", type="application/x-weird"),
        TranscriptLink(url="c.html", type="text/html"),
        TranscriptLink(url="d.srt", type="application/srt"),
        TranscriptLink(url="e.vtt", type="text/vtt"),
        TranscriptLink(url="f.srt", type="text/srt"),
        TranscriptLink(url="g.json", type="application/json"),
        TranscriptLink(url="h.srt", type="application/x-subrip"),
        TranscriptLink(url="i.json", type="application/json; charset=utf-8"),
        TranscriptLink(url="j", type=""),
    ]
    assert [link.url for link in pick_order(links)] == [
        "g.json",
        "i.json",
        "e.vtt",
        "d.srt",
        "f.srt",
        "h.srt",
        "c.html",
        "a.txt",
        "b",
        "j",
    ]
    assert pick_order([]) == []


def test_pick_order_uses_extension_when_type_missing() -> None:
    links = [TranscriptLink(url="x.txt", type="text/plain"), TranscriptLink(url="https://h/t.vtt?x=1", type="")]
    assert [link.url for link in pick_order(links)] == ["https://h/t.vtt?x=1", "x.txt"]


# ----------------------------------------------------------------------------- namespace examples


def test_example_json_merges_word_segments(examples: Path) -> None:
    raw = json.loads((examples / "example.json").read_text(encoding="utf-8"))["segments"]
    segments = parse_transcript((examples / "example.json").read_bytes(), "application/json")
    assert segments == [
        Segment(text="I am your father.", start=0.5, end=2.5, speaker="Darth Vader"),
        Segment(text="Nooooo", start=2.75, end=3.0, speaker="Luke"),
    ]
    assert segments[0].start == raw[0]["startTime"] and segments[-1].end == raw[-1]["endTime"]


def test_example_vtt_voice_tags(examples: Path) -> None:
    segments = parse_transcript((examples / "example.vtt").read_bytes(), "text/vtt")
    assert [(s.speaker, s.start, s.end) for s in segments] == [("Sarah", 0.0, 18.63), ("Gillian", 19.08, 25.35)]
    assert "Podcasting Q&A, where" in segments[0].text  # &amp; resolved
    assert segments[0].text.startswith("In today's episode, you'll learn whether or not you should have")
    assert all("<" not in s.text and "  " not in s.text for s in segments)


def test_example_srt_and_html_agree(examples: Path) -> None:
    """example.srt and example.html hold the same talk: same speaker turns at the same times."""
    srt_segments = parse_transcript((examples / "example.srt").read_bytes(), "application/x-subrip")
    html_segments = parse_transcript((examples / "example.html").read_bytes(), "text/html")
    cites = re.findall(r"<cite>([^<]*?):?</cite>", (examples / "example.html").read_text(encoding="utf-8"))
    srt_turns, html_turns = _turns(srt_segments), _turns(html_segments)
    assert [name for name, _ in html_turns] == cites
    assert (
        [name for name, _ in srt_turns]
        == cites
        == ["Travis", "Sarah", "Travis", "Gilon", "Travis", "Gilon", "Travis", "Sarah", "Gilon", "Travis"]
    )
    for (_, srt_start), (_, html_start) in zip(srt_turns, html_turns, strict=True):
        assert srt_start is not None and html_start is not None
        assert abs(srt_start - html_start) < 1.0  # HTML times are whole seconds
    assert srt_segments[0].start == pytest.approx(0.179) and html_segments[0].start == 0.0
    # the same words (the "Travis: " label is not part of the text)
    assert srt_segments[0].text.split()[:25] == html_segments[0].text.split()[:25]
    assert html_segments[0].text.startswith("When you first get started in podcasting, it's almost")


def test_example_srt_cues_merged_within_bounds(examples: Path) -> None:
    data = (examples / "example.srt").read_bytes()
    cue_count = data.count(b"-->")
    segments = parse_transcript(data, "application/x-subrip")
    assert cue_count > 200 and len(segments) < cue_count / 4
    for seg in segments:
        assert seg.start is not None and seg.end is not None and seg.end >= seg.start
        assert seg.end - seg.start <= 30.0
        assert len(seg.text) <= 400
    starts = [s.start for s in segments]
    assert starts == sorted(starts)
    assert segments[-1].end == pytest.approx(12 * 60 + 34.769)  # end of the last cue


@pytest.mark.parametrize(
    ("name", "mime"),
    [("example.json", JSON), ("example.vtt", VTT), ("example.srt", SRT), ("example.html", HTML)],
)
def test_examples_sniffed_without_type(examples: Path, name: str, mime: str) -> None:
    data = (examples / name).read_bytes()
    assert sniff_format(decode_bytes(data)) == mime
    declared = parse_transcript(data, mime)
    assert parse_transcript(data, "") == declared
    assert parse_transcript(data, "application/octet-stream") == declared
    assert declared[0].speaker and declared[0].start is not None


def test_html_full_document_same_as_fragment(examples: Path) -> None:
    fragment = (examples / "example.html").read_text(encoding="utf-8")
    document = (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>Episode 12 transcript</title>"
        "<style>p { color: red }</style><script>var cues = '<p>not text</p>';</script></head>"
        "<body><nav><a href='/'>Home</a></nav><main>\n" + fragment + "\n</main></body></html>"
    )
    assert parse_transcript(document.encode("utf-8"), "text/html") == parse_transcript(
        fragment.encode("utf-8"), "text/html"
    )


# ----------------------------------------------------------------------------- real site transcripts


def test_gotime_json_first_segment(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    path, data = _site_file(corpus, site_rows, "gotime", "application/json")
    raw = [s for s in json.loads(data)["segments"] if str(s.get("body", "")).strip()]
    segments = parse_transcript(data, "application/json", url=path.name)
    assert segments[0].speaker == raw[0]["speaker"]
    assert segments[0].start == float(raw[0]["startTime"])
    assert segments[0].text.split()[:10] == raw[0]["body"].split()[:10]
    assert 0 < len(segments) <= len(raw)
    assert all(s.start is not None and s.speaker for s in segments)
    assert {s.speaker for s in segments} == {s["speaker"] for s in raw}


def test_gotime_html_first_segment(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    path, data = _site_file(corpus, site_rows, "gotime", "text/html")
    text = data.decode("utf-8")
    first = re.search(r"<cite>([^<]*):</cite>\s*<time>([^<]*)</time>\s*<p>([^<]*)</p>", text)
    assert first is not None
    segments = parse_transcript(data, "text/html", url=path.name)
    assert segments[0].speaker == first.group(1)
    assert segments[0].start == parse_time(first.group(2))
    assert segments[0].text.split()[:8] == first.group(3).split()[:8]
    assert len(segments) == len([p for p in re.findall(r"<p>(.*?)</p>", text, re.DOTALL) if p.strip()])
    cited = set(re.findall(r"<cite>([^<]*):</cite>", text))
    cited_with_text = {
        name
        for name, body in re.findall(r"<cite>([^<]*):</cite>\s*<time>[^<]*</time>\s*<p>(.*?)</p>", text, re.DOTALL)
        if body.strip()
    }
    assert cited_with_text <= {s.speaker for s in segments} <= cited  # labels of empty paragraphs ("Break") drop


def test_talkpython_vtt_with_voice_tags(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    path, data = _site_file(corpus, site_rows, "talkpython", "text/vtt", needle=b"<v ")
    voices = set(re.findall(r"<v ([^>]+)>", data.decode("utf-8")))
    segments = parse_transcript(data, "text/vtt", url=path.name)
    starts = [s.start for s in segments]
    assert all(t is not None for t in starts)
    assert all(a < b for a, b in zip(starts, starts[1:], strict=False)), "start times must increase"
    assert all(s.speaker for s in segments) and {s.speaker for s in segments} == voices
    assert "Michael Kennedy" in voices
    assert len(segments) < data.count(b"-->") / 2  # cues were merged
    assert all("<v" not in s.text for s in segments)


def test_talkpython_vtt_without_voice_tags(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    for row in site_rows:
        if row["show"] == "talkpython":
            data = (corpus / "site" / row["transcript_path"]).read_bytes()
            if b"<v " not in data:
                break
    else:  # pragma: no cover - corpus without such a file
        pytest.skip("every talkpython VTT has voice tags")
    segments = parse_transcript(data, "text/vtt")
    assert segments and all(s.speaker == "" and s.start is not None for s in segments)
    assert all(s.end is not None and s.end - s.start <= 30.0 for s in segments)


def test_plain_text_speakers(corpus: Path) -> None:
    path = corpus / "site/transcripts/stephan-livera-podcast/2018-12-11-laolu-osuntokun-stephan-livera.txt"
    segments = parse_transcript(path.read_bytes(), "text/plain")
    assert all(s.start is None and s.end is None for s in segments)
    assert segments[0].text == "<https://twitter.com/kanzure/status/1090640881873387525>"  # autolink kept
    assert (segments[1].speaker, segments[1].text) == (
        "Stephan",
        "Hi Laolu. Thank you very much for coming on the show.",
    )
    # "roasbeef" is lower case but opens many paragraphs, so it is a speaker handle
    assert (segments[2].speaker, segments[2].text) == ("roasbeef", "It’s good to be here.")


def test_plain_text_changelog_carries_speaker(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    _, data = _site_file(corpus, site_rows, "gotime", "text/plain")
    text = data.decode("utf-8")
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    segments = parse_transcript(data, "text/plain")
    first_label = paragraphs[0].split(":", 1)[0]
    assert segments[0].speaker == first_label
    assert not paragraphs[1].startswith(first_label + ":")  # an unlabelled follow-on paragraph ...
    assert segments[1].speaker == first_label  # ... keeps the speaker


# ------------------------------------------------------------------------------- mismatches, errors


def test_html_served_as_vtt_raises(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    _, data = _site_file(corpus, site_rows, "gotime", "text/html")
    with pytest.raises(TranscriptError, match=r"not WebVTT.*HTML"):
        parse_transcript(data, "text/vtt", url="https://example.com/t.vtt")
    with pytest.raises(TranscriptError, match=r"not SubRip"):
        parse_transcript(data, "application/srt")
    with pytest.raises(TranscriptError, match=r"not JSON"):
        parse_transcript(data, "application/json")


def test_other_mismatches_raise(examples: Path) -> None:
    with pytest.raises(TranscriptError, match=r"not HTML: looks like WebVTT"):
        parse_transcript((examples / "example.vtt").read_bytes(), "text/html")
    with pytest.raises(TranscriptError, match=r"not WebVTT"):
        parse_transcript((examples / "example.json").read_bytes(), "text/vtt")
    with pytest.raises(TranscriptError, match=r"not plain text: looks like JSON"):
        parse_transcript((examples / "example.json").read_bytes(), "text/plain")
    with pytest.raises(TranscriptError, match=r"not WebVTT: no WEBVTT header and no cues"):
        parse_transcript(b"just some words", "text/vtt")


def test_broken_json_raises(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    _, data = _site_file(corpus, site_rows, "gotime", "application/json")
    with pytest.raises(TranscriptError, match=r"not JSON transcript: invalid JSON .*line \d+ column \d+"):
        parse_transcript(data[: len(data) // 2], "application/json")
    with pytest.raises(TranscriptError, match=r'no "segments" list'):
        parse_transcript(b'{"version": "1.0.0"}', "application/json")
    with pytest.raises(TranscriptError, match=r"no text"):
        parse_transcript(b'{"version": "1.0.0", "segments": []}', "application/json")


DEEP_JSON = b'{"segments": ' + b"[" * 200000 + b"]" * 200000 + b"}"


@pytest.mark.parametrize("mime", [JSON, "", VTT, SRT])
def test_json_nested_too_deep_is_a_transcript_error(mime: str) -> None:
    """A JSON transcript nested deeper than Python's decoder goes (400 KB of brackets, far under
    max_transcript_bytes) raised RecursionError out of the parser and ended the whole reindex, every feed, at every
    run (found by a hostile feed probe, 5 December 2026): it is a transcript that cannot be read, whatever its type
    says (served as VTT or SRT, it is found to be JSON, and that is read as such). As HTML or plain text it is
    text."""
    with pytest.raises(TranscriptError, match="nested too deep" if mime in (JSON, "") else None):
        parse_transcript(DEEP_JSON, mime)


@pytest.mark.parametrize("mime", [JSON, VTT, SRT, HTML, PLAIN, ""])
@pytest.mark.parametrize("data", [b"", b" \n\r\n\t ", b"\xef\xbb\xbf"])
def test_empty_raises(mime: str, data: bytes) -> None:
    with pytest.raises(TranscriptError, match="empty"):
        parse_transcript(data, mime)


def test_json_tolerates_missing_fields_and_string_numbers() -> None:
    doc = {
        "segments": [
            {"speaker": "Ann", "startTime": "1.5", "endTime": "00:00:03,000", "body": "Hello &amp; <b>welcome</b>"},
            {"startTime": 40, "body": "no speaker, no end"},
            {"speaker": "Bob", "body": 42},
            {"speaker": "Bob", "startTime": None, "body": ""},
            "not a segment",
        ]
    }
    segments = parse_transcript(json.dumps(doc).encode(), "application/json")
    assert segments == [
        Segment(text="Hello & welcome", start=1.5, end=3.0, speaker="Ann"),
        Segment(text="no speaker, no end", start=40.0, end=None, speaker=""),
        Segment(text="42", start=None, end=None, speaker="Bob"),
    ]


def test_vtt_details() -> None:
    vtt = (
        "00:00:01.000 --> 00:00:02.000\n<v.loud Ann Lee>Hi <b>there</b> &lt;3</v> <v Bob>Hello</v>\n\n"
        "NOTE a comment\n\n"
        "cue-3\n00:00:03.000 --> 00:00:04.500 align:start\n<c.yellow>Colour</c> <00:00:03.500>text\n"
    )
    segments = parse_transcript(vtt.encode(), "text/vtt")  # no WEBVTT header: tolerated
    assert segments == [
        Segment(text="Hi there <3", start=1.0, end=2.0, speaker="Ann Lee"),
        Segment(text="Hello", start=1.0, end=2.0, speaker="Bob"),
        Segment(text="Colour text", start=3.0, end=4.5, speaker=""),
    ]


def test_srt_labels_and_merge_limits() -> None:
    cues = []
    for i in range(40):
        text = "Dr. Jane Doe: Starting now." if i == 0 else f"w{i}."
        if i == 20:
            text = "So: this is not a speaker."
        cues.append(f"{i + 1}\n00:00:{i:02d},000 --> 00:00:{i:02d},900\n{text}\n")
    segments = parse_transcript("\n".join(cues).encode(), "text/srt")
    # the label names the speaker of the following cues too; "So:" is not a name
    assert all(s.speaker == "Dr. Jane Doe" for s in segments)
    assert segments[0].text.startswith("Starting now. w1. w2.") and "So: this is not a speaker." in segments[0].text
    # 40 one-second cues: 0-29.9 s (30 s), then 30-39.9 s
    assert [(s.start, s.end) for s in segments] == [(0.0, 29.9), (30.0, 39.9)]

    long_cues = [f"{i + 1}\n00:00:{i:02d},000 --> 00:00:{i:02d},500\n{'x' * 95}\n" for i in range(10)]
    segments = parse_transcript("\n".join(long_cues).encode(), "text/srt")
    assert [len(s.text) for s in segments] == [383, 383, 191]  # 4 + 4 + 2 cues, at most 400 characters


@pytest.mark.parametrize(
    ("line", "speaker", "text"),
    [
        ("Erik St. Martin: Hi", "Erik St. Martin", "Hi"),
        ("Speaker 1: Hi", "Speaker 1", "Hi"),
        ("**Tim Ruffing:** Hi", "Tim Ruffing", "Hi"),
        ("Aaron van Wirdum: Hi", "Aaron van Wirdum", "Hi"),
        ("Waxwing (Adam Gibson): Hi", "Waxwing (Adam Gibson)", "Hi"),
        ("One Two Three Four Five: Hi", "", "One Two Three Four Five: Hi"),
        ("lowercase once: Hi", "", "lowercase once: Hi"),
        ("Note: Hi", "", "Note: Hi"),
        ("https://example.com/x: Hi", "", "https://example.com/x: Hi"),
        # a site corpus talk's notes: these named "Transcripts" and "Tweet" as speakers, shown as people in reasons
        ("Transcripts: <https://diyhpl.us/wiki/transcripts/x/>", "", "Transcripts: <https://diyhpl.us/wiki/transcripts/x/>"),
        ("Tweet: Transcript: \"Opening remarks\" https://x.y/", "", "Tweet: Transcript: \"Opening remarks\" https://x.y/"),
        ("Slides: Hi", "", "Slides: Hi"),
        ("Adam Back: https://adam.example is mine", "", "Adam Back: https://adam.example is mine"),
        ("Wes: Hi", "Wes", "Hi"),
        # the header of the Lightning meetings' transcripts: "Name" was the speaker of 618 site corpus segments
        ("Name: Lightning specification call", "", "Name: Lightning specification call"),
        ("Agenda: below", "", "Agenda: below"),
        # a day, a date or a phrase is no speaker: "On Wednesday" was a person of 2 Changelog News episodes of the
        # site corpus, and the nearby-episodes model showed it as a shared guest
        ("On Wednesday: our ATO 2023 coverage begins", "", "On Wednesday: our ATO 2023 coverage begins"),
        ("**Friday**: a game show returns", "", "**Friday**: a game show returns"),
        ("Fridays: a game show", "", "Fridays: a game show"),
        ("June 5: the release", "", "June 5: the release"),
        ("Monday 5 June: the release", "", "Monday 5 June: the release"),
        ("Here's Mark Rainey:", "", "Here's Mark Rainey:"),
        ("Let’s Not Speculate: Discovering attacks", "", "Let’s Not Speculate: Discovering attacks"),
        ("Today: we ship", "", "Today: we ship"),
        # ... but these are names
        ("Sunday Adeyemi: Hi", "Sunday Adeyemi", "Hi"),
        ("Till Döhmen: Hi", "Till Döhmen", "Hi"),
        ("June: Hi", "June", "Hi"),
        ("May Li: Hi", "May Li", "Hi"),
        ("Will Clark: Hi", "Will Clark", "Hi"),
        ("Speaker 0: Hi", "Speaker 0", "Hi"),
        ("Mat Ryer: Hi", "Mat Ryer", "Hi"),
        ("JOB: Hi", "JOB", "Hi"),
        ("Nguyễn Văn An: Hi", "Nguyễn Văn An", "Hi"),
        ("Jean-Sébastien Pedron: Hi", "Jean-Sébastien Pedron", "Hi"),
    ],
)
def test_plain_label_rule(line: str, speaker: str, text: str) -> None:
    segments = parse_transcript(line.encode(), "text/plain")
    assert [(s.speaker, s.text) for s in segments] == [(speaker, text)]


# ------------------------------------------------------------------------------------------- decoding


def test_decode_utf16_with_bom_and_utf8_bom(examples: Path) -> None:
    text = (examples / "example.vtt").read_text(encoding="utf-8")
    expected = parse_transcript(text.encode("utf-8"), "text/vtt")
    assert parse_transcript(text.encode("utf-16"), "text/vtt") == expected  # BOM + native order
    assert parse_transcript(b"\xfe\xff" + text.encode("utf-16-be"), "text/vtt") == expected
    assert parse_transcript(text.encode("utf-16-le"), "text/vtt") == expected  # no BOM: sniffed from NULs
    assert parse_transcript(b"\xef\xbb\xbf" + text.encode("utf-8"), "text/vtt") == expected


def test_decode_cp1252_and_latin1(corpus: Path) -> None:
    path = corpus / "site/transcripts/stephan-livera-podcast/2018-12-11-laolu-osuntokun-stephan-livera.txt"
    text = path.read_text(encoding="utf-8")
    assert "’" in text
    assert parse_transcript(text.encode("cp1252"), "text/plain") == parse_transcript(text.encode("utf-8"), "text/plain")
    latin = "Zoë Brûlé: Café crème, naïve façade.\n\nÀ bientôt".encode("latin-1")
    segments = parse_transcript(latin, "text/plain")
    assert [(s.speaker, s.text) for s in segments] == [
        ("Zoë Brûlé", "Café crème, naïve façade."),
        ("Zoë Brûlé", "À bientôt"),
    ]
    assert parse_transcript(latin, "text/plain; charset=ISO-8859-1") == segments


def test_decode_utf8_with_stray_bytes_keeps_utf8() -> None:
    data = "Ann: naïve café ☃".encode() + b"\xff\xfe\x81 end"
    segments = parse_transcript(data, "text/plain")
    assert segments[0].speaker == "Ann"
    assert segments[0].text.startswith("naïve café ☃") and segments[0].text.endswith("end")


GARBAGE = random.Random(1234).randbytes(20000)


@pytest.mark.parametrize("mime", [JSON, VTT, SRT])
def test_garbage_bytes_rejected_by_structured_formats(mime: str) -> None:
    with pytest.raises(TranscriptError, match="^not "):
        parse_transcript(GARBAGE, mime)


@pytest.mark.parametrize("mime", [HTML, PLAIN, ""])
def test_garbage_bytes_are_no_transcript_whatever_their_type(mime: str) -> None:
    """Random bytes were read as text (control characters removed) and indexed as a transcript of garbled words;
    bytes that hold more control characters than text ever does are refused (``binary_kind``)."""
    with pytest.raises(TranscriptError, match="not a transcript: binary data"):
        parse_transcript(GARBAGE, mime)


# ------------------------------------------------------------------------------------ whole site corpus


@pytest.mark.slow
@pytest.mark.parametrize("mime", ["application/json", "text/html", "text/vtt", "text/plain"])
def test_every_site_transcript_parses(corpus: Path, site_rows: list[dict[str, str]], mime: str) -> None:
    """Every transcript of site/INDEX.tsv parses with its declared type (whitespace-only files raise)."""
    rows = [row for row in site_rows if row["transcript_type"] == mime]
    assert rows, f"no {mime} transcripts in INDEX.tsv"
    timed = mime != "text/plain"
    failures: list[str] = []
    empty_files = 0
    for row in rows:
        path = corpus / "site" / row["transcript_path"]
        data = path.read_bytes()
        assert len(data) == int(row["transcript_size"]), row["transcript_path"]
        if not data.strip():
            empty_files += 1
            with pytest.raises(TranscriptError, match="empty"):
                parse_transcript(data, mime)
            continue
        try:
            segments = parse_transcript(data, mime, url=row["transcript_path"])
        except TranscriptError as exc:
            failures.append(f"{row['transcript_path']}: {exc}")
            continue
        if not segments:
            failures.append(f"{row['transcript_path']}: no segments")
        elif not all(s.text and s.text == s.text.strip() and "  " not in s.text for s in segments):
            failures.append(f"{row['transcript_path']}: empty or unclean segment text")
        elif timed and any(s.start is None for s in segments):
            failures.append(f"{row['transcript_path']}: segment without a start time")
        elif not timed and any(s.start is not None for s in segments) and not re.search(
                r"(?m)^(?:[^\n]{0,60}:(?:\*\*)? )?\[?(?:\d+:)?\d{1,2}:\d{2}\]?[ \t]*$", data.decode("utf-8", "replace")):
            failures.append(f"{row['transcript_path']}: plain text with a time it does not give alone")
    assert not failures, "\n".join(failures[:20])
    assert empty_files <= 1  # one btc-talks text file is just two newlines


@pytest.mark.parametrize("data, mime, kind", [
    (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<</Type/Catalog>>endobj\n", "application/pdf", "a PDF file"),
    (gzip.compress(b"Ana: Feed the starter daily.\n" * 40), "text/plain", "a gzip file"),
    (random.Random(7).randbytes(4096), "application/x-weird", "binary data"),
    (b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb" * 100, "text/html", "an MP3 file"),
])
def test_a_file_that_is_not_text_is_no_transcript(data: bytes, mime: str, kind: str) -> None:
    """A PDF, a gzip file served as text/plain (without Content-Encoding) and random bytes were each read as a
    transcript of garbled text (``%PDF-1.4 x��…``), indexed and shown."""
    with pytest.raises(TranscriptError, match=f"not a transcript: {kind}"):
        parse_transcript(data, mime, "https://example.org/t")


def test_text_in_any_encoding_is_still_text() -> None:
    said = "Ana: Feed the starter daily. Ça marche, très bien.\n\nBo: Keep it warm.\n"
    for encoded in (said.encode("utf-8"), said.encode("utf-16-le"), said.encode("utf-16"), said.encode("cp1252"),
                    said.encode("utf-32")):
        assert "starter" in " ".join(s.text for s in parse_transcript(encoded, "text/plain"))


def test_a_json_transcript_that_does_not_parse_says_where_in_plain_words() -> None:
    """"Unterminated string starting at at line 1 column 61": the position was joined with " at"."""
    with pytest.raises(TranscriptError) as caught:
        parse_transcript(b'{"segments": [{"body": "unterminated', "application/json")
    assert "Unterminated string starting at: line 1 column 24" in str(caught.value)
    assert "at at" not in str(caught.value)


def test_a_numbered_line_with_a_colon_names_no_speaker() -> None:
    """``6. “Information Management: A Proposal”`` in a plain-text transcript (Changelog News #129 of the site
    corpus) made "6. “Information Management" a speaker: its words left the searchable text (the phrase found 2
    episodes, not this one) and the paragraphs after it were said by it (a fuzzed walk, 5 December 2026)."""
    text = ("Adam: Here is the list.\n\n"
            "5. “A Protocol for Packet Network Intercommunication” (Vinton G. Cerf, 1974)\n"
            "6. “Information Management: A Proposal” (Tim Berners-Lee, 1989)\n"
            "2024: the year it shipped.\n\n"
            "He also provides a bonus list.\n")
    segments = parse_transcript(text.encode(), "text/plain")
    assert {s.speaker for s in segments} == {"Adam"}
    assert "Information Management: A Proposal" in " ".join(s.text for s in segments)
    assert "2024: the year it shipped." in " ".join(s.text for s in segments)


def test_a_plain_paragraph_that_is_a_time_alone_times_the_paragraphs_after_it() -> None:
    """Transcription services export ``Speaker 0: 00:11:31`` and the words below it; the time was a paragraph of
    its own, searched ("ship it 31" found a site episode by its "00:11:31") and shown as a moment, and the text had
    no times (12,810 such paragraphs in 101 episodes of the site corpus)."""
    text = ("## Housekeeping\n\nSpeaker 0: 00:01:17\n\nToday we talk about splicing.\nAnd privacy.\n\n"
            "Speaker 1: 00:02:25\n\nHey, how's it going?\n\nSo yeah, my name is Jeff.\n\n[1:02:03]\n\n"
            "Speaker 0: see you at 10:30 then\n\n10:30 is too early, Jeff")
    segments = parse_transcript(text.encode(), "text/plain")
    assert [(s.start, s.speaker, s.text) for s in segments] == [
        (None, "", "## Housekeeping"),
        (77.0, "Speaker 0", "Today we talk about splicing. And privacy."),
        (145.0, "Speaker 1", "Hey, how's it going?"),
        (145.0, "Speaker 1", "So yeah, my name is Jeff."),
        (3723.0, "Speaker 0", "see you at 10:30 then"),  # (a time inside the words is words)
        (3723.0, "Speaker 0", "10:30 is too early, Jeff"),
    ]
    assert all(s.start is None for s in parse_transcript(b"Ann: hi\n\nBob: hello", "text/plain"))


def test_a_speaker_whose_answer_is_a_time_keeps_it_as_text() -> None:
    """A time alone is a timestamp only when the transcript uses them so (hh:mm:ss, or several in order): "Bob: 10:30"
    answering "when does it start?" became a timestamp from 6 December 2026, and its text left the transcript."""
    text = "Ann: When does it start?\n\nBob: 10:30\n\nAnn: Great, see you then.\n\nBob: [9:15]"
    assert [(s.start, s.speaker, s.text) for s in parse_transcript(text.encode(), "text/plain")] == [
        (None, "Ann", "When does it start?"), (None, "Bob", "10:30"), (None, "Ann", "Great, see you then."),
        (None, "Bob", "[9:15]")]
    # several minutes:seconds in order are timestamps
    timed = "Ann: 0:05\n\nHello.\n\nBob: 1:10\n\nHi.\n\nAnn: 12:40\n\nBye."
    assert [(s.start, s.speaker) for s in parse_transcript(timed.encode(), "text/plain")] == [
        (5.0, "Ann"), (70.0, "Bob"), (760.0, "Ann")]
    # ... and one hh:mm:ss with leading zeros (as transcription services export them) is one
    assert [s.start for s in parse_transcript(b"Speaker 0: 00:11:31\n\nHello.", "text/plain")] == [691.0]


def test_the_site_corpus_time_paragraphs_and_speakers(corpus: Path, site_rows: list[dict[str, str]]) -> None:
    """Every time-only paragraph of the site corpus's plain transcripts (12,810 in 101 episodes) is still read as a
    time; no day or phrase is a speaker of its Changelog News episodes."""
    clock = re.compile(r"\[?(?:\d+:)?\d{1,2}:\d{2}\]?")
    kept = speakers = 0
    for row in site_rows:
        data = (corpus / "site" / row["transcript_path"]).read_bytes() if row["transcript_type"] == PLAIN else b""
        if not data.strip():  # (one of them is empty)
            continue
        segments = parse_transcript(data, PLAIN)
        kept += sum(bool(clock.fullmatch(s.text)) for s in segments)
        speakers += sum(s.speaker in ("On Wednesday", "Wednesday", "Friday") for s in segments)
    assert (kept, speakers) == (0, 0)


def test_a_plain_transcripts_markdown_escapes_are_the_marks_they_escape() -> None:
    """Plain-text transcripts are often Markdown: ``OP\\_RETURN`` stayed written so, indexed as "op" and "return"
    (``OP_RETURN`` missed the 10 site episodes that write it only so), and shown with its backslash; a backslash
    before anything but a punctuation mark is text."""
    text = (r"Ann: an OP\_RETURN output, C\# and \@lightcoin, clusterf\*\*\* \<snip\>" "\n\n"
            r"Bob: a path C:\\Users, a\b and 5\% of it")
    assert [s.text for s in parse_transcript(text.encode(), "text/plain")] == [
        "an OP_RETURN output, C# and @lightcoin, clusterf***", r"a path C:\Users, a\b and 5% of it"]
