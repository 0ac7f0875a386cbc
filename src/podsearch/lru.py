"""A small thread-safe map that keeps the most recently used entries: the caches kept per index or data
generation (filter document sets, encoded answers)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``entries`` values, and when ``max_bytes`` is given at most that many bytes of them by ``size``;
    the least recently used one goes first. Counts its hits and misses."""

    def __init__(self, entries: int, max_bytes: int = 0, size: Callable[[V], int] | None = None) -> None:
        self.entries, self.max_bytes = entries, max_bytes
        self._size = size if max_bytes > 0 and size is not None else None
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        self.bytes = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            if self._size is not None:
                old = self._items.get(key)
                self.bytes += self._size(value) - (self._size(old) if old is not None else 0)
            self._items[key] = value
            self._items.move_to_end(key)
            while self._items and (len(self._items) > self.entries
                                   or self._size is not None and self.bytes > self.max_bytes):
                _, dropped = self._items.popitem(last=False)
                if self._size is not None:
                    self.bytes -= self._size(dropped)

    def __len__(self) -> int:
        return len(self._items)
