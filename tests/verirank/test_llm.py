"""The LLM client against the scripted stub server, through the real openai client."""

from __future__ import annotations

import base64
import json
import logging
import socket
import sqlite3
import threading

import openai
import pytest

from support_scripted_llm import ScriptedLLMServer, request_text
from verirank.config import LLMConfig, load_config
from verirank.errors import ConfigError, LLMError, LLMOutputError, StoreError
from verirank.llm import (
    PLACEHOLDER_KEY,
    LLMClient,
    ResponseCache,
    cache_key,
    extract_json_object,
    image_part,
    redact,
)
from verirank.store import RunDir

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}, "why": {"type": "string"}},
    "required": ["answer", "why"],
    "additionalProperties": False,
}
MESSAGES = [
    {"role": "system", "content": "You answer arithmetic questions."},
    {"role": "user", "content": "What is 2+2?"},
]
GOOD = '{"answer": 4, "why": "two and two"}'
KEY = "sk-test-VERIRANK-0xDEADBEEF-do-not-leak"


@pytest.fixture()
def server():
    with ScriptedLLMServer() as srv:
        yield srv


def make_client(server, tmp_path=None, **overrides) -> LLMClient:
    settings = {"base_url": server.base_url, "model": "stub-model", "max_retries": 2,
                "cache_path": str(tmp_path / "llm.sqlite") if tmp_path else None,
                "api_key_env": "VERIRANK_TEST_LLM_KEY"}
    settings.update(overrides)
    return LLMClient.from_config(LLMConfig(**settings), env={"VERIRANK_TEST_LLM_KEY": KEY})


# --- the request ------------------------------------------------------------


def test_request_carries_model_temperature_and_strict_schema(server):
    server.script([GOOD])
    client = make_client(server)
    res = client.complete_json(MESSAGES, SCHEMA, stage="test", schema_name="sum")
    assert res.data == {"answer": 4, "why": "two and two"}
    assert res.text == GOOD and res.cached is False and res.attempts == 1
    body = server.requests[0]
    assert body["model"] == "stub-model"
    assert body["temperature"] == 0
    assert body["messages"] == MESSAGES
    assert body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "sum", "schema": SCHEMA, "strict": True}}
    assert "max_tokens" not in body
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_max_tokens_and_temperature_are_passed_through(server):
    server.script([GOOD])
    make_client(server).complete_json(MESSAGES, SCHEMA, stage="t", temperature=0.7, max_tokens=55)
    assert server.requests[0]["temperature"] == 0.7
    assert server.requests[0]["max_tokens"] == 55


def test_image_part_is_a_png_data_url_and_reaches_the_server(server):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00fake-image-body"
    part = image_part(png)
    assert part["type"] == "image_url"
    url = part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == png
    server.script([GOOD])
    messages = [{"role": "user", "content": [{"type": "text", "text": "what is shown?"}, part]}]
    make_client(server).complete_json(messages, SCHEMA, stage="t")
    assert server.requests[0]["messages"][0]["content"][1] == part
    with pytest.raises(LLMError, match="PNG"):
        image_part(b"GIF89a not a png")


# --- invalid output: retry, then accept or give up ------------------------------


def test_reply_that_is_not_json_is_retried_then_accepted(server):
    server.script(["I think the answer is four.", GOOD])
    client = make_client(server)
    res = client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert res.data["answer"] == 4 and res.attempts == 2
    assert len(server.requests) == 2
    retry = server.requests[1]["messages"]
    # the bad reply and a corrective note quoting the problem were appended
    assert retry[:2] == MESSAGES
    assert retry[2] == {"role": "assistant", "content": "I think the answer is four."}
    assert retry[3]["role"] == "user" and "no JSON object" in retry[3]["content"]
    assert client.usage["t"].retries == 1 and client.usage["t"].requests == 2


def test_reply_failing_the_schema_is_retried_with_the_validation_error(server):
    server.script(['{"answer": "four", "why": "x"}', '{"answer": 4}', GOOD])
    res = make_client(server).complete_json(MESSAGES, SCHEMA, stage="t")
    assert res.data["answer"] == 4 and res.attempts == 3
    second = server.requests[1]["messages"][-1]["content"]
    third = server.requests[2]["messages"][-1]["content"]
    assert "at answer" in second and "'four' is not of type 'integer'" in second
    assert "'why' is a required property" in third


def test_output_error_after_the_retry_budget_names_the_problem_not_the_prompt(server):
    server.script(['{"answer": "no"}'] * 3 + [GOOD])
    client = make_client(server, max_retries=2)
    with pytest.raises(LLMOutputError) as info:
        client.complete_json(MESSAGES, SCHEMA, stage="t")
    message = str(info.value)
    assert "3 attempts" in message and "'no' is not of type 'integer'" in message
    assert "What is 2+2" not in message and "arithmetic" not in message
    assert len(server.requests) == 3 and server.pending == 1
    assert client.usage["t"].retries == 2


def test_zero_retries_means_one_request(server):
    server.script(["not json", GOOD])
    with pytest.raises(LLMOutputError):
        make_client(server, max_retries=0).complete_json(MESSAGES, SCHEMA, stage="t")
    assert len(server.requests) == 1


@pytest.mark.parametrize("text, expected", [
    (GOOD, {"answer": 4, "why": "two and two"}),
    ("```json\n" + GOOD + "\n```", {"answer": 4, "why": "two and two"}),
    ("Here you go:\n```\n" + GOOD + "\n```\nHope it helps", {"answer": 4, "why": "two and two"}),
    ('Sure! {"a": {"b": [1, 2]}} and {"c": 3}', {"a": {"b": [1, 2]}}),
    ('prose with a brace { then {"x": 1}', {"x": 1}),
])
def test_extract_json_object_tolerates_fences_and_prose(text, expected):
    assert extract_json_object(text) == expected


@pytest.mark.parametrize("text, problem", [
    ("", "empty"), ("[1, 2]", "list"), ("no json here", "no JSON object"), ('{"a": ', "no JSON"),
])
def test_extract_json_object_explains_what_is_wrong(text, problem):
    with pytest.raises(ValueError, match=problem):
        extract_json_object(text)


# --- json_schema -> json_object fallback ----------------------------------------


def test_falls_back_to_json_object_when_json_schema_is_refused_and_remembers():
    with ScriptedLLMServer(reject_json_schema=True) as server:
        server.script([GOOD, GOOD])
        client = make_client(server)
        first = client.complete_json(MESSAGES, SCHEMA, stage="t")
        assert first.data["answer"] == 4
        kinds = [r["response_format"]["type"] for r in server.requests]
        assert kinds == ["json_schema", "json_object"]
        # in json_object mode the schema is spelled out in the (single, leading) system prompt
        fallback = server.requests[1]["messages"]
        assert [m["role"] for m in fallback] == ["system", "user"]
        assert json.dumps(SCHEMA) in fallback[0]["content"]
        assert fallback[0]["content"].startswith("You answer arithmetic questions.")
        client.complete_json(MESSAGES + [{"role": "user", "content": "again"}], SCHEMA, stage="t")
        kinds = [r["response_format"]["type"] for r in server.requests]
        assert kinds == ["json_schema", "json_object", "json_object"]


def test_fallback_is_not_remembered_when_json_object_fails_too(server):
    server.script([{"status": 400, "error": "prompt too long"},
                   {"status": 400, "error": "prompt too long"}, GOOD])
    client = make_client(server)
    with pytest.raises(LLMError, match="HTTP 400: prompt too long"):
        client.complete_json(MESSAGES, SCHEMA, stage="t")
    client.complete_json(MESSAGES, SCHEMA, stage="t")
    kinds = [r["response_format"]["type"] for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_schema"]


# --- the response cache -------------------------------------------------------


def test_cache_second_identical_call_sends_no_request(server, tmp_path):
    server.script([GOOD, '{"answer": 5, "why": "hot"}'])
    client = make_client(server, tmp_path)
    first = client.complete_json(MESSAGES, SCHEMA, stage="t")
    second = client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert len(server.requests) == 1
    assert second.cached is True and first.cached is False
    assert second.data == first.data and second.text == first.text
    assert (second.prompt_tokens, second.completion_tokens) == (first.prompt_tokens,
                                                                first.completion_tokens)
    usage = client.usage["t"]
    assert usage.cache_hits == 1 and usage.requests == 1
    # a different temperature is a different question
    hot = client.complete_json(MESSAGES, SCHEMA, stage="t", temperature=0.9)
    assert hot.cached is False and hot.data["answer"] == 5 and len(server.requests) == 2


def test_cache_survives_a_new_client_on_the_same_file(server, tmp_path):
    server.script([GOOD])
    make_client(server, tmp_path).complete_json(MESSAGES, SCHEMA, stage="t")
    again = make_client(server, tmp_path)
    res = again.complete_json(MESSAGES, SCHEMA, stage="t")
    assert res.cached and res.data["answer"] == 4 and len(server.requests) == 1
    assert again.usage["t"].requests == 0 and again.usage["t"].cache_hits == 1


def test_cache_keeps_only_validated_outputs(server, tmp_path):
    server.script(["nope", "nope", "nope", GOOD])
    client = make_client(server, tmp_path)
    with pytest.raises(LLMOutputError):
        client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert len(client.cache) == 0
    res = client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert res.cached is False and len(server.requests) == 4 and len(client.cache) == 1


def test_cache_key_depends_on_every_input_but_not_dict_order():
    base = dict(base_url="http://h/v1", model="m", messages=MESSAGES, schema=SCHEMA,
                temperature=0.0, max_tokens=None)
    key = cache_key(**base)
    assert len(key) == 64
    reordered = dict(SCHEMA, properties=dict(reversed(list(SCHEMA["properties"].items()))))
    assert cache_key(**dict(base, schema=reordered)) == key
    assert cache_key(**dict(base, base_url="http://h/v1/")) == key
    for change in ({"base_url": "http://other/v1"}, {"model": "m2"}, {"messages": MESSAGES[:1]},
                   {"schema": {"type": "object"}}, {"temperature": 0.1}, {"max_tokens": 10}):
        assert cache_key(**dict(base, **change)) != key, change


def test_cache_is_sqlite_in_wal_mode_and_parent_dirs_are_created(tmp_path):
    path = tmp_path / "deep" / "er" / "cache.sqlite"
    cache = ResponseCache(path)
    assert path.exists()
    cache.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unwritable_cache_location_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="LLM response cache"):
        ResponseCache(blocker / "sub" / "cache.sqlite")


def test_cache_none_disables_caching(server):
    server.script([GOOD, GOOD])
    client = make_client(server)  # cache_path None
    assert client.cache is None
    client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert client.complete_json(MESSAGES, SCHEMA, stage="t").cached is False
    assert len(server.requests) == 2


# --- token accounting -----------------------------------------------------------


def test_usage_is_counted_per_stage(server, tmp_path):
    server.script([
        {"content": GOOD, "prompt_tokens": 100, "completion_tokens": 10},
        {"content": "bad", "prompt_tokens": 40, "completion_tokens": 1},
        {"content": GOOD, "prompt_tokens": 50, "completion_tokens": 5},
    ])
    client = make_client(server, tmp_path)
    res = client.complete_json(MESSAGES, SCHEMA, stage="extraction")
    assert (res.prompt_tokens, res.completion_tokens) == (100, 10)
    client.complete_json([{"role": "user", "content": "judge this"}], SCHEMA, stage="judge")
    client.complete_json(MESSAGES, SCHEMA, stage="extraction")  # cache hit
    assert client.usage_dict() == {
        "extraction": {"requests": 1, "prompt_tokens": 100, "completion_tokens": 10,
                       "cache_hits": 1, "retries": 0},
        "judge": {"requests": 2, "prompt_tokens": 90, "completion_tokens": 6,
                  "cache_hits": 0, "retries": 1},
    }
    json.dumps(client.usage_dict())  # plain JSON, for manifests and MLflow


def test_usage_is_thread_safe():
    def responder(body):
        return {"content": GOOD, "prompt_tokens": 3, "completion_tokens": 2}

    with ScriptedLLMServer(responder) as server:
        client = make_client(server)
        n_threads, per_thread = 4, 5

        def work(i):
            for j in range(per_thread):
                client.complete_json([{"role": "user", "content": f"{i}-{j}"}], SCHEMA, stage="p")

        threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    usage = client.usage["p"]
    total = n_threads * per_thread
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (total, 3 * total,
                                                                              2 * total)
    assert len(server.requests) == total


# --- transport failures ---------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_down_is_an_llm_error():
    cfg = LLMConfig(base_url=f"http://127.0.0.1:{_closed_port()}/v1", model="m",
                    max_retries=0, cache_path=None, api_key_env="VERIRANK_UNSET_KEY")
    client = LLMClient.from_config(cfg, env={})
    with pytest.raises(LLMError, match="cannot reach the LLM server") as info:
        client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert not isinstance(info.value, LLMOutputError)
    assert isinstance(info.value.__cause__, openai.APIConnectionError)


def test_server_error_after_transport_retries_is_an_llm_error(server):
    server.script([{"status": 500, "error": "overloaded"}] * 3 + [GOOD])
    client = make_client(server, max_retries=1)
    with pytest.raises(LLMError, match="HTTP 500: overloaded"):
        client.complete_json(MESSAGES, SCHEMA, stage="t")
    # openai retried once on its own; the good reply is still queued
    assert len(server.requests) == 2 and server.pending == 2


def test_transient_server_error_is_retried_by_the_transport(server):
    server.script([{"status": 503, "error": "warming up"}, GOOD])
    res = make_client(server, max_retries=1).complete_json(MESSAGES, SCHEMA, stage="t")
    assert res.data["answer"] == 4


def test_timeout_is_an_llm_error(server):
    server.script([{"content": GOOD, "delay_s": 1.5}])
    client = make_client(server, timeout_s=0.3, max_retries=0)
    with pytest.raises(LLMError, match="did not answer within 0.3s"):
        client.complete_json(MESSAGES, SCHEMA, stage="t")


def test_unused_script_gives_a_clear_error(server):
    with pytest.raises(LLMError, match="no scripted reply left"):
        make_client(server).complete_json(MESSAGES, SCHEMA, stage="t")


# --- keys and configuration -------------------------------------------------------------


def test_official_endpoint_without_key_is_a_config_error_naming_the_variable():
    cfg = LLMConfig(base_url=None, api_key_env="MY_OPENAI_KEY", cache_path=None)
    with pytest.raises(ConfigError, match="MY_OPENAI_KEY"):
        LLMClient.from_config(cfg, env={})
    client = LLMClient.from_config(cfg, env={"MY_OPENAI_KEY": KEY})
    assert client.base_url == "https://api.openai.com/v1"


def test_local_server_without_key_uses_a_placeholder(server):
    server.script([GOOD])
    cfg = LLMConfig(base_url=server.base_url, api_key_env="VERIRANK_UNSET_KEY", cache_path=None)
    client = LLMClient.from_config(cfg, env={})
    client.complete_json(MESSAGES, SCHEMA, stage="t")
    assert server.headers[0]["authorization"] == f"Bearer {PLACEHOLDER_KEY}"


def test_from_config_uses_the_configured_cache_path(server, tmp_path):
    path = tmp_path / "nested" / "c.sqlite"
    client = make_client(server, cache_path=str(path))
    assert client.cache is not None and client.cache.path == path and path.exists()


def test_redact_replaces_every_occurrence():
    assert redact(f"a {KEY} b {KEY}", KEY) == "a *** b ***"
    assert redact("nothing here", KEY) == "nothing here"
    assert redact("text", None) == "text"


def test_the_key_leaks_nowhere(server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, openai's and httpx's included
    env = {"VERIRANK_TEST_LLM_KEY": KEY}
    cfg = load_config(overrides=[{"llm": {
        "base_url": server.base_url, "model": "stub-model", "api_key_env": "VERIRANK_TEST_LLM_KEY",
        "cache_path": str(tmp_path / "cache" / "llm.sqlite"), "max_retries": 1}}])
    client = LLMClient.from_config(cfg.llm, env=env)
    errors = []
    server.script([
        GOOD,                                         # success, cached
        "not json", '{"answer": "x", "why": ""}',     # output failure
        {"status": 401, "error": f"Incorrect API key provided: {KEY}"},  # a server echoing the key
    ])
    client.complete_json(MESSAGES, SCHEMA, stage="t")
    client.complete_json(MESSAGES, SCHEMA, stage="t")
    for messages in ([{"role": "user", "content": "bad"}], [{"role": "user", "content": "401"}]):
        with pytest.raises(LLMError) as info:
            client.complete_json(messages, SCHEMA, stage="t")
        errors.append(info.value)
    assert "VERIRANK_TEST_LLM_KEY" in str(errors[1]) and "***" in str(errors[1])

    # the key was really used ...
    assert all(h["authorization"] == f"Bearer {KEY}" for h in server.headers)
    # ... and written nowhere
    run = RunDir(tmp_path / "run")
    run.start_stage("extraction", cfg.to_manifest())
    run.finish_stage("extraction", {"llm_usage": client.usage_dict()})
    client.close()
    cached = list((tmp_path / "cache").iterdir())
    assert cached, "the client cached nothing, so the check below would be vacuous"
    cache_bytes = b"".join(p.read_bytes() for p in cached)
    places = {
        "log": "\n".join(r.getMessage() for r in caplog.records),
        "errors": "\n".join(str(e) + repr(e) for e in errors),
        "repr": repr(client) + str(client),
        "manifest": run.manifest_path.read_text("utf-8"),
        "cache": cache_bytes.decode("latin-1"),
    }
    assert len(caplog.records) > 0 and len(cache_bytes) > 0
    for place, text in places.items():
        assert KEY not in text, f"the API key leaked into the {place}"
        assert "DEADBEEF" not in text, f"part of the API key leaked into the {place}"
    assert "VERIRANK_TEST_LLM_KEY" in places["manifest"]  # the variable *name* is recorded
    assert request_text(server.requests[0]) == "You answer arithmetic questions.\nWhat is 2+2?"


def test_bad_schema_or_messages_fail_before_any_request(server):
    client = make_client(server)
    with pytest.raises(LLMError, match="invalid JSON schema"):
        client.complete_json(MESSAGES, {"type": "no-such-type"}, stage="t")
    with pytest.raises(LLMError, match="not JSON-serialisable"):
        client.complete_json([{"role": "user", "content": object()}], SCHEMA, stage="t")
    assert server.requests == []
