"""Hand-built inline SVG charts for the site report: histograms and (stacked) bar charts.

Why by hand rather than matplotlib: the report needs two simple chart types, and building
their SVG directly keeps them small (a few kB, no embedded font glyphs or clip paths), keeps
the package free of a ~40 MB plotting dependency, and — most important for a report full of
page-derived text — keeps every label under this module's control, so each one goes through
:func:`html.escape` on its way out (matplotlib would write titles and tick labels raw into
the SVG text). The charts use the viewer's sans-serif font and no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import numpy as np

__all__ = ["bars_svg", "histogram_svg"]

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
    values: Sequence[float] | Sequence[Sequence[float]],
    *,
    title: str,
    colour: str = "#d50000",
    unit: str = "",
    width: int = 560,
    label_width: int = 240,
    parts: Mapping[str, str] | None = None,
) -> str:
    """Horizontal bar chart, one bar per label (in the order given), value written after it.

    With ``parts`` (``{name: colour}`` in drawing order) each value is a sequence of that many
    parts drawn end to end, named in a legend, and the number written is their sum."""
    colours = list(parts.values()) if parts else [colour]
    stacks = [[float(x) for x in v] if isinstance(v, Sequence) else [float(v)] for v in values]
    row = 18
    top = 24 + (16 if parts else 0)
    height = top + row * len(labels) + 8
    plot_w = width - label_width - 70
    peak = max((sum(s) for s in stacks), default=0.0) or 1.0
    body = [f'<text x="4" y="15" {_FONT} font-weight="bold">{escape(title)}</text>']
    x = float(label_width)
    for name, part_colour in (parts or {}).items():
        body.append(f'<rect x="{x:.1f}" y="22" width="10" height="10" fill="{part_colour}"/>')
        body.append(f'<text x="{x + 14:.1f}" y="31" {_FONT}>{escape(name)}</text>')
        x += 14 + 6.5 * len(name) + 16
    for k, (label, stack) in enumerate(zip(labels, stacks, strict=True)):
        y = top + k * row
        short = label if len(label) <= 42 else "…" + label[-41:]
        body.append(
            f'<text x="{label_width - 6}" y="{y + 12}" {_FONT} text-anchor="end">'
            f"<title>{escape(label)}</title>{escape(short)}</text>"
        )
        x = float(label_width)
        for value, part_colour in zip(stack, colours, strict=True):
            w = plot_w * value / peak
            if w > 0 or len(stack) == 1:
                body.append(
                    f'<rect x="{x:.1f}" y="{y + 2}" width="{max(w, 1):.1f}" height="{row - 5}" '
                    f'fill="{part_colour}"/>'
                )
            x += w
        total = float(sum(stack))
        shown = f"{total:g}" if total.is_integer() else f"{total:.3g}"
        body.append(
            f'<text x="{x + 4:.1f}" y="{y + 12}" {_FONT}>{escape(shown)}{escape(unit)}</text>'
        )
    return _svg(width, height, body, title)
