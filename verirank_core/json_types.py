"""Names for JSON-shaped data: manifests, config trees, parsed JSON files.

These are annotations only. A pydantic field that holds free-form JSON is typed
``dict[str, object]`` instead, because pydantic would validate (and reject
tuples in) a field typed with the recursive alias.
"""

from __future__ import annotations

from typing import Union

JSONValue = Union[str, int, float, bool, None, list["JSONValue"], dict[str, "JSONValue"]]
#: a JSON object, e.g. one manifest entry or one parsed YAML config
JSONObject = dict[str, JSONValue]
