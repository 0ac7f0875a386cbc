"""Request limits applied before any view runs: body size (413) and a per-client rate limit (429)."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

from flask import Flask, request
from werkzeug.exceptions import RequestEntityTooLarge, TooManyRequests

# Probes must answer even when a load balancer polls faster than the rate limit allows.
UNLIMITED_PATHS = frozenset({"/healthz", "/readyz"})


class TokenBucket:
    """One bucket per client key: ``rate`` tokens per second, at most ``burst`` saved up.

    Memory is bounded: past ``max_clients`` keys the least recently seen are forgotten (a forgotten client
    starts again with a full bucket, which errs on the side of answering).
    """

    def __init__(self, rate: float, burst: int, max_clients: int = 10000) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate, self.burst, self.max_clients = rate, float(burst), max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str, now: float | None = None) -> float:
        """Spend one token; returns 0 when allowed, else the seconds until a token is available."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            wait = 0.0
            if tokens >= 1.0:
                tokens -= 1.0
            else:
                wait = (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
            return wait


def register(app: Flask) -> None:
    config = app.config["PODSEARCH"]
    max_body = int(config.max_body_bytes)
    app.config["MAX_CONTENT_LENGTH"] = max_body  # also caps bodies sent without a Content-Length
    bucket = TokenBucket(float(config.rate_limit), int(config.rate_burst)) if config.rate_limit > 0 else None
    app.extensions["podsearch_rate_limit"] = bucket

    @app.before_request
    def _limits() -> None:
        if request.content_length is not None and request.content_length > max_body:
            raise RequestEntityTooLarge(f"The request body is {request.content_length:,} bytes; the limit is "
                                        f"{max_body:,}.")
        if bucket is not None and request.path not in UNLIMITED_PATHS and request.method != "OPTIONS":
            wait = bucket.take(request.remote_addr or "-")
            if wait > 0:
                raise TooManyRequests(f"Too many requests from {request.remote_addr}; slow down and retry in "
                                      f"{math.ceil(wait)} s.", retry_after=math.ceil(wait))
