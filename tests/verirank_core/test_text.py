"""The one tokeniser every stage reads words with, pinned on real strings.

Labels are read from the real OnePlus Settings resources (../shared/apps/), where
"Wi‑Fi" carries a non-breaking hyphen and "&" is spelt as an entity.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verirank_core.text import stem, terms, words

STRINGS = Path(__file__).resolve().parents[3] / "shared" / "apps" / "oneplus-settings-android11" / "res" / "values" / "strings.xml"


def _label(name: str) -> str:
    for node in ET.parse(STRINGS).getroot().iter("string"):
        if node.get("name") == name:
            return "".join(node.itertext())
    raise KeyError(name)


def test_real_labels_read_the_same_as_a_page_spells_them():
    assert terms(_label("app_and_notification_dashboard_title")) == terms("apps and notification")
    assert terms(_label("adb_pairing_device_dialog_pairing_code_label")) == terms("WiFi pairing codes")
    assert words(_label("account_dashboard_title")) == ["accounts"]


@pytest.mark.parametrize("word, stemmed", [
    ("batteries", "battery"), ("battery", "battery"), ("settings", "setting"), ("apps", "app"),
    ("notifications", "notification"), ("accounts", "account"),
    # not plurals: left alone
    ("access", "access"), ("status", "status"), ("this", "this"), ("gps", "gps"), ("bus", "bus"),
    # no -ing/-ed folding: these labels differ on the phone
    ("calling", "calling"), ("pinned", "pinned"),
])
def test_stem_folds_plurals_only(word, stemmed):
    assert stem(word) == stemmed


def test_words_fold_unicode_hyphens_ampersands_and_case():
    assert words("Wi\u2011Fi & Network") == words("wi-fi and network") == ["wifi", "and", "network"]
    assert words("Sound\u00a0&\u202fvibration") == ["sound", "and", "vibration"]
    assert terms("Tap \u201cBatteries\u201d.") == ["tap", "battery"]
