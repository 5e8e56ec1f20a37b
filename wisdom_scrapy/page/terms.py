"""Term extraction (WISDOM §3.1, InfoDiscoverer §4.2).

A *term* is what the entropy store counts: a Unicode-normalised, lower-cased keyword.

* English (and other space-separated scripts): runs of letters and digits; stop words removed,
  words Porter-stemmed (nltk's ``PorterStemmer``, no corpus needed, loaded without nltk's
  package import: :mod:`wisdom_scrapy.page.stemmer`) so that "entropy" and "entropies" are one term.
* Chinese: runs of Han characters segmented with jieba (initialised lazily and quietly on the
  first Han run, so English-only crawls never pay for its dictionary), stop words removed.
* Mixed-script text: each run is handled by its own rule, in text order.
* Numbers (runs of digits) are dropped unless ``keep_numbers`` is set: WISDOM §4.4 reports that
  numbers get high weights from entropy (dates, ids and counters are unique to a page) and add
  noise. Tokens mixing letters and digits ("python3", "utf8") are kept as they are, unstemmed.
* Words and numbers longer than :data:`MAX_TERM_CHARS` (64) are dropped: encoded blobs.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import re
import tempfile
import unicodedata
from collections import Counter
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from wisdom_scrapy.page.stemmer import porter_stem

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "MAX_TERM_CHARS",
    "count_terms",
    "extract_terms",
    "is_overlong",
    "is_stop_word",
    "stable_hash",
    "token_terms",
    "uncached_hash",
]

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A run of Han characters, or a run of word characters that are neither Han nor "_".
_TOKEN_RE = re.compile(rf"[{_HAN}]+|[^\W_{_HAN}]+")


def _load_words(name: str) -> frozenset[str]:
    text = resources.files("wisdom_scrapy").joinpath("data").joinpath(name).read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


#: Longest word or number kept as a term. Dictionary words of the languages these rules serve
#: stay well below it (long German compounds run to some 60 letters); what is longer is an
#: encoded blob (base64, hex run together, a minified identifier) that occurs once, says nothing
#: about the site and only swells the store. Longer tokens are dropped (a crawl counts them).
MAX_TERM_CHARS = 64


def is_overlong(token: str) -> bool:
    """True for a word or number token longer than :data:`MAX_TERM_CHARS`; a Han run is
    never one (jieba cuts it into words)."""
    return len(token) > MAX_TERM_CHARS and not _is_han(token[0])


def _is_han(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


_STOP_EN = _load_words("stopwords_en.txt")
_STOP_ZH = _load_words("stopwords_zh.txt")


def is_stop_word(word: str) -> bool:
    """True for a (lower-cased) English or Chinese stop word."""
    return word in _STOP_EN or word in _STOP_ZH


#: Entries of each per-word cache (a token's stem, terms and tokens, stable hashes): a site's
#: common vocabulary fits, while words only a few pages use (names, identifiers, the new text
#: of every page of an endless site) are evicted, so the caches stop growing with the crawl.
#: At 2**18 entries each they grew by ~4 KB per page of new text towards ~200 MB (issue 16);
#: at this size ~4 MB each, and on the Python and Django docs a few % more misses.
WORD_CACHE_SIZE = 1 << 14


@lru_cache(maxsize=WORD_CACHE_SIZE)
def _word_term(word: str) -> str | None:
    """Term for one lower-cased, non-Han, non-numeric token, or None for a stop word.

    Cached: a site repeats its vocabulary on every page, so stemming runs once per word.
    """
    if word in _STOP_EN:
        return None
    if not word.isalpha():  # letters mixed with digits: an identifier, keep as it is
        return word
    if len(word) == 1 and word.isascii():
        return None
    return porter_stem(word)


_jieba: Any = None


def _segment_han(run: str) -> list[str]:
    jieba = _jieba or _start_jieba()
    return [w for w in jieba.lcut(run) if w not in _STOP_ZH and w.strip()]


def _start_jieba() -> Any:
    """jieba imported, quiet and its dictionary loaded: on the first Han run only, so that
    crawls without Chinese never pay for it."""
    global _jieba
    import jieba

    jieba.setLogLevel(logging.WARNING)
    _load_cached_dictionary(jieba.dt)
    jieba.initialize()  # a no-op once loaded; else jieba builds (and caches) its dictionary
    _jieba = jieba
    return jieba


def _load_cached_dictionary(tokenizer: Any) -> None:
    """Load a jieba tokenizer's default dictionary from jieba's cache file, read whole first.

    jieba unmarshals its ~9 MB cache (~500,000 words and prefixes with their counts) straight
    from the open file, and marshal then calls the file's ``readinto`` for each string and int:
    0.47 s of CPU, where the same dict comes from the file's bytes in 0.17 s. Only the case
    jieba itself loads without a check is taken (the default dictionary, no other thread
    writing its cache, the cache file there and readable), with the same file and the same
    fields set; otherwise the tokenizer is left as it is for ``initialize`` to load or build
    (also when a jieba release names these fields differently: the load is only a shortcut).
    """
    import jieba

    names = ("lock", "initialized", "dictionary", "tmp_dir", "cache_file", "FREQ", "total")
    if not all(hasattr(tokenizer, name) for name in names) or not (
        hasattr(jieba, "DEFAULT_DICT") and hasattr(jieba, "DICT_WRITING")
    ):
        return
    with tokenizer.lock:
        if tokenizer.initialized or tokenizer.dictionary != jieba.DEFAULT_DICT:
            return
        if tokenizer.dictionary in jieba.DICT_WRITING:
            return
        directory = tokenizer.tmp_dir or tempfile.gettempdir()
        path = os.path.join(directory, tokenizer.cache_file or "jieba.cache")
        try:
            with open(path, "rb") as cache:
                tokenizer.FREQ, tokenizer.total = marshal.loads(cache.read())
        except (OSError, ValueError, EOFError, TypeError):
            return
        tokenizer.initialized = True


def extract_terms(text: str, keep_numbers: bool = False) -> list[str]:
    """Return the terms of ``text`` in text order.

    Steps: NFKC normalisation (full-width letters and digits become ASCII), lower-casing,
    tokenisation into Han and non-Han runs, then per run: jieba segmentation and Chinese stop
    words (Han), dropping digit-only runs unless ``keep_numbers`` (numbers), or stop words and
    Porter stemming (words).

    >>> extract_terms("The entropies of 2 terms")
    ['entropi', 'term']
    >>> extract_terms("The entropies of 2 terms", keep_numbers=True)
    ['entropi', '2', 'term']
    """
    if not text:
        return []
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    terms: list[str] = []
    for token in _TOKEN_RE.findall(text):
        if _is_han(token[0]):
            terms.extend(_segment_han(token))
        elif len(token) > MAX_TERM_CHARS:  # before any cache: it would keep the blob
            continue
        elif token.isdigit():
            if keep_numbers:
                terms.append(token)
        else:
            term = _word_term(token)
            if term is not None:
                terms.append(term)
    return terms


def token_terms(token: str, keep_numbers: bool = False) -> tuple[str, ...]:
    """The terms of one token of normalised, lower-cased text (a ``_TOKEN_RE`` match): what
    :func:`extract_terms` gives for it. A lower-case ASCII word or identifier (most tokens) is
    its own text already, normalised, lower-cased and one token, so it goes to the stemmer
    straight: the page model meets each new word of a crawl this way once.

    >>> token_terms("entropies"), token_terms("utf8"), token_terms("the")
    (('entropi',), ('utf8',), ())
    """
    if token.isascii() and token.isalnum() and token.islower() and len(token) <= MAX_TERM_CHARS:
        term = _word_term(token)
        return () if term is None else (term,)
    return tuple(extract_terms(token, keep_numbers))


def count_terms(texts: Iterable[str], keep_numbers: bool = False) -> Counter[str]:
    """Term frequencies over several text pieces (the ``counts`` a store's ``add_page`` takes).

    Same terms as :func:`extract_terms`, but tokens are counted first and each distinct token is
    turned into terms once: a page repeats its words, so this is several times faster.
    """
    text = "\n".join(texts)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    tokens = Counter(_TOKEN_RE.findall(text.lower()))
    counts: Counter[str] = Counter()
    for token, n in tokens.items():
        if _is_han(token[0]):
            for term in _segment_han(token):
                counts[term] += n
        elif len(token) > MAX_TERM_CHARS:
            continue
        elif token.isdigit():
            if keep_numbers:
                counts[token] += n
        else:
            stem = _word_term(token)
            if stem is not None:
                counts[stem] += n
    return counts


@lru_cache(maxsize=WORD_CACHE_SIZE)
def stable_hash(text: str) -> int:
    """64-bit hash of ``text`` (signed), the same in every process and on every run.

    Python's ``hash()`` of a string is salted per process; slots, link keys and shingles are
    persisted in the store and compared across processes, so they hash with BLAKE2b instead.
    Cached: tag names, terms, anchor texts and link targets repeat on every page (use
    :func:`uncached_hash` for texts that do not). A lone surrogate (a spider's own text may
    hold one) is hashed as its code, never refused.
    """
    return uncached_hash(text)


def uncached_hash(text: str) -> int:
    """:func:`stable_hash` without its cache."""
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)
