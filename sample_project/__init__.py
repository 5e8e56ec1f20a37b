"""A runnable Scrapy project using wisdom_scrapy: the ``demo`` spider crawls a generated local
news site (:mod:`sample_project.demo_site`), the ``site`` spider crawls any start URL."""
