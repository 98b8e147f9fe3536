"""`verirank sim`: look at, check and serve the simulated phones (worlds)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import fail, friendly_errors

sim_app = typer.Typer(
    name="sim",
    help="Simulated phones (worlds): list them, render their screens, check them, serve one over adb.",
    no_args_is_help=True,
)


@sim_app.command("list")
@friendly_errors
def list_cmd() -> None:
    """List the bundled worlds with their app, version and device."""
    from phonesim.world import list_worlds, load_world

    names = list_worlds()
    if not names:
        typer.echo("no bundled worlds found in datasets/worlds/")
        return
    rows = [("world", "app", "package", "version", "device", "android", "screens", "goals")]
    for name in names:
        w = load_world(name)
        rows.append((name, w.app.label, w.app.package, w.app.version, f"{w.device.manufacturer} {w.device.model}",
                     w.device.os_version, str(len(w.screens)), str(len(w.goals))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        typer.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip())


@sim_app.command("show")
@friendly_errors
def show_cmd(
    world: str = typer.Argument(..., help="A bundled world name (see `verirank sim list`) or a world file."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for the PNGs and XML dumps "
                                                               "(default: sim-show/WORLD)."),
    screens: Optional[str] = typer.Option(None, "--screens", help="Comma-separated screen ids (default: all, "
                                                                  "plus the launcher)."),
) -> None:
    """Render screens to PNG plus their uiautomator XML dump (long lists: one file per scrolled page).

    Files are SCREEN.png / SCREEN.xml, then SCREEN_p2.png... for the next pages of a long list.
    Screens are opened directly, with the world's initial state.
    """
    from phonesim.simulator import Simulator
    from phonesim.world import load_world
    from verirank_core.store import atomic_write_bytes, atomic_write_text

    w = load_world(world)
    sim = Simulator(w)
    wanted = [s.strip() for s in screens.split(",") if s.strip()] if screens else ["launcher"] + [s.id for s in w.screens]
    known = {"launcher"} | {s.id for s in w.screens}
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise fail(f"unknown screen(s) {', '.join(unknown)} in world {w.name} (screens: {', '.join(sorted(known))})")
    folder = out or Path("sim-show") / w.name
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for screen_id in wanted:
        sim.open_screen(screen_id)
        page = 1
        while True:
            stem = screen_id if page == 1 else f"{screen_id}_p{page}"
            atomic_write_bytes(folder / f"{stem}.png", sim.screenshot_png())
            atomic_write_text(folder / f"{stem}.xml", sim.dump_xml())
            written += 1
            win = sim.window()
            if win.list_node is None or win.scroll >= win.max_scroll:
                break
            # next page: scroll by 80% of the viewport so consecutive pages overlap a little
            step = int((win.viewport[1] - win.viewport[0]) * 0.8)
            sim.scroll_to(win.scroll + step)
            page += 1
    typer.echo(f"wrote {written} screenshots (+ XML dumps) of {len(wanted)} screens to {folder}")


@sim_app.command("check")
@friendly_errors
def check_cmd(
    world: str = typer.Argument(..., help="A bundled world name or a world file."),
    max_states: int = typer.Option(20_000, help="Give up a search after this many distinct situations."),
) -> None:
    """Prove a world is coherent: every screen reachable by taps from the launcher, every goal satisfiable.

    A tool for world authors; it reads goals (ground truth), which agents never do.
    """
    import time

    from phonesim.explore import explore, solve_goal
    from phonesim.world import load_world

    w = load_world(world)
    started = time.perf_counter()
    report = explore(w, max_states=max_states)
    typer.echo(f"{w.name}: {len(w.screens)} screens, {len(report.reached)} reached "
               f"({report.states} situations searched)")
    problems = 0
    for screen_id in report.unreachable:
        typer.secho(f"  unreachable screen: {screen_id}", fg=typer.colors.RED)
        problems += 1
    initial = w.initial_state()
    for name, goal in w.goals.items():
        if goal._compiled.evaluate(initial):
            typer.secho(f"  goal {name}: already true in the initial state", fg=typer.colors.YELLOW)
        path = solve_goal(w, name, max_states=max_states)
        if path is None:
            typer.secho(f"  goal {name}: NOT satisfiable within {max_states} situations", fg=typer.colors.RED)
            problems += 1
        else:
            typer.echo(f"  goal {name}: {len(path)} steps: " + " > ".join(str(m) for m in path))
    typer.echo(f"checked in {time.perf_counter() - started:.1f}s: "
               + ("OK" if not problems else f"{problems} problem(s)"))
    if problems:
        raise typer.Exit(1)


@sim_app.command("serve")
@friendly_errors
def serve_cmd(
    world: str = typer.Argument(..., help="A bundled world name or a world file."),
    port: int = typer.Option(5555, "--port", "-p", help="TCP port to listen on."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    latency: str = typer.Option(
        "", "--latency", help="Answer as slowly as a phone: NAME=SECONDS pairs, e.g. dump=1.0,tap=0.3,screenshot=0.4, "
                              "optionally after the profile 'phone' (phone,dump=2). Names: dump, screenshot, tap, "
                              "swipe, key, text (input: all four), launch, shell, pull. Default: no delay."),
) -> None:
    """Serve a simulated phone over the ADB protocol (then: adb connect HOST:PORT, or --devices adb:HOST:PORT).

    With --latency each operation waits on the served side (a sleep, not CPU) as long as it takes
    on a phone, so several served simulators behave like a farm of phones (docs/adb.md).
    """
    try:
        from phonesim.adb_server import serve_forever
    except ModuleNotFoundError as exc:
        if exc.name != "phonesim.adb_server":
            raise
        raise fail("the ADB protocol server (phonesim/adb_server.py) is not available in this install") from None
    from phonesim.device import SimDevice
    from phonesim.latency import Latency

    delays = Latency.parse(latency)  # a bad spec is a VerirankError: one red line, before the world loads
    device = SimDevice.open(world)

    def ready(bound: int) -> None:
        slow = f", latency {delays.describe()}" if delays else ""
        typer.echo(f"serving {device.spec} ({device.world.device.model}, Android {device.world.device.os_version}"
                   f"{slow}) on {host}:{bound}; connect with: adb connect {host}:{bound}  (Ctrl-C to stop)")

    serve_forever(device, host=host, port=port, ready=ready, latency=delays)


def register(app: typer.Typer) -> None:
    app.add_typer(sim_app, name="sim")
