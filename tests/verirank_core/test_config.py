"""Config loading: defaults, YAML files, overrides, and errors that name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from verirank_core.config import load_config, parse_override
from verirank_core.errors import ConfigError


def test_defaults_load_from_the_bundled_yaml() -> None:
    cfg = load_config()
    assert cfg.extraction.ground.rouge_threshold == 0.7
    assert cfg.extraction.ground.distance_threshold == 0.25
    assert cfg.extraction.fetch.allow_private_hosts is False
    assert cfg.execution.max_steps == 28


def test_yaml_file_then_override_precedence(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text("extraction:\n  fetch:\n    workers: 3\n    retries: 1\n")
    cfg = load_config([f], [parse_override("extraction.fetch.workers=5")])
    assert cfg.extraction.fetch.workers == 5  # override beats file
    assert cfg.extraction.fetch.retries == 1  # file beats default


def test_override_values_are_yaml_typed() -> None:
    assert parse_override("a.b=true") == {"a": {"b": True}}
    assert parse_override("a=0.5") == {"a": 0.5}
    assert parse_override("a.b=[1, 2]") == {"a": {"b": [1, 2]}}
    with pytest.raises(ConfigError, match="section.key=value"):
        parse_override("novalue")


def test_unknown_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"extraction.fetch.wrokers: unknown setting"):
        load_config(overrides=[parse_override("extraction.fetch.wrokers=3")])


def test_bad_choice_lists_valid_names() -> None:
    with pytest.raises(ConfigError, match=r"extraction.extract.extractor: must be one of .*heuristic.*llm"):
        load_config(overrides=[parse_override("extraction.extract.extractor=gpt")])


def test_out_of_range_value_is_named() -> None:
    with pytest.raises(ConfigError, match=r"extraction.fetch.workers"):
        load_config(overrides=[parse_override("extraction.fetch.workers=0")])


def test_broken_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("extraction: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config([bad])
    with pytest.raises(ConfigError, match="does not exist"):
        load_config([tmp_path / "missing.yaml"])


def test_manifest_form_holds_no_secret_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-very-secret-123")
    cfg = load_config()
    assert "sk-test-very-secret-123" not in str(cfg.to_manifest())
    assert cfg.to_manifest()["llm"]["api_key_env"] == "OPENAI_API_KEY"
