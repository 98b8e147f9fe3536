"""One registry style for every pluggable part: devices, extractors, predictors, judges, rankers.

A :class:`Registry` maps a name to what builds the part. Looking up an
unknown name raises a :class:`ConfigError` that lists the valid names. The
names a config may hold are also checked when the config is loaded (the
``Literal`` fields of the config sections); a test keeps both lists equal.
"""

from __future__ import annotations

from typing import Iterable, Mapping, TypeVar, Union

from verirank_core.errors import ConfigError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(dict[str, T]):
    """``name -> builder`` for one kind of part (``kind`` names it in errors, e.g. ``execution.judge``)."""

    def __init__(self, kind: str, entries: Union[Mapping[str, T], Iterable[tuple[str, T]]] = ()):
        super().__init__(entries)
        self.kind = kind

    def lookup(self, name: str) -> T:
        """The builder registered as ``name``; an unknown name is a ConfigError listing the valid ones."""
        if name not in self:
            raise ConfigError(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names())}")
        return self[name]

    def names(self) -> list[str]:
        return sorted(self)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self)})"

    def __reduce__(self) -> tuple[type[Registry[T]], tuple[str, dict[str, T]]]:  # picklable for Ray workers
        return (Registry, (self.kind, dict(self)))
