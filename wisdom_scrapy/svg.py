"""Hand-built inline SVG charts for the site report: histograms, bar charts, a bipartite graph.

Why by hand rather than matplotlib: the report needs three simple chart types, and building
their SVG directly keeps them small (a few kB, no embedded font glyphs or clip paths), keeps
the package free of a ~40 MB plotting dependency, and — most important for a report full of
page-derived text — keeps every label under this module's control, so each one goes through
:func:`html.escape` on its way out (matplotlib would write titles and tick labels raw into
the SVG text). The charts use the viewer's sans-serif font and no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np

__all__ = ["bars_svg", "histogram_svg", "structure_svg"]

_FONT = 'font-family="sans-serif" font-size="11"'
_SERIES_COLOURS = ("#2962ff", "#00c853", "#d50000", "#ff9100")


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def histogram_svg(
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    bins: int = 20,
    lo: float = 0.0,
    hi: float = 1.0,
    xlabel: str = "",
    width: int = 560,
    height: int = 240,
) -> str:
    """Histogram of one or more series over [lo, hi] (bars of a bin side by side), with a
    legend giving each series' size and mean. NaN values are left out."""
    left, right, bottom = 44, 12, 34
    top = 26 + 14 * len(series)  # the legend sits between the title and the plot
    plot_w, plot_h = width - left - right, height - top - bottom
    edges = np.linspace(lo, hi, bins + 1)
    counts = {}
    for name, values in series.items():
        v = np.asarray(values, dtype=np.float64)
        v = v[~np.isnan(v)]
        counts[name] = (np.histogram(np.clip(v, lo, hi), bins=edges)[0], v)
    peak = max((int(c.max()) for c, _ in counts.values() if len(c)), default=0) or 1
    body = [f'<text x="{left}" y="15" {_FONT} font-weight="bold">{escape(title)}</text>']
    body.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#555"/>'
    )
    for k in range(5):  # x ticks
        x = left + plot_w * k / 4
        body.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 14}" {_FONT} text-anchor="middle">'
            f"{lo + (hi - lo) * k / 4:.2f}</text>"
        )
    body.append(f'<text x="{left - 4}" y="{top + 8}" {_FONT} text-anchor="end">{peak}</text>')
    body.append(f'<text x="{left - 4}" y="{top + plot_h}" {_FONT} text-anchor="end">0</text>')
    if xlabel:
        body.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" {_FONT} text-anchor="middle">'
            f"{escape(xlabel)}</text>"
        )
    n_series = max(len(counts), 1)
    bin_w = plot_w / bins
    for s, (name, (c, v)) in enumerate(counts.items()):
        colour = _SERIES_COLOURS[s % len(_SERIES_COLOURS)]
        bar_w = bin_w / n_series
        for b, count in enumerate(c.tolist()):
            if not count:
                continue
            h = plot_h * count / peak
            x = left + b * bin_w + s * bar_w
            body.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{max(bar_w - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{colour}"><title>{escape(name)}: {count} in '
                f"[{edges[b]:.2f}, {edges[b + 1]:.2f})</title></rect>"
            )
        mean = f", mean {float(v.mean()):.3f}" if len(v) else ""
        lx = left
        ly = 22 + 14 * s
        body.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/>')
        body.append(
            f'<text x="{lx + 14}" y="{ly + 9}" {_FONT}>{escape(name)} (n={len(v)}{mean})</text>'
        )
    return _svg(width, height, body, title)


def bars_svg(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    colour: str = "#d50000",
    unit: str = "",
    width: int = 560,
    label_width: int = 240,
) -> str:
    """Horizontal bar chart, one bar per label (in the order given), value written after it."""
    row = 18
    top = 24
    height = top + row * len(labels) + 8
    plot_w = width - label_width - 70
    peak = max((float(v) for v in values), default=0.0) or 1.0
    body = [f'<text x="4" y="15" {_FONT} font-weight="bold">{escape(title)}</text>']
    for k, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + k * row
        short = label if len(label) <= 42 else "…" + label[-41:]
        w = plot_w * float(value) / peak
        body.append(
            f'<text x="{label_width - 6}" y="{y + 12}" {_FONT} text-anchor="end">'
            f"<title>{escape(label)}</title>{escape(short)}</text>"
        )
        body.append(
            f'<rect x="{label_width}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row - 5}" '
            f'fill="{colour}"/>'
        )
        shown = f"{value:g}" if isinstance(value, int) else f"{float(value):.3g}"
        body.append(
            f'<text x="{label_width + w + 4:.1f}" y="{y + 12}" {_FONT}>'
            f"{escape(shown)}{escape(unit)}</text>"
        )
    return _svg(width, height, body, title)


def _short_url(url: str, site: str) -> str:
    rest = url.split(site, 1)[1] if site and site in url else url
    rest = rest or "/"
    return rest if len(rest) <= 38 else "…" + rest[-37:]


def structure_svg(
    tocs: Sequence[Mapping[str, Any]],
    *,
    site: str = "",
    max_tocs: int = 12,
    max_articles: int = 40,
    width: int = 900,
) -> str:
    """The informative structure as a two-column graph: TOC pages (best hubs first) on the
    left, the article pages they link to on the right, one edge per TOC → article link.

    Only the ``max_tocs`` best hubs and the ``max_articles`` articles they link to most are
    drawn (the title says how many there are in all), so the drawing stays readable on large
    sites; the report's tables list the rest.
    """
    shown_tocs = list(tocs[:max_tocs])
    degree: dict[str, int] = {}
    for toc in shown_tocs:
        for a in toc.get("articles", []) or []:
            degree[str(a)] = degree.get(str(a), 0) + 1
    articles = sorted(degree, key=lambda u: (-degree[u], u))[:max_articles]
    a_index = {u: k for k, u in enumerate(articles)}
    n_all_articles = len({str(a) for t in tocs for a in (t.get("articles") or [])})
    row_a, row_t = 16, 0.0
    top = 30
    height = top + max(len(articles) * row_a, len(shown_tocs) * 24) + 12
    row_t = (height - top - 12) / max(len(shown_tocs), 1)
    x_toc, x_art = 250, width - 300
    title = (
        f"Informative structure: {len(shown_tocs)} of {len(tocs)} TOC pages → "
        f"{len(articles)} of {n_all_articles} article pages"
    )
    body = [f'<text x="4" y="15" {_FONT} font-weight="bold">{escape(title)}</text>']
    edges, nodes = [], []
    for t, toc in enumerate(shown_tocs):
        y = top + row_t * (t + 0.5)
        url = str(toc.get("url", ""))
        hub = float(toc.get("hub", 0.0) or 0.0)
        r = 3 + min(hub, 8.0)
        targets = [a_index[str(a)] for a in (toc.get("articles") or []) if str(a) in a_index]
        for k in targets:
            ya = top + row_a * (k + 0.5)
            edges.append(
                f'<line x1="{x_toc}" y1="{y:.1f}" x2="{x_art}" y2="{ya:.1f}" '
                'stroke="#2962ff" stroke-opacity="0.35"/>'
            )
        nodes.append(
            f'<circle cx="{x_toc}" cy="{y:.1f}" r="{r:.1f}" fill="#2962ff">'
            f"<title>{escape(url)} (hub {hub:.2f}, {len(toc.get('articles') or [])} articles)"
            "</title></circle>"
            f'<text x="{x_toc - r - 4:.1f}" y="{y + 4:.1f}" {_FONT} text-anchor="end">'
            f"{escape(_short_url(url, site))}</text>"
        )
    for k, url in enumerate(articles):
        y = top + row_a * (k + 0.5)
        nodes.append(
            f'<circle cx="{x_art}" cy="{y:.1f}" r="4" fill="#00c853">'
            f"<title>{escape(url)} ({degree[url]} TOC links)</title></circle>"
            f'<text x="{x_art + 8}" y="{y + 4:.1f}" {_FONT}>{escape(_short_url(url, site))}</text>'
        )
    return _svg(width, int(height), body + edges + nodes, title)
