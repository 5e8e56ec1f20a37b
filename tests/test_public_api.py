import wisdom_scrapy


def test_public_api_is_pinned():
    # Benchmarks and users import these names; changing them is a breaking change.
    assert wisdom_scrapy.__all__ == [
        "Addon",
        "ArticleItem",
        "PageAnalysis",
        "PageItem",
        "SettingsError",
        "SiteStructureItem",
        "SitemapItem",
        "StoreError",
        "TermStore",
        "TocItem",
        "WisdomExtension",
        "WisdomPipeline",
        "__version__",
        "analyze_page",
        "count_terms",
        "extract_terms",
        "feed_page",
        "open_store",
    ]
    for name in wisdom_scrapy.__all__:
        assert getattr(wisdom_scrapy, name) is not None


def test_analyze_page_single_page_mode_finds_an_article():
    paragraphs = "".join(
        f"<p>Paragraph {i} tells the reader something long enough to be an article body, "
        "with several clauses, commas, and a full stop.</p>"
        for i in range(8)
    )
    html = (
        "<html><body><nav><a href='/a'>Home</a> <a href='/b'>News</a></nav>"
        f"<div class='story'><h1>Title</h1>{paragraphs}</div>"
        "<footer><a href='/c'>Contact</a> © Example</footer></body></html>"
    )
    a = wisdom_scrapy.analyze_page(html, "http://example.org/story.html")
    assert a.role == "article" and a.single_page
    assert "Paragraph 0 tells" in a.article_text and "Paragraph 7" in a.article_text
    assert "Contact" not in a.article_text and "Home" not in a.article_text
