"""A worker handler module with a ``warm_up`` (``tests/test_remote.py``): its handler answers
whether the warm-up ran before the first call."""

from __future__ import annotations

from typing import Any

warmed = False


def warm_up() -> None:
    global warmed
    warmed = True


def was_warmed(state: dict[str, Any], payload: Any) -> bool:
    return warmed
