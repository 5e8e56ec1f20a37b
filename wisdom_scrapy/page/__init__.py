"""The page model: one page's arrays, terms and URLs."""
