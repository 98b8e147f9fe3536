"""The verified-page rule, and a one-line verification summary per page.

A page is *verified* when running its steps showed they work. The default
rule (``threshold``, as in the paper) says: the page reached execution
(``ExecutionResult.status == "executed"``), at least ``min_actions`` (1)
actions were executed, and the judge's completion degree F4 is strictly
greater than ``min_f4`` (0).

Rules are looked up by name in :data:`RULES`; each takes the
:class:`VerificationFacts` of a page (drawn from its execution record only,
never from ground truth) and the :class:`VerifiedRuleConfig`. The
``completed`` rule adds "the agent acted on every step" (stop reason
``completed``) to the threshold rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional

from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason
from verirank_core.ranking_config import VerifiedRuleConfig
from verirank_core.errors import ConfigError

__all__ = [
    "VerificationFacts", "RULES", "facts_from_execution", "is_verified", "verify_facts",
    "verified_map", "device_label", "reused_label", "summarize",
]


@dataclass(frozen=True)
class VerificationFacts:
    """What the rules may look at: execution outcome only, never ground truth."""

    executed: bool
    n_actions: int
    f4: float
    stop_reason: str = ""


def facts_from_execution(execution: Optional[ExecutionResult]) -> VerificationFacts:
    """Facts of a page; a page without an execution record was not executed."""
    if execution is None:
        return VerificationFacts(executed=False, n_actions=0, f4=0.0)
    executed = execution.status == ExecutionStatus.EXECUTED
    return VerificationFacts(
        executed=executed,
        n_actions=execution.n_actions if executed else 0,
        f4=min(1.0, max(0.0, float(execution.f4))) if executed else 0.0,
        stop_reason=execution.stop_reason.value if execution.stop_reason else "",
    )


def _threshold(facts: VerificationFacts, cfg: VerifiedRuleConfig) -> bool:
    if cfg.require_execution and not facts.executed:
        return False
    return facts.n_actions >= cfg.min_actions and facts.f4 > cfg.min_f4


def _completed(facts: VerificationFacts, cfg: VerifiedRuleConfig) -> bool:
    return _threshold(facts, cfg) and facts.stop_reason == StopReason.COMPLETED.value


#: rule name -> rule; the names are the values ``VerifiedRuleConfig.rule`` accepts
RULES: dict[str, Callable[[VerificationFacts, VerifiedRuleConfig], bool]] = {
    "threshold": _threshold,
    "completed": _completed,
}


def verify_facts(facts: VerificationFacts, cfg: VerifiedRuleConfig | None = None) -> bool:
    """Apply the configured rule to a page's facts."""
    cfg = cfg or VerifiedRuleConfig()
    try:
        rule = RULES[cfg.rule]
    except KeyError:
        raise ConfigError(f"unknown verified rule {cfg.rule!r}; valid rules: {', '.join(RULES)}") from None
    return bool(rule(facts, cfg))


def is_verified(execution: Optional[ExecutionResult], cfg: VerifiedRuleConfig | None = None) -> bool:
    """True when the page's execution record satisfies the configured rule."""
    return verify_facts(facts_from_execution(execution), cfg)


def verified_map(
    executions: Mapping[tuple, ExecutionResult], keys: Iterable[tuple], cfg: VerifiedRuleConfig | None = None
) -> dict[tuple, bool]:
    """(qid, url) -> verified, for every key (a key without execution record is unverified)."""
    return {key: is_verified(executions.get(key), cfg) for key in keys}


def _acted_steps(execution: ExecutionResult) -> int:
    if execution.judge_detail:
        return sum(1 for d in execution.judge_detail if d.get("acted"))
    # no per-step detail: F4 is the completed fraction of the instruction steps
    return round(execution.f4 * execution.n_instructions)


def device_label(execution: ExecutionResult) -> str:
    """Where a page ran: a simulator world by name (``android13-settings v13``), a phone by what it
    said about itself (``KB2003 (serial 1a2b3c, Android 11, com.android.settings 11.0.5)``)."""
    if execution.world:
        version = execution.os_version or execution.app_version
        return execution.world + (f" v{version}" if version else "")
    facts = []
    if execution.device_serial:
        facts.append(f"serial {execution.device_serial}")
    if execution.os_version:
        facts.append(f"Android {execution.os_version}")
    if execution.app_version:
        facts.append(f"{execution.app or 'app'} {execution.app_version}")
    name = execution.device_model or execution.device or "device"
    return name + (f" ({', '.join(facts)})" if facts else "")


def reused_label(execution: ExecutionResult) -> str:
    """Where and when a verdict from the verdict cache was made, e.g. ``OnePlus IN2013, Android 11,
    com.android.settings 11, on 2026-11-18`` (a simulator adds its world: ``Pixel 6 (world w)``)."""
    name = execution.device_model or execution.device or "device"
    if execution.world:
        name += f" (world {execution.world})"
    facts = [name]
    if execution.os_version:
        facts.append(f"Android {execution.os_version}")
    if execution.app_version:
        facts.append(f"{execution.app or 'app'} {execution.app_version}")
    return ", ".join(facts) + f", on {(execution.verified_at or '')[:10]}"


def summarize(execution: Optional[ExecutionResult], verified: bool) -> str:
    """A short human-readable line, e.g. ``verified on android13-settings v13: 4/4 steps, completed``."""
    if execution is None:
        return "not executed"
    if execution.status == ExecutionStatus.SKIPPED:
        return "not executed: " + (execution.reason or "no steps extracted")
    if execution.status == ExecutionStatus.DEVICE_FAILED:
        return "not executed: device failed" + (f" ({execution.reason})" if execution.reason else "")
    stop = execution.stop_reason.value if execution.stop_reason else "stopped"
    head = "verified" if verified else "not verified"
    where = reused_label(execution) if execution.reused and execution.verified_at else device_label(execution)
    return f"{head} on {where}: {_acted_steps(execution)}/{execution.n_instructions} steps, {stop}"
