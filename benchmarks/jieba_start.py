"""CPU time of a crawl's first Han run: jieba's import and dictionary, once a process.

A crawl pays it on the first page with Chinese text (pydoc has one Han run, "景太郎", on
``tutorial/controlflow.html``): ``extract_terms`` of a Han run in a fresh process, timed from
after the add-on's term module is imported (CPU time of the process, ms). Each ``--checkout``
is run in turn, ``--runs`` rounds, alternated so that the machine's load falls on all alike;
min and median a checkout. jieba's cache file is made first (a run nobody times), as in any
crawl after the first on a machine.

    python benchmarks/jieba_start.py --checkout /tmp/main --checkout . --runs 6
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

#: what each fresh process runs: the term module imported, then the first Han run timed
PROBE = """
import time
from wisdom_scrapy.page.terms import extract_terms
start = time.process_time()
extract_terms("景太郎")
print((time.process_time() - start) * 1e3)
"""


def first_run_ms(checkout: Path) -> float:
    """CPU ms of the first Han run in a fresh process with ``checkout`` first on the path
    (``-P``: the working directory, perhaps another checkout, is not put before it)."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    out = subprocess.run([sys.executable, "-P", "-c", PROBE], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", type=Path, action="append", required=True)
    ap.add_argument("--runs", type=int, default=6)
    args = ap.parse_args()
    first_run_ms(args.checkout[0])  # jieba's cache file, if none yet
    times: dict[Path, list[float]] = {c: [] for c in args.checkout}
    for _ in range(args.runs):
        for checkout in args.checkout:
            times[checkout].append(first_run_ms(checkout))
    print("| checkout | runs | min CPU ms | median CPU ms |")
    print("| --- | --- | --- | --- |")
    for checkout, ms in times.items():
        print(f"| {checkout} | {len(ms)} | {min(ms):.0f} | {statistics.median(ms):.0f} |")


if __name__ == "__main__":
    main()
