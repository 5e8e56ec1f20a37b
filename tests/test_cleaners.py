"""WISDOM_CLEANER: the template baseline (Bar-Yossef pagelets), the cleaners' persistence in
the store, and real crawls of the demo site with every cleaner."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from lxml import etree
from scrapy.settings import Settings

from sample_project.demo_site import build_demo_site
from tests.crawling import run_crawl
from tests.fixtures_data import erikmcclure_blog
from wisdom_scrapy.analysis.cleaners import CLEANERS, InfoDiscovererCleaner
from wisdom_scrapy.analysis.evaluation import shingle_prf
from wisdom_scrapy.analysis.page_analysis import PageAnalysis
from wisdom_scrapy.engine.cleaning import Cleaners
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.mining.template import TemplateDetector, fingerprints, pagelets
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.settings import SettingsError, WisdomSettings
from wisdom_scrapy.store import open_store
from wisdom_scrapy.testing import serve_directory

NAV = "<ul class=nav><li><a href=/a>alpha</a></li><li><a href=/b>beta</a></li><li><a href=/c>gamma</a></li></ul>"  # noqa: E501


def _page(body: str, i: int = 0) -> PageModel:
    return PageModel.from_html(f"<html><body>{body}</body></html>", f"http://t.test/{i}.html")


def test_pagelets_follow_the_definition():
    model = _page(f"<div>{NAV}<div><p>harbour <a href=/x>council</a></p><p>museum</p></div></div>")
    roots = pagelets(model, k=3)
    tags = [model.path(r) for r in roots]
    # div has a child (the list) with 3 links: not a pagelet; the list's items each hold one
    # link, so the list is; the text division holds one link: a pagelet
    assert tags == ["html/body/div/ul", "html/body/div/div"]
    # with k = 1 the list is split down to its items (each of their children has < 1 link)
    assert len(pagelets(model, k=1)) > len(roots)
    # a page with fewer than k links in all is one pagelet: the whole document
    assert pagelets(_page("<p>harbour</p>"), k=3).tolist() == [0]


def test_local_template_detection_removes_repeated_pagelets_only():
    det = TemplateDetector()
    texts = ["harbour council budget", "museum trustee student", "energy climate housing"]
    models = [
        _page(
            f"{NAV}<div><p>{t} report</p><a href=/1>x</a><a href=/2>y</a><a href=/3>z</a></div>", i
        )
        for i, t in enumerate(texts)
    ]
    for i, m in enumerate(models):
        assert det.add_page(m, f"u{i}")
    assert not det.add_page(models[0], "u0")  # a URL counts once
    keep = det.keep_mask(models[0], "u0")
    text = models[0].text_of(0, exclude=np.flatnonzero(~keep))
    assert "harbour council budget" in text
    assert "alpha" not in text  # the navigation list is on every page
    # fingerprints are stable across processes (CRC-32 term hashes), and near-copies share them
    a = fingerprints(models[0], pagelets(models[0]))
    b = fingerprints(models[1], pagelets(models[1]))
    assert a[0] == b[0] != 0
    assert TemplateDetector.from_bytes(det.to_bytes()).counts == det.counts


def test_wisdom_cleaner_setting_is_validated():
    assert WisdomSettings.from_settings(Settings()).cleaner == "wisdom"
    assert WisdomSettings.from_settings(Settings({"WISDOM_CLEANER": "SST"})).cleaner == "sst"
    with pytest.raises(SettingsError, match="WISDOM_CLEANER"):
        WisdomSettings.from_settings(Settings({"WISDOM_CLEANER": "magic"}))
    with pytest.raises(SettingsError, match="WISDOM_STYLETREE_PAGES"):
        WisdomSettings.from_settings(Settings({"WISDOM_STYLETREE_PAGES": 0}))


@pytest.mark.parametrize("name", ["sst", "cst", "template", "infodiscoverer"])
def test_cleaner_state_survives_in_the_store(tmp_path, name):
    uri = f"sqlite:///{tmp_path}/w.db"
    pages = [_page(f"{NAV}<div><div><p>harbour {w} report</p></div></div>", i)
             for i, w in enumerate(["museum", "energy", "climate", "housing"])]  # fmt: skip
    store = open_store(uri)
    seen: list[str] = []
    cleaners = Cleaners(name, store, count=seen.append)
    for i, m in enumerate(pages):
        cleaners.observe("t.test", f"http://t.test/{i}.html", m)
    cleaners.save()
    store.close()
    store = open_store(uri)
    seen.clear()
    again = Cleaners(name, store, count=seen.append)
    state = again.site("t.test")
    assert f"wisdom/cleaner/{name}/loaded" in seen
    assert state.to_bytes() == cleaners.site("t.test").to_bytes()
    # an unreadable record is counted and learnt again, never a crash
    store.put_records("t.test", again.kind, {"state": b"garbage"})
    third = Cleaners(name, store, count=seen.append)
    third.site("t.test")
    assert f"wisdom/cleaner/{name}/unreadable" in seen
    store.close()




def _infodiscoverer_on(pages: list[tuple[str, bytes]]) -> tuple[InfoDiscovererCleaner, dict]:
    """Feed ``pages`` (url, html) in their order to a fresh store and the cleaner, then clean
    them in that order, as a crawl does once the site is warm: (cleaner, {url: (threshold,
    article text)})."""
    store = open_store("memory://")
    cleaners = Cleaners("infodiscoverer", store)
    models = {}
    for url, html in pages:
        model = models[url] = PageModel.from_html(html, url)
        feed_model(store, model, site="blog")
        cleaners.observe("blog", url, model)
    snapshot = store.snapshot("blog")
    out = {}
    for url, _ in pages:
        analysis = PageAnalysis(url, "article", "", model=models[url])
        cleaners.apply(analysis, "blog", models[url], snapshot)
        out[url] = (analysis.figures["infodiscoverer_threshold"], analysis.article_text)
    return cleaners.site("blog"), out


def test_infodiscoverer_threshold_does_not_depend_on_page_order():
    """The threshold comes from the site's pages as a set (a bottom-k sample by URL hash,
    with the snapshot's entropies), so two crawl orders of the same pages give the same
    threshold and the same article texts — where the first ten pages of each order, which
    the cleaner used to sample, are different pages."""
    # a real blog (tests/fixtures/sites): more pages than InfoDiscoverer samples
    pages = [("http://blog.test/" + path, html) for path, html in erikmcclure_blog().items()]
    assert len(pages) > InfoDiscovererCleaner.SAMPLE
    backwards = pages[::-1]
    assert {u for u, _ in pages[:10]}.isdisjoint(u for u, _ in backwards[:10])
    first, by_url = _infodiscoverer_on(pages)
    second, again = _infodiscoverer_on(backwards)
    assert sorted(first.sample) == sorted(second.sample)  # the same sampled pages
    assert len(first.sample) == InfoDiscovererCleaner.SAMPLE
    assert first.threshold == second.threshold and 0.0 < first.threshold < 1.0
    assert by_url == again
    # what it keeps is the posts' text, not the blog's template: some pages lose text, every
    # page keeps some
    kept = [len(text) for text in by_url.values()]
    whole = [len(PageModel.from_html(h, u).text_of(0)) for u, h in pages]
    assert all(k > 0 for k in kept) and sum(kept) < 0.95 * sum(whole)


# --------------------------------------------------------------------------------------------
# real crawls
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    site = build_demo_site(out)
    truth = json.loads((out / "ground_truth.json").read_text())["pages"]
    return site, truth


#: Mean article-body F1 each cleaner must keep on the demo crawl (a little under what it
#: reaches; benchmarks/README.md "Cleaners" has the figures). The template baseline removes
#: an article's body because its print version repeats it (local template detection).
FLOORS = {"wisdom": 0.85, "sst": 0.75, "cst": 0.75, "infodiscoverer": 0.7, "template": 0.25}


@pytest.mark.parametrize("name", CLEANERS)
@pytest.mark.crawl
def test_every_cleaner_emits_the_same_article_items_on_a_real_crawl(demo, tmp_path, name):
    site_dir, truth = demo
    with serve_directory(site_dir) as base:
        result = run_crawl(
            "site",
            tmp_path,
            args={"url": base + "index.html"},
            settings={
                "WISDOM_STORE_URI": f"sqlite:///{tmp_path}/w.db",
                "WISDOM_FOCUS": "off",
                "WISDOM_CLEANER": name,
                "WISDOM_ITEM_FIELDS": "html,blocks,features",
            },
            feeds=(f"{tmp_path / 'items.xml'}:xml",),
        )
    assert result.returncode == 0, result.log[-3000:]
    assert not any(k.startswith("wisdom/errors/") for k in result.stats), result.stats
    articles = [i for i in result.items if i.get("role") == "article"]
    assert len(articles) >= 100
    expected_keys = {
        "url", "title", "text", "author", "published", "language", "role", "html", "metadata",
        "blocks", "entropy", "single_page", "hub", "authority", "features",
    }  # fmt: skip
    assert all(set(a) == expected_keys for a in articles)
    for a in articles:  # {"term", "weight"} records, one per term, in term order
        terms = [f["term"] for f in a["features"]]
        assert terms and terms == sorted(set(terms)), a["url"]
        assert all(set(f) == {"term", "weight"} and isinstance(f["weight"], float)
                   for f in a["features"])  # fmt: skip
    # Scrapy's XML feed of the same crawl is valid XML (terms such as "0x10" are values, not
    # element names) and holds the same features
    xml = etree.parse(str(tmp_path / "items.xml"))
    in_xml = {i.findtext("url"): [(v.findtext("term"), float(v.findtext("weight")))
                                  for v in i.iterfind("features/value")]
              for i in xml.getroot().iterfind("item")
              if i.findtext("role") == "article"}  # fmt: skip
    assert in_xml == {a["url"]: [(f["term"], f["weight"]) for f in a["features"]] for a in articles}
    assert any(t[0].isdigit() for features in in_xml.values() for t, _ in features)
    path_of = {base_path: page for base_path, page in truth.items()}
    scores = []
    for a in articles:
        page = path_of.get("/" + a["url"].split("/", 3)[3])
        if page and page["role"] == "article":
            scores.append(shingle_prf(a["text"], page["text"]).f1)
    assert len(scores) >= 100
    assert statistics.fmean(scores) >= FLOORS[name], statistics.fmean(scores)
    if name != "wisdom":
        # InfoDiscoverer samples SAMPLE pages (bottom-k by URL hash), the others learn from all
        learnt = InfoDiscovererCleaner.SAMPLE if name == "infodiscoverer" else 100
        assert result.stats[f"wisdom/cleaner/{name}/pages"] >= learnt
        store = open_store(f"sqlite:///{tmp_path}/w.db")
        try:
            sites = store.sites()
            assert any(store.records(s, f"cleaner-{name}") for s in sites)
        finally:
            store.close()
