"""--coverage: for compound questions, what one search over the whole question finds against
one search per part. One search spends its k slots on whichever clause dominates."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from localqa.evaluate.run import embeds_for, suite_index
from localqa.evaluate.suite import Case, Suite
from localqa.library import Library
from localqa.retrieval.retrieve import question_parts
from localqa.settings import RetrievalSettings
from localqa.store import Db
from localqa.types import Caller


class CoverageRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    case: str
    expected: str
    one_search: bool
    per_part: bool


def coverage(suite: Suite, db: Db | None, settings: RetrievalSettings) -> list[CoverageRow]:
    """One row per expected record of every compound case, against the suite's index."""
    rows = []
    with (
        suite_index(suite, db, embed=embeds_for(settings)) as suite_db,
        Library(suite_db.db) as library,
    ):
        for case in suite.cases:
            if len(question_parts(case.question, case.parts)) >= 2 and case.expect:
                rows += _case_rows(library, case, settings)
    return rows


def _case_rows(library: Library, case: Case, settings: RetrievalSettings) -> list[CoverageRow]:
    caller = Caller(role=case.role, tenant=case.tenant)
    whole, split = (
        library.search(
            case.question,
            as_of=case.as_of,
            caller=caller,
            parts=parts,
            settings=settings,
            documents=case.documents,
        )
        for parts in ([case.question], case.parts)
    )
    one = [c for part in whole for c in part.candidates]
    each = [c for part in split for c in part.candidates]
    return [
        CoverageRow(
            case=case.id,
            expected=expect.describe(),
            one_search=any(expect.matches(c.location, c.text) for c in one),
            per_part=any(expect.matches(c.location, c.text) for c in each),
        )
        for expect in case.expect
    ]
