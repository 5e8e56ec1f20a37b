"""Page segmentation by sequence complexity (SMG §4.1–4.2): H2S translation, SEG, R_SEG."""

from __future__ import annotations

from wisdom_scrapy.segment.h2s import H2S_TABLE, H2SSequence, translate
from wisdom_scrapy.segment.partition import Block, partition, r_seg
from wisdom_scrapy.segment.seg import SegParams, low_complexity_mask, seg_segments

__all__ = [
    "H2S_TABLE",
    "Block",
    "H2SSequence",
    "SegParams",
    "low_complexity_mask",
    "partition",
    "r_seg",
    "seg_segments",
    "translate",
]
