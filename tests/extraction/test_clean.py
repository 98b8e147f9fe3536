"""clean_page: snippets with XPaths into the original DOM, hidden text and chrome removed."""

from __future__ import annotations

import os
import re
from pathlib import Path

import lxml.html
import pytest

from extraction.clean import XPATH_ATTR, clean_page
from extraction.config import CleanConfig
from verirank.errors import ExtractionError

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"
ALL_PAGES = sorted(p.name for p in PAGES.glob("*.html"))


def test_the_fixture_pages_are_there():
    # the parametrized tests below would pass vacuously on an empty folder
    assert len(ALL_PAGES) >= 10, PAGES


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _clean(name: str):
    return clean_page((PAGES / name).read_bytes(), url=f"http://site.test/{name}", qid="q")


@pytest.mark.parametrize("name", ALL_PAGES)
def test_every_snippet_xpath_resolves_in_the_original_dom_to_its_text(name):
    page = _clean(name)
    original = lxml.html.document_fromstring((PAGES / name).read_bytes())
    assert page.snippets, f"{name} produced no snippets"
    for s in page.snippets:
        found = original.xpath(s.xpath)
        assert len(found) == 1, f"{s.xpath} matches {len(found)} elements in {name}"
        element = found[0]
        assert element.tag == s.tag
        assert _squash(s.text) in _squash(element.text_content()), (s.xpath, s.text)


@pytest.mark.parametrize("name", ALL_PAGES)
def test_snippets_are_in_document_order_and_numbered(name):
    page = _clean(name)
    assert [s.index for s in page.snippets] == list(range(len(page.snippets)))
    original = lxml.html.document_fromstring((PAGES / name).read_bytes())
    order = {el: n for n, el in enumerate(original.iter())}
    # the first snippet of each element comes in the elements' document order
    firsts = []
    for s in page.snippets:
        pos = order[original.xpath(s.xpath)[0]]
        if pos not in firsts:
            firsts.append(pos)
    assert firsts == sorted(firsts)


def test_hidden_chrome_and_scripts_are_removed_but_content_kept():
    page = _clean("help_centre_dark_theme.html")
    texts = " ".join(s.text for s in page.snippets)
    for gone in ("Try our new phone today",        # style="display:none"
                 "Was this helpful",               # aria-hidden="true"
                 "Get started",                    # <nav>
                 "Ask the community",              # <aside>
                 "Privacy Policy",                 # page-level <footer>
                 "We use cookies",                 # cookie banner
                 "dataLayer", "color: red"):       # script, style
        assert gone not in texts
        assert gone not in page.html
    assert "Tap Display." in texts
    assert "On some phones this is called Display & brightness." in texts
    assert XPATH_ATTR not in page.html
    assert "<script" not in page.html and "<style" not in page.html


def test_hierarchy_is_kept_in_the_html_and_in_the_xpaths():
    page = _clean("help_centre_dark_theme.html")
    tree = lxml.html.fromstring(page.html)
    nested = tree.xpath("//ol/li/ul/li")
    assert [el.text_content() for el in nested] == ["On some phones this is called Display & brightness."]
    by_text = {s.text: s for s in page.snippets}
    outer = by_text["Tap Display."]
    inner = by_text["On some phones this is called Display & brightness."]
    assert inner.xpath.startswith(outer.xpath + "/ul/")
    assert outer.tag == "li" and outer.xpath.endswith("/ol[1]/li[2]")


def test_title_and_language():
    page = _clean("german_dark_mode.html")
    assert page.lang == "de"
    assert page.title.startswith("Android: Dunkelmodus")
    assert _clean("broken_html_forget_wifi.html").lang is None
    no_title = clean_page("<html><body><h1>Heading here</h1><p>text</p></body></html>", url="u", qid="q")
    assert no_title.title == "Heading here"
    og = clean_page('<html><head><meta property="og:title" content="From OG"></head><body><p>x y</p></body></html>',
                    url="u", qid="q")
    assert og.title == "From OG"


def test_broken_html_still_yields_its_steps():
    page = _clean("broken_html_forget_wifi.html")
    texts = [s.text for s in page.snippets]
    assert texts[2:6] == ["Open Settings", "Tap Network & internet, then Internet",
                          "Touch and hold the network name", "Tap Forget"]
    assert all(s.tag == "li" for s in page.snippets[2:6])


def test_br_lines_become_separate_snippets_of_one_element():
    page = _clean("forum_answer_bluetooth_name.html")
    numbered = [s for s in page.snippets if s.text[:2] in ("1.", "2.", "3.", "4.")]
    assert [s.text for s in numbered] == ["1. Open the Settings app.", "2. Tap About phone.",
                                          "3. Tap Device name.", "4. Type the new name and tap OK."]
    assert len({s.xpath for s in numbered}) == 1


def test_parent_text_around_a_nested_block_stays_in_page_order():
    page = clean_page("<html><body><div>before<p>inside</p>after</div></body></html>", url="u", qid="q")
    assert [(s.text, s.tag) for s in page.snippets] == [("before", "div"), ("inside", "p"), ("after", "div")]


def test_short_snippets_follow_the_config():
    html = "<html><body><p>OK</p><p>Tap Display</p></body></html>"
    assert [s.text for s in clean_page(html, url="u", qid="q").snippets] == ["OK", "Tap Display"]
    strict = clean_page(html, url="u", qid="q", config=CleanConfig(min_snippet_chars=5))
    assert [s.text for s in strict.snippets] == ["Tap Display"]


def test_llm_html_is_cut_to_the_configured_size():
    html = "<html><body>" + "".join(f"<p>paragraph number {i} of a long page</p>" for i in range(500)) + "</body></html>"
    page = clean_page(html, url="u", qid="q", config=CleanConfig(max_llm_chars=1000))
    assert len(page.html) <= 1000
    assert len(page.snippets) == 500


def test_declared_legacy_encoding_is_honoured():
    body = '<html><head><meta charset="windows-1252"></head><body><p>Öffnen Sie “Einstellungen”</p></body></html>'
    page = clean_page(body.encode("cp1252"), url="u", qid="q")
    assert page.snippets[0].text == "Öffnen Sie “Einstellungen”"
    assert clean_page(body.encode("cp1252"), url="u", qid="q", encoding="cp1252").snippets[0].text == page.snippets[0].text


@pytest.mark.parametrize("body, words", [
    (os.urandom(4096), "does not look like text"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, "does not look like text"),
    (b"", "empty"),
    (b"   \n  ", "empty"),
])
def test_binary_or_empty_input_is_a_clear_extraction_error(body, words):
    with pytest.raises(ExtractionError, match=words):
        clean_page(body, url="u", qid="q")


def test_a_page_with_no_visible_text_is_an_error():
    with pytest.raises(ExtractionError, match="no visible text"):
        clean_page("<html><body><script>x()</script><nav>menu</nav></body></html>", url="u", qid="q")


def test_deeply_nested_and_large_pages_do_not_crash():
    deep = "<div>" * 1500 + "<p>deep text here</p>" + "</div>" * 1500  # deeper than the recursion limit
    page = clean_page(f"<html><body>{deep}</body></html>", url="u", qid="q")
    assert page.snippets[-1].text == "deep text here"
    big = "<html><body>" + "<p>Tap the button to continue.</p>" * 40_000 + "</body></html>"
    assert len(clean_page(big, url="u", qid="q").snippets) == 40_000


@pytest.mark.parametrize("name", ALL_PAGES + ["<word-processor>"])
def test_stamped_xpaths_equal_lxml_getpath(name):
    from extraction.clean import _annotate_xpaths, _parse, decode_html

    data = ((PAGES / name).read_bytes() if name in ALL_PAGES else
            b"<html><body><o:p>word</o:p><p>a</p><o:p>x</o:p><div><p>1</p><!-- c --><p>2</p></div></body></html>")
    root = _parse(decode_html(data))
    _annotate_xpaths(root)
    tree = root.getroottree()
    for el in root.iter():
        if isinstance(el.tag, str):
            assert el.get(XPATH_ATTR) == tree.getpath(el)


def test_stray_nul_and_control_characters_do_not_stop_cleaning():
    # a body stored before the fetcher removed such bytes (or from a pre-filled cache)
    body = b"<html><body><ol><li>Open the\x00 Settings app.</li><li>Tap\x07 Display.</li></ol></body></html>"
    page = clean_page(body, url="u", qid="q")
    assert [s.text for s in page.snippets] == ["Open the Settings app.", "Tap Display."]
