"""Every pluggable part resolves through one Registry, and the config accepts exactly its names."""

from __future__ import annotations

import typing

import pytest

from verirank_core.config import load_config
from verirank_core.errors import ConfigError, DeviceError
from verirank_core.registry import Registry


def _literal(model, field: str) -> list[str]:
    return sorted(typing.get_args(model.model_fields[field].annotation))


def test_the_config_accepts_exactly_the_registered_names():
    from execution.judge import JUDGES
    from execution.predict import PREDICTORS
    from extraction.pipeline import EXTRACTORS
    from ranking.models.base import LEARNED_MODELS, model_names
    from verirank_core.execution_config import ExecutionConfig
    from verirank_core.extraction_config import ExtractConfig
    from verirank_core.ranking_config import RankingConfig

    assert _literal(ExecutionConfig, "predictor") == PREDICTORS.names()
    assert _literal(ExecutionConfig, "judge") == JUDGES.names()
    assert _literal(ExtractConfig, "extractor") == EXTRACTORS.names()
    assert _literal(RankingConfig, "model") == sorted(LEARNED_MODELS)
    assert set(LEARNED_MODELS) <= set(model_names())


@pytest.mark.parametrize("override, valid", [
    ("execution.predictor=oracle", "'heuristic' or 'llm'"),
    ("execution.judge=oracle", "'heuristic' or 'llm'"),
    ("extraction.extract.extractor=magic", "'heuristic' or 'llm'"),
    ("ranking.model=svm", "'lr'"),
])
def test_an_unknown_name_fails_at_config_load_listing_the_valid_ones(override, valid):
    from verirank_core.config import parse_override

    with pytest.raises(ConfigError, match="must be one of") as err:
        load_config(overrides=[parse_override(override)], use_default_file=False)
    assert valid in str(err.value)


def test_every_registry_is_a_registry_and_lookups_fail_alike():
    from execution.devices import DEVICE_KINDS, open_device
    from execution.judge import JUDGES
    from execution.predict import PREDICTORS
    from extraction.pipeline import EXTRACTORS
    from ranking.models.base import _REGISTRY

    for registry in (DEVICE_KINDS, JUDGES, PREDICTORS, EXTRACTORS, _REGISTRY):
        assert isinstance(registry, Registry)
        with pytest.raises(ConfigError, match=f"unknown {registry.kind} 'nope'; valid: "):
            registry.lookup("nope")
    with pytest.raises(DeviceError, match="unknown device kind 'usb'"):
        open_device("usb:1234")
