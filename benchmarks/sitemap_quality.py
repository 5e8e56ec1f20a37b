"""Sitemap benchmark (SMG §5.1, §5.3): a real crawl with the sitemap on, scored against the site's
own table of contents; partitioner P/R/F1 against the page markup's blocks; clustering time
with and without the candidate index.

::

    python benchmarks/sitemap_quality.py                    # pydoc and the demo site
    python benchmarks/sitemap_quality.py --site pydoc --json out.json --keep /tmp/run

Sites:

* ``pydoc`` — ``/usr/share/doc/python3.11/html`` served on 127.0.0.1 and crawled from
  ``index.html`` with the sample project's ``site`` spider. Gold (SMG §5.3, Tables 7–8): the
  top-level entries of ``contents.html``'s table of contents are level 1, their sub-entries
  (other pages; an entry that only points into its parent's page is not a page) level 2.
* ``demo`` — the sample project's news site (``scrapy crawl demo``). Gold from its
  ``ground_truth.json``: the six category pages are level 1, the articles each category's first
  page lists are level 2.

Every crawl runs with ``WISDOM_FOCUS=off`` (the whole site is fetched, as SMG's crawler does)
and ``WISDOM_SITEMAP_URI`` set; the scores are read from the exported ``sitemap.json``. Levels
are compared as sets of page URLs (precision, recall, F1 per level).

Partitioner (pydoc): on every crawled page, SMG's blocks are compared with the blocks of the
page's markup — the top and bottom navigation bars (``div.related``), the sidebar
(``div.sphinxsidebar``), the main part (``div.body``) and the footer (``div.footer``) — with the
overlap precision/recall of SMG §5.1 (eqs. 6–8, text lengths), averaged over pages.

Clustering: all candidate blocks of the crawled site (from the store's records), clustered with
the MinHash candidate index and with all pairs, timed in one run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import lxml.html
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from wisdom_scrapy.analysis.evaluation import PRF, partition_prf  # noqa: E402
from wisdom_scrapy.mining.sitemap import (  # noqa: E402
    CB,
    PageBlocks,
    _candidate,
    block_entropies,
    cluster_blocks,
    identify_blocks,
)
from wisdom_scrapy.page.model import PageModel  # noqa: E402
from wisdom_scrapy.segment import SegParams, partition, translate  # noqa: E402
from wisdom_scrapy.sitemap import RECORD_KIND  # noqa: E402
from wisdom_scrapy.store import open_store  # noqa: E402
from wisdom_scrapy.testing import StaticServer  # noqa: E402

PYDOC = Path("/usr/share/doc/python3.11/html")
_STATS_RE = re.compile(r"'(wisdom/[a-z_/]+|elapsed_time_seconds)': ([\d.]+)")


def set_prf(system: set[str], gold: set[str]) -> PRF:
    tp = len(system & gold)
    return PRF.of(tp / len(system) if system else 0.0, tp / len(gold) if gold else 0.0)


def levels(tree: list[dict[str, Any]], n: int = 2) -> list[set[str]]:
    out, frontier = [], tree
    for _ in range(n):
        out.append({e["url"] for e in frontier})
        frontier = [c for e in frontier for c in e["children"]]
    return out


# ---------------------------------------------------------------------------------- gold


def pydoc_gold(base: str) -> list[set[str]]:
    """Levels 1 and 2 of ``contents.html``'s table of contents, as absolute URLs."""
    root = lxml.html.parse(str(PYDOC / "contents.html")).getroot()
    wrapper = root.xpath('//div[contains(@class, "toctree-wrapper")]')[0]
    level1, level2 = set(), set()
    for li in wrapper.xpath("./ul/li"):
        url = urljoin(base, urldefrag(li.xpath("./a/@href")[0])[0])
        level1.add(url)
        for href in li.xpath("./ul/li/a/@href"):
            sub = urljoin(base, urldefrag(href)[0])
            if sub != url:
                level2.add(sub)
    return [level1, level2]


def demo_gold(ground_truth: Path, base: str) -> list[set[str]]:
    pages = json.loads(ground_truth.read_text("utf-8"))["pages"]
    cats = [p for p, v in pages.items() if v["kind"] == "category" and p.endswith("/index.html")]
    level2 = {urljoin(base, a) for p in cats for a in pages[p]["links"]}
    return [{urljoin(base, p) for p in cats}, level2]


def answer_blocks(model: PageModel) -> list[int]:
    """The markup's blocks of a Sphinx page: nav bars, sidebar, main part, footer."""
    wanted = ("related", "sphinxsidebar", "body", "footer")
    out = []
    for el in model.root.iter("div") if model.root is not None else []:
        classes = (el.get("class") or "").split()
        if any(c in wanted for c in classes):
            out.append(el)
    nodes = []
    index = {id(model.element(i)): i for i in np.flatnonzero(model.tag == "div").tolist()}
    for el in out:
        node = index.get(id(el))
        if node is not None:
            nodes.append(node)
    # keep the outermost ones only (div.body sits inside div.document …)
    nodes.sort()
    keep: list[int] = []
    for node in nodes:
        if not keep or node >= model.subtree_end[keep[-1]]:
            keep.append(node)
    return keep


# --------------------------------------------------------------------------------- crawling


def crawl(spider: str, args: dict[str, str], out: Path) -> dict[str, float]:
    """One ``scrapy crawl`` with the sitemap on; returns the wisdom stats from its log."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-O", str(out / "items.jsonl")]
    for key, value in args.items():
        cmd += ["-a", f"{key}={value}"]
    settings = {
        "WISDOM_STORE_URI": f"sqlite:///{out / 'wisdom.db'}",
        "WISDOM_SITEMAP_URI": str(out / "sitemap"),
        "WISDOM_FOCUS": "off",
        "LOG_LEVEL": "INFO",
    }
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    (out / "crawl.log").write_text(proc.stderr)
    if proc.returncode != 0 or not (out / "sitemap.json").is_file():
        raise SystemExit(f"crawl failed (exit {proc.returncode}): see {out / 'crawl.log'}")
    return {k: float(v) for k, v in _STATS_RE.findall(proc.stderr)}


def site_records(out: Path) -> dict[str, PageBlocks]:
    store = open_store(f"sqlite:///{out / 'wisdom.db'}")
    try:
        site = max(store.sites(), key=store.page_count)
        blobs = store.records(site, RECORD_KIND)
        records = {u: PageBlocks.decode(b) for u, b in blobs.items()}
        snapshot = store.snapshot(site)
    finally:
        store.close()
    return records, snapshot


def clustering_times(records: dict[str, PageBlocks], snapshot: Any) -> dict[str, Any]:
    pages = [p for p in records.values() if p.blocks]
    kinds, _ = identify_blocks(pages, block_entropies(pages, snapshot))
    seqs = [
        b.seq for p, row in zip(pages, kinds, strict=True)
        for b, k in zip(p.blocks, row, strict=True) if _candidate(b, k)
    ]  # fmt: skip
    out: dict[str, Any] = {"blocks": len(seqs), "distinct": len(set(seqs))}
    labels = {}
    for name, use_index in (("index", True), ("all_pairs", False)):
        started = time.perf_counter()
        result = cluster_blocks(seqs, use_index=use_index)
        out[f"{name}_seconds"] = round(time.perf_counter() - started, 2)
        out[f"{name}_alignments"] = result.aligned
        out[f"{name}_clusters"] = len(set(result.label.tolist()))
        labels[name] = result.label
    same = _same_partition(labels["index"], labels["all_pairs"])
    out["index_pairs_agreeing"] = same
    out["content_blocks"] = sum(k == CB for row in kinds for k in row)
    return out


def _same_partition(a: np.ndarray, b: np.ndarray) -> float:
    """Share of block pairs on which two clusterings agree (same / different cluster), on a
    fixed sample of pairs."""
    rng = np.random.default_rng(0)
    n = len(a)
    if n < 2:
        return 1.0
    i, j = rng.integers(0, n, 20000), rng.integers(0, n, 20000)
    return float(np.mean((a[i] == a[j]) == (b[i] == b[j])))


def partition_quality(urls: list[str], base: str) -> dict[str, float]:
    """Mean overlap P/R/F1 (SMG §5.1) of the partitioner on the crawled pydoc pages."""
    models = []
    for url in urls:
        path = PYDOC / urlsplit(url).path.lstrip("/")
        if path.suffix == ".html" and path.is_file():
            models.append(PageModel.from_html(path.read_bytes(), url))
    seqs = [translate(m) for m in models]
    background: dict[str, int] = {}
    for s in seqs:
        for c in s.symbols:
            background[c] = background.get(c, 0) + 1
    params = SegParams.for_background(background)
    scores, blocks, started = [], 0, time.perf_counter()
    for model, seq in zip(models, seqs, strict=True):
        answer = answer_blocks(model)
        if len(answer) < 2:
            continue
        system = partition(model, seq, params)
        blocks += len(system)
        cum = np.concatenate([[0], np.cumsum(seq.length)])
        sys_seg = [(cum[b.start], cum[b.end]) for b in system]
        ans_seg = [(cum[seq.start[a]], cum[seq.end[a]]) for a in answer]
        scores.append(partition_prf(sys_seg, ans_seg, page_length=float(cum[-1])))
    elapsed = time.perf_counter() - started
    arr = np.array(scores)
    return {
        "pages": len(scores),
        "precision": round(float(arr[:, 0].mean()), 3),
        "recall": round(float(arr[:, 1].mean()), 3),
        "f1": round(float(arr[:, 2].mean()), 3),
        "blocks_per_page": round(blocks / max(len(scores), 1), 1),
        "partition_ms_per_page": round(1000 * elapsed / max(len(scores), 1), 2),
    }


def run_site(name: str, keep: Path | None) -> dict[str, Any]:
    tmp = tempfile.TemporaryDirectory(prefix=f"sitemap-{name}-") if keep is None else None
    out = Path(tmp.name) if tmp else keep / name  # type: ignore[union-attr]
    out.mkdir(parents=True, exist_ok=True)
    server = None
    try:
        if name == "pydoc":
            server = StaticServer(PYDOC)
            server.start()
            base = server.url
            stats = crawl("site", {"url": base + "index.html"}, out)
            gold = pydoc_gold(base)
        else:
            from sample_project.demo_site import GROUND_TRUTH_FILE, build_demo_site

            site_dir = out / "demo"
            if not (site_dir / GROUND_TRUTH_FILE).is_file():
                build_demo_site(site_dir)
            stats = crawl("demo", {"site_dir": str(site_dir), "port": "0"}, out)
            tree = json.loads((out / "sitemap.json").read_text("utf-8"))
            base = tree["url"].rsplit("/", 1)[0] + "/"
            gold = demo_gold(site_dir / GROUND_TRUTH_FILE, base)
        tree = json.loads((out / "sitemap.json").read_text("utf-8"))
        system = levels(tree["children"])
        result: dict[str, Any] = {"site": name, "home": tree["url"]}
        for k, (s, g) in enumerate(zip(system, gold, strict=True), 1):
            prf = set_prf(s, g)
            result[f"level{k}"] = {
                "system": len(s), "gold": len(g), "common": len(s & g),
                "precision": round(prf.precision, 3), "recall": round(prf.recall, 3),
                "f1": round(prf.f1, 3),
            }  # fmt: skip
        pages = stats.get("wisdom/sitemap/pages", 0)
        result["pages"] = int(pages)
        result["sitemap_ms_per_page"] = round(
            stats.get("wisdom/sitemap/microseconds", 0) / 1000 / max(pages, 1), 2
        )
        result["crawl_seconds"] = stats.get("elapsed_time_seconds")
        records, snapshot = site_records(out)
        result["clustering"] = clustering_times(records, snapshot)
        if name == "pydoc":
            result["partition"] = partition_quality(list(records), base)
        return result
    finally:
        if server is not None:
            server.stop()
        if tmp is not None:
            tmp.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", choices=["pydoc", "demo", "all"], default="all")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--keep", type=Path, help="keep crawl outputs under this folder")
    opts = parser.parse_args()
    names = ["pydoc", "demo"] if opts.site == "all" else [opts.site]
    results = [run_site(n, opts.keep) for n in names]
    print("| site | pages | level | system | gold | common | P | R | F1 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        for k in (1, 2):
            lv = r[f"level{k}"]
            print(
                f"| {r['site']} | {r['pages']} | {k} | {lv['system']} | {lv['gold']} | "
                f"{lv['common']} | {lv['precision']:.3f} | {lv['recall']:.3f} | {lv['f1']:.3f} |"
            )
    print()
    print(
        "| site | sitemap ms/page (crawl) | candidate blocks (distinct) | cluster: index s "
        "(alignments) | cluster: all pairs s (alignments) | same clusters |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        c = r["clustering"]
        print(
            f"| {r['site']} | {r['sitemap_ms_per_page']} | {c['blocks']} ({c['distinct']}) | "
            f"{c['index_seconds']} ({c['index_alignments']}) | {c['all_pairs_seconds']} "
            f"({c['all_pairs_alignments']}) | {c['index_pairs_agreeing']:.4f} |"
        )
    for r in results:
        if "partition" in r:
            p = r["partition"]
            print()
            print("| partitioner (SMG §5.1) | pages | P | R | F1 | blocks/page | ms/page |")
            print("| --- | --- | --- | --- | --- | --- | --- |")
            print(
                f"| {r['site']} | {p['pages']} | {p['precision']} | {p['recall']} | {p['f1']} | "
                f"{p['blocks_per_page']} | {p['partition_ms_per_page']} |"
            )
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
