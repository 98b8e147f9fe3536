"""The crawled instruction texts of ``../shared/real-text/`` as page texts for the renderers.

Each line of ``crawled_instructions.jsonl`` is a real help-site text (its URL and its
instructions). :func:`load_real_texts` splits a text into the sentences a reader sees and
asks the question its URL names ("how to use the steam app on android"), so the texts can be
rendered into every structure of ``real_dev_pages.py``. They carry no labels: the steps of
a text are unknown, so what they measure is how alike the structures are read.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from urllib.parse import urlparse

from benchmarks.real_dev_pages import SHARED, Text

REAL_TEXT = SHARED / "real-text" / "crawled_instructions.jsonl"

#: wikiHow's step markers: "Image titled <title> Step 7 2 " or "Image titled Steam 22.png 1 "
_WIKIHOW_MARK = re.compile(r"Image titled (?:[^.]{1,120}? Step \d+|[^\s.]+(?: [^\s.]+)*?\.(?:png|jpg|jpeg|gif))\s+\d+\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?:\d{1,2}\s+)?(?=[A-Z\"“])")


def split_steps(text: str) -> list[str]:
    """A crawled text as a reader sees it: sentences, with wikiHow's image markers as breaks."""
    text = _WIKIHOW_MARK.sub("\n", text).replace("Advertisement", "\n")
    steps: list[str] = []
    for block in text.split("\n"):
        steps.extend(s.strip() for s in _SENTENCE.split(block) if s.strip())
    return steps


def query_of(url: str) -> str:
    """The question a page's URL names: ".../how-to-use-the-yahoo-app-on-android-4781598" ->
    "how to use the yahoo app on android"."""
    parts = [p for p in urlparse(url).path.split("/") if p]
    slug = re.sub(r"\.html?$|-\d+$", "", parts[-1] if parts else "")
    words = re.sub(r"^how to ", "", slug.replace("-", " ").replace("_", " ").lower())
    return f"how to {words}".strip()


def load_real_texts(n: int, seed: int = 7, path: Path = REAL_TEXT) -> list[Text]:
    """``n`` texts of 2-25 sentences whose URL names a task of three words or more, drawn with ``seed``."""
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    random.Random(seed).shuffle(records)
    texts: list[Text] = []
    for rec in records:
        sentences = tuple(split_steps(rec["instructions"]))
        query = query_of(rec["url"])
        if not 2 <= len(sentences) <= 25 or len(query.split()) < 4:
            continue
        n_text = len(texts)
        texts.append(Text(f"rq{n_text}", f"rt{n_text}", query, "android phone", "Settings", sentences, (),
                          "unlabelled", "unknown"))
        if len(texts) >= n:
            break
    return texts
