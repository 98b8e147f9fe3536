"""The project's one LLM client: JSON answers from any OpenAI-compatible server.

Every LLM call of verirank (step extraction, action prediction, judging) goes
through :class:`LLMClient`. It

* speaks the chat-completions protocol through the real ``openai`` package, so
  it works with OpenAI, vLLM, Ollama, llama.cpp and friends (``LLMConfig.base_url``);
* asks for JSON matching a schema (``response_format`` ``json_schema``, falling
  back to ``json_object`` plus the schema in the prompt when a server refuses
  it), validates the reply with ``jsonschema`` and asks again, quoting the
  validation error, a bounded number of times;
* caches validated answers in SQLite, so a re-run sends no request and gets the
  same answers (reproducible runs);
* counts requests, tokens, cache hits and retries per pipeline stage;
* never writes the API key anywhere: not in its repr, logs, errors or the cache.

Typical use::

    client = LLMClient.from_config(cfg.llm)
    res = client.complete_json(messages, SCHEMA, stage="extraction")
    res.data["steps"]
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Optional, Union
from urllib.parse import urlsplit

from verirank_core.config import LLMConfig
from verirank_core.errors import ConfigError, LLMError, LLMOutputError, StoreError
from verirank_core.json_types import JSONObject
from verirank_core.store import connect_shared_sqlite

__all__ = [
    "LLMClient",
    "LLMResult",
    "Usage",
    "ResponseCache",
    "image_part",
    "redact",
    "extract_json_object",
    "cache_key",
    "OPENAI_BASE_URL",
]

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
#: sent when a local server needs no key (the openai package insists on one)
PLACEHOLDER_KEY = "no-key-needed"
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
#: how much of a bad reply is echoed back to the model when asking again
_MAX_ECHO_CHARS = 4000
_MAX_ERROR_CHARS = 300
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# --- small pure helpers -------------------------------------------------------


def redact(text: str, secret: Optional[str]) -> str:
    """``text`` with every occurrence of ``secret`` replaced by ``***``."""
    if not secret or not text:
        return text
    return text.replace(secret, "***")


def image_part(png: bytes) -> JSONObject:
    """A chat content part holding a PNG screenshot as a base64 data URL."""
    if not isinstance(png, (bytes, bytearray)) or not bytes(png).startswith(_PNG_MAGIC):
        head = bytes(png[:8]) if isinstance(png, (bytes, bytearray)) else type(png).__name__
        raise LLMError(f"image_part expects PNG bytes; got {head!r}")
    url = "data:image/png;base64," + base64.b64encode(bytes(png)).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url}}


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(base_url: str, model: str, messages: list, schema: dict,
              temperature: float, max_tokens: Optional[int]) -> str:
    """sha256 of the canonical JSON of everything that determines an answer.

    The API key is deliberately not part of it: the same question to the same
    model has the same answer whoever pays for it.
    """
    payload = {
        "v": 1,
        "base_url": base_url.rstrip("/"),
        "model": model,
        "messages": messages,
        "schema": schema,
        "temperature": float(temperature),
        "max_tokens": max_tokens,
    }
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str) -> dict:
    """The first JSON object in a model reply.

    Tolerates Markdown fences and prose before or after the object, which
    models without structured-output support often add. Raises ``ValueError``
    with a short explanation when there is no object.
    """
    if text is None or not text.strip():
        raise ValueError("the reply is empty")
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(stripped)]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
        raise ValueError(f"the reply is a JSON {type(value).__name__}, not an object")
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("the reply holds no JSON object")


def _validation_error(data: dict, schema: dict) -> Optional[str]:
    """A short description of the schema violations (at most three), or None."""
    import jsonschema

    validator_cls = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_cls(schema).iter_errors(data), key=lambda e: list(map(str, e.path)))
    if not errors:
        return None
    parts = []
    for err in errors[:3]:
        where = "/".join(str(p) for p in err.path) or "<root>"
        message = err.message
        if len(message) > _MAX_ERROR_CHARS:
            message = message[:_MAX_ERROR_CHARS] + "..."
        parts.append(f"at {where}: {message}")
    if len(errors) > 3:
        parts.append(f"and {len(errors) - 3} more")
    return "; ".join(parts)


def _is_official(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").endswith("openai.com")


def _is_local(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "") in _LOCAL_HOSTS


# --- records -----------------------------------------------------------------


@dataclass
class LLMResult:
    """A validated JSON answer."""

    #: the parsed reply, valid against the schema asked for
    data: dict
    #: the raw assistant text it was parsed from
    text: str
    #: tokens of the call that produced the answer (for a cache hit: of the
    #: original call, so outputs are identical across re-runs; ``usage`` counts
    #: only what was actually spent)
    prompt_tokens: int
    completion_tokens: int
    #: True when served from the response cache (no request was sent)
    cached: bool = False
    #: requests sent for this answer (0 when cached; >1 after corrective retries)
    attempts: int = 1


@dataclass
class Usage:
    """What one pipeline stage spent on the LLM."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    #: corrective re-asks after output that failed validation
    retries: int = 0


# --- the response cache ------------------------------------------------------


class ResponseCache:
    """Validated answers in SQLite, keyed by :func:`cache_key`.

    One connection guarded by a lock serves all threads; WAL mode lets several
    processes share the file. Only the key hash, the reply text and the token
    counts are stored: neither prompts nor credentials.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            self._conn = connect_shared_sqlite(
                self.path,
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,"
                " data TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,"
                " completion_tokens INTEGER NOT NULL, created REAL NOT NULL)")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the LLM response cache {self.path}: {exc}") from exc
        self._lock = threading.Lock()

    def get(self, key: str) -> Optional[LLMResult]:
        with self._lock:
            row = self._conn.execute(
                "SELECT text, data, prompt_tokens, completion_tokens FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, data, prompt_tokens, completion_tokens = row
        return LLMResult(data=json.loads(data), text=text, prompt_tokens=prompt_tokens,
                         completion_tokens=completion_tokens, cached=True, attempts=0)

    def put(self, key: str, model: str, result: LLMResult) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, model, result.text, _canonical(result.data), result.prompt_tokens,
                 result.completion_tokens, time.time()),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# --- the client ----------------------------------------------------------------

class _FromConfig:
    """The type of the sentinel that means "use cfg.cache_path"."""


_FROM_CONFIG = _FromConfig()


class LLMClient:
    """JSON completions from an OpenAI-compatible server; see the module docstring."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        max_retries: int = 2,
        cache: Optional[ResponseCache] = None,
    ):
        import openai

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.cache = cache
        self._api_key = api_key
        # the same budget bounds openai's own transport retries (connection
        # errors, 429, 5xx); ours only re-ask after invalid output
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=api_key,
                                     timeout=timeout_s, max_retries=max_retries)
        #: set once a server refused json_schema; later calls use json_object
        self._json_object_only = False
        self._usage: dict[str, Usage] = {}
        self._valid_schemas: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_config(
        cls,
        cfg: LLMConfig,
        *,
        env: Mapping[str, str] = os.environ,
        cache: Union[ResponseCache, str, Path, None, _FromConfig] = _FROM_CONFIG,
    ) -> "LLMClient":
        """Build a client from the ``llm`` config section.

        The key is read from the environment variable named ``cfg.api_key_env``.
        It may be missing for a self-hosted server (a placeholder is sent), but
        not for the official OpenAI endpoint. ``cache`` overrides
        ``cfg.cache_path``: a :class:`ResponseCache`, a path, or ``None`` (off).
        """
        base_url = (cfg.base_url or OPENAI_BASE_URL).rstrip("/")
        api_key = env.get(cfg.api_key_env, "") if cfg.api_key_env else ""
        if not api_key:
            if _is_official(base_url):
                raise ConfigError(
                    f"llm: the environment variable {cfg.api_key_env or '(llm.api_key_env)'} "
                    f"holds no API key, which {base_url} requires; set it, or point "
                    "llm.base_url at a local server"
                )
            if not _is_local(base_url):
                log.info("llm: %s is not set; sending no key to %s", cfg.api_key_env, base_url)
            api_key = PLACEHOLDER_KEY
        if cache is _FROM_CONFIG:
            cache = ResponseCache(Path(cfg.cache_path)) if cfg.cache_path else None
        elif isinstance(cache, (str, Path)):
            cache = ResponseCache(Path(cache))
        return cls(base_url=base_url, model=cfg.model, api_key=api_key,
                   api_key_env=cfg.api_key_env, timeout_s=cfg.timeout_s,
                   max_retries=cfg.max_retries, cache=cache)

    # --- secrets -----------------------------------------------------------

    def __repr__(self) -> str:
        cache = str(self.cache.path) if self.cache is not None else None
        return (f"LLMClient(base_url={self.base_url!r}, model={self.model!r}, "
                f"api_key=<from ${self.api_key_env}>, cache={cache!r})")

    __str__ = __repr__

    def redact(self, text: str) -> str:
        """``text`` with this client's API key replaced by ``***``."""
        return redact(text, self._api_key if self._api_key != PLACEHOLDER_KEY else None)

    # --- accounting --------------------------------------------------------

    def _count(self, stage: str, **deltas: int) -> None:
        with self._lock:
            usage = self._usage.setdefault(stage, Usage())
            for name, delta in deltas.items():
                setattr(usage, name, getattr(usage, name) + delta)

    @property
    def usage(self) -> dict[str, Usage]:
        """Per-stage usage so far (a snapshot copy)."""
        with self._lock:
            return {stage: Usage(**asdict(u)) for stage, u in self._usage.items()}

    def usage_dict(self) -> dict[str, dict[str, int]]:
        """:attr:`usage` as plain JSON, for manifests and MLflow."""
        return {stage: asdict(u) for stage, u in self.usage.items()}

    # --- the call ----------------------------------------------------------

    def complete_json(
        self,
        messages: list[dict],
        schema: dict,
        *,
        stage: str,
        temperature: float = 0.0,
        max_tokens: Optional[int] = None,
        schema_name: str = "output",
    ) -> LLMResult:
        """Ask the model and return its reply parsed and validated against ``schema``.

        Raises :class:`LLMOutputError` when no reply validates within
        ``1 + max_retries`` requests, :class:`LLMError` when the server cannot
        be reached or refuses the request.
        """
        self._check_schema(schema)
        try:
            key = cache_key(self.base_url, self.model, messages, schema, temperature, max_tokens)
        except (TypeError, ValueError) as exc:
            raise LLMError(f"messages for stage {stage!r} are not JSON-serialisable: {exc}") from exc
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self._count(stage, cache_hits=1)
                log.debug("llm[%s]: cache hit %s", stage, key[:12])
                return hit

        conversation = list(messages)
        last_error = ""
        for attempt in range(1, self.max_retries + 2):
            text, prompt_tokens, completion_tokens, finish = self._send(
                conversation, schema, schema_name, temperature, max_tokens)
            self._count(stage, requests=1, prompt_tokens=prompt_tokens,
                        completion_tokens=completion_tokens)
            log.debug("llm[%s]: attempt %d, %d+%d tokens", stage, attempt,
                      prompt_tokens, completion_tokens)
            try:
                data = extract_json_object(text)
                problem = _validation_error(data, schema)
            except ValueError as exc:
                problem = str(exc)
            if problem is None:
                result = LLMResult(data=data, text=text, prompt_tokens=prompt_tokens,
                                   completion_tokens=completion_tokens, cached=False,
                                   attempts=attempt)
                if self.cache is not None:
                    self.cache.put(key, self.model, result)
                return result
            if finish == "length":
                problem += " (the reply was cut at max_tokens)"
            last_error = problem
            log.info("llm[%s]: invalid output on attempt %d: %s", stage, attempt,
                     self.redact(problem))
            if attempt <= self.max_retries:
                self._count(stage, retries=1)
                conversation = conversation + [
                    {"role": "assistant", "content": (text or "")[:_MAX_ECHO_CHARS]},
                    {"role": "user", "content": (
                        f"Your reply was not valid: {problem}. Answer again with only one "
                        "JSON object that matches the requested schema, no other text.")},
                ]
        raise LLMOutputError(self.redact(
            f"{self.model} at {self.base_url} gave no valid JSON for stage {stage!r} after "
            f"{self.max_retries + 1} attempts; last problem: {last_error}"))

    def _check_schema(self, schema: dict) -> None:
        """Fail early, and once per schema, on a schema jsonschema cannot use."""
        import jsonschema

        text = _canonical(schema)
        if text in self._valid_schemas:
            return
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise LLMError(f"invalid JSON schema for the LLM output: {exc.message}") from exc
        with self._lock:
            self._valid_schemas.add(text)

    def _send(self, messages: list[dict], schema: dict, schema_name: str,
              temperature: float, max_tokens: Optional[int]) -> tuple[str, int, int, str]:
        """One chat request; returns (text, prompt_tokens, completion_tokens, finish_reason)."""
        import openai

        refusal: Optional[openai.BadRequestError] = None
        if not self._json_object_only:
            strict = {"type": "json_schema",
                      "json_schema": {"name": schema_name, "schema": schema, "strict": True}}
            try:
                return self._create(messages, temperature, max_tokens, strict)
            except openai.BadRequestError as exc:
                # a server without structured outputs answers 400; so may one whose
                # prompt is too long, so the fallback is only remembered if it works
                log.info("llm: %s refused json_schema (HTTP %s); trying json_object",
                         self.base_url, exc.status_code)
                refusal = exc
        try:
            reply = self._create(_with_schema_prompt(messages, schema), temperature, max_tokens,
                                 {"type": "json_object"})
        except openai.BadRequestError as exc:
            raise self._transport_error(exc) from (refusal or exc)
        if refusal is not None:
            self._json_object_only = True
        return reply

    def _create(self, messages: list[dict], temperature: float, max_tokens: Optional[int],
                response_format: dict) -> tuple[str, int, int, str]:
        import openai

        kwargs: dict[str, object] = {"model": self.model, "messages": messages,
                                  "temperature": temperature, "response_format": response_format}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        try:
            response = self._openai.chat.completions.create(**kwargs)
        except openai.BadRequestError:
            raise  # the caller decides about the json_object fallback
        except openai.OpenAIError as exc:
            raise self._transport_error(exc) from exc
        if not response.choices:
            return "", 0, 0, "empty"
        choice = response.choices[0]
        text = choice.message.content or ""
        usage = response.usage
        return (text, int(getattr(usage, "prompt_tokens", 0) or 0),
                int(getattr(usage, "completion_tokens", 0) or 0), choice.finish_reason or "")

    def _transport_error(self, exc: Exception) -> LLMError:
        """A redacted, readable LLMError for a failed request."""
        import openai

        if isinstance(exc, openai.APITimeoutError):
            msg = f"the LLM server at {self.base_url} did not answer within {self.timeout_s:g}s"
        elif isinstance(exc, openai.APIConnectionError):
            msg = f"cannot reach the LLM server at {self.base_url} ({type(exc).__name__})"
        elif isinstance(exc, openai.APIStatusError):
            detail = _error_message(exc)
            msg = f"the LLM server at {self.base_url} answered HTTP {exc.status_code}: {detail}"
            if exc.status_code in (401, 403):
                msg += f" (check the key in ${self.api_key_env})"
        else:
            msg = f"LLM request to {self.base_url} failed: {type(exc).__name__}: {exc}"
        return LLMError(self.redact(msg))

    def close(self) -> None:
        """Close the HTTP connections and the cache."""
        self._openai.close()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _error_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)[:_MAX_ERROR_CHARS]
    return str(getattr(exc, "message", exc))[:_MAX_ERROR_CHARS]


def _with_schema_prompt(messages: list[dict], schema: dict) -> list[dict]:
    """``messages`` with the schema spelled out in the system prompt.

    For ``json_object`` mode, where the server does not enforce the schema
    (and OpenAI wants the word JSON in the prompt). Merged into a leading
    system message because some chat templates accept only one, first.
    """
    note = ("Reply with one JSON object only, matching this JSON schema:\n"
            + json.dumps(schema, ensure_ascii=False))
    out = list(messages)
    if out and out[0].get("role") == "system" and isinstance(out[0].get("content"), str):
        out[0] = {**out[0], "content": out[0]["content"] + "\n\n" + note}
    else:
        out.insert(0, {"role": "system", "content": note})
    return out
