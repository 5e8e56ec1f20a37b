"""Would a faster stemmer give the store's terms unchanged? (issue 33)

Collects the words the add-on really stems — every page's text through
:func:`wisdom_scrapy.page.terms.count_terms`, recording each word it hands to the stemmer (stop
words, numbers, identifiers with digits and one-letter words never reach it) — from directories of
HTML pages, then stems them with each candidate and counts the words whose stem differs from
the current one (nltk's ``PorterStemmer``, its default mode), and times each on the words
(µs a word, best of ``--repeat``). Candidates: nltk's two other modes, and PyStemmer's (C,
Snowball) ``porter`` (Porter's original algorithm) and ``english`` (Porter2), when PyStemmer
is installed (``pip install PyStemmer``). Usage::

    python benchmarks/stemmers.py /usr/share/doc/python3.11/html \\
        /usr/share/doc/python-django-doc/html ../shared/data/sites
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``_common`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import environment, html_to_text, markdown_table, write_json

from wisdom_scrapy.page import terms as text_module
from wisdom_scrapy.page.stemmer import porter_stem


def stemmed_words(pages: Iterable[Path]) -> list[str]:
    """The distinct words ``count_terms`` hands to the stemmer over ``pages``, sorted."""
    seen: set[str] = set()

    def recording(word: str) -> str:
        seen.add(word)
        return porter_stem(word)

    text_module._word_term.cache_clear()
    text_module.porter_stem = recording
    try:
        for page in pages:
            text_module.count_terms([html_to_text(page.read_text("utf-8", "replace"))])
    finally:
        text_module.porter_stem = porter_stem
        text_module._word_term.cache_clear()
    return sorted(seen)


def _each(stem: Callable[[str], str]) -> Callable[[Sequence[str]], list[str]]:
    def stem_all(words: Sequence[str]) -> list[str]:
        return [stem(w) for w in words]

    return stem_all


def candidates() -> dict[str, Callable[[Sequence[str]], list[str]]]:
    """Stemmers by name, each stemming a list of words; the current one first."""
    from nltk.stem.porter import PorterStemmer

    found = {"nltk NLTK_EXTENSIONS (current)": _each(porter_stem)}
    for mode in (PorterStemmer.MARTIN_EXTENSIONS, PorterStemmer.ORIGINAL_ALGORITHM):
        found[f"nltk {mode}"] = _each(PorterStemmer(mode=mode).stem)
    try:
        import Stemmer
    except ImportError:
        return found
    for algorithm in ("porter", "english"):
        # no cache of its own: time the algorithm
        found[f"PyStemmer {algorithm}"] = _each(Stemmer.Stemmer(algorithm, 0).stemWord)
    return found


@dataclass
class Result:
    stemmer: str
    us_per_word: float
    #: (word, the current stem, this stemmer's)
    differ: list[tuple[str, str, str]]


def compare(words: Sequence[str], repeat: int) -> list[Result]:
    """Per candidate: µs a word (best of ``repeat``) and the words whose stem differs from the
    current stemmer's."""
    found: list[Result] = []
    reference: list[str] | None = None
    for name, stem in candidates().items():
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            stems = stem(words)
            best = min(best, time.perf_counter() - start)
        reference = stems if reference is None else reference
        differ = [(w, r, s) for w, r, s in zip(words, reference, stems, strict=True) if r != s]
        found.append(Result(name, best / len(words) * 1e6, differ))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="directories of HTML pages")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--examples", type=int, default=8, help="differing words shown")
    parser.add_argument("--json", type=Path, help="write every figure (and the differing words)")
    args = parser.parse_args()
    pages = sorted(p for d in args.dirs for p in d.rglob("*.htm*") if p.is_file())
    words = stemmed_words(pages)
    print(f"{len(pages)} pages, {len(words)} distinct words stemmed "
          f"({sum(not w.isascii() for w in words)} not ASCII)\n")  # fmt: skip
    results = compare(words, args.repeat)
    print(markdown_table(
        ["stemmer", "µs a word", "stems that differ", "share", "e.g. word: current → this"],
        [(r.stemmer, f"{r.us_per_word:.1f}", len(r.differ), f"{len(r.differ) / len(words):.1%}",
          ", ".join(f"{w} {a}→{b}" for w, a, b in r.differ[: args.examples])) for r in results],
    ))  # fmt: skip
    if args.json:
        write_json(args.json, {"environment": environment(), "pages": len(pages),
                               "words": len(words), "stemmers": [asdict(r) for r in results]})


if __name__ == "__main__":
    main()
