"""Find candidate instruction blocks in a cleaned page's snippets.

A block is a run of snippets that could be the page's steps:

``list``
    the items of one ``ol``/``ul``; an item is all the text of its ``li``
    (a title and a body paragraph inside one item make one step); nested items
    are added when they read as actions ("Tap Network" inside "Go to Settings");
``numbered``
    "Step 1: ..." / "1. ..." headings, paragraphs or ``<br>``-separated
    lines numbered 1, 2, 3...; a step heading takes its body (the text up to
    the next step), and a heading that is only a number ("Step 2") is
    replaced by its body;
``table``
    the rows of a ``<table>``, one step per row; a column holding only the
    step number is dropped, header rows are skipped;
``deflist``
    ``<dt>``/``<dd>`` pairs of a ``<dl>``, one step per pair;
``breadcrumb``
    a menu path in one sentence, "Settings > Display > Dark theme" (also
    ``→ -> » › ⇒``, a spaced ``/`` and "and then"), split into one step per
    part, followed by the sentences that complete it ("Disable it there.");
``imperative``
    consecutive paragraphs that each start with an action verb, or one
    paragraph made of two or more such sentences.

Each block carries the heading text it sits under (the nearest heading or
"label:" line before it; for a block that starts with a heading, the nearest
higher one), which the scorer compares with the query. This
module only looks at text and XPaths; scoring lives in ``heuristic.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from verirank_core.extraction_records import Snippet

__all__ = ["Block", "find_blocks", "is_imperative", "strip_marker", "describes_task", "IMPERATIVE_VERBS",
           "UI_WORDS", "HEADING_LEVELS", "heading_context"]

#: verbs that start an instruction ("Tap Display", "Turn on Wi-Fi"); not the verbs of a page's
#: calls to action ("Share it with a friend", "Tell us", "Join our newsletter", "View more") or of
#: voice commands ("Say "Hey Google""), which no tap follows
IMPERATIVE_VERBS = frozenset("""
tap double-tap long-press click open go select turn toggle scroll enter press choose swipe touch hold
type find navigate head launch pick switch enable disable set check uncheck add remove delete clear
drag hit make wait restart reboot power connect pair follow confirm save slide move change use visit
search copy paste allow grant download install uninstall update sign log create edit rename return
close exit expand collapse unlock lock activate deactivate start stop tick untick mark pull drop
insert plug unplug wipe dry keep look locate access customize customise adjust tweak reset
understand see list spend develop learn gather peel prepare plant wrap place cut measure soak dig attach
serve avoid skip host decorate personalize personalise let give get bring write read run build apply ask put
fill pour mix water grow know consider remember prune feed cover separate pin fold sew iron wash rinse
scale opt forgo trim limit reduce buy shop invite cook bake rent borrow split hire hang print play stick leave throw
verify ensure charge repeat quit relaunch take complete double-click right-click browse accept disconnect scan
point position sync dial record begin upload configure draw transfer perform proceed compose input erase rotate
highlight shake squeeze
""".split())

#: nouns of a phone's UI; a step that names one reads like an instruction
UI_WORDS = frozenset("""
settings setting menu button toggle switch icon app apps screen display option options tab notification
notifications bluetooth wi-fi wifi network internet bar panel gear slider checkbox keyboard dialog
home back page field system account storage battery sound volume camera gallery photos
""".split())

_DISCOURSE = re.compile(r"^(?:(?:first|second|third|next|then|finally|now|lastly|afterwards|after that|once done|"
                        r"once there|to do this|also|and|or|simply|just|please|go ahead and|"
                        r"you (?:can|could|should|need to|have to|must|will need to|'ll need to|'ll want to)|"
                        r"try to|try)\b[\s,:]*|instead of [^,.]{1,60},\s*)+", re.I)
_MARKER = re.compile(r"^\s*(?:step\s*(\d{1,2})\b\s*[:.)\-–—]?|(\d{1,2})\s*[.):]\s+(?=\S)|(\d{1,2})\s*[.):]?\s*$)\s*",
                     re.I)
#: crawl artefacts before a step: reference marks ("[3] Open ...") and an image caption
#: with the crawl's numbers ("Image titled Encrypt a Phone Step 3 2 Tap Security")
_REFERENCE = re.compile(r"^\s*(?:\[\d{1,3}\]\s*)+")
_CAPTION = re.compile(r"^\s*Image titled\b.{0,120}?\bStep\s+(\d{1,2})\s+(?:(\d{1,2})\b\s*)?", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
#: heading tags and their levels
HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BREADCRUMB_SEP = re.compile(r"\s*(?:>|→|->|»|›|⇒|=>|➔|▸|▶)\s*|\s+/\s+|,?\s+and then\s+", re.I)
#: the same without the spaced slash: next to arrows, "Network / Internet" is one name
_ARROW_SEP = re.compile(r"\s*(?:>|→|->|»|›|⇒|=>|➔|▸|▶)\s*|,?\s+and then\s+", re.I)
#: verbs that move through menus: "... and then tap Display" stays as written
_NAV_VERB = re.compile(r"^(?:tap|select|choose|click|press|toggle|turn|switch|enable|disable|open|go|scroll|"
                       r"touch|hit|navigate|head)\b", re.I)
#: what may follow a comma in a menu name ("Reset Wi-Fi, mobile & Bluetooth"): no verb, no clause
_CLAUSE_WORD = re.compile(r"^\s*(?:and|then|or|but|so|if|which|where|when|to|it|this|that|you|your|the|a|an)\b", re.I)
_LEAD_IN = re.compile(r"\b(?:go to|goes to|navigate to|head to|head over to|open|tap|select|choose|"
                      r"click|visit|find|under|in)\s+(?:the\s+)?(?:app\s+)?$", re.I)
#: where a path's last name ends and the sentence goes on: "and turn it on", ", then", "."
_TAIL_END = re.compile(r"(\s+(?:and|to|then|or|if|where|which)\s+|[,.;:!?()])")
_FIRST_PERSON = re.compile(r"\b(?:I|I'(?:ve|d|m)|we|we'(?:ve|d)|my|me|our)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


@dataclass
class Block:
    kind: str
    #: the steps, in page order, as page text (markers like "Step 1:" removed)
    steps: list[str]
    #: snippet positions the block spans (first and last used for context and order)
    positions: list[int]
    #: the nearest heading (or "label:" line) before the block
    heading: str = ""
    #: all enclosing headings, outermost first
    heading_path: list[str] = field(default_factory=list)
    #: a sentence right before the block ("On most Android phones:"), if short
    lead: str = ""
    #: how-to-ness fixed by the finder (a menu path told as an aside reads less
    #: like instructions than its "Tap ..." steps suggest); None: judge the steps
    howto_hint: Optional[float] = None
    #: numbered headings without the word "step" ("1. Use Digital Wellbeing"): the
    #: shape of a listicle of alternatives as much as of one sequence
    numbered_headings: bool = False
    #: the last snippet the block covers (a step's body runs past its marker)
    end: Optional[int] = None
    #: page text taken out of the steps but worth keeping for whoever follows them:
    #: step titles above an instruction body ("Turn on Dark theme" over "Open Settings...")
    context: list[str] = field(default_factory=list)
    #: the block only stands for a better block inside it, never wins alone: one action
    #: heading whose siblings tell the rest is as often a comment thread or a product blurb
    holder_only: bool = False

    @property
    def last(self) -> int:
        return self.end if self.end is not None else max(self.positions)

    @property
    def first(self) -> int:
        return self.positions[0]


# --- small text tests ----------------------------------------------------------------


def strip_marker(text: str) -> tuple[Optional[int], str]:
    """("Step 2: Tap Display") -> (2, "Tap Display"); unnumbered text -> (None, text).

    Reference marks go too: "[3] Open Settings" -> (None, "Open Settings"). An image
    caption ("Image titled ... Step 3 2 Tap Security") stays: it is page text, and its
    numbers are the crawl's, not the page's; ``is_imperative`` reads past it.
    """
    text = _REFERENCE.sub("", text)
    m = _MARKER.match(text)
    number = int(m.group(1) or m.group(2) or m.group(3)) if m else None
    rest = text[m.end():] if m else text
    return number, _REFERENCE.sub("", rest).strip()


#: a place or condition before the action: "On your Android device, download ...",
#: "If you don't see Security, select Applications", "To the right of the bar, tap More"
_LEAD_CLAUSE = re.compile(r"^(?:on|from|in|under|below|above|beneath|underneath|beside|next to|at|within|inside|once|"
                          r"after|when|if|to|for|with|while|before|using|via)\b[^,.;:!?]{1,80},\s*", re.I)


def _body(text: str) -> str:
    """A step's words without its marker, an image caption and opening discourse ("Then, ")."""
    return _DISCOURSE.sub("", _CAPTION.sub("", strip_marker(text)[1], count=1))


#: an option's name (one to four words) and a colon before what to do with it ("Voices: Choose a
#: voice and dialect.", Apple's "Adjust any of the following" lists); not a note or a tip, which
#: are asides
_OPTION_LABEL = re.compile(r"^(?!(?:notes?|tips?|warning|caution|important|optional(?:ly)?|example)\b)"
                           r"[a-z][\w'’&/-]*(?:\s+[\w'’&/-]+){0,3}:\s+(?=[a-z])", re.I)


def _first_word(text: str) -> str:
    text = _body(text)
    label = _OPTION_LABEL.match(text)
    # the label itself may be the instruction ("Choose from the following: Off, Data Only"), and
    # one word after it is a value ("Screen lock: Pin."), not a step
    if label and _first_word(label.group(0)) not in IMPERATIVE_VERBS and len(text[label.end():].split()) >= 2:
        text = text[label.end():]
    for _ in range(2):  # "In your Settings, under "Security," turn off ..."
        text = _DISCOURSE.sub("", _LEAD_CLAUSE.sub("", text))
    m = _WORD.search(text[:40])
    return m.group(0).lower() if m and m.start() <= 3 else ""


#: German instructions are polite imperatives: "Öffnen Sie ...", "Nun fügen Sie ...", "Sie wählen ... aus"
_GERMAN_IMPERATIVE = re.compile(r"^(?:(?:nun|dann|jetzt|danach|anschließend|zuerst|zunächst|als nächstes)\s+)?"
                                r"(?:[A-Za-zÄÖÜäöüß]+e?n\s+Sie\b|Sie\s+[a-zäöüß]+en\b)", re.I)


def is_imperative(text: str) -> bool:
    """Does ``text`` start like an instruction ("Tap ...", "Then, open ...")?"""
    if _GERMAN_IMPERATIVE.match(strip_marker(text)[1]):
        return True
    word = _first_word(text)
    if word in IMPERATIVE_VERBS:
        return True
    if word == "view":  # "Under 'Device memory,' view the Available space value" (not "View more")
        return bool(_LEAD_CLAUSE.match(_body(text)))
    if word == "back":  # "Back up your contacts" (not "Back to top")
        return bool(re.search(r"\bback[ -]up\b", text[:60], re.I))
    if word in _GESTURE_MODIFIERS:  # "Long press the wallpaper", "Double tap the screen"
        rest = re.search(rf"\b{word}\s+([A-Za-z]+)", text, re.I)
        return bool(rest) and rest.group(1).lower() in IMPERATIVE_VERBS
    # "Long-press", "Double-tap", "Swipe-up"
    return "-" in word and word.split("-")[-1] in IMPERATIVE_VERBS


#: words that make a gesture of the verb after them ("long press", "double tap")
_GESTURE_MODIFIERS = frozenset({"long", "double", "triple", "single"})


def describes_task(heading: str) -> bool:
    """Does a heading name a task ("Turn on dark theme", "How to clean your screen")?

    Headings such as "Gboard 7", "On Android" or "This is how I did it" do not:
    for those the page title says what the block is about.
    """
    return is_imperative(heading) or bool(re.search(r"\bhow (?:to|do (?:you|i|we)|can (?:you|i|we))\b", heading, re.I))


def _is_label(s: Snippet) -> bool:
    """A short line ending in ':' that introduces what follows ("On iPhone:")."""
    return s.text.endswith(":") and len(s.text.split()) <= 10


# --- heading context ----------------------------------------------------------------


def heading_context(snippets: Sequence[Snippet]) -> list[list[str]]:
    """For each snippet, the headings that enclose it (outermost first)."""
    out: list[list[str]] = []
    stack: list[tuple[float, str]] = []  # (level, text)
    for s in snippets:
        level: Optional[float] = HEADING_LEVELS.get(s.tag)
        if s.tag == "summary":  # a disclosure's question heads its answer, inside the page's sections
            level = 6.5
        elif level is None and _is_label(s):
            level = 7
        if level is not None:
            # a heading sits under the higher ones only: the step title before it is a sibling
            while stack and stack[-1][0] >= level:
                stack.pop()
        out.append([t for _, t in stack])
        if level is not None:
            stack.append((level, s.text.rstrip(":")))
    return out


# --- the block finders -----------------------------------------------------------------


def _parent(xpath: str) -> str:
    return xpath.rsplit("/", 1)[0]


def _nearest(xpath: str, tags: tuple[str, ...]) -> Optional[str]:
    """The XPath of the nearest ancestor-or-self of ``xpath`` with one of ``tags``."""
    parts = xpath.split("/")
    for end in range(len(parts), 1, -1):
        if parts[end - 1].split("[", 1)[0] in tags:
            return "/".join(parts[:end])
    return None


def _join(texts: Sequence[str]) -> str:
    """Pieces of one step as one text: "Turn off Adaptive brightness" + "Flip the switch"."""
    out = ""
    for t in texts:
        t = t.strip()
        if not t:
            continue
        if out and out[-1] not in ".!?:;":
            out += "."
        out = f"{out} {t}" if out else t
    return out


def _titled(title: str, body: Sequence[str], context: list[str]) -> str:
    """A step from its title and body. A title ("Turn on Dark theme", no full stop) over a body
    that says what to do is the step's name, not an action: the body is the step and the title
    goes to ``context``, so nobody looks for a control called like the title."""
    body = [t for t in body if t.strip()]
    if body and _is_title(title) and is_imperative(body[0]) and not is_imperative(title):
        context.append(title.strip())
        return _join(body)
    return _join([title, *body])


#: at most this many snippets make one step (a title and its body paragraphs)
_MAX_PIECES = 6
_NOISE_TAGS = ("figcaption", "caption")


def _list_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    # every snippet belongs to its nearest li; items are grouped by the list holding them
    pieces: dict[str, list[int]] = {}
    for i, s in enumerate(snippets):
        li = _nearest(s.xpath, ("li",))
        if li is not None and s.tag not in _NOISE_TAGS:
            pieces.setdefault(li, []).append(i)
    lists: dict[str, list[str]] = {}
    for li in pieces:
        lists.setdefault(_parent(li), []).append(li)
    blocks = []
    for parent, items in lists.items():
        items.sort(key=lambda li: pieces[li][0])
        positions: list[int] = []
        steps: list[str] = []
        context: list[str] = []
        for li in items:
            own = pieces[li][:_MAX_PIECES]
            nested = sorted((x for x in pieces if x.startswith(li + "/")), key=lambda x: pieces[x][0])
            firsts = [pieces[x][0] for x in nested]
            # nested action items inside this li ("Go to Settings:" > "Tap Network") are steps
            # of their own; nested remarks ("It's under Personal.") are part of this li's step
            actions = bool(firsts) and all(is_imperative(snippets[j].text) for j in firsts)
            if not actions:
                own = sorted(own + [j for x in nested for j in pieces[x]])[:_MAX_PIECES]
            positions.append(own[0])
            steps.append(_titled(strip_marker(snippets[own[0]].text)[1], [snippets[j].text for j in own[1:]], context))
            if actions:
                for x in nested:
                    positions.append(pieces[x][0])
                    steps.append(_join(snippets[j].text for j in pieces[x][:_MAX_PIECES]))
        blocks.append(Block("list", steps, positions, context=context))
    return _merge_split_lists(blocks, snippets)


def _shape(xpath: str) -> str:
    """An XPath without its positions: parallel elements share a shape."""
    return re.sub(r"\[\d+\]", "", xpath)


def _merge_split_lists(blocks: list[Block], snippets: Sequence[Snippet]) -> list[Block]:
    """One list split in several (a screenshot between every item, as editors do) is one list again.

    Two lists merge when nothing with text stands between them and they are
    siblings of the same kind.
    """
    blocks.sort(key=lambda b: b.first)
    out: list[Block] = []
    for b in blocks:
        if out:
            a = out[-1]
            last_a = max(a.positions)
            list_a = _parent(_nearest(snippets[a.first].xpath, ("li",)) or "")
            list_b = _parent(_nearest(snippets[b.first].xpath, ("li",)) or "")
            between = [j for j in range(last_a + 1, b.first) if _nearest(snippets[j].xpath, ("li",)) is None
                       and not _is_caption(snippets[j])]
            if (not between and b.first > last_a and _parent(list_a) == _parent(list_b)
                    and _shape(list_a) == _shape(list_b)):
                out[-1] = Block("list", a.steps + b.steps, a.positions + b.positions, context=a.context + b.context)
                continue
        out.append(b)
    return out


#: a line that credits or names a picture: "Screenshot 2", "Image: Lifewire", "(Photo credit: Google)"
_CREDIT = re.compile(r"^\W*(?:screenshot|image|photo|picture|credit|source|via)\b|©", re.I)


def _is_caption(s: Snippet) -> bool:
    """A screenshot's caption or credit between two parts of a split list. A short line such
    as "For Samsung phones" is not one: it starts another list."""
    if s.tag in _NOISE_TAGS or _nearest(s.xpath, ("figure",)) is not None:
        return True
    return s.tag not in HEADING_LEVELS and len(s.text.split()) <= 8 and bool(_CREDIT.search(s.text))


def _is_title(text: str) -> bool:
    """A short line without a full stop ("Examine the Blooms"): a title, not a sentence."""
    return len(text.split()) <= 10 and not text.rstrip().endswith((".", "!", "?", ":", ";", ","))


def _is_step_heading(s: Snippet, rest: str) -> bool:
    """A marker that heads a body: a heading tag, the word "step", a bare number, or "2. A short title"."""
    return (s.tag in HEADING_LEVELS or s.tag in ("dt", "summary") or not rest or s.text.lower().lstrip().startswith("step")
            or _is_title(rest))


def _common(a: str, b: str) -> str:
    """The XPath of the lowest common ancestor of two elements."""
    pa, pb = a.split("/"), b.split("/")
    n = 0
    while n < min(len(pa), len(pb)) and pa[n] == pb[n]:
        n += 1
    return "/".join(pa[:n])


def _step_body(snippets: Sequence[Snippet], i: int, stop: int, limit: int, scope: Optional[str] = None) -> list[int]:
    """Body snippets of the step heading at ``i``: following text in its section, up to ``stop``.

    The section is ``scope`` (the common ancestor of two step headings: sites wrap
    each paragraph in its own ``div``), by default the heading's parent.
    """
    scope = (scope if scope is not None else _parent(snippets[i].xpath)) + "/"
    bare = not strip_marker(snippets[i].text)[1]
    body: list[int] = []
    for j in range(i + 1, min(stop, len(snippets))):
        s = snippets[j]
        # a bare number ("Step 2", "3") may head a titled step: its first heading is the title
        title = bare and not body and s.tag in HEADING_LEVELS
        if (s.tag in HEADING_LEVELS and not title) or not s.xpath.startswith(scope) or len(body) >= limit:
            break
        if s.tag in _NOISE_TAGS or s.link:
            continue
        body.append(j)
    return body


def _numbered_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    blocks: list[Block] = []
    current: list[tuple[int, str]] = []  # (position, text after the marker)
    expected = 1

    def close() -> None:
        if len(current) >= 2:
            positions = [i for i, _ in current]
            headings = all(snippets[i].tag in HEADING_LEVELS and not snippets[i].text.lower().lstrip().startswith("step")
                           for i in positions)
            steps: list[str] = []
            context: list[str] = []
            longest = 0
            end = 0
            for n, (i, rest) in enumerate(current):
                if not _is_step_heading(snippets[i], rest):
                    steps.append(rest)
                    continue
                last = n + 1 == len(current)
                stop = current[n + 1][0] if not last else len(snippets)
                other = current[n + 1][0] if not last else current[n - 1][0]
                scope = _common(snippets[i].xpath, snippets[other].xpath)
                # the last step's body is about as long as the longest before it (none if they had none):
                # what follows is the article's end
                limit = (max(longest, 3) if longest else 0) if last else _MAX_PIECES
                body = _step_body(snippets, i, stop, limit, scope)
                if last and not longest:
                    # no step had a body, but the last one may go on in a paragraph of its own
                    # ("3. Tap Mobile networks." + "Slide the VoLTE switch on.", or what that does:
                    # "With Auto-Correction off, the phone stops changing words.")
                    tail = _step_body(snippets, i, stop, 2, scope)
                    body = tail[:next((k for k, j in enumerate(tail) if not is_imperative(snippets[j].text)
                                       and not _reads_as_prose(snippets[j].text)), len(tail))]
                longest = max(longest, len(body))
                end = max([end] + body)
                steps.append(_titled(rest, [snippets[j].text for j in body], context))
            kept = [(i, t) for i, t in zip(positions, steps) if t]
            if len(kept) >= 2:
                blocks.append(Block("numbered", [t for _, t in kept], [i for i, _ in kept], numbered_headings=headings,
                                    end=max([end] + positions), context=context))
        current.clear()

    for i, s in enumerate(snippets):
        if s.tag == "li" or s.link or _nearest(s.xpath, ("li", "table")) is not None:
            continue
        number, rest = strip_marker(s.text)
        if number is None:
            # a number set apart only by markup (<span class="num">2</span> Tap Display): a marker
            # when the numbers run on from 1, so "5 GHz networks are faster." alone is none
            bare = _BARE_NUMBER.match(s.text)
            if not bare or int(bare.group(1)) not in (1, expected):
                continue
            number, rest = int(bare.group(1)), s.text[bare.end():].strip()
        if number == 1 and current:
            close()
        if number == 1 or number == expected:
            current.append((i, rest))
            expected = number + 1
        else:
            close()
            expected = 1
    close()
    return blocks


_BARE_NUMBER = re.compile(r"^\s*(\d{1,2})\s+(?=[A-Z])")
_NUMBER_CELL = re.compile(r"^\s*(?:step\s*)?\d{1,2}\s*[.:)]?\s*$", re.I)


def _is_header_row(cells: list[str]) -> bool:
    """Column names: every cell a word or three, no sentence, no instruction, no number."""
    return bool(cells) and all(len(c.split()) <= 3 and not c.rstrip().endswith((".", "!", "?"))
                               and not is_imperative(c) and not re.search(r"\d", c) for c in cells)


def _table_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    """One step per table row; the step-number column and header rows are left out."""
    rows: dict[str, list[int]] = {}
    for i, s in enumerate(snippets):
        tr = _nearest(s.xpath, ("tr",))
        if tr is not None and s.tag not in _NOISE_TAGS and not s.link:
            rows.setdefault(tr, []).append(i)
    tables: dict[str, list[str]] = {}
    for tr in rows:
        table = _nearest(_parent(tr), ("table",)) or _parent(tr)
        tables.setdefault(table, []).append(tr)
    blocks = []
    for table, trs in tables.items():
        trs.sort(key=lambda tr: rows[tr][0])
        positions, steps = [], []
        for n, tr in enumerate(trs):
            cells = [j for j in rows[tr] if snippets[j].tag != "th" and _nearest(snippets[j].xpath, ("th",)) is None]
            if n == 0 and len(trs) > 2 and _is_header_row([snippets[j].text for j in cells]):
                continue  # a header written in plain cells ("Step | Action" in bold <td>s)
            cells = [j for j in cells if not _NUMBER_CELL.match(snippets[j].text)]
            if not cells:
                continue  # a header row, or a row holding only its number
            positions.append(cells[0])
            steps.append(_join([strip_marker(snippets[cells[0]].text)[1]] + [snippets[j].text for j in cells[1:]]))
        if len(steps) >= 2:
            blocks.append(Block("table", steps, positions))
    return blocks


def _deflist_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    """One step per ``dt``/``dd`` pair of a definition list (the term dropped when it is a number)."""
    lists: dict[str, list[int]] = {}
    for i, s in enumerate(snippets):
        if s.tag in ("dt", "dd") or (_nearest(s.xpath, ("dd",)) and s.tag not in _NOISE_TAGS):
            dl = _nearest(s.xpath, ("dl",))
            if dl is not None:
                lists.setdefault(dl, []).append(i)
    blocks = []
    for dl, members in lists.items():
        pairs: list[list[int]] = []
        for i in members:
            if snippets[i].tag == "dt" or not pairs:
                pairs.append([i])
            elif len(pairs[-1]) < _MAX_PIECES:
                pairs[-1].append(i)
        steps, positions = [], []
        for pair in pairs:
            head = strip_marker(snippets[pair[0]].text)[1] if snippets[pair[0]].tag == "dt" else snippets[pair[0]].text
            if _NUMBER_CELL.match(snippets[pair[0]].text):
                head = ""
            text = _join([head] + [snippets[j].text for j in pair[1:]])
            if text:
                steps.append(text)
                positions.append(pair[0])
        if len(steps) >= 2:
            blocks.append(Block("deflist", steps, positions))
    return blocks


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _next_part(text: str) -> tuple[str, str, str]:
    """(the words before the first ``_TAIL_END``, that separator, the rest); ("", "", "") pads."""
    part, sep, rest = (_TAIL_END.split(text, maxsplit=1) + ["", ""])[:3]
    return part, sep, rest


def _split_breadcrumb(text: str) -> Optional[tuple[list[str], bool, str]]:
    """"Go to Settings > Display > Dark theme and turn it on." ->
    (steps, told as an action?, the rest of the sentence: "turn it on")."""
    # arrows make the path; a spaced "/" between them is part of a name
    parts = (_ARROW_SEP if re.search(r"(?:>|→|->|»|›|⇒|=>|➔|▸|▶)", text) else _BREADCRUMB_SEP).split(text)
    if len(parts) < 2:
        return None
    head, middle, tail = parts[0], parts[1:-1], parts[-1]
    # "I went to Settings > Display > ..." tells what someone did: a story, not an instruction
    if _FIRST_PERSON.search(head):
        return None
    # the first part: the words after the lead-in ("go to"), at most four of them
    words = head.rstrip(" :,").split()
    start = max(0, len(words) - 4)
    for cut in range(len(words) - 1, -1, -1):
        if _LEAD_IN.search(" ".join(words[:cut]) + " "):
            start = cut
            break
    lead_in = " ".join(words[:start])
    first = " ".join(words[start:]).strip(" \"'“”")
    verb_match = _LEAD_IN.search(lead_in + " ")
    imperative_lead = bool(verb_match) and verb_match.group(0).split()[0].lower() not in ("in", "under")
    # the last part ends where the sentence goes on ("and turn it on", ", then")
    last, sep, after = _next_part(tail)
    # a comma or an "and" inside the last name: "Reset Wi-Fi, mobile & Bluetooth", "Backup and
    # restore" (the words after it are a short name that acts on nothing)
    while sep.strip().lower() in (",", "and"):
        named, more_sep, more = _next_part(after)
        if not named.strip() or len(named.split()) > 4 or is_imperative(named) or _CLAUSE_WORD.match(named):
            break
        last = f"{last}{sep}{named}"
        sep, after = more_sep, more
    rest = (sep + after).strip()
    rest = re.sub(r"^(?:and|then|,|;|:|\.)+\s*", "", rest, flags=re.I).strip()
    if rest.lower().startswith(("and ", "then ")):
        rest = rest.split(" ", 1)[1]
    path = [first] + [p.strip() for p in middle] + [last.strip(" \"'“”")]
    if any(not p or len(p.split()) > 6 for p in path):
        return None
    # a two-part path counts only after an action ("Open Settings > Display");
    # "I looked in Settings > Connections" is a story, not an instruction
    if len(path) < 3 and not imperative_lead:
        return None
    verb = verb_match.group(0).strip() if imperative_lead else "Open"
    steps = [f"{_capital(verb)} {path[0]}"]
    # a part that is already an action ("... and then tap Display") stays as written
    # ("Reset options", "Install unknown apps": a menu name in title case starting with a verb is tapped)
    steps += [_capital(p) if _NAV_VERB.match(p) or (is_imperative(p) and p[:1].islower()) else f"Tap {p}"
              for p in path[1:]]
    return steps, imperative_lead, rest


def _completes(s: Snippet, after: Snippet) -> bool:
    """Does ``s`` finish the instruction in ``after`` ("Disable it there.")?"""
    return (s.tag not in HEADING_LEVELS and s.tag != "li" and len(s.text.split()) <= 30
            and _parent(s.xpath) == _parent(after.xpath) and is_imperative(s.text))


def _breadcrumb_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    blocks = []
    for i, s in enumerate(snippets):
        if not _BREADCRUMB_SEP.search(s.text):
            continue
        sentences = [t for t in _SENTENCE.split(s.text) if t.strip()]
        for k, sentence in enumerate(sentences):
            found = _split_breadcrumb(sentence)
            if not found:
                continue
            steps, told_as_action, rest = found
            positions = [i]
            if len(rest.split()) >= 2:
                steps.append(_capital(rest))
            # the sentences that complete the path, in its paragraph or the next one
            following = [t for t in sentences[k + 1:k + 4]
                         if not _BREADCRUMB_SEP.search(t) and not t.rstrip().endswith("?")]
            steps += following
            if k + 1 == len(sentences) and i + 1 < len(snippets) and _completes(snippets[i + 1], s):
                steps.append(snippets[i + 1].text)
                positions.append(i + 1)
            blocks.append(Block("breadcrumb", steps, positions, howto_hint=1.0 if told_as_action else 0.6))
    return blocks


_CLAUSE = re.compile(r",\s*(?:and\s+|then\s+|and then\s+)?|\s+(?:and then|then|and)\s+", re.I)


def _names_a_control(clause: str) -> bool:
    """Does a clause act on something named: a capitalised name after the verb, or a UI word?"""
    words = clause.split()[1:]
    return any(w[:1].isupper() for w in words) or bool({w.lower().strip(".,") for w in words} & UI_WORDS)


def _is_action_chain(sentence: str) -> bool:
    """One sentence of several actions on named controls: "Open Settings, tap Display, and switch off X".

    "Just follow the guide and check our other articles" acts on nothing named: not a chain.
    """
    if len(sentence.split()) > 40 or not is_imperative(sentence):
        return False
    clauses = [c.strip() for c in _CLAUSE.split(sentence) if c and c.strip()]
    return sum(is_imperative(c) and _names_a_control(c) for c in clauses) >= 2


def _instruction_sentences(text: str) -> list[str]:
    """The sentences of a paragraph from its first instruction to its last one."""
    sentences = [t for t in _SENTENCE.split(text) if t.strip()]
    flags = [is_imperative(t) for t in sentences]
    if sum(flags) < 2:
        # one sentence of several actions is the telling's one instruction; the sentences
        # around it belong to it as they do to a run of instructions
        chains = [k for k, t in enumerate(sentences) if _is_action_chain(t)]
        if not chains:
            return []
        first = last = chains[0]
    else:
        first = flags.index(True)
        last = len(flags) - 1 - flags[::-1].index(True)
    first = _paragraph_start([(0, t) for t in sentences], first)
    last = _telling_end([(0, t) for t in sentences], last)
    return sentences[first:last + 1]


def _is_instruction_heading(text: str) -> bool:
    """A heading written as an instruction sentence ("Go to Settings, then Sound."), not a title
    ("Turn on Dark theme"): a page of one step puts its instruction there."""
    rest = strip_marker(text)[1]
    return rest.rstrip().endswith((".", "!")) and is_imperative(rest)


def _imperative_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    blocks = []
    run: list[int] = []

    def close() -> None:
        if len(run) >= 2:
            # one step per sentence: "Tap Call. Tap Wi-Fi Calling." in one paragraph is two steps
            pairs = [(i, t) for i in run for t in _SENTENCE.split(strip_marker(snippets[i].text)[1]) if t.strip()]
            blocks.append(Block("imperative", [t for _, t in pairs], [i for i, _ in pairs]))
        run.clear()

    for i, s in enumerate(snippets):
        if s.tag in HEADING_LEVELS or s.tag == "li":
            close()
            if s.tag in HEADING_LEVELS and _is_instruction_heading(s.text):
                run.append(i)  # "1. Go to Settings, then tap Wi-Fi." over the step's other sentences
            continue
        if s.tag in _NOISE_TAGS:
            continue  # a photo credit between two steps does not end them
        # cells and definition-list parts are steps of their own table or list block
        structured = s.tag in ("dt", "dd", "td", "th") or _nearest(s.xpath, ("td", "th", "dd")) is not None
        if structured:
            close()
        elif is_imperative(s.text):
            prev = snippets[run[-1]].xpath if run else ""
            # paragraphs of one section, or of parallel containers (one tip per <div class="step">)
            if run and _parent(prev) != _parent(s.xpath) and prev != s.xpath and _shape(prev) != _shape(s.xpath):
                close()
            run.append(i)
        else:
            close()
        # one paragraph of several instructions: "Open Settings. Tap Display. Turn on Dark theme."
        steps = _instruction_sentences(s.text)
        if steps:
            blocks.append(Block("imperative", steps, [i]))
    close()
    return blocks


#: tags that end a run of prose: a heading, a disclosure's question, a list item, a cell
_PROSE_BREAK = ("summary", "li", "dt", "dd", "td", "th")


def _paragraph_start(sentences: Sequence[tuple[int, str]], first: int, most: int = 3) -> int:
    """Where the telling starts: the first instruction's paragraph from its start, when only a
    sentence or three ("On Android 11 the menu moved.") stand before it."""
    start = first
    while start > 0 and sentences[start - 1][0] == sentences[first][0] and first - start < most:
        start -= 1
    return start if start == 0 or sentences[start - 1][0] != sentences[first][0] else first


#: at most this many sentences after the last instruction still belong to it
_TRAILING = 6
#: an instruction that announces what follows ("Select one of the following options:")
_ANNOUNCES = re.compile(r"\bfollowing\b[^.!?]{0,40}:|:\s*$", re.I)


def _telling_end(sentences: Sequence[tuple[int, str]], last: int) -> int:
    """Where the telling ends: the sentences after the last instruction ("It's toward the bottom
    of the screen.", the options it offers, "Your TV should start mirroring."), at most
    ``_TRAILING``. They run on into the section's later paragraphs, as a list's last items do:
    the section is the answer, and on real help pages its closing sentences belong to the steps.
    A question ("Still stuck?"), a line that is no sentence (a byline), another route ("On some
    phones it is under ...") or a remark on the page ("Names can differ between makers.") ends them."""
    end = last
    # "Select one of the following options:" -- the options follow, sentences or not
    announces = bool(_ANNOUNCES.search(sentences[last][1]))
    while (end + 1 < len(sentences) and end - last < _TRAILING
           and not sentences[end + 1][1].rstrip().endswith("?")
           and (announces or sentences[end + 1][0] == sentences[last][0]
                or _reads_as_prose(sentences[end + 1][1]))):
        end += 1
    return end


def _reads_as_prose(text: str) -> bool:
    """A sentence of the telling, not a byline or a caption ("answered by helper_pro"), nor
    another route told after the steps ("On some phones it is under Connections > More.")."""
    return (len(text.split()) >= 4 and text.rstrip().endswith((".", "!", ")", '"', "'"))
            and not _ARROW_SEP.search(text) and not _ANOTHER_ROUTE.match(text) and not _CAVEAT.search(text))


#: a remark on the page itself after the steps: "The exact names can differ between phone makers."
_CAVEAT = re.compile(r"\b(?:differ|differs|vary|varies|may look different|might look different)\b", re.I)
#: a paragraph that offers another way or another phone, after the steps
_ANOTHER_ROUTE = re.compile(r"^\W*(?:alternatively|or,|otherwise|on (?:some|other|older|newer) (?:phones|devices|"
                            r"models|versions)|(?:some|other|older) (?:phones|devices|models))\b", re.I)


def _prose_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    """A how-to told as prose: the sentences of consecutive paragraphs, one step per sentence.

    The paragraphs belong to one section (or to parallel containers: one answer
    per ``div``); a heading, a "label:" line, a list or a table ends them. The
    block runs from the first sentence that reads as an instruction to the last
    ("If you don't see it, ..." and "You will see a pop-up." between them stay:
    they are part of the telling).
    """
    blocks: list[Block] = []
    run: list[int] = []

    def close() -> None:
        if len(run) >= 2:
            # one step per sentence; a step number on its own line ("1.") is no sentence
            sentences = [(i, strip_marker(t)[1]) for i in run for t in _SENTENCE.split(snippets[i].text)
                         if strip_marker(t)[1]]
            flags = [is_imperative(t) for _, t in sentences]
            if sum(flags) >= 2:
                first, last = flags.index(True), len(flags) - 1 - flags[::-1].index(True)
                first = _paragraph_start(sentences, first)
                last = _telling_end(sentences, last)
                kept = sentences[first:last + 1]
                if len({i for i, _ in kept}) >= 2:  # one paragraph alone is an imperative block
                    blocks.append(Block("prose", [t for _, t in kept], [i for i, _ in kept]))
        run.clear()

    for i, s in enumerate(snippets):
        if s.tag in _NOISE_TAGS:
            continue
        if (s.tag in HEADING_LEVELS or s.tag in _PROSE_BREAK or s.link or _is_label(s)
                or _nearest(s.xpath, _PROSE_BREAK) is not None):
            close()
            continue
        if run:
            prev = snippets[run[-1]].xpath
            if _parent(prev) != _parent(s.xpath) and prev != s.xpath and _shape(prev) != _shape(s.xpath):
                close()
        run.append(i)
    close()
    return blocks


#: headings that are not actions ("In most cases, you'll need a password.") may sit between
#: two action headings of one run, at most this many in a row
_MAX_HEADING_GAP = 3


def _higher_between(snippets: Sequence[Snippet], a: int, b: int, tag: str) -> bool:
    """Is there a heading above ``tag``'s level strictly between positions ``a`` and ``b``?"""
    return any(HEADING_LEVELS.get(snippets[j].tag, 9) < HEADING_LEVELS[tag] for j in range(a + 1, b))


def _telling_headings(snippets: Sequence[Snippet], heads: list[int], run: list[int], tag: str) -> list[int]:
    """Headings after a run's last action that go on telling in sentences ("Under Location, you
    can see what the app asked for."), at most ``_MAX_HEADING_GAP``; a title ("Troubleshooting"),
    a question or a higher heading ends the steps."""
    after = [i for i in heads if i > run[-1]][:_MAX_HEADING_GAP]
    out: list[int] = []
    for i in after:
        prev = out[-1] if out else run[-1]
        if _higher_between(snippets, prev, i, tag) or is_imperative(snippets[i].text) or not _reads_as_prose(snippets[i].text):
            break
        out.append(i)
    return out


def _heading_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    """Unnumbered sibling headings that read as actions, each with its body ("Make a List..." + paragraphs)."""
    # sibling headings, or headings of parallel containers (one <div class="step"> each)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, s in enumerate(snippets):
        if s.tag in HEADING_LEVELS and not s.link:
            groups.setdefault((_shape(s.xpath), s.tag), []).append(i)
    blocks = []
    for (_, tag), heads in groups.items():
        if len(heads) < 2:
            continue
        # runs of action headings; a higher heading between two ends the run, and so do
        # _MAX_HEADING_GAP headings in a row that are not actions ("If it is missing" may sit between steps)
        runs: list[list[int]] = [[]]
        gap: list[int] = []
        for i in heads:
            higher = runs[-1] and _higher_between(snippets, runs[-1][-1], i, tag)
            if higher or len(gap) >= _MAX_HEADING_GAP:
                runs.append([])
                gap = []
            if is_imperative(snippets[i].text) and strip_marker(snippets[i].text)[0] is None:
                runs[-1] += gap + [i] if runs[-1] else [i]
                gap = []
            elif runs[-1]:
                gap.append(i)
        for run in runs:
            if not run:
                continue
            # three action titles, or two written as sentences ("Open the Settings app."), or one
            # instruction sentence whose sibling headings go on telling the steps ("Go to Settings >
            # Accessibility." then "Speaking Rate: Drag the slider."), which only holds a better block
            sentences = all(snippets[i].text.rstrip().endswith((".", "!")) for i in run)
            telling = _telling_headings(snippets, heads, run, tag)
            one = len(run) == 1 and bool(telling) and _is_instruction_heading(snippets[run[0]].text)
            if len(run) < 3 and not (len(run) == 2 and sentences) and not one:
                continue
            run = run + telling
            steps, longest, end = [], 0, 0
            context: list[str] = []
            for n, i in enumerate(run):
                last = n + 1 == len(run)
                stop = run[n + 1] if not last else len(snippets)
                body = _step_body(snippets, i, stop, max(longest, 3) if last else 12)
                longest = max(longest, len(body))
                end = max([end] + body)
                steps.append(_titled(snippets[i].text, [snippets[j].text for j in body], context))
            blocks.append(Block("headings", steps, run, end=max(end, run[-1]), context=context, holder_only=one))
    return blocks


def find_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    """Every candidate block of the page, each with its heading context, in page order."""
    blocks = (_list_blocks(snippets) + _numbered_blocks(snippets) + _table_blocks(snippets)
              + _deflist_blocks(snippets) + _heading_blocks(snippets) + _breadcrumb_blocks(snippets)
              + _imperative_blocks(snippets) + _prose_blocks(snippets))
    context = heading_context(snippets)
    for b in blocks:
        path = context[b.first]
        b.heading_path = path
        b.heading = path[-1] if path else ""
        prev = b.first - 1
        if prev >= 0 and snippets[prev].tag not in HEADING_LEVELS and len(snippets[prev].text.split()) <= 25:
            b.lead = snippets[prev].text
    blocks.sort(key=lambda b: (b.first, b.kind))
    return blocks
