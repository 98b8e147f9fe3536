"""The simulated phone's settings provider (what ``adb shell settings`` reads and writes).

A real phone keeps its settings in three tables, ``system``, ``secure`` and
``global``. The simulator exposes each of its world's state variables as a
``system`` setting named after the variable (``dark_theme=1``), so a page that
flips a switch changes a setting that ``settings list system`` shows, exactly
the kind of change that outlives ``am force-stop`` on a phone. Keys that a
client ``put``s and that are not world variables are kept as plain strings in
their table, as Android does.

Values are text on the wire: a ``bool`` is ``1``/``0``, an ``int`` its digits,
a ``choice``/``text`` its string. ``delete`` of a world variable returns it to
the world's initial value (the app then reads its default).
"""

from __future__ import annotations

from phonesim.expr import Value
from phonesim.world import VarSpec, value_problem

__all__ = ["NAMESPACES", "WORLD_NAMESPACE", "encode", "decode"]

NAMESPACES = ("system", "secure", "global")
#: the table that holds the world's state variables
WORLD_NAMESPACE = "system"


def encode(spec: VarSpec, value: Value) -> str:
    """A state value as the text ``settings get`` prints."""
    if spec.type == "bool":
        return "1" if value else "0"
    return str(value)


def decode(spec: VarSpec, text: str) -> Value:
    """The state value for ``settings put`` text; ``ValueError`` when the variable cannot hold it."""
    value: Value = text
    if spec.type == "bool":
        lowered = text.strip().lower()
        if lowered not in ("1", "0", "true", "false"):
            raise ValueError(f"{text!r} is not 1/0/true/false")
        value = lowered in ("1", "true")
    elif spec.type == "int":
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"{text!r} is not an integer") from None
    problem = value_problem(spec, value)
    if problem:
        raise ValueError(problem)
    return value
