"""`verirank worlds`: build simulator worlds from real app structure (a decoded APK, DroidBot UTGs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import friendly_errors
from verirank_core.json_types import JSONObject
from verirank_core.resources import IMPORTED_WORLDS_DIR

worlds_app = typer.Typer(
    name="worlds",
    help="Import real apps as simulator worlds: a decoded Settings APK (import-apk) or DroidBot UI "
         "transition graphs (import-utg). Each import prints a coverage report.",
    no_args_is_help=True,
)

#: where imported worlds are committed (open them as sim:imported/NAME)
IMPORTED_DIR = IMPORTED_WORLDS_DIR


def _write_world(doc: JSONObject, out: Path) -> Path:
    """Write the world as JSON; returns the absolute path written, ready for ``sim:PATH``."""
    from verirank_core.store import atomic_write_text

    out = out.expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    # compact JSON: the OnePlus world has ~540 screens
    atomic_write_text(out, json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.chmod(0o644)  # a data file others read, not a private temp file
    return out


def _write_report(report: JSONObject, path: Optional[Path]) -> None:
    if path is not None:
        from verirank_core.store import atomic_write_json

        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, report)


@worlds_app.command("import-apk")
@friendly_errors
def import_apk(
    apk_dir: Path = typer.Argument(..., help="An apktool-decoded Settings APK folder (res/xml, res/values, "
                                             "AndroidManifest.xml, fragment_xml.json)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="World file to write (default datasets/worlds/imported/<DIR name>.json)."),
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Also write the coverage report as JSON."),
    verify: bool = typer.Option(False, "--verify",
                                help="Also count the screens reachable by tapping in the simulator (slower)."),
) -> None:
    """Build the UI map of a decoded Settings APK and emit it as a simulator world.

    Example: verirank worlds import-apk ../shared/apps/oneplus-settings-android11
    then: verirank sim show imported/oneplus-settings-android11
    """
    from phonesim.worlds.apk_map import parse_apk
    from phonesim.worlds.apk_world import build_apk_world
    from phonesim.worlds.coverage import apk_coverage, format_report, tap_reachable

    uimap = parse_apk(apk_dir)
    name = apk_dir.resolve().name
    doc, world = build_apk_world(uimap, name=name,
                                 description=f"Imported from the decoded APK {apk_dir.resolve().name} "
                                             "(verirank worlds import-apk)")
    out = _write_world(doc, out or IMPORTED_DIR / f"{name}.json")
    report = apk_coverage(uimap, world)
    if verify:
        reached = tap_reachable(world)
        report["reachable_by_taps"] = sum(1 for s in world.screens if s.kind == "page" and s.id in reached
                                          and s.id in uimap.screens)
    _write_report(report, report_json)
    typer.echo(format_report(report, f"import-apk {name}"))
    typer.echo(f"wrote {out}  (open it with --devices sim:{out})")


@worlds_app.command("import-utg")
@friendly_errors
def import_utg(
    utg_dir: Path = typer.Argument(..., help="A DroidTask app folder with utg.yaml, or their parent folder "
                                             "(imports every app)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="World file (one app) or folder (several apps); default "
                                            "datasets/worlds/imported/utg-<app>.json."),
    tasks_csv: Optional[Path] = typer.Option(None, "--tasks", help="DroidTask tasks.csv (default: next to the "
                                                                   "app folders)."),
    report_json: Optional[Path] = typer.Option(None, "--report-json", help="Also write the coverage reports as JSON."),
) -> None:
    """Turn DroidBot-explored UI transition graphs into simulator worlds, one per app.

    Example: verirank worlds import-utg ../shared/apps/droidtask-utg
    """
    from phonesim.worlds.coverage import format_report, utg_coverage
    from phonesim.worlds.utg import _slug, build_utg_world, find_utg_dirs, load_tasks

    app_dirs = find_utg_dirs(utg_dir)
    several = len(app_dirs) > 1 or not (utg_dir / "utg.yaml").is_file()
    reports = {}
    for app_dir in app_dirs:
        csv_path = tasks_csv or app_dir.parent / "tasks.csv"
        utg, matched, doc, world = build_utg_world(app_dir, csv_path)
        info = load_tasks(csv_path).get(_slug(app_dir.name))
        if out is None:
            target = IMPORTED_DIR / f"{world.name}.json"
        elif several or out.suffix != ".json":
            target = out / f"{world.name}.json"
        else:
            target = out
        target = _write_world(doc, target)
        report = utg_coverage(utg, world, matched, info.tasks if info else [])
        reports[world.name] = report
        typer.echo(format_report(report, f"import-utg {app_dir.name}", max_items=10))
        typer.echo(f"wrote {target}  (open it with --devices sim:{target})\n")
    _write_report(reports, report_json)


def register(app: typer.Typer) -> None:
    app.add_typer(worlds_app, name="worlds")
