"""Mining stages over a :class:`~wisdom_scrapy.page.model.PageModel`.

* :mod:`wisdom_scrapy.mining.wisdom` — WISDOM (Kao, Ho, Chen): node features (CII, API, SII),
  the information coverage tree, k-MIB, DSTM / k-CSTM merging and condensing.
* :mod:`wisdom_scrapy.mining.density` — the single-page article fallback (no site context).

Submodules are imported on use, so importing this package costs nothing.
"""

from __future__ import annotations
