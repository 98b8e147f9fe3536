"""How stage 1 stays polite to the servers it calls.

* :class:`TokenBucket`: at most ``rate`` requests per second (search APIs);
* :class:`HostGate`: at most N requests in flight per host, and a minimum
  pause between two requests to one host (the page fetcher);
* :func:`retry_delay`: how long to wait before a retry (exponential backoff,
  or the server's ``Retry-After`` up to a cap).

The clock and sleep functions are injectable so the logic is testable without
waiting.
"""

from __future__ import annotations

import email.utils
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

__all__ = ["TokenBucket", "HostGate", "retry_delay", "parse_retry_after"]

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})


class TokenBucket:
    """Blocks in :meth:`acquire` so calls happen at most ``rate`` times per second.

    ``burst`` tokens may be spent at once after a quiet period; the default of
    one keeps requests evenly spaced.
    """

    def __init__(self, rate: float, burst: int = 1,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.rate = rate
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._tokens = float(self.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token, sleeping until one is available; returns the time slept."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            wait = (1 - self._tokens) / self.rate
            # the token that will exist after ``wait`` is spent now
            self._tokens = 0.0
            self._last = now + wait
        self._sleep(wait)
        return wait


class HostGate:
    """Per-host concurrency limit plus a minimum delay between request starts."""

    def __init__(self, per_host_concurrency: int, per_host_delay_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.per_host_concurrency = per_host_concurrency
        self.per_host_delay_s = per_host_delay_s
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._next_start: dict[str, float] = {}

    @contextmanager
    def slot(self, host: str) -> Iterator[None]:
        """Hold one of ``host``'s slots for the duration of one request."""
        with self._lock:
            sem = self._slots.setdefault(host, threading.BoundedSemaphore(self.per_host_concurrency))
        sem.acquire()
        try:
            self._wait_turn(host)
            yield
        finally:
            sem.release()

    def _wait_turn(self, host: str) -> None:
        if self.per_host_delay_s <= 0:
            return
        with self._lock:
            now = self._clock()
            start = max(now, self._next_start.get(host, now))
            # reserve the start time so concurrent callers queue up behind it
            self._next_start[host] = start + self.per_host_delay_s
        if start > now:
            self._sleep(start - now)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def retry_delay(attempt: int, backoff_s: float, retry_after: Optional[str] = None,
                max_retry_after_s: float = 60.0) -> float:
    """Pause before retry number ``attempt`` (1 = first retry).

    The server's ``Retry-After`` wins when present, capped at
    ``max_retry_after_s``; otherwise ``backoff_s * 2**(attempt-1)``.
    """
    asked = parse_retry_after(retry_after)
    if asked is not None:
        return min(asked, max_retry_after_s)
    return backoff_s * (2 ** max(0, attempt - 1))
