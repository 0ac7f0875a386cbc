"""``podsearch serve`` as a real waitress subprocess: graceful SIGTERM, the access log, a URL prefix behind a
trusted proxy, and the scheduled reindex (swapping data in while a client keeps searching)."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import LiveServer, start_server

from podsearch.lock import ReindexLock
from podsearch.requests import SearchRequest
from podsearch.server import client_of

# -- helpers ------------------------------------------------------------------------------------------


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            return resp.status, json.loads(resp.read() or b"null"), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null"), dict(err.headers)


def stop(server: LiveServer, timeout: float = 15) -> tuple[int, str]:
    """SIGTERM, then the exit status and everything the server wrote on stderr."""
    server.proc.send_signal(signal.SIGTERM)
    try:
        server.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
        pytest.fail(f"server did not stop within {timeout} s after SIGTERM:\n{server.stderr()}")
    return server.proc.returncode, server.stderr()


def port_of(server: LiveServer) -> int:
    return int(server.base.rsplit(":", 1)[1])


def raw_post(port: int, path: str, body: bytes) -> tuple[socket.socket, bytes]:
    """A connection with the request head sent; returns it and the body still to send."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    sock.sendall(head)
    return sock, body


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    raw = b"".join(chunks)
    assert raw, "connection closed without an answer"
    status = int(raw.split(b" ", 2)[1])
    return status, raw.split(b"\r\n\r\n", 1)[1]


# -- start-up ------------------------------------------------------------------------------------------


def test_starts_on_an_empty_data_folder_and_says_what_to_do(tmp_path):
    server = start_server(tmp_path / "empty")  # nothing to warm: it still starts
    try:
        status, body, _ = get(server.url("/api/v1/search?q=bees"))
        assert status == 503 and "podsearch reindex" in body["error"]["message"]
        assert get(server.url("/healthz"))[0] == 200
    finally:
        server.stop()


def test_a_server_not_ready_does_not_tell_clients_its_data_folder(tmp_path):
    """Before the first reindex (or with the data folder moved away) every search, ``/similar`` and ``/readyz`` said
    ``No index in /srv/podsearch. Run 'podsearch reindex' first.`` to any client: the server's path (the episode page
    already kept it to itself). Now "the data folder"; the log keeps the path."""
    folder = tmp_path / "srv-podsearch-data"
    server = start_server(folder)
    try:
        for path in ("/api/v1/search?q=bees", "/readyz", "/similar/x", "/api/v1/similar?text=bees"):
            status, body, _ = get(server.url(path))
            assert status == 503 and "the data folder" in body["error"]["message"], (path, body)
            assert str(folder) not in json.dumps(body), (path, body)
        with urllib.request.urlopen(urllib.request.Request(server.url("/search?q=bees")), timeout=15) as resp:
            pytest.fail(f"the search page answered {resp.status} without an index")
    except urllib.error.HTTPError as err:
        page = err.read().decode()
        assert err.code == 503 and "No index in the data folder" in page and str(folder) not in page
    finally:
        code, log = stop(server)
    assert f"No index in {folder}" in log


def test_warm_loads_the_facet_values_and_the_model_with_its_reasons(sample_data):
    from podsearch.service import Library

    lib = Library(sample_data)
    lib.warm()
    assert lib.engine._doc_facets is not None and lib._model is not None
    explainer = lib._model._explainer  # and what the reasons read: the first /similar does not wait for it
    assert explainer is not None and explainer.floors is not None and len(explainer.floors) == len(lib._model.ids)
    warmed = lib.engine._doc_facets
    assert lib.search(SearchRequest(q="bees")).facets["show"]
    assert lib.engine._doc_facets is warmed  # the search used what warm() loaded
    lib.close()


def test_warm_says_once_what_is_missing_not_at_every_look(tmp_path, caplog):
    """The server's warmer looks every 2 s: a data folder without an index or a model logged "nothing to warm"
    at each look (31 lines in the first minute of a server on a folder without a model); now once, and again when
    what is missing changes."""
    import logging

    from podsearch.service import Library

    lib = Library(tmp_path / "empty")
    with caplog.at_level(logging.INFO, logger="podsearch.service"):
        for _ in range(5):
            lib.warm()
    said = [r.getMessage() for r in caplog.records if "nothing to warm" in r.getMessage()]
    assert len(said) == 1 and "reindex" in said[0]
    lib.close()


def test_a_model_file_that_cannot_be_read_leaves_the_server_searching_and_says_what_to_do(sample_data, runner):
    """A truncated ``vectorizer.pkl`` (a disk that filled up, a restore cut short) ended ``serve`` in a 40-line
    traceback at start (``pickle data was truncated``, no file named): no search either, though searching does not
    need the model. Now the server starts and searches, ``/similar`` and ``/readyz`` answer 503 without the server's
    paths, the log names the model folder and ``reindex --full``, and the CLI says that in one line, exit 1."""
    from podsearch.cli import main

    [generation] = (sample_data / "model").glob("gen-*")
    pickled = generation / "vectorizer.pkl"
    pickled.write_bytes(pickled.read_bytes()[:5000])
    server = start_server(sample_data)
    try:
        status, body, _ = get(server.url("/api/v1/search?q=bees"))
        assert status == 200 and body["total"] > 0
        episode = body["hits"][0]["id"]
        for path in ("/readyz", f"/similar/{quote(episode, safe='')}"):
            status, body, _ = get(server.url(path))
            assert status == 503 and body["error"]["code"] == "not_ready", (path, body)
            assert "cannot be read" in body["error"]["message"] and str(sample_data) not in body["error"]["message"]
        assert get(server.url("/healthz"))[0] == 200
    finally:
        code, log = stop(server)
    assert code == 0, log
    assert f"The similarity model in {generation} cannot be read" in log and "run 'podsearch reindex" in log
    assert "Traceback" not in log
    result = runner.invoke(main, ["--data", str(sample_data), "similar", episode])
    assert result.exit_code == 1 and "run 'podsearch reindex" in result.output
    assert result.exception.__class__ is SystemExit


def test_an_index_that_cannot_be_read_leaves_the_server_up_and_not_ready(sample_data):
    """An index segment cut short ended ``serve`` at start in Whoosh's traceback (a supervisor restarting it in a
    loop, nothing answering, not even ``/healthz``). Now it starts, answers ``/readyz`` and searches 503 without the
    server's paths, and logs the index generation and what to do once."""
    [generation] = (sample_data / "index").glob("gen-*")
    [terms] = generation.glob("*.trm")
    terms.write_bytes(terms.read_bytes()[: terms.stat().st_size // 2])
    server = start_server(sample_data)
    try:
        assert get(server.url("/healthz"))[0] == 200
        for path in ("/readyz", "/api/v1/search?q=bees"):
            status, body, _ = get(server.url(path))
            assert status == 503 and body["error"]["code"] == "not_ready", (path, body)
            assert "cannot be read" in body["error"]["message"] and str(sample_data) not in body["error"]["message"]
    finally:
        code, log = stop(server)
    assert code == 0, log
    assert log.count(f"nothing to warm: The search index in {generation} cannot be read") == 1
    assert "run 'podsearch reindex'" in log and "Traceback" not in log


# -- durations ------------------------------------------------------------------------------------------


def test_serve_refuses_a_bad_interval(runner, sample_data):
    from podsearch.cli import main

    result = runner.invoke(main, ["--data", str(sample_data), "serve", "--reindex-every", "weekly"])
    assert result.exit_code == 2  # misuse
    assert "30m, 1h" in result.output


def test_a_body_over_the_limit_is_told_in_json_by_the_app(sample_data):
    """waitress refused any body over ``max_body_bytes`` itself, in plain text ("Request Entity Too Large ...
    exceeds max_body of 65536"), where the API promises JSON: a body just over the limit is now answered by the
    app (413, ``too_large``); one of more than twice the limit is still refused by waitress, unread."""
    server = start_server(sample_data)
    try:
        port = port_of(server)
        body = json.dumps({"text": "bees " * 14000}).encode()  # 70,000 bytes: over 65,536
        sock, rest = raw_post(port, "/api/v1/similar?k=5", body)
        sock.sendall(rest)
        status, answer = read_response(sock)
        assert status == 413 and json.loads(answer)["error"]["code"] == "too_large"
        sock, _ = raw_post(port, "/api/v1/similar?k=5", b"x" * (200 * 1024))  # (the head says 200 KiB; not sent)
        status, answer = read_response(sock)
        assert status == 413
    finally:
        server.stop()


# -- SIGTERM ------------------------------------------------------------------------------------------


def test_sigterm_lets_requests_in_flight_finish(sample_data):
    server = start_server(sample_data, "--threads", "2")
    port = port_of(server)
    text = " ".join(["volcano magma eruption bees hive honey sourdough starter"] * 300)
    # One request caught mid-upload: head and half the body are in, the rest comes after SIGTERM.
    slow, body = raw_post(port, "/api/v1/similar?k=5", json.dumps({"text": text}).encode())
    slow.sendall(body[: len(body) // 2])
    # A batch of complete requests queued on two worker threads.
    batch = []
    for _ in range(8):
        sock, rest = raw_post(port, "/api/v1/similar?k=5", json.dumps({"text": text}).encode())
        sock.sendall(rest)
        batch.append(sock)
    time.sleep(0.2)
    server.proc.send_signal(signal.SIGTERM)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(read_response, batch))
    time.sleep(0.5)
    assert server.proc.poll() is None, "the server quit with a request half received"
    with pytest.raises(OSError):  # no new connections while draining
        urllib.request.urlopen(server.url("/healthz"), timeout=3)
    slow.sendall(body[len(body) // 2:])
    status, payload = read_response(slow)
    code, err = stop(server)  # already stopping; this waits for the exit
    assert [s for s, _ in answers] == [200] * 8
    assert status == 200 and len(json.loads(payload)["similar"]) == 5
    assert code == 0, err


# -- access log, prefix, proxy ------------------------------------------------------------------------


def test_access_log_line_on_stderr_and_idle_connections_do_not_delay_the_stop(sample_data):
    server = start_server(sample_data)
    assert get(server.url("/api/v1/search?q=bees"))[0] == 200
    assert get(server.url("/api/v1/episodes/nope"))[0] == 404
    idle = socket.create_connection(("127.0.0.1", port_of(server)))
    started = time.monotonic()
    code, err = stop(server)
    idle.close()
    assert code == 0, err
    assert time.monotonic() - started < 5
    lines = [line for line in err.splitlines() if "method=" in line]
    assert any(" method=GET path=/api/v1/search status=200 ms=" in line and "remote=127.0.0.1" in line
               for line in lines), err
    assert any("path=/api/v1/episodes/nope status=404" in line for line in lines), err
    assert not any("bees" in line for line in lines)  # query strings stay out of the log


def test_url_prefix_and_rate_limit_per_forwarded_client(sample_data):
    env = {"PODSEARCH_RATE_LIMIT": "0.2", "PODSEARCH_RATE_BURST": "2"}
    server = start_server(sample_data, "--url-prefix", "/podsearch", "--trusted-proxy", "127.0.0.1", env=env)
    alice, bob = {"X-Forwarded-For": "203.0.113.7"}, {"X-Forwarded-For": "198.51.100.9"}
    status, doc, _ = get(server.url("/podsearch/api/openapi.json"), alice)
    assert status == 200 and doc["servers"][0]["url"] == "/podsearch"
    assert get(server.url("/podsearch/api/v1/shows"), alice)[0] == 200
    status, body, headers = get(server.url("/podsearch/api/v1/shows"), alice)
    assert status == 429 and body["error"]["code"] == "rate_limited" and int(headers["Retry-After"]) >= 1
    assert get(server.url("/podsearch/api/v1/shows"), bob)[0] == 200  # another client behind the same proxy
    _, err = stop(server)
    assert "path=/podsearch/api/v1/shows status=429" in err and "remote=203.0.113.7" in err


# -- what one client may hold -----------------------------------------------------------------------------

HALF_A_HEAD = b"GET /api/search?q=volcano HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def connect_from(port: int, source: str, send: bytes = b"") -> socket.socket:
    """A connection from another loopback address (127.0.0.2: another client, as the server sees it)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    if send:
        sock.sendall(send)
    return sock


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (no answer expected)."""
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_one_client_cannot_hold_the_connections_every_client_needs(sample_data):
    """120 connections from one client, each with half a request head, kept waitress (100 connections at most)
    from accepting anyone else for as long as the client trickled a byte every two minutes."""
    server = start_server(sample_data, env={"PODSEARCH_CLIENT_CONNECTIONS": "8", "PODSEARCH_CLIENT_TIMEOUT": "60"})
    port = port_of(server)
    hog = [connect_from(port, "127.0.0.2", HALF_A_HEAD) for _ in range(120)]
    try:
        status, doc, _ = get(server.url("/healthz"))  # another client, answered at once (within get's 15 s)
        assert status == 200 and doc == {"status": "ok"}
        refused = sum(closed_by_server(sock, 2.0) for sock in hog[8:])
        assert refused == 112, f"{refused} of the 112 connections past the cap were closed"
        assert not any(closed_by_server(sock, 0.2) for sock in hog[:8])  # the first 8 are the client's to use
        _, ready, _ = get(server.url("/readyz"))
        assert ready["connections"]["refused"] == 112 and ready["connections"]["timed_out"] == 0
        assert ready["connections"]["open"] >= 9 and ready["connections"]["clients"] >= 2  # the hog's 8, and ours
    finally:
        for sock in hog:
            sock.close()
        _, err = stop(server)
    assert "client 127.0.0.2 holds 8 connections (client_connections)" in err


@pytest.mark.parametrize("per_client, exempt, client, closed", [
    (2, "", "203.0.113.7", [False, False, True, True]),
    (2, "127.0.0.1", "127.0.0.1", [False] * 4),  # the trusted proxy speaks for every client behind it
    (2, "127.0.0.1", "203.0.113.7", [False, False, True, True]),
    (2, "*", "203.0.113.7", [False] * 4),  # every address may be a proxy
    (0, "", "203.0.113.7", [False] * 4),  # no cap
    (2, "", "2001:db8:1:2::7", [False, False, True, True]),
    (2, "::1", "::1", [False] * 4),  # an IPv6 proxy
])
def test_the_cap_counts_a_clients_open_connections(per_client, exempt, client, closed):
    from types import SimpleNamespace

    from podsearch.server import ConnectionGuard

    guard = ConnectionGuard(per_client, 20.0, exempt)
    channels = [SimpleNamespace(addr=(client, 40000 + n), creation_time=0.0, will_close=False) for n in range(4)]
    for channel in channels:
        guard.opened(channel)
    assert [c.will_close for c in channels] == closed
    for channel in channels[:3]:
        guard.gone(channel)
    late = SimpleNamespace(addr=(client, 40009), creation_time=0.0, will_close=False)
    guard.opened(late)  # one of the four still open: room again
    assert not late.will_close and guard.open[client_of(client)] == 2


def test_an_ipv6_client_is_its_64_and_a_mapped_ipv4_address_is_the_address():
    """Whoever holds an IPv6 address holds its /64: one connection from each of its addresses was no client twice."""
    from types import SimpleNamespace

    from podsearch.server import ConnectionGuard

    assert client_of("2001:db8:1:2:aaaa::1") == client_of("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert client_of("2001:db8:1:3::1") != client_of("2001:db8:1:2::1")
    assert client_of("::ffff:203.0.113.7") == client_of("203.0.113.7") == "203.0.113.7"
    assert client_of("fe80::1%eth0") == "fe80::/64" and client_of("unix-socket") == "unix-socket"
    guard = ConnectionGuard(2, 20.0)
    channels = [SimpleNamespace(addr=(f"2001:db8:1:2::{n + 1}", 40000, 0, 0), creation_time=0.0, will_close=False)
                for n in range(3)]
    for channel in channels:
        guard.opened(channel)
    assert [c.will_close for c in channels] == [False, False, True]


def test_a_connection_has_client_timeout_to_send_a_request_whatever_it_trickles(sample_data):
    server = start_server(sample_data, env={"PODSEARCH_CLIENT_TIMEOUT": "2"})
    port = port_of(server)
    try:
        trickler = connect_from(port, "127.0.0.2", b"G")
        idle = connect_from(port, "127.0.0.2")
        started = time.monotonic()
        gone = None
        for byte in b"ET /api/search?q=volcano HTTP/1.1\r\nX-Slow: " + b"x" * 200:
            try:
                trickler.sendall(bytes([byte]))
            except OSError:
                gone = time.monotonic() - started
                break
            time.sleep(0.1)
        assert gone is not None and gone < 8, "a connection trickling its head stayed open"
        assert closed_by_server(idle, 6.0), "a connection that sent nothing stayed open"
        # a request sent in parts within the time is answered, and its keep-alive connection is closed later
        sock = connect_from(port, "127.0.0.2")
        for part in (b"GET /healthz HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"\r\n"):
            sock.sendall(part)
            time.sleep(0.3)
        sock.settimeout(10)
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200") and b'{"status":"ok"}' in answer
        assert closed_by_server(sock, 6.0), "an idle keep-alive connection stayed open"
        sock.close()
        trickler.close()
        idle.close()
        # a steady stream of requests on one kept-alive connection, for longer than the timeout, is never cut. The
        # first version timed a connection from the first moment its sweep (once every half second here) saw it
        # between two requests; when answers take longer than the gaps between them (a feed of 100 items, tens of
        # milliseconds, then the next request at once) the sweep runs just after an answer almost every time
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        started, answered = time.monotonic(), 0
        while time.monotonic() - started < 6:
            conn.request("GET", "/search.rss?q=a*&per_page=100")
            response = conn.getresponse()
            assert response.status == 200 and response.getheader("Connection", "").lower() != "close"
            response.read()
            answered += 1
        conn.close()
        assert answered > 20
        _, ready, _ = get(server.url("/readyz"))
        assert ready["connections"]["timed_out"] >= 3  # the trickler, the silent one, the idle keep-alive
    finally:
        stop(server)


def test_connections_that_never_read_their_answers_are_closed_and_free_their_workers(sample_data, tmp_path):
    """Two connections that pipelined requests for long pages and read nothing held both workers (each waits for
    room in its connection's output, 16 MB, which the client never takes) for as long as they stayed open: nobody
    else was answered, not even ``/healthz``. A connection whose answers are not taken for ``client_timeout`` is
    closed."""
    from conftest import sample_config

    from podsearch.reindex import import_jsonl

    long_talk = {"id": "long-talk", "show": "Long Talks", "title": "A long talk",  # a page of about 1 MB
                 "transcript": " ".join(f"Sentence {n} of a talk that goes on." for n in range(25000))}
    (tmp_path / "long.jsonl").write_text(json.dumps(long_talk) + "\n", encoding="utf-8")
    import_jsonl(sample_config(sample_data, {}), tmp_path / "long.jsonl")
    server = start_server(sample_data, "--threads", "2", env={"PODSEARCH_CLIENT_TIMEOUT": "2"})
    port = port_of(server)
    page = "/episodes/long-talk"
    count = 60  # (waitress reads at most 8 KB of requests while answers wait: 60 of these; 60 MB of pages)
    hogs = []
    try:
        for _ in range(2):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.bind(("127.0.0.2", 0))
            sock.connect(("127.0.0.1", port))
            sock.sendall(b"".join(b"GET %s?n=%d HTTP/1.1\r\nHost: x\r\n\r\n" % (page.encode(), n) for n in range(count)))
            hogs.append(sock)  # and never read
        time.sleep(4)  # the workers fill both outputs
        started = time.monotonic()
        status, doc, _ = get(server.url("/healthz"))
        assert status == 200 and doc == {"status": "ok"} and time.monotonic() - started < 10
        _, ready, _ = get(server.url("/readyz"))
        assert ready["connections"]["timed_out"] >= 2
        for sock in hogs:  # what reached the client before the server closed it, then the end
            sock.settimeout(5.0)
            with pytest.raises((ConnectionResetError, EOFError)):
                while sock.recv(1 << 16):
                    pass
                raise EOFError
    finally:
        for sock in hogs:
            sock.close()
        stop(server)


# -- absolute links ---------------------------------------------------------------------------------------

# The answers that hold absolute links to the server (web/links.py).
LINKING = ("/embed.js", "/opensearch.xml", "/search.rss?q=volcano",
           "/embed/similar/" + quote("tag:example.org,2024:field-notes/ep-01", safe="") + "?link=podsearch")


def ask(server: LiveServer, path: str, host: str, etag: str = "") -> tuple[int, dict[str, str], str]:
    """GET with the Host header a client chose (and an If-None-Match)."""
    conn = http.client.HTTPConnection("127.0.0.1", port_of(server), timeout=15)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        if etag:
            conn.putheader("If-None-Match", etag)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        conn.close()


def varies_on(headers: dict[str, str]) -> set[str]:
    return {v.strip().lower() for v in headers.get("vary", "").split(",") if v.strip()}


def test_links_start_with_public_url_whatever_host_the_request_names(sample_data):
    """``Host: evil.example`` made /embed.js (public for an hour) load the widget from evil.example."""
    server = start_server(sample_data, "--url-prefix", "/pod", env={"PODSEARCH_PUBLIC_URL": "https://search.example.org/pod/"})
    try:
        for path in LINKING:
            for host in ("evil.example", 'a"b'):
                status, headers, body = ask(server, "/pod" + path, host)
                assert status == 200, (path, host, body[:300])
                assert "evil.example" not in body and "https://search.example.org/pod/" in body, (path, body[:600])
                assert "http:///" not in body and "host" not in varies_on(headers)
        _, _, script = ask(server, "/pod/embed.js", "evil.example")
        assert '"https://search.example.org/pod/embed/similar/__ID__"' in script
        _, _, feed = ask(server, "/pod/search.rss?q=volcano", "evil.example")
        assert 'href="https://search.example.org/pod/search.rss?q=volcano"' in feed
        assert "<link>https://search.example.org/pod/episodes/" in feed
    finally:
        _, err = stop(server)
    assert "public_url is not set" not in err


def test_a_304_and_a_204_keep_the_connection_open(live_server):
    """Waitress closed an HTTP/1.1 connection after any answer without a Content-Length, which a 304 and a 204
    never have: every revalidation (If-None-Match -> 304) and every OPTIONS (a CORS preflight's 204) said
    ``Connection: close`` and cost the browser a new connection. Now the same connection answers the next request;
    a client that asks for the close still gets it."""
    conn = http.client.HTTPConnection("127.0.0.1", port_of(live_server), timeout=20)
    conn.request("GET", "/api/v1/search?q=volcano")
    first = conn.getresponse()
    first.read()
    etag, sock = first.getheader("ETag"), conn.sock
    assert first.status == 200 and etag and sock is not None
    for method, path, headers, status in (("GET", "/api/v1/search?q=volcano", {"If-None-Match": etag}, 304),
                                          ("OPTIONS", "/api/v1/search?q=volcano", {}, 204),
                                          ("GET", "/api/v1/search?q=volcano", {}, 200)):
        conn.request(method, path, headers=headers)
        res = conn.getresponse()
        res.read()
        assert res.status == status and res.getheader("Connection") != "close", (method, status, res.getheaders())
        assert conn.sock is sock, (method, status, "the server closed the connection")
    conn.request("GET", "/api/v1/search?q=volcano", headers={"If-None-Match": etag, "Connection": "close"})
    res = conn.getresponse()
    res.read()
    assert res.status == 304 and res.getheader("Connection") == "close"
    conn.close()


def test_without_public_url_links_follow_the_host_vary_on_it_and_no_host_is_a_400(live_server):
    for path in LINKING:
        status, headers, body = ask(live_server, path, "pod.example:8080")
        assert status == 200 and "http://pod.example:8080/" in body, (path, body[:600])
        assert {"host", "x-forwarded-host", "forwarded"} <= varies_on(headers), (path, headers)
        if "etag" in headers:  # a 304 says what its 200 would have said
            status, headers, _ = ask(live_server, path, "pod.example:8080", headers["etag"])
            assert status == 304 and {"host", "x-forwarded-host", "forwarded"} <= varies_on(headers), (path, headers)
    for host in ('a"b', "", "pod.example:99999", "pod_example"):
        for path in LINKING:
            status, headers, body = ask(live_server, path, host)
            assert status == 400 and "Host header names no host" in body and "http:///" not in body, (host, path)
    # a host in punycode stays so: the feed linked to the look-alike "е.example" (Cyrillic) for "xn--e1a.example"
    status, _, body = ask(live_server, "/search.rss?q=volcano", "xn--e1a.example")
    assert status == 200 and "http://xn--e1a.example/" in body and "е.example" not in body
    # an answer without links does not read the host
    status, headers, body = ask(live_server, "/api/search?q=volcano", 'a"b')
    assert status == 200 and json.loads(body)["total"] >= 1 and "host" not in varies_on(headers)


@pytest.mark.parametrize("host, public_url, warns", [
    ("127.0.0.1", "", False), ("::1", "", False), ("[::1]", "", False), ("localhost", "", False),
    ("0.0.0.0", "", True), ("::", "", True), ("192.0.2.10", "", True), ("search.example.org", "", True),
    ("0.0.0.0", "https://search.example.org", False),
])
def test_serve_warns_when_it_listens_beyond_the_machine_without_public_url(host, public_url, warns):
    from podsearch.config import load_config
    from podsearch.server import links_warning

    warning = links_warning(load_config({"public_url": public_url}, environ={}), host)
    assert (warning is not None) == warns and (not warns or "public_url is not set" in warning)


# -- scheduled reindex --------------------------------------------------------------------------------

NEW_ITEM = """    <item>
      <title>Zyzzyva Weevils of the Canopy</title>
      <guid isPermaLink="false">tag:example.org,2024:field-notes/ep-99</guid>
      <link>https://example.org/field-notes/episodes/99</link>
      <description>Weevils, beetles and the insects of the rainforest canopy, counted from a crane.</description>
      <pubDate>Tue, 05 Nov 2024 06:00:00 +0000</pubDate>
      <enclosure url="https://example.org/audio/field-notes-99.mp3" length="1000" type="audio/mpeg"/>
      <itunes:duration>2400</itunes:duration>
    </item>
"""


@pytest.fixture
def feed_data(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder indexed from a private copy of the sample feeds (so a test can change a feed)."""
    from click.testing import CliRunner

    from podsearch.cli import main

    sample = tmp_path / "sample"
    shutil.copytree(Path(str(resources.files("podsearch") / "sample")), sample)
    config = tmp_path / "podsearch.toml"
    feeds = sorted(p.relative_to(tmp_path).as_posix() for p in (sample / "feeds").glob("*.xml"))
    config.write_text("feeds = [" + ", ".join(f'"{f}"' for f in feeds) + "]\n")
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["--data", str(data), "--config", str(config), "-q", "reindex"])
    assert result.exit_code == 0, result.output
    return data, config


def test_scheduled_reindex_swaps_data_in_while_a_client_searches(feed_data):
    data, config = feed_data
    server = start_server(data, "--reindex-every", "2s", env={"PODSEARCH_CONFIG": str(config)})
    failures: list[str] = []
    searches = 0
    done = threading.Event()

    def keep_searching() -> None:
        nonlocal searches
        while not done.is_set():
            for path in ("/api/v1/search?q=bees", "/api/v1/search?q=volcano&per_page=20", "/api/v1/shows"):
                try:
                    status, body, _ = get(server.url(path))
                except OSError as exc:
                    failures.append(f"{path}: {exc}")
                    continue
                searches += 1
                if status != 200 or (path.endswith("bees") and body["total"] < 1):
                    failures.append(f"{path}: {status} {body}")

    client = threading.Thread(target=keep_searching)
    client.start()
    try:
        feed = config.parent / "sample" / "feeds" / "field-notes.xml"
        text = feed.read_text()
        feed.write_text(text.replace("    <item>", NEW_ITEM + "    <item>", 1))
        deadline = time.monotonic() + 60
        new_id = None
        while time.monotonic() < deadline and new_id is None:
            hits = get(server.url("/api/v1/search?q=zyzzyva"))[1]["hits"]
            new_id = hits[0]["id"] if hits else None
            time.sleep(0.2)
        assert new_id is not None, "the scheduled reindex did not bring in the new episode"
        while time.monotonic() < deadline:  # the refitted similarity model is swapped in after the index
            status = get(server.url("/similar/" + urllib.request.quote(new_id, safe="") + "?k=3"))[0]
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200
        ready = get(server.url("/readyz"))[1]
        assert ready["episodes"] == 37 and ready["reindex"]["runs"] >= 1
        assert ready["reindex"]["last_outcome"] == "ok"
    finally:
        done.set()
        client.join()
        code, err = stop(server)
    assert not failures, failures[:5]
    assert searches > 20
    assert code == 0, err


def test_the_warmer_loads_a_new_generation_before_any_search_needs_it(feed_data):
    """A reindex publishes a new generation; the first searches after it built its spelling lexicon and facet values
    (2.5 s at 1,869 episodes, over a 1 s deadline). The server's warmer loads them within a look or two, without a
    search."""
    from podsearch.config import load_config
    from podsearch.engines.whoosh import spelling
    from podsearch.reindex import reindex
    from podsearch.server import Warmer
    from podsearch.service import Library

    data, config = feed_data
    lib = Library(data)
    lib.warm()
    before = lib.engine._doc_facets[0]
    warmer = Warmer(lib, every=0.1)
    warmer.start()
    try:
        feed = config.parent / "sample" / "feeds" / "field-notes.xml"
        feed.write_text(feed.read_text().replace("    <item>", NEW_ITEM + "    <item>", 1))
        report = reindex(load_config({"data": str(data), "config": str(config)}, environ={}))
        assert report.new == 1
        with lib.engine._searcher() as s:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (lib.engine._doc_facets[0] == before
                                                   or spelling.loaded(s.reader()) is None):
                time.sleep(0.05)
            assert spelling.loaded(s.reader()) is not None
        warmed = lib.engine._doc_facets
        assert warmed[0] != before and warmed[0][0] == lib.engine.stamp()[0]  # the new generation's, unasked
        assert lib.search(SearchRequest(q="zyzzyva")).total == 1
        assert lib.engine._doc_facets is warmed  # the search used what the warmer loaded
    finally:
        warmer.stop()
        warmer.join(5)
        lib.close()
    assert not warmer.is_alive()


def test_scheduled_reindex_never_overlaps_another(sample_data):
    with ReindexLock(sample_data):  # a `podsearch reindex` from cron, say, holds the lock
        server = start_server(sample_data, "--reindex-every", "1s", "--no-access-log")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            status, ready, _ = get(server.url("/readyz"))
            if ready["reindex"]["runs"]:
                break
            time.sleep(0.2)
        assert status == 200
        assert ready["reindex"]["last_outcome"].startswith("skipped")
        assert get(server.url("/api/v1/search?q=bees"))[0] == 200
        code, err = stop(server)
    assert code == 0
    assert "scheduled reindex skipped: Another reindex is running" in err
    assert "method=" not in err  # --no-access-log


def _queued(client: str, path: str, forwarded: str = "") -> Any:
    """A connection with one whole request waiting, as waitress hands it to its task queue (``path`` may end in
    ``?n``, which only tells two requests apart)."""
    from types import SimpleNamespace

    headers = {"X_FORWARDED_FOR": forwarded} if forwarded else {}
    return SimpleNamespace(addr=(client, 40000), podsearch_client=client_of(client), label=f"{client} {path}",
                           requests=[SimpleNamespace(path=path.partition("?")[0], query=path.partition("?")[2],
                                                     headers=headers)])


def test_searches_queued_wait_in_the_queue_and_leave_a_worker_to_the_others():
    """A search waited for its search slot in a worker: eight connections of one client sending ordinary searches
    held every worker of four (three searching, one waiting), and another client's /healthz, an episode page, waited
    for one (0.27 / 0.42 s, p50 / p90). Searches beyond all the workers but one wait in the queue: while three
    searches are being served and five more are queued, the other client's /healthz and page are served at once;
    its one-word search is the next search served, before the busy client's queued ones. (Each client may have three
    searches served here, every search worker: the cap of one client's searches is the next test's.)"""
    from podsearch.server import fair_dispatcher

    queue = fair_dispatcher()(frozenset({"/api/search", "/search"}), "", 3)
    release = threading.Event()
    served: list[str] = []
    task = _recording(served, release)

    queue.set_thread_count(4)
    try:
        for n in range(8):
            queue.add_task(task("203.0.113.7", f"/api/search?{n}", hold=True))
        deadline = time.monotonic() + 5
        while len(served) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        queue.add_task(task("192.0.2.9", "/healthz", hold=False))
        queue.add_task(task("192.0.2.9", "/episodes/x", hold=False))
        queue.add_task(task("192.0.2.9", "/api/search", hold=False))
        while len(served) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert served[3:] == ["192.0.2.9 /healthz", "192.0.2.9 /episodes/x"], served  # while three searches run
        assert len([x for x in served if "search" in x]) == 3
        release.set()
        while len(served) < 11 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert served[5] == "192.0.2.9 /api/search" and len(served) == 11, served
    finally:
        release.set()
        queue.shutdown(cancel_pending=True, timeout=5)


def test_one_client_has_at_most_half_the_search_workers_and_another_clients_search_goes_at_once():
    """Searches waited in the queue, but one client's eight connections of ordinary searches (twelve words, 50 a
    page) still had all three search workers of four: another client's one-word search waited for one of them to
    end (0.36 / 0.60 s p50 / p90 on the site corpus). A client has at most half the search workers (rounded up:
    two of three) serving its searches; its others wait in the queue, its requests that do not search do not, and
    another client's search is served at once. With ``client_searches`` set, that many."""
    _a_busy_client_and_another(0, 2)
    _a_busy_client_and_another(1, 1)
    # the trusted proxy's own requests, naming no client, are every client behind it: not held to the cap (as its
    # connections are not), while a client it names is
    from podsearch.server import fair_dispatcher

    for forwarded, runs in (("", 3), ("198.51.100.2", 2)):
        queue = fair_dispatcher()(frozenset({"/api/search"}), "203.0.113.7")
        release, served = threading.Event(), []
        for n in range(8):
            t = _queued("203.0.113.7", f"/api/search?{n}", forwarded=forwarded)
            t.service = lambda t=t, served=served, release=release: served.append(t.label) or release.wait(10)
            t.cancel = lambda: None
            queue.add_task(t)
        queue.set_thread_count(4)
        try:
            time.sleep(0.3)
            assert len(served) == runs, (forwarded, served)
        finally:
            release.set()
            queue.shutdown(cancel_pending=True, timeout=5)



def _recording(served: list[str], release: threading.Event) -> Callable[[str, str, bool], Any]:
    """A maker of queued tasks (:func:`_queued`) that note their label in ``served`` when a worker serves them and,
    with ``hold``, keep the worker until ``release`` is set."""
    lock = threading.Lock()

    def task(client: str, path: str, hold: bool) -> Any:
        t = _queued(client, path)

        def service() -> None:
            with lock:
                served.append(t.label)
            if hold:
                release.wait(10)
        t.service, t.cancel = service, lambda: None
        return t
    return task

def _a_busy_client_and_another(per_client: int, runs: int) -> None:
    from podsearch.server import fair_dispatcher

    queue = fair_dispatcher()(frozenset({"/api/search"}), "", *[per_client][:per_client])  # (0: the default)
    release = threading.Event()
    served: list[str] = []
    task = _recording(served, release)

    queue.set_thread_count(4)
    try:
        for n in range(8):
            queue.add_task(task("203.0.113.7", f"/api/search?{n}", hold=True))
        time.sleep(0.3)
        assert len(served) == runs, served
        queue.add_task(task("203.0.113.7", "/healthz", hold=False))
        queue.add_task(task("192.0.2.9", "/api/search", hold=True))
        deadline = time.monotonic() + 5
        while len(served) < runs + 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        assert sorted(served[runs:]) == ["192.0.2.9 /api/search", "203.0.113.7 /healthz"], served
        release.set()
        while len(served) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(served) == 10, served
    finally:
        release.set()
        queue.shutdown(cancel_pending=True, timeout=5)


def test_the_task_queue_serves_clients_in_turn_and_other_requests_before_searches():
    """Waitress's queue was first come, first served: one client's eight queued searches came before everyone
    else's requests. Each client in turn: a client with nothing queued goes ahead of a client's second, third ...
    request; a request that does not search goes first among equals; one client's requests keep their order."""
    from podsearch.server import fair_dispatcher

    queue = fair_dispatcher()(frozenset({"/api/search", "/search"}), "")
    for n in range(4):
        queue.add_task(_queued("203.0.113.7", f"/api/search?{n}"))
    queue.add_task(_queued("198.51.100.2", "/api/search"))
    queue.add_task(_queued("192.0.2.9", "/healthz"))
    queue.add_task(_queued("203.0.113.7", "/healthz"))  # the busy client's own: after its searches
    assert [t.label for t in queue.queue] == [
        "192.0.2.9 /healthz", "203.0.113.7 /api/search?0", "198.51.100.2 /api/search",
        "203.0.113.7 /api/search?1", "203.0.113.7 /api/search?2", "203.0.113.7 /api/search?3",
        "203.0.113.7 /healthz"]
    for _ in range(4):  # served, up to the busy client's second search: a client that comes now has the round
        queue.started(queue.queue.popleft())  # now served, not the first round that was (it was not waiting)
    queue.add_task(_queued("192.0.2.44", "/api/search?a"))
    queue.add_task(_queued("192.0.2.44", "/api/search?b"))
    assert [t.label for t in queue.queue] == [
        "192.0.2.44 /api/search?a", "203.0.113.7 /api/search?2", "192.0.2.44 /api/search?b",
        "203.0.113.7 /api/search?3", "203.0.113.7 /healthz"]


def test_behind_the_trusted_proxy_each_forwarded_client_has_its_turn():
    from podsearch.server import fair_dispatcher

    queue = fair_dispatcher()(frozenset({"/api/search"}), "127.0.0.1")
    for n in range(3):
        queue.add_task(_queued("127.0.0.1", f"/api/search?{n}", forwarded="10.0.0.1, 203.0.113.7"))
    queue.add_task(_queued("127.0.0.1", "/api/search", forwarded="198.51.100.2"))
    queue.add_task(_queued("203.0.113.50", "/api/search?x", forwarded="198.51.100.3"))  # not the proxy: its own
    assert [t.label for t in queue.queue] == [
        "127.0.0.1 /api/search?0", "127.0.0.1 /api/search", "203.0.113.50 /api/search?x",
        "127.0.0.1 /api/search?1", "127.0.0.1 /api/search?2"]


def test_a_client_with_many_searches_queued_does_not_make_another_wait_for_them_all(sample_data):
    """The real server, two workers: one client queues 24 searches at once, then another asks for /healthz and
    one search. First come, first served answered the second client after nearly all 24; in turn, it is answered
    among the first few."""
    server = start_server(sample_data, "--threads", "2", env={"PODSEARCH_RATE_LIMIT": "0"})
    port = port_of(server)
    heavy = '"going to think about the" know like really people just things'  # 12 words: ordinary
    try:
        busy = [connect_from(port, "127.0.0.2") for _ in range(24)]
        other = [connect_from(port, "127.0.0.3") for _ in range(2)]
        for n, sock in enumerate(busy):
            sock.sendall(f"GET /api/search?q={quote(heavy)}&per_page=50&n={n} HTTP/1.1\r\nHost: x\r\n"
                         "Connection: close\r\n\r\n".encode())
        other[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        other[1].sendall(b"GET /api/search?q=volcano HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        order = []
        for sock in busy + other:
            sock.settimeout(30)
        pending = {sock: b"" for sock in busy + other}
        import selectors

        with selectors.DefaultSelector() as sel:
            for sock in pending:
                sel.register(sock, selectors.EVENT_READ)
            while pending:
                for key, _ in sel.select(timeout=30):
                    chunk = key.fileobj.recv(65536)
                    pending[key.fileobj] += chunk
                    if not chunk:
                        order.append(key.fileobj)
                        assert pending.pop(key.fileobj).startswith(b"HTTP/1.1 200"), "every request answered"
                        sel.unregister(key.fileobj)
        for sock in busy + other:
            sock.close()
    finally:
        stop(server)
    assert order.index(other[0]) < 6 and order.index(other[1]) < 8, [busy.index(s) if s in busy else "other"
                                                                         for s in order]


@pytest.mark.parametrize("env", [{"PODSEARCH_HOST": "bad host!"},
                                 {"PODSEARCH_TRUSTED_PROXY": "127.0.0.1", "PODSEARCH_TRUSTED_PROXY_HEADERS": "bogus"}])
def test_a_host_or_proxy_header_waitress_refuses_is_a_setting_refused(runner, sample_data, env):
    """Both ended `serve` in waitress's traceback, exit 1."""
    from podsearch.cli import main

    result = runner.invoke(main, ["--data", str(sample_data), "serve", "--port", "0"], env=env)
    assert result.exit_code == 2 and "host or trusted_proxy_headers:" in result.output, result.output
    assert "Traceback" not in result.output


def _order_of(dispatcher, requests):
    """The order ``dispatcher`` (no worker threads) queues ``requests``, given as (client, path), in; each labelled
    with its place in ``requests``."""
    for n, (client, path) in enumerate(requests):
        task = _queued(client, path)
        task.label += f" {n}"
        dispatcher.add_task(task)
    return [t.label for t in dispatcher.queue]


def test_a_client_not_busy_is_not_made_to_wait_a_round_of_everyone_elses_searches():
    """A load balancer's /healthz comes from one address: its second one waited behind a round of every busy
    client's search (10-17 s with 50 clients searching), its place being its previous one plus a whole round. A
    request is expected to cost what its kind costs (a page a fifth of an ordinary search), so a page of a client
    not busy goes before the queued searches (and many pages cost a search)."""
    from podsearch.server import fair_dispatcher

    dispatcher = fair_dispatcher()(frozenset({"/api/search"}), "")
    busy = [(f"10.0.0.{n}", "/api/search") for n in range(8)]
    _order_of(dispatcher, [("10.9.9.9", "/healthz"), *busy])
    first = dispatcher.queue.popleft()
    dispatcher.started(first)  # the /healthz answered; 8 searches wait, and each busy client sends another
    order = _order_of(dispatcher, [*busy, ("10.9.9.9", "/healthz"), ("10.9.9.8", "/api/search")])
    assert first.label == "10.9.9.9 /healthz 0" and order[0] == "10.9.9.9 /healthz 8", order
    assert order.index("10.9.9.8 /api/search 9") == 9, order  # a first search: after this round's, before the next
    # a client asking for pages without end pays for them
    order = _order_of(dispatcher, [("10.9.9.7", "/episodes/x")] * 30)
    assert order.index("10.9.9.7 /episodes/x 29") > order.index("10.0.0.7 /api/search 7"), order
    # an ordinary search of a client not busy goes before the queued expensive ones (a wildcard, many words)
    dispatcher = fair_dispatcher()(frozenset({"/api/search"}), "")
    costly = [(f"10.0.0.{n}", "/api/search?q=volc*&per_page=50") for n in range(8)]
    order = _order_of(dispatcher, [*costly, ("10.9.9.6", "/api/search?q=volcano"), ("10.9.9.5", "/api/search?q=a+b+c+d+e"
                                                                                              "+f+g+h+i+j+k+l+m+n")])
    assert order[0] == "10.9.9.6 /api/search?q=volcano 8" and order[-1].startswith("10.9.9.5"), order


def test_a_request_waitress_cannot_read_is_answered_and_its_connection_closed(sample_data):
    """A bad request line (`get / HTTP/1.1`, raw UTF-8 in the target) or a header without a colon has no path: the
    fair queue's ranking raised, the client got no answer, and after a good request on the same connection the
    connection stayed open for good (and held SIGTERM for the whole shutdown_timeout)."""
    server = start_server(sample_data, "--threads", "2")
    port = port_of(server)
    try:
        for bad in (b"get / HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"):
            sock = connect_from(port, "127.0.0.4")
            sock.settimeout(10)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + bad)
            got = b""
            while chunk := sock.recv(65536):  # (a connection left open times out here)
                got += chunk
            sock.close()
            assert got.startswith(b"HTTP/1.1 200") and b" 400 Bad Request" in got, (bad, got[:300])
        log = server.stderr()
    finally:
        stop(server)
    assert "uncaptured python exception" not in log and "Exception when servicing" not in log, log[-2000:]


def test_a_client_is_charged_what_its_requests_took():
    """Searches that are ordinary by their words but take a second each (a phrase of common words, 50 a page) were
    a round like any other: a reader's quick search waited behind every such client's. Once answered, a request
    is charged the seconds it took."""
    from podsearch.server import fair_dispatcher

    dispatcher = fair_dispatcher()(frozenset({"/api/search"}), "")
    slow = [(f"10.0.0.{n}", "/api/search?q=going+to+think") for n in range(8)]
    _order_of(dispatcher, slow)
    while dispatcher.queue:  # each took a second
        task = dispatcher.queue.popleft()
        dispatcher.started(task)
        dispatcher.finished(task, 1.0)
    order = _order_of(dispatcher, [*slow, ("10.9.9.6", "/api/search?q=volcano")])
    assert order[0] == "10.9.9.6 /api/search?q=volcano 8", order


def test_the_fair_queue_weighs_a_search_as_the_rate_limit_and_the_view_read_it(app):
    """The fair queue read a search's ``q`` and ``per_page`` alone, where the view and the rate limit read the
    whole query string with the route's defaults (``requests.search_asked``): a search the parser refuses
    (``per_page=1000``, a bad ``page``), answered 400 at once and counted as one request by the rate limit, was
    queued as an expensive search. Now both weigh it by one reading: expensive, ordinary, or (refused) no search."""
    from types import SimpleNamespace

    from podsearch.server import CHEAP_COST, ORDINARY_COST, SEARCH_COST, queue_cost
    from podsearch.web.limits import EXPENSIVE_COST, request_cost

    searches = app.extensions["podsearch_search_paths"]
    cases = {"/api/v1/search?q=volcano": ORDINARY_COST, "/api/v1/search?q=volc*": SEARCH_COST,
             "/api/v1/search?q=volcano&per_page=100": SEARCH_COST, "/search?q=volcano&per_page=51": SEARCH_COST,
             "/api/v1/search?q=volcano&per_page=1000": CHEAP_COST, "/api/v1/search?q=volcano&page=x": CHEAP_COST,
             "/api/v1/search?q=volcano&per_page=x": CHEAP_COST, "/search.rss?q=volcano": ORDINARY_COST,
             "/search.rss?q=volcano&per_page=": ORDINARY_COST, "/episodes/x?q=volc*": CHEAP_COST}
    for url, cost in cases.items():
        path, _, query = url.partition("?")
        assert queue_cost(SimpleNamespace(path=path, query=query), searches) == cost, url
        with app.test_request_context(url):
            assert request_cost() == (EXPENSIVE_COST if cost == SEARCH_COST else 1), url
