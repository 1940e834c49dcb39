"""CFRR and its baselines, against hand-computed values."""

from __future__ import annotations

import pytest

from training.rewards import binary_reward, completion_focused_rubric_reward, group_rewards, rubric_reward

# Three rollouts, three criteria: criterion 0 is passed by all, 1 by two, 2 by one.
MIXED = [[1, 1, 1], [1, 1, 0], [1, 0, 0]]


def test_equal_pass_rates_give_uniform_weights() -> None:
    # Every criterion passed by exactly half of the group: w_k = 1/3 whatever beta and eps are.
    scores = [[1, 0, 1], [0, 1, 0]]
    rewards = completion_focused_rubric_reward(scores, beta=2.0, lam=0.0, eps=0.05)
    assert rewards == pytest.approx([2 / 3, 1 / 3])


def test_weight_moves_to_the_criteria_the_group_fails() -> None:
    # p = (1, 2/3, 1/3); raw weights (1 - p + 0.05) = (0.05, 0.38333, 0.71667), sum 1.15.
    w = [0.05 / 1.15, (1 / 3 + 0.05) / 1.15, (2 / 3 + 0.05) / 1.15]
    assert w[0] < w[1] < w[2]
    expected = [0.5 * 1 + 0.5 * 1.0, 0.5 * 0 + 0.5 * (w[0] + w[1]), 0.5 * 0 + 0.5 * w[0]]
    assert completion_focused_rubric_reward(MIXED) == pytest.approx(expected)
    # The rollout that passes only the easy criterion gets far less than its plain mean of 1/3.
    assert completion_focused_rubric_reward(MIXED, lam=0.0)[2] == pytest.approx(w[0])
    assert w[0] < 1 / 3


def test_lam_one_gives_binary_completion() -> None:
    assert completion_focused_rubric_reward(MIXED, lam=1.0) == binary_reward(MIXED) == [1.0, 0.0, 0.0]


def test_beta_zero_gives_plain_mean() -> None:
    assert completion_focused_rubric_reward(MIXED, beta=0.0, lam=0.0) == pytest.approx(rubric_reward(MIXED))
    assert rubric_reward(MIXED) == pytest.approx([1.0, 2 / 3, 1 / 3])


def test_partial_scores_count_towards_rubric_but_not_completion() -> None:
    scores = [[1.0, 0.5], [1.0, 1.0]]
    # p = (1, 0.75): raw (0.05, 0.3), sum 0.35.
    w = [0.05 / 0.35, 0.3 / 0.35]
    expected = [0.5 * (w[0] + 0.5 * w[1]), 0.5 + 0.5 * (w[0] + w[1])]
    assert completion_focused_rubric_reward(scores) == pytest.approx(expected)
    assert binary_reward(scores) == [0.0, 1.0]


def test_whole_group_passing_everything_gets_full_reward() -> None:
    assert completion_focused_rubric_reward([[1, 1], [True, True]]) == pytest.approx([1.0, 1.0])
    # eps = 0 would make every weight 0 here: the weights fall back to uniform instead of 0/0.
    assert completion_focused_rubric_reward([[1, 1], [1, 1]], eps=0.0) == pytest.approx([1.0, 1.0])


def test_groups_are_formed_by_task_id_not_position() -> None:
    # Task a's rollouts are interleaved with task b's; each group is scored on its own.
    task_ids = ["a", "b", "a", "b", "a"]
    scores = [MIXED[0], [0, 1], MIXED[1], [1, 1], MIXED[2]]
    rewards = group_rewards(task_ids, scores, kind="cfrr", beta=1.0, lam=0.5)
    a = completion_focused_rubric_reward(MIXED)
    b = completion_focused_rubric_reward([[0, 1], [1, 1]])
    assert rewards == pytest.approx([a[0], b[0], a[1], b[1], a[2]])
    assert group_rewards(task_ids, scores, kind="binary") == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert group_rewards(task_ids, scores, kind="rubric") == pytest.approx([1.0, 0.5, 2 / 3, 1.0, 1 / 3])


def test_groups_may_differ_in_number_of_criteria() -> None:
    assert group_rewards(["a", "b"], [[1, 0, 1], [1]], kind="binary") == [0.0, 1.0]


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([], "empty group"),
        ([[1, 0], [1]], "ragged"),
        ([[1.5, 0]], "outside"),
        ([[-0.1]], "outside"),
        ([[float("nan")]], "outside"),
        ([["yes"]], "expected a number"),
        ([[]], "no criterion"),
    ],
)
def test_bad_scores_are_rejected(scores: list[list[float]], message: str) -> None:
    for reward in (completion_focused_rubric_reward, binary_reward, rubric_reward):
        with pytest.raises(ValueError, match=message):
            reward(scores)


def test_bad_knobs_and_kinds_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown reward kind"):
        group_rewards(["a"], [[1]], kind="f1")
    with pytest.raises(ValueError, match="unknown CFRR knob"):
        group_rewards(["a"], [[1]], gamma=1.0)
    with pytest.raises(ValueError, match="takes no knobs"):
        group_rewards(["a"], [[1]], kind="binary", beta=1.0)
    with pytest.raises(ValueError, match="task ids"):
        group_rewards(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="empty batch"):
        group_rewards([], [])
    with pytest.raises(ValueError, match="task 'b'.*ragged"):
        group_rewards(["a", "b", "b"], [[1], [1, 0], [1]])
    with pytest.raises(ValueError, match="lam"):
        completion_focused_rubric_reward([[1]], lam=1.5)
    with pytest.raises(ValueError, match="beta"):
        completion_focused_rubric_reward([[1]], beta=-1.0)
    with pytest.raises(ValueError, match="eps"):
        completion_focused_rubric_reward([[1]], eps=-0.1)
