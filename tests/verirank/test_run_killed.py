"""A real kill: `verirank run` is SIGKILLed during extraction and during execution, then resumed.

The run is a child process on the bundled demo, with the LLM extractor and the
LLM judge talking to a scripted stub server (no model can run here). The stub
is also the clock of the test: it answers a few requests of a stage, then
holds the next one until the test has killed the run, so the kill always lands
in the middle of the stage without any sleep.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
from collections import Counter
from pathlib import Path

from support_adb import wait_until
from support_scripted_llm import ScriptedLLMServer, request_text
from support_served_sim import REPO, cli_command, cli_env

WORLD = "android13-settings"
KEY_ENV = "VERIRANK_KILL_TEST_KEY"
KEY = "sk-kill-test-not-a-real-key"
STAGE_FILES = ("pages.jsonl", "extraction.jsonl", "execution.jsonl", "reranked.jsonl")


class Gate:
    """Answers stub replies; each kind of request is held once its allowance is used up."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.allowed: dict[str, float] = {"extraction": float("inf"), "judge": float("inf")}
        self.answered: Counter = Counter()
        self.waiting: Counter = Counter()

    def allow(self, kind: str, more: float) -> None:
        with self.cond:
            self.allowed[kind] = self.answered[kind] + more
            self.cond.notify_all()

    def open(self) -> None:
        for kind in self.allowed:
            self.allow(kind, float("inf"))

    def respond(self, body: dict) -> str:
        text = request_text(body)
        kind = "extraction" if "<page_html>" in text else "judge"
        with self.cond:
            while self.answered[kind] >= self.allowed[kind]:
                self.waiting[kind] += 1
                self.cond.wait()
                self.waiting[kind] -= 1
            self.answered[kind] += 1
        if kind == "judge":
            return json.dumps({"steps": [], "score": 0.5, "reason": "stub judge"})
        # a stub "model" that copies the page's list items as its steps
        page = text.split("<page_html>", 1)[1]
        items = [re.sub(r"<[^>]+>", "", li).strip() for li in re.findall(r"<li[^>]*>(.*?)</li>", page, re.S)]
        items = [i for i in items if i]
        return json.dumps({"has_steps": bool(items), "steps": items[:10],
                           "reason": "" if items else "no list on the page"})


def _keys(path: Path) -> list[tuple[str, str]]:
    """(qid, url) of every whole line; a torn last line (the kill) is not a row yet."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text("utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        rows.append((row["qid"], row["url"]))
    return rows


def _executed(path: Path) -> int:
    if not path.exists():
        return 0
    return path.read_text("utf-8").count('"status": "executed"') + path.read_text("utf-8").count('"status":"executed"')


def test_run_survives_sigkill_in_extraction_and_execution(tmp_path: Path) -> None:
    out = tmp_path / "run"
    gate = Gate()
    with ScriptedLLMServer(responder=gate.respond) as llm:
        args = cli_command(
            "run", "--quickstart", "--out", str(out), "--extractor", "llm",
            "--devices", f"sim:{WORLD},sim:{WORLD}",  # two simulators: one process each
            "--set", f"llm.base_url={llm.base_url}", "--set", "llm.cache_path=null",
            "--set", f"llm.api_key_env={KEY_ENV}", "--set", "execution.judge=llm",
        )
        env = dict(cli_env(), **{KEY_ENV: KEY})

        def start() -> subprocess.Popen:
            return subprocess.Popen(args, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True)

        def kill(proc: subprocess.Popen) -> None:
            os.killpg(proc.pid, signal.SIGKILL)  # the run and its worker processes
            proc.wait(30)
            proc.stdout.close()

        # 1. killed during extraction: two pages extracted, the third held by the stub
        gate.allow("extraction", 2)
        gate.allow("judge", 0)
        proc = start()
        wait_until(lambda: len(_keys(out / "extraction.jsonl")) >= 1 and gate.waiting["extraction"] >= 1
                   or proc.poll() is not None, 300, what="the run to be held mid-extraction")
        assert proc.poll() is None, proc.stdout.read().decode()
        kill(proc)
        extracted = len(_keys(out / "extraction.jsonl"))
        pages = len(_keys(out / "pages.jsonl"))
        assert 1 <= extracted < pages

        # 2. resumed, then killed during execution: one page judged, the next held
        gate.allow("extraction", float("inf"))
        gate.allow("judge", 1)
        proc = start()
        wait_until(lambda: _executed(out / "execution.jsonl") >= 1 and gate.waiting["judge"] >= 1
                   or proc.poll() is not None, 300, what="the run to be held mid-execution")
        assert proc.poll() is None, proc.stdout.read().decode()
        kill(proc)
        with_steps = sum(1 for line in (out / "extraction.jsonl").read_text().splitlines()
                         if json.loads(line)["steps"])
        assert 1 <= _executed(out / "execution.jsonl") < with_steps
        assert len(_keys(out / "extraction.jsonl")) == pages  # extraction had finished

        # 3. resumed to the end
        gate.open()
        done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, timeout=900)
        assert done.returncode == 0, (done.stdout + done.stderr).decode()[-3000:]
        # worker processes built their own LLM client, with the key from the environment
        assert {h.get("authorization") for h in llm.headers} == {f"Bearer {KEY}"}

    serp = _keys(out / "serp.jsonl")
    assert serp and len(set(serp)) == len(serp)
    for name in STAGE_FILES:
        keys = _keys(out / name)
        assert len(keys) == len(set(keys)), f"{name}: a row was written twice"
        assert set(keys) == set(serp), f"{name}: rows lost"
    assert _executed(out / "execution.jsonl") == with_steps
