"""Accuracy gate: article text, headlines and page roles on fixture subsets of real blogs may not
regress.

``tests/fixtures/sites/`` holds 14 pages of each of three real generated blogs (posts, list
pages; their repositories in its README, their licences in ``LICENSES/``, the gold rules in
``sites.json``). :func:`benchmarks.blog_sites.fed_figures` feeds each subset into a memory
store and scores WISDOM's analysis against the theme's own markup, with the metric of
``benchmarks/blog_sites.py``; every figure must stay at or above its floor in
``tests/fixtures/accuracy_floors.json``. The floors are the figures measured when they were
pinned minus 0.01; after a change that improves them, re-pin with
``python benchmarks/blog_sites.py --write-floors`` and say so in the commit.

No crawl and no server: files are fed in path order, so the figures are the same on every run.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from benchmarks.blog_sites import (
    FIXTURE_SITES,
    FLOORS_FILE,
    GATE_MODES,
    fed_figures,
    load_sites,
    site_gold,
)

SITES = load_sites(FIXTURE_SITES)
FLOORS = json.loads(FLOORS_FILE.read_text("utf-8"))["sites"]


@cache
def figures(name: str, mode: str) -> dict[str, float]:
    return fed_figures(SITES[name], mode)


def test_floors_cover_every_fixture_site_and_mode() -> None:
    assert sorted(FLOORS) == sorted(SITES)
    for name, modes in FLOORS.items():
        assert sorted(modes) == sorted(GATE_MODES), name
        for mode in GATE_MODES:
            assert sorted(modes[mode]) == sorted(figures(name, mode)), (name, mode)


def test_every_subset_has_posts_and_list_pages() -> None:
    for name, site in SITES.items():
        pages = [p.relative_to(site.directory) for p in site.directory.rglob("*.html")]
        assert 10 <= len(pages) <= 15, name
        roles = [g.role for g in site_gold(site).values()]
        assert roles.count("article") >= 8 and roles.count("toc") >= 3, name


@pytest.mark.parametrize("mode", GATE_MODES)
@pytest.mark.parametrize("name", sorted(SITES))
def test_figures_stay_above_their_floors(name: str, mode: str) -> None:
    measured = figures(name, mode)
    below = {key: f"{measured[key]:.3f} < floor {floor:.3f}"
             for key, floor in FLOORS[name][mode].items() if measured[key] < floor}  # fmt: skip
    assert not below, (
        f"{name} ({mode}): accuracy regressed: {below}; measure with "
        "python benchmarks/blog_sites.py --write-floors (pins new floors) only if intended")
