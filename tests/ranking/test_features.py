"""Features F1-F18 on hand-made records and trajectories (values computed by hand)."""

from __future__ import annotations

import inspect
import random
from pathlib import Path

import numpy as np
import pytest

import support_ranking_runs as runs
from verirank_core.execution_records import (
    Action,
    ActionType,
    ExecutionResult,
    ExecutionStatus,
    StepRecord,
    StopReason,
    Trajectory,
)
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.ranking_config import ALL_FEATURES, PAPER_FEATURES
from ranking.features import (
    action_ratios, build_feature_table, compute_features, embedding_relevance, keyword_ratio,
    match_position, platform_features, query_term_ratio, screen_ratios, spread, write_feature_files, attach_labels,
)
from ranking.terms import ACTION_VERBS, STOPWORDS, content_terms, stem
from verirank_core import llm
from verirank_core.config import load_config
from verirank_core.errors import SchemaError, StoreError
from ranking.pipeline import FeaturesStage
from verirank_core.stages import run_stages
from verirank_core.store import RunDir, atomic_write_text, read_parquet

NO_F2 = [n for n in ALL_FEATURES if n != "F2"]


def _cfg(**features):
    overrides = [{"ranking": {"features": features}}] if features else []
    return load_config(overrides=overrides)


def _worked(tmp_path: Path):
    q, ext, exe, traj, screens = runs.worked_example_records()
    for name, xml in screens.items():
        atomic_write_text(tmp_path / name, xml)
    return q, ext, exe, traj


# --- terms ------------------------------------------------------------------------


def test_content_terms_lowercase_split_stem_and_stopwords():
    assert content_terms("How do I turn on Wi-Fi in my phone's Settings?") == ["turn", "wifi", "setting"]
    assert stem("settings") == "setting" and stem("status") == "status" and stem("gps") == "gps"
    assert stem("access") == "access" and stem("this") == "this"


def test_action_verbs_and_stopwords_do_not_overlap():
    assert not (ACTION_VERBS & STOPWORDS)
    assert {"tap", "turn", "open", "scroll", "go"} <= ACTION_VERBS
    assert "setting" not in ACTION_VERBS  # "Open Settings" must count one action verb, not two


# --- the worked example of ranking/FEATURES.md --------------------------------------


def test_worked_example_reproduces_hand_computed_values(tmp_path):
    q, ext, exe, traj = _worked(tmp_path)
    got = compute_features(q, ext, exe, traj, traj_dir=tmp_path, encoder=None,
                           keywords=runs.WORKED_KEYWORDS, names=NO_F2)
    assert set(got) == set(runs.WORKED_EXAMPLE_VALUES)
    for name, expected in runs.WORKED_EXAMPLE_VALUES.items():
        assert got[name] == pytest.approx(expected, abs=1e-12), name


def test_worked_example_values_are_the_ones_in_features_md(repo_root):
    text = (repo_root / "ranking" / "FEATURES.md").read_text("utf-8")
    for name, expected in runs.WORKED_EXAMPLE_VALUES.items():
        if name == "F18":
            assert "| F18 | 1/3 " in text
            continue
        assert f"| {name} | {expected:g} " in text, name


# --- one feature at a time ------------------------------------------------------------


def test_f1_counts_distinct_query_terms_found_in_steps():
    # query terms {turn, bluetooth, quickly}? "quickly" is a stopword -> {turn, bluetooth}
    assert query_term_ratio("turn on bluetooth quickly", ["Turn Bluetooth on.", "Done"]) == 1.0
    # {dark, mode, setting}: only "settings" appears (stemmed) -> 1/3
    assert query_term_ratio("dark mode settings", ["Open Settings."]) == pytest.approx(1 / 3)
    assert query_term_ratio("how to do it", ["Open Settings."]) == 0.0  # no content term in the query
    assert query_term_ratio("dark mode", []) == 0.0


def test_f3_mean_keyword_fraction_per_step():
    kw = frozenset({"setting", "wifi", "network"})
    # step terms: [open, setting] -> 1/2; [tap, wifi, hotspot] -> 1/3; [] (only stopwords) -> 0
    assert keyword_ratio(["Open Settings", "Tap Wi-Fi hotspot", "and then"], kw) == pytest.approx((0.5 + 1 / 3 + 0) / 3)
    assert keyword_ratio([], kw) == 0.0


def test_f3_with_the_bundled_keyword_list():
    from ranking.keywords import load_keywords

    kw = load_keywords()
    assert {"setting", "bluetooth", "display", "notification"} <= kw
    # "Tap Bluetooth settings" -> [tap, bluetooth, setting]: all three are common UI words
    assert keyword_ratio(["Tap Bluetooth settings"], kw) == 1.0


def test_f5_to_f8_action_ratio_statistics():
    ratios = action_ratios(["Tap Display", "Scroll and tap Dark theme row", "Dark theme is great"])
    # [tap, display] 1/2; [scroll, tap, dark, theme, row] 2/5; [dark, theme, great] 0
    assert ratios == pytest.approx([0.5, 0.4, 0.0])
    mean, lo, hi, var4 = spread(ratios)
    assert (mean, lo, hi) == pytest.approx((0.3, 0.0, 0.5))
    assert var4 == pytest.approx(4 * np.var([0.5, 0.4, 0.0]))  # 4 * 0.0466... = 0.1866...


def test_spread_of_extremes_reaches_one_and_empty_is_zero():
    assert spread([0.0, 1.0]) == (0.5, 0.0, 1.0, 1.0)
    assert spread([]) == (0.0, 0.0, 0.0, 0.0)


def test_screen_ratio_uses_distinct_terms_and_unreached_steps_score_zero():
    screens = {0: {"display", "setting"}, 2: {"bluetooth"}}
    # step 0 distinct terms {tap, display} (tap repeated) -> 1/2; step 1 unreached -> 0; step 2 {turn, bluetooth} -> 1/2
    assert screen_ratios(["Tap Display, tap it", "Tap Battery", "Turn Bluetooth on"], screens) == [0.5, 0.0, 0.5]


def test_f17_f18_positions_of_matched_steps():
    assert match_position([0.0, 0.5, 0.0, 0.2, 0.0]) == (4 / 5, (3 - 1) / 4)
    assert match_position([0.3]) == (1.0, 0.0)
    assert match_position([0.0, 0.0]) == (0.0, 0.0)


def _step(index, step_index, xml=None, labels=()):
    return StepRecord(index=index, step_index=step_index, action=Action(type=ActionType.CLICK, x=1, y=1),
                      xml=xml, controls=[{"label": l, "role": "button", "bounds": [0, 0, 1, 1]} for l in labels])


def _page(steps):
    return Extraction(qid="q", url="u", rank=1, status=ExtractionStatus.OK,
                      steps=[GroundedStep(index=i, text=t) for i, t in enumerate(steps)])


def _exe(**kw):
    base = dict(qid="q", url="u", rank=1, status=ExecutionStatus.EXECUTED, n_actions=2, f4=0.5,
                stop_reason=StopReason.COMPLETED, n_instructions=2)
    base.update(kw)
    return ExecutionResult(**base)


def test_screen_features_full_dump_vs_distilled_labels_and_exploration_ignored(tmp_path):
    atomic_write_text(tmp_path / "s0.xml", runs.ui_xml([("Network", ""), ("", "Bluetooth settings")]))
    atomic_write_text(tmp_path / "s1.xml", runs.ui_xml([("Pair new device", "")]))
    traj = Trajectory(qid="q", url="u", device="sim:x", instructions=["Tap Bluetooth", "Tap Pair"], stop_reason="completed",
                      steps=[_step(0, 0, "s0.xml", ["Network"]),      # content-desc only in the full dump
                             _step(1, None, "s1.xml", ["Pair new device"]),  # exploration: ignored
                             _step(2, 1, None, ["Pair new device"])])  # no dump: controls stand in
    f = compute_features(Query(qid="q", query="bluetooth pair"), _page(["Tap Bluetooth", "Tap Pair"]), _exe(n_actions=3),
                         traj, traj_dir=tmp_path, encoder=None, keywords=frozenset(), names=NO_F2)
    # full: step0 {tap, bluetooth} ∩ {network, bluetooth, setting} = 1/2; step1 {tap, pair} ∩ {pair, new} = 1/2
    assert (f["F9"], f["F10"], f["F11"], f["F12"]) == (0.5, 0.5, 0.5, 0.0)
    # distilled: step0 labels {network} -> 0; step1 -> 1/2
    assert (f["F13"], f["F14"], f["F15"]) == (0.25, 0.0, 0.5)
    assert f["F17"] == 1.0 and f["F18"] == 1.0


def test_unexecuted_pages_have_zero_execution_features(tmp_path):
    q, ext, exe, traj = _worked(tmp_path)
    execution_features = ["F4", *[f"F{i}" for i in range(9, 19)], "n_deviations_norm"]
    for execution in (None, exe.model_copy(update={"status": ExecutionStatus.DEVICE_FAILED}),
                      exe.model_copy(update={"status": ExecutionStatus.SKIPPED})):
        f = compute_features(q, ext, execution, traj, traj_dir=tmp_path, encoder=None,
                             keywords=runs.WORKED_KEYWORDS, names=NO_F2)
        assert all(f[n] == 0.0 for n in execution_features)
        assert f["F1"] == 0.75  # page features do not depend on execution


def test_page_without_steps_has_all_zero_but_f2(tmp_path):
    ext = Extraction(qid="q", url="u", rank=1, status=ExtractionStatus.NO_STEPS, title="")
    f = compute_features(Query(qid="q", query="turn on wifi"), ext, None, None, traj_dir=None, encoder=None,
                         keywords=frozenset({"wifi"}), names=NO_F2)
    assert all(v == 0.0 for n, v in f.items() if n not in ("platform_match", "device_match"))
    assert f["platform_match"] == f["device_match"] == 0.5  # it states nothing: unknown, not "other"


def test_platform_features_compare_the_stated_platform_with_the_query():
    ext = Extraction(qid="q", url="u", rank=1, status=ExtractionStatus.NO_STEPS)
    android = Query(qid="q", query="turn on wifi", device="oneplus-android11")
    ios_page = ext.model_copy(update={"stated_platform": "ios"})
    samsung_page = ext.model_copy(update={"stated_platform": "android", "stated_device": "samsung"})
    oneplus_page = ext.model_copy(update={"stated_platform": "android", "stated_device": "oneplus"})
    assert platform_features(android, ios_page) == (0.0, 0.5)
    assert platform_features(android, samsung_page) == (1.0, 0.0)
    assert platform_features(android, oneplus_page) == (1.0, 1.0)
    # the query names no device: the run's configured device decides; an iPhone query flips the answer
    assert platform_features(Query(qid="q", query="turn on wifi"), ios_page, run_device="Pixel 7") == (0.0, 0.5)
    assert platform_features(Query(qid="q", query="turn on wifi on my iphone"), ios_page) == (1.0, 0.5)
    assert platform_features(Query(qid="q", query="turn on wifi"), samsung_page, run_device="Pixel 7") == (1.0, 0.0)


# --- F2 -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def encoder():
    from verirank_core.embed import default_encoder

    return default_encoder()


def test_f2_embedding_is_clipped_cosine_and_prefers_the_relevant_page(encoder):
    query = "how to turn on bluetooth"
    related = "Turn on Bluetooth\nOpen Settings\nTap Connected devices\nTurn on Bluetooth"
    unrelated = "Best pasta recipes\nBoil water\nAdd salt"
    vec = encoder.encode([query, related])
    assert embedding_relevance(encoder, query, related) == pytest.approx(max(0.0, float(vec[0] @ vec[1])), abs=1e-6)
    assert embedding_relevance(encoder, query, related) > embedding_relevance(encoder, query, unrelated) + 0.2
    assert embedding_relevance(encoder, query, "   ") == 0.0


def test_f2_llm_score_goes_through_the_real_client(tmp_path):
    from support_scripted_llm import ScriptedLLMServer, request_text

    q, ext, exe, traj = _worked(tmp_path)
    with ScriptedLLMServer() as server:
        server.script(['{"score": 0.8}', '{"score": 1.7}', '{"score": 0.3}'])
        client = llm.LLMClient(base_url=server.base_url, model="stub-model", api_key="k", max_retries=1)
        f = compute_features(q, ext, exe, traj, traj_dir=tmp_path, encoder=None,
                             keywords=runs.WORKED_KEYWORDS, llm_client=client, names=["F2"])
        assert f == {"F2": 0.8}
        assert "Tap Schedule and choose Sunset to sunrise." in request_text(server.requests[0])
        assert runs.WORKED_QUERY in request_text(server.requests[0])
        # 1.7 is outside the schema's 0..1: the client re-asks and the valid 0.3 is used
        f = compute_features(q, ext.model_copy(update={"title": "other"}), exe, traj, traj_dir=tmp_path,
                             encoder=None, keywords=frozenset(), llm_client=client, names=["F2"])
        assert f == {"F2": 0.3}
        assert client.usage["ranking"].requests == 3


# --- bounds on random inputs -------------------------------------------------------------


def test_every_feature_stays_in_unit_interval_on_random_inputs(tmp_path):
    rng = random.Random(7)
    vocab = ["tap", "open", "settings", "wi-fi", "display", "dark", "the", "on", "battery", "scroll", "menu", "x"]

    def sentence(n):
        return " ".join(rng.choice(vocab) for _ in range(n)).capitalize()

    for trial in range(60):
        n_steps = rng.randint(0, 6)
        steps = [sentence(rng.randint(0, 7)) for _ in range(n_steps)]
        records, files = [], {}
        for i in range(rng.randint(0, 8)):
            name = f"s{trial}_{i}.xml"
            files[name] = runs.ui_xml([(sentence(rng.randint(0, 4)), sentence(rng.randint(0, 2)))
                                       for _ in range(rng.randint(0, 4))])
            step_index = rng.choice([None, *range(n_steps + 2)])  # includes out-of-range indices
            records.append(_step(i, step_index, name, [sentence(rng.randint(0, 3))]))
        for name, xml in files.items():
            atomic_write_text(tmp_path / name, xml)
        n_actions = len(records)
        exe = _exe(n_actions=n_actions, n_deviations=rng.randint(0, n_actions), f4=rng.random())
        traj = Trajectory(qid="q", url="u", device="sim:x", instructions=steps, steps=records, stop_reason="cycle")
        f = compute_features(Query(qid="q", query=sentence(rng.randint(0, 6))), _page(steps), exe, traj,
                             traj_dir=tmp_path, encoder=None, keywords=frozenset({"setting", "display"}), names=NO_F2)
        for name, value in f.items():
            assert 0.0 <= value <= 1.0, (trial, name, value)
        assert f["F6"] <= f["F5"] <= f["F7"] and f["F10"] <= f["F9"] <= f["F11"]


# --- ground truth never enters features ---------------------------------------------------


def test_feature_function_takes_no_ground_truth():
    params = set(inspect.signature(compute_features).parameters)
    assert not {p for p in params if any(w in p.lower() for w in ("qrel", "label", "goal", "relevance", "truth"))}


def test_changing_qrels_changes_no_feature_value(tmp_path):
    run = runs.make_run(tmp_path / "run")
    table = build_feature_table(run, _cfg(names=NO_F2, keywords_path=None))
    a = attach_labels(table, {"q1": {"https://b.example/dark": 2}})
    b = attach_labels(table, {"q1": {"https://a.example/no-steps": 2, "https://e.example/done": 1}})
    assert list(a["label"]) != list(b["label"])
    assert a.drop(columns="label").equals(b.drop(columns="label"))
    # and the table built again (labels never passed in) is identical
    assert build_feature_table(run, _cfg(names=NO_F2)).equals(table)


# --- the run-directory table --------------------------------------------------------------


def test_build_feature_table_has_one_row_per_page_with_verified_flags(tmp_path, encoder):
    run = runs.make_run(tmp_path / "run")
    table = build_feature_table(run, _cfg(), encoder=encoder)
    assert list(table.columns) == ["qid", "url", "rank", "title", "verified", *PAPER_FEATURES]
    assert list(zip(table["qid"], table["rank"])) == [("q1", 1), ("q1", 2), ("q1", 3), ("q1", 4), ("q1", 5),
                                                      ("q2", 1), ("q2", 2)]
    assert list(table["verified"]) == [False, True, False, False, True, False, True]
    worked = table[table["url"] == "https://b.example/dark"].iloc[0]
    assert worked["F1"] == 0.75 and worked["F4"] == 0.5 and worked["F17"] == 0.75
    assert table.loc[table["rank"].eq(1) & table["qid"].eq("q1"), "F4"].item() == 0.0
    values = table[list(PAPER_FEATURES)].to_numpy()
    assert np.all((values >= 0) & (values <= 1))
    assert table["F2"].gt(0).all()  # every page has a title or steps


def test_feature_set_is_configurable_and_validated(tmp_path):
    run = runs.make_run(tmp_path / "run")
    table = build_feature_table(run, _cfg(names=["F4", "n_deviations_norm", "F1"]))
    assert list(table.columns)[5:] == ["F4", "n_deviations_norm", "F1"]
    assert table.loc[table["url"] == "https://b.example/dark", "n_deviations_norm"].item() == 0.25
    from verirank_core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown feature.*F19"):
        _cfg(names=["F1", "F19"])


def test_queries_jsonl_is_optional(tmp_path):
    run = runs.make_run(tmp_path / "run", write_queries=False)
    table = build_feature_table(run, _cfg(names=["F1"]))
    assert table.loc[table["url"] == "https://b.example/dark", "F1"].item() == 0.75


def test_feature_files_round_trip_through_svmlight(tmp_path):
    from ranking.svmlight import load_svmlight

    run = runs.make_run(tmp_path / "run")
    table = attach_labels(build_feature_table(run, _cfg(names=NO_F2)), {"q2": {"https://g.example/bt": 2}})
    paths = write_feature_files(run, table)
    back = read_parquet(paths["parquet"])
    assert back.equals(table)
    data = load_svmlight(paths["svmlight"], n_features=len(NO_F2))
    assert np.allclose(data.X, table[NO_F2].to_numpy())
    assert list(data.y) == [0, 0, 0, 0, 0, 0, 2]
    assert list(data.docs) == list(table["url"])
    qids = dict(line.split("\t") for line in paths["qids"].read_text().splitlines())
    assert qids == {"1": "q1", "2": "q2"}
    assert [qids[q] for q in data.qids] == list(table["qid"])


def test_missing_inputs_give_clear_errors(tmp_path):
    run = runs.make_run(tmp_path / "run")
    (run / "execution.jsonl").rename(run / "moved.jsonl")
    with pytest.raises(StoreError, match=r"execution.jsonl not found: run `verirank execute .*` first"):
        run_stages(RunDir(run), _cfg(names=["F1"]), [FeaturesStage()])
    (run / "moved.jsonl").rename(run / "execution.jsonl")
    (run / "trajectories" / "q1" / "e" / "trajectory.json").unlink()
    with pytest.raises(StoreError, match=r"trajectories/q1/e/trajectory.json of \(q1, https://e.example/done\)"):
        build_feature_table(run, _cfg(names=["F1"]))


def test_broken_screen_dump_is_named(tmp_path):
    run = runs.make_run(tmp_path / "run")
    atomic_write_text(run / "trajectories" / "q1" / "b" / "step_001.xml", "<hierarchy><node text='x'>")
    with pytest.raises(SchemaError, match="step_001.xml: not a valid uiautomator XML dump"):
        build_feature_table(run, _cfg(names=["F9"]))


def test_duplicate_and_queryless_records_are_refused(tmp_path):
    run = runs.make_run(tmp_path / "run", write_queries=False)
    lines = (run / "extraction.jsonl").read_text().splitlines(keepends=True)
    atomic_write_text(run / "extraction.jsonl", "".join(lines + lines[:1]))
    with pytest.raises(SchemaError, match=r"\('q1', 'https://a.example/no-steps'\) appears more than once"):
        build_feature_table(run, _cfg(names=["F1"]))
    bad = lines[0].replace('"query": "How to turn on dark mode in Android settings"', '"query": ""')
    atomic_write_text(run / "extraction.jsonl", "".join([bad, *lines[1:]]))
    with pytest.raises(SchemaError, match="no query text for qid 'q1'"):
        build_feature_table(run, _cfg(names=["F1"]))


# --- the keyword list ---------------------------------------------------------------------


def test_committed_keyword_list_is_reproducible_from_the_shared_corpus(tmp_path, shared_dir, repo_root):
    from ranking.keywords import main

    strings = shared_dir / "apps" / "oneplus-settings-android11" / "res" / "values" / "strings.xml"
    out = tmp_path / "kw.txt"
    assert main(["build", "--strings", str(strings), "--out", str(out)]) == 0
    committed = repo_root / "datasets" / "keywords" / "mobile_ui_keywords.txt"
    assert out.read_text("utf-8") == committed.read_text("utf-8")


def test_keyword_selection_by_document_frequency():
    from ranking.keywords import document_frequencies, select_keywords

    df = document_frequencies(["Wi-Fi settings", "Bluetooth settings", "Settings", "Wi\u2011Fi 6", "About the phone"])
    assert df["setting"] == 3 and df["wifi"] == 2 and "6" not in df and "the" not in df
    assert select_keywords(df, top=3, min_df=2) == [("setting", 3), ("wifi", 2)]


def test_llm_relevance_from_config_in_the_table(tmp_path):
    from support_scripted_llm import ScriptedLLMServer, request_text

    run = runs.make_run(tmp_path / "run")
    # the scripted server scores a page 0.9 when its steps mention Bluetooth, else 0.1
    with ScriptedLLMServer(responder=lambda body: '{"score": %s}' % (
            0.9 if "Bluetooth" in request_text(body).split("Steps:")[1] else 0.1)) as server:
        cfg = load_config(overrides=[{"ranking": {"features": {"names": ["F2"], "relevance": "llm"}},
                                      "llm": {"base_url": server.base_url, "model": "stub-model",
                                              "cache_path": None}}])
        table = build_feature_table(run, cfg)
        assert len(server.requests) == len(table) == 7
    f2 = dict(zip(table["url"], table["F2"]))
    assert f2["https://g.example/bt"] == 0.9 and f2["https://b.example/dark"] == 0.1


def test_repairs_feature_counts_knowledge_reflection_and_half_skips_not_scrolls(tmp_path):
    from ranking.features import repairs_norm

    q, ext, exe, traj = _worked(tmp_path)
    plain = exe.model_copy(update={"n_instructions": 3, "deviation_kinds": {"scroll": 3, "expand": 1}})
    repaired = exe.model_copy(update={"n_instructions": 3,
                                      "deviation_kinds": {"scroll": 3, "knowledge": 1, "skip": 1}})
    assert repairs_norm(plain) == 0.0
    assert repairs_norm(repaired) == pytest.approx(0.5)
    many = exe.model_copy(update={"n_instructions": 1, "deviation_kinds": {"reflection": 2, "search": 1}})
    assert repairs_norm(many) == 1.0  # clipped
    f = compute_features(q, ext, repaired, traj, traj_dir=tmp_path, encoder=None,
                         keywords=runs.WORKED_KEYWORDS, names=NO_F2)
    assert f["n_repairs_norm"] == pytest.approx(0.5)
