"""The crawl's engine: what the Scrapy layer calls, without Scrapy."""
