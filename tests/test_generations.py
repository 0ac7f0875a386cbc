"""Generation folders: the CURRENT pointer, swapped atomically, and the stamp readers compare."""

from __future__ import annotations

from pathlib import Path

from podsearch.generations import Generations


def test_stamp_follows_every_publish_even_within_one_clock_tick(tmp_path: Path) -> None:
    gens = Generations(tmp_path / "index")
    assert gens.stamp() == ("", 0.0) and gens.current() is None
    seen = []
    for _ in range(3):  # back to back: the pointer's mtime may not move, its inode does
        final = gens.publish(gens.new())
        assert gens.current() == final
        seen.append(gens.stamp()[0])
        assert gens.stamp()[0] == final.name  # asked twice: the same answer
    assert len(set(seen)) == 3
    other = Generations(tmp_path / "index")  # another reader (another process) sees the same
    assert other.stamp() == gens.stamp()
    gens.pointer.unlink()
    assert gens.stamp() == ("", 0.0)
