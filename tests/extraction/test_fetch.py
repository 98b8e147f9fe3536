"""The page fetcher, its SSRF guard and the page cache.

Every network test talks to a real HTTP server on 127.0.0.1
(tests/support/support_http.py). Timeouts in the configs are small so the
failure cases stay quick.
"""

from __future__ import annotations

import gzip
import itertools
import socket
import threading

import pytest
from support_http import NEVER, Reply, redirect, serve

from verirank_core.extraction_config import FetchConfig
from extraction.fetch import Fetcher, decode_body, read_page_body
from extraction.pagecache import PageCache
from extraction.politeness import HostGate
from verirank_core.extraction_records import FetchStatus, Page, SearchResult
from extraction.sniff import binary_reason, detect_encoding
from extraction.urlguard import UrlGuard, address_refusal
from verirank_core.errors import FetchError, StoreError
from verirank_core.store import JsonlAppender, read_jsonl

HTML = "<html><head><title>Dark mode</title></head><body><ol><li>Open Settings</li></ol></body></html>"


def html_reply(body, content_type="text/html; charset=utf-8", **kw):
    if isinstance(body, str):
        body = body.encode("utf-8")
    return Reply(headers={"Content-Type": content_type}, body=body, **kw)


def local_config(**kw):
    """Small timeouts, no real backoff, private hosts allowed (the server is on 127.0.0.1)."""
    settings = dict(allow_private_hosts=True, connect_timeout_s=1.0, read_timeout_s=0.5,
                    total_timeout_s=2.0, backoff_s=0.0, retries=2, max_bytes=100_000)
    settings.update(kw)
    return FetchConfig(**settings)


def result(url, qid="q1", rank=1):
    return SearchResult(qid=qid, rank=rank, url=url, title="t")


@pytest.fixture
def cache(tmp_path):
    return PageCache(tmp_path / "cache")


# --- ordinary pages ----------------------------------------------------------------------


def test_normal_page_is_stored_and_described(cache):
    with serve({"/page": html_reply(HTML)}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/page")))
    assert page.status == FetchStatus.OK and page.usable and page.reason == ""
    assert page.http_status == 200 and page.final_url == srv.url("/page")
    assert page.content_type == "text/html; charset=utf-8" and page.encoding == "utf-8"
    assert page.n_bytes == len(HTML) and page.attempts == 1 and not page.from_cache
    assert read_page_body(page, cache) == HTML.encode()
    assert cache.path(page.body_sha256).parent.name == page.body_sha256[:2]
    # the record survives a JSON round trip (it is what pages.jsonl holds)
    assert Page.parse(page.to_json_dict()) == page


def test_gzip_encoded_page_is_decoded(cache):
    body = gzip.compress(HTML.encode())
    reply = Reply(headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}, body=body)
    with serve({"/gz": reply}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/gz")))
    assert page.status == FetchStatus.OK and read_page_body(page, cache) == HTML.encode()


def test_redirect_is_followed_and_final_url_kept(cache):
    with serve({"/old": redirect("/new", 301), "/new": html_reply(HTML)}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/old")))
    assert page.status == FetchStatus.OK and page.final_url == srv.url("/new")
    assert page.attempts == 2  # one request per hop


def test_empty_body(cache):
    with serve({"/empty": html_reply(b"")}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/empty")))
    assert page.status == FetchStatus.EMPTY and "empty" in page.reason and page.body_sha256 is None


# --- size, type, redirects, timeouts, HTTP errors ------------------------------------------


def test_50_megabyte_page_is_cut_at_the_cap(cache):
    sent = itertools.count()
    chunk = b"<p>" + b"a" * 65533

    def fifty_mb():  # generated lazily: 800 x 64 KiB = 50 MiB, never allocated at once
        for _ in range(800):
            next(sent)
            yield chunk

    cap = 200_000
    with serve({"/huge": Reply(headers={"Content-Type": "text/html"}, body=fifty_mb)}) as srv:
        page = Fetcher(local_config(max_bytes=cap), cache).fetch(result(srv.url("/huge")))
    assert page.status == FetchStatus.TOO_LARGE and page.usable and page.truncated
    assert page.n_bytes == cap and str(cap) in page.reason
    assert len(read_page_body(page, cache)) == cap
    # the client hung up early: the server had produced only a small part of the 50 MiB
    assert next(sent) < 400


@pytest.mark.parametrize("body,words", [
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, "PNG image"),
    (b"%PDF-1.7\n" + b"x" * 2000, "PDF"),
    (b"<html>" + b"\x00\x00\x00a" * 600, "NUL or control bytes"),
    (bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 200, "NUL or control bytes"),
])
def test_binary_served_as_html_is_not_html(cache, body, words):
    with serve({"/bin": html_reply(body)}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/bin")))
    assert page.status == FetchStatus.NOT_HTML and words in page.reason
    assert page.body_sha256 is None and not page.usable


def test_a_page_with_a_few_stray_nul_bytes_is_fetched_cleaned_and_says_so(cache):
    body = (b"<html><body>\x00<h1>Dark mode</h1><ol><li>Open the Settings\x00 app.</li>"
            b"<li>Tap Display\x01.</li></ol>" + b"<p>More text here.</p>" * 50 + b"\x00</body></html>")
    with serve({"/nul": html_reply(body)}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/nul")))
        again = Fetcher(local_config(), cache).fetch(result(srv.url("/nul")))
    assert page.status == FetchStatus.OK and page.control_bytes_removed == 4
    assert "4 stray NUL/control byte(s) removed" in page.reason
    stored = read_page_body(page, cache)
    assert b"\x00" not in stored and b"\x01" not in stored and b"Open the Settings app." in stored
    assert again.from_cache and again.control_bytes_removed == 4 and again.reason == page.reason


def test_utf16_bodies_keep_their_nul_bytes(cache):
    body = "<html><body><p>Öffnen Sie die Einstellungen.</p></body></html>".encode("utf-16")
    with serve({"/u16": html_reply(body)}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/u16")))
    assert page.status == FetchStatus.OK and page.control_bytes_removed == 0
    assert read_page_body(page, cache) == body


def test_non_html_content_type_is_refused_without_storing(cache):
    with serve({"/doc": Reply(headers={"Content-Type": "application/pdf"}, body=b"%PDF-1.4 ...")}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/doc")))
    assert page.status == FetchStatus.NOT_HTML and "application/pdf" in page.reason
    assert page.http_status == 200 and page.body_sha256 is None


def test_plain_text_without_content_type_is_accepted(cache):
    with serve({"/txt": Reply(body=b"1. Open Settings\n2. Tap Display\n")}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/txt")))
    assert page.status == FetchStatus.OK and page.content_type is None


def test_redirect_loop_and_too_many_redirects(cache):
    routes = {"/a": redirect("/b"), "/b": redirect("/a")}
    routes.update({f"/r{i}": redirect(f"/r{i + 1}") for i in range(10)})
    routes["/r10"] = html_reply(HTML)
    with serve(routes) as srv:
        fetcher = Fetcher(local_config(max_redirects=3), cache)
        loop = fetcher.fetch(result(srv.url("/a")))
        chain = fetcher.fetch(result(srv.url("/r0")))
        short = Fetcher(local_config(max_redirects=10), cache).fetch(result(srv.url("/r0")))
    assert loop.status == FetchStatus.TOO_MANY_REDIRECTS and "loop" in loop.reason
    assert chain.status == FetchStatus.TOO_MANY_REDIRECTS and "max_redirects=3" in chain.reason
    assert chain.attempts == 4  # the first request plus three redirects, then it stopped
    assert short.status == FetchStatus.OK


def test_server_that_never_answers_times_out(cache):
    with serve({"/hang": NEVER}) as srv:
        page = Fetcher(local_config(read_timeout_s=0.3), cache).fetch(result(srv.url("/hang")))
    assert page.status == FetchStatus.TIMEOUT and "read_timeout_s=0.3" in page.reason
    assert page.attempts == 1  # a silent server is not retried
    assert page.elapsed_s < 5


def test_slow_drip_is_cut_by_the_total_timeout(cache):
    drip = Reply(headers={"Content-Type": "text/html"}, body=lambda: (b"<p>x</p>" for _ in range(10_000)),
                 chunk_delay_s=0.05)
    with serve({"/drip": drip}) as srv:
        page = Fetcher(local_config(read_timeout_s=1.0, total_timeout_s=0.6), cache).fetch(
            result(srv.url("/drip")))
    assert page.status == FetchStatus.TIMEOUT and "total_timeout_s=0.6" in page.reason
    assert page.elapsed_s < 5


def test_404_is_an_http_error_with_its_status(cache):
    with serve({}) as srv:
        page = Fetcher(local_config(), cache).fetch(result(srv.url("/missing")))
        assert srv.hits("/missing") == 1  # 404 is not retried
    assert page.status == FetchStatus.HTTP_ERROR and page.http_status == 404 and "404" in page.reason


def test_429_then_200_succeeds_after_one_retry_honouring_retry_after(cache):
    sleeps: list[float] = []
    routes = {"/busy": [Reply(status=429, headers={"Retry-After": "3"}), html_reply(HTML)]}
    with serve(routes) as srv:
        page = Fetcher(local_config(backoff_s=0.01), cache, sleep=sleeps.append).fetch(
            result(srv.url("/busy")))
    assert page.status == FetchStatus.OK and page.attempts == 2
    assert sleeps == [3.0]  # Retry-After, not the 0.01 s backoff


def test_retry_after_is_capped(cache):
    sleeps: list[float] = []
    routes = {"/busy": [Reply(status=503, headers={"Retry-After": "3600"}), html_reply(HTML)]}
    with serve(routes) as srv:
        Fetcher(local_config(max_retry_after_s=2.5), cache, sleep=sleeps.append).fetch(result(srv.url("/busy")))
    assert sleeps == [2.5]


def test_500_forever_gives_http_error_after_retries(cache):
    sleeps: list[float] = []
    with serve({"/down": Reply(status=500)}) as srv:
        page = Fetcher(local_config(retries=2, backoff_s=0.01), cache, sleep=sleeps.append).fetch(
            result(srv.url("/down")))
        assert srv.hits("/down") == 3
    assert page.status == FetchStatus.HTTP_ERROR and page.http_status == 500
    assert page.attempts == 3 and "after 3 attempts" in page.reason
    assert sleeps == [0.01, 0.02]  # exponential backoff


def test_connection_refused_is_retried_then_reported(cache):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    page = Fetcher(local_config(retries=1), cache).fetch(result(f"http://127.0.0.1:{port}/"))
    assert page.status == FetchStatus.CONNECTION_ERROR and page.attempts == 2


@pytest.mark.parametrize("url,status", [
    ("not a url", FetchStatus.INVALID_URL),
    ("http://", FetchStatus.INVALID_URL),
    ("http://example.com:99999/", FetchStatus.INVALID_URL),
])
def test_invalid_urls(cache, url, status):
    page = Fetcher(local_config(), cache).fetch(result(url))
    assert page.status == status and page.reason and page.attempts == 0


# --- charsets ------------------------------------------------------------------------------


def test_charset_from_header_meta_and_detection(cache):
    french = "<html><body><p>" + "L'été dernier, à Noël, j'ai réglé les paramètres du téléphone. " * 20 + "</p></body></html>"
    cyrillic = '<html><head><meta charset="windows-1251"></head><body>Настройки экрана</body></html>'
    equiv = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
             '</head><body>Paramètres</body></html>')
    routes = {
        "/latin1": html_reply(french.encode("latin-1"), "text/html; charset=ISO-8859-1"),
        "/meta": html_reply(cyrillic.encode("cp1251"), "text/html"),
        "/equiv": html_reply(equiv.encode("latin-1"), "text/html"),
        "/utf8": html_reply(french.encode("utf-8"), "text/html"),
        "/guess": html_reply(french.encode("cp1252"), "text/html"),
    }
    with serve(routes) as srv:
        fetcher = Fetcher(local_config(), cache)
        pages = {p: fetcher.fetch(result(srv.url(p))) for p in routes}
    # latin-1 labels mean windows-1252, as in browsers
    assert pages["/latin1"].encoding == "cp1252"
    assert pages["/meta"].encoding == "cp1251"
    assert pages["/equiv"].encoding == "cp1252"
    assert pages["/utf8"].encoding == "utf-8"
    for path, text in [("/latin1", "L'été dernier"), ("/meta", "Настройки"), ("/equiv", "Paramètres"),
                       ("/utf8", "à Noël"), ("/guess", "réglé les paramètres")]:
        page = pages[path]
        assert text in decode_body(read_page_body(page, cache), page.encoding), path


def test_decode_body_never_raises():
    assert decode_body(b"caf\xe9 \xff\xfe", "utf-8") == "caf\ufffd \ufffd\ufffd"
    assert decode_body("café".encode("utf-8"), "no-such-codec") == "café"
    assert decode_body(b"\xef\xbb\xbfhello", "utf-8") == "hello"
    assert detect_encoding("x".encode("utf-16")) == "utf-16"


def test_binary_reason_accepts_text():
    assert binary_reason(b"<!doctype html><html>\n\t<body>") is None
    assert binary_reason("hé".encode("utf-16")) is None  # UTF-16 with a BOM has NULs but is text
    assert binary_reason(b"PK\x03\x04rest") is not None


# --- SSRF guard ------------------------------------------------------------------------------


@pytest.mark.parametrize("url,words", [
    ("http://127.0.0.1/", "loopback"),
    ("http://localhost/", "loopback"),
    ("http://10.0.0.1/", "private"),
    ("http://192.168.1.1:8080/admin", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://[fe80::1]/", "link-local"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://224.0.0.1/", "multicast"),
    ("http://2130706433/", "loopback"),  # 127.0.0.1 written as one number
    ("file:///etc/passwd", "scheme 'file'"),
    ("ftp://example.com/file", "scheme 'ftp'"),
    ("gopher://example.com/", "scheme 'gopher'"),
    ("data:text/html,<p>hi</p>", "scheme 'data'"),
])
def test_guard_blocks_by_default(url, words):
    with pytest.raises(FetchError) as err:
        UrlGuard().check_url(url)
    assert err.value.status == "blocked" and words in err.value.reason


def test_guard_allows_public_addresses_and_private_when_told():
    public = lambda host, port, type=0: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]
    UrlGuard(resolve=public).check_url("https://example.com/how-to")  # no error
    UrlGuard().check_url("http://8.8.8.8/")
    assert address_refusal("2001:4860:4860::8888") is None
    opened = UrlGuard(allow_private_hosts=True)
    opened.check_url("http://127.0.0.1:8000/")
    opened.check_url("http://10.1.2.3/")
    # still refused with private hosts allowed: other schemes, link-local metadata, multicast
    for url in ("file:///etc/passwd", "http://169.254.169.254/", "http://[fd00:ec2::254]/", "http://224.0.0.1/"):
        with pytest.raises(FetchError, match="blocked"):
            opened.check_url(url)


def test_embedded_ipv4_in_ipv6_is_judged_by_the_ipv4():
    assert "private" in address_refusal("2002:a00:1::1")       # 6to4 of 10.0.0.1
    assert "private" in address_refusal("64:ff9b::a00:1")      # NAT64 of 10.0.0.1
    assert address_refusal("64:ff9b::808:808") is None         # NAT64 of 8.8.8.8


def test_fetcher_blocks_local_server_by_default_without_contacting_it(cache):
    with serve({"/page": html_reply(HTML)}) as srv:
        page = Fetcher(FetchConfig(), cache).fetch(result(srv.url("/page")))
        assert srv.hits() == 0
    assert page.status == FetchStatus.BLOCKED and "loopback" in page.reason and page.attempts == 0


def test_redirect_from_an_allowed_host_to_a_private_one_is_blocked(cache):
    # Server A stands in for a public site: it is exempt by exact host:port.
    # Server B is another local server that must never be reached.
    with serve({"/secret": html_reply("secret")}) as b, \
         serve({"/go": redirect(b.url("/secret")), "/meta": redirect("http://169.254.169.254/latest/"),
                "/page": html_reply(HTML)}) as a:
        guard = UrlGuard(exempt_hosts=frozenset({f"127.0.0.1:{a.port}"}))
        fetcher = Fetcher(FetchConfig(), cache, guard=guard)
        assert fetcher.fetch(result(a.url("/page"))).status == FetchStatus.OK  # the exemption works
        to_b = fetcher.fetch(result(a.url("/go")))
        to_meta = fetcher.fetch(result(a.url("/meta"), rank=2))
        assert b.hits() == 0
    assert to_b.status == FetchStatus.BLOCKED and "loopback" in to_b.reason
    assert to_b.final_url == b.url("/secret") and to_b.attempts == 1
    assert to_meta.status == FetchStatus.BLOCKED and "link-local" in to_meta.reason


def test_dns_rebinding_is_caught_when_connecting(cache):
    # The guard's lookup says "public", the connection then lands on 127.0.0.1:
    # the check on the connected socket refuses it before any request is sent.
    fake_public = lambda host, port, type=0: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]
    with serve({"/page": html_reply(HTML)}) as srv:
        fetcher = Fetcher(FetchConfig(), cache, guard=UrlGuard(resolve=fake_public))
        page = fetcher.fetch(result(f"http://localhost:{srv.port}/page"))
        assert srv.hits() == 0
    assert page.status == FetchStatus.BLOCKED and "connected to" in page.reason


# --- cache -----------------------------------------------------------------------------------


def test_second_fetch_is_served_from_the_cache(cache):
    with serve({"/page": html_reply(HTML), "/big": html_reply("<p>" + "b" * 5000)}) as srv:
        first = Fetcher(local_config(), cache).fetch(result(srv.url("/page")))
        Fetcher(local_config(max_bytes=1024), cache).fetch(result(srv.url("/big")))
        again = Fetcher(local_config(), cache).fetch(result(srv.url("/page"), qid="q2"))
        big_again = Fetcher(local_config(max_bytes=1024), cache).fetch(result(srv.url("/big")))
        assert srv.hits("/page") == 1 and srv.hits("/big") == 1
        fresh = Fetcher(local_config(use_cache=False), cache).fetch(result(srv.url("/page")))
        assert srv.hits("/page") == 2
    assert again.from_cache and again.attempts == 0 and again.qid == "q2"
    assert (again.body_sha256, again.encoding, again.n_bytes, again.status) == \
           (first.body_sha256, first.encoding, first.n_bytes, FetchStatus.OK)
    assert big_again.from_cache and big_again.status == FetchStatus.TOO_LARGE and big_again.n_bytes == 1024
    assert not fresh.from_cache


def test_page_cache_files(tmp_path):
    cache = PageCache(tmp_path / "c")
    sha = cache.put(b"hello")
    assert cache.put(b"hello") == sha and cache.has(sha)
    assert cache.path(sha) == tmp_path / "c" / sha[:2] / f"{sha}.body"
    assert cache.get(sha) == b"hello"
    assert cache.lookup("https://a.example/") is None
    cache.remember("https://a.example/", sha, {"encoding": "utf-8", "truncated": False, "extra": 1})
    got_sha, meta = cache.lookup("https://a.example/")
    assert got_sha == sha and meta["encoding"] == "utf-8" and "extra" not in meta
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporaries
    # a damaged body is an error, a vanished body is a cache miss
    cache.path(sha).write_bytes(b"HELLO")
    with pytest.raises(StoreError, match="damaged"):
        cache.get(sha)
    cache.path(sha).unlink()
    assert cache.lookup("https://a.example/") is None
    with pytest.raises(StoreError, match="not in the cache"):
        cache.get(sha)
    with pytest.raises(StoreError, match="sha256"):
        cache.path("../../etc/passwd")
    assert PageCache.for_run(tmp_path / "run", "cache/pages").root == tmp_path / "run" / "cache" / "pages"
    assert PageCache.for_run(tmp_path / "run", str(tmp_path / "shared")).root == tmp_path / "shared"


def test_read_page_body_without_body_is_an_error(cache):
    page = Page(qid="q", url="u", rank=1, status=FetchStatus.HTTP_ERROR, reason="HTTP 404")
    with pytest.raises(StoreError, match="no stored body"):
        read_page_body(page, cache)


# --- fetch_all: resume, concurrency, politeness ----------------------------------------------------


def test_fetch_all_resumes_and_ends_with_exactly_n_unique_records(tmp_path, cache):
    n = 8
    routes = {f"/p{i}": html_reply(f"<p>page {i}</p>") for i in range(n)}
    routes["/p7"] = Reply(status=404)
    out = tmp_path / "pages.jsonl"
    with serve(routes) as srv:
        results = [result(srv.url(f"/p{i}"), rank=i + 1) for i in range(n)]
        cfg = local_config(use_cache=False, workers=3)  # use_cache off: only the appender can skip
        with JsonlAppender(out, Page) as app:
            Fetcher(cfg, cache).fetch_all(results[:3], app)
        with open(out, "ab") as fh:  # a kill in the middle of writing the next record
            fh.write(b'{"qid": "q1", "url": "' + results[3].url.encode() + b'", "ra')
        hits_before = {i: srv.hits(f"/p{i}") for i in range(n)}
        with JsonlAppender(out, Page) as app:
            counts = Fetcher(cfg, cache).fetch_all(results + [results[0]], app)
        hits_after = {i: srv.hits(f"/p{i}") for i in range(n)}
    assert [hits_after[i] - hits_before[i] for i in range(n)] == [0, 0, 0, 1, 1, 1, 1, 1]
    assert counts["skipped"] == 3 and counts["fetched"] == 5 and counts["duplicates"] == 1
    assert counts["ok"] == 4 and counts["http_error"] == 1
    pages = read_jsonl(out, Page)
    assert len(pages) == n and len({p.key() for p in pages}) == n


def test_per_host_concurrency_is_never_exceeded(cache, tmp_path):
    routes = {f"/s{i}": html_reply(f"<p>{i}</p>", delay_s=0.15) for i in range(10)}
    with serve(routes) as srv:
        results = [result(srv.url(f"/s{i}"), rank=i + 1) for i in range(10)]
        seen = []
        # timeouts far above the server's delay, so no request is retried on a loaded machine (the
        # server counts a request until its answer starts to go out: support_http.HTTPTestServer)
        cfg = local_config(workers=6, per_host_concurrency=2, read_timeout_s=10.0, total_timeout_s=20.0)
        with JsonlAppender(tmp_path / "pages.jsonl", Page) as app:
            counts = Fetcher(cfg, cache).fetch_all(results, app, progress=seen.append)
        assert srv.max_in_flight == 2  # never more than 2, and the pool did use 2
    assert counts["ok"] == 10 and len(seen) == 10


def test_per_host_delay_spaces_requests(cache, tmp_path):
    routes = {f"/d{i}": html_reply("<p>x</p>") for i in range(4)}
    with serve(routes) as srv:
        results = [result(srv.url(f"/d{i}"), rank=i + 1) for i in range(4)]
        with JsonlAppender(tmp_path / "pages.jsonl", Page) as app:
            cfg = local_config(workers=4, per_host_concurrency=4, per_host_delay_s=0.4, read_timeout_s=10.0,
                               total_timeout_s=20.0)
            Fetcher(cfg, cache).fetch_all(results, app)
        times = sorted(r.at for r in srv.requests)
    # the server sees the requests, not the gate: a margin for a loaded machine's scheduling (the
    # gate's own spacing is exact in test_host_gate_with_a_fake_clock)
    assert len(times) == 4 and min(b - a for a, b in zip(times, times[1:])) >= 0.2


def test_host_gate_with_a_fake_clock():
    now = [0.0]
    slept: list[float] = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    gate = HostGate(per_host_concurrency=1, per_host_delay_s=2.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(3):
        with gate.slot("a.example"):
            pass
    with gate.slot("b.example"):  # another host does not wait
        pass
    assert slept == [2.0, 2.0]

    # the concurrency limit blocks a second holder until the first leaves
    gate = HostGate(per_host_concurrency=1, per_host_delay_s=0.0)
    entered = threading.Event()
    with gate.slot("h"):
        t = threading.Thread(target=lambda: (gate.slot("h").__enter__(), entered.set()))
        t.start()
        assert not entered.wait(0.1)
    assert entered.wait(2)
    t.join()


def test_the_cache_is_consulted_before_any_name_resolution_and_a_miss_is_still_guarded(cache):
    lookups = []

    def no_dns(host, port, type=0):
        lookups.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    url = "https://howto.example/dark-mode"  # a made-up host, as in a HowToBench build
    cache.remember(url, cache.put(HTML.encode()), {"content_type": "text/html", "encoding": "utf-8",
                                                    "http_status": 200, "truncated": False})
    fetcher = Fetcher(FetchConfig(), cache, guard=UrlGuard(resolve=no_dns))
    page = fetcher.fetch(result(url))
    assert page.status == FetchStatus.OK and page.from_cache and lookups == []
    # the scheme is still checked first, and a miss still resolves and is guarded
    assert fetcher.fetch(result("file:///etc/passwd", rank=2)).status == FetchStatus.BLOCKED
    miss = fetcher.fetch(result("https://other.example/", rank=3))
    assert miss.status == FetchStatus.CONNECTION_ERROR and lookups == ["other.example"]
    with serve({"/page": html_reply(HTML)}) as srv:
        private = Fetcher(FetchConfig(), cache).fetch(result(srv.url("/page"), rank=4))
        assert srv.hits() == 0
    assert private.status == FetchStatus.BLOCKED and "loopback" in private.reason
