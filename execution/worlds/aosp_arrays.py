"""Stock Android (AOSP) option arrays, for list preferences whose arrays a decode left empty.

apktool writes some string arrays of a vendor Settings APK as empty placeholders
(the OnePlus decode's ``arrays.xml`` has ``screen_timeout_entries`` and dozens more
without items), so "Sleep" would open with no options. A vendor build keeps the
AOSP arrays it does not override, so for the *same array name* we take the stock
Android 11 values. Only arrays whose stock values we are sure of are listed;
vendor-only arrays (OnePlus ``hardware_keys_action_entries``, ...) are left empty
and stay in the coverage report. Every use is recorded in the world as the
option source.

Sources (Android 11, android-11.0.0_r1):

* ``Settings``: ``packages/apps/Settings/res/values/arrays.xml``
* ``SettingsLib``: ``frameworks/base/packages/SettingsLib/res/values/arrays.xml``
  (developer-option arrays, shared by Settings)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["StockArray", "STOCK_ARRAYS", "stock_array"]

SETTINGS = "AOSP packages/apps/Settings res/values/arrays.xml (Android 11)"
SETTINGSLIB = "AOSP frameworks/base/packages/SettingsLib res/values/arrays.xml (Android 11)"


@dataclass(frozen=True)
class StockArray:
    #: what the user sees, in order
    entries: tuple[str, ...]
    #: the stored values (android:entryValues), same order; empty when not needed
    values: tuple[str, ...] = ()
    source: str = SETTINGS


_ANIMATION = ("Animation off", "Animation scale .5x", "Animation scale 1x", "Animation scale 1.5x",
              "Animation scale 2x", "Animation scale 5x", "Animation scale 10x")
_ANIMATION_VALUES = ("0", ".5", "1", "1.5", "2", "5", "10")

#: array name -> stock entries; the entries array's name (android:entries) is the key
STOCK_ARRAYS: dict[str, StockArray] = {
    # Display > Sleep (screen timeout), in milliseconds
    "screen_timeout_entries": StockArray(
        ("15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes", "30 minutes"),
        ("15000", "30000", "60000", "120000", "300000", "600000", "1800000")),
    # Security > Screen lock > Automatically lock
    "lock_after_timeout_entries": StockArray(
        ("Immediately", "5 seconds", "15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes",
         "10 minutes", "30 minutes"),
        ("0", "5000", "15000", "30000", "60000", "120000", "300000", "600000", "1800000")),
    # Accessibility > Touch & hold delay
    "long_press_timeout_selector_titles": StockArray(("Short", "Medium", "Long"), ("400", "1000", "1500")),
    # Wi-Fi network details
    "wifi_metered_entries": StockArray(("Detect automatically", "Treat as metered", "Treat as unmetered"),
                                       ("0", "1", "2")),
    "wifi_privacy_entries": StockArray(("Use randomized MAC (default)", "Use device MAC"), ("1", "0")),
    # Accessibility > Caption preferences
    "captioning_font_size_selector_titles": StockArray(("Very small", "Small", "Default", "Large", "Very large"),
                                                       ("0.25", "0.5", "1.0", "1.5", "2.0")),
    "captioning_typeface_selector_titles": StockArray(
        ("Default", "Sans-serif", "Sans-serif condensed", "Sans-serif monospace", "Serif", "Serif monospace",
         "Casual", "Cursive", "Small capitals")),
    # Mobile network > Access point names > edit
    "apn_auth_entries": StockArray(("None", "PAP", "CHAP", "PAP or CHAP"), ("0", "1", "2", "3")),
    "apn_protocol_entries": StockArray(("IPv4", "IPv6", "IPv4/IPv6"), ("IP", "IPV6", "IPV4V6")),
    "mvno_type_entries": StockArray(("None", "SPN", "IMSI", "GID"), ("", "spn", "imsi", "gid")),
    # Storage > Storage manager > Remove photos & videos
    "automatic_storage_management_days": StockArray(
        ("Over 30 days old", "Over 60 days old", "Over 90 days old"), ("30", "60", "90")),
    # Developer options
    "autofill_logging_level_entries": StockArray(("Off", "Debug", "Verbose")),
    "cached_apps_freezer_entries": StockArray(("Device default", "Disabled", "Enabled"),
                                              ("device_default", "disabled", "enabled")),
    "window_animation_scale_entries": StockArray(_ANIMATION, _ANIMATION_VALUES, SETTINGSLIB),
    "transition_animation_scale_entries": StockArray(_ANIMATION, _ANIMATION_VALUES, SETTINGSLIB),
    "animator_duration_scale_entries": StockArray(_ANIMATION, _ANIMATION_VALUES, SETTINGSLIB),
    "hdcp_checking_titles": StockArray(("Never check", "Check for DRM content only", "Always check"),
                                       ("never", "drm-only", "always"), SETTINGSLIB),
    "app_process_limit_entries": StockArray(
        ("Standard limit", "No background processes", "At most 1 process", "At most 2 processes",
         "At most 3 processes", "At most 4 processes"), ("-1", "0", "1", "2", "3", "4"), SETTINGSLIB),
    "debug_hw_overdraw_entries": StockArray(("Off", "Show overdraw areas", "Show areas for Deuteranomaly"),
                                            ("", "show", "show_deuteranomaly"), SETTINGSLIB),
    "track_frame_time_entries": StockArray(("Off", "On screen as bars", "In adb shell dumpsys gfxinfo"),
                                           ("false", "visual_bars", "true"), SETTINGSLIB),
    "show_non_rect_clip_entries": StockArray(
        ("Off", "Draw non-rectangular clip region in blue", "Highlight tested drawing commands in green"),
        ("hide", "region", "highlight"), SETTINGSLIB),
    "simulate_color_space_entries": StockArray(
        ("Disabled", "Monochromacy", "Deuteranomaly (red-green)", "Protanomaly (red-green)",
         "Tritanomaly (blue-yellow)"), ("-1", "0", "2", "1", "3"), SETTINGSLIB),
}


def stock_array(ref: Optional[str]) -> Optional[StockArray]:
    """The stock array for ``@array/name`` (or ``name``), if we know it."""
    if not ref:
        return None
    return STOCK_ARRAYS.get(ref.split("/", 1)[-1])
