"""The tests need nothing beside the checkout: no test module reads a folder next to the
repository (the team's ``../shared`` data) or an environment variable pointing at outside data.
Real pages the tests need are vendored in ``tests/fixtures`` with their licences; benchmarks may
read larger outside data (benchmarks/README.md says where it comes from)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: What reaching outside the checkout looks like: ``../shared``, a path built from ``"shared"``
#: (``parent / "shared"``), the shared data folder's layout, the benchmark's directory variable,
#: and the benchmarks' own pointers at outside data.
OUTSIDE = re.compile(
    r"\.\./shared|[/(]\s*['\"]shared['\"]|shared/(data|papers)|/work/|WISDOM_ARTICLE_BENCHMARK"
    r"|SHARED_DATA|ARTICLE_BENCHMARK_DIR"
)


def test_no_test_module_reads_outside_the_checkout() -> None:
    found = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if OUTSIDE.search(line) and path != Path(__file__).resolve()
    ]
    assert not found, "tests must use tests/fixtures, not outside data:\n" + "\n".join(found)


def test_the_check_sees_each_form() -> None:
    for line in (
        'BLOG = ROOT.parent / "shared" / "data" / "sites"',
        "see ../shared/data/README.md",
        'os.environ.get("WISDOM_ARTICLE_BENCHMARK")',
        "from benchmarks._common import SHARED_DATA",
    ):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search("shared = lxml_html.fromstring(page)")
    assert not OUTSIDE.search('store.add_page(SITE, "fixed", {"shared": 2})')


def test_vendored_data_keeps_its_licences() -> None:
    """Each vendored directory of real pages carries its source's licence and a README."""
    for folder in ("article-extraction-benchmark", "sites", "pydoc"):
        assert (TESTS / "fixtures" / folder / "README.md").is_file(), folder
    assert "MIT License" in (TESTS / "fixtures/article-extraction-benchmark/LICENSE").read_text()
    assert {p.name for p in (TESTS / "fixtures/sites/LICENSES").iterdir()} >= {
        "ctripfe-LICENSE", "erikmcclure-LICENSE", "flink-web-LICENSE"
    }  # fmt: skip
