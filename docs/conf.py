"""Sphinx configuration of wisdom_scrapy's documentation (``docs/``).

Build: ``pip install -e '.[docs]'`` then ``python -m sphinx -W --keep-going -b html docs
docs/_build/html``. The build never touches the network: no intersphinx, and the link check
(``-b linkcheck``) checks the local links only (``linkcheck_ignore`` skips every http(s) URL).
"""

from __future__ import annotations

import wisdom_scrapy

project = "wisdom_scrapy"
author = "the wisdom_scrapy authors"
copyright = "2026, the wisdom_scrapy authors"
release = wisdom_scrapy.__version__
version = ".".join(release.split(".")[:2])

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
root_doc = "index"

# ``[text](page.md#heading)`` links to headings of levels 1-3 (checked: a missing one warns)
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"

html_theme = "sphinx_rtd_theme"
html_title = f"wisdom_scrapy {release}"
html_show_sourcelink = False

# offline link check: local links only (documents, files and anchors), never the network
linkcheck_ignore = [r"^https?://"]
linkcheck_anchors = False
html_static_path = ["_static"]
html_css_files = ["custom.css"]
