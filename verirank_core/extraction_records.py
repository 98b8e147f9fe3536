"""Records of stage 1. On disk each is one JSON object per line (JSONL).

=====================  ==============================  =======================
file                   record                          key
=====================  ==============================  =======================
``queries.jsonl``      :class:`Query`                  qid
``serp.jsonl``         :class:`SearchResult`           (qid, rank)
``pages.jsonl``        :class:`Page`                   (qid, url)
``extraction.jsonl``   :class:`Extraction`             (qid, url)
``rejected.jsonl``     :class:`RejectedLine`           (source, line)
=====================  ==============================  =======================

Page bodies are not inlined: they live in the content-addressed cache
(``cache/pages/<sha256[:2]>/<sha256>.body``) named by ``Page.body_sha256``.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar, Optional

from pydantic import Field, field_validator

from verirank_core.records import Record


class Query(Record):
    key_fields: ClassVar[tuple[str, ...]] = ("qid",)

    qid: str
    query: str
    #: the app the question is about, when known (e.g. "Settings")
    app: Optional[str] = None
    #: the device or OS the user has, when known (e.g. "Pixel 7, Android 13")
    device: Optional[str] = None


class SearchResult(Record):
    """One hit of the original ranking; ``rank`` starts at 1."""

    key_fields: ClassVar[tuple[str, ...]] = ("qid", "rank")

    qid: str
    rank: int = Field(ge=1)
    url: str
    title: str = ""
    snippet: str = ""


class FetchStatus(str, Enum):
    OK = "ok"
    #: body exceeded ``max_bytes``: cut at the cap, kept and usable
    TOO_LARGE = "too_large"
    #: refused before any request: non-http(s) scheme or private address
    BLOCKED = "blocked"
    INVALID_URL = "invalid_url"
    HTTP_ERROR = "http_error"
    TIMEOUT = "timeout"
    CONNECTION_ERROR = "connection_error"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    #: served, but not an HTML or text document (binary, PDF, image...)
    NOT_HTML = "not_html"
    EMPTY = "empty"
    #: not fetched: the result is ranked below ``extraction.search.top_n``
    BEYOND_TOP_N = "beyond_top_n"


USABLE_FETCH_STATUSES = frozenset({FetchStatus.OK, FetchStatus.TOO_LARGE})


class RejectedLine(Record):
    """A line of the queries or SERP file that was not used, and why.

    Every input line ends up either as a record of the run or here, so
    nothing a user hands in disappears without a trace.
    """

    key_fields: ClassVar[tuple[str, ...]] = ("source", "line")

    #: ``queries`` or ``serp``
    source: str
    #: 1-based line number in that file
    line: int
    #: ``malformed`` (not a valid record), ``duplicate`` (its key was seen on an
    #: earlier line) or ``unknown_qid`` (a SERP row whose query is not in the queries file)
    status: str
    reason: str
    qid: Optional[str] = None
    rank: Optional[int] = None
    url: Optional[str] = None
    #: the start of the line as read (at most 500 characters)
    text: str = ""

    @field_validator("qid", "url", "reason", "text")
    @classmethod
    def _writable(cls, value: Optional[str]) -> Optional[str]:
        # a JSON escape may have smuggled in a lone surrogate, which no UTF-8 file can hold
        return None if value is None else value.encode("utf-8", "replace").decode("utf-8")


class Page(Record):
    """The outcome of fetching one search result."""

    key_fields: ClassVar[tuple[str, ...]] = ("qid", "url")

    qid: str
    url: str
    rank: int = Field(ge=1)
    title: str = ""
    status: FetchStatus
    #: a human-readable explanation, always set when status is not ``ok``
    reason: str = ""
    final_url: Optional[str] = None
    http_status: Optional[int] = None
    content_type: Optional[str] = None
    encoding: Optional[str] = None
    #: bytes kept (at most ``max_bytes``)
    n_bytes: int = 0
    truncated: bool = False
    #: stray NUL/control bytes removed from a text body before it was stored
    control_bytes_removed: int = 0
    #: sha256 of the kept body; the body is in the page cache under this name
    body_sha256: Optional[str] = None
    from_cache: bool = False
    attempts: int = 0
    elapsed_s: float = 0.0

    @property
    def usable(self) -> bool:
        return self.status in USABLE_FETCH_STATUSES


class Snippet(Record):
    """A piece of visible text of a cleaned page and where it sits in the original DOM."""

    #: position in document order (0-based)
    index: int
    #: absolute XPath of the element in the *original* DOM, e.g. /html/body/div[2]/ol/li[3]
    xpath: str
    text: str
    tag: str
    #: all of the text is link text (``<a>``): navigation and "related" lists, not steps
    link: bool = False


class CleanedPage(Record):
    key_fields: ClassVar[tuple[str, ...]] = ("qid", "url")

    qid: str
    url: str
    title: str = ""
    #: language guessed from <html lang> when present
    lang: Optional[str] = None
    #: the cleaned HTML, hierarchy kept, for the LLM extractor
    html: str
    snippets: list[Snippet]


class ExtractionStatus(str, Enum):
    OK = "ok"
    #: the page was fetched but holds no relevant steps (or none survived grounding)
    NO_STEPS = "no_steps"
    #: the page could not be fetched or parsed; ``reason`` says why
    FETCH_FAILED = "fetch_failed"
    PARSE_FAILED = "parse_failed"
    #: the extractor (e.g. the LLM) failed after its retries
    EXTRACTOR_FAILED = "extractor_failed"


class GroundedStep(Record):
    """One instruction step, tied to the page text it came from."""

    #: 0-based position in the final step list
    index: int
    #: the step as the extractor gave it (or the snippet text, when recovered)
    text: str
    #: the matched snippet's text and XPath in the original DOM
    snippet: Optional[str] = None
    xpath: Optional[str] = None
    #: ROUGE-L F1 between the step and the matched snippet
    rouge_l: Optional[float] = None
    #: L2 distance between unit-normalised MiniLM embeddings (0 = same, 2 = opposite)
    distance: Optional[float] = None
    #: ``extracted``: given by the extractor and grounded; ``recovered``: added by
    #: grounding from the page between two grounded steps; ``ungrounded``:
    #: grounding was disabled
    origin: str = "extracted"
    #: which test matched: ``rouge`` (F1 above the threshold), ``distance`` (embedding
    #: distance below the threshold), ``containment`` (the step's words appear in order
    #: in the snippet) or ``recovered``; None when ungrounded
    match: Optional[str] = None
    #: share of the step's words found in order in the snippet (ROUGE-L precision, step side)
    containment: Optional[float] = None


class Extraction(Record):
    key_fields: ClassVar[tuple[str, ...]] = ("qid", "url")

    qid: str
    url: str
    rank: int = Field(ge=1)
    title: str = ""
    query: str = ""
    status: ExtractionStatus
    reason: str = ""
    extractor: str = ""
    #: the steps as the extractor produced them, before grounding
    raw_steps: list[str] = Field(default_factory=list)
    #: steps the grounding dropped (hallucinated or not on the page)
    dropped_steps: list[str] = Field(default_factory=list)
    steps: list[GroundedStep] = Field(default_factory=list)
    #: LLM tokens spent on this page (0 for the heuristic extractor)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    #: the platform ("android", "ios") and phone maker ("samsung", "pixel", ...) the page
    #: says its steps are for; data for the ranker, never a reason to skip the page
    stated_platform: Optional[str] = None
    stated_device: Optional[str] = None
    #: page text the extractor kept out of the steps but that helps to follow them, in page
    #: order: the heading the steps sit under, step headings ("Turn on Dark theme" above its
    #: body), outcomes ending a step ("Tap Reset. A new screen appears.") and tips; never steps to act on.
    #: Records written before the field existed read as [].
    context: list[str] = Field(default_factory=list)

    @property
    def has_steps(self) -> bool:
        return self.status == ExtractionStatus.OK and bool(self.steps)
