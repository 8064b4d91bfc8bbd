"""Ranking and fusion work out only the part of the order they are asked for; these property
tests hold them to the plain definition: sort everything by score (best first, ties to the lower
id), fuse by reciprocal rank over the full sorted lists."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from localqa.retrieval.retrieve import _Fused, _Ranking
from localqa.settings import RetrievalSettings
from tests.properties import examples


def sorted_pairs(ids: np.ndarray, scores: np.ndarray) -> list[tuple[int, float]]:
    order = np.lexsort((ids, -scores))
    return list(zip(ids[order].tolist(), scores[order].tolist(), strict=True))


def fused_by_definition(
    lexical: tuple[np.ndarray, np.ndarray], semantic: list[int], options: RetrievalSettings
) -> dict[int, float]:
    ranked = [pid for pid, _ in sorted_pairs(*lexical)]
    every = np.array(ranked + semantic, dtype=np.int64)
    gains = np.concatenate(
        (
            options.lexical_weight / (options.rrf_k + np.arange(1, len(ranked) + 1)),
            options.semantic_weight / (options.rrf_k + np.arange(1, len(semantic) + 1)),
        )
    )
    fused, where = np.unique(every, return_inverse=True)
    return dict(zip(fused.tolist(), np.bincount(where, weights=gains).tolist(), strict=True))


# Few distinct scores and ids from a small range: plenty of ties, at every boundary.
rankings = st.integers(0, 400).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 2_000), min_size=n, max_size=n, unique=True),
        st.lists(st.sampled_from([0.5, 1.0, 1.25, 2.0, 3.5, 7.0]), min_size=n, max_size=n),
    )
)


@settings(max_examples=examples(150), deadline=None)
@given(rankings, st.integers(0, 60), st.lists(st.integers(1, 2_000), max_size=30))
def test_top_ranks_and_scores_follow_the_full_sort(
    ranking: tuple[list[int], list[float]], n: int, asked: list[int]
) -> None:
    ids, scores = np.array(ranking[0], dtype=np.int64), np.array(ranking[1], dtype=np.float64)
    subject = _Ranking(ids, scores, bool(len(ids)))
    expected = sorted_pairs(ids, scores)
    top_ids, top_scores = subject.top(n)
    assert list(zip(top_ids.tolist(), top_scores.tolist(), strict=True)) == expected[:n]
    rank = {pid: number for number, (pid, _) in enumerate(expected, start=1)}
    held = [pid for pid in asked if pid in rank]
    assert subject.ranks(subject.positions(np.array(held, dtype=np.int64))).tolist() == [
        rank[pid] for pid in held
    ]
    score = dict(expected)
    assert subject.score_of(asked) == {pid: score.get(pid, 0.0) for pid in asked}


def test_ranks_of_most_of_a_large_ranking() -> None:
    generator = np.random.default_rng(7)
    ids = generator.permutation(np.arange(1, 5_001, dtype=np.int64))
    scores = generator.choice([0.25, 1.0, 1.5, 4.0], size=len(ids))
    subject = _Ranking(ids, scores, True)
    expected = {pid: rank for rank, (pid, _) in enumerate(sorted_pairs(ids, scores), start=1)}
    for positions in (np.arange(0, 5_000, 2), np.arange(0, 5_000, 9)):  # sorted, then counted
        assert subject.ranks(positions).tolist() == [expected[pid] for pid in ids[positions].tolist()]


@settings(max_examples=examples(150), deadline=None)
@given(
    rankings,
    st.data(),
    st.integers(0, 30),
    st.sampled_from([(1.0, 1.0, 60), (1.0, 2.5, 0), (0.0, 1.0, 60), (2.0, 0.0, 5), (1.0, -0.5, 2)]),
)
def test_fusion_follows_rank_fusion_of_the_full_lists(
    ranking: tuple[list[int], list[float]], data: st.DataObject, n: int, weights: tuple[float, float, int]
) -> None:
    # Semantic neighbours both among the lexical matches and outside them.
    pool = ranking[0] + list(range(2_001, 2_041))
    semantic = data.draw(st.lists(st.sampled_from(pool), max_size=40, unique=True))
    lexical_weight, semantic_weight, rrf_k = weights
    options = RetrievalSettings(lexical_weight=lexical_weight, semantic_weight=semantic_weight, rrf_k=rrf_k)
    ids, scores = np.array(ranking[0], dtype=np.int64), np.array(ranking[1], dtype=np.float64)
    lexical = _Ranking(ids, scores, bool(len(ids)))
    fused = _Fused(lexical, np.array(semantic, dtype=np.int64), True, options)
    expected = fused_by_definition((ids, scores), semantic, options)
    order = sorted(expected, key=lambda pid: (-expected[pid], pid))
    top_ids, top_scores = fused.top(n)
    assert top_ids.tolist() == order[:n]
    assert top_scores.tolist() == [expected[pid] for pid in order[:n]]
    assert len(fused) == len(expected)
    asked = [*order[::3], 5_000]
    assert fused.score_of(asked) == {pid: expected.get(pid, 0.0) for pid in asked}
