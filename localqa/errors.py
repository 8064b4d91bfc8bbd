"""Domain errors. Each message names what went wrong and how to fix it; the CLI prints them as
one `Error: ...` line."""


class LocalQAError(Exception):
    """Base class for every error localqa reports to a user."""


class CatalogError(LocalQAError):
    """catalog.toml cannot be read at all."""


class IndexUnavailableError(LocalQAError):
    """The index cannot be read now (missing, of another schema version, damaged): a server
    answers 503 with the message, which says how to fix it."""


class IndexMissingError(IndexUnavailableError):
    """No index at the given path."""


class SchemaError(IndexUnavailableError):
    """The index was written by an incompatible localqa version."""


class ModelError(LocalQAError):
    """An answer backend could not be used (unreachable, not installed, not pulled, timed out)."""


class UnknownModelError(LocalQAError):
    """--model names a backend that does not exist."""


class SuiteError(LocalQAError):
    """An evaluation suite or run file is malformed."""


class QuestionError(LocalQAError):
    """The question (or a part) is empty or unusable; a usage error."""


class PageNotFoundError(LocalQAError):
    """No such page of a document the caller may see: the same error whether the source does not
    exist, the page does not, or the document is hidden from the caller (nothing leaks)."""
