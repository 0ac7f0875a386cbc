"""Folding a catalog's added episodes into the saved model instead of refitting (docs/similar.md,
"Incremental updates")."""

from __future__ import annotations

import logging
import pickle
import time

from ..catalog import Catalog
from ..errors import IndexMissing
from ..generations import Generations
from .fields import episode_texts, hashes_digest
from .model import SimilarModel
from .params import ModelParams
from .persist import same_params, saved_params

log = logging.getLogger(__name__)

# Added episodes are folded into the saved model (no refit) while the episodes folded in since the last full
# fit, these included, are at most this share of the episodes that fit saw; past it (or on any removal or
# change of an episode, or of the parameters) the model is refitted. See docs/similar.md, "Incremental updates".
FOLD_IN_SHARE = 0.05


def fold_in_catalog(generations: Generations, catalog: Catalog, params: ModelParams,
                    share: float = FOLD_IN_SHARE, hashes: dict[str, str] | None = None) -> SimilarModel | None:
    """The saved model with the catalog's added episodes folded in (:meth:`SimilarModel.fold_in`), not saved;
    or None when the model must be refitted: other parameters or versions, an episode removed or changed,
    nothing added, too many folded in since the last fit (``share``), or a save without what fold-in needs.
    ``hashes`` is the catalog's :meth:`~podsearch.catalog.Catalog.hashes` when the caller has read them."""
    saved = saved_params(generations)
    if not saved or not same_params(saved, params):
        return None
    hashes = catalog.hashes() if hashes is None else hashes
    try:
        model = SimilarModel.load(generations)
    except (IndexMissing, OSError, ValueError, KeyError, pickle.UnpicklingError) as exc:
        log.info("similar model: refit (the saved model does not load: %s)", exc)
        return None
    known = set(model.ids)
    if not known <= hashes.keys() or hashes_digest({i: hashes[i] for i in model.ids}) != model.digest:
        log.info("similar model: refit (episodes were removed or changed)")
        return None
    added = sorted(hashes.keys() - known)
    folded = model.folded + len(added)
    if not added or folded > share * (len(model.ids) - model.folded):
        log.info("similar model: refit (%d episodes to fold in, %d since the fit, limit %.0f%% of %d)", len(added),
                 folded, share * 100, len(model.ids) - model.folded)
        return None
    if not model.can_fold_in():
        log.info("similar model: refit (the saved model predates fold-in)")
        return None
    log.info("reindex: folding %d new episodes into the similarity model", len(added))
    started = time.perf_counter()
    folded_model = model.fold_in(episode_texts(catalog, added), hashes_digest(hashes))
    log.info("folded %d episodes into the similar model (%d since the fit) in %.1fs", len(added), folded,
             time.perf_counter() - started)
    return folded_model
