"""What a reindex or an import did: counts, errors and warnings, times; its exit status."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass
class Report:
    feeds: int = 0
    feeds_unchanged: int = 0
    feeds_failed: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    gone: int = 0
    transcripts_fetched: int = 0
    transcripts_failed: int = 0
    transcripts_empty: int = 0  # served but blank: a warning, not a failure (the publisher's file is empty)
    transcripts_not_modified: int = 0  # stored transcripts checked again and found unchanged (304, same file)
    # stored transcripts parsed by another parser version (ingest.transcripts.PARSER_VERSION), read again in full and
    # parsed again (also counted in transcripts_fetched)
    transcripts_reparsed: int = 0
    feeds_dropped: list[str] = field(default_factory=list)  # no longer in the config (or removed): not read any more
    moves: list[str] = field(default_factory=list)  # feeds recognised at a new address, one sentence each
    # Hosts found unreachable, each once: {"host", "cause", "message", "failed", "skipped"} (links that failed
    # on it, links not tried because it was down).
    unreachable_hosts: list[dict[str, Any]] = field(default_factory=list)
    deadline_passed: bool = False
    notes: list[str] = field(default_factory=list)  # what a person should know that is no problem: moves, drops
    index: dict[str, int] = field(default_factory=dict)
    model: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    # Watches (podsearch.watches), when there are any: counts and failed deliveries. A failed delivery is kept
    # for the next run and does not make the run failed: the feeds, the index and the model are fine.
    webhooks: dict[str, int] = field(default_factory=dict)
    webhook_errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.feeds_failed or self.transcripts_failed or self.errors)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    @classmethod
    def counts(cls, saved: dict[str, Any]) -> dict[str, int]:
        """Every count of a run (the int fields, in their order) from its ``to_dict``; 0 for one it did not write."""
        return {f.name: saved.get(f.name, 0) for f in fields(cls) if f.type in (int, "int")}

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "failed": self.failed}
