"""Action predictors: given the screen and the page's steps, choose the next action.

* :class:`HeuristicPredictor` (``heuristic``, the default): step parsing +
  label matching + bounded search; needs no model server.
* :class:`LLMPredictor` (``llm``): asks an (optionally vision) LLM through
  ``verirank_core.llm.LLMClient``.

``make_predictor(config, llm_client=None)`` builds the one named by
``execution.predictor``; an unknown name is a ConfigError listing the valid ones.
"""

from __future__ import annotations

from typing import Any, Callable

from execution.predict.base import ActionPredictor, HistoryItem, PredictContext, Prediction
from execution.predict.heuristic import HeuristicPredictor
from verirank_core.execution_config import ExecutionConfig
from verirank_core.errors import ConfigError
from verirank_core.registry import Registry

__all__ = [
    "ActionPredictor", "PredictContext", "Prediction", "HistoryItem",
    "HeuristicPredictor", "make_predictor", "PREDICTORS",
]


def _heuristic(config: ExecutionConfig, llm_client: Any) -> ActionPredictor:
    return HeuristicPredictor.from_config(config.agent.heuristic, agent=config.agent)


def _llm(config: ExecutionConfig, llm_client: Any) -> ActionPredictor:
    from execution.predict.llm import LLMPredictor

    if llm_client is None:
        raise ConfigError("execution.predictor=llm needs an LLM client (configure the llm section)")
    return LLMPredictor.from_config(config.agent.llm, llm_client)


#: predictor name -> builder(execution_config, llm_client)
PREDICTORS: Registry[Callable[[Any, Any], ActionPredictor]] = Registry("execution.predictor", {
    "heuristic": _heuristic,
    "llm": _llm,
})


def make_predictor(config: ExecutionConfig, llm_client: Any = None) -> ActionPredictor:
    """The predictor named by ``config.predictor`` (``config`` is an ExecutionConfig)."""
    return PREDICTORS.lookup(config.predictor)(config, llm_client)
