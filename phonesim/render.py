"""Draw the simulator's screen as a PNG, from the same laid-out nodes the dump uses.

Every UINode carries a ``role`` (row, title, summary, switch, radio, ...);
this module draws each role the way a Material phone shows it, so a
screenshot and its XML dump always agree. Dialogs dim the page under them.
Fonts are DejaVu Sans when installed, else Pillow's built-in font, loaded once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Protocol

from PIL import Image, ImageDraw, ImageFont

from verirank_core.screens import COMPRESS_LEVEL, encode_png
from phonesim.layout import Metrics, UINode, Window


class _Screen(Protocol):
    """What drawing needs of a simulator (the simulator imports this module, not the reverse)."""

    world: Any
    metrics: Metrics

    def windows(self) -> list[Window]: ...


__all__ = ["render_png", "render_image"]


@lru_cache(maxsize=64)
def _font(size: int, bold: bool = False) -> ImageFont.ImageFont:
    for name in (("DejaVuSans-Bold.ttf",) if bold else ()) + ("DejaVuSans.ttf",):
        for path in (name, f"/usr/share/fonts/truetype/dejavu/{name}"):
            try:
                return ImageFont.truetype(path, size)
            except OSError:
                continue
    return ImageFont.load_default(size=size)


def _hex(color: str) -> tuple[int, int, int]:
    color = color.lstrip("#")
    return tuple(int(color[i:i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]


class _Palette:
    def __init__(self, accent: str, dark: bool):
        self.accent = _hex(accent)
        if dark:
            self.bg, self.fg, self.fg2, self.card = (32, 33, 36), (232, 234, 237), (154, 160, 166), (48, 49, 52)
            self.line = (95, 99, 104)
        else:
            self.bg, self.fg, self.fg2, self.card = (255, 255, 255), (31, 31, 31), (95, 99, 104), (255, 255, 255)
            self.line = (196, 199, 197)
        self.soft = tuple(int(c * 0.25 + 255 * 0.75) for c in self.accent)


def _icon_colour(seed: str) -> tuple[int, int, int]:
    """A stable colour per label (the same app always gets the same icon)."""
    h = sum((i + 1) * ord(c) for i, c in enumerate(seed)) % 360
    import colorsys

    r, g, b = colorsys.hsv_to_rgb(h / 360.0, 0.55, 0.85)
    return int(r * 255), int(g * 255), int(b * 255)


class _Painter:
    def __init__(self, img: Image.Image, m: Metrics, pal: _Palette):
        self.img = img
        self.d = ImageDraw.Draw(img)
        self.m = m
        self.pal = pal

    def sp(self, size: float) -> int:
        return self.m.dp(size)

    # -- text helpers

    def fits(self, node: UINode, size: int) -> bool:
        """Text in a node clipped by a list edge is only drawn when a whole line shows."""
        return node.bounds[3] - node.bounds[1] >= size * 0.9

    def line(self, node: UINode, text: str, size: int, fill, bold: bool = False, align: str = "left") -> None:
        if not text or not self.fits(node, size):
            return
        x1, y1, x2, y2 = node.bounds
        font = _font(size, bold)
        text = self.ellipsize(text, font, x2 - x1)
        cy = (y1 + y2) / 2
        if align == "center":
            self.d.text(((x1 + x2) / 2, cy), text, font=font, fill=fill, anchor="mm")
        else:
            self.d.text((x1, cy), text, font=font, fill=fill, anchor="lm")

    def paragraph(self, node: UINode, text: str, size: int, fill) -> None:
        if not text or not self.fits(node, size):
            return
        x1, y1, x2, y2 = node.bounds
        font = _font(size)
        y = y1 + self.m.dp(2)
        for line in self.wrap(text, font, x2 - x1):
            if y + size > y2 + size * 0.2:
                break
            self.d.text((x1, y), line, font=font, fill=fill)
            y += int(size * 1.35)

    @staticmethod
    def ellipsize(text: str, font, width: int) -> str:
        if font.getlength(text) <= width:
            return text
        while text and font.getlength(text + "\u2026") > width:
            text = text[:-1]
        return text + "\u2026"

    @staticmethod
    def wrap(text: str, font, width: int) -> list[str]:
        lines: list[str] = []
        for para in text.split("\n"):
            current = ""
            for word in para.split(" "):
                trial = f"{current} {word}".strip()
                if font.getlength(trial) <= width or not current:
                    current = trial
                else:
                    lines.append(current)
                    current = word
            lines.append(current)
        return lines

    # -- widgets

    def switch(self, node: UINode) -> None:
        x1, y1, x2, y2 = node.bounds
        if y2 - y1 < self.m.dp(30):
            return
        cy = (y1 + y2) // 2
        w, h = self.m.dp(52), self.m.dp(32)
        tx2 = x2
        tx1 = tx2 - w
        on = node.checked
        track = self.pal.accent if on else self.pal.bg
        self.d.rounded_rectangle((tx1, cy - h // 2, tx2, cy + h // 2), radius=h // 2, fill=track,
                                 outline=self.pal.accent if on else self.pal.fg2, width=self.m.dp(2))
        r = self.m.dp(12) if on else self.m.dp(8)
        tcx = tx2 - h // 2 if on else tx1 + h // 2
        self.d.ellipse((tcx - r, cy - r, tcx + r, cy + r), fill=(255, 255, 255) if on else self.pal.fg2)

    def radio(self, cx: int, cy: int, on: bool) -> None:
        r = self.m.dp(10)
        colour = self.pal.accent if on else self.pal.fg2
        self.d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=colour, width=self.m.dp(2))
        if on:
            r2 = self.m.dp(5)
            self.d.ellipse((cx - r2, cy - r2, cx + r2, cy + r2), fill=colour)

    def checkbox(self, node: UINode) -> None:
        x1, y1, x2, y2 = node.bounds
        if y2 - y1 < self.m.dp(30):
            return
        cx, cy, r = (x1 + x2) // 2, (y1 + y2) // 2, self.m.dp(9)
        if node.checked:
            self.d.rounded_rectangle((cx - r, cy - r, cx + r, cy + r), radius=self.m.dp(2), fill=self.pal.accent)
            self.d.line([(cx - r // 2, cy), (cx - r // 6, cy + r // 2), (cx + r // 2, cy - r // 2)],
                        fill=(255, 255, 255), width=self.m.dp(2))
        else:
            self.d.rounded_rectangle((cx - r, cy - r, cx + r, cy + r), radius=self.m.dp(2),
                                     outline=self.pal.fg2, width=self.m.dp(2))

    def glyph_button(self, node: UINode) -> None:
        """An ImageButton: arrow for 'Navigate up', magnifier for search, else an initial in a ring."""
        x1, y1, x2, y2 = node.bounds
        if y2 - y1 < self.m.dp(30):
            return
        cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
        s = self.m.dp(9)
        desc = (node.content_desc or "").lower()
        w = self.m.dp(2)
        if node.role == "up" or desc in ("navigate up", "back"):
            self.d.line([(cx - s, cy), (cx + s, cy)], fill=self.pal.fg, width=w)
            self.d.line([(cx - s, cy), (cx - s // 3, cy - s * 2 // 3)], fill=self.pal.fg, width=w)
            self.d.line([(cx - s, cy), (cx - s // 3, cy + s * 2 // 3)], fill=self.pal.fg, width=w)
        elif desc.startswith("more"):
            r = self.m.dp(2)
            for dy in (-s, 0, s):
                self.d.ellipse((cx - r, cy + dy - r, cx + r, cy + dy + r), fill=self.pal.fg)
        elif desc in ("clear", "close", "cancel"):
            self.d.line([(cx - s, cy - s), (cx + s, cy + s)], fill=self.pal.fg, width=w)
            self.d.line([(cx - s, cy + s), (cx + s, cy - s)], fill=self.pal.fg, width=w)
        elif desc == "minimize":
            self.d.line([(cx - s, cy - s // 2), (cx, cy + s // 2), (cx + s, cy - s // 2)], fill=self.pal.fg, width=w)
        elif "search" in desc:
            r = self.m.dp(7)
            self.d.ellipse((cx - r - 3, cy - r - 3, cx + r - 3, cy + r - 3), outline=self.pal.fg, width=w)
            self.d.line([(cx + r // 2, cy + r // 2), (cx + s, cy + s)], fill=self.pal.fg, width=w)
        else:
            r = self.m.dp(14)
            fill = _icon_colour(desc or "x")
            self.d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
            letter = (node.content_desc or "?")[:1].upper()
            self.d.text((cx, cy), letter, font=_font(self.sp(14), True), fill=(255, 255, 255), anchor="mm")

    # -- the tree

    def node(self, n: UINode) -> None:
        role = n.role
        m, pal, d = self.m, self.pal, self.d
        x1, y1, x2, y2 = n.bounds
        disabled = not n.enabled
        fg = pal.fg2 if disabled else pal.fg
        if role == "toolbar":
            d.rectangle(n.bounds, fill=pal.bg)
        elif role == "toolbar_title":
            self.line(n, n.text, self.sp(22), fg)
        elif role in ("up", "icon_button"):
            self.glyph_button(n)
        elif role == "icon":
            if y2 - y1 >= m.dp(20):
                d.ellipse(n.bounds, fill=_icon_colour(n.content_desc or str(x1 + y1)))
        elif role == "title":
            self.line(n, n.text, self.sp(18), fg)
        elif role == "summary":
            self.paragraph(n, n.text, self.sp(14), pal.fg2)
        elif role == "header":
            self.line(n, n.text, self.sp(14), pal.accent, bold=True)
        elif role == "text":
            self.paragraph(n, n.text, self.sp(15), fg)
        elif role == "switch":
            self.switch(n)
        elif role == "checkbox":
            self.checkbox(n)
        elif role == "radio":
            if y2 - y1 >= m.dp(24):
                self.radio((x1 + x2) // 2, (y1 + y2) // 2, n.checked)
        elif role == "dialog_radio":
            if y2 - y1 >= m.dp(24):
                self.radio(x1 + m.dp(36), (y1 + y2) // 2, n.checked)
                box = UINode(n.cls, n.package, (x1 + m.dp(68), y1, x2 - m.dp(16), y2))
                self.line(box, n.text, self.sp(16), fg)
        elif role == "compact_radio":
            if y2 - y1 >= m.dp(24):
                self.radio(x1 + m.dp(22), (y1 + y2) // 2, n.checked)
                box = UINode(n.cls, n.package, (x1 + m.dp(40), y1, x2 - m.dp(4), y2))
                self.line(box, n.text, self.sp(15), fg)
        elif role in ("edit", "edit_hint"):
            if y2 - y1 >= m.dp(30):
                outline = pal.accent if n.focused else pal.line
                d.rounded_rectangle(n.bounds, radius=m.dp(8), outline=outline, width=m.dp(2 if n.focused else 1))
                box = UINode(n.cls, n.package, (x1 + m.dp(14), y1, x2 - m.dp(14), y2))
                self.line(box, n.text, self.sp(16), pal.fg if role == "edit" else pal.fg2)
                if n.focused:
                    tx = x1 + m.dp(14) + int(_font(self.sp(16)).getlength(n.text if role == "edit" else ""))
                    d.line([(tx + 2, y1 + m.dp(12)), (tx + 2, y2 - m.dp(12))], fill=pal.accent, width=m.dp(2))
        elif role == "button":
            if y2 - y1 >= m.dp(30):
                d.rounded_rectangle(n.bounds, radius=min(y2 - y1, x2 - x1) // 2, fill=pal.line if disabled else pal.accent)
                self.line(n, n.text, self.sp(15), (255, 255, 255), bold=True, align="center")
        elif role == "dialog_button":
            self.line(n, n.text, self.sp(15), pal.accent, bold=True, align="center")
        elif role == "image":
            if y2 - y1 > m.dp(8):
                d.rectangle(n.bounds, fill=pal.soft)
                # a simple "landscape" so thumbnails read as pictures
                h = y2 - y1
                d.polygon([(x1, y2), (x1 + (x2 - x1) // 3, y2 - h // 2), ((x1 + x2) // 2, y2)], fill=pal.line)
        elif role == "card":
            # the channel avatar sits left of the title
            title = next((c for c in n.children if c.role == "title"), None)
            if title is not None and self.fits(title, self.sp(18)):
                r = m.dp(18)
                ty = title.bounds[1]
                d.ellipse((x1 + m.dp(12), ty, x1 + m.dp(12) + 2 * r, ty + 2 * r), fill=_icon_colour(n.content_desc))
        elif role == "view" and "search" in n.resource_id and n.children:
            # a search bar: a light pill behind its text
            d.rounded_rectangle((x1 + m.dp(16), y1 + m.dp(8), x2 - m.dp(16), y2 - m.dp(8)), radius=m.dp(28),
                                fill=pal.soft)
        elif role == "view" and (n.text or n.content_desc):
            # plain views the world gave words: a TextView's text, or an image's name (a logo)
            if n.cls.endswith("TextView") or n.text:
                self.line(UINode(n.cls, n.package, (x1 + m.dp(16), y1, x2 - m.dp(8), y2)), n.text, self.sp(17), pal.fg2)
            elif n.cls.endswith("ImageView") and not n.children:
                self.line(UINode(n.cls, n.package, (x1 + m.dp(16), y1, x2, y2)), n.content_desc, self.sp(22), pal.accent,
                          bold=True)
        elif role == "tab":
            if n.selected:
                d.rounded_rectangle((x1 + m.dp(16), y1 + m.dp(4), x2 - m.dp(16), y1 + m.dp(32)), radius=m.dp(14),
                                    fill=pal.soft)
        elif role == "tab_icon":
            if y2 - y1 > m.dp(12):
                d.rounded_rectangle(n.bounds, radius=m.dp(5), outline=pal.fg, width=m.dp(2))
        elif role == "tab_label":
            self.line(n, n.text, self.sp(12), fg, align="center")
        elif role == "seekbar":
            self.seekbar(n)
        elif role in ("minus", "plus"):
            self.line(n, "A", self.sp(14 if role == "minus" else 22), fg, align="center")
        elif role == "dialog_title":
            self.line(n, n.text, self.sp(22), fg)
        elif role == "message":
            self.paragraph(n, n.text, self.sp(15), pal.fg2)
        elif role == "app_icon":
            self.app_icon(n)
        elif role == "qs_tile":  # a quick settings tile: a filled circle when on
            cx, r = (x1 + x2) // 2, m.dp(26)
            top = y1 + m.dp(6)
            d.ellipse((cx - r, top, cx + r, top + 2 * r), fill=pal.accent if n.checked else pal.line)
        elif role == "qs_label":
            self.line(n, n.text, self.sp(12), pal.fg, align="center")
        elif role == "search_pill":
            d.rounded_rectangle(n.bounds, radius=(y2 - y1) // 2, fill=(255, 255, 255))
            d.text((x1 + m.dp(28), (y1 + y2) / 2), "G", font=_font(self.sp(20), True), fill=(66, 133, 244), anchor="mm")
        for child in n.children:
            self.node(child)

    def seekbar(self, n: UINode) -> None:
        x1, y1, x2, y2 = n.bounds
        if y2 - y1 < self.m.dp(24):
            return
        cy = (y1 + y2) // 2
        pad = self.m.dp(12)
        tx = x1 + pad + int(n.fraction * (x2 - x1 - 2 * pad))
        self.d.line([(x1 + pad, cy), (x2 - pad, cy)], fill=self.pal.line, width=self.m.dp(4))
        self.d.line([(x1 + pad, cy), (tx, cy)], fill=self.pal.accent, width=self.m.dp(4))
        r = self.m.dp(10)
        self.d.ellipse((tx - r, cy - r, tx + r, cy + r), fill=self.pal.accent)

    def app_icon(self, n: UINode) -> None:
        x1, y1, x2, y2 = n.bounds
        cx = (x1 + x2) // 2
        r = self.m.dp(28)
        top = y1 + self.m.dp(8)
        self.d.ellipse((cx - r, top, cx + r, top + 2 * r), fill=_icon_colour(n.text))
        self.d.text((cx, top + r), n.text[:1], font=_font(self.sp(24), True), fill=(255, 255, 255), anchor="mm")
        label = UINode(n.cls, n.package, (x1, top + 2 * r + self.m.dp(4), x2, top + 2 * r + self.m.dp(26)))
        self.line(label, n.text, self.sp(13), (255, 255, 255), align="center")


def _system_bars(p: _Painter, w: int, h: int, navigation: str, light_icons: bool) -> None:
    m, d = p.m, p.d
    colour = (255, 255, 255) if light_icons else p.pal.fg
    d.text((m.dp(20), m.status_bar / 2), "12:00", font=_font(m.dp(14)), fill=colour, anchor="lm")
    # battery and signal, drawn simply
    bx = w - m.dp(20)
    d.rounded_rectangle((bx - m.dp(10), m.dp(6), bx, m.dp(18)), radius=m.dp(2), outline=colour, width=m.dp(1))
    d.rectangle((bx - m.dp(8), m.dp(8), bx - m.dp(2), m.dp(16)), fill=colour)
    d.polygon([(bx - m.dp(34), m.dp(18)), (bx - m.dp(18), m.dp(18)), (bx - m.dp(18), m.dp(6))], fill=colour)
    nav_top = h - m.nav_bar
    if navigation == "gesture":
        d.rounded_rectangle((w // 2 - m.dp(54), nav_top + m.dp(10), w // 2 + m.dp(54), nav_top + m.dp(14)),
                            radius=m.dp(2), fill=colour)
    else:
        cy = nav_top + m.nav_bar // 2
        s = m.dp(8)
        d.polygon([(w // 4 + s, cy - s), (w // 4 + s, cy + s), (w // 4 - s, cy)], outline=colour)
        d.ellipse((w // 2 - s, cy - s, w // 2 + s, cy + s), outline=colour, width=m.dp(2))
        d.rectangle((3 * w // 4 - s, cy - s, 3 * w // 4 + s, cy + s), outline=colour, width=m.dp(2))


def render_image(windows: list[Window], metrics: Metrics, accent: str = "#1a73e8", dark: bool = False,
                 navigation: str = "gesture") -> Image.Image:
    """Draw ``windows`` (bottom first) into an RGB image of the screen size."""
    pal = _Palette(accent, dark)
    w, h = metrics.width, metrics.height
    img = Image.new("RGB", (w, h), pal.bg)
    painter = _Painter(img, metrics, pal)
    launcher = False
    for i, win in enumerate(windows):
        if win.kind == "launcher":
            launcher = True
            # a soft two-tone wallpaper
            painter.d.rectangle((0, 0, w, h // 2), fill=(64, 92, 140))
            painter.d.rectangle((0, h // 2, w, h), fill=(44, 68, 110))
        elif win.kind == "dialog":
            img = img.point(lambda v: int(v * 0.45))
            painter = _Painter(img, metrics, pal)
            painter.d.rounded_rectangle(win.frame, radius=metrics.dp(28), fill=pal.card)
        elif win.kind == "shade":  # the pulled-down panel over a dimmed screen
            img = img.point(lambda v: int(v * 0.45))
            painter = _Painter(img, metrics, pal)
            panel = win.root.children[0] if win.root.children else win.root
            bottom = max((c.bounds[3] for c in panel.children), default=h // 2) + metrics.dp(16)
            painter.d.rounded_rectangle((0, -metrics.dp(28), w, bottom), radius=metrics.dp(28), fill=pal.card)
        painter.node(win.root)
    _system_bars(painter, w, h, navigation, light_icons=launcher or dark)
    return img


def render_png(sim: _Screen, compress_level: int = COMPRESS_LEVEL, scale: float = 1.0) -> bytes:
    """The simulator's current screen as PNG bytes, scaled by ``scale`` before encoding."""
    style = sim.world.style
    img = render_image(sim.windows(), sim.metrics, style.accent, style.dark, sim.world.device.navigation)
    return encode_png(img, compress_level, scale)
