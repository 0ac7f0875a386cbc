"""A model on disk: ``<data>/model/<generation>/`` holds its matrices, vectorizer and weights, with its
parameters and versions (``params.json``); a model saved by another version does not load (refit)."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn

from ..errors import PERMISSION_ADVICE, DataUnreadable, IndexMissing
from ..generations import Generations
from .guests import Guests
from .params import MODEL_VERSION, ModelParams
from .runs import Runs
from .titles import TitleModel
from .weighting import ShowFreqs, Weighting


def save(model: Any, generations: Generations) -> Path:
    """Write ``model`` (a :class:`~podsearch.similar.model.SimilarModel`) as a new generation and publish it."""
    path = generations.new()
    sp.save_npz(path / "matrix.npz", model.matrix, compressed=False)
    np.save(path / "neigh_idx.npy", model.neigh_idx)
    np.save(path / "neigh_score.npy", model.neigh_score)
    if model.dense is not None:
        np.save(path / "dense.npy", model.dense)
    if model.repeats is not None:
        np.save(path / "repeats.npy", model.repeats)
    if model.mentions is not None:
        sp.save_npz(path / "mentions.npz", model.mentions, compressed=False)
    if model.window_links is not None:
        sp.save_npz(path / "window_links.npz", model.window_links, compressed=False)
    if model.runs is not None and model.in_runs is not None:  # (runs.py)
        np.save(path / "runs.npy", model.runs.hashes)
        sp.save_npz(path / "in_runs.npz", model.in_runs, compressed=False)
    if model.guests is not None:
        (path / "guests.json").write_text(json.dumps(model.guests.to_json()), encoding="utf-8")
    cues = model.cues
    if cues is not None:  # for fold-in only (rerank.py)
        sp.save_npz(path / "cues.npz", cues[0], compressed=False)
        np.save(path / "cue_owner.npy", cues[1])
    with open(path / "vectorizer.pkl", "wb") as fh:
        pickle.dump({"vectorizer": model.vectorizer, "transformer": model.transformer, "noise": model.noise,
                     "svd": model.svd, "mean_length": model.weighting.mean_length}, fh,
                    protocol=pickle.HIGHEST_PROTOCOL)
    if model.titles is not None:
        sp.save_npz(path / "titles.npz", model.titles.matrix, compressed=False)
        with open(path / "titles.pkl", "wb") as fh:
            pickle.dump({"vectorizer": model.titles.vectorizer, "weighting": model.titles.weighting}, fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
    freqs = model.weighting.show_freqs if model.weighting.show_freqs is not None else load_show_freqs(model.path)
    if freqs is not None:
        sp.save_npz(path / "show_df.npz", freqs.df, compressed=False)
        (path / "show_df.json").write_text(json.dumps({"shows": freqs.shows, "sizes": freqs.sizes}), encoding="utf-8")
    (path / "ids.json").write_text(json.dumps({"ids": model.ids, "shows": model.shows, "numbers": model.numbers,
                                               "person_names": model.person_names,
                                               "show_titles": model.show_titles, "prints": model.prints,
                                               "given_names": model.given_names, "notes": model.notes}),
                                   encoding="utf-8")
    # Each file's size, so that a file cut short (a full disk, a restore cut short) is found without reading it:
    # a reindex that would leave the model unchanged refits it instead (:func:`damage`).
    files = {f.name: f.stat().st_size for f in sorted(path.iterdir()) if f.is_file()}
    (path / "params.json").write_text(json.dumps({**model.params.to_dict(), "digest": model.digest,
                                                  "folded": model.folded, "files": files}, indent=1))
    return generations.publish(path)


OTHER_VERSION = "The similarity model was built by another version; run 'podsearch reindex'."


def same_version(meta: dict[str, Any]) -> bool:
    """Whether a saved model's ``params.json`` is of this model version and this scikit-learn (else it is refitted)."""
    return meta.get("model_version") == MODEL_VERSION and meta.get("sklearn") == sklearn.__version__


def health(generations: Generations) -> str:
    """What keeps the current model from being used, without reading it (for ``podsearch stats``): "" when it looks
    whole (or there is none yet), else the reason and what to do. Damage at a file's own size is not seen here."""
    path = generations.current()
    if path is None:
        return ""
    try:
        (path / "params.json").open("rb").close()
    except PermissionError as exc:  # (not damage: a reindex does not mend it)
        return f"The similarity model in {path} cannot be read ({exc}); {PERMISSION_ADVICE}."
    except OSError:
        pass
    meta = saved_params(generations)
    if meta is None:
        return f"The similarity model in {path} cannot be read (params.json); run 'podsearch reindex' to refit it."
    if not same_version(meta):
        return OTHER_VERSION
    wrong = damage(generations)
    return f"The similarity model in {path} cannot be read ({wrong}); run 'podsearch reindex' to refit it." if wrong else ""


def damage(generations: Generations) -> str:
    """What is wrong with the current model's files by their sizes ("vectorizer.pkl has 5,000 bytes of the 9,102,311
    saved"), or "" (none found, no model, or one saved before sizes were kept). Cheap: a stat per file."""
    path = generations.current()
    meta = saved_params(generations) if path is not None else None
    for name, size in ((meta or {}).get("files") or {}).items():
        try:
            found = (path / name).stat().st_size  # type: ignore[operator]
        except OSError:
            return f"{name} is missing"
        if found != size:
            return f"{name} has {found:,} bytes of the {size:,} saved"
    return ""


# What reading a damaged or truncated model file raises (numpy and scipy: ValueError, EOFError, BadZipFile; pickle:
# UnpicklingError, EOFError; a file gone or unreadable: OSError; a part missing from a pickle or JSON: KeyError ...).
UNREADABLE = (OSError, ValueError, EOFError, KeyError, IndexError, TypeError, AttributeError, pickle.UnpicklingError,
              zipfile.BadZipFile)


def load_parts(generations: Generations) -> dict[str, Any]:
    """The current generation's model, as the keyword arguments of :class:`~podsearch.similar.model.SimilarModel`.

    IndexMissing when there is none or it was built by another version; DataUnreadable (an IndexMissing: the server
    starts and searches without it) when one of its files cannot be read, naming the folder and what to do."""
    path = generations.current()
    if path is None:
        raise IndexMissing(f"No similarity model in {generations.root.parent}. Run 'podsearch reindex' first.")
    public = "The similarity model cannot be read; the server's log says why."
    wrong = damage(generations)
    if wrong:  # a file cut short: a plain reindex refits the model (the scheduled one too)
        raise DataUnreadable(f"The similarity model in {path} cannot be read ({wrong}); run 'podsearch reindex' "
                             "to refit it.", public)
    try:
        return _read_parts(path)
    except UNREADABLE as exc:  # (until 5 December 2026 a truncated vectorizer.pkl kept `serve` from starting)
        todo = (f"{PERMISSION_ADVICE}." if isinstance(exc, PermissionError)  # (until 6 December 2026 "rebuild it")
                else "run 'podsearch reindex --full' to rebuild it.")
        raise DataUnreadable(f"The similarity model in {path} cannot be read ({type(exc).__name__}: {exc}); {todo}",
                             public) from None


def _read_parts(path: Path) -> dict[str, Any]:
    meta = json.loads((path / "params.json").read_text())
    if not same_version(meta):
        raise IndexMissing(OTHER_VERSION)
    known = ModelParams.__dataclass_fields__
    params = ModelParams(**{k: v for k, v in meta.items() if k in known})
    with open(path / "vectorizer.pkl", "rb") as fh:
        parts = pickle.load(fh)  # our own file, written by save() above
    ids = json.loads((path / "ids.json").read_text(encoding="utf-8"))
    weighting = Weighting(params, parts["vectorizer"].vocabulary_, parts["transformer"], parts["noise"],
                          mean_length=parts.get("mean_length"))
    titles = None
    if (path / "titles.npz").exists():
        with open(path / "titles.pkl", "rb") as fh:
            title_parts = pickle.load(fh)  # our own file, written by save() above
        titles = TitleModel(title_parts["vectorizer"], title_parts["weighting"], sp.load_npz(path / "titles.npz").tocsr())
    return dict(params=params, ids=ids["ids"], shows=ids["shows"], vectorizer=parts["vectorizer"],
                transformer=parts["transformer"], matrix=sp.load_npz(path / "matrix.npz").tocsr(),
                noise=parts["noise"], neigh_idx=np.load(path / "neigh_idx.npy"),
                neigh_score=np.load(path / "neigh_score.npy"), digest=meta.get("digest", ""), svd=parts.get("svd"),
                dense=np.load(path / "dense.npy") if (path / "dense.npy").exists() else None,
                mentions=sp.load_npz(path / "mentions.npz").tocsr() if (path / "mentions.npz").exists() else None,
                numbers=ids.get("numbers"), weighting=weighting, folded=int(meta.get("folded", 0)), path=path,
                titles=titles, person_names=ids.get("person_names"), show_titles=ids.get("show_titles"),
                prints=ids.get("prints"), given_names=ids.get("given_names"), notes=ids.get("notes"),
                repeats=np.load(path / "repeats.npy") if (path / "repeats.npy").exists() else None,
                runs=Runs(np.load(path / "runs.npy")) if (path / "runs.npy").exists() else None,
                in_runs=sp.load_npz(path / "in_runs.npz").tocsr() if (path / "in_runs.npz").exists() else None,
                window_links=(sp.load_npz(path / "window_links.npz").tocsr()
                              if (path / "window_links.npz").exists() else None),
                guests=Guests.from_json(json.loads((path / "guests.json").read_text(encoding="utf-8")))
                if (path / "guests.json").exists() else None)


def saved_params(generations: Generations) -> dict[str, Any] | None:
    path = generations.current()
    if path is None:
        return None
    try:
        return json.loads((path / "params.json").read_text())
    except (OSError, ValueError):
        return None


def same_params(saved: dict[str, Any], params: ModelParams) -> bool:
    """Whether a saved model's parameters (:func:`saved_params`) are ``params``, whatever it was
    fitted on (``digest``) and however many episodes were folded in since."""
    return {k: v for k, v in saved.items() if k not in ("digest", "folded", "files")} == params.to_dict()


def load_show_freqs(path: Path | None) -> ShowFreqs | None:
    """The per-show document frequencies saved with the model at ``path`` (only fold-in reads them)."""
    if path is None or not (path / "show_df.npz").exists():
        return None
    meta = json.loads((path / "show_df.json").read_text(encoding="utf-8"))
    return ShowFreqs(meta["shows"], meta["sizes"], sp.load_npz(path / "show_df.npz").tocsr())


def load_cues(path: Path | None) -> tuple[sp.csr_matrix, np.ndarray] | None:
    """The weighed cue windows of a saved model and their episodes (rerank.py; fold-in only), or None."""
    if path is None or not (path / "cues.npz").exists():
        return None
    return sp.load_npz(path / "cues.npz").tocsr(), np.load(path / "cue_owner.npy")
