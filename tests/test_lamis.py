"""LAMIS (TKDE 2004 §3.1, §3.3–3.4): link entropy, link weights, graph reduction, entropy-weighted
HITS and SALSA against plain HITS, and the worked example of Fig. 7 / Tables 1–2.

The transcription of the paper keeps §3.4's text and its term-entropy figures but not the drawing
of Fig. 7 nor the cells of Tables 1–2, so the site is rebuilt from the text:

* P0 is the home page, P1 a TOC page with two anchors to the news articles P3 and P4, P2 an
  advertisement page linked by the four other pages;
* most pages carry the anchors "home" → P0, "hot news" → P1 and the ad's anchor → P2;
* P3 and P4 link to each other (the "related news" cross-reference).

Its terms are chosen so that the site's term entropies are exactly the four values §3.4 prints
(0.682, 0.655, 0.861 and 0.430, |D| = 5): "home" and "hot" occur once in three pages
(−3·(1/3)·log₅(1/3) = 0.682); "news" occurs 2, 2 and 1 times in three pages
(−2·(2/5)·log₅(2/5) − (1/5)·log₅(1/5) = 0.655); the ad anchor "big sales" has two terms in four
pages (log₅ 4 = 0.861); each article's title term occurs in two pages (log₅ 2 = 0.430).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from wisdom_scrapy.mining.lamis import LinkGraph, hits, link_entropies, link_weights, salsa
from wisdom_scrapy.page.terms import extract_terms
from wisdom_scrapy.store import EntropySnapshot, TermStore, open_store

SITE = "fig7.example"

# Fig. 7: page -> [(target, anchor text)], plus text outside anchors.
FIG7_LINKS: dict[str, list[tuple[str, str]]] = {
    "P0": [("P1", "hot news"), ("P2", "big sales")],
    "P1": [("P0", "home"), ("P2", "big sales"), ("P3", "election"), ("P4", "typhoon")],
    "P2": [],
    "P3": [("P0", "home"), ("P1", "hot news"), ("P2", "big sales"), ("P4", "typhoon")],
    "P4": [("P0", "home"), ("P1", "hot news"), ("P2", "big sales"), ("P3", "election")],
}
FIG7_TEXT = {"P3": "news", "P4": "news"}


def _words(text: str) -> list[str]:
    return text.split()


def fig7_store() -> TermStore:
    store = open_store("memory://")
    for page, links in FIG7_LINKS.items():
        words = [w for _, text in links for w in _words(text)] + _words(FIG7_TEXT.get(page, ""))
        store.add_page(SITE, page, Counter(words), links)
    return store


@pytest.fixture
def fig7() -> tuple[LinkGraph, EntropySnapshot]:
    store = fig7_store()
    snapshot = store.snapshot(SITE)
    return LinkGraph.build(store.links(SITE), snapshot, _words), snapshot


def test_fig7_term_entropies_are_the_papers(fig7: tuple[LinkGraph, EntropySnapshot]) -> None:
    """§3.4: E(T0)=E(T1)=0.682, 0.655, E(T2)=E(T5)=0.861, E(T3)=E(T4)=0.430 (paper truncates)."""
    _, snap = fig7
    e = snap.values
    log5 = math.log(5)
    assert e["home"] == pytest.approx(math.log(3) / log5) and abs(e["home"] - 0.682) < 1e-3
    assert e["hot"] == pytest.approx(e["home"])
    assert e["news"] == pytest.approx(-(2 * 0.4 * math.log(0.4) + 0.2 * math.log(0.2)) / log5)
    assert abs(e["news"] - 0.655) < 1e-3
    assert e["big"] == e["sales"] == pytest.approx(math.log(4) / log5)
    assert abs(e["sales"] - 0.861) < 1e-3
    assert e["election"] == e["typhoon"] == pytest.approx(math.log(2) / log5)
    assert abs(e["election"] - 0.430) < 1e-3


def test_fig7_table1_link_entropies(fig7: tuple[LinkGraph, EntropySnapshot]) -> None:
    """Table 1: the most informative links are P1's anchors to the articles P3 and P4."""
    graph, _ = fig7
    i = graph.index()
    ent = graph.entropy.toarray()
    assert ent[i["P1"], i["P0"]] == pytest.approx(0.6826, abs=1e-4)  # "home"
    assert ent[i["P0"], i["P1"]] == pytest.approx((0.6826 + 0.6555) / 2, abs=1e-4)  # "hot news"
    assert ent[i["P0"], i["P2"]] == pytest.approx(0.8614, abs=1e-4)  # "big sales"
    assert ent[i["P1"], i["P3"]] == pytest.approx(0.4307, abs=1e-4)
    assert ent[i["P1"], i["P4"]] == pytest.approx(0.4307, abs=1e-4)
    lowest = ent[graph.structure().toarray() > 0].min()
    assert ent[i["P1"], i["P3"]] == ent[i["P1"], i["P4"]] == lowest
    np.testing.assert_allclose(graph.weights.toarray(), np.where(ent > 0, 1 - ent, 0), atol=1e-12)


def test_fig7_table2_entropy_hits_vs_hits(fig7: tuple[LinkGraph, EntropySnapshot]) -> None:
    """Table 2 (10 iterations): entropy-HITS ranks P1 the top hub and P3, P4 the top
    authorities; plain HITS ranks the ad page P2 the top authority and P3, P4 the top hubs."""
    graph, _ = fig7
    i = graph.index()
    for max_iter in (10, 1000):
        ent = hits(graph.weights, max_iter=max_iter)
        assert int(np.argmax(ent.hub)) == i["P1"]
        top2 = set(np.argsort(-ent.authority)[:2].tolist())
        assert top2 == {i["P3"], i["P4"]}
        plain = hits(graph.structure(), max_iter=max_iter)
        assert int(np.argmax(plain.authority)) == i["P2"]
        assert set(np.argsort(-plain.hub)[:2].tolist()) == {i["P3"], i["P4"]}
        assert plain.hub[i["P3"]] > plain.hub[i["P1"]]
    converged = hits(graph.weights)
    assert converged.converged and converged.iterations < 100


def test_fig7_entropy_salsa(fig7: tuple[LinkGraph, EntropySnapshot]) -> None:
    """§3.3 applies the entropy weights to SALSA too: same ranking as entropy-HITS."""
    graph, _ = fig7
    i = graph.index()
    ent = salsa(graph.weights)
    assert ent.converged
    assert int(np.argmax(ent.hub)) == i["P1"]
    assert set(np.argsort(-ent.authority)[:2].tolist()) == {i["P3"], i["P4"]}
    assert ent.hub.sum() == pytest.approx(1) and ent.authority.sum() == pytest.approx(1)
    plain = salsa(graph.structure())
    assert int(np.argmax(plain.authority)) == i["P2"]
    # plain SALSA authority is the in-degree share (one connected component)
    indeg = np.asarray(graph.structure().sum(axis=0)).ravel()
    np.testing.assert_allclose(plain.authority, indeg / indeg.sum(), atol=1e-8)


def test_graph_reduction(fig7: tuple[LinkGraph, EntropySnapshot]) -> None:
    """Figs. 5–6: a link-entropy threshold keeps only the informative links, nodes stay."""
    graph, _ = fig7
    i = graph.index()
    assert graph.n_links == 14
    reduced = graph.reduce(0.5)
    assert reduced.urls == graph.urls
    rows, cols = reduced.structure().nonzero()
    kept = {(reduced.urls[r], reduced.urls[c]) for r, c in zip(rows, cols, strict=True)}
    assert kept == {("P1", "P3"), ("P1", "P4"), ("P3", "P4"), ("P4", "P3")}
    assert graph.reduce(0.8).n_links == 10  # the four ad links (0.861) go
    assert graph.reduce(1.01).n_links == graph.n_links
    assert graph.reduce(0.0).n_links == 0
    # on the reduced graph, plain HITS finds the informative structure too
    result = hits(reduced.structure())
    assert int(np.argmax(result.hub)) == i["P1"]


def test_link_entropy_mean_of_terms_and_empty_anchor() -> None:
    snap = EntropySnapshot("s", 10, {"a": 0.2, "b": 0.6, "c": 1.0})
    got = link_entropies([["a", "b"], ["c"], [], ["a", "zzz"]], snap)
    np.testing.assert_allclose(got, [0.4, 1.0, 1.0, 0.1])
    np.testing.assert_allclose(link_weights([["a", "b"], []], snap), [0.6, 0.0])
    assert link_entropies([], snap).shape == (0,)


def test_multilinks_keep_the_most_informative_and_self_links_go() -> None:
    snap = EntropySnapshot("s", 10, {"menu": 0.9, "stori": 0.1})
    links = {
        "a": [("b", "menu"), ("b", "story"), ("a", "story"), ("x", "story")],
        "b": [("a", "menu")],
    }
    graph = LinkGraph.build(links, snap, extract_terms)
    assert graph.urls == ["a", "b"]
    assert graph.n_links == 2
    assert graph.weights[0, 1] == pytest.approx(0.9)
    assert graph.weights[1, 0] == pytest.approx(0.1)
    with_sinks = LinkGraph.build(links, snap, extract_terms, include_unfetched=True)
    assert with_sinks.urls == ["a", "b", "x"] and with_sinks.n_links == 3


def test_zero_weight_links_stay_in_the_structure() -> None:
    snap = EntropySnapshot("s", 10, {"next": 1.0})
    graph = LinkGraph.build({"a": [("b", "next")], "b": []}, snap, extract_terms)
    assert graph.n_links == 1 and graph.weights.nnz in (0, 1)
    assert graph.entropy[0, 1] == pytest.approx(1.0)
    assert hits(graph.structure()).authority[1] == pytest.approx(1.0)
    assert graph.reduce(0.99).n_links == 0


def test_hits_degenerate_inputs() -> None:
    empty = hits(sp.csr_matrix((0, 0)))
    assert empty.hub.shape == (0,) and empty.converged
    no_links = hits(sp.csr_matrix((3, 3)))
    assert not no_links.authority.any() and not no_links.hub.any() and no_links.converged
    s = salsa(sp.csr_matrix((3, 3)))
    assert not s.authority.any() and s.converged


def test_hits_bounded_iterations_report_no_convergence() -> None:
    # a directed 2-cycle plus a chain: HITS oscillates slowly at tol 0
    m = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [0, 1, 0]], dtype=float))
    result = hits(m, max_iter=3, tol=0.0)
    assert result.iterations == 3 and not result.converged


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.floats(0.0, 1.0)),
                max_size=40,
            ),
        )
    )
)
def test_hits_matches_dense_power_iteration(case: tuple[int, list[tuple[int, int, float]]]) -> None:
    """Sparse HITS = Kleinberg's iteration with dense numpy, and the fixed point holds."""
    n, edges = case
    src = np.array([e[0] for e in edges], dtype=np.intp)
    dst = np.array([e[1] for e in edges], dtype=np.intp)
    alpha = np.array([e[2] for e in edges], dtype=np.float64)
    graph = LinkGraph.from_edges([str(k) for k in range(n)], src, dst, alpha)
    w = graph.weights.toarray()
    result = hits(graph.weights, max_iter=50, tol=0.0)
    h = np.ones(n) / math.sqrt(n)
    for _ in range(50):
        a = w.T @ h
        a = a / np.linalg.norm(a) if np.linalg.norm(a) else a
        h = w @ a
        h = h / np.linalg.norm(h) if np.linalg.norm(h) else h
    np.testing.assert_allclose(result.authority, a, atol=1e-9)
    np.testing.assert_allclose(result.hub, h, atol=1e-9)
    assert (result.hub >= 0).all() and (result.authority >= 0).all()


def test_fig7_through_the_store_backends(store: TermStore) -> None:
    """The same example through every store backend (memory, SQLite, Redis)."""
    for page, links in FIG7_LINKS.items():
        words = [w for _, t in links for w in _words(t)] + _words(FIG7_TEXT.get(page, ""))
        store.add_page(SITE, page, Counter(words), links)
    graph = LinkGraph.build(store.links(SITE), store.snapshot(SITE), _words)
    i = graph.index()
    assert int(np.argmax(hits(graph.weights).hub)) == i["P1"]
    assert int(np.argmax(hits(graph.structure()).authority)) == i["P2"]
