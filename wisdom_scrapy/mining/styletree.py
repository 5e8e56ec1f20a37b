"""Site style tree (SST) and compressed structure tree (CST): Lan Yi's thesis, ch. 4.2–4.3.

One incremental structure serves both methods. A :class:`StyleTree` is built top-down from a
site's pages (``add_page``, one call per page, no recursion: an explicit stack over the
:class:`~wisdom_scrapy.page.model.PageModel` arrays):

* an **element node** is a (TAG, display attributes) key under a parent style node, with ``m``,
  the number of pages containing it (§4.2.1);
* a **style node** is the sequence of child keys a page's tag node has below an element node,
  with ``n``, the pages using it. A tag node of height ≤ ``leaf_height`` (children only, or
  children and grandchildren) is a **virtual leaf** (§4.2.5 (2): parents of the actual leaves
  for the SST, §4.3.3: grandparents for the CST): it gets the pseudo-style ``LEAF`` and its
  features (terms) are counted for the element: per (element, term) TF = Σ tf and
  S = Σ tf·ln tf, so the entropy of eq. (5-5)/(5-8) is exact and incremental,
  H = (ln TF − S/TF) / ln m (the term-entropy store's closed form, applied inside one element);
* the CST is the same tree read with its style nodes folded into their element (§4.3.1:
  ``E.Ss`` = the element's styles with their counts, ``E.Ts`` = its ``m`` tag nodes), so
  :meth:`StyleTree.cst_weights` and :meth:`StyleTree.sst_marks` read one representation.

Display attributes are the presentational attributes of :data:`DISPLAY_ATTRIBUTES`: the
thesis's ``width``/``height``/``bgcolor`` era attributes and ``class``, which is what carries
presentation on current pages (``id`` is not one: it is per-page on many sites).

Merging (§4.2.5 (1), §4.3.1 step 3)
    When a page creates a new style node below E, each new child is first compared with E's
    existing children of the same key (in E's other style nodes): if the characteristic
    features I (terms with document frequency ≥ γ_merge within the element) of the existing
    element and the features of the new tag node's subtree have Jaccard ≥ λ (both non-empty),
    the slot points to the existing element instead of a new one ("two pointers pointing to
    the newly created element"). Characteristic sets are kept incrementally: a term enters an
    element's set on the page that creates the element and leaves it for good once its
    document frequency falls below γ_merge·m. A page touches only the sets of the elements
    it contains, and the siblings worth a Jaccard test are found through a prefix index
    (:class:`_CharacteristicSets`), so building costs the same per page however large the
    tree has grown.

Importance and cleaning: :meth:`StyleTree.sst_marks` (eqs. 5-1 … 5-5, MarkNoise,
MarkMeaningful, the automatic threshold t) and :meth:`StyleTree.cst_weights` (eqs. 5-6 … 5-10,
thresholds u and m); :func:`map_page` maps a new page onto the tree (MapSST, Fig. 4-7, and
MapCST, Fig. 4-10). Everything after building is vectorised per tree level.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = [
    "CST_PARAMS",
    "DISPLAY_ATTRIBUTES",
    "SST_PARAMS",
    "CstWeights",
    "PageMap",
    "SstMarks",
    "StyleTree",
    "StyleTreeParams",
    "map_page",
    "otsu_threshold",
]

#: Attributes that take part in a presentation style (the thesis's "display attributes").
DISPLAY_ATTRIBUTES: tuple[str, ...] = ("class", "width", "height", "bgcolor", "align", "border")
#: Key of the pseudo-style of a virtual leaf (an element whose tag node has no style below it).
LEAF = -1
_ROOT_KEY = "#root"
_SHIFT = 32  # (element, term) pair code = element << 32 | term
_LOW = (1 << _SHIFT) - 1


@dataclass(frozen=True)
class StyleTreeParams:
    """Parameters of a style tree, with the thesis's values.

    ``leaf_height``: 1 for the SST (parents of leaves are virtual leaves, §4.2.5), 2 for the
    CST (grandparents, §4.3.3), 0 for the basic algorithm of §4.2.1 (actual leaves).
    ``gamma``: the attenuating factor of eq. (5-2), 0.9.
    ``merge_gamma`` / ``merge_lambda``: γ and λ of the merging of element nodes, 0.85 each.
    ``epsilon``: locally noisy features (§4.2.5 (3)), 0.01. ``sample_pages``: pages the tree
    is built from (k = 500, §5.3); later pages are cleaned, not added.
    """

    leaf_height: int = 1
    gamma: float = 0.9
    merge_gamma: float = 0.85
    merge_lambda: float = 0.85
    epsilon: float = 0.01
    sample_pages: int = 500

    def __post_init__(self) -> None:
        if self.leaf_height < 0:
            raise ValueError(f"leaf_height={self.leaf_height!r} must be non-negative")
        for name in ("gamma", "merge_gamma", "merge_lambda", "epsilon"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name}={getattr(self, name)!r} must be between 0 and 1")
        if self.sample_pages < 1:
            raise ValueError(f"sample_pages={self.sample_pages!r} must be positive")


SST_PARAMS = StyleTreeParams(leaf_height=1)
CST_PARAMS = StyleTreeParams(leaf_height=2)


class _Grow:
    """A numpy vector with amortised appends (element and leaf statistics grow per page)."""

    __slots__ = ("data", "size")

    def __init__(self, dtype: Any, values: NDArray[Any] | None = None) -> None:
        self.data = np.zeros(16, dtype) if values is None else np.asarray(values, dtype).copy()
        self.size = 0 if values is None else len(self.data)

    def extend(self, n: int) -> None:
        need = self.size + n
        if need > len(self.data):
            grown = np.zeros(max(need, 2 * len(self.data)), self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.size = need

    @property
    def view(self) -> NDArray[Any]:
        return self.data[: self.size]


class _CharacteristicSets:
    """The characteristic feature sets I of the elements, for merging (§4.2.5 (1), §4.3.1).

    Each element's set lives in its own slice of one flat array (sorted term ids and their
    document frequencies within the element), written once when the page that creates the
    element is merged: a set only ever shrinks afterwards (a term leaves for good once its
    document frequency is below γ·m), so a page touches only the slices of the elements it
    contains and the cost of a page does not grow with the tree.

    Candidate merges are found through a **prefix index** (the exact form of a min-hash
    index): terms are ordered by a fixed hash; if two sets have Jaccard ≥ λ, the first
    ``|I| − ⌈λ·|I|⌉ + 1`` terms of each in that order share a term (prefix filtering, as in
    set-similarity joins). The index maps (sibling group, term) to the elements whose
    prefix holds the term, so a new tag node is compared only with the siblings that share
    a prefix term, instead of with every sibling of the same key the site ever had. The
    exact Jaccard test then decides, first element (oldest) first, as before.
    """

    _MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: term → hash is a bijection (no ties)

    def __init__(self, lam: float) -> None:
        self.lam = lam
        self.start = _Grow(np.int64)
        self.size = _Grow(np.int64)
        self.term = _Grow(np.int64)
        self.df = _Grow(np.int64)
        self.group = _Grow(np.int64)  # sibling group (same parent element and key)
        # (group << 32 | term) -> element or tuple of elements (tuples of ints are not
        # tracked by the garbage collector, lists would be)
        self._index: dict[int, int | tuple[int, ...]] = {}

    # -- layout -------------------------------------------------------------------------------

    def add_element(self, group: int) -> None:
        e = self.start.size
        for arr in (self.start, self.size, self.group):
            arr.extend(1)
        self.start.data[e] = self.size.data[e] = 0
        self.group.data[e] = group

    def terms(self, e: int) -> NDArray[np.int64]:
        s = int(self.start.data[e])
        return self.term.data[s : s + int(self.size.data[e])]

    def _rows(self, elems: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Flat rows of the live entries of ``elems`` and the element of each row."""
        sizes = self.size.data[elems]
        owner = np.repeat(elems, sizes)
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)
        rows = np.arange(int(sizes.sum()), dtype=np.int64) - first + self.start.data[owner]
        return rows, owner

    def codes(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Every live entry as sorted pair codes (element << 32 | term) and frequencies."""
        rows, owner = self._rows(np.arange(self.start.size, dtype=np.int64))
        return (owner << _SHIFT) | self.term.data[rows], self.df.data[rows].copy()

    # -- updates ------------------------------------------------------------------------------

    def create(self, codes: NDArray[np.int64], df: NDArray[np.int64] | None = None) -> None:
        """Write the sets of elements that have none yet, from sorted pair codes."""
        if not len(codes):
            return
        elems, first, sizes = np.unique(codes >> _SHIFT, return_index=True, return_counts=True)
        base = self.term.size
        for arr in (self.term, self.df):
            arr.extend(len(codes))
        self.term.data[base : self.term.size] = codes & _LOW
        self.df.data[base : self.df.size] = 1 if df is None else df
        self.start.data[elems] = base + first
        self.size.data[elems] = sizes
        self._index_rows(self._prefix_rows(elems), add=True)

    def count_page(self, met: NDArray[np.int64], page: NDArray[np.int64], m: NDArray[np.int64],
                   gamma: float) -> None:  # fmt: skip
        """One page contained the elements ``met`` (sorted, unique; the page's pair codes ``page``,
        sorted, and the elements' new page counts ``m``): count their features, drop the
        ones whose document frequency fell below γ·m, compact the slices."""
        if not len(met):
            return
        rows, owner = self._rows(met)
        if not len(rows):
            return
        self.df.data[rows] += np.isin((owner << _SHIFT) | self.term.data[rows], page)
        at = np.searchsorted(met, owner)  # position of each row's element in ``met``
        keep = self.df.data[rows] >= gamma * m[at]
        if keep.all():
            return
        changed = np.unique(owner[~keep])
        self._index_rows(self._prefix_rows(changed), add=False)
        kept_rows, kept_at = rows[keep], at[keep]
        # slots inside each slice: rank of the row among its element's kept rows
        new_size = np.bincount(kept_at, minlength=len(met))
        before = np.cumsum(new_size) - new_size
        dest = self.start.data[met[kept_at]] + np.arange(len(kept_rows)) - before[kept_at]
        self.term.data[dest] = self.term.data[kept_rows]
        self.df.data[dest] = self.df.data[kept_rows]
        self.size.data[met] = new_size
        self._index_rows(self._prefix_rows(changed), add=True)

    # -- prefix index -------------------------------------------------------------------------

    def _hash(self, terms: NDArray[np.int64]) -> NDArray[np.uint64]:
        return terms.astype(np.uint64) * self._MIX

    def _prefix_len(self, sizes: NDArray[np.int64]) -> NDArray[np.int64]:
        # ⌈λ·|I|⌉ taken a hair low, so float rounding can only lengthen the prefix (safe)
        need = np.ceil(self.lam * sizes - 1e-6).astype(np.int64)
        return np.clip(sizes - need + 1, 1, sizes)

    def _prefix_rows(self, elems: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Rows (and their elements) of the prefix terms of ``elems``' current sets."""
        rows, owner = self._rows(elems)
        if not len(rows):
            return rows, owner
        order = np.lexsort((self._hash(self.term.data[rows]), owner))
        rows, owner = rows[order], owner[order]
        sizes = self.size.data[elems]
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)
        take = np.arange(len(rows)) - first < np.repeat(self._prefix_len(sizes), sizes)
        return rows[take], owner[take]

    def _index_rows(
        self, prefix: tuple[NDArray[np.int64], NDArray[np.int64]], *, add: bool
    ) -> None:
        rows, elems = prefix
        if not len(rows):
            return
        keys = (self.group.data[elems] << _SHIFT) | self.term.data[rows]
        index = self._index
        for key, e in zip(keys.tolist(), elems.tolist(), strict=True):
            have = index.get(key)
            if add:
                if have is None:
                    index[key] = e
                else:
                    index[key] = (have, e) if isinstance(have, int) else (*have, e)
            elif isinstance(have, int):
                del index[key]
            elif have is not None:
                rest = tuple(x for x in have if x != e)
                index[key] = rest[0] if len(rest) == 1 else rest

    def members(self, group: int) -> list[int]:
        """Every element of a sibling group, oldest first (O(tree): only for λ = 0, where
        disjoint sets qualify too and the prefix filter does not apply)."""
        return np.flatnonzero(self.group.view == group).tolist()

    def candidates(self, group: int, mine: NDArray[np.int64]) -> list[int]:
        """Elements of ``group`` whose prefix shares a term with the prefix of the term set
        ``mine`` (sorted, unique): the only ones that can have Jaccard ≥ λ with it. Oldest
        first."""
        k = int(self._prefix_len(np.asarray([len(mine)]))[0])
        prefix = mine[np.argsort(self._hash(mine))[:k]]
        found: set[int] = set()
        get = self._index.get
        for t in prefix.tolist():
            have = get((group << _SHIFT) | t)
            if have is None:
                continue
            if isinstance(have, int):
                found.add(have)
            else:
                found.update(have)
        return sorted(found)


class _PageView:
    """What the tree needs of one page: visible children, heights, keys and term codes."""

    def __init__(self, model: PageModel, tree: StyleTree, *, intern: bool = True) -> None:
        self.model = model
        n = model.n
        body_code = model.tag_code("body")
        bodies = np.flatnonzero(model.tag_id == body_code)
        self.body = int(bodies[0]) if body_code >= 0 and len(bodies) else 0
        visible = ~model.hidden
        parent = model.parent
        # heights over visible nodes, one vectorised step per level (deepest first)
        depth = model.depth
        height = np.zeros(n, np.int32)
        vis_nodes = np.flatnonzero(visible)
        order = vis_nodes[np.argsort(depth[vis_nodes], kind="stable")[::-1]]
        dsorted = depth[order]
        cuts = np.flatnonzero(np.diff(dsorted)) + 1
        for level in np.split(order, cuts):
            level = level[parent[level] >= 0]
            if len(level):
                np.maximum.at(height, parent[level], height[level] + 1)
        self.height = height
        self.visible = visible
        # element keys: tag + display attributes
        keys: list[str] = np.array(model.tag_names, dtype=object)[model.tag_id].tolist()
        for name, values in model.attributes(DISPLAY_ATTRIBUTES).items():
            for i, v in enumerate(values):
                if v:
                    v = " ".join(sorted(v.split())) if name == "class" else v.strip().lower()
                    keys[i] += f"|{name}={v}"
        if intern:
            self.key = [tree.key_id(k) for k in keys]
        else:  # unknown keys match no style
            self.key = [tree._key_ids.get(k, -2) for k in keys]
        # children lists of visible nodes
        cs, ci = model.child_start, model.child_index
        self._cs, self._ci = cs.tolist(), ci.tolist()
        self._vis = visible.tolist()
        # term codes: the tree's global term ids of every term occurrence, grouped by node
        if intern:
            gid = np.array([tree.term_id(t) for t in model.vocab], np.int64)
        else:  # a page being cleaned: its unknown terms get ids no statistic has
            get, unknown = tree._term_ids.get, len(tree.terms)
            gid = np.array([get(t, unknown) for t in model.vocab], np.int64)
        self.terms = gid[model.term_ids] if len(model.term_ids) else np.zeros(0, np.int64)
        self.term_start = model.term_start
        self.end = model.subtree_end

    def children(self, d: int) -> list[int]:
        if d < 0:  # the virtual root's child: the body (none on an empty page)
            return [self.body] if self.model.n else []
        vis = self._vis
        return [c for c in self._ci[self._cs[d] : self._cs[d + 1]] if vis[c]]

    def subtree_terms(self, d: int) -> NDArray[np.int64]:
        """Global term ids of every term occurrence in ``d``'s subtree."""
        ts = self.term_start
        return self.terms[ts[d] : ts[self.end[d]]]


@dataclass
class PageMap:
    """A page mapped onto a tree (MapSST / MapCST walk, before any decision).

    ``leaves``: (element, node) of every tag node that met a virtual leaf; ``unmatched``: tag
    nodes whose presentation style the tree has never seen below their element (the thesis
    keeps them: "possibly meaningful"); ``internal``: (element, node) of the matched internal
    tag nodes (their own text, if any, belongs to them).
    """

    view: _PageView
    leaves: list[tuple[int, int]]
    unmatched: list[int]
    internal: list[tuple[int, int]]


class StyleTree:
    """A site's style tree (see the module docstring); grows by :meth:`add_page`."""

    def __init__(self, params: StyleTreeParams = SST_PARAMS) -> None:
        self.params = params
        self.key_names: list[str] = [_ROOT_KEY]
        self._key_ids: dict[str, int] = {_ROOT_KEY: 0}
        self.terms: list[str] = []
        self._term_ids: dict[str, int] = {}
        self.urls: set[str] = set()
        # elements (0 = the virtual root)
        self.el_key = _Grow(np.int32)
        self.el_parent = _Grow(np.int32)
        self.el_m = _Grow(np.int64)
        # (element, child keys) -> style node: one dict for the tree, not one per element
        # (millions of small dicts would make every full garbage collection walk them)
        self._styles: dict[tuple[int, tuple[int, ...]], int] = {}
        # sibling groups: elements with the same parent element and key (merge candidates)
        self._groups: dict[tuple[int, int], int] = {}
        # style nodes
        self.st_parent: list[int] = []
        self.st_keys: list[tuple[int, ...]] = []
        self.st_elems: list[tuple[int, ...]] = []
        self.st_count = _Grow(np.int64)
        # virtual-leaf features: pair code -> row of (TF, S)
        self._leaf_row: dict[int, int] = {}
        self.leaf_code = _Grow(np.int64)
        self.leaf_tf = _Grow(np.float64)
        self.leaf_s = _Grow(np.float64)
        # characteristic features for merging
        self.cs = _CharacteristicSets(params.merge_lambda)
        self._new_element(0, -1)
        self.version = 0  # bumped by every added page (caches of marks/weights check it)

    # -- interning --------------------------------------------------------------------------

    def key_id(self, key: str) -> int:
        kid = self._key_ids.get(key)
        if kid is None:
            kid = self._key_ids[key] = len(self.key_names)
            self.key_names.append(key)
        return kid

    def term_id(self, term: str) -> int:
        tid = self._term_ids.get(term)
        if tid is None:
            tid = self._term_ids[term] = len(self.terms)
            self.terms.append(term)
        return tid

    @property
    def pages(self) -> int:
        """Pages the tree was built from (the root's m)."""
        return int(self.el_m.data[0])

    @property
    def full(self) -> bool:
        """The tree holds its sample (``params.sample_pages``): later pages are only cleaned."""
        return self.pages >= self.params.sample_pages

    @property
    def n_elements(self) -> int:
        return self.el_key.size

    def _new_element(self, key: int, parent: int) -> int:
        e = self.el_key.size
        for arr, v in ((self.el_key, key), (self.el_parent, parent), (self.el_m, 0)):
            arr.extend(1)
            arr.data[e] = v
        self._register(e, key, parent)
        return e

    def _register(self, e: int, key: int, parent: int) -> None:
        """Element ``e`` joins its sibling group (same parent and key) and gets an empty
        characteristic set."""
        group = self._groups.setdefault((parent, key), len(self._groups)) if parent >= 0 else -1
        self.cs.add_element(group)

    def style_of(self, e: int, keys: tuple[int, ...]) -> int | None:
        """The style node of element ``e`` with child keys ``keys`` (None if never seen)."""
        return self._styles.get((e, keys))

    def styles_of(self, e: int) -> dict[tuple[int, ...], int]:
        """Every style node of element ``e``: child keys -> style node."""
        return {self.st_keys[s]: s for s, p in enumerate(self.st_parent) if p == e}

    def siblings(self, parent: int, key: int) -> list[int]:
        """Elements with key ``key`` below ``parent`` (one sibling group), oldest first."""
        group = self._groups.get((parent, key))
        return [] if group is None else self.cs.members(group)

    # -- building ---------------------------------------------------------------------------

    def add_page(self, model: PageModel, url: str) -> bool:
        """Merge one page into the tree (BuildSST, top-down). False, changing nothing, when
        the URL is already in the tree, the tree is full, or the page has no nodes."""
        if url in self.urls or self.full or model.n == 0:
            return False
        self.urls.add(url)
        view = _PageView(model, self)
        first_new = self.n_elements
        elem_of = np.full(model.n, -1, np.int64)
        leaves: list[tuple[int, int]] = []
        h = self.params.leaf_height
        height = view.height
        stack: list[tuple[int, int]] = [(0, -1)]
        visited = [0]
        while stack:
            e, d = stack.pop()
            if d >= 0:
                elem_of[d] = e
                visited.append(e)
            if d >= 0 and height[d] <= h:
                self._count_style(e, (LEAF,), [], [])
                leaves.append((e, d))
                continue
            kids = view.children(d)
            keys = tuple(view.key[c] for c in kids)
            sid = self._count_style(e, keys, kids, view)
            stack.extend(zip(self.st_elems[sid], kids, strict=True))
        np.add.at(self.el_m.data, np.asarray(visited, np.int64), 1)
        self._add_leaf_features(view, leaves)
        self._update_characteristic(view, elem_of, first_new)
        self.version += 1
        return True

    def _count_style(
        self, e: int, keys: tuple[int, ...], kids: list[int], view: _PageView | list[Any]
    ) -> int:
        sid = self._styles.get((e, keys))
        if sid is None:
            sid = len(self.st_parent)
            elems = () if keys == (LEAF,) else self._new_slots(e, keys, kids, view)  # type: ignore[arg-type]
            self._styles[e, keys] = sid
            self.st_parent.append(e)
            self.st_keys.append(keys)
            self.st_elems.append(elems)
            self.st_count.extend(1)
        self.st_count.data[sid] += 1
        return sid

    def _new_slots(
        self, e: int, keys: tuple[int, ...], kids: list[int], view: _PageView
    ) -> tuple[int, ...]:
        """Element nodes of a new style node below ``e``: merged into an existing sibling
        element with similar characteristic features (module docstring), else new."""
        lam = self.params.merge_lambda
        used: set[int] = set()
        out = []
        for key, kid in zip(keys, kids, strict=True):
            chosen = -1
            group = self._groups.get((e, key))
            if group is not None:
                chosen = self._merge_target(group, view.subtree_terms(kid), used, lam)
            if chosen < 0:
                chosen = self._new_element(key, e)
            used.add(chosen)
            out.append(chosen)
        return tuple(out)

    def _merge_target(
        self, group: int, terms: NDArray[np.int64], used: set[int], lam: float
    ) -> int:
        """The oldest element of the sibling ``group`` whose characteristic features have
        Jaccard ≥ λ with ``terms`` (−1 if none). Only the siblings the prefix index offers can
        pass; of those, sizes are compared first (Jaccard ≥ λ needs λ·|A| ≤ |B| ≤ |A|/λ)."""
        mine = np.unique(terms)
        a = len(mine)
        if not a:
            return -1
        cs = self.cs
        cands = cs.candidates(group, mine) if lam > 0 else cs.members(group)
        size = cs.size.data
        for cand in cands:
            b = int(size[cand])
            if cand in used or not (b > 0 and lam * a <= b and b * lam <= a):
                continue
            inter = len(np.intersect1d(mine, cs.terms(cand), assume_unique=True))
            if inter / (a + b - inter) >= lam:
                return cand
        return -1

    def _add_leaf_features(self, view: _PageView, leaves: list[tuple[int, int]]) -> None:
        """TF and S of every (virtual leaf element, term) pair of the page."""
        parts = [(e << _SHIFT) | view.subtree_terms(d) for e, d in leaves]
        if not parts:
            return
        codes, tf = np.unique(np.concatenate(parts), return_counts=True)
        if not len(codes):
            return
        rows_of = self._leaf_row
        start = len(rows_of)
        rows = np.fromiter(
            (rows_of.setdefault(c, len(rows_of)) for c in codes.tolist()), np.int64, len(codes)
        )
        added = len(rows_of) - start
        for arr in (self.leaf_code, self.leaf_tf, self.leaf_s):
            arr.extend(added)
        self.leaf_code.data[rows] = codes
        tf = tf.astype(np.float64)
        self.leaf_tf.data[rows] += tf
        self.leaf_s.data[rows] += tf * np.log(tf)

    def _update_characteristic(
        self, view: _PageView, elem_of: NDArray[np.int64], first_new: int
    ) -> None:
        """Document frequencies of the characteristic features (module docstring)."""
        model = view.model
        if not len(view.terms):
            page = np.zeros(0, np.int64)
        else:
            owner = np.repeat(np.arange(model.n), np.diff(model.term_start))
            pairs = np.unique(owner * (len(self.terms) + 1) + view.terms)
            cur = pairs // (len(self.terms) + 1)
            gid = pairs % (len(self.terms) + 1)
            parts = []
            parent = model.parent
            while len(cur):
                el = elem_of[cur]
                ok = el >= 0
                parts.append((el[ok] << _SHIFT) | gid[ok])
                go = (cur != view.body) & (parent[cur] >= 0)
                cur, gid = parent[cur[go]].astype(np.int64), gid[go]
            page = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        # old elements met on this page: count their characteristic features (only their
        # slices are touched); the elements this page created get their first sets
        old = np.unique(elem_of[(elem_of >= 0) & (elem_of < first_new)])
        self.cs.count_page(old, page, self.el_m.data[old], self.params.merge_gamma)
        self.cs.create(page[(page >> _SHIFT) >= first_new])

    # -- reading ----------------------------------------------------------------------------

    def _arrays(self) -> _TreeArrays:
        return _TreeArrays.of(self)

    def sst_marks(self, threshold: float | None = None) -> SstMarks:
        """CompImp of every element (eqs. 5-1 … 5-5), the threshold t (automatic unless
        given, see :func:`otsu_threshold`), and the noisy / meaningful marks."""
        return SstMarks.of(self, threshold)

    def cst_weights(self, *, u: float = 1.0, m: float | None = None) -> CstWeights:
        """NodeImp (5-6, 5-7), PathImp (5-9) and the feature weights W_E(a) (5-10) with the
        sampled variant's thresholds u and m (see :class:`CstWeights`)."""
        return CstWeights.of(self, u=u, m=m)

    # -- persistence ------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The whole tree, compact (compressed numpy arrays)."""
        st_keys = [k for keys in self.st_keys for k in keys]
        st_elems = [e for elems in self.st_elems for e in elems]
        cs_code, cs_df = self.cs.codes()
        meta = {
            "params": self.params.__dict__,
            "keys": self.key_names,
            "terms": self.terms,
            "urls": sorted(self.urls),
            "version": self.version,
        }
        buf = io.BytesIO()
        np.savez_compressed(
            buf,
            meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
            el_key=self.el_key.view,
            el_parent=self.el_parent.view,
            el_m=self.el_m.view,
            st_parent=np.asarray(self.st_parent, np.int64),
            st_nkeys=np.asarray([len(k) for k in self.st_keys], np.int64),
            st_keys=np.asarray(st_keys, np.int64),
            st_nelems=np.asarray([len(e) for e in self.st_elems], np.int64),
            st_elems=np.asarray(st_elems, np.int64),
            st_count=self.st_count.view,
            leaf_code=self.leaf_code.view,
            leaf_tf=self.leaf_tf.view,
            leaf_s=self.leaf_s.view,
            cs_code=cs_code,
            cs_df=cs_df,
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> StyleTree:
        """A tree saved by :meth:`to_bytes`; ValueError on anything else."""
        try:
            z = np.load(io.BytesIO(blob), allow_pickle=False)
            meta = json.loads(bytes(z["meta"]).decode())
            tree = cls(StyleTreeParams(**meta["params"]))
            tree.key_names = list(meta["keys"])
            tree._key_ids = {k: i for i, k in enumerate(tree.key_names)}
            tree.terms = list(meta["terms"])
            tree._term_ids = {t: i for i, t in enumerate(tree.terms)}
            tree.urls = set(meta["urls"])
            tree.version = int(meta["version"])
            tree.el_key = _Grow(np.int32, z["el_key"])
            tree.el_parent = _Grow(np.int32, z["el_parent"])
            tree.el_m = _Grow(np.int64, z["el_m"])
            tree._styles, tree._groups = {}, {}
            tree.cs = _CharacteristicSets(tree.params.merge_lambda)
            pairs = zip(z["el_key"].tolist(), z["el_parent"].tolist(), strict=True)
            for e, (k, p) in enumerate(pairs):  # sibling groups, in creation order
                tree._register(e, k, p)
            keys = _split(z["st_keys"], z["st_nkeys"])
            elems = _split(z["st_elems"], z["st_nelems"])
            tree.st_parent = z["st_parent"].tolist()
            tree.st_keys = [tuple(k.tolist()) for k in keys]
            tree.st_elems = [tuple(e.tolist()) for e in elems]
            tree.st_count = _Grow(np.int64, z["st_count"])
            for sid, (p, k) in enumerate(zip(tree.st_parent, tree.st_keys, strict=True)):
                tree._styles[p, k] = sid
            tree.leaf_code = _Grow(np.int64, z["leaf_code"])
            tree.leaf_tf = _Grow(np.float64, z["leaf_tf"])
            tree.leaf_s = _Grow(np.float64, z["leaf_s"])
            tree._leaf_row = {c: i for i, c in enumerate(z["leaf_code"].tolist())}
            tree.cs.create(z["cs_code"].astype(np.int64), z["cs_df"].astype(np.int64))
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ValueError(f"not a saved style tree: {exc}") from exc
        return tree


def _split(flat: NDArray[np.int64], lengths: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    return np.split(flat, np.cumsum(lengths)[:-1]) if len(lengths) else []


# --------------------------------------------------------------------------------------------
# importance
# --------------------------------------------------------------------------------------------


@dataclass
class _TreeArrays:
    """The tree as flat arrays for vectorised importance (computed per tree version)."""

    n: int
    m: NDArray[np.float64]  # pages containing each element
    parent: NDArray[np.int64]  # parent element (−1 for the root)
    level: NDArray[np.int64]  # depth of each element
    st_parent: NDArray[np.int64]
    st_count: NDArray[np.float64]
    st_leaf: NDArray[np.bool_]
    slot_style: NDArray[np.int64]  # one entry per (style node, element) slot
    slot_elem: NDArray[np.int64]
    leaf_m: NDArray[np.float64]  # pages on which each element was a virtual leaf
    code_elem: NDArray[np.int64]  # per (element, term) pair
    code_term: NDArray[np.int64]
    code_tf: NDArray[np.float64]
    code_h: NDArray[np.float64]  # H_E(a), eqs. (5-5) / (5-8)
    mean_h: NDArray[np.float64]  # mean H over each element's features (nan without any)

    @classmethod
    def of(cls, tree: StyleTree) -> _TreeArrays:
        n = tree.n_elements
        parent = tree.el_parent.view.astype(np.int64)
        level = np.zeros(n, np.int64)
        for e in range(1, n):  # parents have smaller ids (created first)
            level[e] = level[parent[e]] + 1
        st_parent = np.asarray(tree.st_parent, np.int64)
        st_count = tree.st_count.view.astype(np.float64)
        st_leaf = np.asarray([k == (LEAF,) for k in tree.st_keys], bool)
        lens = np.asarray([len(e) for e in tree.st_elems], np.int64)
        slot_style = np.repeat(np.arange(len(lens)), lens)
        slot_elem = np.asarray([e for el in tree.st_elems for e in el], np.int64)
        leaf_m = np.zeros(n)
        np.add.at(leaf_m, st_parent[st_leaf], st_count[st_leaf])
        code = tree.leaf_code.view
        elem, term = code >> _SHIFT, code & _LOW
        tf, s = tree.leaf_tf.view, tree.leaf_s.view
        lm = leaf_m[elem]
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.where(lm > 1, (np.log(tf) - s / tf) / np.log(np.maximum(lm, 2)), 0.0)
            h = np.clip(h, 0.0, 1.0)
            nfeat = np.bincount(elem, minlength=n)
            mean_h = np.bincount(elem, h, minlength=n) / nfeat
        return cls(n, tree.el_m.view.astype(np.float64), parent, level, st_parent, st_count,
                   st_leaf, slot_style, slot_elem, leaf_m, elem, term, tf, h, mean_h)  # fmt: skip

    def style_entropy(self, m_is_one: float) -> NDArray[np.float64]:
        """−Σ p_i log_m p_i over each element's style nodes (eqs. 5-1 and 5-6); ``m_is_one``
        is the value for an element on one page (1 for the SST, 0 for the CST)."""
        m = self.m[self.st_parent]
        p = np.where(m > 0, self.st_count / np.maximum(m, 1), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(p > 0, -p * np.log(p), 0.0)
        total = np.bincount(self.st_parent, term, minlength=self.n)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(self.m > 1, total / np.log(np.maximum(self.m, 2)), m_is_one)
        return np.clip(out, 0.0, 1.0)


def otsu_threshold(values: NDArray[Any], weights: NDArray[Any]) -> float:
    """The value that splits ``values`` into two classes with the largest between-class
    variance (Otsu), each value counted with its weight: the noisy class is ``≤`` the result.

    Why this is the threshold t: the thesis's assumptions (§4.1.1, §4.2.2) are that noise
    (template blocks: fixed presentation, content repeated on every page) has importance near
    0 and main content (diverse presentation or diverse content) near 1; t is a boundary
    between these two populations, which the thesis found by eye per site. Otsu's split is the
    boundary that makes the two populations most compact around their own means, computed
    from the site's own distribution — no constant tuned on any site. Values are weighted by
    the text they carry (term occurrences) so that thousands of tiny page-unique elements do
    not outvote the few large template blocks. With fewer than two distinct values there is
    no boundary: 0.0 (only importance-0 elements are noisy).
    """
    v = np.asarray(values, np.float64)
    w = np.asarray(weights, np.float64)
    ok = np.isfinite(v) & (w > 0)
    v, w = v[ok], w[ok]
    if len(v) == 0:
        return 0.0
    uniq, inv = np.unique(v, return_inverse=True)
    if len(uniq) < 2:
        return 0.0
    wsum = np.bincount(inv, w)
    vsum = np.bincount(inv, w * v)
    w0, s0 = np.cumsum(wsum)[:-1], np.cumsum(vsum)[:-1]
    total_w, total_s = wsum.sum(), vsum.sum()
    w1, s1 = total_w - w0, total_s - s0
    between = w0 * w1 * (s0 / w0 - s1 / w1) ** 2
    return float(uniq[int(np.argmax(between))])


@dataclass
class SstMarks:
    """SST importance and marks (§4.2.2–4.2.3).

    ``node_imp``: eq. (5-1); ``leaf_imp``: eq. (5-4) of each element's virtual-leaf content;
    ``comp_imp``: eqs. (5-2)/(5-3) (an element that is a virtual leaf on every page has
    CompImp = leaf_imp; one that is a leaf on some pages only counts ``LEAF`` as one of its
    styles, with leaf_imp as that style's CompImp). ``threshold``: t. ``noisy``: the element
    and all its descendants have CompImp ≤ t (MarkNoise, Fig. 4-5). ``meaningful``: CompImp > t
    and no noisy descendant (MarkMeaningful). ``code_*``: the per-feature entropies for the
    locally-noisy-feature rule.
    """

    arrays: _TreeArrays
    node_imp: NDArray[np.float64]
    leaf_imp: NDArray[np.float64]
    comp_imp: NDArray[np.float64]
    threshold: float
    noisy: NDArray[np.bool_]
    meaningful: NDArray[np.bool_]

    @classmethod
    def of(cls, tree: StyleTree, threshold: float | None) -> SstMarks:
        a = tree._arrays()
        gamma = tree.params.gamma
        node_imp = a.style_entropy(1.0)
        # (5-4): m = 1 → 1; else 1 − mean H; no features → nothing informative: 0
        leaf_imp = np.where(a.leaf_m == 1, 1.0, np.nan_to_num(1.0 - a.mean_h, nan=0.0))
        n_styles = np.bincount(a.st_parent, minlength=a.n)
        pure_leaf = n_styles == np.bincount(a.st_parent[a.st_leaf], minlength=a.n)
        comp = np.zeros(a.n)
        style_comp = np.zeros(len(a.st_parent))
        slot_level = a.level[a.slot_elem] if len(a.slot_elem) else np.zeros(0, np.int64)
        for lv in range(int(a.level.max()) if a.n else 0, -1, -1):
            at = a.level == lv
            # style nodes whose elements are on level lv + 1 are complete: their mean CompImp
            sel = slot_level == lv + 1
            sums = np.bincount(a.slot_style[sel], comp[a.slot_elem[sel]], len(a.st_parent))
            cnts = np.bincount(a.slot_style[sel], minlength=len(a.st_parent))
            done = cnts > 0
            style_comp[done] = sums[done] / cnts[done]
            style_comp[a.st_leaf] = leaf_imp[a.st_parent[a.st_leaf]]
            m = a.m[a.st_parent]
            p = np.where(m > 0, a.st_count / np.maximum(m, 1), 0.0)
            mix = np.bincount(a.st_parent, p * style_comp, minlength=a.n)
            g = gamma**n_styles
            value = np.where(pure_leaf, leaf_imp, (1 - g) * node_imp + g * mix)
            comp[at] = value[at]
        if threshold is None:
            mass = np.bincount(a.code_elem, a.code_tf, minlength=a.n)
            has_leaf = a.leaf_m > 0
            threshold = otsu_threshold(leaf_imp[has_leaf], mass[has_leaf])
        noisy, meaningful = _marks(a, comp, threshold)
        return cls(a, node_imp, leaf_imp, comp, float(threshold), noisy, meaningful)

    def local_noise(self, epsilon: float) -> NDArray[np.int64]:
        """Sorted pair codes (element << 32 | term) of the locally noisy features: those whose
        importance 1 − H_E(a) is below ε in an element on more than one page.

        The thesis writes "whose information entropy is smaller than ε"; read literally that
        would drop the features unique to one page (H = 0), the most informative ones by its
        own eq. (5-4), so the reading consistent with (5-4) is used: importance 1 − H < ε, a
        feature spread evenly over the element's pages (a label repeated in a content block).
        """
        a = self.arrays
        bad = (1.0 - a.code_h < epsilon) & (a.leaf_m[a.code_elem] > 1)
        return np.sort((a.code_elem[bad] << _SHIFT) | a.code_term[bad])


def _marks(
    a: _TreeArrays, comp: NDArray[np.float64], t: float
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """MarkNoise and MarkMeaningful (Fig. 4-5), bottom-up one tree level at a time."""
    noisy = comp <= t
    meaningful = comp > t
    slot_parent = a.st_parent[a.slot_style] if len(a.slot_style) else np.zeros(0, np.int64)
    slot_level = a.level[a.slot_elem] if len(a.slot_elem) else np.zeros(0, np.int64)
    for lv in range(int(a.level.max()) if a.n else 0, 0, -1):
        sel = slot_level == lv
        kids_not_noisy = np.bincount(slot_parent[sel], ~noisy[a.slot_elem[sel]], a.n)
        kids_not_meaningful = np.bincount(slot_parent[sel], ~meaningful[a.slot_elem[sel]], a.n)
        up = a.level == lv - 1
        noisy[up] &= kids_not_noisy[up] == 0
        meaningful[up] &= kids_not_meaningful[up] == 0
    return noisy, meaningful


@dataclass
class CstWeights:
    """CST importance and feature weights (§4.3.2–4.3.3).

    ``node_imp``: eq. (5-6) for elements with a style below them on some page (m = 1 → 0),
    eq. (5-7) for pure virtual leaves; ``path_imp``: eq. (5-9); ``code`` (sorted pair codes
    element << 32 | term) and ``weight``: W_E(a) per unit frequency (5-10) =
    PathImp(E) · (1 − H_E(a)), after the sampled variant's rule: below ``m`` → 0 (M_E), below
    ``u`` → the weight (U_E), otherwise 1.

    ``m`` defaults to 1/N for a tree of N pages: a feature whose weight is below it cannot add
    up to one full occurrence over the whole sample, so it carries no information for mining —
    the "small enough meaningless threshold" from the site's size rather than a constant.
    ``u`` defaults to 1 (every weight kept exactly); the thesis's 0.2 trades accuracy for space.
    ``leaf_threshold``: the Otsu split (:func:`otsu_threshold`) of the elements' mean weight,
    used to decide which virtual leaves go into an ArticleItem's text.
    """

    arrays: _TreeArrays
    node_imp: NDArray[np.float64]
    path_imp: NDArray[np.float64]
    code: NDArray[np.int64]
    weight: NDArray[np.float64]
    u: float
    m: float
    leaf_threshold: float
    element_weight: NDArray[np.float64]

    @classmethod
    def of(cls, tree: StyleTree, *, u: float, m: float | None) -> CstWeights:
        a = tree._arrays()
        if m is None:
            m = 1.0 / max(tree.pages, 1)
        if not 0.0 <= m <= u <= 1.0:
            raise ValueError(f"need 0 <= m <= u <= 1, got m={m!r}, u={u!r}")
        internal = a.style_entropy(0.0)
        n_styles = np.bincount(a.st_parent, minlength=a.n)
        pure_leaf = n_styles == np.bincount(a.st_parent[a.st_leaf], minlength=a.n)
        leaf = np.nan_to_num(1.0 - a.mean_h, nan=0.0)
        node_imp = np.where(pure_leaf & (n_styles > 0), leaf, internal)
        path = np.zeros(a.n)
        for e in range(a.n):  # parents first (smaller ids)
            p = a.parent[e]
            base = path[p] if p >= 0 else 0.0
            path[e] = 1.0 - (1.0 - base) * (1.0 - node_imp[e])
        w = path[a.code_elem] * (1.0 - a.code_h)
        w = np.where(w < m, 0.0, np.where(w < u, w, 1.0))
        code = (a.code_elem << _SHIFT) | a.code_term
        order = np.argsort(code)
        mass = np.bincount(a.code_elem, a.code_tf, minlength=a.n)
        wmass = np.bincount(a.code_elem, a.code_tf * w, minlength=a.n)
        with np.errstate(divide="ignore", invalid="ignore"):
            elem_w = np.where(mass > 0, wmass / mass, np.nan)
        t = otsu_threshold(elem_w, mass)
        return cls(a, node_imp, path, code[order], w[order], u, m, t, elem_w)

    def lookup(self, codes: NDArray[np.int64]) -> NDArray[np.float64]:
        """Weights of pair codes; a feature the element never had gets 1 (MapCST)."""
        at = np.searchsorted(self.code, codes)
        at = np.minimum(at, max(len(self.code) - 1, 0))
        found = (self.code[at] == codes) if len(self.code) else np.zeros(len(codes), bool)
        return np.where(found, self.weight[at] if len(self.code) else 1.0, 1.0)


# --------------------------------------------------------------------------------------------
# mapping a page onto the tree (MapSST, Fig. 4-7; MapCST, Fig. 4-10)
# --------------------------------------------------------------------------------------------


def map_page(
    tree: StyleTree,
    model: PageModel,
    *,
    stop: NDArray[np.bool_] | None = None,
    known: int | None = None,
) -> PageMap:
    """Walk ``model`` down ``tree`` (no recursion): each tag node meets the element its
    position and the presentation styles above it lead to. ``stop`` (per element) ends the
    walk at an element (the SST's noisy elements: their whole subtree is dropped). Elements
    from ``known`` on were added after the importance in use was computed: a tag node that
    meets one is unmatched (kept whole, as a style never seen). The tree is not changed."""
    view = _PageView(model, tree, intern=False)
    leaves: list[tuple[int, int]] = []
    unmatched: list[int] = []
    internal: list[tuple[int, int]] = []
    h = tree.params.leaf_height
    height = view.height
    stack: list[tuple[int, int]] = [(0, -1)]
    while stack:
        e, d = stack.pop()
        if known is not None and e >= known:
            unmatched.append(d)
            continue
        if stop is not None and stop[e]:
            continue
        if d >= 0 and height[d] <= h:
            leaves.append((e, d))
            continue
        kids = view.children(d)
        sid = tree.style_of(e, tuple(view.key[c] for c in kids))
        if sid is None:
            if d >= 0:
                unmatched.append(d)
            else:
                unmatched.extend(kids)
            continue
        if d >= 0:
            internal.append((e, d))
        stack.extend(zip(tree.st_elems[sid], kids, strict=True))
    return PageMap(view, leaves, unmatched, internal)
