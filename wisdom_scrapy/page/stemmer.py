"""nltk's Porter stemmer without nltk's package import.

``import nltk`` runs nltk's ``__init__``, which imports nearly all of nltk and, through
``nltk.collocations`` → ``nltk.metrics``, scipy.stats (and scikit-learn's modules where they
are installed): about 1.3 s of CPU, of which the stemmer needs nothing. ``nltk.stem.porter``
itself imports three small modules (``nltk.stem.api``, ``nltk.redos``, ``nltk.termsec``) and
``regex``. Python runs a package's ``__init__`` before any of its submodules, so
this module imports ``nltk.stem.porter`` under *bare* parent modules: ``nltk`` and
``nltk.stem`` made from their own import specs (``importlib.util.module_from_spec``), their
``__init__`` not run. Once the stemmer's module is loaded, every ``nltk`` module is taken out of
``sys.modules`` again, so a later ``import nltk`` (the project's own) gets the whole package, as
if this had never run.

It is nltk's own class from nltk's own file: the stems are nltk's, to the byte
(``tests/test_text.py`` compares them with the ordinary import's). Where that cannot be done —
nltk already imported (then the ordinary import costs nothing), or a version of nltk whose
``porter`` module needs its package's ``__init__`` — the ordinary import is used.

The bare parents stand in ``sys.modules`` for the few milliseconds of the stemmer's import: an
``import nltk`` in another thread at that moment would get one. The package imports the
stemmer from the thread that calls :func:`~wisdom_scrapy.page.terms.extract_terms` first (the
crawl's reactor thread, a worker's main thread); a lock keeps two such threads apart.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from types import ModuleType

__all__ = ["import_bare", "porter_stem"]

#: the stemmer's module
PORTER_MODULE = "nltk.stem.porter"

_lock = threading.Lock()
_stem: Callable[[str], str] | None = None


def porter_stem(word: str) -> str:
    """``nltk.stem.porter.PorterStemmer().stem(word)`` (nltk's default mode, its extensions),
    the stemmer loaded on first use."""
    stem = _stem or _load()
    return stem(word)


def _load() -> Callable[[str], str]:
    global _stem
    with _lock:
        if _stem is None:
            module = import_bare(PORTER_MODULE)
            if module is None:
                module = importlib.import_module(PORTER_MODULE)
            _stem = module.PorterStemmer().stem
        return _stem


def import_bare(name: str) -> ModuleType | None:
    """Module ``name`` imported under parent packages whose ``__init__`` did not run, or None
    when its top-level package is imported already (the ordinary import is free then) or when
    the module needs what a parent's ``__init__`` defines. Either way no module of that
    top-level package is left in ``sys.modules``: the caller keeps the one it got."""
    top = name.partition(".")[0]
    if top in sys.modules:
        return None
    parents = [name.rsplit(".", depth)[0] for depth in range(name.count("."), 0, -1)]
    try:
        for parent in parents:
            spec = importlib.util.find_spec(parent)
            if spec is None or spec.submodule_search_locations is None:
                return None
            sys.modules[parent] = importlib.util.module_from_spec(spec)
        return importlib.import_module(name)
    except Exception:  # whatever a future nltk's module needs of its package: the ordinary import
        return None
    finally:
        for loaded in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            del sys.modules[loaded]
