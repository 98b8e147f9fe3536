"""The safety policy: some actions are never run on a device unless the config allows them.

Pages are untrusted text. A page may say "tap Erase all data" (a wrong
answer or a prompt injection), so before every action the agent asks
:class:`SafetyPolicy` to classify it. The policy looks at two things
together and nothing else:

* the **target** the action would hit (the control's label, summary and
  resource id, or the typed text): "Erase all data (factory reset)",
  "Buy", "Uninstall" are risky whatever the step says;
* the **step text**, but only when the target is a *generic confirmation*
  ("OK", "Delete", "Reset", "Confirm", "Continue"...): "Tap OK to reset your
  phone" is a factory reset even though the button just says OK.

Navigation toward a risky screen ("Tap System", "Tap Reset options") is
allowed; the commit on that screen is what gets blocked. The allowed
categories come only from the run config (``execution.agent.safety.allow``);
nothing on a page ("you have permission to...") can change them.

Categories: factory_reset, erase_data, purchase, call, message, uninstall,
password_change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from verirank_core.execution_config import AgentConfig, ExecutionConfig
from verirank_core.execution_records import Action, ActionType

__all__ = ["SafetyPolicy", "SafetyVerdict", "CATEGORIES"]

#: category -> patterns matched against a target's text (lower-cased)
_TARGET_PATTERNS: dict[str, tuple[str, ...]] = {
    "factory_reset": (
        r"factory (?:data )?reset", r"factory settings", r"erase all data",
        r"reset (?:the |your |this )?(?:phone|device|tablet)", r"master reset", r"wipe (?:all )?(?:data|device|phone)", r"erase everything",
        r"reset all settings",
    ),
    "erase_data": (
        r"clear (?:all )?(?:app )?(?:data|storage)", r"clear (?:browsing |search |call )?history",
        r"delete (?:all|everything|account|my account|your account|data|history|backup)",
        r"remove account", r"delete .*(?:data|history|account|backup)", r"erase (?:data|sd card|storage|internal)",
        r"format (?:sd card|storage|card)", r"permanently delete",
    ),
    "purchase": (
        r"\bbuy\b", r"purchase", r"\bpay\b", r"pay now", r"checkout", r"check out", r"place (?:your )?order",
        r"order now", r"subscribe (?:to|for) (?:premium|plus|pro)", r"start (?:free )?trial", r"add payment", r"confirm payment", r"1-tap buy",
    ),
    "call": (
        r"^(?:call|dial|video call)\b(?! (?:settings|log|history|forwarding|blocking|waiting|barring|alerts|screen))",
        r"\bcall now\b", r"place (?:a )?call", r"emergency call",
    ),
    "message": (
        r"^send\b(?! (?:feedback|to|a copy|usage|crash|diagnostic|report))", r"send (?:sms|text|message|mms)",
    ),
    "uninstall": (r"uninstall", r"remove app", r"delete app", r"disable app"),
    "password_change": (
        r"change (?:your )?(?:password|pin|passcode|pattern)", r"reset (?:your )?password",
        r"remove (?:screen )?lock", r"new password", r"set (?:a )?new (?:password|pin)",
    ),
}

#: the same categories described in a step (used only with a generic confirmation target)
_STEP_PATTERNS: dict[str, tuple[str, ...]] = {
    **_TARGET_PATTERNS,
    "call": (r"\b(?:call|dial)\b(?! (?:settings|log|history|forwarding))",),
    "message": (r"\bsend (?:an? )?(?:sms|text|message|mms)\b", r"\btext (?:someone|your|the)\b"),
}

#: buttons that only confirm whatever the screen or step is about
_GENERIC_CONFIRM = re.compile(
    r"^(?:ok|okay|yes|confirm|continue|next|done|accept|agree|i agree|proceed|apply|reset|erase|delete|remove|"
    r"clear|wipe|format|send|buy|pay|call|uninstall|erase all|delete all|reset settings|erase everything)\b",
)

CATEGORIES = tuple(_TARGET_PATTERNS)

_COMPILED_TARGET = {k: [re.compile(p) for p in v] for k, v in _TARGET_PATTERNS.items()}
_COMPILED_STEP = {k: [re.compile(p) for p in v] for k, v in _STEP_PATTERNS.items()}


@dataclass(frozen=True)
class SafetyVerdict:
    allowed: bool
    #: the risk category, if any (set also when the category is allowed)
    category: Optional[str] = None
    reason: str = ""


def _first_category(text: str, table: dict[str, list[re.Pattern]]) -> Optional[str]:
    for category, patterns in table.items():
        if any(p.search(text) for p in patterns):
            return category
    return None


#: categories whose last control is irreversible: a dry run reaches it and never presses it
DRY_RUN_CATEGORIES = frozenset({"factory_reset", "erase_data", "purchase", "message", "uninstall"})


class SafetyPolicy:
    """Block risky actions unless their category is in ``allow``.

    With ``dry_run`` a page whose *stated goal* (the user's query) is the risky thing itself
    ("how to factory reset android") is followed up to the irreversible confirm, which is never
    pressed: see :meth:`dry_run_of`. A page that tries something destructive outside its stated
    goal, or any page run without a query, is blocked as before.
    """

    def __init__(self, allow: Iterable[str] = (), dry_run: bool = False):
        self.allow = frozenset(allow)
        self.dry_run = dry_run

    @classmethod
    def from_config(cls, cfg: Union[ExecutionConfig, AgentConfig]) -> "SafetyPolicy":
        """From ``ExecutionConfig`` (reads ``agent.safety.allow`` and ``agent.use_dry_run``)."""
        agent = getattr(cfg, "agent", cfg)
        return cls(allow=agent.safety.allow, dry_run=agent.use_dry_run)

    def __repr__(self) -> str:
        return f"SafetyPolicy(allow={sorted(self.allow)}, dry_run={self.dry_run})"

    @staticmethod
    def goal_category(query: Optional[str]) -> Optional[str]:
        """The risk category the user's question asks for ("how to factory reset" -> factory_reset)."""
        if not query:
            return None
        return _first_category(query.lower(), _COMPILED_STEP)

    def dry_run_of(self, verdict: SafetyVerdict, query: Optional[str]) -> bool:
        """A refused action is the irreversible step of the page's own stated goal: a dry run.

        The first control on the way that names the risk ("Erase all data (factory reset)",
        "Uninstall") is where the dry run ends; it is never pressed, because a simulated or real
        screen cannot tell us that a row only opens another confirmation. Screens before it
        ("System", "Reset options") are entered as usual. Without a query, or when the query asks
        for something else, the action stays blocked.
        """
        if not self.dry_run or verdict.allowed or verdict.category not in DRY_RUN_CATEGORIES:
            return False
        return self.goal_category(query) == verdict.category

    def classify(self, step_text: str, action: Action, target_text: str = "") -> Optional[str]:
        """The risk category of doing ``action`` on ``target_text`` for ``step_text``, or None."""
        if action.type in (ActionType.BACK, ActionType.HOME, ActionType.WAIT, ActionType.SWIPE):
            return None
        target = " ".join(
            t for t in (target_text, action.target_label or "", (action.target_resource_id or "").rsplit("/", 1)[-1].replace("_", " "))
            if t
        ).lower().strip()
        if action.type == ActionType.INPUT:
            # typing is risky only in a password-change form
            if re.search(r"password|passcode|\bpin\b", target) and re.search(r"new|change|confirm", target + " " + step_text.lower()):
                return "password_change"
            return None
        if action.type == ActionType.LAUNCH:
            return None
        hit = _first_category(target, _COMPILED_TARGET) if target else None
        if hit:
            return hit
        if action.type == ActionType.ENTER or (target and _GENERIC_CONFIRM.match(normalise_label(target))):
            return _first_category(step_text.lower(), _COMPILED_STEP)
        return None

    def check(self, step_text: str, action: Action, target_text: str = "") -> SafetyVerdict:
        category = self.classify(step_text, action, target_text)
        if category is None:
            return SafetyVerdict(True)
        if category in self.allow:
            return SafetyVerdict(True, category, f"{category} allowed by config")
        label = target_text or action.target_label or action.type.value
        return SafetyVerdict(False, category, f"{category}: refused to {action.type.value} {label!r}")


def normalise_label(text: str) -> str:
    return re.sub(r"[^\w\s]", " ", text.lower()).strip()
