"""What only the Redis store has: a server that restarts, concurrent writers, the Lua script's
all-or-nothing update, the page-record format, key layout, authentication and unix sockets.

Backend-independent semantics are in test_store.py (run there on Redis too).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import redis
from redis.crc import key_slot

from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store import StoreError, open_store
from wisdom_scrapy.store.base import encode_record, page_digest
from wisdom_scrapy.store.memory import MemoryStore
from wisdom_scrapy.store.redis import RedisStore, decode_page_record, encode_page_record

SITE = "example.org"
TOL = 1e-9

PAGES = [
    {"alpha": 3, "beta": 1, "gamma": 2},
    {"alpha": 1, "delta": 4},
    {"beta": 2, "gamma": 1, "epsilon": 7},
    {"alpha": 2, "zeta": 1},
    {"eta": 5, "beta": 1},
]
TERMS = sorted({t for page in PAGES for t in page})


def reference(pages: list[dict[str, int]]) -> MemoryStore:
    store = MemoryStore()
    for i, counts in enumerate(pages):
        store.add_page(SITE, f"u{i}", counts)
    return store


def assert_matches(store: RedisStore, pages: list[dict[str, int]]) -> None:
    want = reference(pages)
    assert store.page_count(SITE) == len(pages)
    got, expected = store.entropy(SITE, TERMS), want.entropy(SITE, TERMS)
    for term in TERMS:
        assert got[term] == pytest.approx(expected[term], abs=TOL), term


def dump(uri: str) -> dict[bytes, object]:
    """Every key of the database with its value (hashes and sets as dicts/sets)."""
    with redis.Redis.from_url(uri) as client:
        out: dict[bytes, object] = {}
        for key in client.keys("*"):
            kind = client.type(key)
            if kind == b"hash":
                out[key] = client.hgetall(key)
            elif kind == b"set":
                out[key] = client.smembers(key)
            else:
                out[key] = client.get(key)
        return out


# ------------------------------------------------------------------------------------------
# A server that goes away and comes back
# ------------------------------------------------------------------------------------------


def test_survives_a_redis_restart(redis_server_factory: Callable[..., Any]) -> None:
    """Stop redis-server mid-use: calls raise StoreError (quickly with retries=0); a call made
    while it restarts succeeds thanks to the retries; afterwards everything works again,
    including the Lua scripts the restarted server no longer has."""
    server = redis_server_factory("--appendonly", "yes", "--appendfsync", "always")
    with RedisStore(server.url) as patient, RedisStore(server.url, retries=0) as impatient:
        for i, counts in enumerate(PAGES[:3]):
            patient.add_page(SITE, f"u{i}", counts)
        server.stop()

        start = time.monotonic()
        with pytest.raises(StoreError) as info:
            impatient.page_count(SITE)
        assert server.url in str(info.value)
        with pytest.raises(StoreError):
            impatient.add_page(SITE, "u3", PAGES[3])
        with pytest.raises(StoreError):
            impatient.entropy(SITE, ["alpha"])
        assert time.monotonic() - start < 2

        restarter = threading.Timer(0.5, server.start)
        restarter.start()
        try:
            assert patient.add_page(SITE, "u3", PAGES[3]) is True  # waits for the restart
        finally:
            restarter.join()
        assert impatient.add_page(SITE, "u4", PAGES[4]) is True
        assert_matches(impatient, PAGES)
        assert_matches(patient, PAGES)


# ------------------------------------------------------------------------------------------
# Atomicity
# ------------------------------------------------------------------------------------------


def test_concurrent_adds_of_one_url_count_once(redis_uri: str) -> None:
    """Threads (each with its own connection) add the same page at the same instant."""
    threads, rounds = 8, 15
    results: list[list[bool]] = [[] for _ in range(rounds)]
    barrier = threading.Barrier(threads)
    with RedisStore(redis_uri) as store:

        def worker() -> None:
            for r in range(rounds):
                barrier.wait()
                results[r].append(store.add_page(SITE, f"u{r}", PAGES[r % len(PAGES)]))

        pool = [threading.Thread(target=worker) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert [sum(r) for r in results] == [1] * rounds  # exactly one writer saw it new
        assert_matches(store, [PAGES[r % len(PAGES)] for r in range(rounds)])


def test_racing_versions_of_one_url_leave_exactly_one(redis_uri: str) -> None:
    """Threads race to store different versions of one URL: the sums are exactly those of the
    version whose record is stored, never a mix."""
    threads, rounds = 6, 20
    versions = [{"shared": 1 + i, f"own{i}": 2 + i, "other": 3} for i in range(threads)]
    barrier = threading.Barrier(threads)
    with RedisStore(redis_uri) as store:
        store.add_page(SITE, "fixed", {"shared": 2, "other": 1})

        def worker(i: int) -> None:
            for _ in range(rounds):
                barrier.wait()
                store.add_page(SITE, "contested", versions[i])

        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        record = store.page_record(SITE, "contested")
        assert record is not None
        digest = decode_page_record(record)[0]
        (winner,) = [v for v in versions if page_digest(v) == digest]
        want = MemoryStore()
        want.add_page(SITE, "fixed", {"shared": 2, "other": 1})
        want.add_page(SITE, "contested", winner)
        terms, tf, s = store.all_term_sums(SITE)
        w_terms, w_tf, w_s = want.all_term_sums(SITE)
        assert dict(zip(terms, tf.tolist(), strict=True)) == dict(
            zip(w_terms, w_tf.tolist(), strict=True)
        )
        got_s = dict(zip(terms, s.tolist(), strict=True))
        for term, value in zip(w_terms, w_s.tolist(), strict=True):
            assert got_s[term] == pytest.approx(value, abs=TOL)
        assert store.page_count(SITE) == 2


def test_a_failing_update_writes_nothing(redis_uri: str) -> None:
    """The script checks everything before its first write: a failure leaves no trace."""
    with RedisStore(redis_uri) as store, redis.Redis.from_url(redis_uri) as client:
        store.add_page(SITE, "u0", PAGES[0], [("https://example.org/a", "A")])
        keys = store._keys(SITE)
        # A foreign value of the wrong type under one of the site's keys.
        client.hdel(keys["links"], "u0")
        client.set(keys["links"], "not a hash")
        before = dump(redis_uri)
        with pytest.raises(StoreError, match="WRONGTYPE"):
            store.add_page(SITE, "u1", {"brand-new": 3, "alpha": 1}, [("https://x/", "x")])
        assert dump(redis_uri) == before
        client.delete(keys["links"])

        # A corrupted (truncated) page record.
        client.hset(keys["pages"], "u2", page_digest({"x": 1}) + b"\x05\x81")
        before = dump(redis_uri)
        with pytest.raises(StoreError, match="truncated"):
            store.add_page(SITE, "u2", {"brand-new": 3})
        assert dump(redis_uri) == before


def test_scripts_are_reloaded_after_script_flush(redis_uri: str) -> None:
    with RedisStore(redis_uri) as store, redis.Redis.from_url(redis_uri) as client:
        store.add_page(SITE, "u0", PAGES[0])
        client.script_flush()
        assert store.add_page(SITE, "u1", PAGES[1]) is True
        client.script_flush()
        assert_matches(store, PAGES[:2])


# ------------------------------------------------------------------------------------------
# Record format and key layout
# ------------------------------------------------------------------------------------------


def test_page_record_format(redis_uri: str, python_doc_pages: list[tuple[str, bytes]]) -> None:
    """The record the Lua script writes is the documented format, compact on a real page."""
    site = "docs.python.org"
    with RedisStore(redis_uri) as store, redis.Redis.from_url(redis_uri) as client:
        for url, html in python_doc_pages[:10]:
            model = PageModel.from_html(html, url)
            counts, links = model.page_counts(), [(lk.url, lk.text) for lk in model.links()]
            store.add_page(site, url, counts, links)
        ids_of = {k.decode(): int(v) for k, v in client.hgetall(store._keys(site)["ids"]).items()}
        url, html = python_doc_pages[9]
        model = PageModel.from_html(html, url)
        counts, links = model.page_counts(), [(lk.url, lk.text) for lk in model.links()]
        record = store.page_record(site, url)
        assert record is not None
        digest, ids, tfs = decode_page_record(record)
        assert digest == page_digest(counts, links)
        assert dict(zip(ids.tolist(), tfs.tolist(), strict=True)) == {
            ids_of[t]: n for t, n in counts.items()
        }
        assert np.all(np.diff(ids) > 0)
        assert record == encode_page_record(digest, ids.tolist(), tfs.tolist())
        # About 1.6 bytes per distinct term on this site, as small as zlib over the id/tf arrays.
        assert len(record) <= 16 + 2 * len(counts)
        assert len(record) - 16 <= 1.1 * len(encode_record(ids, tfs))


def test_record_codec_round_trip() -> None:
    digest = bytes(range(16))
    ids, tfs = [5, 1, 300, 70000, 2**40, 2**40 + 1], [1, 127, 128, 16384, 3, 1]
    record = encode_page_record(digest, ids, tfs)
    got_digest, got_ids, got_tfs = decode_page_record(record)
    assert got_digest == digest
    assert got_ids.tolist() == sorted(ids)
    assert dict(zip(got_ids.tolist(), got_tfs.tolist(), strict=True)) == dict(
        zip(ids, tfs, strict=True)
    )
    assert encode_page_record(digest, [], []) == digest
    for cut in (record[:-2], record[:-1] + b"\x80"):  # tf missing, varint unfinished
        with pytest.raises(ValueError):
            decode_page_record(cut)
    with pytest.raises(ValueError):
        decode_page_record(b"short")


def test_keys_share_a_cluster_slot_and_prefixes_are_apart(redis_uri: str) -> None:
    with (
        RedisStore(redis_uri) as default,
        RedisStore(f"{redis_uri}?prefix=other") as other,
        redis.Redis.from_url(redis_uri) as client,
    ):
        for i, counts in enumerate(PAGES):
            default.add_page(SITE, f"u{i}", counts, [("https://example.org/", "home")])
        other.add_page("b.example", "u0", PAGES[0])
        site_keys = [k for k in client.keys("wisdom:{example.org}:*")]
        assert len(site_keys) == 6
        assert len({key_slot(k) for k in site_keys}) == 1
        assert set(client.keys("wisdom:*")) == {*site_keys, b"wisdom:sites"}
        assert default.sites() == [SITE] and other.sites() == ["b.example"]
        assert other.page_count(SITE) == 0 and default.page_count("b.example") == 0
        # A listed site without pages (e.g. a crash between the two commands) is not a site.
        client.sadd("wisdom:sites", "ghost.example")
        assert default.sites() == [SITE]


# ------------------------------------------------------------------------------------------
# Connecting
# ------------------------------------------------------------------------------------------


def test_password_protected_server(redis_server_factory: Callable[..., Any]) -> None:
    server = redis_server_factory("--requirepass", "s3cret-pw")
    base = f"127.0.0.1:{server.port}/0"
    with open_store(f"redis://:s3cret-pw@{base}") as store:
        store.add_page(SITE, "u0", PAGES[0])
        assert store.page_count(SITE) == 1
        assert "s3cret" not in repr(store)
    for uri in (f"redis://:wrong-pw@{base}", f"redis://{base}", f"redis://{base}?password=qw3rty"):
        with pytest.raises(StoreError) as info:
            open_store(uri)
        message = str(info.value)
        assert base in message
        assert "wrong-pw" not in message and "qw3rty" not in message


def test_unix_socket(redis_server_factory: Callable[..., Any], tmp_path: Path) -> None:
    sock = tmp_path / "redis.sock"
    redis_server_factory("--unixsocket", str(sock), "--unixsocketperm", "700")
    with RedisStore(f"unix://{sock}?db=1&prefix=sock") as store:
        assert store.prefix == "sock"
        for i, counts in enumerate(PAGES):
            store.add_page(SITE, f"u{i}", counts)
        assert_matches(store, PAGES)
