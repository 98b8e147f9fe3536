"""Read and write svmlight / LETOR files with query groups.

Two layouts are understood, both common in learning-to-rank tools:

* the LETOR form, where every line carries its query::

      2 qid:17 1:0.5 3:0.25 # doc-a

* the LightGBM form, where lines carry no ``qid:`` and a separate ``.query``
  file lists the number of rows of each query, in order (e.g. ``rank.train``
  plus ``rank.train.query``).

Feature indices are 1-based on disk (``1:`` is column 0 in memory); features
absent from a line are 0. Text after ``#`` names the row's document (as written by
:func:`save_svmlight`, or LETOR's ``#docid = X``) when every row has a usable
one; otherwise rows are named ``d0, d1, ...`` within each query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from verirank.docno import decode_docno
from verirank.errors import SchemaError
from verirank.store import atomic_write_text

__all__ = ["LTRData", "load_svmlight", "save_svmlight", "default_query_file"]


@dataclass
class LTRData:
    """Rows of a learning-to-rank data set.

    ``qids`` holds one query id (a string) per row; the rows of one query are
    contiguous and in their original order. ``docs`` holds one document id per
    row when the source names documents (comments or a ``url`` column).
    """

    X: np.ndarray
    y: np.ndarray
    qids: np.ndarray
    feature_names: list[str] = field(default_factory=list)
    docs: Optional[np.ndarray] = None

    def __post_init__(self) -> None:
        if not self.feature_names:
            self.feature_names = [f"f{i + 1}" for i in range(self.X.shape[1])]
        if self.docs is None:
            self.docs = default_doc_ids(self.qids)

    @property
    def n_queries(self) -> int:
        return len(np.unique(self.qids))

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, mask: np.ndarray) -> "LTRData":
        """The rows where ``mask`` is true (a boolean array or row indices)."""
        return LTRData(self.X[mask], self.y[mask], self.qids[mask], list(self.feature_names),
                       None if self.docs is None else self.docs[mask])


def default_doc_ids(qids: np.ndarray) -> np.ndarray:
    """``d0, d1, ...`` numbered within each query (row order = original order)."""
    counters: dict[str, int] = {}
    out = []
    for q in qids:
        n = counters.get(q, 0)
        out.append(f"d{n}")
        counters[q] = n + 1
    return np.array(out, dtype=object)


def default_query_file(path: Path) -> Optional[Path]:
    """``X.query`` beside ``X`` if it exists (LightGBM's convention), else None."""
    candidate = Path(str(path) + ".query")
    return candidate if candidate.exists() else None


def _parse_line(text: str, where: str) -> tuple[float, Optional[str], dict[int, float], str]:
    body, _, comment = text.partition("#")
    tokens = body.split()
    if not tokens:
        raise SchemaError(f"{where}: no label before '#'")
    try:
        label = float(tokens[0])
    except ValueError:
        raise SchemaError(f"{where}: label {tokens[0]!r} is not a number") from None
    qid: Optional[str] = None
    feats: dict[int, float] = {}
    for tok in tokens[1:]:
        key, sep, value = tok.partition(":")
        if not sep or not key or not value:
            raise SchemaError(f"{where}: token {tok!r} is not index:value")
        if key == "qid":
            qid = value
            continue
        try:
            index = int(key)
        except ValueError:
            raise SchemaError(f"{where}: feature index {key!r} is not an integer") from None
        if index < 1:
            raise SchemaError(f"{where}: feature index {index} must be >= 1")
        try:
            feats[index] = float(value)
        except ValueError:
            raise SchemaError(f"{where}: value {value!r} of feature {index} is not a number") from None
    return label, qid, feats, comment.strip()


def _read_group_sizes(path: Path) -> list[int]:
    sizes = []
    for lineno, raw in enumerate(Path(path).read_text("utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            size = int(raw.strip())
        except ValueError:
            raise SchemaError(f"{path}:{lineno}: group size {raw.strip()!r} is not an integer") from None
        if size < 1:
            raise SchemaError(f"{path}:{lineno}: group size must be >= 1, got {size}")
        sizes.append(size)
    return sizes


def load_svmlight(
    path: Path | str,
    query_file: Path | str | None = None,
    n_features: Optional[int] = None,
) -> LTRData:
    """Load an svmlight/LETOR file into dense arrays.

    ``query_file`` gives group sizes (LightGBM form); without it, lines must
    carry ``qid:`` unless ``PATH.query`` exists beside the file. ``n_features``
    fixes the width (use the training width when loading a test file whose
    last features happen to be absent).
    """
    path = Path(path)
    if not path.exists():
        raise SchemaError(f"{path} does not exist")
    if query_file is None:
        query_file = default_query_file(path)

    labels: list[float] = []
    line_qids: list[Optional[str]] = []
    rows: list[dict[int, float]] = []
    comments: list[str] = []
    with open(path, "r", encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            label, qid, feats, comment = _parse_line(text, f"{path}:{lineno}")
            labels.append(label)
            line_qids.append(qid)
            rows.append(feats)
            comments.append(comment)

    if query_file is not None:
        sizes = _read_group_sizes(Path(query_file))
        if sum(sizes) != len(rows):
            raise SchemaError(
                f"{query_file}: group sizes add up to {sum(sizes)} rows but {path} has {len(rows)}"
            )
        qids = np.array([str(g + 1) for g, size in enumerate(sizes) for _ in range(size)], dtype=object)
    else:
        missing = [i for i, q in enumerate(line_qids) if q is None]
        if missing:
            raise SchemaError(
                f"{path}: {len(missing)} line(s) have no qid: and no query file was given "
                f"(first at data row {missing[0] + 1}); pass --query-file or add qid:"
            )
        qids = np.array(line_qids, dtype=object)
        _check_contiguous(qids, path)

    width = max((max(r) for r in rows if r), default=0)
    if n_features is not None:
        if width > n_features:
            raise SchemaError(f"{path}: feature index {width} exceeds the expected {n_features} features")
        width = n_features
    X = np.zeros((len(rows), width), dtype=np.float64)
    for i, feats in enumerate(rows):
        for index, value in feats.items():
            X[i, index - 1] = value
    docs = _doc_ids(comments, qids)
    return LTRData(X=X, y=np.asarray(labels, dtype=np.float64), qids=qids, docs=docs)


_DOCID = re.compile(r"docid\s*=\s*(\S+)")


def _doc_ids(comments: list[str], qids: np.ndarray) -> Optional[np.ndarray]:
    """Doc ids from row comments (``# doc`` or LETOR's ``#docid = X ...``), if usable.

    Usable means every row has one, without spaces, unique within its query;
    otherwise None (rows are then named d0, d1 ... per query).
    """
    ids = []
    for comment in comments:
        match = _DOCID.search(comment)
        ids.append(match.group(1) if match else comment)
    if not ids or not all(ids) or any(any(c.isspace() for c in d) for d in ids):
        return None
    ids = [decode_docno(d) for d in ids]  # URLs are written as TREC docnos (verirank/docno.py)
    if len(set(zip(qids.tolist(), ids))) != len(ids):
        return None
    return np.array(ids, dtype=object)


def _check_contiguous(qids: np.ndarray, path: Path) -> None:
    seen: set = set()
    previous = None
    for i, q in enumerate(qids):
        if q != previous:
            if q in seen:
                raise SchemaError(f"{path}: rows of qid {q} are not contiguous (again at data row {i + 1})")
            seen.add(q)
            previous = q


def _format_value(value: float) -> str:
    # repr-style shortest round-trip text, so load(save(X)) == X exactly
    return repr(float(value)) if value != int(value) else str(int(value))


def save_svmlight(
    path: Path | str,
    X: np.ndarray,
    y: np.ndarray,
    qids: Sequence,
    comments: Optional[Sequence[str]] = None,
    query_file: Path | str | None = None,
) -> None:
    """Write rows in the LETOR form (``label qid:Q i:v ... # comment``).

    Zero features are omitted (sparse form). Rows of one query must be
    contiguous. With ``query_file`` the LightGBM form is written instead: no
    ``qid:`` column and the group sizes in ``query_file``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    qids = np.asarray(qids, dtype=object)
    if X.ndim != 2 or len(X) != len(y) or len(y) != len(qids):
        raise SchemaError(f"{path}: X {X.shape}, y {y.shape} and qids {qids.shape} do not line up")
    if comments is not None and len(comments) != len(y):
        raise SchemaError(f"{path}: {len(comments)} comments for {len(y)} rows")
    _check_contiguous(np.array([str(q) for q in qids], dtype=object), Path(path))
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise SchemaError(f"{path}: features or labels contain NaN or infinity")

    lines = []
    for i in range(len(y)):
        parts = [_format_value(y[i])]
        if query_file is None:
            qid = str(qids[i])
            if not qid or any(c.isspace() for c in qid):
                raise SchemaError(f"{path}: qid {qid!r} must be non-empty without spaces")
            parts.append(f"qid:{qid}")
        parts.extend(f"{j + 1}:{_format_value(v)}" for j, v in enumerate(X[i]) if v != 0)
        line = " ".join(parts)
        if comments is not None and comments[i]:
            line += f" # {comments[i]}"
        lines.append(line + "\n")
    atomic_write_text(Path(path), "".join(lines))

    if query_file is not None:
        sizes: list[int] = []
        previous = object()
        for q in qids:
            if q != previous:
                sizes.append(0)
                previous = q
            sizes[-1] += 1
        atomic_write_text(Path(query_file), "".join(f"{s}\n" for s in sizes))
