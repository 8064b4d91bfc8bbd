"""No import circles inside localqa (issue 41): drawn by its imports, the package is a graph whose
dependencies run one way, so each module can be read, tested and moved with only what lies below it.

The graph is read from the source with `ast`, not by importing: every `*.py` file under the
package's folder, wherever it sits (modules may move into folders; the test follows), and every
import statement in it, at the top of the module or inside a function (a deferred import is still
a dependency, only a later one).

Imports under `if TYPE_CHECKING:` count too. They never run, so they cannot fail at import time,
but they are dependencies all the same: the module's signatures speak of the other module's types,
a reader must open it to understand them, and moving one module moves the other. A circle hidden
behind `TYPE_CHECKING` (`deriving` typed with `library.Library` while `library` calls `derive`)
is the circle issue 41 asks to break; the cure is a protocol, or the shared type moved below both.

An import of `a.b.c` is an edge to `a.b.c` only, not to the packages above it: Python runs
`a/__init__.py` and `a/b/__init__.py` first, but a package's `__init__` that imports what lies
inside it would otherwise close a circle with everything inside.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import localqa

PACKAGE = Path(localqa.__file__).parent
ROOT = localqa.__name__


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name, from its files wherever they sit."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[str]:
    """The modules of the package that the module `name` (at `path`) imports, at any depth."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in known:  # `from localqa import computing`
                    yield submodule
                elif base in known:  # `from localqa.library import Library`
                    yield base


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    anchor = package.split(".")
    base = anchor[: len(anchor) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) - {name} for name, path in known.items()}


def tangles(edges: Mapping[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative):
    the sets of modules each of which imports every other, through the rest."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def circles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """One circle through each tangle's first module: `a -> b -> ... -> a`."""
    return [_circle(sorted(tangle), edges) for tangle in sorted(tangles(edges), key=min)]


def shown(edges: Mapping[str, set[str]]) -> list[str]:
    """Each tangle as printed: a circle through it, and the other modules caught in it."""
    lines = []
    for tangle in sorted(tangles(edges), key=min):
        circle = _circle(sorted(tangle), edges)
        others = sorted(tangle - set(circle))
        lines.append(" -> ".join(circle) + (f"  (tangled with {', '.join(others)})" if others else ""))
    return lines


def _circle(component: list[str], edges: Mapping[str, set[str]]) -> list[str]:
    """One circle through the first module of `component`, by a breadth-first path back to it."""
    inside = set(component)
    first = component[0]
    came_from: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges[node] & inside):
                if child == first:
                    path = [node]
                    while path[-1] != first:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), first]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    return component  # unreachable for a strongly connected component


def test_no_module_of_localqa_imports_itself_through_others() -> None:
    found = shown(graph())
    assert not found, "import circles inside localqa:\n" + "\n".join(found)


# --- the walker's own rules, on graphs and sources made up for them -----------------------------


def test_circles_are_found_and_printed_as_paths() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}
    assert circles(edges) == [["a", "b", "c", "a"], ["e", "f", "e"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    tangled = {"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}
    assert shown(tangled) == ["a -> b -> a  (tangled with c)"]


def test_every_kind_of_import_is_an_edge(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import localqa.types\n"
        "from localqa import errors\n"
        "from localqa.settings import Settings\n"
        "from .language import text\n"
        "if TYPE_CHECKING:\n"
        "    from localqa.library import Library\n"
        "def later() -> None:\n"
        "    from localqa.store.base import Store\n",
        encoding="utf-8",
    )
    known = modules()
    found = set(imported(f"{ROOT}.sample", source, known))
    wanted = {"types", "errors", "settings", "language.text", "library", "store.base"}
    assert found == {f"{ROOT}.{name}" for name in wanted}


def test_every_module_of_the_package_is_in_the_graph() -> None:
    edges = graph()
    assert f"{ROOT}.library" in edges and f"{ROOT}.store.base" in edges and ROOT in edges
    assert f"{ROOT}.retrieval.retrieve" in edges[f"{ROOT}.library"]


def test_the_top_of_the_package_keeps_only_its_faces() -> None:
    """The pipeline's middle lives in rooms (folders by stage, docs/development.md): the top of
    `localqa/` holds at most 15 modules, the faces a user or a plugin author touches."""
    top = sorted(path.stem for path in Path(localqa.__file__).parent.glob("*.py"))
    assert len(top) <= 15, top


# --- rooms as layers (issue 52) -------------------------------------------------------------------

# The pairs of rooms that still import each other, each to be undone by a move (issue 52): a pair
# not listed here is a new climbing import and fails the test; a listed pair that no longer holds
# fails too, so that the list only shrinks.
MUTUAL_ROOMS = frozenset(
    {
        frozenset({"answers", "derived"}),
        frozenset({"extract", "indexing"}),
        frozenset({"indexing", "question"}),
        frozenset({"indexing", "retrieval"}),
        frozenset({"indexing", "store"}),
        frozenset({"language", "question"}),
        frozenset({"retrieval", "store"}),
    }
)


def room_of(name: str) -> str:
    """The room (folder) a module lives in, or the module itself at the top of the package."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def mutual_rooms(edges: Mapping[str, set[str]]) -> set[frozenset[str]]:
    climbs = {(room_of(a), room_of(b)) for a, targets in edges.items() for b in targets}
    return {frozenset(pair) for pair in climbs if pair[0] != pair[1] and pair[::-1] in climbs}


def test_the_rooms_that_import_each_other_are_only_those_listed() -> None:
    assert mutual_rooms(graph()) == MUTUAL_ROOMS


def test_the_records_import_no_room() -> None:
    """`types.py` is the ground floor (issue 52): the records import only the format table beside
    them, never a room."""
    edges = graph()
    assert {room_of(b) for b in edges[f"{ROOT}.types"]} <= {f"{ROOT}.formats", "formats"}
