"""LAMIS: link entropy, link weights and entropy-weighted HITS / SALSA (TKDE 2004, §3.1, §3.3–3.4).

Kao, Lin, Ho, Chen, "Mining Web informative structures and contents based on entropy analysis",
IEEE TKDE 16(1), 2004.

Link entropy (§3.3)
    A link's features are the terms of its anchor text; its entropy is the mean entropy of those
    terms over the site's pages, ``E(link) = (1/k) Σ_j E(T_j)``, exactly as a content block's
    entropy H(CB) is the mean of its features' entropies. The link weight is
    ``α = 1 − E(link)``, equivalently the mean feature weight ``W(T_j) = 1 − E(T_j)``.
    The paper leaves open what an anchor *without* terms weighs (an image without ``alt``, a
    page number, "»"): it carries no textual information, so it gets ``E = 1`` (``α = 0``);
    the same choice as the TocItem link weights of :mod:`wisdom_scrapy.engine.waits`.

Graph reduction (§3.1, Figs. 5–6)
    Keeping only the links whose entropy is below a threshold (0.8 and 0.4 in the paper's CDN
    example) distils the site's graph towards its informative structure:
    :meth:`LinkGraph.reduce`.

Entropy-weighted HITS (§3.3)
    ``A(v) = Σ_{(u,v)∈E} H(u) · α_uv`` and ``H(u) = Σ_{(u,v)∈E} A(v) · α_uv``; plain HITS is
    the same iteration with every α = 1. Both are power iterations on a ``scipy.sparse`` matrix,
    L2-normalised each round (Kleinberg), started from the all-ones vector, stopped when neither
    vector moves by more than ``tol`` (max-norm) or after ``max_iter`` rounds.

Entropy-weighted SALSA (§3.3, "we also apply entropy weights on SALSA")
    SALSA's two Markov chains with the weighted matrix: from an authority go back to one of its
    hubs with probability proportional to the link weight, then forward along one of that hub's
    links, again proportional to weight (and symmetrically for hubs). Scores are the chains'
    stationary distributions (L1-normalised); pages without links in a direction score 0.

Multi-links and self-links
    A page can link to the same target several times (a headline and its "read more"). The
    graph keeps one edge per (source, target) with the *largest* weight of those anchors (the
    most informative way the page points there), so repeating a link adds nothing, and a link
    to itself is dropped (it says nothing about other pages; HITS convention).

The worked example of §3.4 (Fig. 7, Tables 1–2) is reproduced by ``tests/test_lamis.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "HitsResult",
    "LinkGraph",
    "hits",
    "link_entropies",
    "link_weights",
    "salsa",
]


class _Entropies(Protocol):
    """What link entropy needs from the site: ``entropy(terms) -> array`` (an EntropySnapshot)."""

    def entropy(self, terms: Iterable[str]) -> NDArray[np.float64]: ...


def link_entropies(
    anchor_terms: Sequence[Sequence[str]], entropies: _Entropies
) -> NDArray[np.float64]:
    """E(link) for each link given the terms of its anchor text (TKDE §3.3).

    One vectorised look-up of all terms, then a per-link mean with ``np.bincount``; links
    without terms get 1 (see the module docstring).
    """
    n = len(anchor_terms)
    lengths = np.fromiter(map(len, anchor_terms), np.int64, n)
    flat = [t for terms in anchor_terms for t in terms]
    values = np.asarray(entropies.entropy(flat), dtype=np.float64)
    owner = np.repeat(np.arange(n), lengths)
    sums = np.bincount(owner, weights=values, minlength=n)
    out = np.ones(n, dtype=np.float64)
    has = lengths > 0
    out[has] = sums[has] / lengths[has]
    return out


def link_weights(
    anchor_terms: Sequence[Sequence[str]], entropies: _Entropies
) -> NDArray[np.float64]:
    """LAMIS link weight α = 1 − E(link) for each link (TKDE §3.3)."""
    return 1.0 - link_entropies(anchor_terms, entropies)


@dataclass(frozen=True)
class LinkGraph:
    """A site's link graph over its fetched pages, with one weight per (source, target) edge.

    ``urls[i]`` is node ``i``; ``weights`` is an ``n × n`` CSR matrix whose entry ``(u, v)`` is
    α_uv (the largest weight among u's anchors to v); ``entropy`` holds E = 1 − α for the same
    pattern (so a weight of exactly 0 is still an edge: ``entropy`` keeps the structure).
    """

    urls: list[str]
    weights: sp.csr_matrix
    entropy: sp.csr_matrix

    @property
    def n(self) -> int:
        return len(self.urls)

    @property
    def n_links(self) -> int:
        return int(self.entropy.nnz)

    def index(self) -> dict[str, int]:
        return {u: i for i, u in enumerate(self.urls)}

    @classmethod
    def build(
        cls,
        links: Mapping[str, Iterable[tuple[str, str]]],
        entropies: _Entropies,
        terms: Callable[[str], list[str]],
        *,
        include_unfetched: bool = False,
    ) -> LinkGraph:
        """The graph of ``links`` (page URL → ``(target URL, anchor text)`` pairs, as
        :meth:`TermStore.links` returns them), weighted with the site's ``entropies``.

        Nodes are the pages of ``links`` (the fetched pages); with ``include_unfetched`` the
        targets nobody fetched become nodes too (sinks). ``terms`` turns an anchor text into
        terms (:func:`wisdom_scrapy.page.terms.extract_terms`); it is called once per distinct text.
        """
        urls = list(links)
        index = {u: i for i, u in enumerate(urls)}
        src: list[int] = []
        dst: list[int] = []
        text_id: list[int] = []
        texts: dict[str, int] = {}
        for u, out in links.items():
            i = index[u]
            for target, text in out:
                j = index.get(target)
                if j is None:
                    if not include_unfetched:
                        continue
                    j = index[target] = len(urls)
                    urls.append(target)
                if j == i:
                    continue
                src.append(i)
                dst.append(j)
                text_id.append(texts.setdefault(text, len(texts)))
        anchor_terms = [terms(t) for t in texts]
        per_text = link_weights(anchor_terms, entropies)
        alpha = per_text[np.asarray(text_id, dtype=np.intp)] if text_id else np.zeros(0)
        return cls.from_edges(urls, np.asarray(src, np.intp), np.asarray(dst, np.intp), alpha)

    @classmethod
    def from_edges(
        cls,
        urls: list[str],
        src: NDArray[np.intp],
        dst: NDArray[np.intp],
        alpha: NDArray[np.float64],
    ) -> LinkGraph:
        """Graph from parallel edge arrays; duplicate edges keep their largest α, self-links go."""
        n = len(urls)
        keep = src != dst
        src, dst, alpha = src[keep], dst[keep], np.clip(alpha[keep], 0.0, 1.0)
        # one edge per (src, dst): sort by key, then by α descending, take the first of each key
        key = src.astype(np.int64) * max(n, 1) + dst
        order = np.lexsort((-alpha, key))
        key, alpha = key[order], alpha[order]
        first = np.ones(key.size, dtype=bool)
        first[1:] = key[1:] != key[:-1]
        key, alpha = key[first], alpha[first]
        rows, cols = key // max(n, 1), key % max(n, 1)
        # CSR matrices drop explicit zeros on arithmetic: keep E = 1 − α (≥ 0) with an offset
        weights = sp.csr_matrix((alpha, (rows, cols)), shape=(n, n))
        entropy = sp.csr_matrix((2.0 - alpha, (rows, cols)), shape=(n, n))
        entropy.data -= 1.0  # stored as 1 + E so that E = 0 survives as a stored entry
        return cls(urls, weights, entropy)

    def reduce(self, threshold: float) -> LinkGraph:
        """The subgraph of the links with entropy below ``threshold`` (TKDE §3.1, Figs. 5–6).

        Nodes are kept (a page losing every link becomes isolated), so scores of the reduced
        graph align with this graph's ``urls``.
        """
        coo = self.entropy.tocoo()
        keep = coo.data < threshold
        src, dst = coo.row[keep].astype(np.intp), coo.col[keep].astype(np.intp)
        alpha = 1.0 - coo.data[keep]
        return LinkGraph.from_edges(list(self.urls), src, dst, alpha)

    def structure(self) -> sp.csr_matrix:
        """The unweighted adjacency matrix (every link weight 1): plain HITS' input."""
        m = self.entropy.copy()
        m.data = np.ones_like(m.data)
        return m


@dataclass(frozen=True)
class HitsResult:
    """Hub and authority scores (aligned with the graph's nodes) and how the iteration ended."""

    hub: NDArray[np.float64]
    authority: NDArray[np.float64]
    iterations: int
    converged: bool


def _normalised(v: NDArray[np.float64], order: float) -> NDArray[np.float64]:
    norm = float(np.linalg.norm(v, ord=order))
    return v / norm if norm > 0 else v


def _iterate(
    next_auth: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
    next_hub: Callable[[NDArray[np.float64], NDArray[np.float64]], NDArray[np.float64]],
    hub: NDArray[np.float64],
    auth: NDArray[np.float64],
    *,
    order: float,
    max_iter: int,
    tol: float,
) -> HitsResult:
    """Power iteration shared by HITS and SALSA: each round the authorities are updated first,
    then the hubs from them (both see the round's new authorities), each normalised with
    ``order``; stops when neither vector moves by more than ``tol`` (max-norm)."""
    for it in range(1, max_iter + 1):
        new_auth = _normalised(next_auth(hub, auth), order)
        new_hub = _normalised(next_hub(hub, new_auth), order)
        delta = max(
            float(np.abs(new_auth - auth).max(initial=0.0)),
            float(np.abs(new_hub - hub).max(initial=0.0)),
        )
        hub, auth = new_hub, new_auth
        if delta <= tol:
            return HitsResult(hub, auth, it, True)
    return HitsResult(hub, auth, max_iter, False)


def hits(
    matrix: sp.spmatrix | sp.sparray,
    *,
    max_iter: int = 100,
    tol: float = 1e-8,
) -> HitsResult:
    """(Weighted) HITS on an ``n × n`` matrix of link weights (TKDE §3.3).

    ``a ← Mᵀ h``, ``h ← M a``, each L2-normalised, from ``h = 1``; stops when both vectors move
    by at most ``tol`` (max-norm) or after ``max_iter`` rounds. Pass ``graph.weights`` for the
    entropy-weighted version, ``graph.structure()`` for plain HITS.
    """
    m = sp.csr_matrix(matrix, dtype=np.float64)
    mt = m.T.tocsr()
    n = m.shape[0]
    return _iterate(
        lambda hub, auth: mt @ hub,
        lambda hub, auth: m @ auth,
        _normalised(np.ones(n), 2),
        np.zeros(n),
        order=2,
        max_iter=max_iter,
        tol=tol,
    )


def salsa(
    matrix: sp.spmatrix | sp.sparray,
    *,
    max_iter: int = 200,
    tol: float = 1e-10,
) -> HitsResult:
    """(Weighted) SALSA: stationary distributions of the hub and authority chains (TKDE §3.3).

    With ``R`` the row-normalised and ``C`` the column-normalised weight matrix, the authority
    chain is ``a ← Rᵀ (C a)`` and the hub chain ``h ← C (Rᵀ h)``, both L1-normalised, started
    uniform over the pages that have links in that direction.
    """
    m = sp.csr_matrix(matrix, dtype=np.float64)
    n = m.shape[0]
    out_w = np.asarray(m.sum(axis=1)).ravel()
    in_w = np.asarray(m.sum(axis=0)).ravel()
    r = sp.diags(np.divide(1.0, out_w, out=np.zeros(n), where=out_w > 0)) @ m
    c = m @ sp.diags(np.divide(1.0, in_w, out=np.zeros(n), where=in_w > 0))
    r, c = sp.csr_matrix(r), sp.csr_matrix(c)
    rt = r.T.tocsr()
    return _iterate(
        lambda hub, auth: rt @ (c @ auth),
        lambda hub, auth: c @ (rt @ hub),
        _normalised((out_w > 0).astype(np.float64), 1),
        _normalised((in_w > 0).astype(np.float64), 1),
        order=1,
        max_iter=max_iter,
        tol=tol,
    )
