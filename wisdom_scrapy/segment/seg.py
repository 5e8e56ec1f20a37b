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

5. Stage 2 (optional, ``SegParams.trim``): each raw segment of steps 2–4 is trimmed to its
   *optimal* subsequence, the one whose composition is least probable,
   ``P0 = Ω · F / N^L`` (``F = L! / Π n_i!`` the arrangements of the composition, ``Ω =
   N! / Π_k r_k!`` the compositions of the same complexity state — ``r_k`` symbols occurring
   ``k`` times — and ``N`` the alphabet size), searched over the subsequences at most
   ``maxtrim`` (100) symbols shorter than the raw segment, longest first and leftmost on
   ties, as SEG's ``trim``. The extension of step 3 reaches as far as windows stay under
   ``hicut``, a window wider than the repeat on each side; the trimming takes the mixed
   flanks back. SEG's re-scan of a trimmed-off left flank for further segments is not done
   (a flank is at most ``maxtrim`` symbols, shorter than the blocks the partitioner cares
   about). The page partitioner leaves stage 2 off (the default): on the Python docs
   (``benchmarks/sitemap_quality.py``'s partitioner figures, the 530 html files) it lowers
   the partition F1 from 0.868 to 0.846 (trimmed flanks turn more subtrees into mixed ones,
   which are split further) at ≈ 366 ms/page (a search of ~5000 subsequences per raw segment
   of every subtree). R_SEG only asks whether a subtree is dominated by one kind, which
   stage 1 answers.

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
from scipy.special import gammaln

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "SegParams",
    "expected_complexity",
    "log_probability",
    "low_complexity_mask",
    "optimal_subsequence",
    "seg_segments",
]

#: SEG's protein defaults and the expected window complexity they are relative to.
PROTEIN_WINDOW, PROTEIN_LOCUT, PROTEIN_HICUT = 12, 2.2, 2.5
PROTEIN_EXPECTED = 3.02
PROTEIN_ALPHABET = 20
MAXTRIM = 100  # SEG's default: the optimal subsequence is at most this much shorter
_SAMPLES = 20000


@dataclass(frozen=True)
class SegParams:
    """SEG's window length and trigger / extension complexities (bits); ``trim``: run stage 2
    over an alphabet of ``alphabet`` symbols."""

    window: int = PROTEIN_WINDOW
    locut: float = PROTEIN_LOCUT
    hicut: float = PROTEIN_HICUT
    trim: bool = False
    alphabet: int = PROTEIN_ALPHABET

    def __post_init__(self) -> None:
        if self.window < 2:
            raise ValueError(f"SEG window must be at least 2, got {self.window}")
        if not 0 <= self.locut <= self.hicut:
            raise ValueError(f"SEG needs 0 <= locut <= hicut, got {self.locut}, {self.hicut}")
        if self.alphabet < 2:
            raise ValueError(f"SEG alphabet must have at least 2 symbols, got {self.alphabet}")

    @classmethod
    def for_background(
        cls,
        counts: Mapping[str, int] | NDArray[np.float64],
        window: int = PROTEIN_WINDOW,
        *,
        trim: bool = False,
    ) -> SegParams:
        """SEG's protein cuts relative to the expected complexity of a random ``window`` drawn
        from ``counts`` (symbol → occurrences in the site's sequences); see the module
        docstring. Stage 2's alphabet is the symbols the site uses (SEG's 20 amino acids)."""
        expected = expected_complexity(counts, window)
        scale = expected / PROTEIN_EXPECTED
        values = list(counts.values()) if isinstance(counts, Mapping) else list(counts)
        alphabet = max(sum(1 for v in values if v > 0), 2)
        return cls(window, PROTEIN_LOCUT * scale, PROTEIN_HICUT * scale, trim, alphabet)


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
    complexity: NDArray[np.float64],
    n: int,
    params: SegParams,
    codes: NDArray[np.integer] | None = None,
) -> NDArray[np.bool_]:
    """Which of ``n`` symbols SEG puts in low-complexity segments, from the complexity of
    every window (``len(complexity) == n − W + 1``; steps 2–4 of the module docstring, and
    step 5 on the symbol ``codes`` when ``params.trim``)."""
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
    seg_start, seg_end = starts[keep], stops[keep] - 1 + w
    if params.trim:
        if codes is None:
            raise ValueError("SEG stage 2 (trim) needs the symbol codes")
        trimmed = [optimal_subsequence(codes[a:b], params.alphabet) for a, b in
                   zip(seg_start.tolist(), seg_end.tolist(), strict=True)]  # fmt: skip
        seg_start = seg_start + np.array([a for a, _ in trimmed], np.int64)
        seg_end = seg_start + np.array([b - a for a, b in trimmed], np.int64)
    diff = np.zeros(n + 1, np.int64)
    np.add.at(diff, seg_start, 1)
    np.add.at(diff, seg_end, -1)
    mask[:] = np.cumsum(diff)[:n] > 0
    return mask


def log_probability(counts: NDArray[np.integer], alphabet: int) -> NDArray[np.float64]:
    """ln P0 of each row of symbol ``counts`` (one column per symbol present anywhere; the
    ``alphabet − columns`` symbols absent everywhere count as zeros): step 5's
    ``ln(Ω · F / N^L)``."""
    counts = np.asarray(counts, np.int64)
    length = counts.sum(axis=1)
    ln_f = gammaln(length + 1) - gammaln(counts + 1).sum(axis=1)
    # Σ_k ln r_k!: sort each row's counts (absent symbols as zeros); each symbol's 1-based
    # rank within its run of equal counts contributes ln rank
    zeros = alphabet - counts.shape[1]
    rows = np.sort(np.concatenate([np.zeros((len(counts), max(zeros, 0)), np.int64), counts],
                                  axis=1), axis=1)  # fmt: skip
    m = rows.shape[1]
    idx = np.broadcast_to(np.arange(m), rows.shape)
    new_run = np.ones(rows.shape, bool)
    new_run[:, 1:] = rows[:, 1:] != rows[:, :-1]
    run_start = np.maximum.accumulate(np.where(new_run, idx, 0), axis=1)
    ln_r = np.log(idx - run_start + 1).sum(axis=1)
    ln_omega = gammaln(alphabet + 1) - ln_r
    return np.asarray(ln_omega + ln_f - length * np.log(alphabet), np.float64)


def optimal_subsequence(
    codes: NDArray[np.integer], alphabet: int, maxtrim: int = MAXTRIM
) -> tuple[int, int]:
    """Step 5 on one raw segment: the half-open ``(start, end)`` of its subsequence with the
    lowest P0, among those at most ``maxtrim`` shorter (longest first, then leftmost, on
    ties)."""
    n = len(codes)
    if n < 2:
        return 0, n
    _, dense = np.unique(codes, return_inverse=True)
    onehot = np.zeros((n + 1, int(dense.max()) + 1), np.int64)
    onehot[np.arange(1, n + 1), dense] = 1
    cum = np.cumsum(onehot, axis=0)
    best, best_p = (0, n), np.inf
    for length in range(n, max(n - maxtrim, 1), -1):
        p = log_probability(cum[length:] - cum[: n - length + 1], alphabet)
        k = int(np.argmin(p))
        if p[k] < best_p:
            best, best_p = (k, k + length), float(p[k])
    return best


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
    low = low_complexity_mask(window_complexity(codes, params.window), n, params, codes)
    change = np.flatnonzero(np.diff(low.astype(np.int8))) + 1
    bounds = [0, *change.tolist(), n]
    return [(a, b, bool(low[a])) for a, b in pairwise(bounds)]
