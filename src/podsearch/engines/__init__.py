"""Search engines behind one interface (``engines.base.Engine``): Whoosh, embedded (the default), and OpenSearch
for sites that outgrow one machine. Only the engine modules import an engine's library."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import ENGINES
from ..errors import ConfigError
from .base import Engine


def open_engine(data_dir: Path | str, config: Any = None) -> Engine:
    """The engine the config names (``engine``; ``PODSEARCH_ENGINE``), over the data folder ``data_dir``."""
    name = str(getattr(config, "values", {}).get("engine", "whoosh") if config is not None else "whoosh")
    if name == "whoosh":
        from .whoosh import WhooshEngine

        values = getattr(config, "values", {}) if config is not None else {}
        return WhooshEngine(data_dir, build_memory=int(values.get("build_memory", 0) or 0))
    if name == "opensearch":
        from .opensearch import OpenSearchEngine

        return OpenSearchEngine.from_config(config)
    raise ConfigError(f"engine must be one of {', '.join(ENGINES)}, not {name!r}.")


__all__ = ["ENGINES", "Engine", "open_engine"]
