"""The terms of a page's text pieces, tokenised in bulk: the per-word caches and the ASCII
translation table :attr:`PageModel._terms <wisdom_scrapy.page.model.PageModel>` uses.

Rules: the terms are exactly :func:`wisdom_scrapy.page.terms.count_terms`'s; the caches are
process-wide (a site repeats its vocabulary) and bounded by ``WORD_CACHE_SIZE``.
"""

from __future__ import annotations

from functools import lru_cache

from wisdom_scrapy.page.terms import _TOKEN_RE, WORD_CACHE_SIZE, token_terms

# ASCII → lower-case letters and digits kept, NUL kept (piece separator), the rest → space
_ASCII_TOKEN_TABLE = str.maketrans(
    {c: chr(c).lower() if chr(c).isalnum() else "\x00" if c == 0 else " " for c in range(128)}
)


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _word_tokens(word: str) -> tuple[str, ...]:
    """``text._TOKEN_RE`` tokens of one whitespace-free word (the NUL marker stays itself)."""
    if word == "\x00":
        return (word,)
    return tuple(_TOKEN_RE.findall(word))


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _token_terms(token: str, keep_numbers: bool) -> tuple[str, ...]:
    """Terms of one (normalised, lower-cased) token, cached: sites repeat their vocabulary."""
    return token_terms(token, keep_numbers)
