"""Another episode's guest named where an episode looks back (docs/similar.md, tenth round).

A round-up says who the episodes it looks back on were with: "we did one with the guy who created Templ", "I also
always enjoy the 'What's new in Go' episodes ... Carl Johnson, who basically comes back". Episode ``i`` *names the
guest* of episode ``j`` of its show when a person of ``j`` is said, as a name of two words or more written with
capitals, within ``guest_window`` words of "episode", "episodes" or "ep" in ``i``'s notes or transcript (the cue
windows of :mod:`rerank`), and that person is

- a guest, not a host: in at most ``guest_share`` of the show's episodes (at least one);
- not one of ``i``'s own people (a guest who says "in this episode" names nobody else's episode);
- and ``j`` is earlier than ``i`` when both have a number: a look back names an episode before it (the guest of
  Go Time #300's favourite episodes was also on later ones, which #300 cannot mean).

The link is one way: ``j`` enters ``i``'s list, lifted to ``s + guest_weight * (1 - s)`` (its score as the list
would rank it otherwise: :meth:`SimilarModel.scores`), and the guest's name is a reason; ``j``'s list is not
changed (the 86 % of such links that are no labelled pair pushed targets out when both lists took them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..progress import no_step, stepped
from .fields import names_someone, person_token
from .rerank import cue_windows

MAX_NAME_WORDS = 4
# a run of two or more words written with a capital ("Carl Johnson", "So Carl Johnson"): names are read from these
_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)+")


def names_near_cues(text: str, width: int) -> set[str]:
    """The person tokens (:func:`person_token`) that a capitalised run of two to four words within ``width``
    words of a cue word of ``text`` may be: every run of two words or more inside each such run."""
    found: set[str] = set()
    for window in cue_windows(text, width):
        for run in _CAPITALISED_RUN.finditer(window):
            words = run.group(0).split()
            for a in range(len(words) - 1):
                for b in range(a + 2, min(len(words), a + MAX_NAME_WORDS) + 1):
                    found.add(person_token(" ".join(words[a:b])))
    return found


class Guests:
    """The people of each show's episodes, and the episodes whose cue windows name another one's guest.

    ``people``: show -> person token -> positions of the episodes with that person; ``links``: position ``i`` ->
    {position ``j``: the token of the guest of ``j`` that ``i`` names}. Kept with the model (fold-in adds to it).
    """

    def __init__(self, share: float, sizes: dict[str, int] | None = None,
                 people: dict[str, dict[str, list[int]]] | None = None,
                 links: dict[int, dict[int, str]] | None = None, names: dict[str, str] | None = None,
                 numbers: list[int | None] | None = None) -> None:
        self.share = share
        self.sizes = sizes or {}  # show -> episodes
        self.people = people or {}
        self.links = links or {}
        self.names = names or {}  # token of a linked guest -> the name as written ("Carl Johnson")
        self.numbers = numbers or []  # each episode's number in its show, or None

    def copy(self) -> Guests:
        """A copy that :meth:`add` may change while this one is served."""
        return Guests(self.share, dict(self.sizes), {show: {t: list(e) for t, e in found.items()}
                                                      for show, found in self.people.items()},
                      {i: dict(found) for i, found in self.links.items()}, dict(self.names), list(self.numbers))

    def add(self, offset: int, shows: Sequence[str], people: Sequence[Iterable[str]], near: Sequence[set[str]],
            names: dict[str, str], numbers: Sequence[int | None], step: Callable[[], None] = no_step) -> None:
        """Take in the episodes at positions ``offset:``: their shows, their people's tokens, what their cue windows
        name (:func:`names_near_cues`) and their numbers, then link each of them to the guests it names (``names``:
        token -> the name as written)."""
        self.numbers[offset:] = list(numbers)
        for k, (show, tokens) in enumerate(stepped(zip(shows, people), step)):
            self.sizes[show] = self.sizes.get(show, 0) + 1
            in_show = self.people.setdefault(show, {})
            for token in dict.fromkeys(tokens):
                in_show.setdefault(token, []).append(offset + k)
        for k, (show, tokens, named) in enumerate(stepped(zip(shows, people, near), step)):
            own = set(tokens)
            limit = max(1.0, self.share * self.sizes[show])
            in_show = self.people.get(show, {})
            found: dict[int, str] = {}
            for token in sorted(named - own):
                episodes = in_show.get(token)
                if episodes and len(episodes) <= limit and "_" in token and names_someone(token):
                    for j in episodes:
                        if j != offset + k and self._before(j, offset + k):
                            found.setdefault(j, token)
                    self.names.setdefault(token, names.get(token, token))
            if found:
                self.links[offset + k] = found

    def named(self, i: int) -> np.ndarray:
        """The positions of the episodes whose guests ``i`` names, in order."""
        return np.array(sorted(self.links.get(i, {})), dtype=np.int64)

    def _before(self, j: int, i: int) -> bool:
        """Whether ``j`` may be earlier than ``i``: true unless both have numbers and ``j``'s is not smaller."""
        a, b = self.numbers[j], self.numbers[i]
        return a is None or b is None or a < b

    def name(self, i: int, j: int) -> str | None:
        """The name of the guest of ``j`` that ``i`` names, as written, or None."""
        token = self.links.get(i, {}).get(j)
        return self.names.get(token, token) if token else None

    def to_json(self) -> dict[str, Any]:
        return {"share": self.share, "sizes": self.sizes, "people": self.people, "names": self.names,
                "numbers": self.numbers,
                "links": {str(i): {str(j): t for j, t in found.items()} for i, found in self.links.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Guests:
        return cls(float(data["share"]), dict(data["sizes"]), data["people"],
                   {int(i): {int(j): t for j, t in found.items()} for i, found in data["links"].items()},
                   dict(data["names"]), list(data["numbers"]))
