"""Settings of stage 2 (devices, agent, judge, safety, executors)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- agent settings ---------------------------------------------------------------

class HeuristicPredictorConfig(_Section):
    #: minimum match score (0-1) between a step's target and a control label
    match_threshold: float = Field(0.62, ge=0.0, le=1.0)
    #: consult MiniLM when no label matches lexically
    use_embeddings: bool = True
    #: swipes down a list looking for an off-screen target before giving up
    max_scrolls: int = Field(4, ge=0, le=20)
    #: back presses per step when its target cannot be found
    max_backs: int = Field(1, ge=0, le=5)


class LLMPredictorConfig(_Section):
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(300, ge=16)
    #: send the current screenshot as an image (a VLM is needed)
    send_screenshot: bool = True
    #: earlier screenshots sent along (oldest dropped first)
    history_screens: int = Field(2, ge=0, le=8)
    #: earlier actions listed in the prompt
    history_actions: int = Field(12, ge=0, le=50)


class ProxyConfig(_Section):
    #: what to try when a click changes nothing: tap_center (centre of the label text), long_press
    fallbacks: list[Literal["tap_center", "long_press"]] = Field(
        default_factory=lambda: ["tap_center", "long_press"])
    #: re-dump after acting and check the screen changed when a change is expected
    verify_change: bool = True
    #: wait after an action before verifying (real phones animate; the simulator does not)
    settle_ms: int = Field(0, ge=0, le=10_000)
    #: re-dump before acting when the observation is older than this (slow predictors)
    stale_ms: int = Field(5000, ge=0)


class SafetyConfig(_Section):
    #: risk categories that may run (default: none): factory_reset, erase_data,
    #: purchase, call, message, uninstall, password_change
    allow: list[Literal["factory_reset", "erase_data", "purchase", "call", "message", "uninstall",
                        "password_change"]] = Field(default_factory=list)


class HeuristicJudgeConfig(_Section):
    #: F4 cap when the page's last actionable step only navigates (see docs/agent.md)
    navigation_only_cap: float = Field(0.5, ge=0.0, le=1.0)
    #: read the query's target through the device's knowledge cards ("auto brightness" ->
    #: "Adaptive Brightness")
    use_knowledge: bool = True


class AgentConfig(_Section):
    """Everything ``run_episode`` and the predictors/judges are built from."""

    heuristic: HeuristicPredictorConfig = HeuristicPredictorConfig()
    llm: LLMPredictorConfig = LLMPredictorConfig()
    proxy: ProxyConfig = ProxyConfig()
    safety: SafetyConfig = SafetyConfig()
    judge: HeuristicJudgeConfig = HeuristicJudgeConfig()
    #: stop when the same action on the same screen comes up this many times
    cycle_repeats: int = Field(3, ge=2, le=20)
    #: follow the app's UI map when a step's target is not on screen (UICompass-style repair;
    #: every map-guided action counts as a deviation). Off by default: see docs/real-worlds.md
    #: ("UI map as agent knowledge") for the ablation behind this choice
    use_ui_map: bool = False
    #: where the map comes from: a world file/name or an apktool-decoded APK folder; needed for
    #: adb devices (null: sim devices map their own world, adb devices go without)
    ui_map: Optional[str] = None
    #: at most this many map-guided actions per intent of a step (then the blind search takes over)
    ui_map_max_actions: int = Field(8, ge=1, le=50)
    #: consult knowledge cards (renames for this app and device) when unsure (docs/agent.md);
    #: every use is a deviation of kind "knowledge"
    use_knowledge: bool = True
    #: a cards file (``python -m execution.knowledge build``); null: datasets/knowledge/<world>.json
    knowledge: Optional[str] = None
    #: curiosity (0-1) above which the cards are consulted
    curiosity_threshold: float = Field(0.35, ge=0.0, le=1.0)
    #: when a step's item is not found, go back along the path once and retry (kind "reflection")
    use_reflection: bool = True
    #: skip a grouping step whose item is missing when the next step's item is visible (kind "skip")
    skip_grouping_steps: bool = True
    #: follow the page plan with lookahead: an absent grouping inside a step or across steps is skipped
    #: when the next named item is visible (kind "skip"); off = only a whole grouping step is skipped
    use_lookahead: bool = True
    #: reaching the irreversible confirm of the page's stated goal (reset, erase, ...) counts as
    #: following that step; the confirm is never pressed (kind "dry_run"); off = the page is blocked
    use_dry_run: bool = True


class AdbConfig(_Section):
    """How ``adb:SERIAL`` devices are reached and reset (docs/adb.md)."""

    #: where the adb server listens; null: as adb itself decides ($ANDROID_ADB_SERVER_ADDRESS and
    #: $ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037). A local server not running yet is started
    adb_host: Optional[str] = None
    adb_port: Optional[int] = Field(None, ge=1, le=65535)
    #: force-stop (default), pm-clear (also wipes app data) or snapshot (emulators only)
    reset: Literal["force-stop", "pm-clear", "snapshot"] = "force-stop"
    snapshot_name: Optional[str] = None
    dump_retries: int = Field(3, ge=0, le=20)
    timeout_s: float = Field(30.0, gt=0)
    #: take a screenshot in parallel with every dump (the agent's screenshot then costs nothing) and
    #: skip waiting for the dump when the screenshot is identical to one whose dump is known
    #: (docs/adb.md, "Per-step cost")
    skip_unchanged_dumps: bool = True


class ExecutionConfig(_Section):
    #: device specs: ``sim:WORLD`` (a world name or file) or ``adb:SERIAL``
    devices: list[str] = Field(default_factory=lambda: ["sim:android13-settings"])
    predictor: Literal["heuristic", "llm"] = "heuristic"
    judge: Literal["heuristic", "llm"] = "heuristic"
    max_steps: int = Field(28, ge=1, le=200)
    #: how device slots run: ``auto`` (processes when every device is ``sim:``, there are several
    #: and at least ``process_min_pages`` pages to run, else threads), ``threads`` (adb devices
    #: wait on I/O), ``processes`` (one process per device slot: simulators are CPU-bound), or
    #: ``ray`` (one actor per slot)
    executor: Literal["auto", "threads", "processes", "ray"] = "auto"
    #: ``auto`` runs several sim devices in processes only when at least this many pages are to
    #: run: each worker process first pays about 0.3 s of cold caches (docs/throughput.md)
    process_min_pages: int = Field(80, ge=0)
    #: attempts per page across devices when a device fails mid-trajectory
    max_attempts: int = Field(3, ge=1, le=20)
    #: keep the screens (dumps, screenshots) each trajectory names in <run>/screens/ (false: trajectories only)
    save_screens: bool = True
    #: which screenshots are drawn/captured and saved: every_step (the report shows each step;
    #: the demo sets this), final (the last screen only; cheap batch jobs) or none. An LLM judge
    #: always gets every_step; an LLM predictor's screenshots are saved when it takes them
    screenshots: Literal["every_step", "final", "none"] = "final"
    #: saved screenshots are scaled by this (0.5: 540x1200 for a 1080x2400 phone); the trajectory
    #: records the screen size, and coordinates stay in device pixels
    screenshot_scale: float = Field(0.5, gt=0.0, le=1.0)
    #: route a page to ``sim:<world>`` when its query names a world (benchmarks)
    route_by_world: bool = True
    #: SQLite file of control-label and step vectors, shared by the worker processes of a run and,
    #: by default, by every run of the user (``~``: the home), so each text is embedded once on the
    #: machine; relative paths are under the run, null turns it off; $VERIRANK_VECTOR_CACHE moves
    #: the default ("off": off) (docs/throughput.md)
    vector_cache: str | None = "~/.cache/verirank/vectors.sqlite"
    #: the file keeps the newest this many texts (1.5 kB each)
    vector_cache_max_texts: int = Field(100_000, ge=1)
    #: SQLite file of verdicts kept between runs (docs/agent.md, "Verdicts are reused"): a page whose
    #: steps, query, device model, Android and app version, agent, judge and knowledge are unchanged
    #: takes its stored verdict and trajectory and touches no device. ``~`` is the user's home, a
    #: relative path is under the run, null turns it off; $VERIRANK_VERDICT_CACHE overrides it ("off": off)
    verdict_cache: str | None = "~/.cache/verirank/verdicts.sqlite"
    #: read stored verdicts (``--no-reuse`` sets false: every page runs, and its verdict is stored anew)
    reuse: bool = True
    #: a stored verdict older than this many days is not reused (null: any age)
    verdict_max_age_days: float | None = Field(30.0, ge=0)
    #: Ray executor: address of an existing cluster (None = local ``ray.init``)
    ray_address: str | None = None
    ray_num_cpus: int = Field(2, ge=1)
    #: agent, predictors, proxy, safety and judge settings (docs/agent.md)
    agent: AgentConfig = AgentConfig()
    adb: AdbConfig = AdbConfig()
    #: undo what a page changed before the next page on the same device (docs/agent.md):
    #: ``auto`` = on for ``adb:`` devices (settings outlive a force-stop), off for ``sim:``
    #: (the simulator resets its whole world); ``on`` / ``off`` for every device
    isolation: Literal["auto", "on", "off"] = "auto"
    #: ``NAMESPACE/KEY`` settings that isolation never restores (values the system changes itself)
    isolation_ignore: list[str] = Field(default_factory=list)

    @field_validator("isolation", mode="before")
    @classmethod
    def _yaml_on_off(cls, value: object) -> object:
        # YAML reads a bare on/off as true/false
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value
    #: extra context for the predictor, e.g. {"email": "TEST_ACCOUNT_EMAIL"}: names of
    #: environment variables, so that credential values never reach the manifest
    credentials_env: dict[str, str] = Field(default_factory=dict)

    def screenshot_mode(self) -> str:
        """``screenshots``, raised to every_step when an LLM judge will read each step's screen."""
        return "every_step" if self.judge == "llm" else self.screenshots
