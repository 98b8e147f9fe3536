"""Every error verirank raises on purpose.

    VerirankError
    ├── ConfigError            a config file or flag is invalid (names the field)
    ├── SchemaError            a record on disk lacks fields or has wrong types
    ├── StoreError             the run directory cannot be read or written
    ├── ExtractionError        stage 1
    │   ├── FetchError         transport failure (kept as a page status, raised only by low-level helpers)
    │   └── SearchError        a search backend failed after its retries
    ├── LLMError               the model server failed or never produced valid output
    │   └── LLMOutputError     output did not validate after the bounded retries
    ├── ExecutionError         stage 2
    │   ├── DeviceError        a device disconnected or a command failed
    │   ├── AppNotInstalled    the device is fine, but the app a step launches is not on it
    │   └── WorldError         a simulator world file is invalid
    └── RankingError           stage 3
        └── NotFittedError     predict() before fit()

Failures of single items (a 404, a page with no steps, a trajectory that got
stuck) are *not* errors: they are statuses on records, so they are counted
rather than lost. Exceptions are for things the caller must fix.
"""

from __future__ import annotations

__all__ = [
    "VerirankError",
    "ConfigError",
    "SchemaError",
    "StoreError",
    "ExtractionError",
    "FetchError",
    "SearchError",
    "LLMError",
    "LLMOutputError",
    "ExecutionError",
    "DeviceError",
    "AppNotInstalled",
    "WorldError",
    "RankingError",
    "NotFittedError",
]


class VerirankError(Exception):
    """Root of every error verirank raises on purpose."""


class ConfigError(VerirankError):
    """A config file or command-line override is invalid."""


class SchemaError(VerirankError):
    """A record does not match its schema; the message names the fields."""


class StoreError(VerirankError):
    """The run directory cannot be read or written."""


class ExtractionError(VerirankError):
    """Stage 1 (search, fetch, clean, extract, ground) failed as a whole."""


class FetchError(ExtractionError):
    """A page could not be fetched; carries a machine-readable status."""

    def __init__(self, status: str, reason: str):
        super().__init__(f"{status}: {reason}")
        self.status = status
        self.reason = reason


class SearchError(ExtractionError):
    """A search backend failed after its retries."""


class LLMError(VerirankError):
    """The model server could not be reached or refused the request."""


class LLMOutputError(LLMError):
    """The model's output never validated within the retry budget."""


class ExecutionError(VerirankError):
    """Stage 2 (devices, worlds, agent, judge) failed as a whole."""


class DeviceError(ExecutionError):
    """A device disconnected or a device command failed."""


class AppNotInstalled(ExecutionError):
    """A launch named a package the device does not have.

    Not a ``DeviceError``: the device answered, so the page's action fails
    (the page asked for an app this device lacks) and the device stays in use.
    """


class WorldError(ExecutionError):
    """A simulator world description is invalid."""


class RankingError(VerirankError):
    """Stage 3 (features, models, metrics, export) failed as a whole."""


class NotFittedError(RankingError):
    """A model was asked to predict before it was fitted."""
