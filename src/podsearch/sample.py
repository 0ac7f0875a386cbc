"""The bundled sample: three shows written by the podsearch team, shipped inside the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def sample_feeds() -> list[str]:
    """Paths of the bundled sample feeds (they work from a wheel: the package is on disk)."""
    root = Path(str(resources.files("podsearch") / "sample" / "feeds"))
    return sorted(str(p) for p in root.glob("*.xml"))
