"""``redis://host:port/db``: a term-entropy store that several crawler processes share.

Same semantics as :mod:`wisdom_scrapy.store.memory` and :mod:`wisdom_scrapy.store.sqlite` (see
:mod:`wisdom_scrapy.store.base` for the maths): per site and term the sums TF = Σ tf and
S = Σ tf·ln tf, N = number of distinct page URLs, and each page's last counts so that re-feeding
an unchanged page changes nothing and a changed page replaces its old contribution.

URIs: ``redis://[[user]:password@]host:port/db``, ``rediss://…`` (TLS) and
``unix:///path/to/redis.sock?db=N``, with an optional ``?prefix=NAME`` (default ``wisdom``) that
keeps several projects apart in one database. redis-py's own query options (``socket_timeout``,
``health_check_interval``, …) pass through.

Keys (layout version 1). ``P`` is the prefix; the site name sits in a Redis hash tag so that a
cluster keeps all of one site's keys in one slot (``%``, ``{`` and ``}`` in a site name are
percent-escaped in key names)::

    P:sites                 set    every site name ever written (sites() keeps those with pages)
    P:{site}:ids            hash   term -> term id (ids are 1, 2, … and never change)
    P:{site}:meta           hash   next_id -> last term id handed out
    P:{site}:tf             hash   term id -> TF        (HINCRBY; the field goes when TF drops to 0)
    P:{site}:s              hash   term id -> S         (HINCRBYFLOAT)
    P:{site}:pages          hash   url -> page record   (N = HLEN)
    P:{site}:links          hash   url -> base.encode_links blob (absent when the page has none)
    P:{site}:rec:KIND       hash   key -> blob           (TermStore.put_records / records)

Page record: the 16-byte :func:`~wisdom_scrapy.store.base.page_digest` followed by the page's
(term id, tf) pairs sorted by id. Each pair is the unsigned LEB128 varint of 2·gap + (tf > 1),
where gap is the id's difference to the previous id (the first to 0), followed by the varint of
tf only when tf > 1. The script must read the old record to subtract it and Lua has no zlib, so
:func:`~wisdom_scrapy.store.base.encode_record` cannot be used; this format is as small. Over all
530 pages of the Python 3.11 documentation it takes 1.60 bytes per distinct term (median page:
294 terms, 502 bytes with the digest), zlib over base.encode_record's arrays 1.62, plain gap/tf
varint pairs 2.03: gaps between a page's ids are small and 46 % of tfs are 1.
:func:`encode_page_record` and :func:`decode_page_record` are the same format in Python.

Atomicity. :meth:`RedisStore.add_page` is one Lua script (EVALSHA): it compares the digest,
assigns missing term ids, subtracts the old record's contribution and adds the new one (terms
whose tf did not change are not touched), and stores the record and the links. Redis runs a
script in isolation, so concurrent crawlers never see or make half an update. Redis does not roll
a script back, so the script does every read and check (key types, old record decoding) before
its first write; the only failures left after that are the server's own (out of memory).
The site name is added to ``P:sites`` in the same round trip (a pipeline); it is a separate key
(another cluster slot), which is why ``sites()`` checks that a listed site has pages.

Arguments. Terms travel as one blob with their byte lengths, numbers as space-separated decimal
strings (redis-py's per-argument cost would otherwise dominate an update).

Numbers. The new page's tf·ln tf values are computed in Python (the same numpy expression as the
other backends) and passed to the script as ``repr`` (exact); the old record's values are
recomputed in the script with Lua's ``math.log`` (C ``log``), which may differ from numpy's in
the last bit. HINCRBYFLOAT keeps a long double printed with 17 significant digits. Both are far
below the 1e-9 agreement with the other backends that the tests check; when a term's TF drops to
0 its fields are deleted, which resets S exactly.

Failures. Every redis-py error becomes :class:`~wisdom_scrapy.store.base.StoreError` naming the
URI with its password redacted. Opening PINGs the server once, without retries, so a wrong or
dead address fails at once. After that, connection errors and timeouts are retried with
exponential back-off (0.2 s, 0.4 s, … capped at 2 s, ``retries`` times: about 7 s by default), so
a Redis restart during a crawl is survived when the server is back in time. Retrying an
``add_page`` whose reply was lost is safe: the page's digest is then stored, so the retry changes
nothing (and returns False). Scripts are reloaded when the server has forgotten them (NOSCRIPT,
e.g. after a restart).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode

import numpy as np
import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from wisdom_scrapy.store.base import (
    Link,
    StoreError,
    TermStore,
    count_links,
    decode_links,
    encode_links,
    entropy_from_sums,
    page_digest,
    positive_counts,
    redact_uri,
    tf_log_tf,
)

__all__ = ["DEFAULT_PREFIX", "RedisStore", "decode_page_record", "encode_page_record"]

DEFAULT_PREFIX = "wisdom"
DIGEST_SIZE = 16
_PIPELINE = 1000  # commands per pipeline round trip

# Terms travel packed (one blob + their byte lengths) and numbers as one space-separated string:
# redis-py spends ~5 µs per command argument, which is most of an update's time with one argument
# per term. Lua 5.1's unpack() is limited by the C stack (LUAI_MAXCSTACK = 8000), so long lists
# are batched by CHUNK.
_LUA_COMMON = r"""
local CHUNK = 1000
local DIGEST = 16
local function split_terms(blob, lengths)
  local out, pos = {}, 1
  for len in string.gmatch(lengths, '%d+') do
    local stop = pos + tonumber(len)
    out[#out + 1] = string.sub(blob, pos, stop - 1)
    pos = stop
  end
  if pos ~= #blob + 1 then return nil end
  return out
end
local function numbers(text)
  local out = {}
  for x in string.gmatch(text, '%S+') do out[#out + 1] = tonumber(x) end
  return out
end
"""

_ADD_PAGE = (
    _LUA_COMMON
    + r"""
-- KEYS: 1 ids (term -> id), 2 tf (id -> TF), 3 s (id -> S), 4 pages (url -> record),
--       5 links (url -> blob), 6 meta (next_id)
-- ARGV: 1 url, 2 digest, 3 links blob ("" for none), 4 terms (concatenated), 5 their byte
--       lengths, 6 tfs, 7 tf*ln(tf) values (5-7 space-separated decimal numbers)
-- Returns 0 (unchanged: nothing written), 1 (page replaced) or 2 (new page).
for i = 1, 6 do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'hash' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE wisdom store key ' .. KEYS[i] .. ' is a ' .. t)
  end
end
local url, digest, links = ARGV[1], ARGV[2], ARGV[3]
if #digest ~= DIGEST then return redis.error_reply('ERR wisdom add_page: bad digest') end
local old = redis.call('HGET', KEYS[4], url)
if old then
  if #old < DIGEST then
    return redis.error_reply('ERR wisdom page record too short: ' .. url)
  end
  if string.sub(old, 1, DIGEST) == digest then return 0 end
end

local terms, tfs, svals = split_terms(ARGV[4], ARGV[5]), numbers(ARGV[6]), numbers(ARGV[7])
local n = terms and #terms or -1
if #tfs ~= n or #svals ~= n then
  return redis.error_reply('ERR wisdom add_page: bad arguments')
end
for i = 1, n do
  if not tfs[i] or tfs[i] < 1 or tfs[i] % 1 ~= 0 or not svals[i] then
    return redis.error_reply('ERR wisdom add_page: bad arguments')
  end
end

-- Every read and check first: Redis does not roll a script back.
local old_ids, old_tfs = {}, {}
if old then
  local pos, len, id = DIGEST + 1, #old, 0
  local function varint()
    local x, mul = 0, 1
    while true do
      if pos > len then return nil end
      local b = string.byte(old, pos)
      pos = pos + 1
      if b < 128 then return x + b * mul end
      x = x + (b - 128) * mul
      mul = mul * 128
    end
  end
  while pos <= len do
    local v = varint()
    local tf = 1
    if v ~= nil and v % 2 == 1 then tf = varint() end
    if v == nil or tf == nil then
      return redis.error_reply('ERR wisdom page record truncated: ' .. url)
    end
    id = id + (v - v % 2) / 2
    old_ids[#old_ids + 1] = id
    old_tfs[#old_tfs + 1] = tf
  end
end

local ids, missing = {}, {}
for start = 1, n, CHUNK do
  local stop = math.min(n, start + CHUNK - 1)
  local got = redis.call('HMGET', KEYS[1], unpack(terms, start, stop))
  for j = 1, stop - start + 1 do
    if got[j] then
      ids[start + j - 1] = tonumber(got[j])
    else
      missing[#missing + 1] = start + j - 1
    end
  end
end

-- Writes.
if #missing > 0 then
  local first = redis.call('HINCRBY', KEYS[6], 'next_id', #missing) - #missing + 1
  local pairs_ = {}
  for k, i in ipairs(missing) do
    ids[i] = first + k - 1
    pairs_[#pairs_ + 1] = terms[i]
    pairs_[#pairs_ + 1] = ids[i]
    if #pairs_ >= 2 * CHUNK then
      redis.call('HSET', KEYS[1], unpack(pairs_))
      pairs_ = {}
    end
  end
  if #pairs_ > 0 then redis.call('HSET', KEYS[1], unpack(pairs_)) end
end

local dtf, ds = {}, {}
for i = 1, n do
  dtf[ids[i]] = tfs[i]
  ds[ids[i]] = svals[i]
end
for k = 1, #old_ids do
  local id, tf = old_ids[k], old_tfs[k]
  local new = dtf[id]
  if new == tf then
    dtf[id] = 0                       -- same tf as before: leave the sums alone
  else
    dtf[id] = (new or 0) - tf
    ds[id] = (ds[id] or 0) - tf * math.log(tf)
  end
end
for id, d in pairs(dtf) do
  if d ~= 0 then
    if redis.call('HINCRBY', KEYS[2], id, d) <= 0 then
      redis.call('HDEL', KEYS[2], id)
      redis.call('HDEL', KEYS[3], id)
    elseif ds[id] ~= 0 then
      redis.call('HINCRBYFLOAT', KEYS[3], id, ds[id])
    end
  end
end

local order = {}
for i = 1, n do order[i] = i end
table.sort(order, function(a, b) return ids[a] < ids[b] end)
local parts, prev = {digest}, 0
local function put(x)
  local bytes = {}
  while x >= 128 do
    bytes[#bytes + 1] = x % 128 + 128
    x = math.floor(x / 128)
  end
  bytes[#bytes + 1] = x
  parts[#parts + 1] = string.char(unpack(bytes))
end
for _, i in ipairs(order) do
  local tf = tfs[i]
  if tf > 1 then
    put(2 * (ids[i] - prev) + 1)
    put(tf)
  else
    put(2 * (ids[i] - prev))
  end
  prev = ids[i]
end
redis.call('HSET', KEYS[4], url, table.concat(parts))
if links == '' then
  redis.call('HDEL', KEYS[5], url)
else
  redis.call('HSET', KEYS[5], url, links)
end
if old then return 1 end
return 2
"""
)

_TERM_SUMS = (
    _LUA_COMMON
    + r"""
-- KEYS: 1 ids, 2 tf, 3 s, 4 pages; ARGV: 1 terms (concatenated), 2 their byte lengths.
-- Returns {TFs, Ss, N}: TFs and Ss space-separated, 0 for unseen terms.
local terms = split_terms(ARGV[1], ARGV[2])
if not terms then return redis.error_reply('ERR wisdom term_sums: bad arguments') end
local n = #terms
local tf, s = {}, {}
for start = 1, n, CHUNK do
  local stop = math.min(n, start + CHUNK - 1)
  local ids = redis.call('HMGET', KEYS[1], unpack(terms, start, stop))
  for j = 1, stop - start + 1 do
    if not ids[j] then ids[j] = '0' end
  end
  local a = redis.call('HMGET', KEYS[2], unpack(ids))
  local b = redis.call('HMGET', KEYS[3], unpack(ids))
  for j = 1, stop - start + 1 do
    tf[start + j - 1] = a[j] or '0'
    s[start + j - 1] = b[j] or '0'
  end
end
return {table.concat(tf, ' '), table.concat(s, ' '), redis.call('HLEN', KEYS[4])}
"""
)


def _varint(x: int, out: bytearray) -> None:
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)


def encode_page_record(digest: bytes, ids: Sequence[int], tfs: Sequence[int]) -> bytes:
    """The page record the Lua script stores (see the module docstring), built in Python."""
    if len(digest) != DIGEST_SIZE:
        raise ValueError(f"digest must be {DIGEST_SIZE} bytes")
    out = bytearray(digest)
    prev = 0
    for term_id, tf in sorted(zip(ids, tfs, strict=True)):
        gap, tf = int(term_id) - prev, int(tf)
        _varint(2 * gap + (tf > 1), out)
        if tf > 1:
            _varint(tf, out)
        prev = int(term_id)
    return bytes(out)


def decode_page_record(record: bytes) -> tuple[bytes, np.ndarray, np.ndarray]:
    """(digest, term ids, tfs) of a stored page record."""
    if len(record) < DIGEST_SIZE:
        raise ValueError("page record shorter than its digest")
    values: list[int] = []
    x = shift = 0
    for b in record[DIGEST_SIZE:]:
        x |= (b & 0x7F) << shift
        if b < 0x80:
            values.append(x)
            x = shift = 0
        else:
            shift += 7
    if shift:
        raise ValueError("truncated page record")
    ids: list[int] = []
    tfs: list[int] = []
    term_id = 0
    it = iter(values)
    for v in it:
        term_id += v >> 1
        tf = next(it, None) if v & 1 else 1
        if tf is None:
            raise ValueError("truncated page record")
        ids.append(term_id)
        tfs.append(tf)
    return record[:DIGEST_SIZE], np.asarray(ids, np.int64), np.asarray(tfs, np.int64)


def _split_prefix(uri: str) -> tuple[str, str]:
    """(URI for redis-py without ``prefix``, key prefix)."""
    # Split by hand: urlunsplit() would turn unix:///path into unix:/path.
    head, _, query_text = uri.partition("?")
    query = parse_qsl(query_text, keep_blank_values=True)
    prefix = DEFAULT_PREFIX
    rest = []
    for name, value in query:
        if name == "prefix":
            prefix = value
        else:
            rest.append((name, value))
    if not prefix or "{" in prefix or "}" in prefix:
        raise StoreError(
            f"bad prefix {prefix!r} in Redis store URI {redact_uri(uri)!r}: "
            "it must be non-empty and contain no braces"
        )
    return (f"{head}?{urlencode(rest)}" if rest else head), prefix


def _pack_terms(terms: Sequence[str]) -> list[bytes | str]:
    """Terms as two script arguments: their UTF-8 concatenated and their byte lengths."""
    encoded = [t.encode() for t in terms]
    return [b"".join(encoded), " ".join(str(len(e)) for e in encoded)]


def _key_part(site: str) -> str:
    return site.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")


class RedisStore(TermStore):
    """Term-entropy store in a Redis database (see the module docstring).

    ``retries`` connection failures or timeouts in a row are retried with back-off before a call
    raises :class:`StoreError`; ``socket_timeout`` bounds one reply, ``connect_timeout`` one
    connection attempt (seconds).
    """

    def __init__(
        self,
        uri: str,
        *,
        retries: int = 6,
        socket_timeout: float = 10.0,
        connect_timeout: float = 5.0,
    ) -> None:
        self.uri = uri
        self._shown = redact_uri(uri)
        client_uri, self.prefix = _split_prefix(uri)
        try:
            self._client = redis.Redis.from_url(
                client_uri,
                socket_timeout=socket_timeout,
                socket_connect_timeout=connect_timeout,
                retry=Retry(NoBackoff(), 0),
            )
        except (ValueError, TypeError, RedisError) as exc:
            raise StoreError(f"bad Redis store URI {self._shown!r}: {exc}") from exc
        try:
            self._client.ping()
        except RedisError as exc:
            self._client.close()
            raise StoreError(f"cannot reach the Redis store {self._shown!r}: {exc}") from exc
        self._client.set_retry(
            Retry(
                ExponentialBackoff(cap=2.0, base=0.1),
                retries,
                supported_errors=(RedisConnectionError, RedisTimeoutError, OSError),
            )
        )
        self._add_script = self._client.register_script(_ADD_PAGE)
        self._sums_script = self._client.register_script(_TERM_SUMS)
        self._sites_key = f"{self.prefix}:sites"

    # -- helpers ---------------------------------------------------------------------------

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except RedisError as exc:
            raise StoreError(f"Redis store {self._shown!r}: {what} failed: {exc}") from exc

    def _keys(self, site: str) -> dict[str, str]:
        tag = f"{self.prefix}:{{{_key_part(site)}}}"
        return {name: f"{tag}:{name}" for name in ("ids", "tf", "s", "pages", "links", "meta")}

    def _term_sums_n(self, site: str, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
        """(TF, S, N) in one round trip, read atomically by a script."""
        k = self._keys(site)
        with self._errors("term_sums"):
            tf_raw, s_raw, n = self._sums_script(
                keys=[k["ids"], k["tf"], k["s"], k["pages"]], args=_pack_terms(terms)
            )
        tf = np.array(tf_raw.split(), dtype=np.float64)
        s = np.array(s_raw.split(), dtype=np.float64)
        return tf, s, int(n)

    # -- TermStore -------------------------------------------------------------------------

    def add_page(
        self,
        site: str,
        url: str,
        counts: Mapping[str, int],
        links: Sequence[tuple[str, str]] = (),
    ) -> bool:
        digest = page_digest(counts, links)
        terms, tfs = positive_counts(counts)
        s = tf_log_tf(tfs)
        k = self._keys(site)
        keys = [k["ids"], k["tf"], k["s"], k["pages"], k["links"], k["meta"]]
        args = [
            url,
            digest,
            encode_links(links) if links else b"",
            *_pack_terms(terms),
            " ".join(map(str, tfs.tolist())),
            " ".join(map(repr, s.tolist())),
        ]
        with self._errors("add_page"):
            for attempt in (1, 2):
                with self._client.pipeline(transaction=False) as pipe:
                    pipe.sadd(self._sites_key, site)
                    pipe.evalsha(self._add_script.sha, len(keys), *keys, *args)
                    try:
                        _, result = pipe.execute()
                    except NoScriptError:
                        # The server forgot the script (restart, SCRIPT FLUSH): load it, retry.
                        if attempt == 2:
                            raise
                        self._add_script.sha = self._client.script_load(_ADD_PAGE)
                        continue
                return int(result) != 0
        raise AssertionError("unreachable")  # pragma: no cover

    def term_sums(self, site: str, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        if not terms:
            return np.zeros(0, np.float64), np.zeros(0, np.float64)
        tf, s, _ = self._term_sums_n(site, terms)
        return tf, s

    def entropy(self, site: str, terms: Iterable[str]) -> dict[str, float]:
        """EN of each term; sums and N come from one script call (one round trip, consistent)."""
        unique = list(dict.fromkeys(terms))
        if not unique:
            return {}
        tf, s, n = self._term_sums_n(site, unique)
        return dict(zip(unique, entropy_from_sums(tf, s, n).tolist(), strict=True))

    def all_term_sums(self, site: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        k = self._keys(site)
        with self._errors("all_term_sums"), self._client.pipeline(transaction=True) as pipe:
            pipe.hgetall(k["ids"])
            pipe.hgetall(k["tf"])
            pipe.hgetall(k["s"])
            ids, tf_map, s_map = pipe.execute()
        names = {v: t for t, v in ids.items()}
        terms = [names[i].decode() for i in tf_map]
        tf = np.array([float(v) for v in tf_map.values()], dtype=np.float64)
        s = np.array([float(s_map.get(i, 0.0)) for i in tf_map], dtype=np.float64)
        return terms, tf, s

    def page_count(self, site: str) -> int:
        with self._errors("page_count"):
            return int(self._client.hlen(self._keys(site)["pages"]))

    def links(self, site: str) -> dict[str, list[Link]]:
        return {url.decode(): decode_links(blob) for url, blob in self._link_blobs(site)}

    def link_count(self, site: str) -> int:
        return sum(count_links(blob) for _, blob in self._link_blobs(site))

    def _link_blobs(self, site: str) -> list[tuple[bytes, bytes | None]]:
        """Each stored page's URL with its links' blob (None: stored without links)."""
        k = self._keys(site)
        with self._errors("links"), self._client.pipeline(transaction=True) as pipe:
            pipe.hkeys(k["pages"])
            pipe.hgetall(k["links"])
            urls, blobs = pipe.execute()
        return [(url, blobs.get(url)) for url in urls]

    def page_terms(self, site: str,
                   urls: Sequence[str] | None = None) -> dict[str, list[str]]:
        k = self._keys(site)
        with self._errors("page_terms"), self._client.pipeline(transaction=True) as pipe:
            if urls is None:
                pipe.hgetall(k["pages"])
            else:
                pipe.hmget(k["pages"], list(urls) or [""])
            pipe.hgetall(k["ids"])  # term -> id: no reverse map is kept
            records, ids = pipe.execute()
        if urls is not None:
            records = dict(zip(urls, records, strict=False))
        names = {int(v): t.decode() for t, v in ids.items()}
        return {url if isinstance(url, str) else url.decode():
                [names[i] for i in decode_page_record(record)[1].tolist()]
                for url, record in records.items() if record is not None}

    def sites(self) -> list[str]:
        with self._errors("sites"):
            members = cast("set[bytes]", self._client.smembers(self._sites_key))
            names = sorted(m.decode() for m in members)
            with self._client.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.hlen(self._keys(name)["pages"])
                sizes = pipe.execute()
        return [name for name, size in zip(names, sizes, strict=True) if size]

    def missing_pages(self, site: str, urls: Iterable[str]) -> list[str]:
        wanted = list(urls)
        key = self._keys(site)["pages"]
        found: list[bool] = []
        with self._errors("missing_pages"):
            for i in range(0, len(wanted), _PIPELINE):
                with self._client.pipeline(transaction=False) as pipe:
                    for url in wanted[i : i + _PIPELINE]:
                        pipe.hexists(key, url)
                    found.extend(pipe.execute())
        return [url for url, there in zip(wanted, found, strict=True) if not there]

    def persistence_warning(self) -> str | None:
        """Set when the server keeps no snapshot (``save ""``) and no append-only file: a
        restart empties it without any call failing. None when it persists or when CONFIG is
        not allowed (managed services), which says nothing either way."""
        try:
            config = cast("dict[str, str]", self._client.config_get("save"))
            config.update(cast("dict[str, str]", self._client.config_get("appendonly")))
        except RedisError:
            return None
        if config.get("save", "x").strip() or config.get("appendonly") != "no":
            return None
        return (f"Redis store {self._shown!r} persists nothing (save '', appendonly no): "
                "a restart of the server empties it")

    def _records_key(self, site: str, kind: str) -> str:
        return f"{self.prefix}:{{{_key_part(site)}}}:rec:{_key_part(kind)}"

    def put_records(self, site: str, kind: str, records: Mapping[str, bytes]) -> None:
        if not records:
            return
        with self._errors("put_records"):
            # One HSET: atomic, and retrying it after a lost reply writes the same values.
            mapping = cast("dict[Any, Any]", dict(records))
            self._client.hset(self._records_key(site, kind), mapping=mapping)

    def records(self, site: str, kind: str) -> dict[str, bytes]:
        with self._errors("records"):
            got = cast("dict[bytes, bytes]", self._client.hgetall(self._records_key(site, kind)))
        return {key.decode(): value for key, value in got.items()}

    def record(self, site: str, kind: str, key: str) -> bytes | None:
        with self._errors("record"):
            return cast("bytes | None", self._client.hget(self._records_key(site, kind), key))

    def page_record(self, site: str, url: str) -> bytes | None:
        """The stored record of one page (digest + varint pairs), for inspection and tests."""
        with self._errors("page_record"):
            return cast("bytes | None", self._client.hget(self._keys(site)["pages"], url))

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> RedisStore:
        return self
