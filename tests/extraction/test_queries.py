"""Reading the input queries (extraction/queries.py)."""

from __future__ import annotations

import json

import pytest

from extraction.queries import load_queries
from verirank_core.errors import SchemaError


def _write(path, text, bom=False):
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def test_jsonl_with_optional_fields(tmp_path):
    lines = [
        {"qid": "q1", "query": "how to turn on dark mode", "app": "Settings", "device": "Pixel 7"},
        {"qid": "q2", "query": "  change   ringtone  "},
    ]
    path = _write(tmp_path / "q.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    queries = load_queries(path)
    assert [q.qid for q in queries] == ["q1", "q2"]
    assert queries[0].app == "Settings" and queries[0].device == "Pixel 7"
    assert queries[1].app is None
    # whitespace inside a query is normalised
    assert queries[1].query == "change ringtone"


def test_tsv_with_bom_comments_and_numeric_qids(tmp_path):
    path = _write(tmp_path / "q.tsv", "# qid\tquery\n101\thow to block a number\n\n102\tturn off wifi\ttwice\n",
                  bom=True)
    queries = load_queries(path)
    assert [(q.qid, q.query) for q in queries] == [
        ("101", "how to block a number"),
        # only the first tab separates: the rest is the query
        ("102", "turn off wifi twice"),
    ]


def test_jsonl_bom_and_integer_qid(tmp_path):
    path = _write(tmp_path / "q.jsonl", '{"qid": 7, "query": "reset phone"}\n', bom=True)
    assert load_queries(path)[0].qid == "7"


@pytest.mark.parametrize("text,fmt", [
    ('{"qid": "a", "query": "x y"}\n', "jsonl"),
    ("a\tx y\n", "tsv"),
])
def test_format_detected_by_content_for_other_extensions(tmp_path, text, fmt):
    path = _write(tmp_path / "queries.input", text)
    queries = load_queries(path)
    assert (queries[0].qid, queries[0].query) == ("a", "x y")


@pytest.mark.parametrize("name,text,line,words", [
    ("q.jsonl", '{"qid": "a", "query": "ok"}\n{"qid": "b", "query": \n', 2, "not valid JSON"),
    ("q.jsonl", '{"qid": "a"}\n', 1, "missing field(s) query"),
    ("q.jsonl", '["a", "b"]\n', 1, "expected a JSON object"),
    ("q.jsonl", '{"qid": "a", "query": "   "}\n', 1, "empty query"),
    ("q.jsonl", '{"qid": "", "query": "x"}\n', 1, "empty qid"),
    ("q.jsonl", '{"qid": "a", "query": 5}\n', 1, "query"),
    ("q.tsv", "a\tfine\nno tab here\n", 2, "no tab"),
    ("q.tsv", "a\t \n", 1, "empty query"),
])
def test_bad_lines_name_file_and_line(tmp_path, name, text, line, words):
    path = _write(tmp_path / name, text)
    with pytest.raises(SchemaError) as err:
        load_queries(path)
    assert f"{path}:{line}:" in str(err.value)
    assert words in str(err.value)


def test_duplicate_qid_names_both_lines(tmp_path):
    path = _write(tmp_path / "q.tsv", "a\tone\nb\ttwo\na\tthree\n")
    with pytest.raises(SchemaError, match=r"q\.tsv:3: duplicate qid 'a' \(first seen on line 1\)"):
        load_queries(path)


def test_missing_file_and_bad_utf8(tmp_path):
    with pytest.raises(SchemaError, match="not found"):
        load_queries(tmp_path / "nope.jsonl")
    path = tmp_path / "q.tsv"
    path.write_bytes(b"a\tok\nb\tcaf\xe9\n")
    with pytest.raises(SchemaError, match=r"q\.tsv:2: not valid UTF-8"):
        load_queries(path)
