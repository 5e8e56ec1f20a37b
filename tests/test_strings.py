"""StringTable: strings by id in order of first sight, held compactly; StringValues: floats by
string, on one; TableSubset: some of a table's strings; SeenStrings and StringBytes: a set and
a dict of bytes by the strings' hashes alone."""

from __future__ import annotations

import copy
import gc
import pickle
import random
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from wisdom_scrapy.store import strings as strings_module
from wisdom_scrapy.store.strings import (
    SeenStrings,
    StringBytes,
    StringTable,
    StringValues,
    TableSubset,
)


def _words(rng: random.Random, n: int) -> list[str]:
    """``n`` strings drawn with repeats from a pool mixing ASCII, accented, Han and a lone
    surrogate (what ``str`` allows, whatever a page decodes to)."""
    pool = [f"term{k}" for k in range(n // 3)] + ["entropie", "café", "信息熵", "\ud800x", ""]
    return [rng.choice(pool) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ids_follow_first_sight_like_a_list_and_a_dict(seed: int) -> None:
    """Over batches of every size (past the index's merges), with strings repeated within a
    batch and across batches, the table gives the ids a list and a dict would, and gives the
    strings back."""
    rng = random.Random(seed)
    table, ids, names = StringTable(), dict[str, int](), list[str]()
    for _ in range(60):
        batch = _words(rng, rng.choice([0, 1, 7, 300]))
        got = table.ids(batch)
        for s in batch:
            if s not in ids:
                ids[s] = len(names)
                names.append(s)
        assert got.dtype == np.int32
        assert got.tolist() == [ids[s] for s in batch]
        assert table.strings(got.tolist()) == batch
    assert len(table) == len(names)
    assert list(table) == names
    assert table[len(names) // 2 :] == names[len(names) // 2 :]
    assert table[-1] == names[-1]
    assert all(table.get(s) == i for s, i in ids.items())
    assert all(table.id(s) == i for s, i in ids.items())
    assert len(table) == len(names)  # looking up added nothing


def _one_by_one(batches: list[list[str]]) -> tuple[StringTable, StringTable]:
    """(a table given the batches by ``ids``, one given each string by ``id``), the second
    comparing with the first after each batch: the same ids, bytes and look-ups."""
    at_once, apart = StringTable(), StringTable()
    for batch in batches:
        assert at_once.ids(batch).tolist() == [apart.id(s) for s in batch]
        assert (bytes(at_once._blob), at_once._offsets) == (bytes(apart._blob), apart._offsets)
        assert at_once.lookup(batch).tolist() == apart.lookup(batch).tolist()
        assert len(at_once) == len(apart) and at_once.collisions == apart.collisions
    return at_once, apart


@pytest.mark.parametrize("seed", [1, 2])
def test_new_strings_of_a_batch_are_added_at_once_as_one_by_one(seed: int) -> None:
    """``ids`` adds a batch's new strings at once when each is listed once and free to go
    under its own key (a page's vocabulary, its distinct link URLs): the ids, bytes and
    look-ups of adding them one by one, past the index's merges, non-ASCII strings
    included; batches with repeats take the one-by-one way."""
    rng = random.Random(seed)
    batches, known = [], ["entropie"]
    for n in range(80):
        fresh = [f"{word}{n}" for word in _words(rng, rng.choice([1, 7, 300]))]
        batch = list(dict.fromkeys(fresh + rng.sample(known, min(len(known), 20))))
        rng.shuffle(batch)
        if n % 4 == 3:  # a repeat: one by one
            batch.append(batch[0])
        batches.append(batch)
        known += fresh
    _one_by_one(batches)


def test_unknown_strings_are_not_added_by_lookups() -> None:
    table = StringTable()
    table.ids(["a", "b"])
    assert table.lookup(["b", "zz", "a"]).tolist() == [1, -1, 0]
    assert table.get("zz") is None
    assert "zz" not in table and "a" in table and 0 not in table
    assert table.id("zz") == 2
    with pytest.raises(IndexError, match="3 strings"):
        table[3]


def test_strings_of_one_hash_keep_ids_of_their_own() -> None:
    """CPython's ``hash()`` of a ``str`` hashes its storage bytes: "x0" (one byte a character)
    and "へ" (U+3078, two) hash alike in every process. An identifier and a Japanese term of
    one page must not share an id."""
    assert hash("x0") == hash("へ") and hash("n0") == hash("の")  # the trap is real
    table = StringTable()
    assert table.ids(["x0", "n0", "へ", "の"]).tolist() == [0, 1, 2, 3]
    assert (table.get("へ"), table.get("x0")) == (2, 0)
    assert table.strings([2, 3]) == ["へ", "の"]


def test_a_table_built_at_once_is_the_table_built_string_by_string() -> None:
    """``StringTable.of`` (a snapshot's terms, read at once) gives the ids, bytes and lookups
    that adding the strings one batch at a time gives, for ASCII and non-ASCII strings (whose
    byte offsets it must count apart), and refuses a repeated string."""
    for strings in ([f"w{k}" for k in range(300)],
                    ["x0", "へ", "café", "", "\ud800x", "信息熵", "𝄞", "n0", "の"]):
        built, grown = StringTable.of(strings), StringTable()
        grown.ids(strings)
        assert list(built) == strings
        assert (bytes(built._blob), built._offsets) == (bytes(grown._blob), grown._offsets)
        assert built.lookup([*strings, "absent"]).tolist() == [*range(len(strings)), -1]
        assert built.ids(["new"]).tolist() == [len(strings)]
    with pytest.raises(ValueError, match="twice"):
        StringTable.of(["a", "b", "a"])


def test_owned_ids_are_looked_up_once_for_their_owner_while_it_lives() -> None:
    """``owned_ids`` answers what ``ids`` answers, the second time from memory for the same
    owner (read-only, whatever strings were added in between), and forgets an owner gone."""

    class Owner:  # a page model: holds its strings for good
        def __init__(self, strings: list[str]) -> None:
            self.strings = strings

    table = StringTable()
    first, second = Owner(["b", "a", "b2", "x0", "へ"]), Owner(["a", "c"])
    got = table.owned_ids(first, first.strings)
    assert got.tolist() == [0, 1, 2, 3, 4] and not got.flags.writeable
    assert table.owned_ids(second, second.strings).tolist() == [1, 5]
    table.ids(["d", "e"])
    assert table.owned_ids(first, first.strings) is got
    assert got.tolist() == table.ids(first.strings).tolist()
    del first
    gc.collect()
    assert len(table._owned) == 1
    assert pickle.loads(pickle.dumps(table)).owned_ids(second, second.strings).tolist() == [1, 5]
    # the same owner asking about other strings (even as many) is not answered from memory
    assert table.owned_ids(second, ["d", "a"]).tolist() == [5 + 1, 1]


def test_string_values_read_like_a_dict() -> None:
    """A snapshot's entropies: the values a dict gives, one by one and many at once (absent
    strings get ``missing``), also after pickling (a snapshot sent to a worker process)."""
    rng = random.Random(4)
    keys = list(dict.fromkeys(_words(rng, 2000)))
    plain = {k: rng.random() for k in keys}
    packed = StringValues(keys, list(plain.values()))
    for values in (packed, pickle.loads(pickle.dumps(packed))):
        assert dict(values) == plain and len(values) == len(plain)
        assert list(values.values()) == list(plain.values()) and 0.5 not in values.values()
        query = [*rng.sample(keys, 50), "absent", "x0", "へ"]
        want = [plain.get(k, -1.0) for k in query]
        assert values.values_of(query, missing=-1.0).tolist() == want
        assert values.get("absent") is None and "absent" not in values
    with pytest.raises(ValueError, match="2 strings, 1 values"):
        StringValues(["a", "b"], [0.5])


@pytest.mark.crawl
def test_a_table_unpickled_in_another_process_finds_its_strings() -> None:
    """The index's hashes are salted per process: an unpickled table hashes its strings
    again (a fresh interpreter, so another salt)."""
    table = StringTable()
    table.ids([f"w{k}" for k in range(500)] + ["café", "x0", "へ"])
    script = ("import pickle, sys; t = pickle.load(sys.stdin.buffer); "
              "print(t.get('w7'), t.get('へ'), t.ids(['x0', 'new']).tolist(), len(t))")
    done = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(table),
                          capture_output=True, check=True)
    assert done.stdout.decode().split("\n")[0] == "7 502 [501, 503] 504"


def test_a_string_costs_a_fraction_of_a_list_and_a_dict() -> None:
    """The point of the table: a crawl's URLs and terms in about 30 bytes a string over their
    text, where a list of str and a dict took about 130 (module docstring). Measured with
    tracemalloc on 20,000 URL-like strings made before the measure starts (the table must not
    keep them: it keeps their bytes)."""
    urls = [f"http://127.0.0.1:8000/a/{k}.html" for k in range(20_000)]
    text = sum(map(len, urls))

    def traced(build):
        tracemalloc.start()
        try:
            kept = build()
            return tracemalloc.get_traced_memory()[0], kept
        finally:
            tracemalloc.stop()

    table_bytes, table = traced(lambda: _filled(urls))
    plain_bytes, plain = traced(lambda: _plain(urls))
    assert len(table) == len(plain[1]) == len(urls)
    assert (table_bytes - text) / len(urls) < 45
    assert table_bytes < plain_bytes / 2


@pytest.mark.parametrize("seed", [1, 2])
def test_seen_strings_and_string_bytes_answer_like_a_set_and_a_dict(seed: int) -> None:
    """Through the index's merges, with strings seen again and values set again (a page
    fetched twice), they answer what a set and a dict of bytes answer."""
    rng = random.Random(seed)
    seen, values = SeenStrings(), StringBytes()
    plain_seen: set[str] = set()
    plain_values: dict[str, bytes] = {}
    for _ in range(3000):
        s = rng.choice([*_words(rng, 1), f"u{rng.randrange(2000)}"])
        assert seen.add(s) == (s not in plain_seen)
        plain_seen.add(s)
        value = bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
        values[s] = plain_values[s] = value
    assert len(seen) == len(plain_seen) and len(values) == len(plain_values)
    for s in [*plain_seen, "absent", "x0", "へ"]:
        assert (s in seen) == (s in plain_seen) and (s in values) == (s in plain_values)
        assert values.get(s) == plain_values.get(s)
    assert values.nbytes() == sum(map(len, plain_values.values()))


def test_values_set_again_keep_the_buffer_within_twice_the_values() -> None:
    """A page fetched again and again (a live index page): unchanged, its value is not stored
    again; changed, the old bytes are dropped once they outnumber the ones in use, and every
    value reads back as last set."""
    values = StringBytes()
    for k in range(50):
        values[f"u{k}"] = bytes([k]) * 100
    tracemalloc.start()
    try:
        for round_ in range(2000):
            values["u0"] = bytes([0]) * 100  # the same again
            values["u1"] = round_.to_bytes(2, "little") * 500  # changed: 1 KB
        grown = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert grown < 400_000  # 2 MB were every version kept
    assert values.get("u1") == (1999).to_bytes(2, "little") * 500
    assert all(values.get(f"u{k}") == bytes([k]) * 100 for k in (0, *range(2, 50)))
    assert values.nbytes() == 49 * 100 + 1000


def test_hash_keyed_tables_travel_only_empty() -> None:
    """Their hashes are salted per process: an empty one pickles (a page's block repetition
    sent to a worker carries one), a filled one says why it cannot."""
    for kind in (SeenStrings, StringBytes):
        assert len(pickle.loads(pickle.dumps(kind()))) == 0
    seen = SeenStrings()
    seen.add("http://127.0.0.1/a")
    with pytest.raises(TypeError, match="SeenStrings holding strings cannot be pickled"):
        pickle.dumps(seen)
    copied = copy.deepcopy(seen)  # in the process, the hashes hold
    copied.add("http://127.0.0.1/b")
    assert "http://127.0.0.1/a" in copied and "http://127.0.0.1/b" not in seen


def test_a_table_subset_holds_some_strings_in_the_tables_order() -> None:
    """The pages among a site's URLs: in the table's order, not the order they joined the
    subset; a string of the table outside the subset is not in it."""
    table = StringTable()
    table.ids(["b", "a", "c", "d"])
    pages = TableSubset(table)
    assert pages.add("c") and pages.add("new") and pages.add("b") and not pages.add("c")
    assert list(pages) == ["b", "c", "new"] and len(pages) == 3
    assert "a" not in pages and "absent" not in pages and "new" in table
    copy = pickle.loads(pickle.dumps(pages))
    assert list(copy) == ["b", "c", "new"] and copy.table.get("d") == 3


def test_per_page_url_tables_cost_a_fraction_of_a_set_and_a_dict() -> None:
    """What the crawl keeps per page by URL: 12 bytes a URL seen and 20 over a page's packed
    ids (module docstring), where a set or dict held each URL's own string as well (each
    response's URL is a string of its own once its request is gone)."""
    urls = [f"http://127.0.0.1:8000/a/{k}.html" for k in range(20_000)]
    blob = bytes(40)

    def traced(build):
        tracemalloc.start()
        try:
            kept = build()
            return tracemalloc.get_traced_memory()[0] / len(urls), kept
        finally:
            tracemalloc.stop()

    def fresh(url: str) -> str:
        return "".join(url)  # a string of its own

    seen_bytes, seen = traced(lambda: _each(SeenStrings(), urls, SeenStrings.add))
    values_bytes, values = traced(
        lambda: _each(StringBytes(), urls, lambda t, u: t.__setitem__(u, blob)))
    set_bytes, plain_set = traced(lambda: _each(set(), urls, lambda t, u: t.add(fresh(u))))
    dict_bytes, plain_dict = traced(
        lambda: _each({}, urls, lambda t, u: t.__setitem__(fresh(u), bytes(bytearray(blob)))))
    assert len(seen) == len(values) == len(plain_set) == len(plain_dict) == len(urls)
    # 12 bytes a merged key, more while the dict of keys not merged yet (an eighth at most) fills
    assert seen_bytes < 24 and set_bytes > 5 * seen_bytes
    # 24 bytes over a value (index, offset, check), and up to ~12 more while the index's dict
    # of keys not merged yet fills (an eighth of them at most): where in that cycle 20,000 keys
    # fall depends on when the index merged before, not on the table
    over = values_bytes - len(blob)
    assert over < 40 and dict_bytes - len(blob) > 3 * over


def _each(table: Any, urls: list[str], put: Callable[[Any, str], object]) -> Any:
    for url in urls:
        put(table, url)
    return table


def _filled(urls: list[str]) -> StringTable:
    table = StringTable()
    for k in range(0, len(urls), 50):  # a page's links at a time, as a crawl adds them
        table.ids(urls[k : k + 50])
    return table


def _plain(urls: list[str]) -> tuple[dict[str, int], list[str]]:
    ids: dict[str, int] = {}
    names: list[str] = []
    for url in urls:
        copy = "".join(url)  # a string of its own, as each page's parse makes
        ids[copy] = len(names)
        names.append(copy)
    return ids, names


@pytest.fixture
def colliding(monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """Two strings whose 64-bit keys collide. No two strings are known to collide under the
    salted hash (about one pair in 4·10⁹ among 10⁵ strings), so the key function gives these
    two one key; every other string, their probe keys included, keeps its real key."""
    real = strings_module._key
    pair = ("http://a.example/1", "http://b.example/2")

    def key(string: str) -> int:
        return 7 if string in pair else real(string)

    monkeypatch.setattr(strings_module, "_key", key)
    monkeypatch.setattr(strings_module, "_keys",
                        lambda listed: np.array([key(s) for s in listed], dtype=np.int64))
    return pair


def test_a_table_gives_colliding_strings_two_ids(colliding: tuple[str, str]) -> None:
    first, second = colliding
    table = StringTable()
    assert table.ids([first, "x", second, first]).tolist() == [0, 1, 2, 0]
    assert table.get(second) == 2 and table.id(second) == 2 and table.collisions == 1
    assert table.lookup([second, first, "http://c.example/"]).tolist() == [2, 0, -1]
    assert list(table) == [first, "x", second]
    for made in (StringTable.of([second, first]), pickle.loads(pickle.dumps(table))):
        assert made.get(first) == list(made).index(first)
        assert made.get(second) == list(made).index(second) and made.collisions == 1
    values = StringValues([first, second], [1.0, 2.0])
    assert values[first] == 1.0 and values[second] == 2.0
    assert values.values_of([second, first]).tolist() == [2.0, 1.0]


def test_strings_added_at_once_keep_colliding_ones_apart(colliding: tuple[str, str]) -> None:
    """A batch whose new strings share a key, or whose new string's key is a known string's,
    is added one by one: each colliding string takes its probe key, as ``id`` gives it."""
    first, second = colliding
    at_once, _ = _one_by_one([["x", first, "y", second], ["z"]])
    assert at_once.collisions == 1 and at_once.get(second) == 3
    at_once, _ = _one_by_one([[first, "x"], ["y", second, "z"]])
    assert at_once.collisions == 1 and at_once.lookup([second, first]).tolist() == [3, 0]


def test_hash_only_tables_tell_colliding_strings_apart(colliding: tuple[str, str]) -> None:
    first, second = colliding
    seen = SeenStrings()
    assert seen.add(first) and second not in seen and seen.add(second)
    assert not seen.add(first) and not seen.add(second) and len(seen) == 2
    values = StringBytes()
    values[first] = bytes(40_000)
    assert values.get(second) is None
    values[second] = b"second"
    for size in range(40_001, 40_004):  # changed values pile up until the buffer is packed
        values[first] = bytes(size)
    assert values.get(first) == bytes(40_003) and values.get(second) == b"second"
