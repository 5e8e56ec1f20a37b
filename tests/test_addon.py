import os

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from wisdom_scrapy import Addon, SettingsError, StoreError, WisdomPipeline
from wisdom_scrapy.addon import COMPONENTS
from wisdom_scrapy.engine.link_graph import StructureTracker
from wisdom_scrapy.engine.waits import ExtractionParams
from wisdom_scrapy.engine.worker_pool import default_workers
from wisdom_scrapy.extension import WisdomExtension
from wisdom_scrapy.middlewares import WisdomAnalysisMiddleware, WisdomFeedMiddleware
from wisdom_scrapy.mining.wisdom import DEFAULT_PARAMS
from wisdom_scrapy.page.urls import host_key
from wisdom_scrapy.settings import WisdomSettings, default_store_uri
from wisdom_scrapy.store import open_store


def test_addon_inserts_every_component():
    settings = Settings()
    Addon().update_settings(settings)
    for name, component, order in COMPONENTS:
        assert settings.getdict(name)[component] == order
    assert settings.getdict("ITEM_PIPELINES")[WisdomPipeline] == 100
    assert settings.getdict("EXTENSIONS")[WisdomExtension] == 100
    assert WisdomAnalysisMiddleware not in settings.getdict("SPIDER_MIDDLEWARES")


FEED_PATH = "wisdom_scrapy.middlewares.WisdomFeedMiddleware"


@pytest.mark.parametrize(
    "listed",
    [
        {"wisdom_scrapy.middlewares.WisdomFeedMiddleware": 10},
        {"wisdom_scrapy.middlewares.WisdomFeedMiddleware": None},
        {WisdomFeedMiddleware: 123},
    ],
)
def test_addon_keeps_what_the_project_listed(listed):
    settings = Settings()
    settings.set("SPIDER_MIDDLEWARES", listed, priority="project")
    Addon().update_settings(settings)
    middlewares = settings.getdict("SPIDER_MIDDLEWARES")
    assert {k: v for k, v in middlewares.items() if k in listed} == listed
    feed_entries = [k for k in middlewares if k in (WisdomFeedMiddleware, FEED_PATH)]
    assert len(feed_entries) == 1  # not added again under another name


def test_settings_defaults():
    s = WisdomSettings.from_settings(Settings())
    assert s.enabled and s.store_uri == default_store_uri() and not s.keep_numbers
    assert s.store_uri.endswith("/.scrapy/wisdom.db")
    assert s.site_key is host_key


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WISDOM_ENABLED", "maybe"),
        ("WISDOM_KEEP_NUMBERS", "sometimes"),
        ("WISDOM_MAX_PAGE_BYTES", "big"),
        ("WISDOM_MAX_PAGE_BYTES", -1),
        ("WISDOM_KMIB_ST", 2.0),
        ("WISDOM_TC_ARTICLE", "high"),
        ("WISDOM_MERGE", "sideways"),
        ("WISDOM_WARMUP_PAGES", -3),
        ("WISDOM_STORE_URI", "wisdom.db"),
        ("WISDOM_SITE_KEY", "no.such.module.func"),
        ("WISDOM_WORKERS", "many"),
        ("WISDOM_WORKERS", -1),
    ],
)
def test_bad_settings_are_errors_that_name_the_setting(name, value):
    with pytest.raises(SettingsError, match=name):
        WisdomSettings.from_settings(Settings({name: value}))


def test_workers_are_off_by_default_and_auto_follows_the_cores():
    assert WisdomSettings.from_settings(Settings()).workers == 0
    auto = WisdomSettings.from_settings(Settings({"WISDOM_WORKERS": "auto"})).workers
    assert auto == default_workers() == max(0, min(len(os.sched_getaffinity(0)) - 1, 4))
    assert WisdomSettings.from_settings(Settings({"WISDOM_WORKERS": "3"})).workers == 3


def test_site_key_can_be_a_function_path():
    s = WisdomSettings.from_settings(Settings({"WISDOM_SITE_KEY": "posixpath.basename"}))
    assert s.site_key("http://a.org/x/y") == "y"


def test_unusable_store_stops_the_crawl_at_start_naming_the_setting(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    crawler = get_crawler(settings_dict={"WISDOM_STORE_URI": f"sqlite:///{blocker}/w.db"})
    with pytest.raises(StoreError, match="WISDOM_STORE_URI"):
        WisdomExtension.from_crawler(crawler)


def test_one_term_vocabulary_for_the_crawl():
    """The link structure's page records and the TOC term index keep terms as ids into one
    vocabulary (a broad crawl's sites repeat one another's words)."""
    extension = WisdomExtension.from_crawler(get_crawler(settings_dict={
        "WISDOM_STORE_URI": "memory://"}))  # fmt: skip
    try:
        assert extension.tracker.vocab is extension.runtime.extractor.terms.vocab
    finally:
        extension.runtime.close()


@pytest.mark.parametrize(("value", "asked"), [
    (True, True), ("true", True), ("True", True), ("1", True), (1, True),
    (False, False), ("false", False), ("0", False), (None, False), ("maybe", False)])
def test_wisdom_analysis_is_read_as_scrapy_reads_a_boolean(value, asked):
    """``-a wisdom_analysis=true`` arrives as a string: it asks, "false" does not (a value
    that is no boolean is a warning and asks nothing)."""
    from scrapy import Spider

    extension = WisdomExtension.from_crawler(get_crawler(settings_dict={
        "WISDOM_STORE_URI": "memory://"}))  # fmt: skip
    try:
        spider = Spider("s")
        if value is not None:
            spider.wisdom_analysis = value  # type: ignore[attr-defined]
        extension._declared(spider)
        assert extension.asked is asked
    finally:
        extension.runtime.close()


def test_disabled_runtime_is_not_configured():
    from scrapy.exceptions import NotConfigured

    crawler = get_crawler(settings_dict={"WISDOM_ENABLED": False})
    with pytest.raises(NotConfigured):
        WisdomFeedMiddleware.from_crawler(crawler)


@pytest.mark.parametrize(("value", "hold", "warm"), [(None, 32, 32), (10, 10, 10), (0, 0, 2)])
def test_one_warm_line(value, hold, warm):
    """WISDOM_WARMUP_PAGES sets the cold-start hold and the warm line together (entropy needs
    two pages, so 0 holds nothing yet a site is warm from its second page); the link analysis
    and the focusing read the same line as the page analysis."""
    ws = WisdomSettings.from_settings(Settings({"WISDOM_WARMUP_PAGES": value}))
    assert (ws.warmup_pages, ws.wisdom.warm_pages) == (hold, warm)
    assert not ws.wisdom.is_warm(warm - 1) and ws.wisdom.is_warm(warm)
    tracker = StructureTracker(open_store("memory://"), params=ws.wisdom)
    assert tracker.params.warm_pages == warm and not tracker.warm("example.org")
    # the engine's own defaults agree with the crawl's
    assert StructureTracker(open_store("memory://")).params.warm_pages == DEFAULT_PARAMS.warm_pages
    assert ExtractionParams().warmup_pages == DEFAULT_PARAMS.warm_pages
