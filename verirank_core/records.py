"""The base class of every record that crosses a stage boundary.

Records are pydantic models so that a file written by one stage is validated
on entry to the next one; a bad line raises :class:`SchemaError` naming the
file, line and fields instead of a ``KeyError`` three calls later.
Each stage keeps its own records in ``<stage>/records.py``.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from verirank_core.errors import SchemaError
from verirank_core.json_types import JSONObject

R = TypeVar("R", bound="Record")


class Record(BaseModel):
    """A typed, JSON-serialisable row of a stage's output file."""

    # Unknown fields are kept, so files written by a newer version still load.
    model_config = ConfigDict(extra="allow", frozen=False)

    #: fields that identify one item; resume skips items whose key is stored
    key_fields: ClassVar[tuple[str, ...]] = ()

    def key(self) -> tuple:
        return tuple(getattr(self, f) for f in self.key_fields)

    @classmethod
    def parse(cls: type[R], data: object, where: str = "") -> R:
        """Validate ``data``; raise SchemaError that names the bad fields."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "<record>"
                problems.append(f"{loc}: {err['msg']}")
            prefix = f"{where}: " if where else ""
            raise SchemaError(
                f"{prefix}invalid {cls.__name__} record ({'; '.join(problems)})"
            ) from exc

    def to_json_dict(self) -> JSONObject:
        return self.model_dump(mode="json")
