"""Learning-to-rank models behind one estimator contract (see ``base.py``).

``make_model(name, **params)`` builds any registered ranker; heavy libraries
(torch, LightGBM) are imported only when a model that needs them is built.
"""

from ranking.models.base import LEARNED_MODELS, EvalSet, Ranker, load_ranker, make_model, model_names
from ranking.models.data import load_ltr_data, query_slates, split_by_query

__all__ = [
    "Ranker", "EvalSet", "make_model", "model_names", "load_ranker", "LEARNED_MODELS",
    "split_by_query", "query_slates", "load_ltr_data",
]
