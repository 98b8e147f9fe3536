"""``python -m execution.knowledge build WORLD [APK_DIR]``: write datasets/knowledge/<WORLD>.json.

WORLD is a world name or file (its UI map gives the paths and keywords); APK_DIR is the
apktool-decoded APK the world was imported from (its resources give the renames). Default:
the OnePlus world and ``$VERIRANK_SHARED/apps/oneplus-settings-android11``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from execution.knowledge.cards import KNOWLEDGE_DIR, build_knowledge
from verirank_core.store import atomic_write_json


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m execution.knowledge", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the knowledge cards of one world")
    b.add_argument("world", nargs="?", default="imported/oneplus-settings-android11")
    b.add_argument("apk_dir", nargs="?", default=None)
    b.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    from phonesim.world import load_world
    from phonesim.worlds.sources import build_ui_map

    world = load_world(args.world)
    apk = args.apk_dir
    if apk is None and "oneplus-settings-android11" in args.world:
        apk = Path(os.environ.get("VERIRANK_SHARED", "../shared")) / "apps" / "oneplus-settings-android11"
    device = {"manufacturer": world.device.manufacturer, "model": world.device.model,
              "os_version": world.device.os_version}
    kb = build_knowledge(build_ui_map(world), apk, name=world.name, device=device)
    out = args.out or KNOWLEDGE_DIR / f"{Path(world.name).name}.json"
    atomic_write_json(out, kb.to_json())
    print(f"{len(kb)} cards -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
