"""Turn UI steps into the instruction sentences How-to pages are made of.

Three registers:

* ``plain``: one short imperative per step, as help centres write them
  ("Tap «Display».");
* ``paraphrased``: varied verbs and openers ("Head over to «Display»",
  "Next, flip the toggle beside «Dark mode»");
* ``breadcrumb``: the leading taps folded into one breadcrumb
  ("Go to «Settings» > «Display» > «Dark mode».").

UI labels are wrapped in «guillemets»; the page templates turn them into
``<strong>``, quotes or plain text. Everything is drawn from the ``random.Random``
passed in, so a seed fixes the wording.
"""

from __future__ import annotations

import random
from typing import Sequence

from howtobench.tasks import Step

__all__ = ["REGISTERS", "render_steps", "mark"]

REGISTERS = ("plain", "paraphrased", "breadcrumb")


def mark(label: str) -> str:
    return f"«{label}»"


_PLAIN = {
    "launch": ["Open the {L} app.", "Open {L}."],
    "tap": ["Tap {L}."],
    "toggle": ["Tap the switch next to {L}."],
    "pick": ["Select {L}."],
    "press": ["Tap {L}."],
    "type": ["Type {T}."],
    "enter": ["Press Enter on the keyboard."],
    "back": ["Go back to the previous screen."],
}

_PARAPHRASED = {
    "launch": ["Launch the {L} app on your phone.", "First, open {L}.", "Start by opening the {L} app.",
               "Unlock your phone and open {L}."],
    "tap": ["Go to {L}.", "Head over to {L}.", "Select {L}.", "Tap on {L}.", "Navigate to {L}.",
            "Scroll down and tap {L}.", "Next, open {L}.", "Find and tap {L}.", "Now choose {L}.",
            "Click on {L}."],
    "toggle": ["Flip the toggle beside {L}.", "Toggle {L}.", "Use the switch next to {L}.",
               "Tap the {L} toggle to change it.", "Switch {L} by tapping the toggle on the right."],
    "pick": ["Choose {L}.", "Pick {L} from the list.", "Set it to {L}.", "Select the {L} option.",
             "Tap {L} in the list of options."],
    "press": ["Hit the {L} button.", "Press {L}.", "Tap the {L} button."],
    "type": ["Enter {T} in the box.", "Type in {T}.", "Write {T} in the text field."],
    "enter": ["Hit Enter.", "Confirm with the Enter key."],
    "back": ["Go back one screen.", "Press the back button."],
}


def _sentence(step: Step, templates: dict[str, list[str]], rng: random.Random) -> str:
    template = rng.choice(templates[step.op])
    return template.format(L=mark(step.label), T=f"«{step.text}»")


def render_steps(steps: Sequence[Step], register: str, rng: random.Random) -> list[str]:
    """One sentence per step (``breadcrumb`` folds the leading launch and taps into one)."""
    if register not in REGISTERS:
        raise ValueError(f"unknown register {register!r} (registers: {', '.join(REGISTERS)})")
    if register == "plain":
        return [_sentence(s, _PLAIN, rng) for s in steps]
    if register == "paraphrased":
        return [_sentence(s, _PARAPHRASED, rng) for s in steps]
    # breadcrumb: "Go to «Settings» > «Display» > «Screen timeout»." then the rest
    crumbs: list[Step] = []
    rest = list(steps)
    while rest and rest[0].op in ("launch", "tap") and (len(rest) > 1 or not crumbs):
        crumbs.append(rest.pop(0))
    if len(crumbs) < 2:
        return [_sentence(s, _PARAPHRASED, rng) for s in steps]
    trail = " > ".join(mark(s.label) for s in crumbs)
    opener = rng.choice(["Go to {T}.", "Open {T}.", "Navigate to {T}.", "Head to {T}."])
    return [opener.format(T=trail), *(_sentence(s, _PARAPHRASED, rng) for s in rest)]
