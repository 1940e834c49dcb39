"""``harness grade``: grade what was done in a served, file-backed episode.

The state files under ``--db`` (from ``harness serve --db``) are reopened and diffed against a
fresh copy of the task's initial state, then graded with the task's own checks: the same grade a
rollout gets in process. A task that asks a question also needs the answer given (``--answer``).
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.episode_db import check_db
from mcp_services.kernel.episode import Episode
from mcp_services.tasks.episodes import episode_for
from mcp_services.tasks.grading import Grade
from mcp_services.tasks.spec import TaskSpec

__all__ = ["asks_question", "grade_db", "grade_record", "render_grade"]


def asks_question(task: TaskSpec) -> bool:
    return task.expected_answer is not None


def grade_db(task: TaskSpec, db_dir: Path, answer: str | None = None) -> Grade:
    """The grade of the state in ``db_dir`` (the server may still be running: SQLite reads are safe)."""
    check_db(db_dir, task)
    fresh = episode_for(task)
    try:
        # Reopened as they are: ``episode_for`` would re-apply setup rows the person deleted.
        served = Episode.create(task.mounted_services, task.world_seed, shape=task.world_shape, db_dir=db_dir)
        try:
            diff = served.diff(before=fresh.initial_dump())
        finally:
            served.close()
    finally:
        fresh.close()
    return task.grade(diff, answer)


def render_grade(task: TaskSpec, grade: Grade, answer: str | None) -> str:
    """The criteria, one per line, then the verdict: for a person at a terminal."""
    lines = [f"task {task.id}: {task.instruction}", ""]
    for item in task.rubric:
        mark = "PASS" if grade.criteria.get(item.id) else "FAIL"
        lines.append(f"  {mark}  {item.id}: {item.description}")
    for change in grade.collateral:
        lines.append(f"  collateral: {change}")
    if asks_question(task) and answer is None:
        lines.append("  (the task asks a question: pass the answer given with --answer TEXT)")
    passed = sum(grade.criteria.values())
    verdict = "passed" if grade.passed else "not passed"
    lines += ["", f"{verdict}: {passed} of {len(grade.criteria)} criteria, rubric score {grade.rubric_score:.3f}"]
    return "\n".join(lines)


def grade_record(task: TaskSpec, grade: Grade) -> str:
    """The grade as one JSON object (``--json``), criteria with their descriptions."""
    descriptions = {item.id: item.description for item in task.rubric}
    record = {
        "task_id": task.id,
        "passed": grade.passed,
        "rubric_score": grade.rubric_score,
        "criteria": {
            cid: {"passed": ok, "description": descriptions.get(cid, "")} for cid, ok in grade.criteria.items()
        },
        "checks": grade.checks,
        "collateral": list(grade.collateral),
    }
    return json.dumps(record, indent=2, ensure_ascii=False)
