"""``memory://``: a store in the process's memory, for tests, one-off analyses and saved pages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from wisdom_scrapy.store.base import Link, TermChanges, TermStore, page_digest, tf_log_tf

__all__ = ["MemoryStore"]


@dataclass
class _Site:
    tf: dict[str, int] = field(default_factory=dict)
    s: dict[str, float] = field(default_factory=dict)
    # url -> (digest, counts, links)
    pages: dict[str, tuple[bytes, dict[str, int], list[Link]]] = field(default_factory=dict)
    #: the site's change version (one up per page stored) and each term's last change's
    version: int = 0
    changed: dict[str, int] = field(default_factory=dict)


class MemoryStore(TermStore):
    """Same semantics as the persistent stores; gone when the process ends."""

    def __init__(self, uri: str = "memory://") -> None:
        self.uri = uri
        self._sites: dict[str, _Site] = {}
        self._records: dict[tuple[str, str], dict[str, bytes]] = {}

    def add_page(
        self,
        site: str,
        url: str,
        counts: Mapping[str, int],
        links: Sequence[tuple[str, str]] = (),
    ) -> bool:
        digest = page_digest(counts, links)
        data = self._sites.setdefault(site, _Site())
        old = data.pages.get(url)
        if old is not None and old[0] == digest:
            return False
        data.version += 1
        if old is not None:
            self._apply(data, old[1], -1)
        new = {t: int(n) for t, n in counts.items() if n > 0}
        self._apply(data, new, +1)
        data.pages[url] = (digest, new, [Link(u, t) for u, t in links])
        return True

    @staticmethod
    def _apply(data: _Site, counts: Mapping[str, int], sign: int) -> None:
        terms = list(counts)
        tfs = np.fromiter(counts.values(), dtype=np.int64, count=len(terms))
        for term, n, s in zip(terms, tfs.tolist(), tf_log_tf(tfs).tolist(), strict=True):
            data.tf[term] = data.tf.get(term, 0) + sign * n
            data.s[term] = data.s.get(term, 0.0) + sign * s
            data.changed[term] = data.version

    def term_sums(self, site: str, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        data = self._sites.get(site, _Site())
        tf = np.fromiter((data.tf.get(t, 0) for t in terms), dtype=np.float64, count=len(terms))
        s = np.fromiter((data.s.get(t, 0.0) for t in terms), dtype=np.float64, count=len(terms))
        return tf, s

    def all_term_sums(self, site: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        # Only live terms (TF > 0), like the other backends: a replaced page can leave TF = 0.
        terms = [t for t, n in self._sites.get(site, _Site()).tf.items() if n > 0]
        return (terms, *self.term_sums(site, terms))

    def term_changes(self, site: str, since: int | None) -> TermChanges:
        data = self._sites.get(site, _Site())
        if since is None or since > data.version:
            return TermChanges(data.version, self.page_count(site), *self.all_term_sums(site),
                               full=True)
        terms = [t for t, version in data.changed.items() if version > since]
        return TermChanges(data.version, self.page_count(site), terms,
                           *self.term_sums(site, terms), full=False)

    def page_count(self, site: str) -> int:
        data = self._sites.get(site)
        return len(data.pages) if data else 0

    def links(self, site: str) -> dict[str, list[Link]]:
        data = self._sites.get(site, _Site())
        return {url: list(page[2]) for url, page in data.pages.items()}

    def page_terms(self, site: str,
                   urls: Sequence[str] | None = None) -> dict[str, list[str]]:
        pages = self._sites.get(site, _Site()).pages
        wanted = pages if urls is None else [url for url in urls if url in pages]
        return {url: list(pages[url][1]) for url in wanted}

    def sites(self) -> list[str]:
        return [name for name, data in self._sites.items() if data.pages]

    def put_records(self, site: str, kind: str, records: Mapping[str, bytes]) -> None:
        self._records.setdefault((site, kind), {}).update(
            (key, bytes(value)) for key, value in records.items()
        )

    def records(self, site: str, kind: str) -> dict[str, bytes]:
        return dict(self._records.get((site, kind), {}))

    def record(self, site: str, kind: str, key: str) -> bytes | None:
        return self._records.get((site, kind), {}).get(key)
