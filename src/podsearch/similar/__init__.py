"""The "nearby episodes" model: weighted TF-IDF over title, show notes and transcript.

Fitted at reindex from the catalog; neighbours of every episode are precomputed blockwise on sparse
matrices (never a dense N x N matrix), so that ``/similar/<id>`` is a lookup. Saved in
``<data>/model/<generation>/`` with its parameters and versions; refitted when they change. A few added
episodes are *folded in* (:meth:`SimilarModel.fold_in`) instead: weighed with the saved vocabulary and
weights, their neighbours computed against all the rows, until :data:`FOLD_IN_SHARE` calls for a refit.

One module per concern, each importing only those before it in this list:

- ``signals``: label-free link signals read from the text (episode mentions, title phrases, link tokens);
- ``params``: :class:`ModelParams` and :data:`MODEL_VERSION`;
- ``fields``: what the model reads of each episode (:func:`episode_texts`), the catalog digest;
- ``features``: term counts, every field weighted, in one tokenising pass (:func:`weighted_counts`);
- ``weighting``: stop words, show noise, per-show IDF, TF-IDF, term cap (:class:`Weighting`), LSA;
- ``titles``: the titles' own small model, whose cosine is added to the main one;
- ``neighbours``: the precomputed neighbour lists (:func:`top_neighbours`, :func:`fold_neighbours`);
- ``rerank``: the lists reordered by pseudo-relevance feedback and cue windows (the words around "episode");
- ``guests``: another episode's guest named in those words (a round-up's "the one with Carl Johnson");
- ``walk``: the lists' last stage, a short walk over them and the episodes of its show a cue window names by topic
  (and, an option off by default, the overlap of two episodes' reciprocal neighbours);
- ``reasons``: why two episodes are near;
- ``persist``: the model on disk, its saved parameters (:func:`same_params`);
- ``model``: :class:`SimilarModel` (fit, fold in, answer) and :class:`Neighbour`;
- ``foldin``: :func:`fold_in_catalog`, a catalog's added episodes folded into the saved model.
"""

# fold_lower is named here because models saved before the split pickled it as podsearch.similar.fold_lower
# (the vectorizer's preprocessor): without the name they fail to load.
from .features import fold_lower, weighted_counts
from .fields import EpisodeFields, episode_texts, hashes_digest, person_token
from .foldin import FOLD_IN_SHARE, fold_in_catalog
from .model import Neighbour, SimilarModel
from .neighbours import CANDIDATES, EXACT_LIMIT, PRUNE_TERMS, fold_neighbours, top_neighbours
from .params import MODEL_VERSION, ModelParams
from .persist import same_params
from .signals import terms

__all__ = ["CANDIDATES", "EXACT_LIMIT", "FOLD_IN_SHARE", "MODEL_VERSION", "PRUNE_TERMS",
           "EpisodeFields", "ModelParams", "Neighbour", "SimilarModel", "episode_texts",
           "fold_in_catalog", "fold_lower", "fold_neighbours", "hashes_digest", "person_token", "same_params", "terms",
           "top_neighbours", "weighted_counts"]
