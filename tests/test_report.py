"""What users see, end to end: a real ``scrapy crawl demo`` into a real SQLite store writes the
site report; the annotated view and the report are rendered by headless Chromium (Debian
``chromium``, installed by ./scripts/test) and checked as pictures and as DOM; the three Scrapy
commands run as ``python -m scrapy wisdom-*`` against the crawl's store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import lxml.html
import numpy as np
import pytest
from PIL import Image

from sample_project.demo_site import GROUND_TRUTH_FILE, build_demo_site
from tests.conftest import free_port
from tests.crawling import REPO, CrawlResult, run_crawl
from wisdom_scrapy.analysis.annotated import ROLE_COLOURS, page_view
from wisdom_scrapy.report import CRAWL_FIGURES, SiteReportData, render_report
from wisdom_scrapy.settings import SettingsError, WisdomSettings
from wisdom_scrapy.store import TermStore, open_store


class Demo:
    def __init__(self, root: Path, store_uri: str, report: Path, crawl: CrawlResult) -> None:
        self.root, self.store_uri, self.report, self.crawl = root, store_uri, report, crawl
        self.site_dir = root / "demo" / "site"
        (item,) = [i for i in crawl.items if "tocs" in i]
        self.structure: dict[str, Any] = item
        self.site: str = item["site"]
        (sitemap,) = [i for i in crawl.items if "tree" in i]
        self.sitemap: dict[str, Any] = sitemap

    @property
    def truth(self) -> dict[str, Any]:
        pages: dict[str, Any] = json.loads((self.root / "demo" / GROUND_TRUTH_FILE).read_text())
        return pages["pages"]

    def url_of(self, path: str) -> str:
        return f"http://{self.site}{path}"

    def article(self) -> dict[str, Any]:
        """The ArticleItem of the first ground-truth article page (by path) with metadata."""
        items = {i["url"]: i for i in self.crawl.items if "url" in i}
        return next(
            items[self.url_of(path)] for path, page in sorted(self.truth.items())
            if page["role"] == "article" and items.get(self.url_of(path), {}).get("metadata")
        )  # fmt: skip

    def local_file(self, url: str) -> Path:
        return self.site_dir / url.split(self.site, 1)[1].lstrip("/")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("report")
    build_demo_site(root / "demo")
    store_uri = f"sqlite:///{root / 'wisdom.db'}"
    report = root / "out" / "report.html"
    crawl = run_crawl(
        "demo",
        root,
        args={"site_dir": str(root / "demo"), "port": str(free_port())},
        settings={
            "WISDOM_STORE_URI": store_uri,
            "WISDOM_REPORT_URI": str(report),
            "LOGSTATS_INTERVAL": 1,
            "WISDOM_SITEMAP": True,
        },
    )
    assert crawl.returncode == 0, crawl.log[-3000:]
    return Demo(root, store_uri, report, crawl)


def scrapy(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def screenshot(page: Path, tmp_path: Path, *, width: int = 1280, height: int = 2400) -> np.ndarray:
    """Headless Chromium's picture of a local HTML file, as an RGB array."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is missing: ./scripts/test installs the Debian package"
    png = tmp_path / (page.stem + ".png")
    subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--window-size={width},{height}",
         f"--screenshot={png}", page.resolve().as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    image = np.asarray(Image.open(png).convert("RGB"))
    assert image.shape == (height, width, 3)
    return image


def pixels(image: np.ndarray, colour: str) -> int:
    rgb = [int(colour[k : k + 2], 16) for k in (1, 3, 5)]
    return int((image == rgb).all(axis=-1).sum())


def assert_real_picture(image: np.ndarray) -> None:
    """Not blank: a good share of non-white pixels and many distinct colours (text, boxes)."""
    non_white = (image < 245).any(axis=-1).mean()
    colours = len(np.unique(image.reshape(-1, 3)[::7], axis=0))
    assert non_white > 0.03, non_white
    assert colours > 40, colours


# -- the annotated view ---------------------------------------------------------------------


@pytest.mark.crawl
def test_annotated_view_of_article_and_toc_pages_in_chromium(demo: Demo, tmp_path: Path) -> None:
    """An article page and a TOC page of the demo's ground truth, as the crawl's store sees
    them: the view's role is the ground truth's, and every role's outline is on screen."""
    article = demo.article()
    toc = demo.url_of(next(p for p, page in sorted(demo.truth.items())
                           if page["role"] == "toc" and page["kind"] in ("home", "category")))
    shots = {}
    for name, url in (("article", article["url"]), ("toc", toc)):
        out = tmp_path / f"view-{name}.html"
        done = scrapy("wisdom-show", str(demo.local_file(url)), "--url", url,
                      "--store", demo.store_uri, "-o", str(out))  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(out.resolve())
        shots[name] = screenshot(out, tmp_path)
        assert_real_picture(shots[name])
        doc = lxml.html.parse(str(out)).getroot()
        assert doc.xpath("//script") == []
        # the view says what the crawl decided for this page
        head = doc.xpath("//div[@class='wv-head']")[0].text_content()
        assert f"role {name}" in " ".join(head.split())
    # outlines of every role are on screen: article, metadata and redundant blocks on the
    # article page, TOC blocks on the TOC page (a 3-pixel outline of a block ≥ 1000 pixels)
    for role in ("article", "metadata", "redundant"):
        assert pixels(shots["article"], ROLE_COLOURS[role]) > 1000, role
    assert pixels(shots["toc"], ROLE_COLOURS["toc"]) > 1000
    # blocks are named by the page's own id/class in their tooltips
    view_doc = lxml.html.parse(str(tmp_path / "view-article.html")).getroot()
    tips = view_doc.xpath("//*[contains(@class, 'wb-redundant')]/@title")
    assert any(t.startswith("redundant aside#sidebar.sidebar:") for t in tips), tips
    # what the view shows as kept is the article item's text
    view = lxml.html.parse(str(tmp_path / "view-article.html")).getroot()
    (block,) = [b for b in view.xpath("//*[contains(@class, 'wb-article')]")][:1]
    body = " ".join(article["text"].split())
    first_para = block.xpath(".//p")[0].text_content()
    assert " ".join(first_para.split())[:60] in body


def test_view_of_hostile_page_is_inert() -> None:
    page = b"""<html><head><title>T</title><script>alert(1)</script></head><body>
    <div onclick="alert(2)" style="background:url(http://evil/x)"><p>Text <b>kept</b>
    <a href="javascript:alert(3)">click</a> <a href="http://ok/">ok</a></p>
    <img src="http://evil/i.png" onerror="alert(4)" alt="a picture">
    <iframe src="http://evil/"></iframe><object data="x.swf"></object>
    <p>&lt;script&gt;alert(5)&lt;/script&gt; "quoted" &amp; more</p></div></body></html>"""
    html = page_view(page, "http://example.test/p.html")
    doc = lxml.html.fromstring(html)
    assert doc.xpath("//script | //iframe | //object | //img | //embed") == []
    for el in doc.iter():
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), (el.tag, name)
            assert name in ("class", "style", "title", "colspan", "rowspan", "charset", "content",
                            "http-equiv"), name  # fmt: skip
            assert "javascript:" not in value or name == "title"
            assert "evil" not in value or name == "title"
    text = doc.text_content()
    assert "<script>alert(5)</script>" in text  # shown as text, escaped in the source
    assert "[image: a picture]" in text


# -- the site report -------------------------------------------------------------------------


@pytest.mark.crawl
def test_report_written_at_close_with_the_crawls_content(demo: Demo) -> None:
    assert demo.report.is_file()
    doc = lxml.html.parse(str(demo.report)).getroot()
    assert doc.xpath("//script | //*[@src] | //link") == []
    assert doc.xpath("//meta[@http-equiv='Content-Security-Policy']")
    (section,) = doc.xpath("//section[@class='site']")
    assert section.xpath("h2")[0].text == demo.site
    structure = demo.structure
    # informative structure, from the items the crawl emitted (one source for every figure)
    roles = Counter(i["role"] for i in demo.crawl.items if "role" in i)
    articles = {i["url"] for i in demo.crawl.items if i.get("role") == "article"}
    tocs = {i["url"]: {lk["url"] for lk in i["links"]} & articles
            for i in demo.crawl.items if i.get("role") == "toc"}  # fmt: skip
    listed = Counter(a for targets in tocs.values() for a in targets)
    paras = section.xpath(".//div[@class='structure']/p")
    head = " ".join(paras[0].text_content().split())
    assert head == (f"Items emitted: {roles['article']:,} article, {roles['toc']:,} TOC, "
                    f"{roles['other']:,} other pages; the {roles['toc']:,} TOC pages list "
                    f"{len(listed):,} of the {roles['article']:,} article pages.")  # fmt: skip
    assert f"over {structure['pages']:,} pages and {structure['links']:,} informative links" in (
        paras[1].text_content())
    # the site structure states the items' roles; where its link analysis calls pages
    # otherwise, the report says so and why
    assert structure["item_roles"] == dict(roles)
    link_roles = structure["roles"]
    differs = any(link_roles.get(r, 0) != roles[r] for r in ("article", "toc", "other"))
    assert ("From its links alone" in section.text_content()) == differs
    rows = section.xpath(".//table[@class='tocs']//tr[td]")
    assert len(rows) == min(len(tocs), 30) > 5
    # hub: the structure's final score, else (a page its link analysis did not class as a TOC)
    # the TocItem's score when it left
    hubs = {i["url"]: i["hub"] for i in demo.crawl.items if i.get("role") == "toc"}
    hubs.update({t["url"]: t["hub"] for t in structure["tocs"]})
    shown_hubs = []
    for row in rows:  # each TOC page: the article items its links list, those only it lists
        (url,) = row.xpath(".//a/@href")
        cells = [td.text_content().replace(",", "") for td in row.xpath("td")]
        assert int(cells[2]) == len(tocs[url])
        assert int(cells[3]) == sum(1 for a in tocs[url] if listed[a] == 1)
        shown_hubs.append(hubs[url] or 0.0)
    assert shown_hubs == sorted(shown_hubs, reverse=True)  # best hub first
    svg = section.xpath(".//div[@class='graph']/*[local-name()='svg']")[0]
    bar_labels = svg.xpath(".//*[local-name()='text'][@text-anchor='end']/*[local-name()='title']")
    assert [t.text for t in bar_labels] == [
        r.xpath(".//a/@href")[0].split(demo.site, 1)[1] for r in rows[:20]]
    # the most redundant blocks: template parts on most pages, none of it in an article
    data_rows = section.xpath(".//table[@class='redundant']//tr[td]")
    assert len(data_rows) >= 5
    # named by the page's own id/class (the demo's template has them), tag path below
    names = [" ".join(r.xpath(".//code")[0].text.split()) for r in data_rows]
    assert sum(("#" in n or "." in n) for n in names) >= len(names) / 2, names
    assert {"footer#footer.site-footer", "aside#sidebar.sidebar"} <= set(names), names
    assert data_rows[0].xpath(".//div[@class='path']")[0].text.startswith("html/body/")
    analysed = sum(1 for i in demo.crawl.items if i.get("role") in ("article", "toc", "other"))
    top_pages = int(data_rows[0].xpath("td")[1].text.replace(",", ""))
    assert top_pages > analysed / 2
    article_text = " ".join(" ".join(i["text"].split()) for i in demo.crawl.items if "text" in i)
    top_sample = " ".join(data_rows[0].xpath("td")[3].text_content().split())
    assert len(top_sample) > 20 and top_sample[:40] not in article_text
    # the sitemap tree: every entry of the SitemapItem, nested as in the item
    entries, stack = 0, [demo.sitemap["tree"]]
    while stack:
        level = stack.pop()
        entries += len(level)
        stack.extend(e["children"] for e in level if e["children"])
    assert entries > 0
    tree = section.xpath(".//div[@class='tree']")[0]
    assert len(tree.xpath(".//li")) == entries
    top = tree.xpath("./ul/li/a")
    assert [a.text for a in top] == [e["title"] or e["url"] for e in demo.sitemap["tree"]]
    # entropy histograms: the term histogram counts the store's vocabulary
    with open_store(demo.store_uri) as store:
        vocabulary = store.snapshot(demo.site).n_terms
    histograms = section.xpath(".//div[@class='histograms']/*[local-name()='svg']")
    assert len(histograms) == 2
    assert f"(n={vocabulary}," in histograms[0].xpath("string(.)")
    # the crawl's figures are the crawl's stats
    stats = demo.crawl.stats
    figures = {
        " ".join(tr.xpath("td")[0].text.split()): int(tr.xpath("td")[1].text.replace(",", ""))
        for tr in section.xpath(".//table[@class='crawl']//tr")
    }
    labels = dict(CRAWL_FIGURES)
    for key in ("wisdom/pages_fed", "wisdom/focus/dropped", "wisdom/items/article",
                "wisdom/items/toc", "wisdom/bytes/fed", "wisdom/bytes/saved"):  # fmt: skip
        assert figures[labels[key]] == stats[key], key
    # the role counts agree everywhere on the page: the structure's head, the crawl figures
    assert figures[labels["wisdom/items/toc"]] == roles["toc"]
    assert figures[labels["wisdom/items/article"]] == roles["article"]
    assert stats["wisdom/bytes/saved"] == stats["wisdom/bytes/fed"] - stats["wisdom/bytes/kept"]
    assert 0 < stats["wisdom/bytes/kept"] < stats["wisdom/bytes/fed"]


@pytest.mark.crawl
def test_report_in_chromium(demo: Demo, tmp_path: Path) -> None:
    image = screenshot(demo.report, tmp_path, height=4000)
    assert_real_picture(image)
    # the TOC pages' bars: articles listed (light), those listed only there (article colour)
    assert pixels(image, "#a5e8bf") > 3000
    assert pixels(image, ROLE_COLOURS["article"]) > 100
    assert pixels(image, ROLE_COLOURS["redundant"]) > 1000  # redundant-block bars


def test_report_escapes_page_text_and_draws_a_sitemap() -> None:
    evil = '<script>alert(1)</script>'
    data = SiteReportData(
        site='x"><script>alert(0)</script>',
        pages_analysed=2,
        redundant={"html/body/div": [2, 40, evil, "div#" + evil]},
        structure={"pages": 2, "links": 1, "roles": {"toc": 1}, "tocs": []},
        items={"toc": 1, "article": 1},
        tocs=[{"url": "javascript:alert(2)", "hub": 1.0, "articles": 1, "only": 1},
              {"url": "http://a.test/" + evil, "hub": None, "articles": 0, "only": 0}],
        sitemap={"url": "http://a.test/", "title": evil, "tree": [
            {"title": evil, "url": "javascript:alert(3)", "children": [
                {"title": "child", "url": "http://a.test/c", "children": []}]},
            {"title": "second", "url": "http://a.test/s", "children": []}]},
    )  # fmt: skip
    html = render_report([data])
    doc = lxml.html.fromstring(html)
    assert doc.xpath("//script") == []
    assert all(h.startswith("http") or h.startswith("#") for h in doc.xpath("//a/@href"))
    assert evil in doc.text_content() and "div#" + evil in doc.text_content()
    assert len(doc.xpath("//table[@class='tocs']//tr[td]")) == 2
    assert len(doc.xpath("//div[@class='tree']//li")) == 3
    assert doc.xpath("//div[@class='tree']/ul/li[1]//li")[0].text_content() == "child"


# -- progress, settings, commands ---------------------------------------------------------------


@pytest.mark.crawl
def test_progress_lines_and_stats(demo: Demo) -> None:
    lines = [ln for ln in demo.crawl.log.splitlines() if "wisdom_scrapy: fed " in ln]
    assert len(lines) >= 2  # at least one tick (1 s) and the final line
    assert "(final)" in lines[-1]
    stats = demo.crawl.stats
    assert f"fed {stats['wisdom/pages_fed']} pages" in lines[-1]  # the stat, as it is
    assert f"links dropped {stats['wisdom/focus/dropped']}" in lines[-1]
    with open_store(demo.store_uri) as store:
        pages = store.page_count(demo.site)
    assert f"store 1 site(s) {pages} pages" in lines[-1]
    # the test's stats dump runs at spider_closed, maybe before the final line: a late tick's
    assert 0 < stats["wisdom/store/pages"] <= pages
    assert "wisdom/warmup/sites" in stats
    # whether a tick fell inside the warm-up depends on the machine's speed (a fast machine
    # is warm within the first second); a tick that did names the site and what it waits for
    for line in lines:
        if "warming up" in line:
            assert f"warming up {demo.site} (" in line and "held until" in line, line


def test_report_uri_setting_is_validated() -> None:
    from scrapy.settings import Settings

    assert WisdomSettings.from_settings(Settings()).report_uri == ""
    ok = Settings({"WISDOM_REPORT_URI": "file:///tmp/r.html"})
    assert WisdomSettings.from_settings(ok).report_uri == "file:///tmp/r.html"
    for bad in ("s3://bucket/r.html", "file://relative/r.html", "file://"):
        with pytest.raises(SettingsError, match="WISDOM_REPORT_URI"):
            WisdomSettings.from_settings(Settings({"WISDOM_REPORT_URI": bad}))


def test_commands_are_registered_entry_points() -> None:
    found = {e.name: e.value for e in entry_points(group="scrapy.commands")}
    assert found["wisdom-show"] == "wisdom_scrapy.commands:ShowCommand"
    assert found["wisdom-report"] == "wisdom_scrapy.commands:ReportCommand"
    assert found["wisdom-stats"] == "wisdom_scrapy.commands:StatsCommand"


@pytest.mark.crawl
def test_commands_outside_a_project_with_help(tmp_path: Path) -> None:
    listing = scrapy(cwd=tmp_path).stdout
    for name in ("wisdom-show", "wisdom-report", "wisdom-stats"):
        assert name in listing
    show_help = scrapy("wisdom-show", "--help", cwd=tmp_path).stdout
    for option in ("--store", "--url", "--site", "--output", "--cleaner", "--encoding"):
        assert option in show_help
    assert "--store" in scrapy("wisdom-report", "--help", cwd=tmp_path).stdout
    assert "--json" in scrapy("wisdom-stats", "--help", cwd=tmp_path).stdout


@pytest.mark.crawl
def test_stats_and_report_commands_on_the_crawled_store(demo: Demo, tmp_path: Path) -> None:
    done = scrapy("wisdom-stats", "--store", demo.store_uri, "--json")
    assert done.returncode == 0, done.stderr
    (row,) = [json.loads(line) for line in done.stdout.splitlines()]
    with open_store(demo.store_uri) as store:
        snapshot = store.snapshot(demo.site)
        links = sum(len(v) for v in store.links(demo.site).values())
    assert row["site"] == demo.site
    assert row["pages"] == snapshot.n_pages == demo.crawl.stats["wisdom/pages_fed"]
    assert row["vocabulary"] == snapshot.n_terms >= len(snapshot.values)
    assert row["links"] == links
    assert row["report"] is True
    table = scrapy("wisdom-stats", "--store", demo.store_uri).stdout
    assert demo.site in table and str(row["vocabulary"]) in table

    out = tmp_path / "again" / "report.html"
    done = scrapy("wisdom-report", "--store", demo.store_uri, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out.resolve())
    rebuilt = lxml.html.parse(str(out)).getroot()
    original = lxml.html.parse(str(demo.report)).getroot()
    for part in ("structure", "redundant-blocks", "crawl-figures"):
        xpath = f"//div[@class='{part}']"
        assert rebuilt.xpath(xpath)[0].text_content() == original.xpath(xpath)[0].text_content()

    bad = scrapy("wisdom-report", "--store", demo.store_uri, "--site", "nowhere:1")
    assert bad.returncode != 0 and "nowhere:1" in bad.stderr


@pytest.mark.crawl
def test_show_command_fetches_a_url(demo: Demo, tmp_path: Path) -> None:
    from wisdom_scrapy.testing import StaticServer

    with StaticServer(demo.site_dir, port=int(demo.site.rsplit(":", 1)[1])) as server:
        url = server.url + "index.html"
        out = tmp_path / "index-view.html"
        done = scrapy("wisdom-show", url, "--store", demo.store_uri, "-o", str(out))
    assert done.returncode == 0, done.stderr
    doc = lxml.html.parse(str(out)).getroot()
    head = " ".join(doc.xpath("//div[@class='wv-head']")[0].text_content().split())
    assert f"site entropies from {demo.crawl.stats['wisdom/pages_fed']} pages" in head
    assert doc.xpath("//*[contains(@class, 'wb-toc')]")
    with open_store(demo.store_uri) as store:  # shown, not learned from
        assert store.page_count(demo.site) == demo.crawl.stats["wisdom/pages_fed"]
    failed = scrapy("wisdom-show", "http://127.0.0.1:1/x.html", "--store", demo.store_uri,
                    "-o", str(tmp_path / "none.html"))  # fmt: skip
    assert failed.returncode == 1 and not (tmp_path / "none.html").exists()


def test_report_data_round_trip_on_every_backend(new_store: Callable[[], TermStore]) -> None:
    """What a crawl stores for the report (``put_records(site, "report")``) comes back whole
    from every backend, and the report drawn from it shows the store's own figures."""
    from wisdom_scrapy.engine.writes import feed_page
    from wisdom_scrapy.report import REPORT_KIND, load_report_data

    store = new_store()
    site = "example.test"
    for k in range(3):
        page = f"<html><body><p>common words here</p><p>page {k} unique{k}</p></body></html>"
        feed_page(store, page, f"http://{site}/{k}.html")
    assert load_report_data(store, site).pages_analysed == 0  # nothing stored yet
    data = SiteReportData(
        site, pages_analysed=3, redundant={"html/body/p": [3, 51, "common words here", "p.x"]},
        page_entropy=[0.5, float("nan")], crawl={"wisdom/pages_fed": 3.0},
        items={"article": 2, "toc": 1}, articles_listed=2,
        tocs=[{"url": f"http://{site}/0.html", "hub": 2.0, "articles": 2, "only": 2}],
    )  # fmt: skip
    store.put_records(site, REPORT_KIND, {"latest": data.to_bytes()})
    back = load_report_data(store, site)
    assert back.redundant == data.redundant and back.crawl == data.crawl
    assert (back.items, back.tocs, back.articles_listed) == (data.items, data.tocs, 2)
    assert back.page_entropy[0] == 0.5 and back.page_entropy[1] != back.page_entropy[1]  # NaN
    doc = lxml.html.fromstring(render_report([back], store))
    facts = doc.xpath("//section[@class='site']/p")[0].text_content()
    assert f"{store.page_count(site)} pages in the store" in facts
    assert f"{store.snapshot(site).n_terms} distinct terms" in facts  # unique0..2 included


@pytest.mark.crawl
def test_show_file_needs_a_site_when_the_store_has_several(demo: Demo, tmp_path: Path) -> None:
    other = f"sqlite:///{tmp_path / 'two.db'}"
    with open_store(other) as store:
        from wisdom_scrapy.engine.writes import feed_page

        feed_page(store, "<p>one</p>", "http://a.test/")
        feed_page(store, "<p>two</p>", "http://b.test/")
    page = str(demo.site_dir / "index.html")
    done = scrapy("wisdom-show", page, "--store", other, "-o", str(tmp_path / "v.html"))
    assert done.returncode != 0 and "a.test, b.test" in done.stderr
    done = scrapy("wisdom-show", page, "--store", other, "--site", "c.test")
    assert done.returncode != 0 and "c.test" in done.stderr
    done = scrapy("wisdom-show", page, "--store", other, "--site", "a.test",
                  "-o", str(tmp_path / "v.html"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    head = lxml.html.parse(str(tmp_path / "v.html")).getroot().xpath("//div[@class='wv-head']")
    assert "single-page mode" in head[0].text_content()  # a.test knows 1 page: no entropy


@pytest.mark.crawl
def test_view_strikes_out_what_the_chosen_cleaner_removes(demo: Demo) -> None:
    """``WISDOM_CLEANER`` / ``--cleaner``: the struck-out text is that cleaner's removal."""
    from wisdom_scrapy.engine.cleaning import Cleaners

    url = demo.article()["url"]
    body = demo.local_file(url).read_bytes()
    removed = {}
    with open_store(demo.store_uri) as store:
        for name in ("wisdom", "infodiscoverer"):
            cleaners = Cleaners(name, store)
            html = page_view(body, url, store, site=demo.site, analyze=cleaners.analyzer(),
                             cleaner=name)
            doc = lxml.html.fromstring(html)
            head = doc.xpath("string(//div[@class='wv-head'])")
            assert f"cleaner {name}" in " ".join(head.split())
            removed[name] = " ".join(
                " ".join(e.text_content() for e in doc.xpath("//*[@class='wx']")).split()
            )
    assert removed["wisdom"] and removed["infodiscoverer"]
    assert removed["wisdom"] != removed["infodiscoverer"]


def test_a_sites_report_data_is_its_part_of_the_site_context_for_the_whole_crawl() -> None:
    """A site's report data is the report's part of the site's context, listed in the order
    the report made it (not the order the crawl first saw the sites), and leaving the site does
    not drop it."""
    from scrapy.utils.test import get_crawler

    from wisdom_scrapy.engine.sites import SITE_HORIZON
    from wisdom_scrapy.extension import WisdomExtension
    from wisdom_scrapy.report import REPORT, WisdomReportExtension

    crawler = get_crawler(settings_dict={"WISDOM_STORE_URI": "memory://"})
    extension = WisdomExtension.from_crawler(crawler)
    try:
        report = WisdomReportExtension(crawler, "")
        report.runtime = extension.runtime
        sites = extension.runtime.sites
        sites.get("a.test")  # the crawl sees a.test first, the report b.test
        b, a = report.data("b.test"), report.data("a.test")
        assert report.sites() == [b, a] and report.data("a.test") is a
        for site in ("a.test", "b.test") + ("elsewhere.test",) * (SITE_HORIZON + 1):
            sites.fed(site, extension.runtime.letting_go)
        assert REPORT.of(sites.get("a.test")) is a and report.sites() == [b, a]
    finally:
        extension.runtime.close()
