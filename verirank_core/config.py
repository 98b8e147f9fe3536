"""One typed run config, parsed once by the CLI and passed down.

A config is built from, in order of precedence (last wins):

1. the defaults in each stage's ``config.py``;
2. YAML files (``configs/default.yaml`` and any ``--config`` files);
3. ``--set section.key=value`` overrides and dedicated CLI flags.

No other module reads settings from files or environment variables; the LLM
section names the environment variable that holds the API key, never the key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from verirank_core.execution_config import ExecutionConfig
from verirank_core.extraction_config import ExtractionConfig
from verirank_core.ranking_config import RankingConfig
from verirank_core.errors import ConfigError
from verirank_core.json_types import JSONObject, JSONValue
from verirank_core.resources import DEFAULT_CONFIG

__all__ = ["LLMConfig", "RunConfig", "load_config", "parse_override", "DEFAULT_CONFIG"]



class LLMConfig(BaseModel):
    """An OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp...)."""

    model_config = ConfigDict(extra="forbid")

    #: ``None`` means the official OpenAI endpoint
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    #: name of the environment variable that holds the key (the key itself is never stored)
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = Field(60.0, gt=0)
    #: extra attempts after output that fails JSON-schema validation
    max_retries: int = Field(2, ge=0, le=10)
    #: SQLite response cache; relative paths are resolved against the working directory
    cache_path: str | None = ".cache/verirank/llm-cache.sqlite"


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llm: LLMConfig = LLMConfig()
    extraction: ExtractionConfig = ExtractionConfig()
    execution: ExecutionConfig = ExecutionConfig()
    ranking: RankingConfig = RankingConfig()

    def to_manifest(self) -> JSONObject:
        """The resolved config as plain JSON (holds no secrets by construction)."""
        return json.loads(self.model_dump_json())


def _deep_merge(base: JSONObject, extra: Mapping[str, JSONValue]) -> JSONObject:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_override(text: str) -> JSONObject:
    """Turn ``a.b.c=value`` into ``{"a": {"b": {"c": value}}}``; value is YAML."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like section.key=value")
    path, raw = text.split("=", 1)
    parts = [p for p in path.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"override {text!r} has an empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        raise ConfigError(f"override {text!r}: value is not valid YAML ({exc})") from exc
    node: JSONObject = {parts[-1]: value}
    for part in reversed(parts[:-1]):
        node = {part: node}
    return node


def _read_yaml(path: Path) -> JSONObject:
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


def _explain(exc: ValidationError, source: str) -> str:
    lines = [f"invalid configuration ({source}):"]
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown setting"
        elif err["type"] == "literal_error":
            msg = f"must be one of {err.get('ctx', {}).get('expected', '')}"
        lines.append(f"  {loc}: {msg} (got {err.get('input')!r})")
    return "\n".join(lines)


def load_config(
    files: list[Path] | None = None,
    overrides: list[Mapping[str, JSONValue]] | None = None,
    use_default_file: bool = True,
) -> RunConfig:
    """Merge YAML files and overrides onto the defaults and validate once."""
    data: JSONObject = {}
    sources = []
    paths = ([DEFAULT_CONFIG] if use_default_file and DEFAULT_CONFIG.exists() else []) + list(files or [])
    for path in paths:
        data = _deep_merge(data, _read_yaml(path))
        sources.append(str(path))
    for extra in overrides or []:
        data = _deep_merge(data, extra)
    if overrides:
        sources.append("command-line overrides")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, ", ".join(sources) or "defaults")) from exc
