"""Several Scrapy processes crawling one site: scrapy-redis's frontier, made crash-safe and
end-aware for wisdom_scrapy. (One crawl's worker processes are
:mod:`wisdom_scrapy.engine.worker_pool`'s.)

A distributed crawl is scrapy-redis's shared frontier (a Redis sorted set, so the priorities the
focusing middleware gives carry across workers, and a Redis set of request fingerprints) plus
the shared Redis term-entropy store (``WISDOM_STORE_URI = "redis://…"``)::

    SCHEDULER = "wisdom_scrapy.distributed.RedisScheduler"
    DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
    REDIS_URL = "redis://127.0.0.1:6379/1"
    WISDOM_STORE_URI = "redis://127.0.0.1:6379/0"

Every worker runs the same ``scrapy crawl``; the spider seeds with its ``async def start()``
(the first worker's start requests are queued, the others' are dupe-filtered).

:class:`RedisScheduler` is ``scrapy_redis.scheduler.Scheduler`` (0.9.1) with what it lacks on
Scrapy 2.19 and for a crawl that must end with one site-level analysis:

* **Process-local requests.** Requests whose callback is not a spider method (wisdom_scrapy's
  request that emits late items at spider idle) cannot be pickled into the shared queue: plain
  scrapy-redis fails at idle with ``ValueError: Function <bound method
  WisdomRuntime._late_items …> is not an instance method in: <SiteSpider …>`` and the held items
  are lost. They stay in a local queue, served first (``wisdom/distributed/local_requests``).
* **Crash safety.** A popped request moves, atomically, from the queue into the worker's
  in-flight set, and leaves it once the spider's output for its response has gone through
  every spider middleware (:class:`DistributedMiddleware`: the page is stored and the requests
  it led to are queued, each marked seen and queued in one script), or when the worker goes
  idle (then everything it popped is done). A worker whose heartbeat key has expired
  (``WISDOM_WORKER_TIMEOUT``) is dead: the next worker to go idle puts its in-flight requests
  back in the queue (``wisdom/distributed/recovered``).
  A page fetched again that way changes nothing in the store (its digest is stored).
* **The end of the crawl.** scrapy-redis closes a worker as soon as the queue is empty, and its
  close flushes the shared fingerprints and queue under workers still running. Here a worker
  whose queue is empty waits (``DontCloseSpider``) while another worker is busy (it popped a
  request since it last went idle, or has not been idle yet); the crawl is finished when the
  queue is empty and no live worker is busy, and only the last worker to close flushes the
  shared keys (unless ``SCHEDULER_PERSIST``).
* **One finaliser.** The first worker to see the crawl finished takes the finaliser lock (a
  Redis key); ``WisdomRuntime.may_finalise()`` is True in that worker only, so site-level work
  (the site structure, the sitemap) runs once for the whole crawl. A finaliser that dies before
  closing loses the lock to the next worker that goes idle; the last worker to close removes
  it, so the next crawl on the same keys has a finaliser of its own.
* **Fewer round trips.** scrapy-redis asks Redis about every request the spider yields (one
  SADD each: ~300 per page of the Python documentation, whose pages repeat their navigation
  links); each worker remembers the fingerprints it has met, so a link costs a round trip once
  per worker.
* Stats are counted without the ``spider`` argument Scrapy 2.19 deprecates, and Scrapy's own
  ``DUPEFILTER_CLASS`` (per process; scrapy-redis 0.9.1 fails on it) becomes scrapy-redis's.

Only scrapy-redis's ``PriorityQueue`` (its default) is supported. The coordination keys are
named after the queue key (``<spider>:requests:workers``, ``…:busy``, ``…:alive:<id>``,
``…:inflight:<id>``, ``…:finaliser``); the scripts build key names, so one Redis server (not a
cluster) holds the frontier.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.dupefilters import RFPDupeFilter as ScrapyDupeFilter
from scrapy.exceptions import DontCloseSpider, NotConfigured
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.misc import load_object

try:
    from scrapy_redis.dupefilter import RFPDupeFilter as SharedDupeFilter
    from scrapy_redis.queue import PriorityQueue
    from scrapy_redis.scheduler import Scheduler
except ModuleNotFoundError as exc:  # scrapy-redis (and redis-py) are the distributed extra
    if exc.name not in ("scrapy_redis", "redis"):
        raise
    raise ModuleNotFoundError(
        f"wisdom_scrapy.distributed needs {exc.name}, an optional dependency:"
        " pip install 'wisdom_scrapy[distributed]'",
        name=exc.name,
    ) from exc

from wisdom_scrapy.settings import WisdomSettings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

__all__ = ["DistributedMiddleware", "RedisScheduler"]

logger = logging.getLogger(__name__)

SHARED_DUPEFILTER = "scrapy_redis.dupefilter.RFPDupeFilter"
# States of the crawl as a worker at idle sees them (returned by _SETTLE).
WORK_QUEUED, OTHERS_BUSY, FINISHED, FINALISER = 0, 1, 2, 3

_POP = r"""
-- KEYS: 1 queue, 2 this worker's in-flight, 3 busy; ARGV: 1 worker id
local top = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #top == 0 then return false end
redis.call('ZREM', KEYS[1], top[1])
redis.call('ZADD', KEYS[2], top[2], top[1])
redis.call('SADD', KEYS[3], ARGV[1])
return top[1]
"""

_ENQUEUE = r"""
-- KEYS: 1 the shared fingerprints, 2 queue; ARGV: 1 fingerprint ('': not filtered), 2 score,
-- 3 request. Marked seen and queued at once: a worker killed between the two would leave a
-- link seen and never queued (its page, fetched again, would not queue it). 0: seen before.
if ARGV[1] ~= '' and redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""

_RECOVER = r"""
local function recover(workers, busy, queue, lock, base)
  local n = 0
  for _, w in ipairs(redis.call('SMEMBERS', workers)) do
    if redis.call('EXISTS', base .. ':alive:' .. w) == 0 then
      local inflight = base .. ':inflight:' .. w
      local items = redis.call('ZRANGE', inflight, 0, -1, 'WITHSCORES')
      for i = 1, #items, 2 do redis.call('ZADD', queue, items[i + 1], items[i]) end
      n = n + #items / 2
      redis.call('DEL', inflight)
      redis.call('SREM', workers, w)
      redis.call('SREM', busy, w)
      if redis.call('GET', lock) == w then redis.call('DEL', lock) end
    end
  end
  return n
end
"""

_SETTLE = (
    _RECOVER
    + r"""
-- A worker went idle. KEYS: 1 workers, 2 busy, 3 queue, 4 finaliser lock
-- ARGV: 1 key base, 2 worker id, 3 heartbeat ttl (ms). Returns {state, recovered}.
local base, me = ARGV[1], ARGV[2]
redis.call('SET', base .. ':alive:' .. me, '1', 'PX', ARGV[3])
redis.call('SADD', KEYS[1], me)
redis.call('SREM', KEYS[2], me)
redis.call('DEL', base .. ':inflight:' .. me)
local n = recover(KEYS[1], KEYS[2], KEYS[3], KEYS[4], base)
if redis.call('ZCARD', KEYS[3]) > 0 then return {0, n} end
if redis.call('SCARD', KEYS[2]) > 0 then return {1, n} end
local holder = redis.call('GET', KEYS[4])
if not holder then
  redis.call('SET', KEYS[4], me)
  return {3, n}
end
if holder == me then return {3, n} end
return {2, n}
"""
)

_LEAVE = (
    _RECOVER
    + r"""
-- A worker closes. KEYS: 1 workers, 2 busy, 3 queue, 4 finaliser lock
-- ARGV: 1 key base, 2 worker id. Its in-flight requests go back to the queue.
-- Returns the number of live workers left.
local base, me = ARGV[1], ARGV[2]
local inflight = base .. ':inflight:' .. me
local items = redis.call('ZRANGE', inflight, 0, -1, 'WITHSCORES')
for i = 1, #items, 2 do redis.call('ZADD', KEYS[3], items[i + 1], items[i]) end
redis.call('DEL', inflight, base .. ':alive:' .. me)
redis.call('SREM', KEYS[1], me)
redis.call('SREM', KEYS[2], me)
recover(KEYS[1], KEYS[2], KEYS[3], KEYS[4], base)
local left = redis.call('SCARD', KEYS[1])
if left == 0 then redis.call('DEL', KEYS[4]) end  -- the next crawl gets its own finaliser
return left
"""
)


def _shared_dupefilter(settings: BaseSettings) -> BaseSettings:
    """Settings whose ``DUPEFILTER_CLASS`` is shared by the workers.

    Scrapy's default filter keeps fingerprints in one process (and scrapy-redis 0.9.1 fails on
    it with ``AttributeError: type object 'RFPDupeFilter' has no attribute 'from_settings'``,
    Scrapy 2.19 removed it): it becomes scrapy-redis's. Any other class must be one scrapy-redis
    can build per spider (``from_spider``), else the crawl stops with an error naming it.
    """
    name = settings.get("DUPEFILTER_CLASS")
    dupefilter = load_object(name)
    if hasattr(dupefilter, "from_spider"):
        return settings
    if dupefilter is not ScrapyDupeFilter:
        raise NotConfigured(
            f"DUPEFILTER_CLASS={name!r} keeps fingerprints in one process: a distributed crawl "
            f"needs a shared one, e.g. {SHARED_DUPEFILTER!r}"
        )
    shared = settings.copy()
    shared.frozen = False  # the crawler's settings are frozen; this copy is the scheduler's
    shared.set("DUPEFILTER_CLASS", SHARED_DUPEFILTER, priority=settings.getpriority(
        "DUPEFILTER_CLASS") or 0)
    return shared


class RedisScheduler(Scheduler):
    """scrapy-redis's scheduler with local requests, crash safety, a coordinated end and a
    finaliser lock (module docstring)."""

    #: Marks a scheduler that needs :class:`DistributedMiddleware` (the add-on inserts it).
    wisdom_distributed = True
    crawler: Crawler
    worker_timeout: float
    worker: str
    local: deque[Request]
    popped: dict[Request, bytes]
    fingerprints: set[str]
    state: int  # what the last settle() found
    closed: bool

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisScheduler:
        instance: RedisScheduler = cls.from_settings(_shared_dupefilter(crawler.settings))
        instance.stats = crawler.stats
        instance.crawler = crawler
        instance.worker_timeout = WisdomSettings.for_crawl(crawler.settings).worker_timeout
        instance.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        instance.local = deque()
        instance.popped = {}
        instance.fingerprints = set()
        instance.state = OTHERS_BUSY
        instance.closed = False
        crawler.signals.connect(instance.on_idle, signal=signals.spider_idle)
        return instance

    # -- scrapy-redis hooks --------------------------------------------------------------------

    def open(self, spider: Spider) -> None:
        super().open(spider)
        if not isinstance(self.queue, PriorityQueue):
            raise NotConfigured(
                f"SCHEDULER_QUEUE_CLASS={self.queue_cls!r}: wisdom_scrapy.distributed."
                "RedisScheduler needs scrapy_redis.queue.PriorityQueue (the default)"
            )
        base = self.queue.key
        self.keys = [f"{base}:workers", f"{base}:busy", base, f"{base}:finaliser"]
        self.base = base
        self.inflight_key = f"{base}:inflight:{self.worker}"
        self.pop_script = self.server.register_script(_POP)
        self.enqueue_script = self.server.register_script(_ENQUEUE)
        self.settle_script = self.server.register_script(_SETTLE)
        self.leave_script = self.server.register_script(_LEAVE)
        # busy until its first idle: a worker that has not queued its start requests yet must
        # keep the others from declaring the crawl finished
        self.server.sadd(self.keys[1], self.worker)
        self._beat()
        self.heartbeat = create_looping_call(self._beat)
        self.heartbeat.start(self.worker_timeout / 4, now=False)
        logger.info("wisdom_scrapy: distributed worker %s on queue %r", self.worker, base)

    def close(self, reason: str) -> None:
        self.closed = True
        if self.heartbeat.running:
            self.heartbeat.stop()
        left = int(self.leave_script(keys=self.keys, args=[self.base, self.worker]))
        if not self.persist and left == 0:  # the last worker: the crawl's state goes
            self.flush()
            self.server.delete(*self.keys)

    def enqueue_request(self, request: Request) -> bool:
        fingerprint = None if request.dont_filter else self.df.request_fingerprint(request)
        # a fingerprint in the shared set stays there for the crawl: the ones this worker has
        # met are seen without a round trip (a page's template links repeat on every page)
        if fingerprint is not None and fingerprint in self.fingerprints:
            self.df.log(request, self.spider)
            return False
        try:
            data = self.queue._encode_request(request)
        except ValueError:  # the callback is not a spider method: this process's own work
            data = None
        if fingerprint is not None:
            self.fingerprints.add(fingerprint)
        if not self._queue_shared(request, fingerprint, data):
            self.df.log(request, self.spider)
            return False
        return True

    def _queue_shared(self, request: Request, fingerprint: str | None, data: bytes | None
                      ) -> bool:
        """Mark ``request`` seen in the shared dupefilter (unless it is not filtered) and queue
        it: in Redis, with scrapy-redis's own dupefilter in one script (nothing lost between
        the two); in this process when it cannot be pickled (``data`` None). False: seen."""
        if data is not None and type(self.df) is SharedDupeFilter:
            queued = self.enqueue_script(keys=[self.df.key, self.queue.key],
                                         args=[fingerprint or "", -request.priority, data])
            if queued:
                self._inc("scheduler/enqueued/redis")
            return bool(queued)
        if fingerprint is not None and self.df.request_seen(request):
            return False
        if data is None:
            self.local.append(request)
            self._inc("wisdom/distributed/local_requests")
        else:
            self.server.execute_command("ZADD", self.queue.key, -request.priority, data)
            self._inc("scheduler/enqueued/redis")
        return True

    def next_request(self) -> Request | None:
        if self.local:
            return self.local.popleft()
        data = self.pop_script(keys=[self.queue.key, self.inflight_key, self.keys[1]],
                               args=[self.worker])
        if not data:
            return None
        request: Request = self.queue._decode_request(data)
        self.popped[request] = data
        self._inc("scheduler/dequeued/redis")
        return request

    def has_pending_requests(self) -> bool:
        return bool(self.local) or len(self.queue) > 0

    def __len__(self) -> int:
        return len(self.local) + len(self.queue)

    # -- coordination --------------------------------------------------------------------------

    def done(self, request: Request) -> None:
        """The spider's output for ``request``'s response has been handled: off the in-flight
        set (a redirected or retried request is a new one, and leaves it at idle)."""
        data = self.popped.pop(request, None)
        if data is not None:
            self.server.zrem(self.inflight_key, data)

    def settle(self) -> int:
        """This worker is idle: recover dead workers' requests, then the crawl's state
        (``WORK_QUEUED``, ``OTHERS_BUSY``, ``FINISHED`` or ``FINALISER``)."""
        self.popped.clear()  # the engine is idle: every request this worker popped is done
        state, recovered = self.settle_script(
            keys=self.keys, args=[self.base, self.worker, int(self.worker_timeout * 1000)]
        )
        self.state = int(state)
        if recovered:
            self._inc("wisdom/distributed/recovered", int(recovered))
            logger.warning(
                "wisdom_scrapy: %d request(s) of dead workers put back in the queue", recovered
            )
        return self.state

    def may_finalise(self) -> bool:
        """True in the finaliser once the crawl is finished (``WisdomRuntime.may_finalise``);
        after the scheduler closed (spider_closed handlers), what its last idle found."""
        if self.closed:
            return self.state == FINALISER
        return self.settle() == FINALISER

    def on_idle(self) -> None:
        """Keep the worker open while the crawl goes on elsewhere (spider_idle)."""
        if self.settle() in (WORK_QUEUED, OTHERS_BUSY):
            raise DontCloseSpider("wisdom_scrapy: other workers are still crawling")

    def _beat(self) -> None:
        with self.server.pipeline(transaction=False) as pipe:
            pipe.set(f"{self.base}:alive:{self.worker}", "1", px=int(self.worker_timeout * 1000))
            pipe.sadd(self.keys[0], self.worker)
            pipe.execute()

    def _inc(self, name: str, n: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(name, n)


class DistributedMiddleware:
    """Spider middleware, nearest the engine: once the spider's output for a response has gone
    through every other spider middleware (the page stored, its requests queued), the request
    leaves the worker's in-flight set. Does nothing without :class:`RedisScheduler`.

    It schedules the output's requests itself, as they come, instead of passing them on: Scrapy
    puts a response's output in a queue of its own (up to twice ``CONCURRENT_ITEMS`` objects)
    and schedules the requests from there later, behind items waiting for the item pipelines.
    Passed on, they would still be in this process's memory when the page leaves the in-flight
    set, and a worker killed then would lose them for the whole crawl (the page is fetched,
    its links are never queued). So it must stay the last spider middleware on the way out
    (the lowest order, 5): one below it would not see the requests.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DistributedMiddleware:
        return cls(crawler)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        engine = self.crawler.engine
        scheduler = engine.scheduler if engine is not None else None
        if not isinstance(scheduler, RedisScheduler):
            async for obj in result:
                yield obj
            return
        async for obj in result:
            if isinstance(obj, Request):
                engine.crawl(obj)  # what Scrapy's scraper does with it, done now
            else:
                yield obj
        if response.request is not None:
            scheduler.done(response.request)
