"""Strings by id, compact (:class:`StringTable`): the crawl's term vocabulary, a site's URLs.

A crawl gives ids to every term it meets (the link structure's page records and the TOC term
index keep terms as ids) and to every URL a site's pages link to. Both tables grow with the
crawl: an endless site brings new terms and new URLs on every page. As a ``list`` of ``str``
beside a ``dict`` from string to id, each string costs 100 to 130 bytes over its text (the
``str`` object, the list slot, the dict entry and its spare room); here it costs about 30:
its UTF-8 bytes in one buffer, an 8-byte end offset, and 12 bytes of hash index.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from wisdom_scrapy.mining.counts import KeyValues

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["StringTable"]


def _key(string: str) -> int:
    """The index's hash of ``string``. ``hash()`` alone will not do: CPython hashes a ``str``'s
    storage bytes, one to four a character, so "x0" (bytes 78 30) and "へ" (U+3078, stored as
    the same two bytes) always collide, and a crawl meets both kinds. Such strings differ in
    length, which the key takes in (a ``str`` caches its own hash, so this costs a tuple)."""
    return hash((string, len(string)))


def _rebuilt(blob: bytes, offsets: array[int]) -> StringTable:
    """A table unpickled: the strings as they were, the index hashed again (the hash is
    salted per process)."""
    table = StringTable()
    table._blob[:] = blob
    table._offsets = offsets
    strings = table.strings(range(len(table)))
    keys = np.fromiter(map(_key, strings), np.int64, len(strings))
    table._index = KeyValues.from_arrays(keys, np.arange(len(strings)))
    return table


class StringTable(Sequence[str]):
    """Strings by id, ids given in order of first sight (so the same strings met in the same
    order get the same ids in every process), held compactly (module docstring).

    ``table[i]`` is string ``i``; :meth:`ids` gives strings their ids, adding new ones;
    :meth:`lookup` and :meth:`get` only look. A string is found by a 64-bit hash (:func:`_key`;
    salted per process, which is fine: ids are this process's own and a pickled table
    rebuilds its index), kept with the ids in a :class:`~wisdom_scrapy.mining.counts.KeyValues`.
    Two distinct strings
    would share an id, and the second would read as the first, only if their hashes collided:
    about n²/2⁶⁵ for n strings, 3·10⁻⁸ for a million.
    """

    __slots__ = ("_blob", "_index", "_offsets")

    def __init__(self) -> None:
        self._blob = bytearray()  # the strings' UTF-8 bytes, one after the other
        self._offsets = array("q", [0])  # string i is _blob[_offsets[i]:_offsets[i + 1]]
        self._index = KeyValues()  # _key(string) -> id

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuilt, (bytes(self._blob), self._offsets)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return self.strings(range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"string id {index} out of range ({len(self)} strings)")
        return self.strings((index,))[0]

    def strings(self, ids: Iterable[int]) -> list[str]:
        """The strings of ``ids`` (each in ``range(len(table))``: unchecked, unlike
        ``table[i]``), in order; a third the time of indexing them one by one."""
        blob, offsets = self._blob, self._offsets
        return [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogatepass") for i in ids]

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), 4096):
            yield from self.strings(range(start, min(start + 4096, len(self))))

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.get(value) is not None

    def get(self, string: str) -> int | None:
        """The id of ``string``, or None for a string never given one."""
        i = self._index.value(_key(string), -1)
        return None if i < 0 else i

    def id(self, string: str) -> int:
        """The id of ``string``, given it if new."""
        i = self.get(string)
        return self._add(string, _key(string)) if i is None else i

    def lookup(self, strings: Sequence[str]) -> NDArray[np.int32]:
        """The ids of ``strings`` in order, -1 for strings never given one."""
        return self._lookup(np.fromiter(map(_key, strings), np.int64, len(strings)))

    def ids(self, strings: Iterable[str]) -> NDArray[np.int32]:
        """The ids of ``strings`` in order, new strings added."""
        listed = strings if isinstance(strings, Sequence) else list(strings)
        keys = np.fromiter(map(_key, listed), np.int64, len(listed))
        out = self._lookup(keys)
        added: dict[int, int] = {}  # a string listed twice is added by the first
        for k in np.flatnonzero(out < 0).tolist():
            key = int(keys[k])
            i = added.get(key)
            out[k] = added[key] = self._add(listed[k], key) if i is None else i
        return out

    def _lookup(self, keys: NDArray[np.int64]) -> NDArray[np.int32]:
        return self._index.values_of(keys, -1).astype(np.int32)

    def _add(self, string: str, key: int) -> int:
        i = len(self)
        self._blob += string.encode("utf-8", "surrogatepass")
        self._offsets.append(len(self._blob))
        self._index.put(key, i)
        return i
