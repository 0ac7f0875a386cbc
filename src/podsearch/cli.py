"""The ``podsearch`` command: thin commands over the library."""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shlex
import signal
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

import click

from . import __version__
from .config import Config, load_config
from .errors import PERMISSION_ADVICE, CatalogError, ConfigError, InputError, ListenError, PodsearchError, QueryError, Terminated
from .progress import Progress

log = logging.getLogger(__name__)

EXIT_FAILED = 1
EXIT_MISUSE = 2


class TerminalProgress(Progress):
    """A one-line progress display on stderr, only when stderr is a terminal and not --quiet."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.name = ""
        self.total: int | None = None
        self.count = 0

    def phase(self, name: str, total: int | None = None) -> None:
        self.name, self.total, self.count = name, total, 0
        self._draw()

    def advance(self, n: int = 1) -> None:
        self.count += n
        if self.count % 10 == 0 or self.count == self.total:
            self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        total = f"/{self.total}" if self.total else ""
        sys.stderr.write(f"\r\x1b[2K{self.name}: {self.count}{total}")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


class Context:
    def __init__(self, data: str | None, config_path: str | None, quiet: bool, verbose: int) -> None:
        self.overrides = {"data": data, "config": config_path}
        self.quiet = quiet
        self.verbose = verbose
        self._config: Config | None = None

    @property
    def config(self) -> Config:
        """The settings, read once; a refused setting is misuse, said as such whichever command asked."""
        if self._config is None:
            try:
                self._config = load_config(self.overrides)
            except ConfigError as exc:
                raise fail(exc) from None
        return self._config

    def progress(self) -> Progress:
        return TerminalProgress(enabled=not self.quiet and sys.stderr.isatty())


pass_ctx = click.make_pass_decorator(Context)


class Misuse(click.ClickException):
    """A refused argument, said plainly (exit 2, without the usage text)."""

    exit_code = EXIT_MISUSE


def fail(exc: PodsearchError) -> click.ClickException:
    """The library's error as the CLI reports it: misuse (bad input, a bad query, a bad setting: exit 2) or a
    failure (exit 1). A setting refused (config file, environment, ``--memory``, ``--reindex-every``) is said
    without the usage text, which is not about it."""
    if isinstance(exc, (InputError, QueryError)):
        return click.UsageError(str(exc))
    if isinstance(exc, ConfigError):
        return Misuse(str(exc))
    return click.ClickException(str(exc))


def json_option(what: str) -> Callable[[Any], Any]:
    """``--json``: print ``what`` as JSON instead of text."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON.")


def memory_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--memory SIZE``: the ``build_memory`` setting for this run (a full rebuild of the index stays within it)."""

    def set_memory(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        obj = ctx.find_object(Context)
        if value is not None and obj is not None:
            obj.overrides["build_memory"] = value

    return click.option("--memory", metavar="SIZE", default=None, expose_value=False, callback=set_memory,
                        help="Memory a full rebuild of the index may use: 700M, 2G (the build_memory setting "
                             "for this run). [env PODSEARCH_BUILD_MEMORY]")(f)


# What the machine says when the data folder cannot take what a command writes: a full disk or quota, a file size
# limit, a read-only file system, a refused or failing write (SQLite says "disk I/O error" or "database or disk is full").
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})
SQLITE_DISK = ("disk I/O error", "database or disk is full", "readonly database")


class _Commands(click.Group):
    """The commands, with the machine's refusal to write the data folder said in one line (exit 1), and a run
    stopped by SIGTERM or SIGHUP ended by that signal once it has cleaned up."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Terminated as exc:
            _end_by(exc)
        except (OSError, sqlite3.OperationalError) as exc:
            written = isinstance(exc, OSError) and exc.errno in DISK_ERRNOS
            if not written and not (isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(SQLITE_DISK)):
                raise
            obj = ctx.find_object(Context)
            try:
                where = f" {obj.config.data_dir}" if obj is not None else ""
            except PodsearchError:
                where = ""
            if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
                # (until 6 December 2026 a folder the user may not read was said as a full disk: "free room")
                raise click.ClickException(f"Cannot read or write in the data folder{where} (or the temporary "
                                           f"folder): {exc}; {PERMISSION_ADVICE}") from None
            raise click.ClickException(f"Cannot write in the data folder{where} (or the temporary folder): {exc} (a "
                                       "full disk or quota, a file size limit, a read-only file system?); free room "
                                       "and run it again") from None


def _end_by(stop: Terminated) -> None:
    """Say that a run stopped by a signal cleaned up, then end by that signal, as a process that does not handle it
    (a shell says status 143 for SIGTERM; systemd counts it a clean stop; ``docker stop`` reports 143)."""
    try:
        click.echo(f"Stopped by {stop.name}: the run was cut short; no half-written index or model is left, and the "
                   "last finished ones are served.", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # (SIGHUP: the terminal may be gone)
        pass
    signal.signal(stop.signum, signal.SIG_DFL)
    os.kill(os.getpid(), stop.signum)
    sys.exit(128 + stop.signum)  # (where the signal is blocked)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]}, epilog="""\b
Examples:
  podsearch demo                        index the bundled sample and serve it
  podsearch --config podsearch.toml reindex
  podsearch search "sourdough starter"
""")
@click.version_option(__version__, prog_name="podsearch")
@click.option("--data", metavar="DIR", envvar="PODSEARCH_DATA", default=None,
              help="Data folder: catalog, index and model. [env PODSEARCH_DATA; default: index]")
@click.option("--config", "config_path", metavar="FILE", envvar="PODSEARCH_CONFIG", default=None,
              help="TOML config file with feeds = [...]. [env PODSEARCH_CONFIG]")
@click.option("-q", "--quiet", is_flag=True, help="No progress display, only errors and the summary.")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.pass_context
def main(ctx: click.Context, data: str | None, config_path: str | None, quiet: bool, verbose: int) -> None:
    """podsearch: full-text search and "nearby episodes by topic" for podcast episodes.

    It reads podcast feeds and their transcripts into a catalog (SQLite), builds a Whoosh index and a
    TF-IDF similarity model from it, and serves a search page and a JSON API.
    """
    level = logging.WARNING if not verbose else (logging.INFO if verbose == 1 else logging.DEBUG)
    if quiet:
        level = logging.ERROR
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    ctx.obj = Context(data, config_path, quiet, verbose)


def _print_report(report: Any, quiet: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    for err in report.errors:
        click.echo(f"error: {err}", err=True)
    if not quiet:
        for warning in report.warnings[:20]:
            click.echo(f"warning: {warning}", err=True)
        for note in report.notes:
            click.echo(f"note: {note}", err=True)
    idx = report.index
    dropped = f", {len(report.feeds_dropped)} dropped" if report.feeds_dropped else ""
    # (an import reads no feed and fetches no transcript: its line says what it did, not "0 feeds", "0 fetched")
    feeds = (f"{report.feeds} feed{'' if report.feeds == 1 else 's'} ({report.feeds_unchanged} unchanged, "
             f"{report.feeds_failed} failed{dropped}); " if report.feeds or dropped else "")
    # (read again for a parser of another version: said when there are any, the run after an upgrade)
    reparsed = (f" ({report.transcripts_reparsed} read again for a new parser)" if report.transcripts_reparsed else "")
    fetched = (f"transcripts: {report.transcripts_fetched} fetched{reparsed}, {report.transcripts_not_modified} not "
               f"modified, {report.transcripts_empty} empty, {report.transcripts_failed} failed; " if report.feeds else "")
    click.echo(
        f"{feeds}episodes: {report.new} new, {report.updated} updated, {report.unchanged} unchanged, "
        f"{report.gone} gone; {fetched}index: "
        f"{idx.get('added', 0)} added, {idx.get('updated', 0)} updated, {idx.get('removed', 0)} removed; "
        f"model: {report.model}")
    if report.webhooks:
        hooks = report.webhooks
        for err in report.webhook_errors:
            click.echo(f"webhook: {err}", err=True)
        click.echo(f"watches: {hooks['watches']}, {hooks['matched']} new matches; webhooks: {hooks['delivered']} "
                   f"delivered, {hooks['failed']} failed, {hooks['pending']} kept for the next run")


@main.command()
@click.option("--full", is_flag=True, help="Rebuild the index and the model from scratch (swapped in atomically).")
@click.option("--prune", is_flag=True, help="Delete episodes that left their feed (default: keep them, marked).")
@click.option("--wait", is_flag=True, help="Wait for a running reindex to finish instead of refusing.")
@memory_option
@json_option("the summary")
@pass_ctx
def reindex(obj: Context, full: bool, prune: bool, wait: bool, as_json: bool) -> None:
    """Fetch every feed, store new and changed episodes, update the index and refit the model.

    Exits 0 when all went well, 1 when some feed or transcript failed, 2 on misuse.

    \b
    Example:
      podsearch --config podsearch.toml reindex
    """
    from .reindex import reindex as run
    from .sources import require_feeds

    try:
        require_feeds(obj.config)
        report = run(obj.config, full=full, prune=prune, wait=wait, progress=obj.progress())
    except PodsearchError as exc:
        raise fail(exc) from None
    _print_report(report, obj.quiet, as_json)
    sys.exit(report.exit_code)


@main.command()
@click.argument("source")
@pass_ctx
def add(obj: Context, source: str) -> None:
    """Register a feed (URL or local path); the next reindex reads it.

    \b
    Example:
      podsearch add https://example.org/feed.xml && podsearch reindex
    """
    from .sources import add_feed

    try:
        source, new = add_feed(obj.config, source)
    except PodsearchError as exc:
        raise fail(exc) from None
    click.echo(f"added {source}; run 'podsearch reindex' to read it" if new
               else f"{source} was added already; 'podsearch feeds' shows it")


@main.command("feeds")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@pass_ctx
def feeds_(obj: Context, as_json: bool) -> None:
    """List every feed: where it came from (config or add), where it is read, its last status, its episodes.

    \b
    Example:
      podsearch --config podsearch.toml feeds --json
    """
    from .sources import list_feeds

    try:
        listed = list_feeds(obj.config)
    except PodsearchError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps([f.to_dict() for f in listed], indent=2))
        return
    for f in listed:
        gone = f" ({f.gone} gone)" if f.gone else ""
        show = f"  {f.show_id} ({f.show})" if f.show_id else ""
        click.echo(f"{f.origin:6}  {f.status:12}  {f.episodes:6} episodes{gone}  {f.source}{show}")
        if f.address != f.source:
            click.echo(f"        moved: read at {f.address}")
        if f.error:
            click.echo(f"        last error: {f.error}")


@main.command()
@click.argument("source")
@click.option("--prune", is_flag=True, help="Delete the feed's episodes (default: keep them, marked gone).")
@click.option("--wait", is_flag=True, help="Wait for a running reindex to finish instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_ctx
def remove(obj: Context, source: str, prune: bool, wait: bool, as_json: bool) -> None:
    """Stop reading a feed added with 'podsearch add'; its episodes stay, marked gone, unless --prune.

    A feed listed in the config file is refused: take it out of the config (the next reindex drops it).

    \b
    Example:
      podsearch remove https://example.org/feed.xml --prune
    """
    from .reindex import remove_feed

    try:
        report = remove_feed(obj.config, source, prune=prune, wait=wait, progress=obj.progress())
    except PodsearchError as exc:
        raise fail(exc) from None
    _print_report(report, obj.quiet, as_json)
    sys.exit(report.exit_code)


@main.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--full", is_flag=True, help="Rebuild the index from scratch afterwards.")
@click.option("--wait", is_flag=True, help="Wait for a running reindex to finish instead of refusing.")
@memory_option
@json_option("the summary")
@pass_ctx
def import_(obj: Context, file: str, full: bool, wait: bool, as_json: bool) -> None:
    """Import episodes from a JSON-lines file (one episode per line; see docs/ingest.md).

    \b
    Example:
      podsearch import episodes.jsonl
    """
    from .reindex import import_jsonl

    try:
        report = import_jsonl(obj.config, file, full=full, wait=wait, progress=obj.progress())
    except PodsearchError as exc:
        raise fail(exc) from None
    _print_report(report, obj.quiet, as_json)
    sys.exit(report.exit_code)


@main.command()
@click.option("--host", default=None, help="Address to listen on. [env PODSEARCH_HOST; default 127.0.0.1]")
@click.option("--port", type=int, default=None, help="Port. [env PODSEARCH_PORT; default 8080]")
@click.option("--threads", type=int, default=None, help="Worker threads. [env PODSEARCH_THREADS; default 4]")
@click.option("--url-prefix", default=None, metavar="PATH",
              help="Serve under this path behind a reverse proxy, e.g. /podsearch. [env PODSEARCH_URL_PREFIX]")
@click.option("--trusted-proxy", default=None, metavar="ADDR",
              help="Believe X-Forwarded-* headers from this proxy address ('*': any). [env PODSEARCH_TRUSTED_PROXY]")
@click.option("--reindex-every", default=None, metavar="DURATION",
              help="Reindex from inside the server this often: 30m, 1h, 1d. [env PODSEARCH_REINDEX_EVERY]")
@click.option("--access-log/--no-access-log", default=None, help="One log line per request on stderr. [default: on]")
@pass_ctx
def serve(obj: Context, host: str | None, port: int | None, threads: int | None, url_prefix: str | None,
          trusted_proxy: str | None, reindex_every: str | None, access_log: bool | None) -> None:
    """Serve the search page and the JSON API with waitress; SIGTERM stops it after requests in flight.

    \b
    Example:
      podsearch serve --host 0.0.0.0 --port 8080 --threads 8 --url-prefix /podsearch --reindex-every 1h
    """
    _serve(obj.config, obj.quiet, host=host, port=port, threads=threads, url_prefix=url_prefix,
           trusted_proxy=trusted_proxy, reindex_every=reindex_every, access_log=access_log)


def _serve(config: Config, quiet: bool, access_log: bool | None = None, **options: Any) -> None:
    from .server import ServeOptions, configure_access_log, serve
    from .web import create_app

    try:
        opts = ServeOptions.from_config(config, **options)
        app = create_app(config)  # the engine's settings are read here (an OpenSearch URL refused)
    except PodsearchError as exc:
        raise fail(exc) from None
    configure_access_log(access_log if access_log is not None else config.access_log and not quiet)
    try:
        status = serve(app, opts, config, announce=None if quiet else lambda line: click.echo(line, err=True))
    except (ListenError, ConfigError, CatalogError) as exc:  # (a catalog it cannot open: every request would fail)
        raise fail(exc) from None
    sys.exit(status)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=8080, show_default=True, help="Port.")
@click.option("--no-serve", is_flag=True, help="Only index the sample; do not start the server.")
@pass_ctx
def demo(obj: Context, host: str, port: int, no_serve: bool) -> None:
    """Index the bundled sample (3 shows, 36 episodes) and serve it.

    \b
    Example:
      podsearch demo --port 8080
    """
    from .reindex import reindex as run
    from .sample import sample_feeds

    config = obj.config
    try:
        report = run(config, sources=sample_feeds(), progress=obj.progress())
    except PodsearchError as exc:
        raise fail(exc) from None
    _print_report(report, obj.quiet, False)
    if report.failed:
        sys.exit(EXIT_FAILED)
    if not no_serve:
        _serve(config, obj.quiet, host=host, port=port)


def _library(obj: Context):
    from .service import Library

    return Library.from_config(obj.config)


def _strip_marks(text: str, n: int) -> str:
    """Highlighted HTML as one line of plain text (matches between asterisks), cut at a word to ``n`` characters."""
    import html

    from .answers import shorten

    return shorten(html.unescape(re.sub(r"</?mark>", "*", text)), n)


@main.command()
@click.argument("query")
@click.option("--show", "shows", multiple=True, help="Only this show id (repeatable).")
@click.option("--person", default="", help="Only episodes with this person.")
@click.option("--from", "from_", default="", metavar="DATE", help="Published on or after: YYYY, YYYY-MM or YYYY-MM-DD.")
@click.option("--to", default="", metavar="DATE", help="Published on or before: YYYY, YYYY-MM or YYYY-MM-DD.")
@click.option("--duration-min", type=int, default=None, metavar="MINUTES", help="At least this many minutes long.")
@click.option("--duration-max", type=int, default=None, metavar="MINUTES", help="At most this many minutes long.")
@click.option("--language", default="", metavar="CODE", help="Only episodes in this language (en, de, pt-BR).")
@click.option("--sort", type=click.Choice(["relevance", "date", "oldest"]), default="relevance", show_default=True)
@click.option("--page", type=int, default=1, show_default=True)
@click.option("--per-page", type=int, default=10, show_default=True)
@click.option("--correct/--no-correct", default=True, show_default=True,
              help="Answer a query with unknown words for its spelling suggestion (--no-correct: as typed).")
@json_option("the result (the /api/search shape)")
@pass_ctx
def search(obj: Context, query: str, as_json: bool, **options: Any) -> None:
    """Search the index and print the matching episodes with their best moments.

    The options are the API's parameters, with the same limits (docs/api.md).

    \b
    Example:
      podsearch search '"sourdough starter" -vinegar' --per-page 5 --from 2023
    """
    from .requests import search_request

    args = {"q": query, "show": list(options.pop("shows")), "from": options.pop("from_"), **options}
    try:
        req = search_request({k: v for k, v in args.items() if v is not None})
    except QueryError as exc:  # (the API's parser names its parameters: said as this command's options)
        raise fail(QueryError(_as_option(str(exc)))) from None
    try:
        result = _library(obj).search(req)
    except PodsearchError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    relaxed = f" with any of the words ({result.all_words or 0} with every word)" if result.relaxed else ""
    click.echo(f"{result.total} episode{'' if result.total == 1 else 's'}{relaxed}"
               + (f" (did you mean: {result.suggestion})" if result.suggestion else "")
               + (f" for {result.corrected!r}, not {query!r} (--no-correct: as typed)" if result.corrected else ""))
    for note in result.notes:  # (what the page says: a query of stop words only, a pattern cut short)
        click.echo(f"note: {note}")
    # What the page says of an answer that left matches out (until 6 December 2026 only --json said it)
    if result.no_duration:
        n = result.no_duration
        click.echo(f"note: {n:,} matching episode{' was' if n == 1 else 's were'} left out: "
                   f"{'its' if n == 1 else 'their'} length is not known (search without --duration-min/--duration-max)")
    if result.without_fields:
        n = result.without_fields
        click.echo(f"note: no episode has these words where the query asks for them; {n:,} episode"
                   f"{' has' if n == 1 else 's have'} them elsewhere: podsearch search {shlex.quote(result.anywhere)}")
    if result.past_end:
        click.echo(f"page {result.page} is past the last page ({result.pages})")
    for n, hit in enumerate(result.hits, (result.page - 1) * result.per_page + 1):
        click.echo(f"\n{n}. {hit.title}  [{hit.show}{', ' + hit.published[:10] if hit.published else ''}]")
        click.echo(f"   id: {hit.id}")
        click.echo(f"   {_strip_marks(hit.snippet, 300)}")
        for m in hit.moments:
            at = "" if m.start is None else f"{int(m.start) // 60}:{int(m.start) % 60:02d} "
            click.echo(f"   - {at}{m.speaker + ': ' if m.speaker else ''}{_strip_marks(m.text, 200)}")


@main.command()
@click.argument("episode_id")
@click.option("-k", type=int, default=10, show_default=True, help="How many neighbours (at most 50).")
@json_option("the neighbours (the /similar/<id> shape)")
@pass_ctx
def similar(obj: Context, episode_id: str, k: int, as_json: bool) -> None:
    """Print the episodes nearest in topic to EPISODE_ID, with the terms that make them near.

    \b
    Example:
      podsearch similar 'tag:example.org,2024:field-notes/ep-07' -k 5
    """
    try:
        result = _library(obj).similar(episode_id, k)
    except PodsearchError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    for item in result.similar:
        click.echo(f"{item.score:.3f}  {item.title}  [{item.show}]\n       id: {item.id}\n       because of: "
                   f"{', '.join(item.reasons)}")
    for item in result.duplicates:
        click.echo(f"duplicate ({item.score:.3f}): {item.title} [{item.show}] id: {item.id}")


@main.command()
@json_option("the figures")
@pass_ctx
def stats(obj: Context, as_json: bool) -> None:
    """Print counts (shows, episodes, transcripts), index size and the last reindex.

    \b
    Example:
      podsearch stats --json
    """
    try:
        figures: dict[str, Any] = _library(obj).stats()
    except PodsearchError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps(figures, indent=2))
    else:
        click.echo(_stats_text(figures))
    if figures.get("index_error") or figures.get("model_error"):  # every figure said, and the exit status a
        sys.exit(1)                                                 # monitor reads says something is down


# The search's parameters whose names differ from this command's options (``per_page must be ...``)
_OPTION_OF = {"per_page": "--per-page", "page": "--page", "from": "--from", "to": "--to", "sort": "--sort",
              "duration_min": "--duration-min", "duration_max": "--duration-max", "person": "--person",
              "show": "--show", "lang (or language)": "--language", "q": "the query"}


def _as_option(message: str) -> str:
    """A request parser's message with its parameter named as the option typed (``--per-page must be ...``)."""
    for name, option in _OPTION_OF.items():
        if message.startswith(name + " "):
            return option + message[len(name):]
    return message


def _stats_text(figures: dict[str, Any]) -> str:
    """The figures as a person reads them."""
    lines = [f"data: {figures['data']} ({figures.get('engine', 'whoosh')} engine)",
             f"shows: {figures['shows']:,}; feeds: {figures['feeds']:,}",
             f"episodes: {figures['episodes']:,} ({figures['episodes_gone']:,} gone from their feed, "
             f"{figures['with_transcript']:,} with a transcript of {figures['segments']:,} segments in all)",
             f"index: {figures['index_documents']:,} documents, {figures['index_bytes'] / 1e6:,.1f} MB"
             if not figures.get("index_error") else f"index: {figures['index_error']}"]
    if figures.get("model_error"):
        lines.append(f"model: {figures['model_error']}")
    last = figures.get("last_reindex")
    if last:
        state = "with failures" if last["failed"] else "ok"
        lines.append(f"last reindex: {last['finished']} ({last['age_seconds']:,.0f} s ago), {state}")
        lines.extend(f"  error: {e}" for e in last["errors"])
    else:
        lines.append("last reindex: never")
    for run in figures.get("unfinished_reindexes", []):
        lines.append(f"  a reindex started {run['started']} did not finish: "
                     + (run["aborted"] or "killed, or running now"))
    for key, value in figures.items():  # figures other parts of podsearch add
        if key not in _STATS_SHOWN:
            lines.append(f"{key.replace('_', ' ')}: {_stat(value)}")
    return "\n".join(lines)


def _stat(value: Any) -> str:
    """A figure as words: ``searches 299, timed out 0`` for a group of them (not a Python dict), "none" for None."""
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_stat(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(_stat(v) for v in value) or "none"
    return "none" if value is None else str(value)


_STATS_SHOWN = {"data", "engine", "shows", "feeds", "episodes", "episodes_gone", "with_transcript", "segments",
                "index_documents", "index_bytes", "index_generation", "index_error", "model_generation",
                "model_error", "last_reindex", "unfinished_reindexes"}


@main.group()
def watch() -> None:
    """Follow a topic: after each reindex or import, POST the new episodes that match a query to a webhook.

    Each POST is JSON signed with HMAC-SHA256 under the watch's secret (docs/alerts.md shows how to check it).
    A delivery that fails is kept and tried again after the next reindex or import.

    \b
    Examples:
      podsearch watch add kubernetes --webhook https://hooks.example.org/podsearch
      podsearch watch list
      podsearch watch remove 3
    """


@watch.command("add")
@click.argument("query")
@click.option("--webhook", required=True, metavar="URL", help="Where to POST the new matching episodes (http or https).")
@click.option("--secret", default=None, metavar="S",
              help="Key of the HMAC-SHA256 signature (at least 16 characters); default: a random one, printed once.")
@click.option("--show", "shows", multiple=True, metavar="ID", help="Only this show id (repeatable).")
@click.option("--person", default="", help="Only episodes with this person.")
@click.option("--lang", "language", default="", metavar="CODE", help="Only episodes in this language (en, de, pt-BR...).")
@click.option("--from", "published_from", default="", metavar="DATE", help="Only episodes published on or after (2024-05-01).")
@click.option("--to", "published_to", default="", metavar="DATE", help="Only episodes published on or before.")
@click.option("--duration-min", type=click.IntRange(0), default=None, metavar="MINUTES", help="Only episodes this long or more.")
@click.option("--duration-max", type=click.IntRange(0), default=None, metavar="MINUTES", help="Only episodes this long or less.")
@click.option("--json", "as_json", is_flag=True, help="Print the watch as JSON (with the secret).")
@pass_ctx
def watch_add(obj: Context, query: str, webhook: str, secret: str | None, shows: tuple[str, ...], person: str,
              language: str, published_from: str, published_to: str, duration_min: int | None,
              duration_max: int | None, as_json: bool) -> None:
    """Watch QUERY: new episodes it matches are POSTed to the webhook after each reindex or import.

    QUERY is a search as on the search page; it is checked against the index, which must exist. The
    webhook may not be on a private or loopback address unless PODSEARCH_ALLOW_PRIVATE_HOSTS=1.
    Exits 2 when the query, the webhook URL or the secret is refused.

    \b
    Example:
      podsearch watch add '"service mesh" kubernetes' --show shipit --webhook https://hooks.example.org/podsearch
    """
    from .errors import WatchError
    from .watches import add_watch

    minutes = {"duration_min": duration_min, "duration_max": duration_max}
    try:
        added, key = add_watch(obj.config, query, webhook, secret, shows=shows, person=person, language=language,
                               published_from=published_from, published_to=published_to,
                               **{k: v * 60 if v is not None else None for k, v in minutes.items()})
    except WatchError as exc:
        raise Misuse(str(exc)) from None
    except PodsearchError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps({**added.to_dict(), "secret": key}, indent=2))
        return
    click.echo(f"watch {added.id}: {added.query!r} -> {added.webhook}")
    if secret is None:
        click.echo(f"secret: {key}  (shown once: the receiver checks the X-Podsearch-Signature header with it)")


@watch.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the watches as JSON (without their secrets).")
@pass_ctx
def watch_list(obj: Context, as_json: bool) -> None:
    """List the watches: query, filters, webhook, deliveries made and pending, the last error.

    \b
    Example:
      podsearch watch list --json
    """
    from urllib.parse import parse_qsl, urlsplit

    from .watches import list_watches

    try:
        watches = [w.to_dict() for w in list_watches(obj.config)]
    except PodsearchError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps(watches, indent=2))
        return
    if not watches:
        click.echo("no watches; add one with 'podsearch watch add QUERY --webhook URL'")
    for w in watches:
        filters = "".join(f" {k}={v}" for k, v in parse_qsl(urlsplit(w["feed"]).query) if k != "q")
        click.echo(f"{w['id']}: {w['query']!r}{filters} -> {w['webhook']}  ({w['delivered']} delivered, "
                   f"{w['pending']} pending{'; last error: ' + w['last_error'] if w['last_error'] else ''})")


@watch.command("remove")
@click.argument("watch_id", metavar="ID", type=int)
@pass_ctx
def watch_remove(obj: Context, watch_id: int) -> None:
    """Remove watch ID and the deliveries it still had pending.

    \b
    Example:
      podsearch watch remove 3
    """
    from .errors import WatchError
    from .watches import remove_watch

    try:
        remove_watch(obj.config, watch_id)
    except WatchError as exc:
        raise Misuse(str(exc)) from None
    except PodsearchError as exc:
        raise fail(exc) from None
    click.echo(f"watch {watch_id} removed")


@main.group("eval")
def eval_() -> None:
    """Measure ranking quality: search against TREC judgments, similar against labelled pairs and tags.

    \b
    Examples:
      podsearch eval search --docs docs.jsonl --queries queries.tsv --qrels qrels.tsv --json
      podsearch eval similar --pairs related_pairs.dev.tsv --tags btc_tags.dev.tsv --json
    """


def _register_eval_commands() -> None:
    # Light modules (click only); the evaluation work is imported when a command runs.
    from .evaluation.cli_search import search_cmd
    from .evaluation.cli_similar import similar_cmd

    eval_.add_command(search_cmd)
    eval_.add_command(similar_cmd)


_register_eval_commands()

__all__ = ["main"]
