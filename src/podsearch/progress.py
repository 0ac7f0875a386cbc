"""What long work tells about its progress; the CLI draws it, the library only calls it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


class Progress:
    def phase(self, name: str, total: int | None = None) -> None:
        """A new phase starts (``total`` steps, or None when unknown)."""

    def advance(self, n: int = 1) -> None:
        """``n`` more steps of the current phase are done."""

    def done(self) -> None:
        """The work is over."""


STEP_EVERY = 0.1  # seconds between two calls of a long computation's watcher (Steps)


def no_step() -> None:
    """The step of a long computation that nothing watches (the default of a ``step`` argument)."""


class Steps:
    """What a long computation calls between its small steps (an episode read, a block of rows scored): ``watch``
    (stage) at most every :data:`STEP_EVERY` s. The model's fit is given its run's progress so: a scheduled run the
    server stops (``server.StoppableRun``) raises there, within about a second of the stop whatever stage the fit is
    in; until 6 December 2026 it looked at two points of a fit of 90 s (site corpus), the first after 75 s."""

    def __init__(self, watch: Callable[[str], None] | None, stage: str = "step") -> None:
        self.watch, self.stage = watch, stage
        self.last = time.monotonic()

    def __call__(self) -> None:
        if self.watch is not None and time.monotonic() - self.last >= STEP_EVERY:
            self.last = time.monotonic()
            self.watch(self.stage)


def stepped(items: Iterable[T], step: Callable[[], None]) -> Iterator[T]:
    """``items``, with ``step()`` before each."""
    for item in items:
        step()
        yield item
