"""What long work tells about its progress; the CLI draws it, the library only calls it."""

from __future__ import annotations


class Progress:
    def phase(self, name: str, total: int | None = None) -> None:
        """A new phase starts (``total`` steps, or None when unknown)."""

    def advance(self, n: int = 1) -> None:
        """``n`` more steps of the current phase are done."""

    def done(self) -> None:
        """The work is over."""
