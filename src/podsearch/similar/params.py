"""What changes the model: its parameters and version, saved beside it (a mismatch means refit)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import sklearn

from .. import __version__

MODEL_VERSION = 18  # 4: per-language stop words; 5: per-field sublinear tf, title phrases; 6: title cosine, LSA on;
#                   7: the lists reranked by pseudo-relevance feedback and cue windows (rerank.py); 8: another
#                   show's episode named by its title after the number or a few words before it, and links to
#                   episode pages (signals.py); 9: the shows' titles kept, for the reasons (reasons.py); 10: another
#                   episode's guest named near "episode" (guests.py); 11: Japanese voicing marks (and other
#                   scripts' marks) kept by the accent folding (features.fold_lower); 12: no terms from the text of
#                   links and e-mail addresses (features.model_text); 13: the runs said in 3 or more recordings
#                   kept, and each episode's words said only in them, for the reasons (runs.py); 14: a term keeps
#                   the combining marks written after its letters (signals.terms: Hindi and every Indic script, Thai, ...);
#                   15: the words said only in a section announced as sponsored, and the runs' words read without
#                   their accents, as the terms (runs.py); 16: a sponsored section without a heading or thanks
#                   ends at the sponsor's call to go somewhere, a label of the catalog's other languages announces
#                   one, and the runs' words are cut at any punctuation, as the terms (runs.py);
#                   17: a short walk over the lists, and the episodes of its show a cue window names by topic
#                   (walk.py); 18: a sponsor thanked without an announcement, an announced item's first line,
#                   a link whose text calls ("[Sign up](...)"), the sentences that name the day's sponsors or offer a
#                   discount, and a term of several words said only inside when one of its words is (runs.py)


@dataclass(frozen=True)
class ModelParams:
    """Everything that changes the model. Saved beside it; a mismatch means refit."""

    title_weight: float = 3.0
    notes_weight: float = 2.0
    transcript_weight: float = 1.0
    people_weight: float = 2.0  # persons of the feed and transcript speakers, one token per name
    links_weight: float = 0.0  # sites and projects linked from the show notes, one token each (0: off; see docs)
    mention_weight: float = 0.2  # "episode 159" in i's text: score = cos + w * (1 - cos) for the pair (0: off)
    min_df: int = 2
    max_df: float = 0.5
    field_sublinear: bool = True  # each field's counts become 1 + log(tf) before the weights (a transcript's
    #                               hundreds of mentions do not drown the title and notes); see docs
    title_phrases: bool = True  # a title's word pairs are terms too ("lightning_network"), at the title's weight
    title_cosine_weight: float = 0.2  # + this times the cosine of the titles alone (their own TF-IDF model;
    #                                   titles.py), the sum over 1 + it; 0: off. Learned with cross-validation
    sublinear_tf: bool = False  # 1 + log of the weighted sum (the round-2 model; off when field_sublinear)
    bm25_k1: float = 0.0  # > 0: BM25 saturation tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg)) instead
    bm25_b: float = 0.75
    max_features: int = 200_000
    max_terms_per_doc: int = 400  # keep each episode's strongest terms: less noise, faster products
    show_noise_df: float = 0.4  # a term in >= this share of one show's episodes ...
    show_noise_share: float = 0.8  # ... with >= this share of its documents in that show is show noise
    show_noise_min_episodes: int = 5
    show_idf: bool = True  # also weigh terms by their rarity inside the episode's own show
    lsa_components: int = 100  # 0: off; else blend an LSA (TruncatedSVD) cosine with the TF-IDF one:
    lsa_weight: float = 0.1  # score = (1 - w) * TF-IDF score + w * LSA cosine (learned with the title weight)
    prf_weight: float = 0.1  # the lists reranked (rerank.py): score mixes in this times the cosine of the rows
    prf_neighbours: int = 10  # expanded by the terms their first this many neighbours share (pseudo-relevance
    prf_alpha: float = 0.5  # feedback), at this weight; 0 weight: off
    cue_weight: float = 0.3  # ... and lifted by this times max(0, cue - score), cue: the best cosine of the
    cue_width: int = 30  # words either side of an "episode" in one episode's text with the other; 0: off
    guest_weight: float = 0.1  # i names a guest of an earlier j within guest_window words of an "episode": j
    guest_window: int = 15  # lifted in i's list to s + w * (1 - s) (guests.py; 0: off); a guest is in at
    guest_share: float = 0.2  # most this share of the show's episodes
    walk_weight: float = 0.1  # the lists' last stage (walk.py): a member's score mixes in this times the mass on
    walk_neighbours: int = 10  # it of a walk with restart over every list's first this many members,
    walk_alpha: float = 0.5  # going on at each step with this probability,
    walk_steps: int = 3  # for this many steps (over its largest); 0 weight: off
    window_weight: float = 0.2  # the best window_top episodes of its show that a cue window matches at a cosine of
    window_top: int = 3  # at least window_floor enter the episode's list at s + w * (1 - s) (0: off;
    window_floor: float = 0.15  # needs the cue windows, cue_weight > 0)
    reciprocal_weight: float = 0.0  # then a member's score mixes in this times the overlap of the two episodes'
    reciprocal_neighbours: int = 20  # k-reciprocal sets over every list's first this many (walk.py; 0 weight:
    reciprocal_expand: int = 6  # off), averaged over the episode and its first this many - 1 (twentieth round)
    neighbours: int = 50
    duplicate_threshold: float = 0.9
    block_rows: int = 512

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "model_version": MODEL_VERSION, "sklearn": sklearn.__version__,
                "podsearch": __version__}

