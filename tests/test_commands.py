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


def scrapy(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``scrapy`` command (the console script's ``scrapy.cmdline.execute``) in ``root``."""
    return subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=root, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Scrapy project with the add-on line and no spider: ``scrapy.cfg`` and settings."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = userproject.settings\n")
    package = tmp_path / "userproject"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "spiders" / "__init__.py").write_text("")
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
