"""The five cleaners of ``WISDOM_CLEANER`` on real sites, in one run (Lan Yi's thesis ch. 5).

Setup (Debian packages, served as files; nothing is downloaded at run time)::

    apt-get install python3.11-doc python-django-doc postgresql-doc-15
    pip install -e '.[bench]'          # scikit-learn for k-means and the linear SVM

    python benchmarks/cleaners.py [--runs 100] [--sample 500] [--json OUT]

Each site is cleaned with its own memory store and its own cleaners, as one crawl would:
every page is fed to the store (``feed_model``) and shown to each site-level cleaner
(``Cleaners.observe``; the style trees take a seeded random sample of ``--sample`` pages,
the thesis's k = 500, §5.3), then every page is cleaned. Page URLs are
``http://127.0.0.1:8000/<relpath>``.

1. **Article-body F1** (token-shingle P/R/F1 of
   :func:`wisdom_scrapy.analysis.evaluation.shingle_prf`, mean over pages, and the corpus figure of
   ``corpus_shingle_prf``) on
   * ``python3.11-doc``: gold = the text of ``div[role=main]`` of every article page
     (``benchmarks.pydoc_quality.gold_of``: TOC pages are left out);
   * the demo news site (``sample_project.demo_site``): gold = its ground truth's article text.
   ``wisdom`` is ``analyze_page``'s article; the other cleaners are scored on their own
   kept text (``apply_cleaned`` on the page), whatever role WISDOM gives the page.
2. **Mining in miniature** (thesis §5.4–5.5, Tables 5-3/5-4 and 5-5), set up as ch. 5 does:
   pages of ``python3.11-doc``, ``python-django-doc`` and ``postgresql-doc-15`` labelled by
   what their URL path says they are (:func:`label_of`: tutorial, reference, release notes,
   FAQ). Features: ``none`` = every visible term of the page; ``template``, ``sst``,
   ``infodiscoverer``, ``wisdom`` = term counts of the kept text, weighted with the thesis's
   TF-IDF (§2.1.1, :func:`_tfidf`); ``cst`` = the CST weights (eq. 5-10, summed per term),
   used directly (§5.5), from a CST built over every page of the site (§5.3; ``--cst-sample``).
   * k-means of Fig. 5-1 (:func:`kmeans_cosine`: random pages as first centroids, cosine of
     eq. 6-3, 30 iterations) over the three sites' pages pooled, as many clusters as classes,
     F-score = mean over classes of the F of the class's cluster under the best one-to-one
     class-to-cluster assignment; ``--runs`` seeded runs; also the NMI of the clusters with
     the classes and with the sites (does cleaning stop pages clustering by site?).
   * Linear SVM (SVM-light's default C, :func:`svm_light_c`), configuration 1: for every pair
     of classes and every site that has both, train on that site, test on the other sites'
     pages of those classes; macro F1, averaged.
3. **Speed**: building the SST and the CST from the sampled pages of ``python3.11-doc``
   (``StyleTree.add_page`` on the page models the crawl already has), and cleaning one page
   (importance computed once; map and decide per page), as ratios to lxml's parse time of the
   same pages, in the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import environment, markdown_table, write_json
from benchmarks.pydoc_quality import gold_of, mean_prf
from wisdom_scrapy.analysis.cleaners import CLEANERS, SiteCleaner, apply_cleaned, site_cleaner
from wisdom_scrapy.analysis.evaluation import PRF, corpus_shingle_prf, shingle_prf
from wisdom_scrapy.analysis.page_analysis import PageAnalysis, analyze_page, clean_features
from wisdom_scrapy.engine.cleaning import Cleaners
from wisdom_scrapy.engine.writes import PageUpdate, feed_model
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.store.memory import MemoryStore

BASE = "http://127.0.0.1:8000/"
SITES = {
    "python3.11-doc": Path("/usr/share/doc/python3.11/html"),
    "python-django-doc": Path("/usr/share/doc/python-django-doc/html"),
    "postgresql-doc-15": Path("/usr/share/doc/postgresql-doc-15/html"),
}
METHODS = ("none", *CLEANERS)


def label_of(site: str, rel: str) -> str | None:
    """The kind of page the URL path says: "tutorial", "reference", "release", "faq" or None.

    python3.11-doc: ``tutorial/``, ``library/`` and ``reference/``, ``whatsnew/``, ``faq/``;
    python-django-doc: ``intro/`` (the tutorial), ``ref/``, ``releases/``, ``faq/``;
    postgresql-doc-15 (flat file names): ``tutorial-*``, ``sql-*`` (the SQL command reference),
    ``release-*``; it has no FAQ. Index pages of a section (``index.html``) are left out.
    """
    if rel.endswith("/index.html") or rel.startswith("_"):
        return None
    if site == "postgresql-doc-15":
        for prefix, label in (("tutorial-", "tutorial"), ("sql-", "reference"),
                              ("release-", "release")):  # fmt: skip
            if rel.startswith(prefix):
                return label
        return None
    top = rel.split("/", 1)[0]
    table = {
        "python3.11-doc": {"tutorial": "tutorial", "library": "reference",
                           "reference": "reference", "whatsnew": "release", "faq": "faq"},
        "python-django-doc": {"intro": "tutorial", "ref": "reference", "releases": "release",
                              "faq": "faq"},
    }  # fmt: skip
    return table[site].get(top) if "/" in rel else None


def site_pages(root: Path) -> list[tuple[str, bytes]]:
    files = sorted(p for p in root.rglob("*.html") if "_modules" not in p.parts)
    return [(f.relative_to(root).as_posix(), f.read_bytes()) for f in files]


def demo_pages() -> tuple[list[tuple[str, bytes]], dict[str, str]]:
    from sample_project.demo_site import generate_demo_site

    pages, truth = generate_demo_site()
    gold = {
        path.lstrip("/"): page["text"]
        for path, page in truth["pages"].items()
        if page["role"] == "article"
    }
    return [(p.lstrip("/"), h.encode()) for p, h in sorted(pages.items())], gold


class SiteRun:
    """One site cleaned by every cleaner (module docstring)."""

    def __init__(
        self, name: str, pages: list[tuple[str, bytes]], sample: int, seed: int, cst_sample: int
    ) -> None:
        self.name = name
        self.pages = pages
        self.site = name
        self.store = MemoryStore()
        # the CST of the thesis's experiment weights the very pages it mines (§5.3: "directly
        # analyzes ... all sample Web pages"): 0 = every page of the site
        cst = cst_sample or len(pages)
        self.cleaners = {
            c: Cleaners(c, None, sample_pages=cst if c == "cst" else sample) for c in CLEANERS
        }
        self.build_seconds = {"sst": 0.0, "cst": 0.0}
        self.built_pages: dict[str, list[str]] = {"sst": [], "cst": []}
        order = list(range(len(pages)))
        random.Random(seed).shuffle(order)  # the trees' sample: random pages, as §4.2.4
        for i in order:
            rel, html = pages[i]
            model = self.model(rel, html)
            feed_model(self.store, model, site=self.site)
            for name, cleaners in self.cleaners.items():
                before = self._tree_pages(name) if name in self.build_seconds else 0
                t0 = time.perf_counter()
                cleaners.observe(self.site, BASE + rel, model)
                if name in self.build_seconds:
                    self.build_seconds[name] += time.perf_counter() - t0
                    if self._tree_pages(name) > before:
                        self.built_pages[name].append(rel)
        self.snapshot = self.store.snapshot(self.site)

    def _tree_pages(self, name: str) -> int:
        tree = getattr(self.cleaners[name].site(self.site), "tree", None)
        return tree.pages if tree is not None else 0

    @staticmethod
    def model(rel: str, html: bytes) -> PageModel:
        model = PageModel.from_html(html, BASE + rel)
        model.page_counts()
        return model

    def cleaned(self, rel: str, html: bytes) -> Iterator[tuple[str, PageModel, PageAnalysis]]:
        """(method, model, analysis) for every method on one page."""
        model = self.model(rel, html)
        url = BASE + rel
        wisdom = analyze_page(None, url, model=model, snapshot=self.snapshot)
        self.cleaners["wisdom"].apply(wisdom, self.site, model, self.snapshot)
        none = PageAnalysis(url, "article", model.title, model=model)
        none.features = clean_features(model, ~model.hidden)
        yield "none", model, none
        yield "wisdom", model, wisdom
        for name in CLEANERS[1:]:
            cleaner = self.cleaners[name].site(self.site)
            cleaner.see(self.snapshot)
            analysis = PageAnalysis(url, "article", model.title, model=model)
            entropy = self.snapshot.entropy(model.vocab)
            apply_cleaned(analysis, model, cleaner.clean(url, model, entropy), name)
            yield name, model, analysis


# --------------------------------------------------------------------------------------------
# 1. article F1
# --------------------------------------------------------------------------------------------


def evaluate(
    run: SiteRun, gold: Callable[[str, PageModel], str | None]
) -> tuple[dict[str, Any], list[tuple[str, str, dict[str, dict[str, float]]]]]:
    """One pass over the site: article scores of every method against ``gold`` (None: not an
    article page), and (site, label, {method: features}) of every page :func:`label_of` labels.
    """
    rows: dict[str, list[PRF]] = {m: [] for m in METHODS}
    pairs: dict[str, list[tuple[str, str]]] = {m: [] for m in METHODS}
    docs = []
    for rel, html in run.pages:
        label = label_of(run.name, rel) if run.name in SITES else None
        gold_text: str | None = None
        feats: dict[str, dict[str, float]] = {}
        for method, model, analysis in run.cleaned(rel, html):
            feats[method] = dict(analysis.features)
            if method == "none":
                gold_text = gold(rel, model)
            if gold_text is None:
                continue
            text = model.text_of(0) if method == "none" else analysis.article_text
            rows[method].append(shingle_prf(text, gold_text))
            pairs[method].append((text, gold_text))
        if label is not None:
            docs.append((run.name, label, feats))
    out = {}
    for m in METHODS:
        mean = mean_prf(rows[m])
        corpus = corpus_shingle_prf(pairs[m]) if pairs[m] else {"f1": 0.0}
        out[m] = {"p": mean.precision, "r": mean.recall, "f1": mean.f1,
                  "corpus_f1": corpus["f1"], "pages": len(rows[m])}  # fmt: skip
    return out, docs


def pydoc_gold(rel: str, model: PageModel) -> str | None:
    g = gold_of(model)
    return g[1] if g is not None and g[0] == "article" else None


# --------------------------------------------------------------------------------------------
# 2. mining
# --------------------------------------------------------------------------------------------


def _counts(docs: list[dict[str, float]]) -> Any:
    from sklearn.feature_extraction import DictVectorizer

    return DictVectorizer().fit_transform(docs).tocsr()


def _tfidf(counts: Any, fit: Any = None) -> Any:
    """The thesis's TF-IDF (§2.1.1): n(d, t) / max_k n(d, k) × log(N / N_t), N and N_t over
    the rows ``fit`` (all rows by default); a term none of them has weighs 0. Not normalised
    (the thesis says nothing of it; the cosine of eq. 6-3 ignores lengths anyway)."""
    import numpy as np
    from scipy import sparse

    x = sparse.csr_matrix(counts, dtype=np.float64)
    rows = x if fit is None else x[fit]
    n = rows.shape[0]
    df = np.bincount(rows.indices, minlength=x.shape[1])
    with np.errstate(divide="ignore"):
        idf = np.where(df > 0, np.log(n / np.maximum(df, 1)), 0.0)
    top = x.max(axis=1).toarray().ravel()
    scale = sparse.diags(np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 0.0))
    return (scale @ x @ sparse.diags(idf)).tocsr()


def _vectors(method: str, counts: Any, fit: Any = None) -> Any:
    """A page's vector as the thesis feeds it to mining (§5.5): TF-IDF of the bag of words
    for no cleaning and the block-removing cleaners; the CST's weighted features (eq. 5-10
    summed per term, MapCST) directly, with no TF-IDF on top."""
    return counts if method == "cst" else _tfidf(counts, fit)


def kmeans_cosine(x: Any, k: int, seed: int, iterations: int = 30) -> Any:
    """K-means as the thesis runs it (§5.1.1, Fig. 5-1): K random pages as the first
    centroids, each page assigned to the centroid of largest cosine (eq. 6-3), centroids
    recomputed as the geometric mean of their pages (eq. 6-2), 30 iterations (fewer if
    nothing moves). A cluster that loses all its pages keeps its centroid."""
    import numpy as np
    from scipy import sparse

    x = sparse.csr_matrix(x, dtype=np.float64)
    norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    rng = np.random.default_rng(seed)
    centroids = x[rng.choice(x.shape[0], k, replace=False)].toarray()
    assign = np.full(x.shape[0], -1)
    for _ in range(iterations):
        cnorm = np.linalg.norm(centroids, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            cos = np.asarray(x @ centroids.T) / np.outer(norm, cnorm)
        new = np.argmax(np.nan_to_num(cos, nan=-1.0), axis=1)
        if np.array_equal(new, assign):
            break
        assign = new
        for j in range(k):
            members = assign == j
            if members.any():
                centroids[j] = np.asarray(x[members].mean(axis=0)).ravel()
    return assign


def svm_light_c(x: Any) -> float:
    """SVM-light's default C (the thesis's classifier, §5.5): 1 / mean of x·x over the
    training vectors, so the trade-off does not depend on the scale of the vectors."""
    import numpy as np

    sq = float(np.asarray(x.multiply(x).sum(axis=1)).mean()) if x.shape[0] else 0.0
    return 1.0 / sq if sq > 0 else 1.0


def cluster_f(labels: list[int], clusters: Any, k: int) -> float:
    """Mean over classes of F under the best one-to-one class-to-cluster assignment."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    y = np.asarray(labels)
    table = np.zeros((k, k))
    np.add.at(table, (y, clusters), 1)
    size_class = table.sum(1, keepdims=True)
    size_cluster = table.sum(0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(size_cluster > 0, table / size_cluster, 0.0)
        r = np.where(size_class > 0, table / size_class, 0.0)
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    rows, cols = linear_sum_assignment(-f)
    return float(f[rows, cols].sum() / k)


def mining(docs: list[tuple[str, str, dict[str, dict[str, float]]]], runs: int) -> dict[str, Any]:
    import numpy as np
    from sklearn.metrics import f1_score, normalized_mutual_info_score
    from sklearn.svm import LinearSVC

    classes = sorted({lab for _, lab, _ in docs})
    y = [classes.index(lab) for _, lab, _ in docs]
    sites = [s for s, _, _ in docs]
    out: dict[str, Any] = {}
    ya, sa = np.asarray(y), np.asarray(sites)
    for method in METHODS:
        counts = _counts([f[method] for _, _, f in docs])
        X = _vectors(method, counts)
        scores, nmi_class, nmi_site = [], [], []
        for seed in range(runs):
            clusters = kmeans_cosine(X, len(classes), seed)
            scores.append(cluster_f(y, clusters, len(classes)))
            # what the clusters follow: the classes, or the sites (the thesis's point is that
            # site noise pulls a site's pages together, §5.1.1)
            nmi_class.append(normalized_mutual_info_score(y, clusters))
            nmi_site.append(normalized_mutual_info_score(sites, clusters))
        svm = []
        for c1, c2 in combinations(range(len(classes)), 2):
            pair = (ya == c1) | (ya == c2)
            for site in sorted(set(sites)):
                train = np.flatnonzero(pair & (sa == site))
                test = np.flatnonzero(pair & (sa != site))
                if len(set(ya[train])) < 2 or len(test) == 0 or len(set(ya[test])) < 2:
                    continue
                Xt = _vectors(method, counts, fit=train)
                c = svm_light_c(Xt[train])
                clf = LinearSVC(C=c, loss="hinge", max_iter=20000).fit(Xt[train], ya[train])
                svm.append(f1_score(ya[test], clf.predict(Xt[test]), average="macro"))
        # the same within each site: its pages into as many clusters as the site has classes
        per_site = []
        for site in sorted(set(sites)):
            rows = np.flatnonzero(sa == site)
            site_classes = sorted(set(ya[rows].tolist()))
            ys = [site_classes.index(c) for c in ya[rows].tolist()]
            Xs = _vectors(method, counts[rows])
            for seed in range(runs):
                clusters = kmeans_cosine(Xs, len(site_classes), seed)
                per_site.append(cluster_f(ys, clusters, len(site_classes)))
        out[method] = {
            "kmeans_site_mean_f": statistics.fmean(per_site),
            "kmeans_mean_f": statistics.fmean(scores),
            "kmeans_nmi_class": statistics.fmean(nmi_class),
            "kmeans_nmi_site": statistics.fmean(nmi_site),
            "kmeans_f_lt_0.5": sum(s < 0.5 for s in scores),
            "kmeans_f_ge_0.7": sum(s >= 0.7 for s in scores),
            "kmeans_f_ge_0.8": sum(s >= 0.8 for s in scores),
            "kmeans_f_ge_0.9": sum(s >= 0.9 for s in scores),
            "svm_config1_f1": statistics.fmean(svm) if svm else float("nan"),
            "svm_cases": len(svm),
        }
    return {"classes": classes, "pages": len(docs), "methods": out,
            "per_site": {s: sites.count(s) for s in sorted(set(sites))}}  # fmt: skip


# --------------------------------------------------------------------------------------------
# 3. speed
# --------------------------------------------------------------------------------------------


def _parse_seconds(htmls: list[bytes]) -> float:
    parser = lxml_html.HTMLParser(recover=True, encoding="utf-8", huge_tree=True)
    t0 = time.perf_counter()
    for html in htmls:
        etree.fromstring(html, parser)
    return time.perf_counter() - t0


def _clean_ratios(
    cleaners: dict[str, SiteCleaner], sample: list[tuple[str, bytes, PageModel]]
) -> dict[str, float]:
    """Cleaning one page (importance computed once per tree, untimed but reported), as a
    ratio to the parse time of the same pages measured right before and after."""
    out: dict[str, float] = {}
    htmls = [html for _, html, _ in sample]
    for name, cleaner in cleaners.items():
        t0 = time.perf_counter()
        cleaner.clean(BASE + sample[0][0], sample[0][2], None)  # the importance, once
        out[f"{name}_importance_seconds"] = time.perf_counter() - t0
        parse = _parse_seconds(htmls)
        t0 = time.perf_counter()
        for rel, _, model in sample:
            cleaner.clean(BASE + rel, model, None)
        clean = time.perf_counter() - t0
        parse = (parse + _parse_seconds(htmls)) / 2
        out[f"{name}_clean_ratio"] = clean / parse
    return out


def speed(run: SiteRun) -> dict[str, float]:
    """Tree building (already timed while observing) and per-page cleaning, as ratios to the
    lxml parse time of the same pages."""
    html_of = dict(run.pages)
    out: dict[str, float] = {}
    for name in ("sst", "cst"):
        built = run.built_pages[name]
        parse_built = _parse_seconds([html_of[rel] for rel in built])
        out[f"{name}_pages"] = float(len(built))
        out[f"{name}_parse_seconds"] = parse_built
        out[f"{name}_build_seconds"] = run.build_seconds[name]
        out[f"{name}_build_ratio"] = run.build_seconds[name] / parse_built
    out["sample_pages"] = out["sst_pages"]
    sample = [
        (rel, html_of[rel], run.model(rel, html_of[rel])) for rel in run.built_pages["sst"][:50]
    ]
    names = ("sst", "cst", "template")
    out.update(_clean_ratios({n: run.cleaners[n].site(run.site) for n in names}, sample))
    return out


def _fed_model(rel: str, html: bytes) -> PageModel:
    """A page model as the crawl hands it to a cleaner: its terms and links already read by
    the feed (``PageUpdate.of``), which happens first in ``runtime.feed_response``."""
    model = SiteRun.model(rel, html)
    PageUpdate.of(model, "python3.11-doc")
    return model


def speed_only(sample_pages: int, seed: int, blocks: int = 5) -> dict[str, Any]:
    """Building and cleaning alone, on python3.11-doc's seeded sample (the pages the full
    run's trees take): each tree is built page by page with every ``add_page`` timed (the
    page model is made and fed untimed just before, and dropped after, as in a crawl); the
    sample is cut into ``blocks`` consecutive blocks and each block's build time is divided
    by the parse time of the same pages, so a cost that grows with the tree shows as rising
    block ratios. Parse times are taken before and after each build (mean), in the run."""
    pages = site_pages(SITES["python3.11-doc"])
    order = list(range(len(pages)))
    random.Random(seed).shuffle(order)
    sample = [pages[i] for i in order[:sample_pages]]
    htmls = [html for _, html in sample]
    cuts = [len(sample) * b // blocks for b in range(blocks + 1)]
    out: dict[str, Any] = {"sample_pages": len(sample), "blocks": cuts}
    cleaners: dict[str, SiteCleaner] = {}
    for name in ("sst", "cst", "template"):
        cleaner = cleaners[name] = site_cleaner(name, sample_pages=sample_pages)
        before = [_parse_seconds(htmls[a:b]) for a, b in pairwise(cuts)]
        times = []
        for rel, html in sample:
            model = _fed_model(rel, html)
            t0 = time.perf_counter()
            cleaner.observe(BASE + rel, model)
            times.append(time.perf_counter() - t0)
        after = [_parse_seconds(htmls[a:b]) for a, b in pairwise(cuts)]
        parse = [(x + y) / 2 for x, y in zip(before, after, strict=True)]
        build = [sum(times[a:b]) for a, b in pairwise(cuts)]
        out[f"{name}_build_seconds"] = sum(times)
        out[f"{name}_build_ratio"] = sum(times) / sum(parse)
        out[f"{name}_build_block_ratios"] = [b / p for b, p in zip(build, parse, strict=True)]
        print(f"{name}: built in {sum(times):.1f} s", file=sys.stderr, flush=True)
    out.update(_clean_ratios(cleaners, [(r, h, _fed_model(r, h)) for r, h in sample[:50]]))
    return out


def print_speed(sp: dict[str, Any]) -> None:
    print(f"\nSpeed (python3.11-doc, {int(sp['sample_pages'])} sampled pages), "
          "ratio to lxml parse time of the same pages:\n")  # fmt: skip
    rows = [[f"build {n.upper()} ({int(sp.get(f'{n}_pages', sp['sample_pages']))} pages)",
             f"{sp[f'{n}_build_ratio']:.1f}"]
            for n in ("sst", "cst", "template") if f"{n}_build_ratio" in sp]  # fmt: skip
    rows += [[f"build {n.upper()}, per block of the sample",
              " ".join(f"{r:.1f}" for r in sp[f"{n}_build_block_ratios"])]
             for n in ("sst", "cst", "template") if f"{n}_build_block_ratios" in sp]  # fmt: skip
    rows += [[f"clean one page, {n}", f"{sp[f'{n}_clean_ratio']:.1f}"]
             for n in ("sst", "cst", "template")]  # fmt: skip
    print(markdown_table(["step", "ratio"], rows))


# --------------------------------------------------------------------------------------------


def print_mining(mine: dict[str, Any]) -> None:
    print(markdown_table(
        ["features", "k-means mean F", "F<0.5", "F≥0.7", "F≥0.8", "F≥0.9", "NMI class",
         "NMI site", "per-site k-means mean F", "SVM config 1 F1"],
        [[m, f"{s['kmeans_mean_f']:.3f}", s["kmeans_f_lt_0.5"], s["kmeans_f_ge_0.7"],
          s["kmeans_f_ge_0.8"], s["kmeans_f_ge_0.9"], f"{s['kmeans_nmi_class']:.3f}",
          f"{s['kmeans_nmi_site']:.3f}", f"{s['kmeans_site_mean_f']:.3f}",
          f"{s['svm_config1_f1']:.3f}"]
         for m, s in mine["methods"].items()],
    ))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100, help="seeded k-means runs")
    ap.add_argument("--sample", type=int, default=500, help="pages per style tree (k)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--cst-sample",
        type=int,
        default=0,
        help="pages per CST (0: every page of the site, as the thesis's experiment, §5.3)",
    )
    ap.add_argument("--json", type=Path)
    ap.add_argument("--docs", type=Path, help="write the labelled pages' features here")
    ap.add_argument("--mining-only", type=Path, help="run only the mining on saved features")
    ap.add_argument(
        "--speed-only",
        action="store_true",
        help="only build the trees and clean pages of python3.11-doc (minutes)",
    )
    args = ap.parse_args(argv)
    if args.speed_only:
        if not SITES["python3.11-doc"].is_dir():
            sys.exit("missing Debian package python3.11-doc; see the docstring")
        t0 = time.perf_counter()
        sp = speed_only(args.sample, args.seed)
        sp["seconds"] = time.perf_counter() - t0
        print_speed(sp)
        if args.json:
            write_json(args.json, {"environment": environment(), "speed": sp})
        return 0
    if args.mining_only:
        mine = mining([tuple(d) for d in json.loads(args.mining_only.read_text())], args.runs)
        print_mining(mine)
        if args.json:
            write_json(args.json, {"environment": environment(), "mining": mine})
        return 0
    missing = [f"{n} ({p})" for n, p in SITES.items() if not p.is_dir()]
    if missing:
        sys.exit("missing Debian packages: " + ", ".join(missing) + "; see the docstring")

    results: dict[str, Any] = {"environment": environment()}
    t_start = time.perf_counter()
    runs = {}
    for name, root in SITES.items():
        runs[name] = SiteRun(name, site_pages(root), args.sample, args.seed, args.cst_sample)
        print(f"{name}: {len(runs[name].pages)} pages learnt", file=sys.stderr, flush=True)
    pages, gold = demo_pages()
    # the demo site is not mined: its CST is the crawl's (k = --sample pages), like its SST
    demo = SiteRun("demo", pages, args.sample, args.seed, args.sample)

    results["article_f1"] = {}
    docs = []
    for name, run in runs.items():
        gold_fn = pydoc_gold if name == "python3.11-doc" else (lambda rel, model: None)
        scores, site_docs = evaluate(run, gold_fn)
        print(f"{name}: cleaned", file=sys.stderr, flush=True)
        docs.extend(site_docs)
        if name == "python3.11-doc":
            results["article_f1"][name] = scores
    results["article_f1"]["demo"] = evaluate(demo, lambda rel, model: gold.get(rel))[0]
    if args.docs:  # the labelled pages' features, to rerun the mining alone (--mining-only)
        args.docs.write_text(json.dumps(docs))
    results["mining"] = mining(docs, args.runs)
    results["speed"] = speed(runs["python3.11-doc"])
    results["seconds"] = time.perf_counter() - t_start

    for site, scores in results["article_f1"].items():
        print(f"\nArticle-body token-shingle F1, {site}:\n")
        print(markdown_table(
            ["cleaner", "mean P", "mean R", "mean F1", "corpus F1", "pages"],
            [[m, f"{s['p']:.3f}", f"{s['r']:.3f}", f"{s['f1']:.3f}", f"{s['corpus_f1']:.3f}",
              s["pages"]] for m, s in scores.items()],
        ))  # fmt: skip
    mine = results["mining"]
    print(f"\nMining: {mine['pages']} pages {mine['per_site']}, classes {mine['classes']}, "
          f"{args.runs} k-means runs\n")  # fmt: skip
    print_mining(mine)
    print_speed(results["speed"])
    print(f"\n{results['seconds']:.0f} s")
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
