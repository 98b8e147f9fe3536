"""Every ranker honours one estimator contract; the learned models rank the LETOR fixture well."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pandas as pd
import pytest

import support_letor
from ranking.models import load_ranker, make_model, model_names, split_by_query
from ranking.models.base import LEARNED_MODELS, Ranker
from ranking.models.data import frame_to_ltr, query_slates
from ranking.models.evaluation import evaluate_scores
from verirank_core.errors import ConfigError, NotFittedError, SchemaError

# small settings so the contract runs fast; the defaults are tested in the comparison below
FAST = {
    "tmlp-lambdaloss": {"epochs": 2},
    "tmlp-neuralndcg": {"epochs": 2},
    "lambdamart": {"n_estimators": 20},
}


@pytest.fixture(scope="module")
def small(shared_dir):
    """30 training queries and 10 test queries, features named F1..F300 (so F4 exists)."""
    train, test = support_letor.letor(shared_dir)
    names = [f"F{i + 1}" for i in range(train.X.shape[1])]
    tr, te = support_letor.first_queries(train, 30), support_letor.first_queries(test, 10)
    tr.feature_names, te.feature_names = names, names
    return tr, te


def _fit(name, data, seed=5):
    model = make_model(name, **FAST.get(name, {}), **({"seed": seed} if name in LEARNED_MODELS else {}))
    return model.fit(data.X, data.y, data.qids, feature_names=data.feature_names)


# --- the contract, for every registered ranker -------------------------------------------------


@pytest.mark.parametrize("name", model_names())
def test_init_only_stores_params(name):
    model = make_model(name, **FAST.get(name, {}))
    assert isinstance(model, Ranker)
    assert not [k for k in vars(model) if k.endswith("_")], "no learned state before fit"
    assert set(vars(model)) == {f.name for f in dataclasses.fields(model)}
    assert model.get_params() == model.clone().get_params()
    assert model.name == name


@pytest.mark.parametrize("name", model_names())
def test_predict_and_save_before_fit_raise(name, tmp_path, small):
    model = make_model(name)
    with pytest.raises(NotFittedError):
        model.predict(small[1].X, small[1].qids)
    with pytest.raises(NotFittedError):
        model.save(tmp_path / "m")


@pytest.mark.parametrize("name", model_names())
def test_fit_predict_save_load_roundtrip(name, tmp_path, small):
    train, test = small
    model = _fit(name, train)
    scores = model.predict(test.X, test.qids)
    assert scores.shape == (len(test),) and scores.dtype == np.float64 and np.all(np.isfinite(scores))
    model.save(tmp_path / "m")
    loaded = load_ranker(tmp_path / "m")
    assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
    assert loaded.feature_names_ == train.feature_names
    assert np.array_equal(loaded.predict(test.X, test.qids), scores)
    assert np.array_equal(type(model).load(tmp_path / "m").predict(test.X, test.qids), scores)


@pytest.mark.parametrize("name", model_names())
def test_same_seed_gives_identical_scores(name, small):
    train, test = small
    a = _fit(name, train).predict(test.X, test.qids)
    b = _fit(name, train).predict(test.X, test.qids)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("name", model_names())
def test_columns_are_matched_by_name(name, small):
    train, test = small
    model = _fit(name, train)
    expected = model.predict(test.X, test.qids)
    order = np.random.default_rng(0).permutation(test.X.shape[1])
    shuffled_names = [test.feature_names[i] for i in order]
    got = model.predict(test.X[:, order], test.qids, feature_names=shuffled_names)
    assert np.allclose(got, expected, rtol=0, atol=1e-12)
    with pytest.raises(SchemaError, match="missing at predict time"):
        model.predict(test.X[:, :5], test.qids, feature_names=["x1", "x2", "x3", "x4", "x5"])
    with pytest.raises(SchemaError, match="columns"):
        model.predict(test.X[:, :5], test.qids)


@pytest.mark.parametrize("name", model_names())
def test_a_query_scores_the_same_alone_or_in_a_batch(name, small):
    _, test = small
    model = _fit(name, small[0])
    together = model.predict(test.X, test.qids)
    rows = query_slates(test.qids)[3]
    alone = model.predict(test.X[rows], test.qids[rows])
    assert np.allclose(alone, together[rows], rtol=0, atol=1e-5)


def test_bad_training_input_is_a_schema_error(small):
    train, _ = small
    model = make_model("lr")
    with pytest.raises(SchemaError, match="rows"):
        model.fit(train.X, train.y[:-1], train.qids)
    bad = train.X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(SchemaError, match="NaN"):
        model.fit(bad, train.y, train.qids)
    with pytest.raises(SchemaError, match=">= 0"):
        model.fit(train.X, -train.y, train.qids)


# --- registry ------------------------------------------------------------------------------------


def test_registry_errors_list_valid_choices():
    with pytest.raises(ConfigError) as err:
        make_model("svm-rank")
    for name in ("lr", "tmlp-lambdaloss", "tmlp-neuralndcg", "lambdamart"):
        assert name in str(err.value)
    with pytest.raises(ConfigError, match="unknown hyperparameter.*n_trees"):
        make_model("lambdamart", n_trees=10)
    with pytest.raises(ConfigError, match="fixes"):
        make_model("tmlp-lambdaloss", loss="neuralndcg")


def test_tmlp_names_follow_the_loss():
    assert make_model("tmlp-neuralndcg").name == "tmlp-neuralndcg"
    assert make_model("tmlp-neuralndcg").loss == "neuralndcg"


# --- data helpers -----------------------------------------------------------------------------------


def test_split_by_query_is_seeded_and_keeps_queries_whole(shared_dir):
    train, _ = support_letor.letor(shared_dir)
    fit, valid = split_by_query(train.qids, 0.2, seed=3)
    assert not np.any(fit & valid) and np.all(fit | valid)
    assert set(train.qids[fit]).isdisjoint(set(train.qids[valid]))
    assert len(set(train.qids[valid])) == round(0.2 * train.n_queries)
    again = split_by_query(train.qids, 0.2, seed=3)
    assert np.array_equal(again[1], valid)
    assert not np.array_equal(split_by_query(train.qids, 0.2, seed=4)[1], valid)
    with pytest.raises(SchemaError):
        split_by_query(np.array(["q", "q"]), 0.5, seed=0)


def test_features_frame_becomes_ltr_data_in_original_order():
    frame = pd.DataFrame({
        "qid": ["b", "a", "b", "a"], "url": ["u3", "u2", "u1", "u1"], "rank": [2, 2, 1, 1],
        "title": ["t"] * 4, "verified": [True, False, False, True],
        "F1": [0.3, 0.2, 0.1, 0.0], "F4": [1.0, 0.0, 0.5, 1.0], "label": [2, 0, 1, 1],
    })
    data = frame_to_ltr(frame)
    assert data.feature_names == ["F1", "F4"]
    assert list(data.qids) == ["b", "b", "a", "a"]
    assert list(data.docs) == ["u1", "u3", "u1", "u2"]
    assert data.y.tolist() == [1, 2, 1, 0]
    with pytest.raises(SchemaError, match="'label'"):
        frame_to_ltr(frame.drop(columns=["label"]))


# --- baselines ---------------------------------------------------------------------------------------


def test_baselines_order_pages_as_documented():
    names = ["F4", "F7"]
    X = np.array([[0.0, 0], [1.0, 0], [0.5, 0], [1.0, 0], [0.2, 0]])
    y = np.zeros(5)
    groups = np.array(["q"] * 5)
    order = lambda model: list(np.argsort(-model.fit(X, y, groups, feature_names=names).predict(X, groups),
                                          kind="stable"))
    assert order(make_model("original")) == [0, 1, 2, 3, 4]
    assert order(make_model("f4")) == [1, 3, 2, 4, 0]  # F4 desc, ties in original order
    assert order(make_model("f4-first")) == [1, 3, 0, 2, 4]  # F4 == 1 first, each part in original order
    with pytest.raises(SchemaError, match="needs feature 'F4'"):
        make_model("f4").fit(X, y, groups, feature_names=["A", "B"])


# --- model-specific behaviour ------------------------------------------------------------------------


def test_pairwise_lr_recovers_a_linear_ranking():
    rng = np.random.default_rng(0)
    X = rng.random((400, 5))
    w = np.array([3.0, -2.0, 0.0, 1.0, 0.5])
    groups = np.repeat(np.arange(40), 10)
    y = np.zeros(400)
    for rows in query_slates(groups):
        y[rows] = np.argsort(np.argsort(X[rows] @ w)) // 3  # grades 0-3 from the true score
    model = make_model("lr", C=100.0).fit(X, y, groups)
    cosine = model.coef_ @ w / np.linalg.norm(model.coef_) / np.linalg.norm(w)
    assert cosine > 0.98
    assert evaluate_scores(model.predict(X, groups), y, groups).mean["NDCG@5"] > 0.95


def test_allrank_loads_without_torchvision_or_gcsfs():
    from ranking.models._allrank import load_allrank

    ar = load_allrank()
    assert callable(ar.lambdaLoss) and callable(ar.neuralNDCG)
    assert "torchvision" not in sys.modules and "gcsfs" not in sys.modules
    assert sys.modules["allrank.data.dataset_loading"].PADDED_Y_VALUE == -1


def test_tmlp_architecture_matches_the_paper(small):
    import torch

    model = _fit("tmlp-lambdaloss", small[0])
    net = model.net_
    assert isinstance(net.input_layer.input_norm, torch.nn.Identity)  # no input normalisation
    assert [(l.in_features, l.out_features) for l in net.input_layer.layers] == [(300, 96)]
    assert len(net.encoder.layers) == 2
    ff = net.encoder.layers[0].feed_forward
    assert (ff.w_1.in_features, ff.w_1.out_features) == (96, 384)
    assert net.encoder.layers[0].self_attn.h == model.n_heads == 2
    assert net.encoder.position is None
    assert (net.output_layer.w_1.in_features, net.output_layer.w_1.out_features) == (96, 1)
    assert isinstance(net.output_layer.activation, torch.nn.Identity)


def test_tmlp_early_stopping_keeps_the_best_epoch(small):
    train, test = small
    model = make_model("tmlp-neuralndcg", epochs=8, patience=1, seed=1)
    model.fit(train.X, train.y, train.qids, eval_set=(test.X, test.y, test.qids))
    history = model.history_
    assert {"train_loss", "train_ndcg@5", "valid_loss", "valid_ndcg@5", "lr"} <= set(history[0])
    values = [h["valid_ndcg@5"] for h in history]
    assert model.best_epoch_ == int(np.argmax(values))
    assert len(history) <= model.best_epoch_ + 3  # stopped after `patience` epochs without gain
    # the kept weights are those of the best epoch
    kept = evaluate_scores(model.predict(test.X, test.qids), test.y, test.qids, metrics=("NDCG@5",), gain="exp")
    assert kept.mean["NDCG@5"] == pytest.approx(max(values), abs=1e-9)


def test_tmlp_leaves_global_torch_state_alone(small):
    import torch

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    threads = torch.get_num_threads()
    _fit("tmlp-lambdaloss", small[0])
    assert torch.equal(torch.rand(3), expected)
    assert torch.get_num_threads() == threads


def test_lambdamart_history_and_importance(small):
    train, test = small
    model = make_model("lambdamart", n_estimators=30, early_stopping_rounds=5)
    model.fit(train.X, train.y, train.qids, eval_set=(test.X, test.y, test.qids))
    assert "valid_ndcg@5" in model.history_[0]
    assert 1 <= model.best_iteration_ <= 30
    assert model.booster_.num_trees() == model.best_iteration_
    importance = model.feature_importance()
    assert len(importance) == 300 and max(importance.values()) > 0


# --- all learned models on the LETOR fixture, in one table -------------------------------------------


def test_learned_models_beat_random_order_on_letor(shared_dir):
    train, test = support_letor.letor(shared_dir)
    fit, valid = split_by_query(train.qids, 0.2, seed=42)
    eval_set = (train.X[valid], train.y[valid], train.qids[valid])
    rng = np.random.default_rng(0)
    random_runs = [evaluate_scores(rng.random(len(test)), test.y, test.qids).mean for _ in range(20)]
    random_ndcg = float(np.mean([r["NDCG@5"] for r in random_runs]))
    rows = [("random order (mean of 20)", random_ndcg, float(np.mean([r["P@1"] for r in random_runs])))]
    results = {}
    for name in LEARNED_MODELS:
        params = {"epochs": 6} if name.startswith("tmlp") else {}
        model = make_model(name, seed=42, **params)
        model.fit(train.X[fit], train.y[fit], train.qids[fit], eval_set=eval_set)
        result = evaluate_scores(model.predict(test.X, test.qids), test.y, test.qids)
        results[name] = result.mean["NDCG@5"]
        rows.append((name, results[name], result.mean["P@1"]))
    print("\nLETOR test set (50 queries), trained on 161 queries, early stopping on 40:")
    print(f"{'model':28s} {'NDCG@5':>8s} {'P@1':>8s}")
    for name, ndcg, p1 in rows:
        print(f"{name:28s} {ndcg:8.4f} {p1:8.4f}")
    for name, value in results.items():
        assert value > random_ndcg + 0.08, f"{name} ({value:.4f}) is not clearly better than random"
