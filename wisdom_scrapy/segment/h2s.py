"""SMG's Sequence Translator (§4.1): a page (or any subtree) as a string of H2S symbols.

Table 1 of the paper maps the tags that shape a page's layout to one-letter symbols; tags not
in the table are dropped (their content is not). Every mapped element gives its symbol once
when it opens and once when it closes, every visible non-blank text piece gives ``T``, so a
table of three rows of two cells translates to Fig. 5's ``EKNTNNTNKKNTNNTNKKNTNNTNKE``.

Table 1 lost several tag names in transcription; the symbols' descriptions, Fig. 5 and the
substitution matrix (Table 2, where e.g. D~S, P~R~Y, G~M and H~V score as similar) decide them:

====  ===========================================  ==========================================
sym   tags                                         paper's description
====  ===========================================  ==========================================
E     table                                        page layout (Fig. 5)
C     caption                                      annotations of a table
K     tr                                           page layout (Fig. 5)
N     td, th                                       page layout (Fig. 5)
D     div and the sectioning elements HTML5 uses   page layout
      in its place (section, article, nav,
      header, footer, main, aside)
S     span                                         page layout (scores 2 with D)
A     a with href                                  link information
Z     a without href (a named anchor)              ``<a>`` with attributes like name/target
B     a with href whose content is only images     image as the anchor text
H     h1–h6                                        headings
L     ul, ol, dl, menu                             list including ``<ol>`` and ``<dl>``
I     li, dt                                       list items
V     dd                                           indents on list items
T     a text piece                                 text within the nearest tag
Q     b, strong, i, em, u, font, small, big, code, text style (no influence on layout)
      tt, s, strike, sub, sup, mark, cite, abbr,
      kbd, samp, var, dfn, label
R     hr                                           visualised horizontal line
Y     pre                                          a separated block
P     p, blockquote                                textual segmentation
W     br                                           textual segmentation
F     form                                         input information
M     img without alt                              image without "alt"
G     img with a non-empty alt                     image with "alt"
X     object, applet, iframe, map, embed, video,   special objects
      audio, canvas, svg
====  ===========================================  ==========================================

The table is data (:data:`H2S_TABLE`, symbol → tags): pass another to :func:`translate` to
customise it, as the paper invites. A, B, Z, G and M are decided per element from the page
model (``href``, image content, ``alt``) and need no entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from wisdom_scrapy.page.model import PageModel

__all__ = ["H2S_TABLE", "H2SSequence", "translate"]

#: SMG Table 1 (see the module docstring): symbol → the tags it stands for.
H2S_TABLE: Mapping[str, frozenset[str]] = {
    "E": frozenset({"table"}),
    "C": frozenset({"caption"}),
    "K": frozenset({"tr"}),
    "N": frozenset({"td", "th"}),
    "D": frozenset({"div", "section", "article", "nav", "header", "footer", "main", "aside"}),
    "S": frozenset({"span"}),
    "H": frozenset({"h1", "h2", "h3", "h4", "h5", "h6"}),
    "L": frozenset({"ul", "ol", "dl", "menu"}),
    "I": frozenset({"li", "dt"}),
    "V": frozenset({"dd"}),
    "Q": frozenset(
        {"b", "strong", "i", "em", "u", "font", "small", "big", "code", "tt", "s", "strike"}
        | {"sub", "sup", "mark", "cite", "abbr", "kbd", "samp", "var", "dfn", "label"}
    ),
    "R": frozenset({"hr"}),
    "Y": frozenset({"pre"}),
    "P": frozenset({"p", "blockquote"}),
    "W": frozenset({"br"}),
    "F": frozenset({"form"}),
    "X": frozenset(
        {"object", "applet", "iframe", "map", "embed", "video", "audio", "canvas", "svg"}
    ),
}
TEXT = "T"
_NONE = 0  # symbol code of an ignored element


@dataclass(frozen=True)
class H2SSequence:
    """A page's H2S sequence and where every node's subtree sits in it.

    ``symbols``: the sequence (one character per symbol); ``start[i]`` / ``end[i]``: the
    half-open range of node ``i``'s subtree in it (``symbols[start[i]:end[i]]`` is the
    subtree's translation, empty for a subtree without mapped tags or text). Per symbol:
    ``owner``, the node it comes from (for ``T`` the node owning the text piece) and
    ``length``, the text piece's non-whitespace length (0 for tag symbols); ``opening``:
    the symbol opens its element (False for closings and text).
    """

    symbols: str
    start: NDArray[np.int64]
    end: NDArray[np.int64]
    owner: NDArray[np.int64]
    length: NDArray[np.int64]
    opening: NDArray[np.bool_]

    def of(self, node: int) -> str:
        """The translation of node ``node``'s subtree."""
        return self.symbols[int(self.start[node]) : int(self.end[node])]

    def __len__(self) -> int:
        return len(self.symbols)


def _node_symbols(model: PageModel, table: Mapping[str, frozenset[str]]) -> NDArray[np.uint8]:
    """One symbol code (ASCII, 0 = ignored) per node: by tag, then the per-element rules."""
    by_tag = {tag: sym for sym, tags in table.items() for tag in tags}
    codes = np.array([ord(by_tag.get(t, "\0")) for t in model.tag_names] + [0], np.uint8)
    sym = codes[model.tag_id] if model.n else np.zeros(0, np.uint8)
    a, img = model.tag_code("a"), model.tag_code("img")
    if a >= 0:
        anchors = model.tag_id == a
        sym[anchors] = ord("Z")
        linked = model.anchor_nodes
        has_img = np.zeros(model.n, bool)
        if img >= 0:  # an image link: an <a href> with an <img> inside and no text
            img_nodes = np.flatnonzero(model.tag_id == img)
            first = np.searchsorted(img_nodes, linked + 1)
            has_img[linked] = (first < len(img_nodes)) & (
                img_nodes[np.minimum(first, len(img_nodes) - 1)] < model.subtree_end[linked]
            )
        image_only = has_img[linked] & (model.tlen[linked] == 0)
        sym[linked] = np.where(image_only, ord("B"), ord("A"))
    if img >= 0:
        sym[model.tag_id == img] = ord("M")
        sym[_img_with_alt(model)] = ord("G")
    return sym


def _img_with_alt(model: PageModel) -> NDArray[np.int64]:
    """The ``<img>`` nodes with a non-blank ``alt``."""
    nodes, alts = model.img_alts()
    keep = np.fromiter((bool(a and a.strip()) for a in alts), bool, len(alts))
    return nodes[keep].astype(np.int64)


def translate(
    model: PageModel, table: Mapping[str, frozenset[str]] = H2S_TABLE
) -> H2SSequence:
    """Translate the whole page (every subtree at once) with ``table`` (SMG §4.1, Fig. 5).

    One pass over :meth:`PageModel.document_events`: mapped elements give their symbol on
    opening and on closing, text pieces give ``T``; hidden elements (script, style …) and
    everything inside them give nothing.
    """
    n = model.n
    if n == 0:
        empty = np.zeros(0, np.int64)
        return H2SSequence("", empty, empty, empty, empty, np.zeros(0, bool))
    sym = _node_symbols(model, table)
    sym[model.hidden] = _NONE
    nodes, kinds, lengths = model.document_events()
    codes = np.where(kinds == 2, ord(TEXT), sym[nodes]).astype(np.uint8)
    emitted = codes != _NONE
    before = np.zeros(len(codes) + 1, np.int64)
    np.cumsum(emitted, out=before[1:])
    event = np.arange(len(kinds))
    opens = np.empty(n, np.int64)
    closes = np.empty(n, np.int64)
    opens[nodes[kinds == 0]] = event[kinds == 0]
    closes[nodes[kinds == 1]] = event[kinds == 1]
    symbols = codes[emitted].tobytes().decode("ascii")
    return H2SSequence(
        symbols,
        before[opens],
        before[closes + 1],
        nodes[emitted],
        lengths[emitted],
        (kinds == 0)[emitted],
    )
