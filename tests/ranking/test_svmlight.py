"""svmlight / LETOR reading and writing, on the real LightGBM fixture and on bad input."""

from __future__ import annotations

import numpy as np
import pytest

import support_letor
from ranking.svmlight import load_svmlight, save_svmlight
from verirank_core.errors import SchemaError


def test_lightgbm_form_loads_with_query_file(shared_dir):
    paths = support_letor.letor_paths(shared_dir)
    data = load_svmlight(paths["rank.train"], paths["rank.train.query"])
    sizes = [int(s) for s in paths["rank.train.query"].read_text().split()]
    assert data.X.shape == (sum(sizes), 300)
    assert data.n_queries == len(sizes) == 201
    # group sizes are preserved in order
    _, first, counts = np.unique(data.qids, return_index=True, return_counts=True)
    assert counts[np.argsort(first)].tolist() == sizes
    # spot-check the first line against the raw text
    first_line = paths["rank.train"].read_text().splitlines()[0].split()
    assert data.y[0] == float(first_line[0])
    index, value = first_line[1].split(":")
    assert data.X[0, int(index) - 1] == float(value)
    assert set(np.unique(data.y)) <= {0.0, 1.0, 2.0, 3.0, 4.0}


def test_query_file_found_beside_the_data(shared_dir):
    paths = support_letor.letor_paths(shared_dir)
    implicit = load_svmlight(paths["rank.test"])
    explicit = load_svmlight(paths["rank.test"], paths["rank.test.query"])
    assert np.array_equal(implicit.X, explicit.X) and list(implicit.qids) == list(explicit.qids)


def test_roundtrip_qid_form_is_exact(tmp_path, shared_dir):
    train, _ = support_letor.letor(shared_dir)
    part = support_letor.first_queries(train, 10)
    docs = [f"doc-{i}" for i in range(len(part))]
    path = tmp_path / "part.svmlight"
    save_svmlight(path, part.X, part.y, part.qids, comments=docs)
    back = load_svmlight(path, n_features=part.X.shape[1])
    assert np.array_equal(back.X, part.X)
    assert np.array_equal(back.y, part.y)
    assert list(back.qids) == [str(q) for q in part.qids]
    assert list(back.docs) == docs
    assert "qid:1 " in path.read_text().splitlines()[0]


def test_roundtrip_lightgbm_form(tmp_path):
    X = np.array([[0.5, 0.0, 1.25], [0.0, 0.0, 0.0], [3.0, 1e-7, 2.0]])
    y = np.array([2, 0, 1])
    save_svmlight(tmp_path / "d.txt", X, y, ["a", "a", "b"], query_file=tmp_path / "d.txt.query")
    assert (tmp_path / "d.txt.query").read_text() == "2\n1\n"
    assert "qid:" not in (tmp_path / "d.txt").read_text()
    back = load_svmlight(tmp_path / "d.txt", n_features=3)
    assert np.array_equal(back.X, X) and np.array_equal(back.y, y)
    assert list(back.qids) == ["1", "1", "2"]


@pytest.mark.parametrize("line, needle", [
    ("1 qid:1 3:abc", "value 'abc' of feature 3"),
    ("x qid:1 1:0.5", "label 'x'"),
    ("1 qid:1 0:0.5", "must be >= 1"),
    ("1 qid:1 a:0.5", "index 'a'"),
    ("1 qid:1 7", "not index:value"),
])
def test_malformed_line_names_file_and_line(tmp_path, line, needle):
    path = tmp_path / "bad.svmlight"
    path.write_text("0 qid:1 1:0.1\n" + line + "\n")
    with pytest.raises(SchemaError) as err:
        load_svmlight(path)
    assert f"{path}:2" in str(err.value) and needle in str(err.value)


def test_missing_qid_without_query_file_is_explained(tmp_path):
    path = tmp_path / "noqid.txt"
    path.write_text("1 1:0.5\n0 1:0.1\n")
    with pytest.raises(SchemaError, match="no qid"):
        load_svmlight(path)


def test_group_sizes_must_match_rows(tmp_path):
    (tmp_path / "d.txt").write_text("1 1:0.5\n0 1:0.1\n")
    (tmp_path / "d.txt.query").write_text("3\n")
    with pytest.raises(SchemaError, match="add up to 3 rows"):
        load_svmlight(tmp_path / "d.txt")


def test_non_contiguous_queries_rejected(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 1:0.5\n0 qid:2 1:0.1\n0 qid:1 1:0.3\n")
    with pytest.raises(SchemaError, match="not contiguous"):
        load_svmlight(path)


def test_save_rejects_nan_and_misaligned(tmp_path):
    with pytest.raises(SchemaError, match="NaN"):
        save_svmlight(tmp_path / "x", np.array([[np.nan]]), np.array([1]), ["q"])
    with pytest.raises(SchemaError, match="do not line up"):
        save_svmlight(tmp_path / "x", np.zeros((2, 1)), np.array([1]), ["q", "q"])
    assert not (tmp_path / "x").exists()


def test_too_wide_for_n_features(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 5:0.5\n")
    with pytest.raises(SchemaError, match="exceeds the expected 3"):
        load_svmlight(path, n_features=3)


def test_doc_ids_from_letor_comments_or_generated(tmp_path):
    path = tmp_path / "letor.txt"
    path.write_text("2 qid:10 1:0.5 #docid = GX001 inc = 1\n0 qid:10 1:0.1 #docid = GX002 inc = 0\n")
    assert list(load_svmlight(path).docs) == ["GX001", "GX002"]
    # comments that cannot be ids (duplicates within a query) fall back to d0, d1 ...
    path.write_text("2 qid:10 1:0.5 # same\n0 qid:10 1:0.1 # same\n1 qid:11 1:0.1\n")
    assert list(load_svmlight(path).docs) == ["d0", "d1", "d0"]
