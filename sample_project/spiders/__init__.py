"""Spiders of the sample project: ``demo`` (local demo news site) and ``site`` (any start URL)."""
