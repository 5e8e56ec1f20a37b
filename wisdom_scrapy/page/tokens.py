"""The terms of a page's text pieces, tokenised in bulk and grouped by owner node: what
:class:`~wisdom_scrapy.page.model.PageModel`'s ``vocab``, ``term_ids`` and ``term_start`` hold.

Rules: the terms are exactly :func:`wisdom_scrapy.page.terms.count_terms`'s, each text piece
tokenised on its own (element boundaries are token boundaries); tokenising runs in C over the
joined pieces, never per piece or per word in Python; each distinct token of a page is met in
Python once (its code and its terms), every occurrence in C (``map`` into numpy); the per-token
cache is process-wide (a site repeats its vocabulary) and bounded by ``WORD_CACHE_SIZE``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from functools import lru_cache, partial
from itertools import chain, compress, count
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from wisdom_scrapy.page.terms import (
    _TOKEN_RE,
    MAX_TERM_CHARS,
    WORD_CACHE_SIZE,
    is_overlong,
    token_terms,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from numpy.typing import NDArray

# ASCII → lower-case letters and digits kept, NUL kept (piece separator), the rest → space
_ASCII_TOKEN_TABLE = str.maketrans(
    {c: chr(c).lower() if chr(c).isalnum() else "\x00" if c == 0 else " " for c in range(128)}
)

# ``terms._TOKEN_RE``'s tokens, and each NUL (piece separator) as a token of its own. No token
# character is whitespace, so one ``findall`` over text is the tokens of its whitespace-split
# words in turn: the text is tokenised in one C call, not word by word.
_MARKED_TOKEN_RE = re.compile(_TOKEN_RE.pattern + "|\x00")

#: The terms of one (normalised, lower-cased) token, with numbers dropped (``False``) or kept
#: (``True``): cached, sites repeat their vocabulary. One cache a setting, so each is keyed by
#: the token alone (``lru_cache``'s cheapest key: the string itself, no argument tuple).
_TOKEN_TERMS: dict[bool, Callable[[str], tuple[str, ...]]] = {
    keep: lru_cache(maxsize=WORD_CACHE_SIZE)(partial(token_terms, keep_numbers=keep))
    for keep in (False, True)
}


def _codes(items: Iterable[str], n: int, dtype: type) -> tuple[NDArray, dict[str, int]]:
    """Each of the ``n`` items as a code (0, 1, … in order of first occurrence), and the
    distinct items with their codes: one dict look-up an item, all in C (a ``defaultdict``
    whose factory counts hands each new item the next code)."""
    distinct: defaultdict[str, int] = defaultdict(count().__next__)
    codes: NDArray = np.fromiter(map(distinct.__getitem__, items), dtype, n)
    distinct.default_factory = None  # a plain mapping from here on: no look-up adds a key
    return codes, distinct


class PieceTokens(NamedTuple):
    """The tokens of a page's text pieces, as codes: those of the ASCII pieces first
    (``n_ascii`` of them), then the others'; within each group a NUL token stands between
    two pieces. ``distinct`` maps each token to its code, in order of first occurrence."""

    codes: NDArray[np.int64]
    distinct: dict[str, int]
    n_ascii: int
    ascii_pieces: NDArray[np.intp]
    other_pieces: NDArray[np.intp]


def piece_tokens(pieces: Sequence[str], use: NDArray[np.bool_]) -> PieceTokens:
    """Tokens of the ``use``d pieces, as :func:`~wisdom_scrapy.page.terms.count_terms` finds them.

    Tokenising dominates, so: ASCII pieces (most of them) are lower-cased and split in C
    with one ``str.translate`` + ``str.split`` over their joined text (NFKC is the identity
    on ASCII, and ``terms._TOKEN_RE`` on ASCII matches exactly the runs of letters and
    digits); the other pieces are NFKC-normalised together and tokenised with one
    ``findall``.
    """
    k = len(pieces)
    is_ascii = np.fromiter(map(str.isascii, pieces), bool, k)
    asc = use & is_ascii
    non = use & ~is_ascii
    asc_idx = np.flatnonzero(asc)
    non_idx = np.flatnonzero(non)
    # ASCII pieces: joined by a spaced NUL (the table keeps both: no text of an lxml tree holds
    # a NUL, so each NUL token is a separator), translated (lower-case; non-alphanumerics →
    # space), split: two passes over the text
    tokens = (
        " \x00 ".join(compress(pieces, asc)).translate(_ASCII_TOKEN_TABLE).split()
        if len(asc_idx)
        else []
    )
    n_ascii_tokens = len(tokens)
    # other pieces: one NFKC + lower over their joined text (NUL is a starter that composes
    # with nothing and is not cased, so this equals normalising each piece alone)
    if len(non_idx):
        joined = unicodedata.normalize("NFKC", "\x00".join(compress(pieces, non))).lower()
        tokens += _MARKED_TOKEN_RE.findall(joined)
    codes, distinct = _codes(tokens, len(tokens), np.int64)
    return PieceTokens(codes, distinct, n_ascii_tokens, asc_idx, non_idx)


def _occurrences(toks: PieceTokens) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """Every token occurrence (NUL markers left out) as its code, and the piece it lies
    in: the NUL markers before it in its group count the pieces."""
    occ = toks.codes
    marker = occ == toks.distinct.get("\x00", -1)
    keep = ~marker
    na = toks.n_ascii
    occ_piece = np.concatenate(
        [
            toks.ascii_pieces[np.cumsum(marker[:na])[keep[:na]]],
            toks.other_pieces[np.cumsum(marker[na:])[keep[na:]]],
        ]
    )
    return occ[keep], occ_piece


def _term_tokens(distinct: dict[str, int]) -> tuple[list[str], NDArray[np.bool_]]:
    """The distinct tokens in code order, each overlong one replaced by "" (no terms; a blob
    kept out of the caches: it may be megabytes), and which were overlong. Only a token longer
    than :data:`~wisdom_scrapy.page.terms.MAX_TERM_CHARS` can be one: few are tested."""
    tokens = list(distinct)
    overlong = np.zeros(len(tokens), bool)
    if max(map(len, tokens), default=0) <= MAX_TERM_CHARS:  # most pages: no array of lengths
        return tokens, overlong
    lengths = np.fromiter(map(len, tokens), np.int64, len(tokens))
    for i in np.flatnonzero(lengths > MAX_TERM_CHARS).tolist():
        if is_overlong(tokens[i]):
            overlong[i] = True
            tokens[i] = ""
    return tokens, overlong


def term_arrays(
    toks: PieceTokens,
    piece_owner: NDArray[np.intp],
    n: int,
    keep_numbers: bool,
) -> tuple[list[str], NDArray[np.int32], NDArray[np.int64], int]:
    """``(vocab, term_ids, term_start, overlong)`` of a page of ``n`` nodes from its tokens.

    Terms are grouped by the owner node of their piece, then piece order; each distinct token
    is turned into terms once (cached across pages), an overlong one into none
    (``overlong``: its occurrences, counted). ``vocab`` lists the terms in order of their
    first token's first occurrence.
    """
    occ, occ_piece = _occurrences(toks)
    tokens, overlong = _term_tokens(toks.distinct)
    n_overlong = int(overlong[occ].sum()) if overlong.any() else 0
    occ_owner = piece_owner[occ_piece]
    order = np.lexsort((occ_piece, occ_owner))
    occ = occ[order]
    occ_owner = occ_owner[order]
    # distinct token → its 0, 1 or (Chinese) several terms, as page-local term ids
    term_tuples = list(map(_TOKEN_TERMS[keep_numbers], tokens))
    tt_len = np.fromiter(map(len, term_tuples), np.int64, len(term_tuples))
    flat_terms = list(chain.from_iterable(term_tuples))
    flat_ids, vocab = _codes(flat_terms, len(flat_terms), np.int32)
    tt_start = np.zeros(len(tt_len) + 1, np.int64)
    np.cumsum(tt_len, out=tt_start[1:])
    term_ids, term_owner = _expanded(occ, occ_owner, tt_len, tt_start, flat_ids)
    term_start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(term_owner, minlength=n), out=term_start[1:])
    return list(vocab), term_ids, term_start, n_overlong


def _expanded(
    occ: NDArray[np.int64],
    occ_owner: NDArray[np.intp],
    tt_len: NDArray[np.int64],
    tt_start: NDArray[np.int64],
    flat_ids: NDArray[np.int32],
) -> tuple[NDArray[np.int32], NDArray[np.intp]]:
    """Every token occurrence expanded into its terms' ids (order kept), and each term's owner.

    Only a Han run gives a token several terms: where no token has more than one (pages
    without Chinese), an occurrence keeps its one term or, without any, is masked out; no
    ``repeat``.
    """
    occ_n = tt_len[occ]
    if tt_len.max(initial=0) <= 1:
        has_term = occ_n.astype(bool)
        return flat_ids[tt_start[occ[has_term]]], occ_owner[has_term]
    total = int(occ_n.sum())
    occ_first = np.cumsum(occ_n) - occ_n
    within = np.arange(total) - np.repeat(occ_first, occ_n)
    return flat_ids[np.repeat(tt_start[occ], occ_n) + within], np.repeat(occ_owner, occ_n)
