"""Strings by id, compact (:class:`StringTable`): the crawl's term vocabulary, a site's URLs.

A crawl gives ids to every term it meets (the link structure's page records and the TOC term
index keep terms as ids) and to every URL a site's pages link to. Both tables grow with the
crawl: an endless site brings new terms and new URLs on every page. As a ``list`` of ``str``
beside a ``dict`` from string to id, each string costs 100 to 130 bytes over its text (the
``str`` object, the list slot, the dict entry and its spare room); here it costs about 30:
its UTF-8 bytes in one buffer, an 8-byte end offset, and 12 bytes of hash index.

:class:`StringValues` keeps floats by string on a table: a site's entropy snapshot, one per
site of a broad crawl. :class:`TableSubset` marks some strings of a table (the pages among a
site's URLs).

Per-page tables keyed by URL (which URLs were taken, a page's packed term or block ids) grow
with every page. Where nothing needs the URLs back, they keep only the string's 64-bit hash:
:class:`SeenStrings` (12 bytes a URL where a ``set`` of ``str`` takes about 150 with the string)
and :class:`StringBytes` (a bytes value per string, 24 bytes over the value where a ``dict``
takes about 190).
"""

from __future__ import annotations

import copy
import weakref
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence, ValuesView
from typing import TYPE_CHECKING, Any, Self, overload

import numpy as np

from wisdom_scrapy.store.counts import KeyValues

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "SeenStrings",
    "StringBytes",
    "StringTable",
    "StringValues",
    "TableSubset",
    "TableValues",
    "utf8_sizes",
]


def _key(string: str) -> int:
    """The index's hash of ``string``. ``hash()`` alone will not do: CPython hashes a ``str``'s
    storage bytes, one to four a character, so "x0" (bytes 78 30) and "へ" (U+3078, stored as
    the same two bytes) always collide, and a crawl meets both kinds. Such strings differ in
    length, which the key takes in (:func:`_keys` is the same over many strings)."""
    return hash(string) ^ len(string)


def _probe_key(string: str, step: int) -> int:
    """The key ``string`` takes at ``step`` ≥ 1 of its probe sequence, when the key before it
    is another string's (a 64-bit collision): the hash of another text, so not the same
    function of the first hash (which collided)."""
    return _key(f"{string}\x00{step}")


def _check(string: str) -> int:
    """A 31-bit value of ``string`` independent of its key (the hash of another text), kept by
    the tables that do not keep the string (:class:`SeenStrings`, :class:`StringBytes`) to
    tell a colliding key from the string's own."""
    return hash(f"{string}\x01") & 0x7FFFFFFF


def utf8_sizes(strings: Sequence[str], total: int) -> NDArray[np.int64]:
    """Each string's size in UTF-8 bytes, ``total`` being their sum: their lengths when all
    are ASCII (the sums agree), else each one encoded."""
    sizes = np.fromiter(map(len, strings), np.int64, len(strings))
    if int(sizes.sum()) != total:
        sizes = np.fromiter((len(s.encode("utf-8", "surrogatepass")) for s in strings),
                            np.int64, len(strings))  # fmt: skip
    return sizes


def _keys(strings: Sequence[str]) -> NDArray[np.int64]:
    """:func:`_key` of each of ``strings``, at array speed."""
    n = len(strings)
    return np.fromiter(map(hash, strings), np.int64, n) ^ np.fromiter(map(len, strings),
                                                                       np.int64, n)


def _rebuilt(blob: bytes, offsets: array[int]) -> StringTable:
    """A table unpickled: the strings as they were, the index hashed again (the hash is
    salted per process)."""
    table = StringTable()
    table._blob[:] = blob
    table._offsets = offsets
    table._index_all(table.strings(range(len(table))))
    return table


class StringTable(Sequence[str]):
    """Strings by id, ids given in order of first sight (so the same strings met in the same
    order get the same ids in every process), held compactly (module docstring).

    ``table[i]`` is string ``i``; :meth:`ids` gives strings their ids, adding new ones;
    :meth:`lookup` and :meth:`get` only look. A string is found by a 64-bit hash (:func:`_key`;
    salted per process, which is fine: ids are this process's own and a pickled table
    rebuilds its index), kept with the ids in a :class:`~wisdom_scrapy.store.counts.KeyValues`.
    A string found is compared with the one asked for, so two strings whose hashes collide
    (about n²/2⁶⁵ for n strings, 3·10⁻⁸ for a million) never share an id: the second takes the
    next key of its probe sequence (:func:`_probe_key`); :attr:`collisions` counts them.
    """

    __slots__ = ("_blob", "_index", "_offsets", "_owned", "collisions")

    def __init__(self) -> None:
        self._blob = bytearray()  # the strings' UTF-8 bytes, one after the other
        self._offsets = array("q", [0])  # string i is _blob[_offsets[i]:_offsets[i + 1]]
        self._index = KeyValues()  # _key(string) (or a later probe key) -> id
        #: :meth:`owned_ids`' answers, by the object owning the strings, while it lives
        self._owned: weakref.WeakKeyDictionary[Any, tuple[Sequence[str], NDArray[np.int32]]] = (
            weakref.WeakKeyDictionary())
        #: strings whose key was another string's: each took a probe key (none in practice)
        self.collisions = 0

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringTable:
        """A table of the distinct ``strings``, ids in their order, built at once (a tenth of
        the time of :meth:`ids` on an empty table). Raises ValueError on a repeated string."""
        table = cls()
        table._blob[:] = "".join(strings).encode("utf-8", "surrogatepass")
        sizes = utf8_sizes(strings, len(table._blob))
        table._offsets.frombytes(np.cumsum(sizes).tobytes())
        if len(set(strings)) != len(strings):
            raise ValueError("StringTable.of: a string is listed twice")
        table._index_all(strings)
        return table

    def _index_all(self, strings: Sequence[str]) -> None:
        """Index ``strings``, which are every string of the table in id order, all distinct."""
        keys = _keys(strings)
        try:
            self._index = KeyValues.from_arrays(keys, np.arange(len(strings)))
        except ValueError:  # two keys collide: the strings take their keys one by one
            self._index = KeyValues()
            for i, string in enumerate(strings):
                key = self._find(string, int(keys[i]))[1]
                self._index.put(key, i)
                self.collisions += key != int(keys[i])

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
        i = self._find(string, _key(string))[0]
        return None if i < 0 else i

    def id(self, string: str) -> int:
        """The id of ``string``, given it if new."""
        i, key = self._find(string, _key(string))
        return self._add(string, key) if i < 0 else i

    def _find(self, string: str, key: int) -> tuple[int, int]:
        """The id of ``string`` (-1 if it has none) and the key it is (or goes) under: its
        first ``key``, or a later one of its probe sequence when a key is another string's."""
        step = 0
        while True:
            i = self._index.value(key, -1)
            if i < 0 or self.strings((i,))[0] == string:
                return i, key
            step += 1
            key = _probe_key(string, step)

    def lookup(self, strings: Sequence[str]) -> NDArray[np.int32]:
        """The ids of ``strings`` in order, -1 for strings never given one."""
        keys = _keys(strings)
        return self._compared(strings, keys, self._lookup(keys))

    def ids(self, strings: Iterable[str]) -> NDArray[np.int32]:
        """The ids of ``strings`` in order, new strings added."""
        listed = strings if isinstance(strings, Sequence) else list(strings)
        keys = _keys(listed)
        under_key = self._lookup(keys)
        out = self._compared(listed, keys, under_key.copy())
        new = np.flatnonzero(out < 0)
        if len(new) and not self._add_all(listed, keys, under_key, new, out):
            for k in new.tolist():  # a string listed twice: added by the first
                out[k] = self.id(listed[k])
        return out

    def _add_all(self, strings: Sequence[str], keys: NDArray[np.int64],
                 under_key: NDArray[np.int32], new: NDArray[np.intp],
                 out: NDArray[np.int32]) -> bool:
        """Add the new ``strings[new]`` at once, their ids into ``out``, when they go under
        their own keys, as :meth:`id` one by one would put them: each key free (nothing
        ``under_key``) and taken by one string only. Whether they were added (else nothing
        is: a string listed twice, or keys that collide, take :meth:`id`'s way). A page
        brings tens of new terms and URLs, each of which cost a look-up and a put."""
        adding = [strings[k] for k in new.tolist()]
        new_keys = keys[new]
        if ((under_key[new] >= 0).any() or len(set(adding)) < len(adding)
                or len(np.unique(new_keys)) < len(new_keys)):
            return False
        first = len(self)
        joined = "".join(adding).encode("utf-8", "surrogatepass")
        ends = np.cumsum(utf8_sizes(adding, len(joined))) + len(self._blob)
        self._blob += joined
        self._offsets.extend(ends.tolist())
        ids = np.arange(first, first + len(adding))
        self._index.put_many(new_keys.tolist(), ids.tolist())
        out[new] = ids
        return True

    def owned_ids(self, owner: object, strings: Sequence[str]) -> NDArray[np.int32]:
        """:meth:`ids` of ``strings``, which ``owner`` holds for good (a page model's
        vocabulary), remembered while ``owner`` lives: the users of one table that ask for the
        same object's strings (a crawl's TOC term index and link structure share its
        vocabulary, and both read every fetched page's) look them up once. A string's id never
        changes, so the answer stays exact; it is kept for the very ``strings`` object asked
        about, so the same owner asking about other strings is looked up anew. Read-only."""
        known = self._owned.get(owner)
        if known is not None and known[0] is strings:
            return known[1]
        ids = self.ids(strings)
        ids.setflags(write=False)
        self._owned[owner] = (strings, ids)
        return ids

    def _compared(self, strings: Sequence[str], keys: NDArray[np.int64],
                  out: NDArray[np.int32]) -> NDArray[np.int32]:
        """The ids of ``strings``: ``out``, the ids found under their ``keys``, each compared
        with its string, a colliding one looked for along its probe sequence (in place)."""
        found = np.flatnonzero(out >= 0)
        asked = [strings[k] for k in found.tolist()]
        if asked and not self._holds(out[found], asked):
            for k, text in zip(found.tolist(), self.strings(out[found].tolist()), strict=True):
                if text != strings[k]:
                    out[k] = self._find(strings[k], int(keys[k]))[0]
        return out

    def _holds(self, ids: NDArray[np.int32], strings: list[str]) -> bool:
        """Whether the strings of ``ids`` are ``strings``, compared all at once (a third of
        the time of one by one): the same UTF-8 sizes, and the same bytes joined."""
        offsets = np.frombuffer(self._offsets, dtype=np.int64)
        starts = offsets[ids]
        sizes = offsets[ids + 1] - starts
        joined = "".join(strings).encode("utf-8", "surrogatepass")
        if len(joined) != int(sizes.sum()):
            return False
        if not np.array_equal(utf8_sizes(strings, len(joined)), sizes):
            return False
        at = np.arange(len(joined)) + np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
        return np.frombuffer(self._blob, dtype=np.uint8)[at].tobytes() == joined

    def settle(self) -> None:
        """Merge the strings added since the last merge into the index's arrays, so that the
        next look-ups are array work only (a table then read many times, like a snapshot's)."""
        self._index.arrays()

    def _lookup(self, keys: NDArray[np.int64]) -> NDArray[np.int32]:
        return self._index.values_of(keys, -1).astype(np.int32)

    def _add(self, string: str, key: int) -> int:
        i = len(self)
        self._blob += string.encode("utf-8", "surrogatepass")
        self._offsets.append(len(self._blob))
        self._index.put(key, i)
        self.collisions += key != _key(string)
        return i


class StringValues(Mapping[str, float]):
    """Floats by string, compact: the strings in a :class:`StringTable`, the floats in an array
    beside, about 45 bytes an entry with its text where a ``dict`` of ``str`` to ``float``
    takes 130. A site's entropy snapshot is one (a broad crawl holds one per site).

    :meth:`values_of` looks many strings up at once."""

    __slots__ = ("_strings", "_values")

    def __init__(self, strings: Sequence[str] = (),
                 values: Sequence[float] | NDArray[np.float64] = ()) -> None:
        """``values[i]`` is the value of ``strings[i]``; ValueError on a repeated string or
        lengths that differ."""
        self._values = np.array(values, dtype=np.float64)
        if self._values.shape != (len(strings),):
            raise ValueError(f"StringValues: {len(strings)} strings, {self._values.size} values")
        self._strings = StringTable.of(strings)

    def __getitem__(self, string: str) -> float:
        i = self._strings.get(string) if isinstance(string, str) else None
        if i is None:
            raise KeyError(string)
        return float(self._values[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings)

    def __len__(self) -> int:
        return len(self._values)

    def values(self) -> ValuesView[float]:
        """The values in the strings' order, read off the array (a site report sums them)."""
        return _ArrayValues(self)

    def values_of(self, strings: Sequence[str], missing: float = 0.0) -> NDArray[np.float64]:
        """The values of ``strings`` in order, ``missing`` for strings absent."""
        ids = self._strings.lookup(strings)
        out = np.full(len(ids), missing, dtype=np.float64)
        found = ids >= 0
        out[found] = self._values[ids[found]]
        return out


class TableValues(StringValues):
    """:class:`StringValues` on a table it shares with others (:class:`~wisdom_scrapy.store.
    base.EntropyMirror`'s snapshots): ``values[i]`` is string ``i``'s value, strings the table
    got after ``values`` was made (ids past its end) and strings of value 0 are absent. Sharing
    the table makes a new mapping cost its values array, not a new table of every string."""

    __slots__ = ("_n",)

    def __init__(self, table: StringTable, values: NDArray[np.float64]) -> None:
        self._strings = table
        self._values = np.asarray(values, dtype=np.float64)
        if len(self._values) > len(table):
            raise ValueError(f"TableValues: {len(table)} strings, {len(self._values)} values")
        self._n = int(np.count_nonzero(self._values))

    def __getitem__(self, string: str) -> float:
        i = self._strings.get(string) if isinstance(string, str) else None
        if i is None or i >= len(self._values) or self._values[i] == 0:
            raise KeyError(string)
        return float(self._values[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self._strings.strings(np.flatnonzero(self._values).tolist()))

    def __len__(self) -> int:
        return self._n

    def values(self) -> ValuesView[float]:
        return _ArrayValues(self)

    def values_of(self, strings: Sequence[str], missing: float = 0.0) -> NDArray[np.float64]:
        ids = self._strings.lookup(strings)
        out = np.full(len(ids), missing, dtype=np.float64)
        found = (ids >= 0) & (ids < len(self._values))
        got = self._values[ids[found]]
        out[np.flatnonzero(found)[got != 0]] = got[got != 0]
        return out


class _ArrayValues(ValuesView[float]):
    """:meth:`StringValues.values`: iterated off the array, not string by string."""

    _mapping: StringValues

    def __iter__(self) -> Iterator[float]:
        values = self._mapping._values
        if isinstance(self._mapping, TableValues):  # its absent strings' zeros left out
            values = values[values != 0]
        return iter(values.tolist())


class TableSubset(Collection[str]):
    """Some strings of a :class:`StringTable`, a flag byte per string of the table: the pages
    among a site's URLs, iterated in id order (the order the table met them)."""

    __slots__ = ("_flags", "_n", "table")

    def __init__(self, table: StringTable) -> None:
        self.table = table
        self._flags = bytearray()  # _flags[i]: string i is in the subset
        self._n = 0

    def add(self, string: str) -> bool:
        """Put ``string`` in the subset (and in the table, if new there); False when it was in
        already."""
        i = self.table.id(string)
        if i >= len(self._flags):
            self._flags.extend(bytes(max(i + 1, 2 * len(self._flags)) - len(self._flags)))
        if self._flags[i]:
            return False
        self._flags[i] = 1
        self._n += 1
        return True

    def __contains__(self, value: object) -> bool:
        i = self.table.get(value) if isinstance(value, str) else None
        return i is not None and i < len(self._flags) and bool(self._flags[i])

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        ids = np.flatnonzero(np.frombuffer(self._flags, dtype=np.uint8)).tolist()
        for start in range(0, len(ids), 4096):
            yield from self.table.strings(ids[start : start + 4096])


class _ByHash:
    """What :class:`SeenStrings` and :class:`StringBytes` share: an index by the strings'
    salted hashes (:func:`_key`), which mean nothing in another process, so only an empty one
    pickles (a page's block repetition sent to a worker holds one); a copy in the process is
    a copy of its arrays.

    The string is not kept, so a key found is told from another string's by a 31-bit check
    (:func:`_check`) kept with it: two strings are taken for one only if both their key and
    their check collide (about n²/2⁹⁶ for n strings); a key that is another string's sends the
    string along its probe sequence (:func:`_probe_key`), as in :class:`StringTable`."""

    __slots__ = ("_index",)

    def __init__(self) -> None:
        self._index = KeyValues()  # _key(string) (or a later probe key) -> value

    def _checked(self, value: int) -> int:
        """The check of the string whose value in the index is ``value``."""
        raise NotImplementedError

    def _slot(self, string: str) -> tuple[int, int, int]:
        """``string``'s value in the index (-1 if it has none), the key it is (or goes)
        under, and its check."""
        key, check, step = _key(string), _check(string), 0
        while True:
            value = self._index.value(key, -1)
            if value < 0 or self._checked(value) == check:
                return value, key, check
            step += 1
            key = _probe_key(string, step)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self._slot(value)[0] >= 0

    def __len__(self) -> int:
        return len(self._index)

    def __reduce__(self) -> tuple[Any, ...]:
        if len(self):
            raise TypeError(f"a {type(self).__name__} holding strings cannot be pickled: its "
                            "hashes are salted per process")
        return type(self), ()

    def __copy__(self) -> Self:
        return copy.deepcopy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        made = type(self).__new__(type(self))
        for kind in type(self).__mro__[:-1]:  # the slots of each class but object
            name: str
            for name in kind.__dict__.get("__slots__", ()):
                setattr(made, name, copy.deepcopy(getattr(self, name), memo))
        return made


class SeenStrings(_ByHash):
    """Which strings were seen, by their 64-bit hash and a 31-bit check (:class:`_ByHash`):
    12 bytes a string, its text not kept, so it cannot be iterated. The URLs a crawl took or
    made articles of."""

    __slots__ = ()

    def _checked(self, value: int) -> int:
        return value  # the index keeps each string's check

    def add(self, string: str) -> bool:
        """Note ``string``; False when it was seen already."""
        value, key, check = self._slot(string)
        if value >= 0:
            return False
        self._index.put(key, check)
        return True


class StringBytes(_ByHash):
    """A ``bytes`` value per string, by the string's 64-bit hash (as :class:`SeenStrings`):
    the values one after the other in a buffer, 24 bytes over a value. A page's packed term or
    block ids by URL. A value set again, changed (a page fetched again), leaves its old bytes
    unused in the buffer until they are as many as the values in use: then the buffer is
    packed again."""

    __slots__ = ("_blob", "_checks", "_live", "_offsets")

    def __init__(self) -> None:
        super().__init__()
        self._blob = bytearray()
        self._offsets = array("q", [0])  # value i is _blob[_offsets[i]:_offsets[i + 1]]
        self._checks = array("i")  # value i's string's check
        self._live = 0  # bytes of the current values

    def _checked(self, value: int) -> int:
        return self._checks[value]

    def get(self, string: str) -> bytes | None:
        i = self._slot(string)[0]
        return None if i < 0 else bytes(self._blob[self._offsets[i] : self._offsets[i + 1]])

    def __setitem__(self, string: str, value: bytes) -> None:
        old, key, check = self._slot(string)
        if old >= 0:
            start, end = self._offsets[old], self._offsets[old + 1]
            if self._blob[start:end] == value:  # a page fetched again, unchanged
                return
            self._live -= end - start
        self._blob += value
        self._offsets.append(len(self._blob))
        self._checks.append(check)
        self._index.set(key, len(self._offsets) - 2)
        self._live += len(value)
        if len(self._blob) > 2 * self._live + _PACK_SLACK:
            self._pack()

    def _pack(self) -> None:
        """The values in use only, one after the other again."""
        keys, ids = self._index.arrays()
        offsets = np.frombuffer(self._offsets, dtype=np.int64)
        starts, ends = offsets[ids], offsets[ids + 1]
        self._blob = bytearray().join(self._blob[a:b] for a, b in zip(starts.tolist(),
                                                                      ends.tolist(), strict=True))
        self._offsets = array("q", [0])
        self._offsets.frombytes(np.cumsum(ends - starts).tobytes())
        self._checks = array("i", np.frombuffer(self._checks, dtype=np.int32)[ids].tobytes())
        self._index = KeyValues.from_arrays(keys, np.arange(len(keys)))

    def nbytes(self) -> int:
        """Bytes of the current values."""
        return self._live


#: Unused bytes a :class:`StringBytes` tolerates beyond as many as it uses before it packs
#: its buffer (so a small one is not packed at every change)
_PACK_SLACK = 1 << 16
