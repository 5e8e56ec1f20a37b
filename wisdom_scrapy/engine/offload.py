"""Page analyses offloaded to worker processes (``WISDOM_WORKERS``), with the items the crawl
process would make: what a job carries and how its answer comes back. The processes are
:mod:`wisdom_scrapy.engine.worker_pool`'s; several crawling processes are
:mod:`wisdom_scrapy.distributed`.

A page's analysis (:func:`~wisdom_scrapy.analysis.page_analysis.analyze_page`) reads, besides the
page, three things of its site's state, all kept by the crawl process's
:class:`~wisdom_scrapy.engine.waits.Extractor`; each :class:`AnalysisJob` carries what it reads of
them, so the worker's analysis is the one the crawl process would make (a test compares them):

* **the entropy snapshot** the extractor picked. A worker keeps the latest of the
  :data:`WORKER_SNAPSHOT_SITES` sites it analysed last; a job carries the snapshot only when
  that worker does not have it (once per worker and re-read, a few dozen times a site, unless
  the crawl goes through more sites at once than a worker keeps).
* **the block repetition**: only the counts of the page's own blocks
  (:class:`~wisdom_scrapy.mining.repetition.PageRepetition`), all the analysis reads.
* **the fetched link targets' terms** (WISDOM's anchor precision index): for each target the
  crawl process has fetched, the ids of its terms that the page also holds (an anchor's terms
  are the page's), into the crawl's term vocabulary (:class:`~wisdom_scrapy.engine.waits.
  TermIndex`); a job carries the vocabulary's terms that worker has not been sent yet.

The worker models the page from its text (:class:`~wisdom_scrapy.engine.waits.PageSource`: as
Scrapy parsed it), analyses it and makes its item; it sends back a :class:`~wisdom_scrapy.
extraction.RemoteAnalysis` (the role, the TOC links the waits read, the item, the redundant
blocks for the report). A worker that dies costs nothing but time: the page goes to a new one
(``wisdom/workers/lost``); should that die too, or a worker hang on the page
(``WISDOM_WORKER_TIMEOUT``: killed, ``wisdom/workers/timed_out``), the page's analysis fails. It
is never analysed in the crawl process instead: a page that kills or hangs a worker would kill
or hang the crawl. Only when workers cannot start at all (``WorkerNotStarted``) is it analysed
here.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from wisdom_scrapy.analysis.annotated import redundant_summary
from wisdom_scrapy.engine.waits import (
    PageSource,
    RemoteAnalysis,
    TermIndex,
    items_from_analysis,
)
from wisdom_scrapy.engine.worker_pool import WorkerHung, WorkerLost, WorkerNotStarted, WorkerPool
from wisdom_scrapy.mining.wisdom import link_targets
from wisdom_scrapy.page.terms import extract_terms

if TYPE_CHECKING:
    from collections.abc import Set as AbstractSet

    from numpy.typing import NDArray

    from wisdom_scrapy.analysis.page_analysis import PageAnalysis
    from wisdom_scrapy.engine.waits import WaitingPage
    from wisdom_scrapy.mining.repetition import BlockRepetition, PageRepetition
    from wisdom_scrapy.page.model import PageModel
    from wisdom_scrapy.store import EntropySnapshot

__all__ = ["WORKER_SNAPSHOT_SITES", "AnalysisJob", "RemoteAnalyzer", "RemoteJob", "analyse_job"]

logger = logging.getLogger(__name__)

#: Sites whose snapshot a worker keeps: the ones it analysed last (a broad crawl has thousands).
#: The crawl process keeps the same list per worker by the same rule (:func:`_keep_recent`)
#: over the same jobs in the same order (a worker takes its jobs in the order they were sent),
#: so it knows which snapshots a worker holds; a site the worker let go is sent its snapshot
#: again.
WORKER_SNAPSHOT_SITES = 16

_V = TypeVar("_V")


def _keep_recent(held: OrderedDict[str, _V], site: str, value: _V) -> None:
    """``held[site] = value``, the most recent, and the least recent past
    :data:`WORKER_SNAPSHOT_SITES` let go."""
    held[site] = value
    held.move_to_end(site)
    while len(held) > WORKER_SNAPSHOT_SITES:
        held.popitem(last=False)


@dataclass(slots=True)
class AnalysisJob:
    """One page's analysis as sent to a worker (module docstring)."""

    site: str
    source: PageSource
    analyze: Callable[..., PageAnalysis]
    #: the snapshot to analyse with: its ``key`` (the worker's is a copy)
    snapshot_key: int
    #: that snapshot, when this worker does not have it yet
    snapshot: EntropySnapshot | None
    #: the vocabulary's terms from the worker's last one on (their ids continue its list)
    names: list[str]
    #: per fetched link target: the ids of its terms the page also holds
    targets: dict[str, NDArray[np.int64]]
    repetition: PageRepetition
    fields: AbstractSet[str]
    report: bool
    #: the site's redundant block paths the report has a sample of, from the worker's last
    #: one on (the report's list only grows)
    known_paths: Sequence[str]


def warm_up() -> None:
    """Run by a new worker before it says it is ready
    (:data:`~wisdom_scrapy.engine.worker_pool.WARM_UP`): the stemmer's import, which the first
    analysis would otherwise pay inside ``WISDOM_WORKER_TIMEOUT``: on a loaded machine a short
    timeout then killed every new worker on its first page, again and again (it took ~1 s of CPU
    while it imported all of nltk; it takes ~30 ms since :mod:`wisdom_scrapy.page.stemmer`, but the
    timeout may be shorter still)."""
    extract_terms("warming up")


def analyse_job(state: dict[str, Any], job: AnalysisJob) -> RemoteAnalysis:
    """A worker's handler (:class:`~wisdom_scrapy.engine.worker_pool.WorkerPool`): the page's
    analysis and item, from the job and what earlier jobs left in ``state``."""
    names: list[str] = state.setdefault("names", [])
    names.extend(job.names)
    snapshots: OrderedDict[str, tuple[int, EntropySnapshot]] = state.setdefault(
        "snapshots", OrderedDict())
    known: set[str] = state.setdefault("paths", {}).setdefault(job.site, set())
    known.update(job.known_paths)
    if job.snapshot is None and job.site not in snapshots:
        raise RuntimeError(f"worker has no snapshot of {job.site}")
    held = (job.snapshot_key, job.snapshot) if job.snapshot is not None else snapshots[job.site]
    _keep_recent(snapshots, job.site, held)
    key, snapshot = held
    if key != job.snapshot_key:
        raise RuntimeError(f"worker has snapshot {key} of {job.site}, job wants "
                           f"{job.snapshot_key}")  # fmt: skip
    targets = {url: frozenset(names[i] for i in ids.tolist()) for url, ids in job.targets.items()}
    url = job.source.url
    model = job.source()
    analysis = job.analyze(None, url, None, site=job.site, model=model, snapshot=snapshot,
                           target_terms=targets.get, repetition=job.repetition)  # fmt: skip
    item = items_from_analysis(analysis, url, model, snapshot, None, job.fields)
    return RemoteAnalysis(
        url=url,
        role=analysis.role,
        title=analysis.title,
        toc_links=analysis.toc_links if analysis.role == "toc" else [],
        item=item,
        redundant=redundant_summary(analysis, known) if job.report else None,
    )


@dataclass(frozen=True, slots=True)
class RemoteJob:
    """A job as the crawl process keeps it until a worker answers: what a worker is sent of it
    (:meth:`RemoteAnalyzer._fill`) depends on the worker."""

    job: AnalysisJob
    snapshot: EntropySnapshot
    #: the site's redundant block paths the report had a sample of (``known_paths`` in full)
    known_paths: Sequence[str]


class _Sent:
    """What the crawl process has sent one worker (since it started)."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.names = 0  # terms of the vocabulary sent
        #: per site, the last one sent, of the sites the worker keeps one of (_keep_recent)
        self.snapshots: OrderedDict[str, EntropySnapshot] = OrderedDict()
        self.known_paths: dict[str, int] = {}  # per site, report paths sent


class RemoteAnalyzer:
    """The crawl process's side (module docstring): builds each page's job for the worker it
    goes to and awaits its analysis. ``count`` receives stat names to increment."""

    def __init__(
        self,
        pool: WorkerPool,
        terms: TermIndex,
        analyze: Callable[..., PageAnalysis],
        fields: AbstractSet[str],
        count: Callable[[str], None] = lambda name: None,
    ) -> None:
        self.pool = pool
        self.terms = terms
        self.analyze = analyze
        self.fields = fields
        self.count = count
        self._sent = [_Sent(pool.generation(i)) for i in range(len(pool))]

    @staticmethod
    def links_of(model: PageModel) -> list[str]:
        """The distinct URLs the page links to: whose terms its job carries."""
        return list(dict.fromkeys(link_targets(model)[1]))

    def job(
        self,
        page: WaitingPage,
        snapshot: EntropySnapshot,
        repetition: BlockRepetition,
        *,
        report: bool,
        known: Sequence[str] = (),
    ) -> RemoteJob | None:
        """The page's job with what its analysis reads of the site now (module docstring), or
        None when it cannot be sent (a page given no :class:`PageSource`, or not fetched in
        this crawl): the caller analyses it here. ``report``: the site report wants the page's
        redundant blocks, but not the samples of the ``known`` paths."""
        page_ids = self.terms.ids(page.url)
        counts = None if page.blocks is None else repetition.page_view(page.url, page.blocks)
        if not isinstance(page.source, PageSource) or page_ids is None or counts is None:
            self.count("wisdom/workers/analysed_here")
            return None
        targets = self._targets(page_ids, page.links or [])
        job = AnalysisJob(page.site, page.source, self.analyze, snapshot.key, None, [], targets,
                          counts, self.fields, report, [])  # fmt: skip
        return RemoteJob(job, snapshot, known)

    async def run(self, job: RemoteJob) -> RemoteAnalysis | None:
        """The job's analysis made by a worker; a worker's exception is raised, as the analysis
        here would. A worker that dies is started again and the job sent once more; should it
        be lost again (:class:`WorkerLost`), or its worker hang on it (:class:`WorkerHung`), it
        is raised: never analysed in the crawl process instead, where a page that kills or
        hangs a worker would do the same to the crawl. None when no worker could even start
        (:class:`WorkerNotStarted`: the page played no part): the caller analyses it here."""
        try:
            return await self._once(job)
        except WorkerHung:
            raise
        except WorkerLost:
            if self.pool.closed:
                raise
        try:
            return await self._once(job)
        except WorkerNotStarted:
            self.count("wisdom/workers/analysed_here")
            return None

    async def _once(self, remote: RemoteJob) -> RemoteAnalysis:
        """One try at the job, counted; a loss logged."""
        job = remote.job
        index = self.pool.pick()  # raises when no worker can be had: closed, cannot start
        try:
            self._fill(index, remote)  # a new process after a loss: it is sent it all
            result: RemoteAnalysis = await asyncio.wrap_future(self.pool.call(index, job))
        except WorkerHung:
            self.count("wisdom/workers/timed_out")
            raise
        except WorkerLost as exc:
            if self.pool.closed:  # the crawl is closing: nothing was lost
                raise
            self.count("wisdom/workers/lost")
            logger.warning("wisdom_scrapy: analysis of %s lost: %s", job.source.url, exc)
            raise
        self.count("wisdom/workers/analysed")
        return result

    def _targets(self, page_ids: NDArray[np.int64], links: list[str]) -> dict[str, Any]:
        targets = {}
        for url in links:
            ids = self.terms.ids(url)
            if ids is not None:
                targets[url] = np.intersect1d(page_ids, ids, assume_unique=True)
        return targets

    def _fill(self, index: int, remote: RemoteJob) -> None:
        """Add to the job what worker ``index`` lacks: vocabulary terms, the snapshot, the
        report's known paths (each list only grows: a worker is sent what it has not had)."""
        job, snapshot = remote.job, remote.snapshot
        sent = self._sent[index]
        if sent.generation != self.pool.generation(index):  # a new process: it knows nothing
            sent = self._sent[index] = _Sent(self.pool.generation(index))
        names = self.terms.vocab
        job.names = names[sent.names:]
        sent.names = len(names)
        known = sent.known_paths.get(job.site, 0)
        job.known_paths = remote.known_paths[known:]  # another job may have sent a longer list
        sent.known_paths[job.site] = max(known, len(remote.known_paths))
        job.snapshot = None if sent.snapshots.get(job.site) is snapshot else snapshot
        _keep_recent(sent.snapshots, job.site, snapshot)
        if job.snapshot is not None:
            self.count("wisdom/workers/snapshots_sent")

    def close(self) -> None:
        self.pool.close()
