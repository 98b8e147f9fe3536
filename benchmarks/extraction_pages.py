"""Synthetic how-to pages for the stage-1 benchmark and the bundled demo.

Each :data:`TOPICS` entry is one Android task (query, Android steps, iPhone
steps, a menu path); each style in :data:`STYLES` renders a topic as a page
in the manner of the hand-written fixtures in ``tests/fixtures/pages/``
(help centre, blog with step headings, forum answer, platform listicle, menu
path, instruction paragraphs) or as a page without the topic's steps (news,
video, unrelated list). ``render(topic, style, seed)`` returns the HTML and
whether the page holds the steps, so benchmarks can report recall and false
extractions as well as speed.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass
from typing import Callable

__all__ = ["Topic", "TOPICS", "STYLES", "POSITIVE_STYLES", "render"]


@dataclass(frozen=True)
class Topic:
    key: str
    query: str
    #: title phrase, e.g. "turn on dark theme"
    task: str
    steps: tuple[str, ...]
    ios_steps: tuple[str, ...]
    path: tuple[str, ...]


def _t(key, query, task, steps, ios, path) -> Topic:
    return Topic(key, query, task, tuple(steps), tuple(ios), tuple(path))


TOPICS: list[Topic] = [
    _t("dark", "how to turn on dark mode on android", "turn on dark theme",
       ["Open the Settings app.", "Tap Display.", "Turn on Dark theme."],
       ["Open Settings.", "Tap Display & Brightness.", "Select Dark."], ["Settings", "Display", "Dark theme"]),
    _t("rotate", "how to turn off auto-rotate on android", "turn off auto-rotate",
       ["Open the Settings app.", "Tap Display.", "Turn off Auto-rotate screen."],
       ["Open Control Center.", "Tap the Portrait Orientation Lock button."], ["Settings", "Display", "Auto-rotate screen"]),
    _t("timeout", "how to change the screen timeout on android", "change the screen timeout",
       ["Open the Settings app.", "Tap Display.", "Tap Screen timeout.", "Choose how long to wait, for example 5 minutes."],
       ["Open Settings.", "Tap Display & Brightness.", "Tap Auto-Lock and pick a time."],
       ["Settings", "Display", "Screen timeout"]),
    _t("battery", "how to turn on battery saver on android", "turn on Battery Saver",
       ["Open the Settings app.", "Tap Battery.", "Tap Battery Saver.", "Turn on Use Battery Saver."],
       ["Open Settings.", "Tap Battery.", "Turn on Low Power Mode."], ["Settings", "Battery", "Battery Saver"]),
    _t("wifi", "how to forget a wifi network on android", "forget a Wi-Fi network",
       ["Open the Settings app.", "Tap Network & internet, then Internet.", "Touch and hold the network name.", "Tap Forget."],
       ["Open Settings and tap Wi-Fi.", "Tap the info button next to the network.", "Tap Forget This Network."],
       ["Settings", "Network & internet", "Internet"]),
    _t("btname", "how to change bluetooth name on android", "rename your phone for Bluetooth",
       ["Open the Settings app.", "Tap About phone.", "Tap Device name.", "Type the new name and tap OK."],
       ["Open Settings and tap General.", "Tap About, then Name.", "Type a new name."], ["Settings", "About phone", "Device name"]),
    _t("ringtone", "how to change ringtone on android", "change your ringtone",
       ["Open the Settings app.", "Tap Sound & vibration.", "Tap Phone ringtone.", "Pick a ringtone and tap Save."],
       ["Open Settings.", "Tap Sounds & Haptics.", "Tap Ringtone and choose a sound."],
       ["Settings", "Sound & vibration", "Phone ringtone"]),
    _t("fontsize", "how to make text bigger on android", "make the text bigger",
       ["Open the Settings app.", "Tap Display.", "Tap Font size.", "Drag the slider to the right."],
       ["Open Settings.", "Tap Display & Brightness.", "Tap Text Size and drag the slider."],
       ["Settings", "Display", "Font size"]),
    _t("notif", "how to turn off notifications for an app on android", "turn off notifications for an app",
       ["Open the Settings app.", "Tap Notifications, then App notifications.", "Find the app in the list.", "Turn off its switch."],
       ["Open Settings.", "Tap Notifications.", "Select the app and turn off Allow Notifications."],
       ["Settings", "Notifications", "App notifications"]),
    _t("hotspot", "how to turn on mobile hotspot on android", "turn on the mobile hotspot",
       ["Open the Settings app.", "Tap Network & internet.", "Tap Hotspot & tethering.", "Turn on Wi-Fi hotspot."],
       ["Open Settings.", "Tap Personal Hotspot.", "Turn on Allow Others to Join."],
       ["Settings", "Network & internet", "Hotspot & tethering"]),
    _t("location", "how to turn off location on android", "turn off location",
       ["Open the Settings app.", "Tap Location.", "Turn off Use location."],
       ["Open Settings.", "Tap Privacy & Security.", "Tap Location Services and turn it off."],
       ["Settings", "Location", "Use location"]),
    _t("language", "how to change the phone language on android", "change the system language",
       ["Open the Settings app.", "Tap System, then Languages.", "Tap System languages.", "Tap Add a language and pick one."],
       ["Open Settings and tap General.", "Tap Language & Region.", "Tap Add Language."],
       ["Settings", "System", "Languages"]),
    _t("wallpaper", "how to change wallpaper on android", "change the wallpaper",
       ["Touch and hold an empty spot on the home screen.", "Tap Wallpaper & style.", "Tap Change wallpaper.", "Pick an image and tap Set wallpaper."],
       ["Open Settings.", "Tap Wallpaper.", "Tap Add New Wallpaper."],
       ["Settings", "Wallpaper & style", "Change wallpaper"]),
    _t("airplane", "how to turn on airplane mode on android", "turn on airplane mode",
       ["Open the Settings app.", "Tap Network & internet.", "Turn on Airplane mode."],
       ["Open Control Center.", "Tap the airplane button."], ["Settings", "Network & internet", "Airplane mode"]),
    _t("cache", "how to clear app cache on android", "clear an app's cache",
       ["Open the Settings app.", "Tap Apps, then See all apps.", "Select the app.", "Tap Storage & cache.", "Tap Clear cache."],
       ["Open Settings and tap General.", "Tap iPhone Storage.", "Select the app and tap Offload App."],
       ["Settings", "Apps", "See all apps"]),
    _t("nightlight", "how to turn on night light on android", "turn on Night Light",
       ["Open the Settings app.", "Tap Display.", "Tap Night Light.", "Turn on Use Night Light."],
       ["Open Settings.", "Tap Display & Brightness.", "Tap Night Shift and turn it on."],
       ["Settings", "Display", "Night Light"]),
    _t("dnd", "how to turn on do not disturb on android", "turn on Do Not Disturb",
       ["Open the Settings app.", "Tap Sound & vibration.", "Tap Do Not Disturb.", "Tap Turn on now."],
       ["Open Control Center.", "Tap Focus.", "Tap Do Not Disturb."],
       ["Settings", "Sound & vibration", "Do Not Disturb"]),
    _t("keyboard", "how to change keyboard language on android", "add a keyboard language",
       ["Open the Settings app.", "Tap System, then Languages & input.", "Tap On-screen keyboard and choose Gboard.", "Tap Languages, then Add keyboard."],
       ["Open Settings and tap General.", "Tap Keyboard, then Keyboards.", "Tap Add New Keyboard."],
       ["Settings", "System", "Languages & input"]),
    _t("nfc", "how to turn on nfc on android", "turn on NFC",
       ["Open the Settings app.", "Tap Connected devices.", "Tap Connection preferences.", "Turn on NFC."],
       ["Open Settings.", "Tap Wallet & Apple Pay."], ["Settings", "Connected devices", "Connection preferences"]),
    _t("vibration", "how to turn off keyboard vibration on android", "turn off keyboard vibration",
       ["Open the Settings app.", "Tap Sound & vibration.", "Tap Vibration & haptics.", "Turn off Keyboard vibration."],
       ["Open Settings.", "Tap Sounds & Haptics.", "Tap Keyboard Feedback and turn off Haptic."],
       ["Settings", "Sound & vibration", "Vibration & haptics"]),
]

_FILLER = [
    "Most phones get this option with a recent update, so it is worth checking for one first.",
    "The names of some menus differ a little between phone makers.",
    "We tested this on a Pixel 8 and a Galaxy S23.",
    "It only takes a minute, and you can undo it at any time.",
    "Readers ask us about this every week, so here is a short guide.",
]
_NEWS = [
    "Phone makers keep adding options to their settings menus, and most people never open them.",
    "A survey of two thousand owners found that fewer than a third change anything after setup.",
    "Analysts expect the next release to move several switches into the quick settings panel.",
    "Critics say the menus have become too deep; defenders say power users want the choice.",
    "The company did not respond to a request for comment before publication.",
]


def _page(title: str, body: str, lang: str = "en", chrome: bool = True) -> str:
    nav = ('<header><div class="logo">Site</div><nav><a href="/">Home</a> <a href="/android">Android</a> '
           '<a href="/deals">Deals</a></nav></header>') if chrome else ""
    foot = "<footer><p>&copy; 2024 Example Media. Privacy. Terms.</p></footer>" if chrome else ""
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<script>var cfg = {{ads: true}};</script><style>body{{font:14px sans-serif}}</style></head>"
            f"<body>{nav}{body}{foot}</body></html>\n")


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _help_centre(t: Topic, rng: random.Random) -> str:
    items = "".join(f"<li>{_e(s)}</li>" for s in t.steps)
    body = (f'<main><div class="breadcrumbs">Help &gt; Android &gt; Settings</div><article>'
            f"<h1>{_e(t.task.capitalize())}</h1><p>{_e(rng.choice(_FILLER))}</p>"
            f'<div style="display:none">Buy our phone now</div>'
            f"<h2>{_e(t.task.capitalize())}</h2><ol>{items}</ol>"
            f"<h2>Related articles</h2><ul><li><a href='#'>Fix a problem with your screen</a></li>"
            f"<li><a href='#'>Get help from the community</a></li></ul></article></main>")
    return _page(f"{t.task.capitalize()} - Android Help", body)


def _blog(t: Topic, rng: random.Random) -> str:
    parts = [f"<h1>How to {_e(t.task)} on Android</h1><p>{_e(rng.choice(_FILLER))}</p>"]
    for n, step in enumerate(t.steps, start=1):
        parts.append(f"<h2>Step {n}: {_e(step.rstrip('.'))}</h2><p>{_e(rng.choice(_FILLER))}</p>")
    parts.append("<h3>You might also like</h3><ul><li><a href='#'>The best Android phones of 2024</a></li></ul>")
    return _page(f"How to {t.task} on Android (easy guide)", '<div class="post">' + "".join(parts) + "</div>")


def _forum(t: Topic, rng: random.Random) -> str:
    lines = "<br>\n".join(f"{n}. {_e(s)}" for n, s in enumerate(t.steps, start=1))
    body = (f'<div class="thread"><div class="question"><h1>How do I {_e(t.task)}?</h1>'
            f"<p>I have a Galaxy A52 and cannot find where to {_e(t.task)}. Any idea?</p></div>"
            f'<div class="answer"><p>Same question here, following.</p></div>'
            f'<div class="answer accepted"><p>On most Android phones:</p><p>{lines}</p>'
            f"<p>{_e(rng.choice(_FILLER))}</p></div>"
            f'<div class="answer"><p>Thanks, that worked!</p></div></div>')
    return _page(f"How do I {t.task}? - Community", body)


def _listicle(t: Topic, rng: random.Random) -> str:
    ios = "".join(f"<li>{_e(s)}</li>" for s in t.ios_steps)
    android = "".join(f"<li>{_e(s)}</li>" for s in t.steps)
    first, second = (("On iPhone", ios), ("On Android", android))
    if rng.random() < 0.5:
        first, second = second, first
    body = (f"<article><h1>How to {_e(t.task)} on iPhone and Android</h1><p>{_e(rng.choice(_FILLER))}</p>"
            f"<h2>{first[0]}</h2><ol>{first[1]}</ol><h2>{second[0]}</h2><ol>{second[1]}</ol></article>")
    return _page(f"How to {t.task} on iPhone and Android", body)


def _breadcrumb(t: Topic, rng: random.Random) -> str:
    path = " &gt; ".join(_e(p) for p in t.path)
    body = (f'<div class="answer-card"><h1>Where is the option to {_e(t.task)}?</h1>'
            f"<p>To {_e(t.task)}, go to <b>{path}</b> and follow the options on screen.</p>"
            f"<p>{_e(rng.choice(_FILLER))}</p></div>")
    return _page(f"Quick answer: {t.task}", body)


def _paragraphs(t: Topic, rng: random.Random) -> str:
    paras = "".join(f"<p>{_e(s)}</p>" for s in t.steps)
    body = (f'<div class="main-col"><h1>{_e(t.task.capitalize())} on Android</h1><p>{_e(rng.choice(_FILLER))}</p>'
            f'<div class="howto">{paras}</div><p>{_e(rng.choice(_FILLER))}</p></div>')
    return _page(f"{t.task.capitalize()} on Android", body)


def _news(t: Topic, rng: random.Random) -> str:
    paras = "".join(f"<p>{_e(s)}</p>" for s in rng.sample(_NEWS, 4))
    body = (f"<article><h1>Opinion: nobody needs to {_e(t.task)}</h1><p class='byline'>By A. Writer</p>"
            f"{paras}<blockquote>\"Settings are a matter of taste,\" one designer told us.</blockquote></article>")
    return _page(f"Opinion: nobody needs to {t.task}", body)


def _video(t: Topic, rng: random.Random) -> str:
    body = (f'<div id="player"><video src="/v.mp4"></video></div><h1>How to {_e(t.task)} (2024)</h1>'
            f"<p>In this video I show you how to {_e(t.task)} on any phone. Don't forget to like and subscribe!</p>"
            f'<div id="comments"><p>thanks this worked</p><p>who is watching in 2024?</p></div>'
            f"<h3>Up next</h3><ul><li><a href='#'>How to {_e(t.task)} on iPhone</a> · 900K views</li>"
            f"<li><a href='#'>10 hidden Android features</a> · 3M views</li></ul>")
    return _page(f"How to {t.task} (2024) - VidTube", body)


def _unrelated(t: Topic, rng: random.Random) -> str:
    # another topic's steps only: the page does not answer this topic's query
    other = rng.choice([o for o in TOPICS if o.key != t.key and o.steps[1] != t.steps[1]])
    items = "".join(f"<li>{_e(s)}</li>" for s in other.steps)
    body = (f"<article><h1>How to {_e(other.task)}</h1><p>{_e(rng.choice(_FILLER))}</p>"
            f"<ol>{items}</ol></article>")
    return _page(f"How to {other.task}", body)


#: style name -> (renderer, does the page hold the topic's steps?)
STYLES: dict[str, tuple[Callable[[Topic, random.Random], str], bool]] = {
    "help_centre": (_help_centre, True),
    "blog": (_blog, True),
    "forum": (_forum, True),
    "listicle": (_listicle, True),
    "breadcrumb": (_breadcrumb, True),
    "paragraphs": (_paragraphs, True),
    "news": (_news, False),
    "video": (_video, False),
    "unrelated": (_unrelated, False),
}
POSITIVE_STYLES = [s for s, (_, positive) in STYLES.items() if positive]


def render(topic: Topic, style: str, seed: int = 0) -> tuple[str, bool]:
    """The page of ``topic`` in ``style`` and whether it holds the topic's steps."""
    fn, positive = STYLES[style]
    return fn(topic, random.Random(f"{topic.key}-{style}-{seed}")), positive
