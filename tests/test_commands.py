"""The ``scrapy`` commands as a user runs them, in a project made in a temporary folder: what
``scrapy version`` loads, ``scrapy settings`` with the add-on, a misspelled ``WISDOM_*`` setting,
where ``wisdom-show`` writes its file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SETTINGS = """
BOT_NAME = "userproject"
SPIDER_MODULES = ["userproject.spiders"]
ADDONS = {"wisdom_scrapy.Addon": 500}
ROBOTSTXT_OBEY = False
TELNETCONSOLE_ENABLED = False
"""

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


HEAVY = ("numpy", "scipy", "jieba", "nltk", "redis", "wisdom_scrapy.dom",
         "wisdom_scrapy.settings", "wisdom_scrapy.store")  # fmt: skip


def test_scrapy_version_loads_the_commands_and_nothing_heavy(project: Path) -> None:
    """Scrapy imports every entry-point command for any command: ours must cost next to
    nothing (issue 33's start-up target), and the package's public names still load."""
    code = (
        "import sys\nfrom scrapy.cmdline import execute\n"
        "try:\n    execute(['scrapy', 'version'])\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} + ('wisdom_scrapy.commands',) if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    assert done.stdout.splitlines() == ["Scrapy " + __import__("scrapy").__version__,
                                        "['wisdom_scrapy.commands']"]  # fmt: skip
    code = "from wisdom_scrapy import PageItem, Addon, analyze_page, TermStore; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout == "ok\n"


# ------------------------------------------------------------------------------ settings


def test_scrapy_settings_shows_what_the_crawl_uses(project: Path) -> None:
    """``scrapy settings`` applies the project's add-ons as a crawl does: the values printed
    are the crawl's (issue 35 item 3), and a value set by the project or ``-s`` still wins."""

    def get(name: str, *args: str) -> str:
        done = scrapy(project, "settings", "--get", name, *args)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    assert get("DOWNLOAD_MAXSIZE") == str(10 * 1024 * 1024)
    assert get("LOG_FORMATTER") == "wisdom_scrapy.logformatter.WisdomLogFormatter"
    assert get("WISDOM_FOCUS") == "drop"
    assert get("DOWNLOAD_MAXSIZE", "-s", "WISDOM_MAX_PAGE_BYTES=5000") == "5000"
    assert get("DOWNLOAD_MAXSIZE", "-s", "DOWNLOAD_MAXSIZE=77") == "77"
    assert get("DOWNLOAD_MAXSIZE", "-s", "ADDONS={}") == str(1024**3)  # Scrapy's own default
    assert "WisdomFeedMiddleware" in get("SPIDER_MIDDLEWARES")
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
def test_a_setting_error_stops_the_crawl_with_one_clear_line(project: Path, setting: str,
                                                              message: str) -> None:
    done = scrapy(project, "crawl", "pages", "-s", "WISDOM_STORE_URI=memory://", "-s", setting)
    assert done.returncode == 1
    errors = [line.split("] ", 1)[1] for line in done.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and errors[0].endswith("; the crawl does not start"), done.stderr
    assert errors[0].startswith(f"ERROR: wisdom_scrapy: {message}")
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr
