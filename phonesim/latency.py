"""Phone-like latency for the served simulator: how long each device operation takes.

A real phone is slow where the simulator is quick: ``uiautomator dump`` takes
about a second, ``input tap`` a few hundred milliseconds (it starts a Java
program), ``screencap`` a few hundred more. A served simulator with a
:class:`Latency` waits that long before it answers (a sleep, not CPU), so a
farm of served simulators is bound by waiting, as a farm of phones is, and
measures the scheduler and adb rather than the cores.

A spec is ``name=seconds`` pairs separated by commas, optionally starting with
a profile: ``dump=1.0,tap=0.3,screenshot=0.4`` or ``phone,dump=2``. Names:
:data:`OPERATIONS`; ``input`` sets ``tap``, ``swipe``, ``key`` and ``text`` at once.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Mapping, Optional

from verirank_core.errors import VerirankError

#: operation -> what it covers on the served device
OPERATIONS: dict[str, str] = {
    "dump": "uiautomator dump",
    "screenshot": "screencap",
    "tap": "input tap",
    "swipe": "input swipe / draganddrop (a long press too)",
    "key": "input keyevent",
    "text": "input text",
    "launch": "am start, monkey",
    "shell": "any other device tool: getprop, dumpsys, wm, settings, pm, cmd, am force-stop",
    "pull": "a file transfer (sync: pull, push, stat)",
}
#: names that set several operations
ALIASES: dict[str, tuple[str, ...]] = {"input": ("tap", "swipe", "key", "text")}
#: named starting points; figures a mid-range phone over USB gives (docs/adb.md, "Phone-like latency")
PROFILES: dict[str, dict[str, float]] = {
    "phone": {"dump": 1.0, "screenshot": 0.4, "tap": 0.3, "swipe": 0.5, "key": 0.3, "text": 0.4,
              "launch": 0.8, "shell": 0.05, "pull": 0.02},
    "none": {},
}
#: shell commands that are the shell's own (no Android tool starts): no delay
_BUILTINS = frozenset({"true", "false", "exit", "sleep", "echo", "id", "whoami", "cat", "rm", "ls", "grep"})
_INPUT = {"tap": "tap", "swipe": "swipe", "draganddrop": "swipe", "keyevent": "key", "text": "text"}
#: a delay longer than this is a typo, not a phone
MAX_SECONDS = 600.0


class LatencySpecError(VerirankError, ValueError):
    """A latency spec that names an unknown operation or gives a bad number."""


@dataclass(frozen=True)
class Latency:
    """Seconds each operation waits before the served device answers (missing: none)."""

    seconds: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: Optional[str]) -> "Latency":
        """``dump=1.0,tap=0.3`` (optionally after a profile name: ``phone,dump=2``); empty: none."""
        seconds: dict[str, float] = {}
        parts = [p.strip() for p in (spec or "").split(",") if p.strip()]
        for index, part in enumerate(parts):
            name, eq, value = (s.strip() for s in part.partition("="))
            if not eq:
                if index == 0 and name in PROFILES:
                    seconds.update(PROFILES[name])
                    continue
                raise LatencySpecError(
                    f"latency: {part!r} is not NAME=SECONDS"
                    + (f" (a profile, one of {', '.join(PROFILES)}, may only come first)" if index else
                       f" nor a profile ({', '.join(PROFILES)})"))
            targets = ALIASES.get(name) or ((name,) if name in OPERATIONS else ())
            if not targets:
                raise LatencySpecError(f"latency: unknown operation {name!r}; use "
                                       f"{', '.join(list(OPERATIONS) + list(ALIASES))}")
            try:
                delay = float(value)
            except ValueError:
                raise LatencySpecError(f"latency: {name}={value!r} is not a number of seconds") from None
            if not math.isfinite(delay) or not 0 <= delay <= MAX_SECONDS:
                raise LatencySpecError(f"latency: {name}={value} must be between 0 and {MAX_SECONDS:g} seconds")
            for target in targets:
                seconds[target] = delay
        return cls({k: v for k, v in seconds.items() if v > 0})

    def scaled(self, factor: float) -> "Latency":
        """Every delay times ``factor`` (quick runs of a benchmark)."""
        return Latency({k: v * factor for k, v in self.seconds.items() if v * factor > 0})

    def __bool__(self) -> bool:
        return bool(self.seconds)

    def describe(self) -> str:
        return ",".join(f"{k}={v:g}" for k, v in self.seconds.items()) or "none"

    def of_command(self, argv: list[str]) -> float:
        """The delay of one shell command (``argv[0]`` without ``/system/bin/``)."""
        return self.seconds.get(operation_of(argv) or "", 0.0) if self.seconds else 0.0

    def wait(self, operation: Optional[str]) -> None:
        """Sleep for ``operation``'s delay: the device is busy, the CPU is not."""
        delay = self.seconds.get(operation or "", 0.0)
        if delay > 0:
            time.sleep(delay)


def operation_of(argv: list[str]) -> Optional[str]:
    """Which :data:`OPERATIONS` a shell command is; None for the shell's own commands."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    if name in _BUILTINS:
        return None
    if name == "uiautomator":
        return "dump"
    if name == "screencap":
        return "screenshot"
    if name == "monkey" or (name == "am" and argv[1:2] in (["start"], ["start-activity"])):
        return "launch"
    if name == "input":
        for word in argv[1:]:  # after an optional source and -d DISPLAY
            if word in _INPUT:
                return _INPUT[word]
        return "shell"
    return "shell"
