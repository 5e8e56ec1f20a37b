"""wisdom_scrapy (placeholder)."""
