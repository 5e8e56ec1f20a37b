"""The Porter stemmer loaded without nltk's package import (:mod:`wisdom_scrapy.page.stemmer`): the
stems are nltk's own, nltk's package ``__init__`` (and the scipy it imports) never runs for
them, and a later ``import nltk`` still gets the whole package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wisdom_scrapy.page.stemmer import import_bare, porter_stem

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "pydoc"


def _vocabulary() -> list[str]:
    """Every distinct lower-case word of the vendored Python documentation pages."""
    words: set[str] = set()
    for page in sorted(FIXTURES.glob("*.html")):
        text = page.read_text("utf-8").lower()
        words.update(w for w in "".join(c if c.isalpha() else " " for c in text).split())
    return sorted(words)


def test_stems_are_nltks() -> None:
    """The same stems as nltk's ``PorterStemmer`` imported the ordinary way, word for word."""
    from nltk.stem.porter import PorterStemmer

    words = _vocabulary()
    assert len(words) > 1000
    nltk_stem = PorterStemmer().stem
    assert [porter_stem(w) for w in words] == [nltk_stem(w) for w in words]


@pytest.mark.crawl
def test_first_stem_imports_neither_nltk_package_nor_scipy() -> None:
    """In a fresh interpreter: the first terms leave no ``nltk`` module and no scipy in
    ``sys.modules``; ``import nltk`` afterwards runs nltk's whole ``__init__`` (its top-level
    names are there) and its stemmer agrees with the one already loaded."""
    code = (
        "import sys\n"
        "from wisdom_scrapy.page.terms import extract_terms\n"
        "from wisdom_scrapy.page.stemmer import porter_stem\n"
        "assert extract_terms('The entropies of dying skies') == ['entropi', 'die', 'sky']\n"
        "left = sorted(m for m in sys.modules if m.split('.')[0] in ('nltk', 'scipy', 'sklearn'))\n"
        "assert not left, left\n"
        "import nltk\n"
        "assert callable(nltk.word_tokenize) and nltk.stem.PorterStemmer\n"
        "words = ['generalizations', 'oscillators', 'running', 'news', 'ied', 'ponies']\n"
        "assert [porter_stem(w) for w in words] == [nltk.PorterStemmer().stem(w) for w in words]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr


def _package(root: Path, init: str, module: str) -> None:
    """``barepkg`` with ``init`` as its ``__init__`` and ``barepkg.sub.mod`` holding ``module``."""
    (root / "barepkg" / "sub").mkdir(parents=True)
    (root / "barepkg" / "__init__.py").write_text(init)
    (root / "barepkg" / "sub" / "__init__.py").write_text("raise RuntimeError('sub init ran')\n")
    (root / "barepkg" / "sub" / "mod.py").write_text(module)


def _with_path(root: Path) -> None:
    sys.path.insert(0, str(root))


def test_import_bare_runs_no_parent_init(tmp_path: Path) -> None:
    _package(tmp_path, "raise RuntimeError('init ran')\n", "from barepkg import helper\nX = 1\n")
    (tmp_path / "barepkg" / "helper.py").write_text("")
    _with_path(tmp_path)
    try:
        module = import_bare("barepkg.sub.mod")
        assert module is not None and module.X == 1
        assert not [m for m in sys.modules if m.split(".")[0] == "barepkg"]
    finally:
        sys.path.remove(str(tmp_path))


def test_import_bare_gives_up_when_the_module_needs_its_package_init(tmp_path: Path) -> None:
    """A module reading a name its package's ``__init__`` defines: None, nothing left behind
    (the caller falls back to the ordinary import)."""
    _package(tmp_path, "NAME = 1\n", "from barepkg import NAME\n")
    _with_path(tmp_path)
    try:
        assert import_bare("barepkg.sub.mod") is None
        assert not [m for m in sys.modules if m.split(".")[0] == "barepkg"]
    finally:
        sys.path.remove(str(tmp_path))


def test_import_bare_leaves_an_imported_package_alone() -> None:
    """``json`` is imported: None, and ``json.decoder`` is still the module everyone has."""
    import json.decoder

    assert import_bare("json.decoder") is None
    assert sys.modules["json.decoder"] is json.decoder
