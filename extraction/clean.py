"""Turn a raw HTML page into a :class:`CleanedPage`: cleaned HTML plus text snippets.

The steps, top to bottom:

1. decode and parse with lxml (forgiving: unclosed tags are fine; bytes that
   are not a document raise :class:`ExtractionError` with the reason);
2. stamp every element with its absolute XPath in the *original* DOM
   (``tree.getpath``), so whatever cleaning removes or unwraps later, every
   snippet still points at the element it came from in the page as served;
3. drop what a reader never sees or never reads for instructions: hidden
   elements (``hidden``, ``aria-hidden="true"``, inline ``display:none`` /
   ``visibility:hidden``, text moved off-screen), site chrome (``nav``,
   ``aside``, page-level ``header``/``footer``, breadcrumb trails, ARIA
   navigation landmarks, and elements whose class or id names furniture:
   sidebars, cookie banners, related-article lists, comment threads, share
   bars), then scripts, styles, comments, forms, embeds and frames
   (``lxml_html_clean``). Hidden content that a click reveals is *kept*: the
   body of a ``<details>``, and any hidden panel a control on the page points
   at (``aria-controls``, ``data-target``/``data-bs-target``, ``href="#id"``)
   or that names its control (``aria-labelledby``), and ``hidden="until-found"``.
   The controls themselves (``<button aria-expanded>``) become headings, so a
   FAQ answer sits under its question. Kept hidden text is as untrusted as
   visible text: the execution stage's safety policy judges every step;
4. walk the cleaned tree in document order and emit one snippet per run of
   text of a block-level element (``p``, ``li``, ``h1``-``h6``, ``td``...),
   with the element's original XPath and tag; nested blocks make their own
   snippets and ``<br>`` separates runs, so each snippet is a contiguous piece
   of text of its element.

The XPaths are lxml's: they resolve in a tree parsed by lxml from the same
bytes (a browser may build a slightly different DOM, e.g. add ``tbody``).
"""

from __future__ import annotations

import re
from typing import Optional

import lxml.etree
import lxml.html
from lxml_html_clean import Cleaner

from verirank_core.extraction_config import CleanConfig
from verirank_core.extraction_records import CleanedPage, Snippet
from verirank_core.errors import ExtractionError

__all__ = ["clean_page", "decode_html", "BLOCK_TAGS", "XPATH_ATTR"]

#: attribute carrying an element's original XPath while the page is cleaned
XPATH_ATTR = "data-vr-xp"

#: elements whose text forms its own snippet
BLOCK_TAGS = frozenset({
    "p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dt", "dd", "pre",
    "blockquote", "figcaption", "caption", "div", "section", "article", "main",
    "summary", "details", "address", "ol", "ul", "dl", "table", "tr", "tbody",
    "thead", "tfoot", "body", "figure", "center", "form", "fieldset", "legend",
    "hr", "header", "footer",
})

#: removed with their content before anything else (never read for instructions)
CHROME_TAGS = ("nav", "aside", "noscript", "template", "svg", "canvas", "video",
               "audio", "picture", "dialog", "menu")
#: header/footer are site chrome at page level, but part of an article inside one
_ARTICLE_TAGS = ("article", "main")
_NAV_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary"}
_HIDDEN_STYLE = re.compile(r"(display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
#: styles that hide text for good: moved off-screen, zero size, clipped away, transparent
_OFFSCREEN_STYLE = re.compile(
    r"((?:left|top|right|text-indent|margin-left)\s*:\s*-\s*\d{3,}|font-size\s*:\s*0(?![.\d])|"
    r"opacity\s*:\s*0(?![.\d])|clip\s*:\s*rect\(\s*0|color\s*:\s*transparent)", re.I)
_CHROME_CLASS = re.compile(r"(^|[\s_-])(breadcrumbs?|cookie-banner|skip-link|sr-only|visually-hidden)($|[\s_-])", re.I)
#: class or id words of page furniture (a forum post's user panel and signature too):
#: distinctive words match as a prefix
#: ("relatedPosts", "sidebar-left"), short ones only as a whole token ("ads", "menu")
_FURNITURE = re.compile(
    r"(?:^|[\s_-])(?:(?:sidebar|side-bar|cookie|consent|gdpr|newsletter|related|recommended|disqus|"
    r"advert|sponsored|trending|popular-posts|more-stories|read-next|up-next|table-of-contents|author-bio|"
    r"comments|commentlist|comment-list|comments-area|comment-section|social|sharing|"
    r"signature|postprofile|post-profile|userinfo|user-info)"
    r"|(?:ads|ad-slot|share|promo|widget|menu|navbar|site-nav|site-header|site-footer|masthead|toc|"
    r"subscribe|respond|sig)(?:$|[\s_-]))", re.I)
#: whole class or id tokens of the content itself (never dropped as furniture;
#: "sidebar-content" is still a sidebar)
_CONTENT_CLASS = re.compile(r"^(?:answer|answers|accepted-answer|answercell|solution|reply|replies|post-body|post-content|"
                            r"article-body|article-content|entry-content|main-content|content|post|message)$", re.I)
#: class or id words of a disclosure panel ("faq-answer", "accordion-body", "collapse")
_PANEL_CLASS = re.compile(r"accordion|collaps|faq|answer|panel|toggle|expand|disclosure|reveal|spoiler|dropdown-content",
                          re.I)
_INLINE_TAGS = frozenset({"span", "i", "b", "em", "strong", "small", "svg", "abbr", "sup", "sub", "kbd", "code"})
_TARGET_ATTRS = ("aria-controls", "data-target", "data-bs-target", "data-toggle-target", "href")
_WS = re.compile(r"\s+")
_STRAY_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


# --- decoding ---------------------------------------------------------------------


def decode_html(data: str | bytes, encoding: Optional[str] = None) -> str:
    """Bytes to text: BOM, then ``encoding``, then ``<meta charset>``, then UTF-8.

    Raises ExtractionError when the result is clearly not a text document
    (many control characters or undecodable bytes).
    """
    if isinstance(data, str):
        text = data
    else:
        text = _decode_bytes(data, encoding)
    if not text.strip():
        raise ExtractionError("the page is empty")
    sample = text[:20_000]
    bad = sum(1 for ch in sample if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f"))
    if bad > 0.05 * len(sample):
        raise ExtractionError(
            f"the page does not look like text ({bad} of the first {len(sample)} characters "
            "are control characters or undecodable bytes)"
        )
    # a few stray NUL/control characters: drop them (lxml refuses them in text)
    return _STRAY_CONTROLS.sub("", text)


def _decode_bytes(data: bytes, encoding: Optional[str]) -> str:
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(codec, errors="replace")
    candidates = [encoding] if encoding else []
    found = _META_CHARSET.search(data[:4096])
    if found:
        candidates.append(found.group(1).decode("ascii", "ignore"))
    candidates.append("utf-8")
    for codec in candidates:
        try:
            return data.decode(codec)
        except (LookupError, UnicodeDecodeError):
            continue
    # not valid in any declared encoding: keep what decodes, mark the rest
    return data.decode(candidates[0] if _known_codec(candidates[0]) else "utf-8", errors="replace")


def _known_codec(name: str) -> bool:
    import codecs

    try:
        codecs.lookup(name)
        return True
    except LookupError:
        return False


# --- parsing and annotating ------------------------------------------------------------


def _parse(text: str) -> lxml.html.HtmlElement:
    # lxml refuses str input that carries an XML encoding declaration
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text, count=1)
    parser = lxml.html.HTMLParser(huge_tree=True, remove_blank_text=False)
    try:
        root = lxml.html.document_fromstring(text, parser=parser)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise ExtractionError(f"the HTML cannot be parsed: {exc}") from exc
    if root is None:
        raise ExtractionError("the HTML cannot be parsed: no root element")
    return root


_SIMPLE_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")


def _annotate_xpaths(root: lxml.html.HtmlElement) -> None:
    """Stamp each element with the XPath ``tree.getpath`` would give it.

    Built top-down with per-parent tag counts: ``getpath`` itself scans the
    siblings for every call, which is quadratic on a page of 40,000 paragraphs.
    Odd tags (``o:p`` from word processors) fall back to ``getpath``.
    """
    tree = root.getroottree()
    root.set(XPATH_ATTR, tree.getpath(root))
    stack = [root]
    while stack:
        parent = stack.pop()
        base = parent.get(XPATH_ATTR)
        children = [c for c in parent if isinstance(c.tag, str)]
        totals: dict[str, int] = {}
        for child in children:
            totals[child.tag] = totals.get(child.tag, 0) + 1
        seen: dict[str, int] = {}
        for child in children:
            tag = child.tag
            if not _SIMPLE_TAG.match(tag):
                child.set(XPATH_ATTR, tree.getpath(child))
            else:
                seen[tag] = seen.get(tag, 0) + 1
                step = tag if totals[tag] == 1 else f"{tag}[{seen[tag]}]"
                child.set(XPATH_ATTR, f"{base}/{step}")
            stack.append(child)


# --- metadata --------------------------------------------------------------------------


def _title(root: lxml.html.HtmlElement, title_hint: str) -> str:
    for path in ("//title", "//meta[@property='og:title']/@content", "//h1"):
        for found in root.xpath(path):
            text = found if isinstance(found, str) else found.text_content()
            text = _WS.sub(" ", text).strip()
            if text:
                return text
    return title_hint.strip()


def _lang(root: lxml.html.HtmlElement) -> Optional[str]:
    lang = (root.get("lang") or root.get("xml:lang") or "").strip().lower()
    if not lang:
        for found in root.xpath("//meta[@http-equiv='content-language']/@content"):
            lang = found.strip().lower()
            break
    # keep the primary subtag: "de-DE" -> "de"
    primary = re.split(r"[-_]", lang, maxsplit=1)[0] if lang else ""
    return primary or None


# --- removing what a reader does not see -------------------------------------------


def _disclosure_ids(scope: lxml.html.HtmlElement) -> tuple[set[str], set[str], set[str]]:
    """Ids of panels a control on the page reveals, ids of the controls themselves, and ids
    that a panel names as its control (``aria-labelledby``).

    A control points at its panel (``aria-controls``, ``data-target``,
    ``data-bs-target``, or an in-page ``href`` on a toggle); a panel may name
    its control instead (``aria-labelledby`` -> an element with ``aria-expanded``).
    """
    panels: set[str] = set()
    controls: set[str] = set()
    named: set[str] = set()
    for el in scope.iter():
        if not isinstance(el.tag, str):
            continue
        named.update((el.get("aria-labelledby") or "").split())
        toggle = el.get("aria-expanded") is not None or el.get("data-toggle") or el.get("data-bs-toggle")
        if toggle and el.get("id"):
            controls.add(el.get("id"))
        for attr in _TARGET_ATTRS:
            value = (el.get(attr) or "").strip()
            if not value or (attr == "href" and (not toggle or not value.startswith("#"))):
                continue
            panels.update(v.lstrip("#") for v in value.split())
    return panels, controls, named


def _hidden_how(el: lxml.html.HtmlElement) -> Optional[str]:
    """``"toggle"`` for hiding a click can undo, ``"gone"`` for hiding for good, None if visible."""
    if el.get("hidden") is not None:
        return "toggle"
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        # aria-hidden hides from screen readers only: a decorative "›" between menu
        # names is on screen (and part of the path)
        if el.tag in _INLINE_TAGS and len(el.text_content().strip()) <= 3:
            return None
        return "toggle"
    style = el.get("style") or ""
    if _OFFSCREEN_STYLE.search(style):
        return "gone"
    if _HIDDEN_STYLE.search(style):
        return "toggle"
    if el.tag == "input" and (el.get("type") or "").lower() == "hidden":
        return "gone"
    return None


def _is_control(el: Optional[lxml.html.HtmlElement]) -> bool:
    """A disclosure control: a button, ``role=button``, ``aria-expanded``, ``summary``, or a heading holding one."""
    if el is None or not isinstance(el.tag, str):
        return False
    if el.tag in ("button", "summary") or el.get("aria-expanded") is not None \
            or (el.get("role") or "").lower() == "button":
        return True
    return any(_is_control(c) for c in el.iterchildren() if isinstance(c.tag, str))


def _is_revealable(el: lxml.html.HtmlElement, revealable: set[str], controllers: set[str],
                   claimed: set[str] = frozenset()) -> bool:
    """Hidden until a click: a disclosure panel a control on the page points at (or names), a
    hidden element right after an ``aria-expanded`` control, or a panel named like one right
    after its control or its title (script-driven FAQ widgets without ARIA)."""
    if (el.get("hidden") or "").strip().lower() == "until-found":
        return True
    if el.get("id") and el.get("id") in revealable:
        return True
    labelled = (el.get("aria-labelledby") or "").split()
    if any(i in controllers for i in labelled):
        return True
    named = _PANEL_CLASS.search(f"{el.get('class') or ''} {el.get('id') or ''}")
    control = el.getprevious()
    # right after a control that says it expands something ("aria-expanded"), a hidden
    # element is its panel whatever its class; after a plain button, only one named like a panel
    if _is_control(control):
        return bool(named) or _expands_what_follows(control, claimed)
    # script-driven FAQs without ARIA: "faq-question" (or an <h3>) over a "faq-answer" hidden by style
    return bool(named) and _is_panel_title(control)


#: an element that titles the panel after it, in a script-driven widget without ARIA
_TITLE_CLASS = re.compile(r"question|title|header|heading|trigger|handle|summary|label", re.I)


def _is_panel_title(el: Optional[lxml.html.HtmlElement]) -> bool:
    if el is None or not isinstance(el.tag, str):
        return False
    return el.tag in ("h2", "h3", "h4", "h5", "h6", "dt") or bool(
        _TITLE_CLASS.search(f"{el.get('class') or ''} {el.get('id') or ''}"))


def _expands_what_follows(el: Optional[lxml.html.HtmlElement], claimed: set[str]) -> bool:
    """A control that says it expands something (``aria-expanded``) without naming what: its panel
    is what follows it. One that names its panel, or that a panel names, expands only that one."""
    if el is None or not isinstance(el.tag, str):
        return False
    toggles = [d for d in el.iter() if isinstance(d.tag, str) and d.get("aria-expanded") is not None]
    return bool(toggles) and not any(
        d.get("id") in claimed or any((d.get(a) or "").strip() for a in _TARGET_ATTRS) for d in toggles)


def _is_hidden(el: lxml.html.HtmlElement, revealable: set[str] = frozenset(),
               controllers: set[str] = frozenset(), claimed: set[str] = frozenset()) -> bool:
    how = _hidden_how(el)
    if how is None:
        return False
    if how == "gone":
        return True
    # visibility:hidden is a disclosure only when a control points at the panel;
    # hidden/aria-hidden/display:none panels likewise, or inside <details>
    return not _is_revealable(el, revealable, controllers, claimed)


def _is_chrome(el: lxml.html.HtmlElement) -> bool:
    tag = el.tag
    if tag in CHROME_TAGS:
        return True
    if (el.get("role") or "").strip().lower() in _NAV_ROLES:
        return True
    if _CHROME_CLASS.search(el.get("class") or "") or _CHROME_CLASS.search(el.get("id") or ""):
        return True
    if tag in ("header", "footer"):
        return not any(a.tag in _ARTICLE_TAGS for a in el.iterancestors())
    return False


def _is_furniture(el: lxml.html.HtmlElement, body_chars: int) -> bool:
    """A block named like site furniture (sidebar, related posts, comments) that is not the page's content."""
    if el.tag in ("body", "main", "article", "html", "li", "p", "span", "a", "h1", "h2", "h3", "h4", "td", "tr"):
        return False
    names = f"{el.get('class') or ''} {el.get('id') or ''}"
    if not _FURNITURE.search(names) or any(_CONTENT_CLASS.match(token) for token in names.split()):
        return False
    # a wrapper named "has-sidebar" around the article is not furniture
    if el.find(".//h1") is not None or el.find(".//article") is not None or el.find(".//main") is not None:
        return False
    return len(el.text_content()) < 0.5 * body_chars


def _open_disclosures(scope: lxml.html.HtmlElement) -> None:
    """Turn disclosure controls (kept out by the cleaner as buttons) into headings over their panels."""
    for el in list(scope.iter("button", "a", "div", "span")):
        if el.get("aria-expanded") is None and el.get("aria-controls") is None:
            continue
        if not el.text_content().strip():
            continue
        in_heading = any(a.tag in ("h1", "h2", "h3", "h4", "h5", "h6", "summary", "dt") for a in el.iterancestors())
        if el.tag == "button" or el.tag == "a":
            el.tag = "span" if in_heading else "h5"
        elif el.tag == "div" and not in_heading and not any(
                isinstance(c.tag, str) and c.tag in BLOCK_TAGS for c in el.iterdescendants()):
            # <div role="button" aria-expanded> holding only its question (no snippet of its own
            # inside): a heading over its panel
            el.tag = "h5"
        for attr in ("aria-expanded", "aria-controls", "href"):
            el.attrib.pop(attr, None)


def _drop_invisible(root: lxml.html.HtmlElement) -> None:
    body = root.find("body")
    scope = body if body is not None else root
    revealable, controllers, claimed = _disclosure_ids(scope)
    body_chars = len(scope.text_content())
    doomed = [el for el in scope.iter() if isinstance(el.tag, str) and el is not scope
              and (_is_hidden(el, revealable, controllers, claimed) or _is_chrome(el) or _is_furniture(el, body_chars))]
    for el in doomed:
        # an ancestor may already be gone; removing a detached subtree is harmless
        if el.getparent() is not None:
            el.drop_tree()
    _open_disclosures(scope)


def _cleaner() -> Cleaner:
    return Cleaner(
        scripts=True, javascript=True, comments=True, style=True, inline_style=True,
        links=True, meta=True, page_structure=False, processing_instructions=True,
        embedded=True, frames=True, forms=True, annoying_tags=True,
        kill_tags=("button", "select", "option", "textarea", "input", "iframe", "object",
                   "embed", "img", "map", "area"),
        remove_unknown_tags=False, safe_attrs_only=True,
        safe_attrs=frozenset({XPATH_ATTR}),
    )


# --- snippets ---------------------------------------------------------------------------


def _snippets(body: lxml.html.HtmlElement, min_chars: int) -> list[Snippet]:
    """Text runs of block elements in document order, each with its element's original XPath.

    One pass over the tree with an explicit stack (deeply nested markup must
    not hit the recursion limit). Text of a block element is collected until
    a nested block or a ``<br>`` starts; then the run is emitted, so a parent's
    text before and after a nested list become two snippets in page order.
    """
    out: list[Snippet] = []
    # one open context per enclosing block element: [xpath, tag, (text, inside <a>?) pieces]
    contexts: list[list] = []
    in_link = 0

    def flush() -> None:
        if not contexts:
            return
        xpath, tag, buf = contexts[-1]
        text = _WS.sub(" ", "".join(t for t, _ in buf)).strip()
        link = all(linked for t, linked in buf if t.strip())
        buf.clear()
        # a lone digit is kept: it is the number of a step ("<span class=num>3</span>")
        if len(text) >= min_chars or text.isdigit():
            out.append(Snippet(index=len(out), xpath=xpath, text=text, tag=tag, link=link))

    def add(text: Optional[str]) -> None:
        if text and contexts:
            contexts[-1][2].append((text, in_link > 0))

    stack: list[tuple[lxml.html.HtmlElement, bool]] = [(body, False)]
    while stack:
        node, closing = stack.pop()
        is_block = isinstance(node.tag, str) and (node.tag in BLOCK_TAGS or node is body)
        if closing:
            if is_block:
                flush()
                contexts.pop()
            if node.tag == "a":
                in_link -= 1
            if node is not body:
                add(node.tail)
            continue
        if not isinstance(node.tag, str):  # a comment or processing instruction left over
            add(node.tail)
            continue
        if node.tag == "br":
            flush()
            add(node.tail)
            continue
        if is_block:
            flush()
            contexts.append([_original_xpath(node), node.tag, []])
        if node.tag == "a":
            in_link += 1
        add(node.text)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node))
    return out


def _original_xpath(el: lxml.html.HtmlElement) -> str:
    xpath = el.get(XPATH_ATTR)
    if xpath:
        return xpath
    # created by the parser's repair of a broken page: name the nearest original ancestor
    return next((a.get(XPATH_ATTR) for a in el.iterancestors() if a.get(XPATH_ATTR)), "/html")


def _cleaned_html(body: lxml.html.HtmlElement, max_chars: int) -> str:
    for el in body.iter():
        if isinstance(el.tag, str):
            el.attrib.pop(XPATH_ATTR, None)
    html = lxml.html.tostring(body, encoding="unicode", method="html")
    html = re.sub(r"\n\s*\n+", "\n", html)
    return html[:max_chars]


# --- the public function --------------------------------------------------------------


def clean_page(
    html: str | bytes,
    *,
    url: str,
    qid: str,
    title_hint: str = "",
    config: CleanConfig = CleanConfig(),
    encoding: Optional[str] = None,
) -> CleanedPage:
    """Clean one page; raise ExtractionError (with the reason) when it is not usable HTML."""
    text = decode_html(html, encoding)
    root = _parse(text)
    _annotate_xpaths(root)
    title = _title(root, title_hint)
    lang = _lang(root)
    _drop_invisible(root)
    try:
        _cleaner()(root)
    except (ValueError, TypeError, lxml.etree.LxmlError) as exc:
        raise ExtractionError(f"the HTML cannot be cleaned: {exc}") from exc
    body = root.find("body")
    if body is None:
        body = root
    snippets = _snippets(body, config.min_snippet_chars)
    if not snippets and not title:
        raise ExtractionError("the page has no visible text")
    return CleanedPage(
        qid=qid, url=url, title=title, lang=lang,
        html=_cleaned_html(body, config.max_llm_chars), snippets=snippets,
    )
