"""The page model's term arrays (``wisdom_scrapy/page/tokens.py``) against a plain reference.

The bulk path tokenises all pieces in one C pass, codes every token with one dict look-up and
expands occurrences into terms with numpy; the reference below does the same thing the slow,
obvious way (each piece alone through ``extract_terms``' own steps), so any change of the
bulk path that changes a term, its id, its order or its node shows here, on every vendored
page (English, Chinese, mixed) and on hand-made edge cases.
"""

from __future__ import annotations

import gzip
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from wisdom_scrapy.page.model import PageModel
from wisdom_scrapy.page.parse import parse_html
from wisdom_scrapy.page.terms import _TOKEN_RE, extract_terms, is_overlong

FIXTURES = Path(__file__).parent / "fixtures"


def _token_terms(token: str, keep_numbers: bool) -> list[str]:
    return [] if is_overlong(token) else extract_terms(token, keep_numbers)


def _reference(model: PageModel) -> tuple[list[str], list[int], list[int], int]:
    """``(vocab, term_ids, term_start, overlong)`` the slow way: each used piece NFKC-normalised,
    lower-cased and tokenised alone; the vocabulary in order of the tokens' first occurrence,
    ASCII pieces' tokens before the others'; terms grouped by owner node, then piece order."""
    pieces, owner = model._pieces, model._piece_owner.tolist()
    used = [i for i in range(len(pieces)) if model._piece_len[i] > 0]
    tokens = {i: _TOKEN_RE.findall(unicodedata.normalize("NFKC", pieces[i]).lower()) for i in used}
    ordered = sorted(used, key=lambda i: not pieces[i].isascii())  # stable: ASCII pieces first
    vocab: dict[str, int] = {}
    for i in ordered:
        for token in tokens[i]:
            for term in _token_terms(token, model.keep_numbers):
                vocab.setdefault(term, len(vocab))
    by_node: list[list[int]] = [[] for _ in range(model.n)]
    for i in used:
        by_node[owner[i]] += [vocab[term] for token in tokens[i]
                              for term in _token_terms(token, model.keep_numbers)]
    start = np.cumsum([0] + [len(ids) for ids in by_node]).tolist()
    overlong = sum(map(is_overlong, (t for i in used for t in tokens[i])))
    return list(vocab), [t for ids in by_node for t in ids], start, overlong


def _assert_same(model: PageModel) -> None:
    vocab, term_ids, term_start, overlong = _reference(model)
    assert model.vocab == vocab
    assert model.term_ids.dtype == np.int32 and model.term_ids.tolist() == term_ids
    assert model.term_start.dtype == np.int64 and model.term_start.tolist() == term_start
    assert model.overlong_tokens == overlong


def _pages() -> list[Path]:
    return sorted([*FIXTURES.rglob("*.html"), *FIXTURES.rglob("*.html.gz")])


@pytest.mark.parametrize("keep_numbers", [False, True])
def test_term_arrays_of_every_vendored_page_equal_the_reference(keep_numbers: bool) -> None:
    pages = _pages()
    assert len(pages) > 50
    for page in pages:
        body = gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
        model = PageModel.from_tree(
            parse_html(body, "http://site.test/"), "http://site.test/", keep_numbers=keep_numbers
        )
        _assert_same(model)


@pytest.mark.parametrize("keep_numbers", [False, True])
def test_term_arrays_of_edge_cases_equal_the_reference(keep_numbers: bool) -> None:
    """Overlong ASCII and non-ASCII tokens (dropped, counted), a long Han run (never overlong),
    a token repeated across both piece groups, tails owned by the parent, full-width forms,
    empty and space-only pieces, and no text at all."""
    blob = "q" * 70
    page = (
        f"<div>lead {blob} Ünï{blob} tail<p>café café 中文分词测试{'中' * 80}</p>after café"
        "<p> </p><p>ＡＢＣ１２３ 2024 the of x y</p><b>ΟΔΟΣ</b>ΑΒ ΣΟΦΟΣ"
        f"<i>{blob}</i>lead<i>naïve{blob}é</i></div>"
    )
    _assert_same(PageModel.from_html(page, "http://x/", keep_numbers=keep_numbers))
    _assert_same(PageModel.from_html("<p> </p><div></div>", "http://x/", keep_numbers=keep_numbers))
    # a NUL in the markup: the parser drops it, so no piece holds the separator
    nul = "<p>ab\x00cd ef</p><p>x\x00y é\x00</p>"
    _assert_same(PageModel.from_html(nul, "http://x/", keep_numbers=keep_numbers))
    assert not any("\x00" in piece for piece in PageModel.from_html(nul, "http://x/")._pieces)
