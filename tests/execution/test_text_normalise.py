"""One text normalisation for the matcher, the judge and the world importers, tested on real strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from execution.predict.match import Matcher, lexical_score
from execution.predict.steps import parse_step
from phonesim.device import SimDevice
from execution.uicontext import UIContext
from phonesim.worlds.apk_map import StringTable, parse_apk
from phonesim.worlds.apk_world import build_apk_world
from phonesim.worlds.uimap import normalise_label
from verirank_core.text import fold_unicode, normalise

PACKAGE = "com.android.settings"


@pytest.mark.parametrize("raw, folded", [
    ("Wi\u2011Fi hotspot", "Wi-Fi hotspot"),          # non-breaking hyphen (OnePlus)
    ("Wi\u2010Fi", "Wi-Fi"), ("Wi\u2012Fi", "Wi-Fi"), ("A\u2013B", "A-B"), ("A\u2014B", "A-B"), ("5\u22123", "5-3"),
    ("Sound\u00a0&\u202fvibration", "Sound & vibration"),   # NBSP, narrow NBSP
    ("Dark\u2009mode", "Dark mode"),                 # thin space
    ("\u201cDark mode\u201d", '"Dark mode"'), ("Don\u2019t", "Don't"),
    ("More\u2026", "More..."),
    ("Blue\u200btooth\ufeff", "Bluetooth"),          # zero-width space, BOM
])
def test_fold_unicode(raw, folded):
    assert fold_unicode(raw) == folded


def test_normalise_is_case_and_ampersand_blind():
    assert normalise("Sound & Vibration") == normalise("sound and vibration") == "sound and vibration"
    assert normalise("Wi\u2011Fi") == normalise("WI-FI") == normalise("wifi")


@pytest.mark.parametrize("target, label", [
    ("Wi-Fi hotspot", "Wi\u2011Fi hotspot"),
    ("notification", "Notifications"),
    ("Apps and notifications", "Apps & notifications"),
    ("battery saver", "Battery Saver"),
])
def test_matcher_equality_ignores_variants(target, label):
    assert lexical_score(target, label) == 1.0


@pytest.fixture(scope="module")
def oneplus(shared_dir: Path):
    uimap = parse_apk(shared_dir / "apps" / "oneplus-settings-android11")
    return uimap, build_apk_world(uimap, name="oneplus-settings-android11")[1]


def test_every_oneplus_string_with_a_unicode_hyphen_matches_its_ascii_spelling(shared_dir: Path):
    table = StringTable.load(shared_dir / "apps" / "oneplus-settings-android11" / "res" / "values")
    odd = [s for s in table.strings.values() if "\u2011" in s and len(s) < 60]
    assert len(odd) >= 20  # OnePlus writes Wi‑Fi with U+2011 throughout
    for s in odd:
        ascii_spelling = s.replace("\u2011", "-").replace("\u2019", "'")
        assert lexical_score(ascii_spelling, s) == 1.0, s


def test_the_importer_keeps_the_phone_text_and_compares_it_folded(oneplus):
    uimap, _ = oneplus
    found = uimap.find("Wi-Fi hotspot")
    assert found and found[0][1].title == "Wi\u2011Fi hotspot"  # the display text is the phone's
    assert normalise_label("Wi\u2011Fi\u00a0hotspot") == "wi-fi hotspot"


@pytest.mark.parametrize("step, label", [
    ("Turn off Don't use Wi-Fi hotspot", "Don\u2019t use Wi\u2011Fi hotspot"),  # U+2019 and U+2011
    ("Tap on Wi-Fi 6 standard hotspot", "Wi\u2011Fi 6 standard hotspot"),
])
def test_ascii_steps_match_the_oneplus_rows_on_the_imported_world(oneplus, step, label):
    uimap, world = oneplus
    sid = next(sid for sid, el in uimap.find(label) if el.kind != "header")
    device = SimDevice(world)
    device.reset(PACKAGE)
    device.simulator.open_screen(sid)
    ui = UIContext.from_xml(device.dump_xml())
    intent = parse_step(step)[-1]
    match = Matcher(use_embeddings=False).best(intent.target, ui.controls, threshold=0.9)
    assert match is not None and match.score == 1.0
    assert match.control.label == label


def test_the_judge_reads_screens_through_the_same_normalisation():
    from execution.goal_check import Screen
    from execution.judge import _shows

    screen = Screen(controls=[], title="Hotspot & tethering", signature="",
                    texts=["Don\u2019t use Wi\u2011Fi\u00a0hotspot"])
    assert _shows(screen, "Don't use Wi-Fi hotspot")
    assert not _shows(screen, "Bluetooth tethering")
