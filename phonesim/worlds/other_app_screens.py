"""Screens of other apps that Settings opens: the keyboard's own settings (Gboard) and TalkBack.

Some how-to goals sit on screens that no Settings resource describes, because another app
draws them: a keyboard's settings (reached from Languages & input > Virtual keyboard) and
the TalkBack service page (reached from Accessibility). :func:`add_other_app_screens`
adds them to a parsed :class:`UIMap` from the behaviour Google documents in its help
pages, the same way ``aosp_screens.py`` adds screens Settings builds in code: each
screen and row records its source (``built_from``), and the coverage report counts them.

What the help pages leave open (the initial value of each switch, the exact order) is the
stock default as those pages describe it: plausible, not a measurement of a OnePlus 8.
"""

from __future__ import annotations

from phonesim.worlds.uimap import MapElement, MapScreen, UIMap, Unresolved

__all__ = ["OTHER_APP_SOURCES", "add_other_app_screens", "is_other_app_screen"]

_S = "AOSP packages/apps/Settings (Android 11) "
SRC_KEYBOARD_ROW = (_S + "inputmethod/VirtualKeyboardFragment.java: one InputMethodPreference per enabled "
                    "keyboard under 'Available keyboard'; a tap opens the keyboard's own settings activity")
SRC_SERVICE_ROW = (_S + "accessibility/AccessibilitySettings.java: pre-installed screen readers "
                   "(config_preinstalled_screen_reader_services) are listed under 'Screen readers'; a tap opens "
                   "ToggleAccessibilityServicePreferenceFragment")
SRC_GBOARD = ("Google Gboard Help (support.google.com/gboard, 'Change your Gboard settings'): Gboard settings "
              "has Languages, Preferences, Theme, Text correction, Glide typing, Voice typing, Dictionary, Advanced")
SRC_GBOARD_CORRECTION = ("Google Gboard Help (support.google.com/gboard): Text correction: Suggestions (Show "
                         "suggestion strip, Next-word suggestions, Block offensive words) and Corrections "
                         "(Auto-correction, Auto-space after punctuation, Auto-capitalization, Double-space "
                         "period, Spell check)")
SRC_GBOARD_PREFS = ("Google Gboard Help (support.google.com/gboard): Preferences: Keys (Number row, Emoji switch "
                    "key, Language switch key) and Key press (Sound on keypress, Vibrate on keypress, Popup on "
                    "keypress, Long press for symbols)")
SRC_TALKBACK = ("Google Android Accessibility Help (support.google.com/accessibility/android, 'Turn TalkBack on "
                "or off'): Settings > Accessibility > TalkBack > Use TalkBack; turning it on asks 'Allow TalkBack "
                "to have full control of your device?' (Allow / Deny); turning it off asks 'Stop TalkBack?' (AOSP "
                "ToggleAccessibilityServicePreferenceFragment); the page's Settings row opens TalkBack settings")

OTHER_APP_SOURCES = (SRC_GBOARD, SRC_GBOARD_CORRECTION, SRC_GBOARD_PREFS, SRC_TALKBACK)

#: where the entry rows go: (screen, key of the element they follow)
KEYBOARD_SCREEN, KEYBOARD_AFTER = "virtual_keyboard_settings", "available_input_method"
ACCESSIBILITY_SCREEN, ACCESSIBILITY_AFTER = "accessibility_settings", "screen_reader_category"


def _switch(key: str, title: str, source: str, on: bool, summary: str = "", category: str = "") -> MapElement:
    return MapElement(key=key, kind="switch", title=title, summary=summary, default=on, built_from=source,
                      category=category, widget="SwitchPreference")


def _link(key: str, title: str, source: str, target: str = "", summary: str = "") -> MapElement:
    return MapElement(key=key, kind="link" if target else "pref", title=title, summary=summary,
                      target=target or None, built_from=source)


def _header(key: str, title: str) -> MapElement:
    return MapElement(key=key, kind="header", title=title, selectable=False)


def _gboard_screens() -> list[tuple[str, str, str, list[MapElement]]]:
    """(screen id, title, source, elements) of Gboard's settings, top page first."""
    sub = [("languages", "Languages"), ("preferences", "Preferences"), ("theme", "Theme"),
           ("text_correction", "Text correction"), ("glide", "Glide typing"), ("voice", "Voice typing"),
           ("dictionary", "Dictionary"), ("advanced", "Advanced")]
    top = [_link(f"gboard_{key}", title, SRC_GBOARD, f"gboard_{key}") for key, title in sub]
    sug, cor = "Suggestions", "Corrections"
    keys, press = "Keys", "Key press"
    return [
        ("gboard_settings", "Gboard settings", SRC_GBOARD, top),
        ("gboard_languages", "Languages", SRC_GBOARD,
         [_link("gboard_lang_en_us", "English (US)", SRC_GBOARD, summary="QWERTY"),
          _link("gboard_add_keyboard", "Add keyboard", SRC_GBOARD)]),
        ("gboard_preferences", "Preferences", SRC_GBOARD_PREFS,
         [_header("gboard_keys", keys),
          _switch("gboard_number_row", "Number row", SRC_GBOARD_PREFS, False, category=keys),
          _switch("gboard_emoji_switch_key", "Emoji switch key", SRC_GBOARD_PREFS, True, category=keys),
          _switch("gboard_language_switch_key", "Language switch key", SRC_GBOARD_PREFS, True, category=keys),
          _header("gboard_key_press", press),
          _switch("gboard_sound_on_keypress", "Sound on keypress", SRC_GBOARD_PREFS, False, category=press),
          _switch("gboard_vibrate_on_keypress", "Vibrate on keypress", SRC_GBOARD_PREFS, True, category=press),
          _switch("gboard_popup_on_keypress", "Popup on keypress", SRC_GBOARD_PREFS, True, category=press),
          _switch("gboard_long_press_symbols", "Long press for symbols", SRC_GBOARD_PREFS, False,
                  category=press)]),
        ("gboard_theme", "Theme", SRC_GBOARD,
         [MapElement(key=f"gboard_theme_{t.lower().replace(' ', '_')}", kind="radio", title=t, category="Theme",
                     default=(t == "System auto"), built_from=SRC_GBOARD)
          for t in ("System auto", "Light", "Dark")]),
        ("gboard_text_correction", "Text correction", SRC_GBOARD_CORRECTION,
         [_header("gboard_suggestions", sug),
          _switch("gboard_show_suggestion_strip", "Show suggestion strip", SRC_GBOARD_CORRECTION, True, category=sug),
          _switch("gboard_next_word_suggestions", "Next-word suggestions", SRC_GBOARD_CORRECTION, True, category=sug),
          _switch("gboard_block_offensive_words", "Block offensive words", SRC_GBOARD_CORRECTION, True,
                  category=sug),
          _header("gboard_corrections", cor),
          _switch("gboard_auto_correction", "Auto-correction", SRC_GBOARD_CORRECTION, True, category=cor),
          _switch("gboard_auto_space", "Auto-space after punctuation", SRC_GBOARD_CORRECTION, False, category=cor),
          _switch("gboard_auto_capitalization", "Auto-capitalization", SRC_GBOARD_CORRECTION, True, category=cor),
          _switch("gboard_double_space_period", "Double-space period", SRC_GBOARD_CORRECTION, True, category=cor),
          _switch("gboard_spell_check", "Spell check", SRC_GBOARD_CORRECTION, True, category=cor)]),
        ("gboard_glide", "Glide typing", SRC_GBOARD,
         [_switch("gboard_glide_typing", "Enable glide typing", SRC_GBOARD, True),
          _switch("gboard_glide_trail", "Show glide trail", SRC_GBOARD, True),
          _switch("gboard_gesture_delete", "Enable gesture delete", SRC_GBOARD, True),
          _switch("gboard_gesture_cursor", "Enable gesture cursor control", SRC_GBOARD, True)]),
        ("gboard_voice", "Voice typing", SRC_GBOARD,
         [_switch("gboard_use_voice_typing", "Use voice typing", SRC_GBOARD, True)]),
        ("gboard_dictionary", "Dictionary", SRC_GBOARD,
         [_link("gboard_personal_dictionary", "Personal dictionary", SRC_GBOARD),
          _link("gboard_delete_learned_words", "Delete learned words and data", SRC_GBOARD)]),
        ("gboard_advanced", "Advanced", SRC_GBOARD,
         [_switch("gboard_show_app_icon", "Show app icon", SRC_GBOARD, True),
          _switch("gboard_share_usage", "Share usage statistics", SRC_GBOARD, True)]),
    ]


def _talkback_screens() -> list[tuple[str, str, str, list[MapElement]]]:
    use = _switch("talkback_enabled", "Use TalkBack", SRC_TALKBACK, False)
    use.confirm = {"title": "Allow TalkBack to have full control of your device?",
                   "message": "TalkBack can read the screen and act on your behalf.",
                   "button": "Allow", "cancel": "Deny",
                   "off_title": "Stop TalkBack?", "off_message": "Tapping Stop will stop TalkBack.",
                   "off_button": "Stop"}
    settings = ["Text-to-speech settings", "Verbosity", "Sound and vibration", "Customize gestures",
                "Advanced settings"]
    return [
        ("talkback_service", "TalkBack", SRC_TALKBACK,
         [use, _link("talkback_settings_row", "Settings", SRC_TALKBACK, "talkback_settings"),
          MapElement(key="talkback_about", kind="text", built_from=SRC_TALKBACK,
                     title="TalkBack gives spoken feedback so that you can use your device without looking "
                           "at the screen.")]),
        ("talkback_settings", "TalkBack settings", SRC_TALKBACK,
         [_link(f"talkback_{t.lower().replace(' ', '_').replace('-', '_')}", t, SRC_TALKBACK) for t in settings]),
    ]


def add_other_app_screens(uimap: UIMap) -> None:
    """Add Gboard's and TalkBack's screens and the Settings rows that open them (when those screens exist)."""
    talkback = _link("talkback", "TalkBack", SRC_SERVICE_ROW, "talkback_service")
    talkback.summary_on, talkback.summary_off = "On", "Off"  # the service row shows its state
    entries = [(KEYBOARD_SCREEN, KEYBOARD_AFTER, _link("gboard_ime", "Gboard", SRC_KEYBOARD_ROW, "gboard_settings",
                                                       summary="English (US)"), _gboard_screens()),
               (ACCESSIBILITY_SCREEN, ACCESSIBILITY_AFTER, talkback, _talkback_screens())]
    for screen_id, after, row, screens in entries:
        host = uimap.screens.get(screen_id)
        if host is None:
            continue  # another app's Settings: nothing to attach to
        for sid, title, source, elements in screens:
            uimap.screens[sid] = MapScreen(id=sid, title=title, source=f"built: {source}", elements=elements,
                                           built_from=source)
        at = next((i + 1 for i, el in enumerate(host.elements) if el.key == after), len(host.elements))
        host.elements.insert(at, row)
        uimap.built_links.append(Unresolved(screen=screen_id, element=row.title,
                                            target="another app's activity (no Settings resource)",
                                            reason=row.built_from))


def is_other_app_screen(screen: MapScreen) -> bool:
    """A screen this module made (for the coverage report)."""
    return screen.built_from in OTHER_APP_SOURCES
