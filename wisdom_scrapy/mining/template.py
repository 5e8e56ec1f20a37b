"""Template-based cleaning (Bar-Yossef & Rajagopalan; Lan Yi's thesis §3.3): the baseline.

1. **Pagelets.** An element is a pagelet if none of its children contains at least ``k``
   hyperlinks and none of its ancestors is a pagelet (k = 3, the value of the paper and of the
   thesis's §5.3). Vectorised over the page model: the largest ``n_anchors`` among each node's
   children, then the top-most nodes whose children all stay under k (:func:`pagelets`).
2. **Fingerprints.** A pagelet's content is fingerprinted by a shingle (Broder): the minimum
   of the hashes of its 4-term shingles (a min-hash, so near-identical pagelets share it with
   probability equal to their resemblance), or the hash of the whole term sequence when it is
   shorter than one shingle. Term hashes are CRC-32 of the term, stable across processes, so
   fingerprints can be stored and shared.
3. **Local template detection.** The paper's local algorithm for a small document set: a
   fingerprint occurring in pagelets of at least two distinct pages is a template
   (:class:`TemplateDetector`). Two is the definition (a template is a *repeated* pagelet), not
   a tuned number. Cleaning a page drops its template pagelets; everything else stays.

The detector is built incrementally from a site's pages, as the crawl fetches them, and keeps
only a count of pages per fingerprint (8 + 8 bytes per distinct pagelet).
"""

from __future__ import annotations

import io
import json
import zlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = ["TemplateDetector", "fingerprints", "pagelets"]

SHINGLE = 4
_MIX = np.uint64(0x9E3779B97F4A7C15)


def pagelets(model: PageModel, k: int = 3) -> NDArray[np.int64]:
    """Pagelet roots of a page, in document order (see the module docstring)."""
    n = model.n
    if n == 0:
        return np.zeros(0, np.int64)
    child_max = np.zeros(n, np.int64)
    if n > 1:
        np.maximum.at(child_max, model.parent[1:], model.n_anchors[1:].astype(np.int64))
    cond = (child_max < k) & ~model.hidden
    starts = np.flatnonzero(cond)
    diff = np.zeros(n + 1, np.int64)
    np.add.at(diff, starts + 1, 1)
    np.add.at(diff, model.subtree_end[starts], -1)
    inside = np.cumsum(diff[:n]) > 0  # strictly inside a node that satisfies (1)
    return np.flatnonzero(cond & ~inside)


def _term_hashes(model: PageModel) -> NDArray[np.uint64]:
    vocab = model.vocab
    h = np.fromiter((zlib.crc32(t.encode()) for t in vocab), np.uint64, len(vocab))
    return (h + np.uint64(1))[model.term_ids] if len(model.term_ids) else np.zeros(0, np.uint64)


def fingerprints(model: PageModel, roots: NDArray[np.int64]) -> NDArray[np.uint64]:
    """The shingle fingerprint of each pagelet root (0: no terms, no fingerprint)."""
    seq = _term_hashes(model)
    ts, end = model.term_start, model.subtree_end
    out = np.zeros(len(roots), np.uint64)
    with np.errstate(over="ignore"):
        for i, r in enumerate(roots.tolist()):
            ids = seq[ts[r] : ts[end[r]]]
            if not len(ids):
                continue
            width = min(SHINGLE, len(ids))
            count = len(ids) - width + 1
            h = np.zeros(count, np.uint64)
            for j in range(width):
                h = h * _MIX + ids[j : j + count]
            h ^= h >> np.uint64(29)
            h *= _MIX
            h ^= h >> np.uint64(32)
            out[i] = h.min() | np.uint64(1)
    return out


class TemplateDetector:
    """Local template detection over a site's pages (module docstring)."""

    def __init__(self, k: int = 3) -> None:
        if k < 1:
            raise ValueError(f"k={k!r} must be positive")
        self.k = k
        self.counts: dict[int, int] = {}
        self.urls: set[str] = set()

    @property
    def pages(self) -> int:
        return len(self.urls)

    def add_page(self, model: PageModel, url: str) -> bool:
        """Count the page's distinct pagelet fingerprints; False if the URL was counted."""
        if url in self.urls or model.n == 0:
            return False
        self.urls.add(url)
        counts = self.counts
        for f in set(fingerprints(model, pagelets(model, self.k)).tolist()) - {0}:
            counts[f] = counts.get(f, 0) + 1
        return True

    def keep_mask(self, model: PageModel, url: str) -> NDArray[np.bool_]:
        """Nodes whose own text survives: everything outside the page's template pagelets.
        A pagelet is a template when its fingerprint is on another page than this one."""
        keep = np.ones(model.n, bool)
        roots = pagelets(model, self.k)
        prints = fingerprints(model, roots).tolist()
        own = 1 if url in self.urls else 0
        end = model.subtree_end
        for r, f in zip(roots.tolist(), prints, strict=True):
            if f and self.counts.get(f, 0) - own >= 1:
                keep[r : end[r]] = False
        return keep

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        keys = np.fromiter(self.counts.keys(), np.uint64, len(self.counts))
        vals = np.fromiter(self.counts.values(), np.int64, len(self.counts))
        meta = json.dumps({"k": self.k, "urls": sorted(self.urls)}).encode()
        np.savez_compressed(buf, keys=keys, vals=vals, meta=np.frombuffer(meta, np.uint8))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> TemplateDetector:
        try:
            z = np.load(io.BytesIO(blob), allow_pickle=False)
            meta = json.loads(bytes(z["meta"]).decode())
            det = cls(int(meta["k"]))
            det.urls = set(meta["urls"])
            det.counts = dict(zip(z["keys"].tolist(), z["vals"].tolist(), strict=True))
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"not a saved template detector: {exc}") from exc
        return det
