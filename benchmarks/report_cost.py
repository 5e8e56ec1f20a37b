"""What the site report and the annotated view cost, next to the analysis they show.

Over every page of a site read from disk (no HTTP, no Scrapy engine): all pages are fed into a
memory store first (so every page is analysed warm, as in a crawl past its warm-up), then each
page is, one at a time and each step timed with ``time.perf_counter``:

* **analysis**: ``analyze_page`` on the page model with the site's entropy snapshot (what the
  crawl does per page);
* **report**: ``SiteReportData.observe`` on that analysis (what ``WisdomReportExtension`` adds
  per page during a crawl: the page's redundant blocks, counted by tag path);
* **view**: ``render_page_view`` (what ``scrapy wisdom-show`` adds to the analysis: node
  features again, the page rebuilt as escaped HTML).

Then the whole report is rendered once (``render_report`` with the store: entropies, link graph,
SVG). Sites: the demo news site (built in a temporary folder) and the Python 3.11 docs
(``/usr/share/doc/python3.11/html``, package ``python3.11-doc``), when installed.

    python benchmarks/report_cost.py
    python benchmarks/report_cost.py --sites demo --json rc.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import environment, markdown_table, write_json
else:
    from ._common import environment, markdown_table, write_json

from sample_project.demo_site import SITE_DIR, build_demo_site
from wisdom_scrapy.analysis.annotated import render_page_view
from wisdom_scrapy.analysis.page_analysis import analyze_page
from wisdom_scrapy.engine.writes import feed_model
from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.report import SiteReportData, render_report
from wisdom_scrapy.store import open_store

PYDOC = Path("/usr/share/doc/python3.11/html")


def measure(name: str, root: Path, site: str) -> dict[str, Any]:
    """Feed every page of ``root``, then time analysis, report observation and view per page."""
    files = sorted(p for p in root.rglob("*.html") if p.is_file())
    store = open_store("memory://")
    models = []
    for path in files:
        url = f"http://{site}/{path.relative_to(root).as_posix()}"
        model = PageModel.from_html(path.read_bytes(), url)
        feed_model(store, model, site=site)
        models.append((url, model))
    snapshot = store.snapshot(site)
    data = SiteReportData(site)
    analysis_s = observe_s = view_s = 0.0
    clock = time.perf_counter
    for url, model in models:
        t0 = clock()
        analysis = analyze_page(None, url, model=model, snapshot=snapshot)
        t1 = clock()
        data.observe(analysis)
        t2 = clock()
        render_page_view(analysis, snapshot, site=site)
        t3 = clock()
        analysis_s += t1 - t0
        observe_s += t2 - t1
        view_s += t3 - t2
    t0 = clock()
    html = render_report([data], store)
    report_s = clock() - t0
    n = max(len(models), 1)
    return {
        "site": name,
        "pages": len(models),
        "analysis_ms": 1000 * analysis_s / n,
        "observe_ms": 1000 * observe_s / n,
        "observe_ratio": observe_s / analysis_s if analysis_s else 0.0,
        "view_ms": 1000 * view_s / n,
        "view_ratio": view_s / analysis_s if analysis_s else 0.0,
        "report_s": report_s,
        "report_kb": len(html.encode()) / 1024,
        "redundant_paths": len(data.redundant),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", default="demo,pydoc", help="comma-separated: demo, pydoc")
    parser.add_argument("--json", type=Path, help="write all figures to this JSON file")
    args = parser.parse_args()
    rows = []
    wanted = args.sites.split(",")
    with tempfile.TemporaryDirectory(prefix="wisdom-report-cost-") as tmp:
        if "demo" in wanted:
            build_demo_site(Path(tmp))
            rows.append(measure("demo", Path(tmp) / SITE_DIR, "demo.test"))
        if "pydoc" in wanted and PYDOC.is_dir():
            rows.append(measure("pydoc", PYDOC, "docs.python.test"))
    print(markdown_table(
        ["site", "pages", "analysis ms/page", "report ms/page (× analysis)",
         "view ms/page (× analysis)", "report render s", "report KB", "block paths"],
        [[r["site"], r["pages"], f"{r['analysis_ms']:.1f}",
          f"{r['observe_ms']:.2f} ({r['observe_ratio']:.3f})",
          f"{r['view_ms']:.1f} ({r['view_ratio']:.2f})", f"{r['report_s']:.2f}",
          f"{r['report_kb']:.0f}", r["redundant_paths"]] for r in rows],
    ))  # fmt: skip
    if args.json:
        write_json(args.json, {"environment": environment(), "rows": rows})


if __name__ == "__main__":
    main()
