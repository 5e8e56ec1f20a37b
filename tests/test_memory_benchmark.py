"""The memory benchmark's endless site (benchmarks/memory.py ``--endless``): new pages and new
terms forever, so every per-page table of a crawl shows as growth."""

from __future__ import annotations

import re
import urllib.request

from benchmarks.memory import EndlessSite, _letters, endless_page


def test_endless_pages_link_new_pages_and_hold_their_own_terms() -> None:
    page = endless_page(7).decode()
    links = set(re.findall(r'href="(/a/\d+\.html)"', page))
    assert {"/a/22.html", "/a/23.html", "/a/24.html"} <= links  # 3n+1 … 3n+3: never seen
    words = set(re.findall(r"\w+", page))
    next_words = set(re.findall(r"\w+", endless_page(8).decode()))
    own = {f"zz{_letters(8 * 7 + k)}" for k in range(8)}  # page 7's own terms
    assert own <= words and not own & next_words
    assert endless_page(7) == endless_page(7)  # the same page every time


def test_endless_site_serves_pages() -> None:
    with EndlessSite() as start, urllib.request.urlopen(start, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/html")
        assert response.read() == endless_page(0)
