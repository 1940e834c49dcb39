"""Two small crm tasks (world seed 0) for the RL tests, and the scripted turns that solve them in discover mode."""

from __future__ import annotations

import json

from mcp_services.tasks.checks import AnswerCheck, NoCollateral, RowExists
from mcp_services.tasks.grading import RubricItem
from mcp_services.tasks.spec import PlanStep, TaskSpec


def deal_question(asked_by: str = "") -> TaskSpec:
    """A question: one lookup, then the answer must state the deal's amount (``asked_by`` makes distinct tasks)."""
    return TaskSpec.build(
        instruction=f"How much is deal dl_0002 worth? Answer with the amount.{asked_by}",
        services=["crm"],
        world_seed=0,
        plan=[PlanStep(service="crm", tool="get_deal", arguments={"deal_id": "dl_0002"})],
        checks=[AnswerCheck(id="amount", expected=21600, match="number")],
        rubric=[RubricItem(id="answered", description="States the amount", checks=["amount"])],
        answer=21600,
        capabilities=["information-question"],
    )


def company_note() -> TaskSpec:
    """A write with two criteria: the note exists, and nothing else changed."""
    return TaskSpec.build(
        instruction="Add a note saying 'Renewal call booked' to the company record co_0004.",
        services=["crm"],
        world_seed=0,
        plan=[
            PlanStep(
                service="crm",
                tool="add_note",
                arguments={"entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"},
            )
        ],
        checks=[
            RowExists(
                id="note-added",
                service="crm",
                table="notes",
                change="added",
                match={"entity_type": "company", "entity_id": "co_0004", "body": {"$icontains": "renewal call booked"}},
            ),
            NoCollateral(id="no-collateral", added_counts={"crm": {"notes": 1}}),
        ],
        rubric=[
            RubricItem(id="note-on-company", description="The company carries the note", checks=["note-added"]),
            RubricItem(id="nothing-else", description="Nothing else changed", checks=["note-added", "no-collateral"]),
        ],
        capabilities=["sequential-dependency"],
    )


def _call(tool: str, arguments: dict[str, object]) -> str:
    call = {"name": "call_tool", "arguments": {"service": "crm", "tool": tool, "arguments": arguments}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"


def solving_turns(task: TaskSpec) -> list[str]:
    """What a model that solves ``task`` in discover mode writes, turn by turn (Qwen3 format)."""
    step = task.plan[0]
    answer = "The deal is worth 21600 USD.<|im_end|>" if task.answer is not None else "Done.<|im_end|>"
    return [_call(step.tool, dict(step.arguments)), answer]
