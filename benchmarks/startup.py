"""Start-up cost of Scrapy commands with wisdom_scrapy installed against plain Scrapy (issue 33).

Scrapy imports every ``scrapy.commands`` entry point of every installed distribution before it
runs any command, so whatever the package's command module imports is paid by ``scrapy
version``; a project's spiders are imported by ``scrapy list`` and ``scrapy crawl``. Two
configurations, each run ``--runs`` times, interleaved so that the machine's load falls on
both alike; the median wall and CPU (user + system of the child) are printed:

* **plain**: a throw-away Scrapy project (``scrapy startproject``, one ``scrapy.Spider``)
  with the interpreter's site-packages seen through a directory of links that leaves out
  wisdom_scrapy's distribution, so Scrapy finds none of its entry points;
* **wisdom**: this checkout's project (``scrapy.cfg`` at the root: the add-on in ``ADDONS``,
  spiders that yield ``PageItem``), the package and its entry points installed.

Both run ``python -S`` with ``PYTHONPATH`` naming the site directory, so that neither processes
``.pth`` files: the only difference is the package. Usage::

    python benchmarks/startup.py --runs 7
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment, markdown_table, write_json

REPO_ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["version"], ["list"], ["crawl", "--help"])


def _site_without_package(into: Path) -> Path:
    """A directory of links to every entry of site-packages but wisdom_scrapy's own."""
    site = Path(sysconfig.get_paths()["purelib"])
    links = into / "site"
    links.mkdir()
    for entry in site.iterdir():
        if "wisdom_scrapy" not in entry.name:
            (links / entry.name).symlink_to(entry)
    return links


def _plain_project(into: Path) -> Path:
    """``scrapy startproject`` with one plain spider: what a project without the add-on has."""
    subprocess.run(
        [sys.executable, "-m", "scrapy", "startproject", "plain", str(into / "plain")],
        check=True,
        capture_output=True,
    )
    spider = into / "plain" / "plain" / "spiders" / "example.py"
    spider.write_text(
        "import scrapy\n\n\nclass ExampleSpider(scrapy.Spider):\n"
        '    name = "example"\n    start_urls = ["http://127.0.0.1/"]\n'
    )
    return into / "plain"


def _timed(argv: list[str], cwd: Path, pythonpath: str) -> tuple[float, float]:
    """Wall and child CPU seconds of one ``python -S -m scrapy ARGV``."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-S", "-m", "scrapy", *argv],
        cwd=cwd,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def measure(runs: int) -> list[dict[str, object]]:
    """Median wall and CPU seconds of each command in each configuration."""
    found: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        links = _site_without_package(Path(tmp))
        plain = _plain_project(Path(tmp))
        configs = {
            "plain": (plain, str(links)),
            "wisdom": (REPO_ROOT, f"{REPO_ROOT}{os.pathsep}{sysconfig.get_paths()['purelib']}"),
        }
        for argv in COMMANDS:
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
            for _ in range(runs):  # interleaved: the machine's load falls on both alike
                for name, (cwd, path) in configs.items():
                    times[name].append(_timed(argv, cwd, path))
            for name, pairs in times.items():
                found.append({"command": " ".join(argv), "config": name,
                              "wall": statistics.median(t[0] for t in pairs),
                              "cpu": statistics.median(t[1] for t in pairs)})  # fmt: skip
        shutil.rmtree(links)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    results = measure(args.runs)
    print(markdown_table(
        ["command", "config", "wall s (median)", "CPU s (median)"],
        [(r["command"], r["config"], f"{r['wall']:.3f}", f"{r['cpu']:.3f}") for r in results],
    ))  # fmt: skip
    if args.json:
        write_json(args.json, {"environment": environment(), "runs": args.runs,
                               "results": results})  # fmt: skip


if __name__ == "__main__":
    main()
