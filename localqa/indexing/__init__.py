"""Indexing: the library folder's files and catalog, what a refresh must read again, and the
index it writes (extraction is `localqa.extract`, the SQL `localqa.store`)."""
