"""List and count answers: a part that asks for several things gets distinct verified quotes.

Which parts: `localqa.question.lists.asked` (a list, a count, entries by place). A count a single
sentence or row states keeps today's single-span value (`stated_count`: the verified quote writes a
number within a few words before the counted noun, "nine widely-used datasets", "12 employees"; or
a row has a number in a cell whose header names it, "Renewals allowed: 1"); only a count nobody
states is counted over the listed items.

Which items: first, for a part whose quote is no table row, the numbered entries that count or list
its noun (`numbered_entries`, `localqa.answers.numbered`: under the quote's heading, else under a
candidate's heading in the quote's document, else, for a task's steps, after the lead-in that names the
task the part names, "To replace the grille:"), or the people of the organisation a count names
(`affiliated_people`); of those a part asks for by their place ("the last 4 chapters", "the second
step": `localqa.question.ordinals`), the entries at that place (`selected`; at most `LIST_BOUND`, as
every list), none when the run is too short. A part that asks by place and no numbered run answers
gets no list: sentences come in the scorer's order, which says nothing of first or last. Otherwise
(`collect`): the part's own verified quote first, then

- for a table row, the other rows of the whole table it is in (`table_items`), read from the index
  as the caller may see that page (`Context.table`: the same eligibility its document passed, so a
  hidden document's row is never read), in row order, not only the rows retrieval returned: a
  list of a table's rows is the table, and a count of them that read only the retrieved rows
  would be "at least" whatever `k` let through. Under a section row the part names ("among the
  short-term investments") only the rows under it (`extremes.rows_under`, in a table of at most
  `SECTION_SCAN_ROWS`); a total is no item. Only a table that lists what the part asks for is
  read so (`lists_what_is_asked`: retrieval returned two of its rows, or a header or the quoted
  row's label names the noun counted or listed); one row that mentions the word ("5 pages (max)"
  for "how many pages ...") does not make its table the list.
  Without the whole table (no context, or a table that does not hold the quote's row), the rows
  of the same table among the part's candidates, as below;
- for a sentence, in the sentence scorer's order, the units of the same document that can be the
  answer (not demoted; a count's items may state no number) under the same heading that share the
  part's words about as much as the first does (`ITEM_LEXICAL_SHARE`).

Each is verified by the one rule (`answering.quote_check`) against the passage it is cited from; a
duplicate (same quote, or same item text) is listed once; at most `LIST_BOUND`. Sentences come
only from the part's candidates, which retrieval drew from the documents the caller may see: a
hidden document is never listed or counted.

Fewer than `MIN_ITEMS` items found: a list part keeps its quote and today's value; a count part
keeps its quote with no value (a number its quote holds elsewhere, "Appendix 3" for "how many
chapters", is not how many there are). A count is the number of items listed, never a number read
from the text, and says "at least N" only when something could be hidden (`more_may_hide`): the
bound was reached; a table read whole ends its page, which the next may continue; or, for items
read from the candidates, one came from the last passage of a retrieval cut at `k`. The
value's `text` joins the items' texts with "; " (a count: "4", "at least 12"); `list_problem` is
the rule a shown list value passes, here and in evaluation (the "unchecked list items" gate).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from localqa.answers import affiliations, numbered, sentences
from localqa.derived import extremes
from localqa.language.text import squash
from localqa.language.words import plural_stem
from localqa.question import ordinals
from localqa.question.lists import ListAsk, asked
from localqa.settings import AnswerSettings
from localqa.types import Answer, Candidate, Kind, ListItem, Location, Passage, RankedUnit, Value
from localqa.values.cells import read_row, row_name
from localqa.values.choosing import Context, VisibleTable, is_span
from localqa.values.numbers import NUMBER_WORDS, read_quantity

# The most items a list answer shows (and a count counts before it says "at least").
LIST_BOUND = 12
# A sentence is another item when its BM25 score over the part's words is at least this share of
# the first item's: it speaks of the same things, not of one word the part happens to use.
ITEM_LEXICAL_SHARE = 0.5
# A count states its number within this many words before the noun it counts ("nine widely-used
# datasets").
STATED_COUNT_WORDS = 3
JOINER = "; "
# Why a count no numbered run, table or list of people gives has no value.
SENTENCES_NOT_COUNTED = (
    "no count given: no numbered list or table of the {noun} was found, and sentences are not counted"
)
# A section row the part names ("among the short-term investments") is looked for in a table of at
# most this many rows: a statement has a few dozen; a sheet of thousands of records has no section
# rows, and reading each of 200,000 to find one costs seconds.
SECTION_SCAN_ROWS = 1000
# A list answer lists at least two items: one verified quote is the part's quote and the value
# today's rules give it, and a "count" of one sentence would be a number the text never states.
MIN_ITEMS = 2

_NUMBER = rf"(?:\d[\d,]*|\b(?:{'|'.join(NUMBER_WORDS)}))"


def stated_count(noun: str, quote: str, kind: Kind = Kind.PROSE) -> bool:
    """Whether the quote states how many `noun` there are: in a sentence, a number (digits or
    words) within `STATED_COUNT_WORDS` words before the noun ("nine widely-used datasets", "12
    employees"); in a table row, a cell holding a number whose header or row label names the noun
    ("Renewals allowed: 1" for "how many renewals")."""
    stem = re.escape(plural_stem(noun))
    if kind is Kind.TABLE:
        row = read_row(quote)
        named = re.compile(rf"\b{stem}", re.IGNORECASE)
        return any(
            read_quantity(cell.text) is not None and named.search(f"{row.label or ''} {cell.header or ''}")
            for cell in row.cells
        )
    pattern = rf"{_NUMBER}\s+(?:[\w-]+\s+){{0,{STATED_COUNT_WORDS - 1}}}?{stem}\w*\b"
    return re.search(pattern, quote, re.IGNORECASE) is not None


# --- the items --------------------------------------------------------------------------------------

QuoteCheck = Callable[[str, str, Kind], object]


@dataclass(frozen=True)
class Listed:
    """The items found, and whether more may lie beyond them (the bound, or retrieval's cut)."""

    items: tuple[ListItem, ...]
    more_may_hide: bool


def collect(
    answer: Answer,
    ranked: Sequence[RankedUnit],
    candidates: Sequence[Candidate],
    settings: AnswerSettings,
    check: QuoteCheck,
    count: bool = False,
    table: Sequence[Passage] = (),
    runs_on: bool = False,
) -> Listed:
    """The items of a list answer: `answer`'s verified quote first, then the other rows of
    `table` when it is the whole table the quote is a row of (`table_items`; `runs_on`: it may go
    on past them), else the units of `ranked` (the sentence scorer's order) that are items of the
    same list; each verified by `check` (the one rule: None when a unit is a whole sentence or row
    of its passage), distinct, bounded."""
    assert answer.quote is not None and answer.citation is not None
    if table:
        return _gathered(
            _item(answer.quote, answer.citation), table_items(table, answer.citation), check, runs_on
        )
    passages = sentences.labels(candidates)
    first = next(
        (u for u in ranked if squash(u.text) == answer.quote and u.location == answer.citation), None
    )
    items: list[ListItem] = [_item(answer.quote, answer.citation)]
    seen_quotes, seen_texts = {_key(answer.quote)}, {_key(items[0].text)}
    last_rank, more = len(candidates), False
    reached_last = first is not None and sentences.passage_rank(first.label) == last_rank
    for unit in ranked:
        if first is not None and unit is first:
            continue
        if not _same_list(unit, answer.citation, first, count):
            continue
        quote = squash(unit.text)
        passage = passages.get(unit.label)
        if passage is None or check(quote, passage.text, passage.location.kind) is not None:
            continue
        item = _item(quote, unit.location)
        if _key(quote) in seen_quotes or _key(item.text) in seen_texts:
            continue
        if len(items) == LIST_BOUND:
            more = True
            break
        items.append(item)
        seen_quotes.add(_key(quote))
        seen_texts.add(_key(item.text))
        reached_last = reached_last or sentences.passage_rank(unit.label) == last_rank
    cut = len(candidates) >= settings.k and reached_last
    return Listed(tuple(items), more or cut)


def table_items(table: Sequence[Passage], cited: Location) -> Iterator[tuple[str, str, Location]]:
    """The other rows of `table` (the rows a list reads, `whole_table`) as (quote, passage text,
    citation), in row order: the cited row and totals aside. Lazily: a list stops reading at its
    bound, whatever the table's size."""
    for row in table:
        if (row.source, row.page, row.table, row.row) == (cited.source, cited.page, cited.table, cited.row):
            continue
        if extremes.is_total(row_item(row.text) or ""):
            continue
        yield squash(row.text), row.text, row.located(cited)


def whole_table(
    part: str, ask: ListAsk, answer: Answer, table: VisibleTable, candidates: Sequence[Candidate]
) -> tuple[Passage, ...]:
    """The rows of the table `answer` quotes a row of, read whole (`table`, as the caller may see
    it), that a list of it reads: those under the section row the part names when the cited row
    is one of them (`extremes.rows_under`), else all. None when `table` does not hold the cited row
    (no context, or another table), or when nothing says the table lists what the part asks for
    (`lists_what_is_asked`)."""
    cited = answer.citation
    assert cited is not None and answer.quote is not None
    held = any(
        (r.source, r.page, r.table, r.row) == (cited.source, cited.page, cited.table, cited.row)
        for r in table.rows
    )
    if (
        cited.kind is not Kind.TABLE
        or not held
        or not lists_what_is_asked(ask, answer.quote, cited, candidates)
    ):
        return ()
    if len(table.rows) > SECTION_SCAN_ROWS:
        return table.rows
    under = extremes.rows_under(part, table.rows)
    cited_under = any((r.page, r.table, r.row) == (cited.page, cited.table, cited.row) for r in under)
    return tuple(under) if cited_under else table.rows


def lists_what_is_asked(ask: ListAsk, quote: str, cited: Location, candidates: Sequence[Candidate]) -> bool:
    """Whether the table a row is quoted from lists the things the part asks for, so that its
    other rows are the other items: retrieval returned at least `MIN_ITEMS` of its rows for the
    part (the candidates' rows alone would make a list), or a header or the label of the quoted
    row names what is counted or listed ("Market" for "how many markets"). One row that merely
    mentions the word ("5 pages (max)" for "how many pages include figures") does not make its
    table a list of pages."""
    retrieved = sum(
        c.location.kind is Kind.TABLE
        and (c.location.source, c.location.page, c.location.table) == (cited.source, cited.page, cited.table)
        for c in candidates
    )
    if retrieved >= MIN_ITEMS:
        return True
    if ask.noun is None:
        return False
    row = read_row(quote)
    names = " ".join([row.label or "", *(c.header or "" for c in row.cells)])
    return re.search(rf"\b{re.escape(plural_stem(ask.noun))}", names, re.IGNORECASE) is not None


def _gathered(
    first: ListItem, found: Iterable[tuple[str, str, Location]], check: QuoteCheck, more: bool
) -> Listed:
    """`first`, then each of `found` (quote, the text it is verified against, citation) that the
    one rule verifies, distinct, up to `LIST_BOUND` (past it more may hide, as when `more`)."""
    items = [first]
    seen_quotes, seen_texts = {_key(first.quote)}, {_key(first.text)}
    for quote, text, where in found:
        if check(quote, text, where.kind) is not None:
            continue
        item = _item(quote, where)
        if _key(quote) in seen_quotes or _key(item.text) in seen_texts:
            continue
        if len(items) == LIST_BOUND:
            return Listed(tuple(items), True)
        items.append(item)
        seen_quotes.add(_key(quote))
        seen_texts.add(_key(item.text))
    return Listed(tuple(items), more)


def _same_list(unit: RankedUnit, cited: Location, first: RankedUnit | None, count: bool) -> bool:
    """Whether `unit` can be an item of the list the first item opens: never a demoted unit (a
    count's items may state no number: each is one thing counted, not a figure); of
    the same document; a row of the same table as a first row; a sentence under the same heading
    as a first sentence (a list sits in one section) that shares the part's words about as much
    as the first sentence does."""
    where = unit.location
    demoted = unit.demoted is not None and not (count and unit.demoted == sentences.STATES_NO_QUANTITY)
    if demoted or where.source != cited.source:
        return False
    if cited.kind is Kind.TABLE:
        return where.kind is Kind.TABLE and (where.page, where.table) == (cited.page, cited.table)
    if where.kind is Kind.TABLE or where.section != cited.section:
        return False
    floor = ITEM_LEXICAL_SHARE * (first.lexical if first is not None else 0.0)
    return unit.lexical > 0 and unit.lexical >= floor


def _item(quote: str, citation: Location) -> ListItem:
    """The item a verified quote lists: a table row's name (`row_item`), else the quote itself."""
    name = row_item(quote) if citation.kind is Kind.TABLE else None
    return ListItem(text=name if name and is_span(name, quote) else quote, quote=quote, citation=citation)


def row_item(row_text: str) -> str | None:
    """What a table row names: its label; in a table whose first column is headed like the others
    (a ruled table: "Register: Item ID: EQ-402; Item: Document camera"), its first cell's text,
    since the label there is the table's title (`row_name`)."""
    row = read_row(row_text)
    first = row.cells[0] if row.cells else None
    if row_name(row) == row.label or first is None:
        return row.label or (first.text if first else None)
    return first.text


def _key(text: str) -> str:
    return squash(text).casefold().rstrip(" .;:")


def affiliated_people(
    part: str,
    noun: str,
    candidates: Sequence[Candidate],
    context: Context,
    check: QuoteCheck,
) -> Listed | None:
    """The people one document lists with the organisation the part names, on the pages
    retrieval returned from it (`localqa.answers.affiliations`: "Radley Horton, Columbia
    University"), each a verified quote; "at least" their number, since other pages may list more.
    The document is the first, in rank order, whose pages list at least `MIN_ITEMS` such people:
    one document's list, never two documents' added. None when the part names no organisation."""
    org = affiliations.affiliation_asked(part, noun)
    if org is None:
        return None
    for pages in affiliations.pages_by_document(candidates):
        people = affiliations.affiliated(org, [context.passages(where) for where in pages])
        if len(people) < MIN_ITEMS:
            continue
        items = []
        for name, line in people[:LIST_BOUND]:
            quote = squash(line.text)
            if check(quote, line.text, line.kind) is not None:
                return None  # every person counted is shown, or none is counted
            items.append(ListItem(text=name, quote=quote, citation=line.located(pages[0])))
        return Listed(tuple(items), True)
    return None


def numbered_entries(
    part: str,
    noun: str,
    answer: Answer,
    candidates: Sequence[Candidate],
    context: Context,
    check: QuoteCheck,
) -> Listed | str | None:
    """The numbered entries that count `noun` under the quote's heading, else under a candidate's
    heading in the quote's document (`localqa.answers.numbered`: "1." to "9." under "CHAPTERS"),
    all of them, each verified by the one rule, or None: the things counted or listed when no
    sentence states their number and no table lists them; or why a run found gives none (an entry
    is withheld). Unbounded: a part may ask for the last of them (`selected`); `bounded` cuts a
    list of them."""
    assert answer.citation is not None
    task = numbered.task_asked(part)
    run = numbered.find_run(
        noun,
        answer.citation,
        candidates,
        context.passages,
        task,
        context.passages_containing,
        context.last_page,
    )
    if run is None:
        return None
    items: list[ListItem] = []
    for entry in run.entries:
        # The entry's first sentence: the one that opens with its number ("2. Temperature-Related
        # Death and Illness....", whose page number a sentence splitter may cut off), checked
        # against the whole passage it is read from.
        passage = entry.passage
        units = sentences.units(entry.text, passage.kind)
        first = squash(units[0]) if units else ""
        # Quoted as the whole sentence of the passage that holds it ("Quality levels 1 After
        # pressing, ..." for the entry "1 After pressing, ..."): a quote is a whole sentence.
        quote = next(
            (squash(u) for u in sentences.units(passage.text, passage.kind) if first in squash(u)), ""
        )
        if not first or check(quote, passage.text, passage.kind) is not None:
            # Every entry counted is shown, or none is counted: a run with an entry withheld (one
            # that addresses its reader) has no count, and its other entries are not the list.
            return f"no {noun} counted or listed: entry {len(items) + 1} of the numbered run is not quoted"
        where = passage.located(run.at)
        items.append(ListItem(text=numbered.entry_text(first) or first, quote=quote, citation=where))
    if len({_key(i.quote) for i in items}) != len(items):
        return None  # two entries in one sentence: each entry counted is its own quote, or none is counted
    return Listed(tuple(items), run.ends_page)


def bounded(listed: Listed) -> Listed:
    """At most `LIST_BOUND` of `listed`'s items; past it more may hide."""
    if len(listed.items) > LIST_BOUND:
        return Listed(listed.items[:LIST_BOUND], True)
    return listed


def selected(position: ordinals.Position, listed: Listed) -> Listed | str:
    """The entries of a numbered run `position` names, in order, or why there are none to give:
    the run is shorter than the place asked, or the part counts from the end of a run that ends
    its page (the next page may continue it, so its last entries may not be the last)."""
    total = len(listed.items)
    asked_for = f"no list given: the part asks for {position.describe()}"
    if position.from_end and listed.more_may_hide:
        return (
            f"{asked_for}, and the {total} numbered entries found end their page, which the next may continue"
        )
    places = ordinals.placed(position, total)
    if places is None:
        return f"{asked_for}; the numbered entries found are {total}"
    return Listed(tuple(listed.items[i] for i in places), False)


# --- the value --------------------------------------------------------------------------------------


def list_value(ask: ListAsk, listed: Listed) -> Value:
    """The value of a list part (its items' texts joined) or of a count part (how many items)."""
    if ask.kind == "list":
        return Value(text=JOINER.join(i.text for i in listed.items), items=listed.items)
    count = len(listed.items)
    return Value(text=count_text(count, listed.more_may_hide), number=float(count), items=listed.items)


def count_text(count: int, more_may_hide: bool) -> str:
    return f"at least {count}" if more_may_hide else str(count)


def list_problem(value: Value, verified: Callable[[ListItem], bool]) -> str | None:
    """The rule every shown list value passes (None when it does): each item's text is a span of
    its quote, and its quote a verified quote of the passage at its citation (`verified`: the one
    rule, `answering.quote_check`, against that passage's text); the items are distinct
    and at most `LIST_BOUND`; the value's text is their texts joined, or for a count its number is
    how many there are."""
    items = value.items or ()
    if len(items) > LIST_BOUND:
        return f"{len(items)} items, more than the bound {LIST_BOUND}"
    if len({_key(i.quote) for i in items}) != len(items):
        return "an item is listed twice"
    for number, item in enumerate(items, start=1):
        if not is_span(item.text, item.quote):
            return f"item {number} is not a span of its quote"
        if not verified(item):
            return f"item {number} is not a verified quote of {item.citation.brief()}"
    if value.number is None:
        if value.text != JOINER.join(i.text for i in items):
            return "its text is not its items joined"
    elif value.number != len(items) or value.text not in (count_text(len(items), m) for m in (False, True)):
        return "its count is not the number of its items"
    return None


def _entries(
    part: str,
    ask: ListAsk,
    answer: Answer,
    candidates: Sequence[Candidate],
    context: Context | None,
    check: QuoteCheck,
) -> Listed | str | None:
    """The items of people listed with the organisation a count names, or of the numbered entries
    that count or list the noun (those a part asks for by place: `selected`), which are the list
    before sentences that share words; a note when the entries asked for by place are not there;
    None when no such list is found."""
    noun = ask.position.noun if ask.position is not None else ask.noun
    if noun is None or context is None:
        return None
    if ask.kind == "count":
        people = affiliated_people(part, noun, candidates, context, check)
        if people is not None:
            return people
    entries = numbered_entries(part, noun, answer, candidates, context, check)
    if entries is None or isinstance(entries, str):
        return entries
    chosen = selected(ask.position, entries) if ask.position is not None else entries
    # "The first 20 chapters" are a list like any other: at most `LIST_BOUND` of them are shown.
    return chosen if isinstance(chosen, str) else bounded(chosen)


def list_answer(
    part: str,
    answer: Answer,
    ranked: Sequence[RankedUnit],
    candidates: Sequence[Candidate],
    settings: AnswerSettings,
    check: QuoteCheck,
    context: Context | None = None,
) -> Answer:
    """`answer` with a list value when the part asks for a list, or for a count no single sentence
    states; otherwise unchanged (a refusal, or a part that asks for one thing). A table row's list
    reads the whole table through `context` (`whole_table`)."""
    if answer.quote is None or answer.citation is None:
        return answer
    ask = asked(part)
    if ask is None:
        return answer
    if (
        ask.kind == "count"
        and ask.noun is not None
        and stated_count(ask.noun, answer.quote, answer.citation.kind)
    ):
        return answer
    table = context.table(answer.citation) if context is not None else VisibleTable()
    rows = whole_table(part, ask, answer, table, candidates)
    entries = _entries(part, ask, answer, candidates, context, check) if not rows else None
    if isinstance(entries, str):  # the entries asked for by place are not there: the quote stands
        return answer.model_copy(update={"value": None, "figure_note": entries})
    if entries is not None:
        # The answer's quote and citation are its first item's, as for every list.
        first = entries.items[0]
        update = {"quote": first.quote, "citation": first.citation, "value": list_value(ask, entries)}
        return answer.model_copy(update=update)
    if ask.position is not None:
        # Sentences collected in the scorer's order say nothing of first or last: no list.
        return answer
    if ask.kind == "count" and not rows and answer.citation.kind is not Kind.TABLE:
        # Sentences that share a part's words are no list of the things counted: how many of them
        # there are says nothing of how many things there are (on the MMLongBench dev splits such
        # counts were right only by chance). A count comes from a numbered run, a table read whole
        # or the people of an organisation; else the quote stands with no value.
        return answer.model_copy(
            update={"value": None, "figure_note": SENTENCES_NOT_COUNTED.format(noun=ask.noun)}
        )
    listed = collect(
        answer,
        ranked,
        candidates,
        settings,
        check,
        ask.kind == "count",
        rows,
        bool(rows) and table.runs_on,
    )
    if len(listed.items) < MIN_ITEMS:
        # A count no sentence states and no list gives has no value: a number the quote holds
        # elsewhere ("Appendix 3" for "how many chapters") is not how many there are.
        return answer if ask.kind == "list" else answer.model_copy(update={"value": None})
    return answer.model_copy(update={"value": list_value(ask, listed)})
