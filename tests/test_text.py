from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from wisdom_scrapy.page.terms import count_terms, extract_terms, is_stop_word, token_terms


def test_english_terms_are_stemmed_lowercased_and_stop_words_dropped():
    assert extract_terms("The Entropies of the Running Crawlers") == ["entropi", "run", "crawler"]


def test_numbers_are_dropped_unless_kept():
    text = "Released 2024 with 3 fixes"
    assert extract_terms(text) == ["releas", "fix"]
    assert extract_terms(text, keep_numbers=True) == ["releas", "2024", "3", "fix"]


def test_letters_mixed_with_digits_are_kept_verbatim():
    assert extract_terms("python3 uses utf8") == ["python3", "use", "utf8"]


def test_unicode_is_normalised_before_tokenising():
    # Full-width letters and digits (common in CJK pages) become ASCII.
    assert extract_terms("Ｐｙｔｈｏｎ ２０２４", keep_numbers=True) == ["python", "2024"]


def test_chinese_is_segmented_and_stop_words_removed():
    terms = extract_terms("我们的网站结构信息挖掘")
    assert terms == ["网站", "结构", "信息", "挖掘"]
    assert not any(is_stop_word(t) for t in terms)


def test_mixed_script_text_keeps_text_order():
    terms = extract_terms("Scrapy爬虫框架 crawls 网站")
    assert terms == ["scrapi", "爬虫", "框架", "crawl", "网站"]


def test_empty_and_punctuation_only_text():
    assert extract_terms("") == []
    assert extract_terms(" \n\t—…!? ___ ") == []


@given(st.lists(st.text(), max_size=5), st.booleans())
def test_count_terms_equals_counting_extracted_terms(pieces, keep_numbers):
    expected = Counter()
    for piece in pieces:
        expected.update(extract_terms(piece, keep_numbers))
    assert count_terms(pieces, keep_numbers) == expected


@given(
    st.one_of(
        st.from_regex(r"[a-z0-9]{1,70}", fullmatch=True),
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
                max_size=12),
    ),
    st.booleans(),
)
def test_token_terms_equal_extracting_the_token(token, keep_numbers):
    """The fast path for lower-case ASCII words (straight to the stemmer) gives what the whole
    extraction gives, for such words, numbers, overlong runs and any other text."""
    assert token_terms(token, keep_numbers) == tuple(extract_terms(token, keep_numbers))


def test_token_terms_of_words_met_in_crawls():
    for word in ["entropies", "python3", "utf8", "the", "a", "x", "running", "42", "Naïve",
                 "ｆｕｌｌ", "数据挖掘", "a" * 65]:
        assert token_terms(word) == tuple(extract_terms(word)), word


def test_jieba_cache_read_whole_loads_what_jieba_loads(tmp_path):
    """The fast load of jieba's dictionary cache gives the tokenizer jieba's own load gives it
    (same words, counts and total, same cuts), and leaves a tokenizer without a cache alone."""
    import jieba

    from wisdom_scrapy.page.terms import _load_cached_dictionary

    built = jieba.Tokenizer()
    built.tmp_dir = str(tmp_path)
    built.initialize()  # jieba's way: builds the dictionary, writes its cache, or loads it
    fast = jieba.Tokenizer()
    fast.tmp_dir = str(tmp_path)
    _load_cached_dictionary(fast)
    assert fast.initialized
    assert fast.total == built.total
    assert fast.FREQ == built.FREQ
    text = "景太郎我们的网站结构信息挖掘，中文分词"
    assert fast.lcut(text) == built.lcut(text)
    empty = jieba.Tokenizer()
    empty.tmp_dir = str(tmp_path / "no-cache")
    _load_cached_dictionary(empty)
    assert not empty.initialized
    assert empty.FREQ == {}
    renamed = jieba.Tokenizer()  # a jieba whose fields are named otherwise: left to jieba
    renamed.tmp_dir = str(tmp_path)
    del renamed.cache_file
    _load_cached_dictionary(renamed)
    assert not renamed.initialized
