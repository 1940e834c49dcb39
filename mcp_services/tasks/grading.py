"""A task's rubric, and grading a run against it.

Grading is the same function for the composer (verifying a task), the harness (grading a rollout)
and training (rewards), so a grade means one thing everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from mcp_services.tasks.checks import Check, Diff

__all__ = ["Grade", "RubricItem", "grade"]


class RubricItem(BaseModel):
    """A named criterion: it passes when all of its checks pass."""

    model_config = ConfigDict(extra="allow", frozen=True)
    id: str = Field(min_length=1)
    description: str
    checks: list[str] = Field(min_length=1)


class Grade(BaseModel):
    """Per-check and per-criterion results, the rubric score (mean of criteria) and pass (all)."""

    checks: dict[str, bool]
    criteria: dict[str, bool]
    rubric_score: float
    passed: bool
    collateral: list[str] = Field(default_factory=list)


def grade(checks: Sequence[Check], rubric: Sequence[RubricItem], diff: Diff, answer: str | None) -> Grade:
    """Evaluate every check and roll them up into the rubric."""
    results = {check.id: check.holds(diff, answer) for check in checks}
    criteria: dict[str, bool] = {}
    for item in rubric:
        missing = [c for c in item.checks if c not in results]
        if missing:
            raise ValueError(f"rubric criterion {item.id!r} names unknown checks: {', '.join(missing)}")
        criteria[item.id] = all(results[c] for c in item.checks)
    score = sum(criteria.values()) / len(criteria) if criteria else 0.0
    return Grade(
        checks=results,
        criteria=criteria,
        rubric_score=score,
        passed=bool(criteria) and all(criteria.values()),
        collateral=[change for check in checks for change in check.collateral(diff)],
    )
