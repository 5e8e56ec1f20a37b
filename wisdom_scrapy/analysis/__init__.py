"""One page analysed: its article, TOC links, role, cleaners and annotated view."""
