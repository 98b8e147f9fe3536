"""The verified-page rule and the verification summary."""

from __future__ import annotations

import typing

import pytest

import support_ranking_runs as runs
from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason
from verirank_core.ranking_config import VerifiedRuleConfig
from ranking.verified import RULES, facts_from_execution, is_verified, summarize, verified_map
from verirank_core.config import load_config
from verirank_core.errors import ConfigError


def _exe(**kw) -> ExecutionResult:
    base = dict(qid="q", url="u", rank=1, status=ExecutionStatus.EXECUTED, n_actions=2, f4=0.5,
                n_instructions=4, stop_reason=StopReason.COMPLETED)
    base.update(kw)
    return ExecutionResult(**base)


def test_default_rule_needs_execution_an_action_and_positive_f4():
    assert is_verified(_exe())
    assert not is_verified(None)
    assert not is_verified(_exe(status=ExecutionStatus.SKIPPED))
    assert not is_verified(_exe(status=ExecutionStatus.DEVICE_FAILED, f4=0.9, n_actions=3))
    assert not is_verified(_exe(n_actions=0))
    assert not is_verified(_exe(f4=0.0))  # strict: F4 must be > 0
    assert is_verified(_exe(n_actions=1, f4=0.01))


def test_thresholds_are_configurable():
    cfg = VerifiedRuleConfig(min_f4=0.5, min_actions=3)
    assert not is_verified(_exe(f4=0.5, n_actions=5), cfg)  # 0.5 is not > 0.5
    assert not is_verified(_exe(f4=0.8, n_actions=2), cfg)
    assert is_verified(_exe(f4=0.8, n_actions=3), cfg)


def test_completed_rule_also_needs_every_step_acted_on():
    cfg = VerifiedRuleConfig(rule="completed")
    assert is_verified(_exe(stop_reason=StopReason.COMPLETED), cfg)
    assert not is_verified(_exe(stop_reason=StopReason.NO_ACTION), cfg)
    assert not is_verified(_exe(stop_reason=StopReason.COMPLETED, f4=0.0), cfg)


def test_require_execution_off_still_needs_actions():
    cfg = VerifiedRuleConfig(require_execution=False, min_actions=0)
    # a non-executed page has f4 = 0 by definition, so it still fails "f4 > 0"
    assert not is_verified(None, cfg)
    assert facts_from_execution(_exe(status=ExecutionStatus.SKIPPED, f4=0.7)).f4 == 0.0


def test_rule_registry_matches_the_config_choices():
    choices = typing.get_args(VerifiedRuleConfig.model_fields["rule"].annotation)
    assert set(choices) == set(RULES)
    with pytest.raises(ConfigError, match="ranking.verified.rule"):
        load_config(overrides=[{"ranking": {"verified": {"rule": "always"}}}])


def test_verified_map_covers_every_key():
    executions = {("q", "u"): _exe()}
    assert verified_map(executions, [("q", "u"), ("q", "other")]) == {("q", "u"): True, ("q", "other"): False}


def test_summaries():
    _, _, exe, _, _ = runs.worked_example_records()
    assert summarize(exe, True) == "verified on android13-settings v13: 3/4 steps, no_action"
    assert summarize(exe, False).startswith("not verified on android13-settings v13")
    # no per-step detail: round(f4 * n_instructions) steps
    assert summarize(_exe(world="w", os_version=None, f4=0.5, judge_detail=[]), True) == \
        "verified on w: 2/4 steps, completed"
    assert summarize(None, False) == "not executed"
    assert summarize(_exe(status=ExecutionStatus.SKIPPED, reason="no steps extracted"), False) == \
        "not executed: no steps extracted"
    assert summarize(_exe(status=ExecutionStatus.DEVICE_FAILED, reason="adb: device offline"), False) == \
        "not executed: device failed (adb: device offline)"
