"""Empty this process's per-process caches, so that a timed run starts as a new process would.

A worker process starts with empty caches (label vectors, parsed screens,
lexical scores, parsed steps); a run in this process after another one would
find them full. Benchmarks that compare the two call :func:`fresh_caches`
before each run. The loaded model is kept: every process loads it once.
"""

from __future__ import annotations


def fresh_caches() -> None:
    import verirank_core.embed as embed
    from execution import uicontext
    from execution.predict import match, steps
    from verirank_core import text

    embed._default = None
    uicontext.clear_parse_cache()
    for cached in (match.lexical_score, match._tokens, steps._parse_cached, steps._parse_unresolved,
                   text.fold_unicode, text.normalise):
        cached.cache_clear()
