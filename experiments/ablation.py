"""Feature ablation (the paper's Q4): retrain without one feature group at a time.

    python -m experiments.ablation [--small] [--out DIR] [--models lr,lambdamart] [--order score]

Same set-up as Table 5 (pre-train on the synthetic set, test zero-shot on
HowToBench), for LR and LambdaMART by default. For every feature group

    F1-F3 query/page, F4 judge, F5-F8 action terms, F9-F12 visible UI,
    F13-F16 distilled UI, F17-F18 positions

the model is refitted on the remaining features and the test metrics are
compared with the all-features model (paired tests per query). The ranking
order defaults to ``score`` (the model alone decides), so a dropped group
shows its effect; ``--order verified-first`` ablates under the reranking rule.
A PNG bar chart shows the NDCG@5 and P@1 changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from experiments.common import (
    FEATURE_GROUPS, METRICS, base_parser, bench_qrels, ensure_bench, ensure_pretrain, entry_point, fit_ranker,
    fmt, load_feature_table, load_training_data, log, md_table, ordered_run, pipeline_config, prepare, run_facts,
    run_pipeline, tracked, write_result,
)
from verirank_core.errors import ConfigError

NAME = "ablation"
ALL = "all features"
DEFAULT_MODELS = ("lr", "lambdamart")
CHART_METRICS = ("NDCG@5", "P@1")


def feature_sets(features: list[str]) -> dict[str, list[str]]:
    """``all features`` and, per group, the features without that group (groups absent are skipped)."""
    out = {ALL: list(features)}
    for group, members in FEATURE_GROUPS.items():
        kept = [f for f in features if f not in members]
        if len(kept) < len(features) and kept:
            out[f"- {group}"] = kept
    return out


def chart_png(deltas: dict[str, dict[str, dict[str, float]]], path: Path) -> None:
    """Grouped horizontal bars: metric change per dropped group, one panel per metric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    models = list(deltas)
    groups = [g for g in next(iter(deltas.values()))]
    fig, axes = plt.subplots(1, len(CHART_METRICS), figsize=(5 * len(CHART_METRICS), 0.45 * len(groups) + 1.6),
                             sharey=True)
    height = 0.8 / max(1, len(models))
    y = np.arange(len(groups))
    for ax, metric in zip(np.atleast_1d(axes), CHART_METRICS):
        for i, model in enumerate(models):
            ax.barh(y + i * height, [deltas[model][g][metric] for g in groups], height, label=model)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_title(f"change in {metric} (dropped group - all features)")
        ax.set_yticks(y + height * (len(models) - 1) / 2)
        ax.set_yticklabels(groups)
        ax.invert_yaxis()
    np.atleast_1d(axes)[0].legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(argv: Optional[list[str]] = None) -> dict[str, Any]:
    from ranking.metrics import evaluate, write_trec_run
    from ranking.models import LEARNED_MODELS
    from ranking.rerank import score_with_model
    from ranking.significance import compare

    parser = base_parser("python -m experiments.ablation", __doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help=f"comma-separated learned models (default {','.join(DEFAULT_MODELS)})")
    parser.add_argument("--order", default="score", choices=("score", "verified-first"),
                        help="ranking order of the test lists (default score)")
    args = parser.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in LEARNED_MODELS]
    if unknown or not models:
        raise ConfigError(f"--models: unknown {unknown or models}; valid: {', '.join(LEARNED_MODELS)}")
    setup = prepare(args)
    bench = ensure_bench(setup)
    config = pipeline_config(setup.config, bench, args.devices)
    pretrain = ensure_pretrain(setup, config)
    run_pipeline(bench, setup.run_dir, config)
    qrels = bench_qrels(bench)
    table = load_feature_table(setup.run_dir, qrels)
    train_all, _ = load_training_data(pretrain)
    sets = feature_sets(train_all.feature_names)
    folder = setup.out / NAME

    results: dict[str, dict[str, Any]] = {}
    runs: dict[str, dict[str, Any]] = {}
    for model_name in models:
        results[model_name], runs[model_name] = {}, {}
        for label, features in sets.items():
            log(f"ablation: {model_name} {label} ({len(features)} features)")
            train, valid = load_training_data(pretrain, features)
            model = fit_ranker(model_name, train, valid, config)
            run = ordered_run(table, score_with_model(table, model), args.order)
            runs[model_name][label] = run
            results[model_name][label] = evaluate(run, qrels, METRICS)
            write_trec_run(folder / "runs" / f"{model_name}-{_slug(label)}.trec", run, tag=model_name)

    deltas: dict[str, dict[str, dict[str, float]]] = {}
    rows, data_rows = [], []
    for model_name in models:
        full = results[model_name][ALL]
        deltas[model_name] = {}
        for label, result in results[model_name].items():
            tests = {} if label == ALL else {
                t.metric: t for t in compare(result, full, METRICS, n_resamples=config.ranking.evaluate.n_resamples,
                                             seed=config.ranking.seed)}
            delta = {m: result.mean[m] - full.mean[m] for m in METRICS}
            if label != ALL:
                deltas[model_name][label.removeprefix("- ")] = delta
            cells = [fmt(result.mean[m]) if label == ALL else
                     f"{fmt(result.mean[m])} ({delta[m]:+.3f}{'†' if tests[m].p_permutation < 0.05 else ''})"
                     for m in METRICS]
            rows.append([model_name, label, len(sets[label]), *cells])
            data_rows.append({"model": model_name, "features": label, "columns": sets[label], "mean": result.mean,
                              "delta": delta if label != ALL else None,
                              "significance_vs_all": [t.to_dict() for t in tests.values()]})
    png = setup.results / f"{setup.result_name(NAME)}.png"
    chart_png(deltas, png)
    facts = run_facts(setup, bench, [pretrain])
    markdown = "\n".join([
        f"# Feature ablation ({facts['benchmark']['name']})",
        "",
        f"Pre-trained on the synthetic set, tested zero-shot; ranking order `{args.order}`. Each row drops one "
        "feature group and refits the model; in brackets the change against all features "
        "(`†`: p < 0.05, paired permutation test).",
        "",
        md_table(["Model", "Features", "Columns", *METRICS], rows, numeric_from=2),
        f"![ablation chart]({png.name})",
        "",
        f"Code: {facts['code']}; {facts['date']}.",
        "",
    ])
    data = {"experiment": NAME, "size": setup.size, **facts, "order": args.order, "models": models,
            "groups": {k: list(v) for k, v in FEATURE_GROUPS.items()}, "rows": data_rows, "png": str(png),
            "runs_folder": str(folder / "runs"), "qrels": str(bench / "qrels.txt")}
    with tracked(setup, NAME, {"models": ",".join(models), "order": args.order}) as tracker:
        for model_name in models:
            for label, result in results[model_name].items():
                tracker.system(f"{model_name} {label}", result, runs[model_name][label],
                               params={"model": model_name, "features": ",".join(sets[label])})
        paths = write_result(setup, NAME, markdown, {**data, "mlflow_run_id": tracker.run_id})
        tracker.artifacts([*paths.values(), png])
    return {**data, "paths": paths}


def _slug(label: str) -> str:
    return "all" if label == ALL else "minus-" + label.removeprefix("- ").split()[0].lower()


main = entry_point(run)

if __name__ == "__main__":
    raise SystemExit(main())
