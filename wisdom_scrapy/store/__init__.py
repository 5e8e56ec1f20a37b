"""Term-entropy stores: ``memory://``, ``sqlite:///path`` (default) and ``redis://host:port/db``.

See :mod:`wisdom_scrapy.store.base` for the entropy formula and the page-record format.
"""

from __future__ import annotations

from wisdom_scrapy.store.base import (
    EntropySnapshot,
    Link,
    StoreError,
    StoreLost,
    TermStore,
    entropy_from_sums,
    redact_uri,
)

__all__ = [
    "EntropySnapshot",
    "Link",
    "StoreError",
    "StoreLost",
    "TermStore",
    "entropy_from_sums",
    "open_store",
    "redact_uri",
]


def open_store(uri: str, *, create: bool = True) -> TermStore:
    """Open the store a URI names, checking that it is usable now.

    ``memory://``; ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` (the
    file's own folder is created when the folder above it exists — a missing path further up
    is a typo, not a request for a tree of folders; ``?timeout=SECONDS``, default 30, bounds
    the wait for another process' lock); ``redis://[:password@]host:port/db`` (``rediss://``
    for TLS), optionally with ``?prefix=NAME`` to keep several projects apart in one Redis
    database. With ``create=False`` (commands that only read) a SQLite file that does not
    exist is an error instead of a new empty store.
    Raises :class:`StoreError` naming the (password-redacted) URI when it is not.
    """
    scheme = uri.split(":", 1)[0].lower() if ":" in uri else ""
    if scheme == "memory":
        from wisdom_scrapy.store.memory import MemoryStore

        return MemoryStore(uri)
    if scheme == "sqlite":
        from wisdom_scrapy.store.sqlite import SQLiteStore

        return SQLiteStore(uri, create=create)
    if scheme in ("redis", "rediss", "unix"):
        try:
            from wisdom_scrapy.store.redis import RedisStore
        except ModuleNotFoundError as exc:  # redis-py is the redis extra, not a dependency
            if exc.name != "redis":
                raise
            raise StoreError(
                f"store URI {redact_uri(uri)!r} needs the redis client, an optional dependency:"
                " pip install 'wisdom_scrapy[redis]'"
            ) from exc
        return RedisStore(uri)
    raise StoreError(
        f"unknown store URI {redact_uri(uri)!r}: use memory://, sqlite:///path or redis://host:port/db"
    )
