"""Mining stages over page models: InfoDiscoverer, WISDOM, LAMIS, site style tree, sitemap."""
