"""SEG (Wootton & Federhen 1993, 1996): low- and high-complexity segments of a sequence.

SMG §4.2 splits a page's H2S sequence with SEG: repeated structures (link lists, table rows)
are low-complexity segments, varied content high-complexity ones.

The algorithm (stage 1 of SEG, the part that decides which symbols are low-complexity):

1. The *complexity* of a window of ``window`` symbols is the Shannon entropy of its
   composition, in bits: ``K = −Σ (n_i / W) log2 (n_i / W)``.
2. Every window with ``K ≤ locut`` *triggers* a segment.
3. A trigger window is *extended* to the left and right over the contiguous windows with
   ``K ≤ hicut``; the segment covers every symbol of the windows it spans. Overlapping
   segments join.
4. Everything else is high complexity.

SEG's optional second stage (trimming each raw segment to its least probable subsequence) is
omitted: at the granularity SMG uses it (is a subtree dominated by one kind?) it moves a
boundary by less than a window.

Thresholds. SEG's defaults (``W = 12``, ``locut = 2.2``, ``hicut = 2.5`` bits) are tuned to
proteins: a random window of 12 amino acids drawn with the standard background frequencies
(Robinson & Robinson 1991) has an expected complexity of 3.02 bits, so the defaults sit at
0.728 and 0.828 of it. The H2S alphabet is smaller and far more skewed (a text symbol ``T`` in
almost every other position), so the protein cuts would call every HTML window low
complexity. :meth:`SegParams.for_background` keeps SEG's *relative* cuts instead: it scales
them by the expected complexity of a random window drawn from the symbol frequencies of the
site's own sequences (``tests/test_segment.py`` recomputes 3.02 for proteins).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SegParams", "expected_complexity", "low_complexity_mask", "seg_segments"]

#: SEG's protein defaults and the expected window complexity they are relative to.
PROTEIN_WINDOW, PROTEIN_LOCUT, PROTEIN_HICUT = 12, 2.2, 2.5
PROTEIN_EXPECTED = 3.02
_SAMPLES = 20000


@dataclass(frozen=True)
class SegParams:
    """SEG's window length and trigger / extension complexities (bits)."""

    window: int = PROTEIN_WINDOW
    locut: float = PROTEIN_LOCUT
    hicut: float = PROTEIN_HICUT

    def __post_init__(self) -> None:
        if self.window < 2:
            raise ValueError(f"SEG window must be at least 2, got {self.window}")
        if not 0 <= self.locut <= self.hicut:
            raise ValueError(f"SEG needs 0 <= locut <= hicut, got {self.locut}, {self.hicut}")

    @classmethod
    def for_background(
        cls, counts: Mapping[str, int] | NDArray[np.float64], window: int = PROTEIN_WINDOW
    ) -> SegParams:
        """SEG's protein cuts relative to the expected complexity of a random ``window`` drawn
        from ``counts`` (symbol → occurrences in the site's sequences); see the module
        docstring."""
        expected = expected_complexity(counts, window)
        scale = expected / PROTEIN_EXPECTED
        return cls(window, PROTEIN_LOCUT * scale, PROTEIN_HICUT * scale)


def expected_complexity(
    counts: Mapping[str, int] | NDArray[np.float64], window: int = PROTEIN_WINDOW
) -> float:
    """Mean complexity (bits) of windows drawn at random with the frequencies ``counts``.

    Estimated from a fixed-seed sample of multinomial compositions, so it is deterministic.
    """
    freq = np.asarray(list(counts.values()) if isinstance(counts, Mapping) else counts, float)
    freq = freq[freq > 0]
    if freq.size < 2:
        return 0.0
    rng = np.random.default_rng(0)
    comp = rng.multinomial(window, freq / freq.sum(), size=_SAMPLES) / window
    logs = np.log2(comp, out=np.zeros_like(comp), where=comp > 0)
    return float(-(comp * logs).sum(axis=1).mean())


def window_complexity(codes: NDArray[np.integer], window: int) -> NDArray[np.float64]:
    """Complexity of every window ``codes[i:i + window]`` (one entry per start ``i``)."""
    n = len(codes)
    if n < window:
        return np.zeros(0)
    symbols, dense = np.unique(codes, return_inverse=True)
    onehot = np.zeros((n + 1, len(symbols)), np.int32)
    onehot[np.arange(1, n + 1), dense] = 1
    cum = np.cumsum(onehot, axis=0)
    comp = (cum[window:] - cum[:-window]) / window
    logs = np.log2(comp, out=np.zeros_like(comp), where=comp > 0)
    return -(comp * logs).sum(axis=1)


def low_complexity_mask(
    complexity: NDArray[np.float64], n: int, params: SegParams
) -> NDArray[np.bool_]:
    """Which of ``n`` symbols SEG puts in low-complexity segments, from the complexity of
    every window (``len(complexity) == n − W + 1``; steps 2–4 of the module docstring)."""
    w = params.window
    mask = np.zeros(n, bool)
    if len(complexity) == 0:
        return mask
    ext = complexity <= params.hicut
    trig = complexity <= params.locut
    # runs of extendable windows; a run holding a trigger window is a segment
    edges = np.diff(np.concatenate([[0], ext.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    trig_cum = np.concatenate([[0], np.cumsum(trig)])
    keep = trig_cum[stops] > trig_cum[starts]
    diff = np.zeros(n + 1, np.int64)
    np.add.at(diff, starts[keep], 1)
    np.add.at(diff, stops[keep] - 1 + w, -1)
    mask[:] = np.cumsum(diff)[:n] > 0
    return mask


def seg_segments(sequence: str, params: SegParams | None = None) -> list[tuple[int, int, bool]]:
    """SEG on one sequence: ``(start, end, low)`` half-open segments covering it, in order.

    A sequence shorter than the window has no window to judge: it is one high-complexity
    segment (as SEG reports nothing for it).
    """
    params = params or SegParams()
    codes = np.frombuffer(sequence.encode("latin-1"), np.uint8)
    n = len(codes)
    if n == 0:
        return []
    low = low_complexity_mask(window_complexity(codes, params.window), n, params)
    change = np.flatnonzero(np.diff(low.astype(np.int8))) + 1
    bounds = [0, *change.tolist(), n]
    return [(a, b, bool(low[a])) for a, b in pairwise(bounds)]
