from collections import Counter

from wisdom_scrapy import feed_page, open_store
from wisdom_scrapy.dom import PageModel
from wisdom_scrapy.feed import feed_model
from wisdom_scrapy.store.base import Link
from wisdom_scrapy.text import count_terms


def page_counts(html):
    return PageModel.from_html(html, "http://example.org/docs/page.html").page_counts()

PAGE = b"""<!DOCTYPE html><html><head><title>Crawling entropy</title>
<base href="http://example.org/docs/">
<script>var hidden = "javascript terms";</script><style>.menu { color: red }</style></head>
<body><!-- a comment about comments -->
<div id="menu"><a href="index.html">Home</a> <a href="/news/">News</a>
 <a href="javascript:void(0)">Print</a> <a href="mailto:a@b.org">Mail</a>
 <a href="#top">Top</a></div>
<div class="article"><h1>Crawling entropy</h1><p>Entropy measures how spread a term is.</p>
<p><a href="http://other.org/x.html#frag"><img src="x.png" alt="Other site"></a></p>
<noscript><p>Enable scripts</p></noscript></div></body></html>"""


def test_page_counts_are_the_visible_text_terms():
    # The title is in <head>: not shown in the page, not counted (it repeats the <h1> anyway).
    visible = "Home News Print Mail Top Crawling entropy Entropy measures how spread a term is."
    counts = page_counts(PAGE)
    assert counts == count_terms([visible])
    assert "javascript" not in counts  # script text is not content
    assert "comment" not in counts


def test_visible_text_equal_to_a_script_is_still_counted():
    html = b"<html><body><script>alpha</script><p>alpha</p><p>alpha</p></body></html>"
    assert page_counts(html) == Counter({"alpha": 2})


def test_fed_links_resolve_against_base_and_skip_non_pages():
    store = open_store("memory://")
    url = "http://example.org/docs/page.html"
    feed_model(store, PageModel.from_html(PAGE, url))
    assert store.links("example.org")[url] == [
        Link("http://example.org/docs/index.html", "Home"),
        Link("http://example.org/news/", "News"),
        Link("http://other.org/x.html", "Other site"),  # image link: its alt text
    ]


def test_str_input_is_utf8_whatever_its_meta_charset_says():
    html = '<html><head><meta charset="gbk"></head><body><p>网站结构</p></body></html>'
    assert page_counts(html) == Counter({"网站": 1, "结构": 1})


def test_feed_page_is_idempotent_and_replaces_changed_pages():
    store = open_store("memory://")
    url = "http://example.org/a.html"
    assert feed_page(store, "<p>first version words</p>", url)
    assert not feed_page(store, "<p>first version words</p>", url)
    assert feed_page(store, "<p>second version</p>", url)
    assert store.page_count("example.org") == 1
    assert store.entropy("example.org", ["word", "second"]) == {"word": 0.0, "second": 0.0}
    tf, _ = store.term_sums("example.org", ["word", "second"])
    assert tf.tolist() == [0.0, 1.0]


def test_feed_page_groups_pages_by_host_and_port():
    store = open_store("memory://")
    feed_page(store, "<p>x</p>", "http://127.0.0.1:8001/a")
    feed_page(store, "<p>x</p>", "http://127.0.0.1:8002/a")
    assert sorted(store.sites()) == ["127.0.0.1:8001", "127.0.0.1:8002"]


def test_feed_page_rejects_empty_and_binary_input_without_raising():
    store = open_store("memory://")
    assert not feed_page(store, b"", "http://example.org/e")
    assert not feed_page(store, "   ", "http://example.org/e")
    feed_page(store, bytes(range(256)) * 40, "http://example.org/bin")
    assert store.page_count("example.org") <= 1
