"""The ``scrapy`` commands as a user runs them, in a project made in a temporary folder: what
``scrapy version`` loads, ``scrapy wisdom-settings`` with the add-on, a misspelled ``WISDOM_*``
setting, where ``wisdom-show`` writes its file."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: the project's settings module: the add-on line and nothing else of wisdom_scrapy's
SETTINGS = "".join(f"{name} = {value!r}\n" for name, value in {
    "BOT_NAME": "userproject", "SPIDER_MODULES": ["userproject.spiders"],
    "ADDONS": {"wisdom_scrapy.Addon": 500}, "TELNETCONSOLE_ENABLED": False,
}.items())  # fmt: skip

SPIDER = """
import scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"
    start_urls = ["http://127.0.0.1:9/"]  # never fetched: these tests' crawls do not start
"""


def scrapy(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``scrapy`` executable (the console script installed beside this Python) in ``root``."""
    executable = Path(sys.executable).parent / "scrapy"
    assert executable.is_file(), f"no scrapy console script beside {sys.executable}"
    return subprocess.run([str(executable), *args], cwd=root, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Scrapy project with the add-on line and no spider: ``scrapy.cfg`` and settings."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = userproject.settings\n")
    package = tmp_path / "userproject"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "spiders" / "__init__.py").write_text(SPIDER)
    (package / "settings.py").write_text(SETTINGS)
    return tmp_path


# ------------------------------------------------------------------------------ start-up


HEAVY = ("numpy", "scipy", "jieba", "nltk", "redis", "wisdom_scrapy.page.model",
         "wisdom_scrapy.settings", "wisdom_scrapy.store")  # fmt: skip


def _loaded_after(project: Path, argv: list[str]) -> list[str]:
    """Run ``scrapy ARGV`` in a fresh interpreter in ``project``; the last line it prints: which
    of :data:`HEAVY` and the command module were imported by then."""
    code = (
        "import sys\nfrom scrapy.cmdline import execute\n"
        f"try:\n    execute({['scrapy', *argv]!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} + ('wisdom_scrapy.commands',) if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    return done.stdout.splitlines()


@pytest.mark.crawl
@pytest.mark.parametrize("argv", [["version"], ["list"], ["crawl", "--help"]])
def test_commands_load_ours_and_nothing_heavy(project: Path, argv: list[str]) -> None:
    """Scrapy imports every entry-point command for any command: ours must cost next to
    nothing (issue 33's start-up target), nor may a command that lists or describes the
    spiders load the add-on's engine."""
    lines = _loaded_after(project, argv)
    assert lines[-1] == "['wisdom_scrapy.commands']", lines
    if argv == ["version"]:
        assert lines[0] == "Scrapy " + __import__("scrapy").__version__
    if argv == ["list"]:
        assert lines[0] == "pages"


@pytest.mark.crawl
def test_the_addon_imports_neither_stemmer_nor_segmenter() -> None:
    """Importing the add-on (any command that builds a crawler does) loads the crawl's
    components, but not nltk, jieba or parasail: the stemmer and the segmenter load with the
    first terms, parasail with the first sitemap. The package's public names still load."""
    code = (
        "import sys, wisdom_scrapy.addon\n"
        "print(sorted(m for m in ('nltk', 'jieba', 'parasail', 'sklearn') if m in sys.modules))\n"
        "from wisdom_scrapy import PageItem, Addon, analyze_page, TermStore; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout == "[]\nok\n"


# ------------------------------------------------------------------------------ settings


@pytest.mark.crawl
def test_wisdom_settings_shows_what_the_crawl_uses(project: Path) -> None:
    """``scrapy wisdom-settings`` applies the project's add-ons as a crawl does: the values
    printed are the crawl's (issue 35 item 3), and a value set by the project or ``-s`` still
    wins. Scrapy's own ``scrapy settings`` is not replaced (issue 34): it still prints the
    settings before any add-on ran."""

    def get(name: str, *args: str, command: str = "wisdom-settings") -> str:
        done = scrapy(project, command, "--get", name, *args)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    assert get("DOWNLOAD_MAXSIZE") == str(10 * 1024 * 1024)
    assert get("LOG_FORMATTER") == "wisdom_scrapy.logformatter.WisdomLogFormatter"
    assert get("WISDOM_FOCUS") == "drop"
    assert get("DOWNLOAD_MAXSIZE", "-s", "WISDOM_MAX_PAGE_BYTES=5000") == "5000"
    assert get("DOWNLOAD_MAXSIZE", "-s", "DOWNLOAD_MAXSIZE=77") == "77"
    assert get("DOWNLOAD_MAXSIZE", "-s", "ADDONS={}") == str(1024**3)  # Scrapy's own default
    assert "WisdomFeedMiddleware" in get("SPIDER_MIDDLEWARES")
    assert get("DOWNLOAD_MAXSIZE", command="settings") == str(1024**3)  # Scrapy's, untouched
    assert get("WISDOM_FOCUS", command="settings") == "None"
    with (project / "userproject" / "settings.py").open("a") as settings:
        settings.write("LOG_FORMATTER = 'scrapy.logformatter.LogFormatter'\n")
    assert get("LOG_FORMATTER") == "scrapy.logformatter.LogFormatter"  # the project's own


def test_a_misspelled_setting_is_named_with_the_closest_one() -> None:
    from scrapy.settings import Settings

    from wisdom_scrapy.settings import SettingsError, WisdomSettings

    with pytest.raises(SettingsError, match=r"^WISDOM_FOCSU is not a wisdom_scrapy setting: "
                                            r"did you mean WISDOM_FOCUS\?"):  # fmt: skip
        WisdomSettings.from_settings(Settings({"WISDOM_FOCSU": "off"}))
    with pytest.raises(SettingsError) as caught:
        WisdomSettings.from_settings(Settings({"WISDOM_ZZZ": 1, "WISDOM_MAX_PAGE_BYTE": 9}))
    assert str(caught.value).startswith(
        "WISDOM_MAX_PAGE_BYTE is not a wisdom_scrapy setting: did you mean "
        "WISDOM_MAX_PAGE_BYTES?; WISDOM_ZZZ is not a wisdom_scrapy setting (")
    assert WisdomSettings.from_settings(Settings({"WISDOM_FOCUS": "off"})).focus == "off"


@pytest.mark.parametrize(("setting", "message"), [
    ("WISDOM_FOCSU=off", "WISDOM_FOCSU is not a wisdom_scrapy setting: did you mean "
                         "WISDOM_FOCUS? (every setting: docs/settings.md)"),
    ("WISDOM_FOCUS=bogus", "WISDOM_FOCUS='bogus': use one of 'drop', 'deprioritize', 'off'"),
    ("WISDOM_STORE_URI=sqlite:////dev/null/w.db", "WISDOM_STORE_URI='sqlite:////dev/null/w.db': "),
])  # fmt: skip
@pytest.mark.crawl
def test_a_setting_error_stops_the_crawl_with_one_clear_line(project: Path, setting: str,
                                                              message: str) -> None:
    done = scrapy(project, "crawl", "pages", "-s", "WISDOM_STORE_URI=memory://", "-s", setting)
    assert done.returncode == 1
    errors = [line.split("] ", 1)[1] for line in done.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and errors[0].endswith("; the crawl does not start"), done.stderr
    assert errors[0].startswith(f"ERROR: wisdom_scrapy: {message}")
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr


# ------------------------------------------------------------------------------ wisdom-show


@pytest.mark.crawl
def test_wisdom_show_writes_into_the_project_data_directory(project: Path) -> None:
    from wisdom_scrapy.engine.writes import feed_page
    from wisdom_scrapy.store import open_store

    uri = f"sqlite:///{project / 'store.db'}"
    with open_store(uri) as store:
        feed_page(store, "<p>one page</p>", "http://a.test/")
    page = project / "page.html"
    page.write_text("<html><body><h1>Title</h1><p>Some text of the page.</p></body></html>")
    done = scrapy(project, "wisdom-show", str(page), "--store", uri, "--url", "http://a.test/p")
    assert done.returncode == 0, done.stderr[-2000:]
    written = Path(done.stdout.strip())
    assert written.parent == project / ".scrapy" and written.name.startswith("wisdom-view-")
    assert "Some text of the page." in written.read_text(encoding="utf-8")
    assert not list(project.glob("wisdom-view-*"))  # nothing in the project's root


@pytest.mark.crawl
def test_the_view_of_long_preformatted_lines_fits_the_window(tmp_path: Path) -> None:
    """A page's ``<pre>`` line of 600 characters, and a word of 400: the view stays as wide as
    Chromium's window (its width measured in the browser, at 800 pixels)."""
    from wisdom_scrapy.analysis.annotated import page_view

    code = " ".join(f"value_{k} = compute(value_{k - 1})" for k in range(20))
    page = (f"<html><body><h1>Code</h1><pre>{code}</pre><p>{'x' * 400}</p>"
            "<p>A paragraph of ordinary text after the code.</p></body></html>")  # fmt: skip
    view = page_view(page, "http://a.test/code.html")
    assert code in view
    # measured by a script the view's CSP would block: the test takes the CSP out
    view = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", view)
    view = view.replace("</body>", "<script>document.body.setAttribute('data-width', "
                        "document.documentElement.scrollWidth)</script></body>")  # fmt: skip
    path = tmp_path / "view.html"
    path.write_text(view, encoding="utf-8")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is missing: ./scripts/test installs the Debian package"
    dom = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=800,600", "--dump-dom",
         path.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    width = re.search(r'data-width="(\d+)"', dom)
    assert width is not None, dom[-2000:]
    assert int(width.group(1)) <= 800
