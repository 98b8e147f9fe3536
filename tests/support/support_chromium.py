"""Open a page in a real headless Chromium and report what a user's browser would see.

Drives Debian's ``chromium`` over the DevTools protocol (a websocket, via the
``websocket-client`` package): loads the page, records console errors,
uncaught exceptions and failed resource loads, then measures every ``<img>``
(``naturalWidth``) after opening every ``<details>`` element.

``CHROMIUM`` is None when the browser is not installed; tests skip then
(``make test`` installs it, see the Makefile's ``system-deps``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

CHROMIUM: Optional[str] = shutil.which("chromium") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--remote-debugging-port=0", "--remote-allow-origins=*"]


@dataclass
class PageCheck:
    """What loading one page produced."""

    title: str = ""
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    #: resources that failed to load (Network.loadingFailed)
    failed_loads: list[str] = field(default_factory=list)
    #: one entry per <img>: {"src": ..., "naturalWidth": ..., "complete": ...}
    images: list[dict[str, Any]] = field(default_factory=list)
    #: every URL the page requested
    requests: list[str] = field(default_factory=list)


class _DevTools:
    """A minimal DevTools client: send commands, collect events."""

    def __init__(self, ws_url: str):
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message
        raise TimeoutError(f"no {method} within {timeout}s")

    def close(self) -> None:
        self.ws.close()


def _devtools_port(profile: Path, proc: subprocess.Popen, timeout: float = 60.0) -> int:
    """Chromium writes the port it chose into DevToolsActivePort in its profile folder."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited early with code {proc.returncode}")
        if marker.exists():
            text = marker.read_text().split()
            if text:
                return int(text[0])
        time.sleep(0.1)
    raise TimeoutError("chromium did not open its DevTools port")


def check_page(url: str, timeout: float = 90.0) -> PageCheck:
    """Load ``url`` in a fresh headless Chromium and return what happened."""
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed")
    profile = Path(tempfile.mkdtemp(prefix="verirank-chromium-"))
    # Its own session, so that the renderer and GPU helpers can be stopped as one group:
    # the browser process exits before its children stop writing into the profile.
    proc = subprocess.Popen([CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        port = _devtools_port(profile, proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.loads(resp.read())
        page = next(t for t in targets if t.get("type") == "page")
        tools = _DevTools(page["webSocketDebuggerUrl"])
        try:
            return _inspect(tools, url, timeout)
        finally:
            tools.close()
    finally:
        _stop_group(proc)
        shutil.rmtree(profile, ignore_errors=True)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a pid reused by another user
        return False
    return True


def _stop_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop the browser and every process it started, and wait until all are gone."""
    pgid = proc.pid  # start_new_session makes the browser its group's leader
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            proc.poll()  # reap the leader so it does not linger as a zombie
            if not _group_alive(pgid):
                return
            time.sleep(0.05)
    proc.wait()


def _inspect(tools: _DevTools, url: str, timeout: float) -> PageCheck:
    for domain in ("Page", "Runtime", "Log", "Network"):
        tools.call(f"{domain}.enable")
    tools.call("Page.navigate", url=url)
    tools.wait_for("Page.loadEventFired", timeout)
    # open every collapsible block, then wait until every image has finished (or failed) loading
    tools.call("Runtime.evaluate", expression="document.querySelectorAll('details').forEach(d => d.open = true)")
    tools.call("Runtime.evaluate", awaitPromise=True, expression=(
        "Promise.all([...document.images].map(i => i.complete ? null : "
        "new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })))"))
    images = tools.call("Runtime.evaluate", returnByValue=True, expression=(
        "[...document.images].map(i => ({src: i.getAttribute('src'), naturalWidth: i.naturalWidth, "
        "complete: i.complete}))"))["result"]["value"]
    title = tools.call("Runtime.evaluate", returnByValue=True, expression="document.title")["result"]["value"]
    check = PageCheck(title=title, images=images)
    for event in tools.events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            check.exceptions.append(params.get("exceptionDetails", {}).get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            check.console_errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                                 for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            check.console_errors.append(params["entry"].get("text", ""))
        elif method == "Network.loadingFailed":
            check.failed_loads.append(params.get("errorText", "") + " " + params.get("requestId", ""))
        elif method == "Network.requestWillBeSent":
            check.requests.append(params.get("request", {}).get("url", ""))
    return check
