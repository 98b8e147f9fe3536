"""Which platform and phone maker a text names, and which one a query asks about.

Shared by stage 1 (which records the platform and maker a page states for its
steps: ``Extraction.stated_platform`` / ``stated_device``) and stage 3 (which
turns them into ranking features). A page's platform is evidence, never a
reason to skip it: the device decides whether its steps work.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["PLATFORM_WORDS", "BRAND_WORDS", "COMPUTER_WORDS", "platform_of", "brand_of", "wanted_platform", "wanted_brand",
           "stated_match"]

PLATFORM_WORDS: dict[str, tuple[str, ...]] = {
    "ios": ("iphone", "ipad", "ios", "ipados", "apple"),
    "android": ("android", "pixel", "samsung", "galaxy", "oneplus", "xiaomi", "motorola", "huawei", "oppo",
                "gboard", "oxygenos", "one ui"),
}

#: a computer, where a help page's step may be done instead of on the phone ("On your Mac, ...",
#: "Open Smart Switch on your computer"): a regex alternation, read by stage 1 and stage 2
COMPUTER_WORDS = r"mac(?:book)?|computer|pc|windows(?:\s+(?:pc|computer|laptop))?|chromebook|desktop|laptop"

#: Android makers whose menus differ: a Samsung page does not answer a Pixel question
BRAND_WORDS: dict[str, tuple[str, ...]] = {
    "samsung": ("samsung", "galaxy", "one ui"),
    "pixel": ("pixel", "stock android"),
    "oneplus": ("oneplus", "oxygenos"),
    "xiaomi": ("xiaomi", "redmi", "miui", "hyperos", "poco"),
    "motorola": ("motorola", "moto"),
    "huawei": ("huawei", "emui"),
    "oppo": ("oppo", "coloros", "realme"),
}


def _named(text: str, vocabulary: dict[str, tuple[str, ...]]) -> Optional[str]:
    low = " " + text.lower() + " "
    found = {k for k, words in vocabulary.items() if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words)}
    return found.pop() if len(found) == 1 else None  # two named: a comparison, no single platform


def platform_of(text: str) -> Optional[str]:
    """"ios" or "android" when the text names exactly one of them ("On your iPhone"), else None."""
    return _named(text, PLATFORM_WORDS)


def brand_of(text: str) -> Optional[str]:
    """The one phone maker the text names ("samsung", "pixel", ...), else None."""
    return _named(text, BRAND_WORDS)


def wanted_platform(query: str, device: str = "", app: str = "", run_device: str = "",
                    default: str = "android") -> str:
    """The platform a user asks about: from the query's device, its app, its text, then the run's device."""
    for text in (device, app, query, run_device):
        found = platform_of(text or "")
        if found:
            return found
    return default


def wanted_brand(query: str, device: str = "", app: str = "", run_device: str = "") -> tuple[Optional[str], str]:
    """The phone maker a user asks about and where it came from ("query", "device", "app", "run device")."""
    for text, source in ((query, "query"), (device, "device"), (app, "app")):
        found = brand_of(text or "")
        if found:
            return found, source
    # the run's device speaks only when the query names no device and no platform
    if not device and not platform_of(query):
        found = brand_of(run_device)
        if found:
            return found, "run device"
    return None, ""


def stated_match(stated: Optional[str], wanted: Optional[str]) -> float:
    """1 when the page states what the user asks about, 0 when it states something else, 0.5 when
    either side is unknown (most pages name no platform)."""
    if not stated or not wanted:
        return 0.5
    return 1.0 if stated == wanted else 0.0
