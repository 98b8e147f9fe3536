"""Search backends (extraction/search.py) and the politeness helpers they use.

The Brave backend talks to a real local HTTP server that imitates the API.
"""

from __future__ import annotations

import json

import pytest
from support_http import Reply, serve

from verirank_core.extraction_config import SearchConfig
from extraction.politeness import TokenBucket, parse_retry_after, retry_delay
from verirank_core.extraction_records import Query, SearchResult
from extraction.search import (
    BraveBackend, SearchBackend, SerpFileBackend, done_path_for, make_backend, run_search,
)
from verirank_core.errors import ConfigError, SchemaError, SearchError
from verirank_core.store import JsonlAppender, read_jsonl

KEY = "test-key-5e3cr3t"


def _serp_file(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- serp files ----------------------------------------------------------------------


def test_serp_file_sorted_uncut_and_empty(tmp_path):
    path = _serp_file(tmp_path / "serp.jsonl", [
        {"qid": "q1", "rank": 3, "url": "https://c.example/", "title": "C"},
        {"qid": "q1", "rank": 1, "url": "https://a.example/", "title": "A", "snippet": "s"},
        {"qid": "q1", "rank": 2, "url": "https://b.example/"},
        {"qid": "q2", "rank": 1, "url": "https://d.example/"},
    ])
    backend = SerpFileBackend(path)
    # a stored ranking is not cut at top_n: the fetch stage records the rows below it
    got = backend.search(Query(qid="q1", query="x"), top_n=2)
    assert [(r.rank, r.url) for r in got] == [(1, "https://a.example/"), (2, "https://b.example/"),
                                              (3, "https://c.example/")]
    assert got[0].snippet == "s"
    assert backend.search(Query(qid="nobody", query="x"), top_n=5) == []


@pytest.mark.parametrize("rows,line,words", [
    ([{"qid": "q", "rank": 1, "url": "u1"}, {"qid": "q", "rank": 1, "url": "u2"}], 2,
     "duplicate rank 1 for qid 'q' (first on line 1)"),
    ([{"qid": "q", "rank": 0, "url": "u"}], 1, "rank"),
    ([{"qid": "q", "rank": 1}], 1, "url"),
    ([{"qid": "q", "rank": 1, "url": "  "}], 1, "empty url"),
])
def test_serp_file_errors_name_file_and_line(tmp_path, rows, line, words):
    path = _serp_file(tmp_path / "serp.jsonl", rows)
    with pytest.raises(SchemaError) as err:
        SerpFileBackend(path)
    assert f"{path}:{line}:" in str(err.value) and words in str(err.value)


def test_serp_file_bad_json_and_missing(tmp_path):
    path = tmp_path / "serp.jsonl"
    path.write_text('{"qid": "q", "rank": 1, "url": "u"}\n{oops\n', encoding="utf-8")
    with pytest.raises(SchemaError, match=r"serp\.jsonl:2: not valid JSON"):
        SerpFileBackend(path)
    with pytest.raises(SchemaError, match="not found"):
        SerpFileBackend(tmp_path / "missing.jsonl")


def test_lenient_serp_file_keeps_good_lines_and_says_why_the_others_were_rejected(tmp_path):
    path = tmp_path / "serp.jsonl"
    path.write_text("\n".join([
        json.dumps({"qid": "q", "rank": 1, "url": "https://a.example/"}),
        "{oops",
        json.dumps({"qid": "q", "rank": 1, "url": "https://dup.example/"}),
        json.dumps({"qid": "q", "rank": 0, "url": "https://zero.example/"}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"qid": "q", "rank": 2, "url": "https://b.example/"}),
        json.dumps({"qid": "stranger", "rank": 1, "url": "https://c.example/"}),
    ]) + "\n", encoding="utf-8")
    backend = SerpFileBackend(path, lenient=True)
    assert [r.url for r in backend.search(Query(qid="q", query="x"), 20)] == [
        "https://a.example/", "https://b.example/"]
    rejected = {r.line: r for r in backend.rejected + backend.unknown_qids(["q"])}
    assert sorted(rejected) == [2, 3, 4, 5, 7]
    assert rejected[2].status == "malformed" and "not valid JSON" in rejected[2].reason
    assert rejected[3].status == "duplicate" and rejected[3].url == "https://dup.example/"
    assert rejected[4].status == "malformed" and "rank" in rejected[4].reason
    assert rejected[7].status == "unknown_qid" and rejected[7].qid == "stranger"
    assert all(r.reason for r in rejected.values())


def test_make_backend(tmp_path, monkeypatch):
    path = _serp_file(tmp_path / "serp.jsonl", [{"qid": "q", "rank": 1, "url": "u"}])
    assert isinstance(make_backend(SearchConfig(), path), SerpFileBackend)
    with pytest.raises(ConfigError, match="--serp"):
        make_backend(SearchConfig(), None)
    monkeypatch.delenv("VERIRANK_TEST_BRAVE_KEY", raising=False)
    with pytest.raises(ConfigError, match="VERIRANK_TEST_BRAVE_KEY"):
        make_backend(SearchConfig(backend="brave", api_key_env="VERIRANK_TEST_BRAVE_KEY"), None)
    monkeypatch.setenv("VERIRANK_TEST_BRAVE_KEY", KEY)
    backend = make_backend(SearchConfig(backend="brave", api_key_env="VERIRANK_TEST_BRAVE_KEY"), None)
    assert isinstance(backend, BraveBackend) and KEY not in repr(backend)


# --- Brave against a local imitation ------------------------------------------------------


def _brave_imitation(n_total=30):
    """Answers like the web search API: web.results with url/title/description, paged by offset."""
    def handle(req):
        if req.headers.get("X-Subscription-Token") != KEY:
            return Reply(status=401, body=b'{"error": "bad token"}')
        count, offset = int(req.query["count"]), int(req.query.get("offset", 0))
        start = offset * count
        results = [
            {"url": f"https://site{i}.example/howto", "title": f"<strong>How</strong> to {i}",
             "description": f"Step &amp; <strong>tips</strong> {i}"}
            for i in range(start, min(start + count, n_total))
        ]
        return Reply(headers={"Content-Type": "application/json"},
                     body=json.dumps({"type": "search", "web": {"results": results}}).encode())
    return handle


def _brave(srv, path="/search", sleeps=None, **cfg):
    # `sleeps` records the pacing waits too: at 1000/s two local requests under 1 ms apart got a
    # recorded wait of 6e-5 s; a million per second never needs one, so only backoff is recorded
    settings = dict(backend="brave", endpoint=srv.url(path), api_key_env="BRAVE_TEST", backoff_s=0.01,
                    requests_per_second=1_000_000.0)
    settings.update(cfg)
    return BraveBackend(SearchConfig(**settings), environ={"BRAVE_TEST": KEY},
                        sleep=(sleeps.append if sleeps is not None else None))


def test_brave_results_are_parsed_and_paged():
    with serve({"/search": _brave_imitation(30)}) as srv:
        backend = _brave(srv)
        got = backend.search(Query(qid="q1", query="how to block calls"), top_n=25)
        assert [r.rank for r in got] == list(range(1, 26))
        assert got[0].url == "https://site0.example/howto"
        assert got[0].title == "How to 0" and got[0].snippet == "Step & tips 0"
        assert got[24].url == "https://site24.example/howto"
        # two pages: 20 then the next page by offset
        reqs = srv.requests
        assert [(r.query["count"], r.query.get("offset")) for r in reqs] == [("20", None), ("20", "1")]
        assert reqs[0].query["q"] == "how to block calls"
        # fewer results than asked: stops without error
        assert len(backend.search(Query(qid="q2", query="x"), top_n=50)) == 30


def test_brave_retries_429_honouring_retry_after():
    ok = Reply(headers={"Content-Type": "application/json"},
               body=json.dumps({"web": {"results": [{"url": "https://a.example/", "title": "A"}]}}).encode())
    with serve({"/search": [Reply(status=429, headers={"Retry-After": "2"}), ok]}) as srv:
        sleeps: list[float] = []
        backend = _brave(srv, sleeps=sleeps)
        got = backend.search(Query(qid="q", query="x"), top_n=5)
        assert [r.url for r in got] == ["https://a.example/"]
        assert srv.hits("/search") == 2 and backend.requests_sent == 2
        assert 2.0 in sleeps  # the server's Retry-After, not the 0.01 s backoff


def test_brave_gives_up_after_retries_and_never_leaks_the_key():
    with serve({"/search": Reply(status=503), "/denied": Reply(status=401)}) as srv:
        sleeps: list[float] = []
        with pytest.raises(SearchError, match="after 3 attempts") as err:
            _brave(srv, sleeps=sleeps, retries=2).search(Query(qid="q", query="x"), top_n=5)
        assert srv.hits("/search") == 3
        assert sleeps == [0.01, 0.02]  # exponential backoff
        assert KEY not in str(err.value)
        with pytest.raises(SearchError, match="HTTP 401.*API key") as err:
            _brave(srv, path="/denied").search(Query(qid="q", query="x"), top_n=5)
        assert srv.hits("/denied") == 1  # 401 is not retried
        assert KEY not in str(err.value)


def test_brave_connection_refused_is_a_search_error():
    with serve({}) as srv:
        port = srv.port
    cfg = SearchConfig(backend="brave", endpoint=f"http://127.0.0.1:{port}/search", api_key_env="K",
                       retries=1, backoff_s=0, timeout_s=2, requests_per_second=1000.0)
    with pytest.raises(SearchError, match="after 2 attempts"):
        BraveBackend(cfg, environ={"K": KEY}).search(Query(qid="q", query="x"), top_n=3)


def test_brave_rate_limit_spaces_requests():
    with serve({"/search": _brave_imitation(3)}) as srv:
        backend = _brave(srv, requests_per_second=5.0)
        for i in range(4):
            backend.search(Query(qid=f"q{i}", query="x"), top_n=3)
        times = [r.at for r in srv.requests]
        gaps = [b - a for a, b in zip(times, times[1:])]
        # 5 requests per second: 200 ms between two requests as the client sends them; the server's
        # clock sees them with a loaded machine's jitter, hence the margin
        assert len(gaps) == 3 and min(gaps) >= 0.12


# --- politeness helpers ---------------------------------------------------------------------


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_token_bucket_spacing_with_a_fake_clock():
    clock = FakeClock()
    bucket = TokenBucket(rate=2.0, clock=clock, sleep=clock.sleep)
    assert bucket.acquire() == 0.0  # the first token is there
    assert bucket.acquire() == pytest.approx(0.5)
    assert bucket.acquire() == pytest.approx(0.5)
    clock.now += 10  # a quiet period refills at most ``burst`` tokens
    assert bucket.acquire() == 0.0
    assert bucket.acquire() == pytest.approx(0.5)


def test_retry_after_parsing_and_cap():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert retry_delay(1, 0.5) == 0.5 and retry_delay(3, 0.5) == 2.0
    assert retry_delay(1, 0.5, "120", max_retry_after_s=30) == 30


# --- run_search -----------------------------------------------------------------------------------


class CountingBackend(SearchBackend):
    """Wraps a real SerpFileBackend and counts calls."""

    name = "counting"

    def __init__(self, inner: SearchBackend, fail_on: str | None = None):
        self.inner, self.fail_on, self.calls = inner, fail_on, []

    def search(self, query, top_n):
        self.calls.append(query.qid)
        if query.qid == self.fail_on:
            raise SearchError("simulated outage")
        return self.inner.search(query, top_n)


def test_run_search_writes_and_resumes_including_empty_queries(tmp_path):
    serp_in = _serp_file(tmp_path / "in.jsonl", [
        {"qid": "q1", "rank": r, "url": f"https://q1.example/{r}"} for r in (1, 2, 3)
    ] + [{"qid": "q3", "rank": 1, "url": "https://q3.example/"}])
    queries = [Query(qid=q, query=f"query {q}") for q in ("q1", "q2", "q3")]
    out = tmp_path / "run" / "serp.jsonl"

    # first run: q3 fails (an outage), q2 has no results
    backend = CountingBackend(SerpFileBackend(serp_in), fail_on="q3")
    with JsonlAppender(out, SearchResult) as app, pytest.raises(SearchError):
        run_search(queries, backend, top_n=2, appender=app)
    assert backend.calls == ["q1", "q2", "q3"]

    # second run: only q3 is searched again; q2 (0 results) is not re-queried
    backend = CountingBackend(SerpFileBackend(serp_in))
    with JsonlAppender(out, SearchResult) as app:
        counts = run_search(queries, backend, top_n=2, appender=app)
    assert backend.calls == ["q3"]
    assert counts == {"queries": 3, "searched": 1, "skipped": 2, "results": 1, "empty": 0,
                      "beyond_top_n": 0}
    rows = read_jsonl(out, SearchResult)
    # the stored ranking is kept whole; rank 3 is below top_n=2 and is marked at fetch time
    assert [(r.qid, r.rank) for r in rows] == [("q1", 1), ("q1", 2), ("q1", 3), ("q3", 1)]
    assert done_path_for(out).name == "serp.done.jsonl" and done_path_for(out).exists()


def test_run_search_redoes_a_query_interrupted_halfway(tmp_path):
    serp_in = _serp_file(tmp_path / "in.jsonl", [
        {"qid": "q1", "rank": r, "url": f"https://q1.example/{r}"} for r in (1, 2, 3)
    ])
    out = tmp_path / "serp.jsonl"
    # a kill after writing rank 1 but before the done-marker
    with JsonlAppender(out, SearchResult) as app:
        app.append(SearchResult(qid="q1", rank=1, url="https://q1.example/1"))
    backend = CountingBackend(SerpFileBackend(serp_in))
    with JsonlAppender(out, SearchResult) as app:
        counts = run_search([Query(qid="q1", query="x")], backend, top_n=3, appender=app)
    assert backend.calls == ["q1"] and counts["searched"] == 1
    assert [r.rank for r in read_jsonl(out, SearchResult)] == [1, 2, 3]  # no duplicate rank 1
