"""URL helpers shared by every stage: link resolution and the site key pages are grouped by."""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import urljoin, urlsplit

__all__ = ["absolute_url", "document_base", "host_key"]

# Links that never lead to a page of the site.
_NOT_PAGES = ("javascript:", "mailto:", "tel:", "data:", "about:", "ftp:", "file:", "#")


def document_base(root: object, url: str) -> str:
    """What relative links of a page resolve against: its ``<base href>`` if any, else ``url``."""
    find = getattr(root, "find", None)
    base = find(".//base[@href]") if find else None
    href = base.get("href", "").strip() if base is not None else ""
    return urljoin(url, href) if href else url


def absolute_url(base: str, href: str | None) -> str | None:
    """Absolute http(s) URL of ``href`` without its fragment, or None when it is not a page link.

    >>> absolute_url("http://a.org/x/y.html", "../z.html#top")
    'http://a.org/z.html'
    >>> absolute_url("http://a.org/", "javascript:void(0)") is None
    True
    """
    if not href:
        return None
    href = href.strip()
    if not href or href.lower().startswith(_NOT_PAGES):
        return None
    if not href.startswith(("http://", "https://")):
        href = urljoin(base, href) if href[0] == "?" else _join(_directory(base), href)
        if not href.startswith(("http://", "https://")):
            return None
    hash_at = href.find("#")
    return href[:hash_at] if hash_at >= 0 else href


def _directory(url: str) -> str:
    """``url`` up to its last path slash: what a relative path resolves against.

    Pages of one folder share it, so :func:`_join` results are reused across pages.
    """
    url = url.split("#", 1)[0].split("?", 1)[0]
    if url.count("/") < 3:  # "http://host" without a path
        return url + "/"
    return url[: url.rfind("/") + 1]


@lru_cache(maxsize=1 << 16)
def _join(directory: str, href: str) -> str:
    return urljoin(directory, href)


def host_key(url: str) -> str:
    """Default site key: the lower-cased host with its port, if any (``example.org:8080``).

    The port is part of it because different local servers are different sites.
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return f"{host}:{parts.port}" if parts.port else host
