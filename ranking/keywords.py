"""The common mobile-UI keyword list behind feature F3, and the script that builds it.

F3 ("average frequency of common keywords") needs a fixed set of words that
mobile UIs commonly show. We derive it from a corpus of real UI strings:

* the English string resources of a real Android Settings app
  (``res/values/strings.xml``, one ``<string>`` = one document), and
* optionally, UI texts of simulator worlds (every string value under a key
  named ``text``, ``label``, ``title``, ``summary``, ``content_desc``, ``desc``
  or ``hint`` in the world JSON/YAML files).

Each document is reduced to its set of :func:`ranking.terms.content_terms`;
a term's *document frequency* (df) is the number of documents holding it.
Terms made only of digits or shorter than 2 characters are skipped. The list
is the ``top`` terms by df (ties: alphabetical), each with df >= ``min_df``.

The built list is committed as ``datasets/keywords/mobile_ui_keywords.txt``
(``term<TAB>df`` lines after ``#`` comment lines) so installs without the
corpus still compute F3. Rebuild with::

    python -m ranking.keywords build \\
        --strings ../shared/apps/oneplus-settings-android11/res/values/strings.xml \\
        --out datasets/keywords/mobile_ui_keywords.txt
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator

from ranking.terms import content_terms
from verirank_core.errors import SchemaError, StoreError
from verirank_core.resources import KEYWORDS_FILE

__all__ = [
    "DEFAULT_KEYWORDS", "load_keywords", "android_strings", "world_texts",
    "document_frequencies", "select_keywords", "format_keyword_file", "main",
]

DEFAULT_KEYWORDS = KEYWORDS_FILE

_WORLD_TEXT_KEYS = {"text", "label", "title", "summary", "content_desc", "desc", "hint"}


def load_keywords(path: Path | str | None = None) -> frozenset[str]:
    """Read a keyword file (first column of each non-comment line)."""
    path = Path(path) if path is not None else DEFAULT_KEYWORDS
    if not path.exists():
        raise StoreError(
            f"keyword list {path} not found: build it with `python -m ranking.keywords build`"
        )
    terms = set()
    for line in path.read_text("utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            terms.add(line.split("\t")[0].strip())
    if not terms:
        raise SchemaError(f"keyword list {path} holds no terms")
    return frozenset(terms)


def android_strings(path: Path | str) -> list[str]:
    """The visible text of every ``<string>`` of an Android ``strings.xml``."""
    from lxml import etree

    path = Path(path)
    try:
        root = etree.parse(str(path)).getroot()
    except (OSError, etree.XMLSyntaxError) as exc:
        raise SchemaError(f"{path}: not a readable Android strings.xml ({exc})") from exc
    return ["".join(node.itertext()) for node in root.iter("string")]


def _walk_texts(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _WORLD_TEXT_KEYS and isinstance(value, str):
                yield value
            else:
                yield from _walk_texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_texts(item)


def world_texts(folder: Path | str) -> list[str]:
    """UI texts of every ``*.json`` / ``*.yaml`` / ``*.yml`` world file under ``folder``."""
    import yaml

    texts: list[str] = []
    for path in sorted(Path(folder).rglob("*")):
        if path.suffix not in {".json", ".yaml", ".yml"} or not path.is_file():
            continue
        try:
            raw = path.read_text("utf-8")
            data = json.loads(raw) if path.suffix == ".json" else yaml.safe_load(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise SchemaError(f"{path}: cannot parse world file ({exc})") from exc
        texts.extend(_walk_texts(data))
    return texts


def document_frequencies(documents: Iterable[str]) -> Counter:
    """Term -> number of documents that contain it (content terms, see module doc)."""
    df: Counter = Counter()
    for doc in documents:
        df.update({t for t in content_terms(doc) if len(t) >= 2 and not t.isdigit()})
    return df


def select_keywords(df: Counter, top: int = 300, min_df: int = 2) -> list[tuple[str, int]]:
    """The ``top`` most frequent terms with df >= ``min_df``; ties alphabetical."""
    ranked = sorted(((t, n) for t, n in df.items() if n >= min_df), key=lambda tn: (-tn[1], tn[0]))
    return ranked[:top]


def format_keyword_file(keywords: list[tuple[str, int]], sources: list[str], n_docs: int,
                        top: int, min_df: int) -> str:
    header = [
        "# Common mobile-UI keywords for feature F3 (built by `python -m ranking.keywords build`).",
        f"# corpus: {n_docs} UI strings from: {'; '.join(sources)}",
        f"# selection: top {top} content terms by document frequency, df >= {min_df}",
        "# columns: term<TAB>document frequency (terms are lowercased and plural-stemmed)",
    ]
    return "\n".join(header + [f"{t}\t{n}" for t, n in keywords]) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m ranking.keywords build ...``: rebuild the keyword list."""
    from verirank_core.store import atomic_write_text

    parser = argparse.ArgumentParser(prog="python -m ranking.keywords", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the keyword list from UI string corpora")
    build.add_argument("--strings", action="append", default=[], type=Path,
                       help="an Android res/values/strings.xml (repeatable)")
    build.add_argument("--worlds", action="append", default=[], type=Path,
                       help="a folder of simulator world files (repeatable)")
    build.add_argument("--top", type=int, default=300)
    build.add_argument("--min-df", type=int, default=2)
    build.add_argument("--out", type=Path, default=DEFAULT_KEYWORDS)
    args = parser.parse_args(argv)

    documents: list[str] = []
    sources: list[str] = []
    for path in args.strings:
        documents.extend(android_strings(path))
        sources.append(f"{path.parent.parent.parent.name}/res/values/{path.name}")
    for folder in args.worlds:
        documents.extend(world_texts(folder))
        sources.append(f"worlds {folder.name}/")
    if not documents:
        parser.error("give at least one --strings file or --worlds folder")
    keywords = select_keywords(document_frequencies(documents), args.top, args.min_df)
    atomic_write_text(args.out, format_keyword_file(keywords, sources, len(documents),
                                                    args.top, args.min_df))
    print(f"wrote {len(keywords)} keywords from {len(documents)} strings to {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
