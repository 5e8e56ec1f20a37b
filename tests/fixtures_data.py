"""The vendored real pages of ``tests/fixtures`` that are packed (each directory's README says
where they come from and under which licence)."""

from __future__ import annotations

import tarfile
from functools import cache
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@cache
def erikmcclure_blog() -> dict[str, bytes]:
    """All 118 pages of the erikmcclure.com blog (Hugo, Apache-2.0), path → HTML bytes, in path
    order: packed with xz (0.35 MB for 5.5 MB of HTML) because every page repeats the template."""
    pages = {}
    with tarfile.open(FIXTURES / "sites" / "erikmcclure.tar.xz") as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member)
            if data is not None:
                pages[member.name.removeprefix("erikmcclure/")] = data.read()
    return dict(sorted(pages.items()))
