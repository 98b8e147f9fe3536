"""Settings of stage 1 (search, fetch, clean, extract, ground)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchConfig(_Section):
    #: ``serp-file`` reads the original ranking from a JSONL file;
    #: ``brave`` calls the Brave Search web API (key from ``api_key_env``).
    backend: Literal["serp-file", "brave"] = "serp-file"
    top_n: int = Field(20, ge=1, le=100)
    api_key_env: str = "BRAVE_API_KEY"
    endpoint: str = "https://api.search.brave.com/res/v1/web/search"
    requests_per_second: float = Field(1.0, gt=0)
    retries: int = Field(3, ge=0, le=10)
    timeout_s: float = Field(15.0, gt=0)
    #: first pause before a retry; doubles on every further retry
    backoff_s: float = Field(1.0, ge=0)
    #: a server's Retry-After is honoured up to this many seconds
    max_retry_after_s: float = Field(60.0, ge=0)


class FetchConfig(_Section):
    workers: int = Field(8, ge=1, le=64)
    #: at most this many requests in flight to one host
    per_host_concurrency: int = Field(2, ge=1, le=16)
    #: minimum pause between two requests to the same host
    per_host_delay_s: float = Field(0.0, ge=0)
    connect_timeout_s: float = Field(5.0, gt=0)
    read_timeout_s: float = Field(15.0, gt=0)
    #: wall-clock limit for one body download (a slow drip is cut here)
    total_timeout_s: float = Field(30.0, gt=0)
    #: extra attempts after a 429/5xx answer or a connection failure (not after a read timeout)
    retries: int = Field(2, ge=0, le=10)
    #: first pause before a retry; doubles on every further retry
    backoff_s: float = Field(0.5, ge=0)
    #: a server's Retry-After is honoured up to this many seconds
    max_retry_after_s: float = Field(30.0, ge=0)
    max_bytes: int = Field(5_000_000, ge=1024)
    max_redirects: int = Field(5, ge=0, le=30)
    #: off by default (SSRF guard); turn on for local corpora, tests and benchmarks
    allow_private_hosts: bool = False
    user_agent: str = "verirank/0.1 (+https://example.invalid/verirank; offline how-to verification)"
    #: content-addressed page cache; relative paths are under the run directory
    cache_dir: str = "cache/pages"
    #: serve a URL fetched before (by any run sharing the cache) from the cache
    use_cache: bool = True
    #: explicit proxy URL for http and https (environment proxy variables are ignored)
    proxy: Optional[str] = None


class CleanConfig(_Section):
    #: snippets shorter than this many characters are not kept
    min_snippet_chars: int = Field(2, ge=1)
    #: cleaned HTML handed to an LLM is cut to this many characters
    max_llm_chars: int = Field(24_000, ge=1000)


class ExtractConfig(_Section):
    extractor: Literal["heuristic", "llm"] = "heuristic"
    #: heuristic: minimum relevance of a candidate block to the query
    min_relevance: float = Field(0.4, ge=0, le=1)
    #: heuristic, Settings questions: a chosen block none of whose steps comes this near the
    #: query in meaning (MiniLM cosine) is another task under a title that copies the query:
    #: no steps (0 turns the gate off)
    min_step_similarity: float = Field(0.25, ge=0, le=1)
    #: heuristic: minimum share of a block's steps that read like instructions
    #: (start with an action verb or name a UI element)
    min_howto: float = Field(0.5, ge=0, le=1)
    #: steps kept from a page: a prose page gives one per sentence (wikiHow: 40 and more);
    #: execution stops at its own ``execution.max_steps`` actions
    max_steps: int = Field(60, ge=1)
    #: page languages whose steps are kept; a page declaring another language
    #: (or whose steps read as another language) yields no steps
    languages: list[str] = Field(default_factory=lambda: ["en"])
    #: platform assumed when neither the query nor ``device`` names one (``android`` or ``ios``)
    default_platform: Literal["android", "ios"] = "android"
    #: the device the run is configured for ("Pixel 7", "Samsung Galaxy S23", "Android"):
    #: when the query names no device, platform and brand, a page with steps for
    #: several (iPhone and Android, Samsung and Pixel) keeps the block for this one
    device: str = "Android"
    #: a page whose only relevant steps are written for the other platform (iPhone steps
    #: for an Android question): ``accept`` them (the device decides whether they work,
    #: and the stated platform is recorded for the ranker) or ``refuse`` them (no steps)
    other_platform: Literal["refuse", "accept"] = "accept"
    #: pages extracted in parallel (useful for the LLM extractor, which waits on the network)
    workers: int = Field(1, ge=1, le=32)
    #: BLAS threads for MiniLM while extracting: the per-page batches are small,
    #: and one thread avoids spin-waiting on a busy machine; 0 leaves the library's default
    encoder_threads: int = Field(1, ge=0, le=64)


class GroundConfig(_Section):
    enabled: bool = True
    #: a step matches a snippet when ROUGE-L F1 > rouge_threshold ...
    rouge_threshold: float = Field(0.7, ge=0, le=1)
    #: ... or when the L2 distance between unit-normalised MiniLM vectors < distance_threshold
    distance_threshold: float = Field(0.25, ge=0, le=2)
    #: add page steps the extractor skipped between two grounded steps
    recover_missed: bool = True
    #: ... or when the step's words appear in this order in the snippet (ROUGE-L
    #: precision on the step side) at least this much; 1.0 = all of them
    containment_threshold: float = Field(0.85, ge=0, le=1)
    #: containment alone grounds a step only when it has at least this many words,
    #: except next to the previous grounded step (a breadcrumb split in parts)
    min_containment_tokens: int = Field(3, ge=1)
    #: set False to match with ROUGE-L F1 and distance only (the paper's rule)
    use_containment: bool = True
    #: "near" the previous step: in its list/section container or within this many snippets after it
    near_window: int = Field(8, ge=0)
    #: the first step is tried at up to this many places on the page; the place
    #: that grounds the most following steps wins
    anchor_candidates: int = Field(5, ge=1)
    #: snippet tags that may be recovered between two grounded steps of the same parent
    recover_tags: list[str] = Field(default_factory=lambda: ["li", "dd", "h2", "h3", "h4"])
    #: at most this many steps are recovered between two grounded ones
    max_recovered_gap: int = Field(3, ge=0)
    #: also compute the embedding distance of steps matched on words (for analysis;
    #: costs one embedding batch per page). Otherwise ``distance`` is set only when
    #: the embedding test ran or the texts are identical (0.0)
    always_embed: bool = False


class ExtractionConfig(_Section):
    search: SearchConfig = SearchConfig()
    fetch: FetchConfig = FetchConfig()
    clean: CleanConfig = CleanConfig()
    extract: ExtractConfig = ExtractConfig()
    ground: GroundConfig = GroundConfig()
