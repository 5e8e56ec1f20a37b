"""Site style tree (SST) and compressed structure tree (CST): Lan Yi's thesis, ch. 4.2–4.3.

One incremental structure serves both methods. A :class:`StyleTree` is built top-down from a
site's pages (``add_page``, one call per page, no recursion: an explicit stack over the
:class:`~wisdom_scrapy.dom.PageModel` arrays):

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
    document frequency falls below γ_merge·m, so the sets stay as small as the element's
    repeated content (template text) and cost no memory for page-unique prose.

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

    from wisdom_scrapy.dom import PageModel

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
        for name in DISPLAY_ATTRIBUTES:
            values = model.attribute_values(name)
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
        self.el_styles: list[dict[tuple[int, ...], int]] = []
        self._by_key: dict[tuple[int, int], list[int]] = {}
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
        # characteristic features for merging: sorted pair codes and their document frequency
        self.cs_code = np.zeros(0, np.int64)
        self.cs_df = np.zeros(0, np.int64)
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
        self.el_styles.append({})
        if parent >= 0:
            self._by_key.setdefault((parent, key), []).append(e)
        return e

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
        sid = self.el_styles[e].get(keys)
        if sid is None:
            sid = len(self.st_parent)
            elems = () if keys == (LEAF,) else self._new_slots(e, keys, kids, view)  # type: ignore[arg-type]
            self.el_styles[e][keys] = sid
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
            candidates = self._by_key.get((e, key))
            if candidates:
                chosen = self._merge_target(candidates, view.subtree_terms(kid), used, lam)
            if chosen < 0:
                chosen = self._new_element(key, e)
            used.add(chosen)
            out.append(chosen)
        return tuple(out)

    def _merge_target(
        self, candidates: list[int], terms: NDArray[np.int64], used: set[int], lam: float
    ) -> int:
        """The first candidate whose characteristic features have Jaccard ≥ λ with ``terms``
        (−1 if none). Sizes are compared first, for all candidates at once: Jaccard ≥ λ needs
        λ·|A| ≤ |B| ≤ |A|/λ, which rules out nearly every candidate without a set operation."""
        mine = np.unique(terms)
        a = len(mine)
        if not a:
            return -1
        cands = np.asarray(candidates, np.int64)
        lo = np.searchsorted(self.cs_code, cands << _SHIFT)
        hi = np.searchsorted(self.cs_code, (cands + 1) << _SHIFT)
        b = hi - lo
        ok = np.flatnonzero((b > 0) & (lam * a <= b) & (b * lam <= a))
        for i in ok.tolist():
            cand = int(cands[i])
            if cand in used:
                continue
            theirs = self.cs_code[lo[i] : hi[i]] & _LOW
            inter = len(np.intersect1d(mine, theirs, assume_unique=True))
            if inter / (a + b[i] - inter) >= lam:
                return cand
        return -1

    def _characteristic(self, e: int) -> NDArray[np.int64]:
        lo, hi = np.searchsorted(self.cs_code, [e << _SHIFT, (e + 1) << _SHIFT])
        return self.cs_code[lo:hi] & _LOW

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
        # old elements met on this page: count their characteristic features, drop the ones
        # whose document frequency fell below γ·m (only their rows are touched)
        old = elem_of[(elem_of >= 0) & (elem_of < first_new)]
        met = np.zeros(self.n_elements, bool)
        met[old] = True
        met[0] = first_new > 0
        rows = np.flatnonzero(met[self.cs_code >> _SHIFT])
        if len(rows):
            self.cs_df[rows] += np.isin(self.cs_code[rows], page, assume_unique=True)
            m = self.el_m.view[self.cs_code[rows] >> _SHIFT]
            drop = rows[self.cs_df[rows] < self.params.merge_gamma * m]
            if len(drop):
                self.cs_code = np.delete(self.cs_code, drop)
                self.cs_df = np.delete(self.cs_df, drop)
        new = page[(page >> _SHIFT) >= first_new]  # elements created by this page
        if len(new):  # new elements have the largest ids: appending keeps the codes sorted
            self.cs_code = np.concatenate([self.cs_code, new])
            self.cs_df = np.concatenate([self.cs_df, np.ones(len(new), np.int64)])

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
            cs_code=self.cs_code,
            cs_df=self.cs_df,
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
            tree.el_styles = [{} for _ in range(tree.el_key.size)]
            tree._by_key = {}
            pairs = zip(z["el_key"].tolist(), z["el_parent"].tolist(), strict=True)
            for e, (k, p) in enumerate(pairs):
                if p >= 0:
                    tree._by_key.setdefault((p, k), []).append(e)
            keys = _split(z["st_keys"], z["st_nkeys"])
            elems = _split(z["st_elems"], z["st_nelems"])
            tree.st_parent = z["st_parent"].tolist()
            tree.st_keys = [tuple(k.tolist()) for k in keys]
            tree.st_elems = [tuple(e.tolist()) for e in elems]
            tree.st_count = _Grow(np.int64, z["st_count"])
            for sid, (p, k) in enumerate(zip(tree.st_parent, tree.st_keys, strict=True)):
                tree.el_styles[p][k] = sid
            tree.leaf_code = _Grow(np.int64, z["leaf_code"])
            tree.leaf_tf = _Grow(np.float64, z["leaf_tf"])
            tree.leaf_s = _Grow(np.float64, z["leaf_s"])
            tree._leaf_row = {c: i for i, c in enumerate(z["leaf_code"].tolist())}
            tree.cs_code = z["cs_code"].astype(np.int64)
            tree.cs_df = z["cs_df"].astype(np.int64)
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
        sid = tree.el_styles[e].get(tuple(view.key[c] for c in kids))
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


def leaf_codes(page: PageMap, e: int, d: int) -> NDArray[np.int64]:
    """Pair codes (element << 32 | term) of every term occurrence of tag node ``d``."""
    return (np.int64(e) << _SHIFT) | page.view.subtree_terms(d)


def term_of(codes: NDArray[np.int64]) -> NDArray[np.int64]:
    return codes & _LOW


def mean_or(values: NDArray[np.float64], default: float) -> float:
    return float(values.mean()) if len(values) else default
