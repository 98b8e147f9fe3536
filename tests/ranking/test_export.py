"""Export formats parse back: TREC run (ir_measures), JSONL (RankedItem), CSV."""

from __future__ import annotations

import csv

import ir_measures
import pytest

from ranking.export import CSV_COLUMNS, export_items, export_run, read_ranked, write_trec
from ranking.metrics import evaluate, read_qrels, read_trec_run, write_qrels
from verirank_core.ranking_records import RankedItem
from verirank_core.errors import ConfigError, StoreError
from verirank_core.store import write_jsonl


def _items():
    # a verified-first list: q1's model scores are NOT monotone in rank on purpose
    return [
        RankedItem(qid="q1", rank=1, url="https://b.example/dark?x=1#top", title="Dark, \"mode\"", score=0.2,
                   verified=True, f4=0.5, original_rank=2, summary="verified on w: 3/4 steps, no_action"),
        RankedItem(qid="q1", rank=2, url="https://a.example/", title="Tips", score=0.9, verified=False,
                   original_rank=1, summary="not executed"),
        RankedItem(qid="q1", rank=3, url="https://c.example/", title="Guide", score=0.9, verified=False,
                   original_rank=3, summary="not executed: device failed"),
        RankedItem(qid="q2", rank=1, url="https://g.example/bt", title="BT", score=-1.5, verified=True, f4=1.0,
                   original_rank=2),
    ]


def test_trec_run_keeps_our_order_under_ir_measures(tmp_path):
    path = tmp_path / "run.trec"
    assert write_trec(path, _items(), tag="mytag") == 4
    lines = path.read_text().splitlines()
    assert lines[0] == "q1 Q0 https://b.example/dark?x=1#top 1 3.0 mytag"
    # ir_measures re-sorts by score: the order must still be ours
    run = list(ir_measures.read_trec_run(str(path)))
    by_query = {}
    for r in run:
        by_query.setdefault(r.query_id, []).append((r.score, r.doc_id))
    q1 = [doc for _, doc in sorted(by_query["q1"], reverse=True)]
    assert q1 == ["https://b.example/dark?x=1#top", "https://a.example/", "https://c.example/"]
    qrels = [ir_measures.Qrel("q1", "https://b.example/dark?x=1#top", 1)]
    assert ir_measures.calc_aggregate([ir_measures.RR], qrels, run)[ir_measures.RR] == 1.0
    assert read_trec_run(path)["q2"] == {"https://g.example/bt": 1.0}


#: URLs a SERP file can hold that are not plain tokens
ODD_URLS = [
    "https://x.example/a b",
    "data:text/html,<ol><li>Open the Settings app.</li><li>Tap \"Display\".</li></ol>",
    "https://x.example/it's \"quoted\",comma",
    "https://bücher.example/straße?q=ü\u00a0nbsp",
    "https://x.example/tab\there\nnewline\r\x00nul\u2028sep\u200bzw",
    "https://x.example/" + "long/" * 1640,  # 8 KB
    "https://x.example/%20already%2Fencoded",
    "pct:looks-encoded",
    "",
]


def _odd_items():
    return [RankedItem(qid=qid, rank=i, url=url, title=url[:20], score=float(-i), verified=False,
                       original_rank=i)
            for qid in ("q1", "q 2") for i, url in enumerate(ODD_URLS, start=1)]


def test_every_url_a_serp_file_can_hold_round_trips_through_every_format(tmp_path):
    items = sorted(_odd_items(), key=lambda it: (it.qid, it.rank))  # the order exports write
    assert len(ODD_URLS[5]) >= 8192
    trec = tmp_path / "r.trec"
    assert export_items(items, "trec", trec) == len(items)
    lines = trec.read_text("utf-8").split("\n")[:-1]
    assert len(lines) == len(items) and all(len(line.split()) == 6 for line in lines)
    back = read_trec_run(trec)
    for qid in ("q1", "q 2"):
        assert sorted(back[qid], key=back[qid].get, reverse=True) == ODD_URLS
    # an ordinary URL is its own docno, so existing qrels keep matching
    assert "q1 Q0 https://x.example/%20already%2Fencoded 7" in trec.read_text("utf-8")
    # the qrels use the same encoding: evaluation still matches the run's docs
    qrels = {"q1": {ODD_URLS[1]: 1}, "q 2": {ODD_URLS[4]: 1}}
    write_qrels(tmp_path / "qrels.txt", qrels)
    assert read_qrels(tmp_path / "qrels.txt") == qrels
    assert evaluate(back, read_qrels(tmp_path / "qrels.txt"), ["MRR"]).mean["MRR"] == (1 / 2 + 1 / 5) / 2
    ir_run = list(ir_measures.read_trec_run(str(trec)))
    ir_qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    assert ir_measures.calc_aggregate([ir_measures.RR], ir_qrels, ir_run)[ir_measures.RR] == (1 / 2 + 1 / 5) / 2

    export_items(items, "jsonl", tmp_path / "r.jsonl")
    assert read_ranked(tmp_path / "r.jsonl") == items
    export_items(items, "csv", tmp_path / "r.csv")
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["qid"], r["url"]) for r in rows] == [(i.qid, i.url) for i in items]


def test_trec_refuses_a_tag_with_whitespace(tmp_path):
    with pytest.raises(ConfigError, match="tag"):
        write_trec(tmp_path / "r.trec", _items(), tag="two words")


def test_jsonl_round_trip(tmp_path):
    path = tmp_path / "r.jsonl"
    export_items(_items(), "jsonl", path)
    assert read_ranked(path) == _items()


def test_csv_round_trip(tmp_path):
    path = tmp_path / "r.csv"
    assert export_items(_items(), "csv", path) == 4
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert rows[0]["title"] == 'Dark, "mode"' and rows[0]["verified"] == "True" and rows[0]["f4"] == "0.5"
    assert [(r["qid"], int(r["rank"]), r["url"]) for r in rows] == [(i.qid, i.rank, i.url) for i in _items()]
    assert rows[3]["summary"] == ""


def test_ranks_must_be_a_permutation(tmp_path):
    items = _items()
    items[1] = items[1].model_copy(update={"rank": 5})
    with pytest.raises(StoreError, match=r"query q1: ranks \[1, 3, 5\] are not 1..3"):
        export_items(items, "csv", tmp_path / "r.csv")


def test_export_run_reads_reranked_jsonl_and_names_missing_input(tmp_path):
    with pytest.raises(StoreError, match=r"reranked.jsonl not found: run `verirank rerank"):
        export_run(tmp_path, "trec", tmp_path / "out.trec")
    write_jsonl(tmp_path / "reranked.jsonl", list(reversed(_items())))
    export_run(tmp_path, "trec", tmp_path / "out.trec")
    assert (tmp_path / "out.trec").read_text().splitlines()[0].startswith("q1 Q0 https://b.example/dark")
    with pytest.raises(ConfigError, match="unknown export format 'xml'"):
        export_run(tmp_path, "xml", tmp_path / "out.xml")
