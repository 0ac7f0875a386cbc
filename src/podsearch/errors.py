"""Domain exceptions. The library raises these; the CLI and the web app turn them into messages."""

from __future__ import annotations


class PodsearchError(Exception):
    """Base class of every error podsearch reports to a person."""


class ConfigError(PodsearchError):
    """A setting or the config file is wrong."""


class FetchError(PodsearchError):
    """An HTTP or file fetch failed (status, timeout, size cap, refused address...)."""


class StatusError(FetchError):
    """An HTTP answer that is an error (``status``: 404, 410, 500, ...; ``url``: the address that gave it)."""

    def __init__(self, message: str, status: int, url: str) -> None:
        super().__init__(message)
        self.status = status
        self.url = url


class BlockedAddress(FetchError):
    """A URL found inside a feed points at a private, loopback, link-local or multicast address."""


class FeedError(PodsearchError):
    """A feed could not be read or parsed."""


class TranscriptError(PodsearchError):
    """A transcript could not be fetched or parsed."""


class ImportFormatError(PodsearchError):
    """A JSON-lines import line is malformed."""


class QueryError(PodsearchError):
    """A search query or its parameters are malformed."""


class NotFound(PodsearchError):
    """An episode or show id is unknown."""

    @classmethod
    def unknown(cls, what: str, key: str, limit: int = 200) -> NotFound:
        """``No <what> with id '<key>'.``, a key longer than ``limit`` characters cut to it (an id in a URL may
        be as long as the request head allows; the answer need not repeat it)."""
        shown = key if len(key) <= limit else key[:limit] + "…"
        return cls(f"No {what} with id {shown!r}" + (f" ({len(key)} characters)." if shown != key else "."))


class IndexMissing(PodsearchError):
    """No index (or model) has been built yet in the data folder."""


class DataUnreadable(IndexMissing):
    """A file of the index or of the similarity model is there but cannot be read (truncated, damaged, not readable).

    The message names the folder, the cause and what to do (it goes to the server's log and the CLI); clients of the
    server are told ``public`` only, which names no path of the machine."""

    def __init__(self, message: str, public: str) -> None:
        super().__init__(message)
        self.public = public


class ReindexRunning(PodsearchError):
    """Another reindex holds the lock."""


class Terminated(BaseException):
    """A stop signal (SIGTERM, SIGHUP) received by a run that changes the data folder (``reindex.locked_run``).

    A ``BaseException``, as ``KeyboardInterrupt`` is: the run's handlers of failures (``except Exception``) let it
    through, and the run cleans up as after Ctrl-C. ``signum`` is the signal, for the CLI to end by it."""

    def __init__(self, signum: int) -> None:
        import signal

        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(f"stopped by {self.name}")


# What to do when the machine refuses podsearch a file of its data folder (EACCES, EPERM).
PERMISSION_ADVICE = ("run it as a user who may read and write the data folder (the one that made it), or let this one "
                     "(chown or chmod)")


class DataFolderError(PodsearchError):
    """The data folder cannot be made or written (permissions, a read-only or missing file system)."""


class InputError(PodsearchError):
    """What a command was given cannot work (a source that is no feed, no feeds to read); the CLI exits 2."""


class HostUnreachable(FetchError):
    """A host could not be reached: its name is not found, it refuses or never answers, or TLS fails.

    ``cause`` is that reason in a few words ("name not found", "connection refused", ...)."""

    def __init__(self, message: str, *, host: str = "", cause: str = "") -> None:
        super().__init__(message)
        self.host = host
        self.cause = cause


class HostSkipped(FetchError):
    """A link was not fetched because its host was found unreachable earlier in the same run."""

    def __init__(self, message: str, *, host: str = "") -> None:
        super().__init__(message)
        self.host = host


class DeadlinePassed(FetchError):
    """The run's deadline (``reindex_deadline``) passed before this fetch could be made or finished."""


class CatalogError(PodsearchError):
    """The catalog cannot be used as it is (e.g. written by a newer podsearch)."""


class EngineUnavailable(PodsearchError):
    """The search engine did not answer (every node refused, or kept saying it is overloaded)."""


class EngineRequestError(PodsearchError):
    """The search engine refused a request (an error that asking again does not cure)."""

    def __init__(self, message: str, status: int = 0, body: object = None) -> None:
        super().__init__(message)
        self.status, self.body = status, body


class Overloaded(PodsearchError):
    """The server has no room for this request now (expensive searches at their limit, or a search that found
    nothing before its deadline); ``retry_after`` seconds is a fair wait."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TimedOut(Overloaded):
    """A search found nothing before its deadline."""


class WatchError(PodsearchError):
    """A watch's query, webhook URL or secret is not acceptable."""


class ListenError(PodsearchError):
    """The server cannot listen where it was asked to (the port is taken, the address is not this machine's)."""
