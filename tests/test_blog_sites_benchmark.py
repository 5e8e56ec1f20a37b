"""The blog-sites benchmark's gold (benchmarks/blog_sites.py): URL paths, roles, body text and
alias stubs read as its README says, on small real-shaped sites written here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.blog_sites import BlogSite, gold_text, load_sites, site_gold, url_path

POST = """<html><head><title>T</title><style>p{color:red}</style></head><body>
<nav><a href="/">Home</a> <a href="/blog/">Blog</a></nav>
<main><article><h1>A post</h1><div class="body"><p>First paragraph of the post.</p>
<script>var tracking = 1;</script><p>Second<br>line, <em>emphasis</em> inline.</p></div>
</article></main>
<footer>Copyright</footer></body></html>"""
STUB = ('<html><head><meta http-equiv="refresh" content="0; url=/blog/a/">'
        "</head><body></body></html>")


def _site(tmp_path: Path) -> BlogSite:
    pages = {"index.html": "<html><body><a href='/blog/a/'>A post</a></body></html>",
             "blog/a/index.html": POST, "blog/old.html": STUB,
             "blog/b/index.html": STUB, "about/index.html": POST}  # fmt: skip
    for name, html in pages.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(html, "utf-8")
    return BlogSite("t", tmp_path, "article > div.body", re.compile(r"^/blog/[^/]+/$"),
                    re.compile(r"^/$|^/blog/$"), "/", "en")  # fmt: skip


def test_url_path_is_what_a_static_server_serves(tmp_path: Path) -> None:
    assert url_path(tmp_path / "index.html", tmp_path) == "/"
    assert url_path(tmp_path / "blog" / "x" / "index.html", tmp_path) == "/blog/x/"
    assert url_path(tmp_path / "weekly" / "w.html", tmp_path) == "/weekly/w.html"


def test_gold_text_is_the_body_element_without_script_one_line_per_block() -> None:
    assert gold_text(POST, "article > div.body") == (
        "First paragraph of the post.\nSecond\nline, emphasis inline.")
    assert gold_text(POST, "div.missing") is None


def test_site_gold_roles_by_url_rule_and_alias_stubs_left_out(tmp_path: Path) -> None:
    gold = site_gold(_site(tmp_path))
    # /blog/b/ matches the post rule but only redirects; /about/ has no rule; /blog/old.html
    # matches neither rule
    assert {p: g.role for p, g in gold.items()} == {"/": "toc", "/blog/a/": "article"}
    assert "tracking" not in gold["/blog/a/"].text and "Copyright" not in gold["/blog/a/"].text


def test_a_post_whose_body_selector_matches_nothing_stops_the_benchmark(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (tmp_path / "blog" / "c").mkdir()
    (tmp_path / "blog" / "c" / "index.html").write_text("<html><body><p>x</p></body></html>")
    with pytest.raises(SystemExit, match="/blog/c/"):
        site_gold(site)


def test_sites_json_is_read_with_its_rules(tmp_path: Path) -> None:
    entry = {"body_css": "main", "post_url_re": "^/p/", "list_url_re": "^/$", "start": "/",
             "language": "zh"}  # fmt: skip
    (tmp_path / "sites.json").write_text(json.dumps({"s": entry}), "utf-8")
    site = load_sites(tmp_path)["s"]
    assert site.directory == tmp_path / "s" and site.cjk
    assert site.role_of("/p/x") == "article" and site.role_of("/") == "toc"
    assert site.role_of("/about/") is None


def test_demo_role_figures_count_every_page_and_the_warm_crawls_changes(tmp_path: Path) -> None:
    from benchmarks.demo_articles import load_roles, role_figures

    pages = {"/a.html": ("article", "article"), "/b.html": ("article", "article"),
             "/tag/x.html": ("toc", "tag"), "/print/a.html": ("other", "print")}  # fmt: skip
    truth = {"pages": {p: {"role": r, "kind": k} for p, (r, k) in pages.items()}}
    (tmp_path / "ground_truth.json").write_text(json.dumps(truth), "utf-8")

    def items(name: str, roles: dict[str, str]) -> Path:
        lines = [json.dumps({"url": f"http://h:1{p}", "role": r}) for p, r in roles.items()]
        (tmp_path / name).write_text("\n".join([*lines, json.dumps({"sitemap": 1})]), "utf-8")
        return tmp_path / name

    cold = load_roles(items("cold.jsonl", {"/a.html": "article", "/b.html": "article",
                                           "/tag/x.html": "article", "/print/a.html": "article"}))
    warm = load_roles(items("warm.jsonl", {"/a.html": "article", "/b.html": "article",
                                           "/tag/x.html": "toc", "/print/a.html": "other"}))
    figures = role_figures(tmp_path, cold, warm)
    assert figures["article"] == {"precision": 0.5, "recall": 1.0, "emitted": 4, "gold": 2}
    assert figures["toc"]["recall"] == 0.0
    assert figures["false_articles"] == {"tag": 1, "print": 1}
    assert figures["changed_on_warm_crawl"] == 2
