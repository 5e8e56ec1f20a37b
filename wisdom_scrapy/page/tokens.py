"""The terms of a page's text pieces, tokenised in bulk and grouped by owner node: what
:class:`~wisdom_scrapy.page.model.PageModel`'s ``vocab``, ``term_ids`` and ``term_start`` hold.

Rules: the terms are exactly :func:`wisdom_scrapy.page.terms.count_terms`'s, each text piece
tokenised on its own (element boundaries are token boundaries); tokenising runs in C over the
joined pieces, never per piece in Python; the per-word caches are process-wide (a site repeats
its vocabulary) and bounded by ``WORD_CACHE_SIZE``.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from itertools import chain, compress
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from wisdom_scrapy.page.terms import _TOKEN_RE, WORD_CACHE_SIZE, is_overlong, token_terms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

# ASCII → lower-case letters and digits kept, NUL kept (piece separator), the rest → space
_ASCII_TOKEN_TABLE = str.maketrans(
    {c: chr(c).lower() if chr(c).isalnum() else "\x00" if c == 0 else " " for c in range(128)}
)


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _word_tokens(word: str) -> tuple[str, ...]:
    """``terms._TOKEN_RE`` tokens of one whitespace-free word (the NUL marker stays itself)."""
    if word == "\x00":
        return (word,)
    return tuple(_TOKEN_RE.findall(word))


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _token_terms(token: str, keep_numbers: bool) -> tuple[str, ...]:
    """Terms of one (normalised, lower-cased) token, cached: sites repeat their vocabulary."""
    return token_terms(token, keep_numbers)


class PieceTokens(NamedTuple):
    """The tokens of a page's text pieces: those of the ASCII pieces first (``n_ascii`` of
    them), then the others'; within each group a NUL token stands between two pieces."""

    tokens: list[str]
    n_ascii: int
    ascii_pieces: NDArray[np.intp]
    other_pieces: NDArray[np.intp]


def piece_tokens(pieces: Sequence[str], use: NDArray[np.bool_]) -> PieceTokens:
    """Tokens of the ``use``d pieces, as :func:`~wisdom_scrapy.page.terms.count_terms` finds them.

    Tokenising dominates, so: ASCII pieces (most of them) are lower-cased and split in C
    with one ``str.translate`` + ``str.split`` over their joined text (NFKC is the identity
    on ASCII, and ``terms._TOKEN_RE`` on ASCII matches exactly the runs of letters and
    digits); the other pieces are NFKC-normalised together and tokenised with
    ``_TOKEN_RE``.
    """
    k = len(pieces)
    is_ascii = np.fromiter(map(str.isascii, pieces), bool, k)
    asc = use & is_ascii
    non = use & ~is_ascii
    asc_idx = np.flatnonzero(asc)
    non_idx = np.flatnonzero(non)
    # ASCII pieces: NUL-separated, translated (lower-case; non-alphanumerics → space), split
    tokens = (
        "\x00".join(compress(pieces, asc))
        .translate(_ASCII_TOKEN_TABLE)
        .replace("\x00", " \x00 ")
        .split()
        if len(asc_idx)
        else []
    )
    n_ascii_tokens = len(tokens)
    # other pieces: one NFKC + lower over their joined text (NUL is a starter that composes
    # with nothing and is not cased, so this equals normalising each piece alone), split at
    # whitespace (never inside a token), each distinct word tokenised once (cached)
    if len(non_idx):
        joined = unicodedata.normalize("NFKC", "\x00".join(compress(pieces, non))).lower()
        words = joined.replace("\x00", " \x00 ").split()
        tokens += chain.from_iterable(map(_word_tokens, words))
    return PieceTokens(tokens, n_ascii_tokens, asc_idx, non_idx)


def _occurrences(
    toks: PieceTokens, distinct: dict[str, Any]
) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """Every token occurrence (NUL markers left out) as its code in ``distinct``, and the
    piece it lies in: the NUL markers before it in its group count the pieces."""
    tokens = toks.tokens
    occ = np.fromiter(map(distinct.__getitem__, tokens), np.int64, len(tokens))
    marker = occ == distinct.get("\x00", -1)
    keep = ~marker
    na = toks.n_ascii
    occ_piece = np.concatenate(
        [
            toks.ascii_pieces[np.cumsum(marker[:na])[keep[:na]]],
            toks.other_pieces[np.cumsum(marker[na:])[keep[na:]]],
        ]
    )
    return occ[keep], occ_piece


def term_arrays(
    toks: PieceTokens,
    distinct: dict[str, Any],
    piece_owner: NDArray[np.intp],
    n: int,
    keep_numbers: bool,
) -> tuple[list[str], NDArray[np.int32], NDArray[np.int64], int]:
    """``(vocab, term_ids, term_start, overlong)`` of a page of ``n`` nodes from its tokens.

    ``distinct`` holds every token once, in order of first occurrence (its values are
    replaced by the tokens' codes). Terms are grouped by the owner node of their piece, then
    piece order; each distinct token is turned into terms once (cached across pages), an
    overlong one into none (``overlong``: its occurrences, counted).
    """
    for code, tok in enumerate(distinct):
        distinct[tok] = code
    occ, occ_piece = _occurrences(toks, distinct)
    overlong = np.fromiter(map(is_overlong, distinct), bool, len(distinct))
    n_overlong = int(overlong[occ].sum())
    occ_owner = piece_owner[occ_piece]
    order = np.lexsort((occ_piece, occ_owner))
    occ = occ[order]
    occ_owner = occ_owner[order]
    # distinct token → its 0, 1 or (Chinese) several terms, as page-local term ids
    # (an overlong token is no term, and is kept out of the caches: it may be megabytes)
    term_tuples = [() if too_long else _token_terms(token, keep_numbers)
                   for token, too_long in zip(distinct, overlong.tolist(), strict=True)]
    tt_len = np.fromiter(map(len, term_tuples), np.int64, len(term_tuples))
    flat_terms = list(chain.from_iterable(term_tuples))
    vocab = dict.fromkeys(flat_terms)
    for code, term in enumerate(vocab):
        vocab[term] = code
    flat_ids = np.fromiter(map(vocab.__getitem__, flat_terms), np.int32, len(flat_terms))
    tt_start = np.zeros(len(tt_len) + 1, np.int64)
    np.cumsum(tt_len, out=tt_start[1:])
    # expand every occurrence into its terms (order kept)
    occ_n = tt_len[occ]
    total = int(occ_n.sum())
    occ_first = np.cumsum(occ_n) - occ_n
    within = np.arange(total) - np.repeat(occ_first, occ_n)
    term_ids = flat_ids[np.repeat(tt_start[occ], occ_n) + within]
    term_start = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(np.repeat(occ_owner, occ_n), minlength=n), out=term_start[1:])
    return list(vocab), term_ids, term_start, n_overlong
