"""Counts of 64-bit keys over a site's pages, compact (:class:`KeyCounts`).

A crawl counts, per site, on how many pages each block, link slot or shingle hash was seen;
the number of distinct keys grows with every page of new text, so they are kept in sorted
arrays (12 bytes a key) rather than a ``dict`` (about 100).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import repeat
from typing import TYPE_CHECKING, Self

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["KeyCounts", "KeyValues"]


class KeyValues:
    """A value (int32) per 64-bit key, compact: the keys a sorted array with the values beside,
    new keys in a small dict until it holds more than an eighth of them (or
    :data:`_MERGE_AT`), then merged in (amortised, a few array operations per key). About 12
    bytes a key instead of a dict's ~100 (an entry and two int objects). The mechanism of
    :class:`KeyCounts` and of :class:`~wisdom_scrapy.store.strings.StringTable`'s index."""

    __slots__ = ("_keys", "_recent", "_values")

    def __init__(self) -> None:
        self._keys = np.zeros(0, dtype=np.int64)
        self._values = np.zeros(0, dtype=np.int32)
        self._recent: dict[int, int] = {}  # keys not in _keys yet -> value

    @classmethod
    def from_arrays(cls, keys: NDArray[np.int64], values: NDArray[np.int64]) -> Self:
        """The values ``values`` of the distinct keys ``keys`` (any order); ValueError on a
        repeated key."""
        made = cls()
        order = np.argsort(keys)
        made._keys = np.asarray(keys, dtype=np.int64)[order]
        made._values = np.asarray(values, dtype=np.int32)[order]
        if bool((made._keys[1:] == made._keys[:-1]).any()):
            raise ValueError(f"{cls.__name__}.from_arrays: a key is listed twice")
        return made

    def value(self, key: int, missing: int) -> int:
        """The value of ``key``, ``missing`` when absent."""
        got = self._recent.get(key)
        if got is not None:
            return got
        at = int(self._keys.searchsorted(key))
        if at < len(self._keys) and int(self._keys[at]) == key:
            return int(self._values[at])
        return missing

    def values_of(self, query: NDArray[np.int64], missing: int) -> NDArray[np.int64]:
        """The value of every key of ``query``, ``missing`` for those absent."""
        query = np.asarray(query, dtype=np.int64)
        out = np.full(len(query), missing, dtype=np.int64)
        if len(self._keys) and len(query):
            at = np.minimum(self._keys.searchsorted(query), len(self._keys) - 1)
            found = self._keys[at] == query
            out[found] = self._values[at[found]]
        if self._recent and len(query):  # the keys not merged yet: one C-level map over
            # the misses (a page's blocks are mostly new to the site: most queries miss)
            miss = np.flatnonzero(out == missing)
            if len(miss):
                get = self._recent.get
                out[miss] = np.fromiter(map(get, query[miss].tolist(), repeat(missing)),
                                        np.int64, len(miss))
        return out

    def put(self, key: int, value: int) -> None:
        """Give ``key``, which has no value yet, its ``value``."""
        self._recent[key] = value
        self._merge_if_due()

    def put_many(self, keys: list[int], values: list[int]) -> None:
        """:meth:`put` of each of ``keys`` (distinct, none with a value yet) in one dict
        update: the same look-ups after, merged at most once."""
        self._recent.update(zip(keys, values, strict=True))
        self._merge_if_due()

    def set(self, key: int, value: int) -> None:
        """Give ``key`` its ``value``, whether it had one or not."""
        at = int(self._keys.searchsorted(key))
        if at < len(self._keys) and int(self._keys[at]) == key:
            self._values[at] = value
        else:
            self.put(key, value)

    def arrays(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(keys sorted, their values)."""
        self._merge()
        return self._keys, self._values.astype(np.int64)

    def _merge_if_due(self) -> None:
        if len(self._recent) > max(_MERGE_AT, len(self._keys) >> 3):
            self._merge()

    def _merge(self) -> None:
        if not self._recent:
            return
        recent = self._recent
        keys = np.concatenate([self._keys, np.fromiter(recent.keys(), np.int64, len(recent))])
        values = np.concatenate([self._values,
                                 np.fromiter(recent.values(), np.int32, len(recent))])
        order = np.argsort(keys)  # the recent keys are not in _keys: all keys distinct
        self._keys, self._values, self._recent = keys[order], values[order], {}

    def __len__(self) -> int:
        return len(self._keys) + len(self._recent)


class KeyCounts(KeyValues, Mapping[int, int]):
    """On how many pages each 64-bit key (a slot, pair or shingle hash) was seen: what a
    ``Counter`` answers, in 12 bytes a key instead of about 100 (a dict entry and two int
    objects), since a site's count grows with every page of new text.

    The counts are a :class:`KeyValues`' values: :meth:`add` counts a key already there in
    place and a new one in its dict of recent keys. Look-ups are
    vectorised (:meth:`lookup`); it is a read-only ``Mapping`` otherwise (``dict(counts)``, ``==``)
    but for :meth:`add` and :meth:`remove`.
    """

    __slots__ = ()

    def add(self, keys: NDArray[np.int64]) -> None:
        """Count every key of ``keys`` once more (a key listed twice, twice)."""
        keys, n = np.unique(np.asarray(keys, dtype=np.int64), return_counts=True)
        if len(self._keys) and len(keys):
            at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
            found = self._keys[at] == keys
            self._values[at[found]] += n[found].astype(np.int32)  # keys unique: no repeats
            keys, n = keys[~found], n[~found]
        recent = self._recent
        for k, c in zip(keys.tolist(), n.tolist(), strict=True):
            recent[k] = recent.get(k, 0) + c
        self._merge_if_due()

    def remove(self, keys: NDArray[np.int64]) -> None:
        """Count every key of ``keys`` once less (a key listed twice, twice): the keys of a
        page taken back when it is replaced, each counted before. A key whose count falls to 0
        is forgotten."""
        keys, n = np.unique(np.asarray(keys, dtype=np.int64), return_counts=True)
        if len(self._keys) and len(keys):
            at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
            found = self._keys[at] == keys
            self._values[at[found]] -= n[found].astype(np.int32)
            if (self._values[at[found]] <= 0).any():
                kept = self._values > 0
                self._keys, self._values = self._keys[kept], self._values[kept]
            keys, n = keys[~found], n[~found]
        recent = self._recent
        for k, c in zip(keys.tolist(), n.tolist(), strict=True):
            left = recent.get(k, 0) - c
            if left > 0:
                recent[k] = left
            else:
                recent.pop(k, None)

    def lookup(self, query: NDArray[np.int64]) -> NDArray[np.int64]:
        """The count of every key of ``query`` (0 when absent)."""
        return self.values_of(query, 0)

    def __getitem__(self, key: int) -> int:
        count = int(self.lookup(np.array([key], dtype=np.int64))[0])
        if not count:
            raise KeyError(key)
        return count

    def __iter__(self) -> Iterator[int]:
        self._merge()
        return iter(self._keys.tolist())


#: New keys a KeyValues keeps in its dict before merging them, at least: few, since a broad
#: crawl keeps several per site (the link counts, the URL tables, the title parts), most of
#: them small, and a table of tens of keys held them all in its dict (a merge of a few hundred
#: keys costs microseconds; a dict entry is ~100 bytes, 8× an array's). 16 → 4: a 15-URL
#: table 2.9 → 1.6 KB.
_MERGE_AT = 4
