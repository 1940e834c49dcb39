"""Small hand-made tasks on the crm service (world seed 0), shared by the harness tests."""

from __future__ import annotations

import json

from harness.agents import AgentTurn, ToolCallRequest
from mcp_services.tasks.checks import AnswerCheck, NoCollateral, RowExists
from mcp_services.tasks.grading import RubricItem
from mcp_services.tasks.spec import PlanStep, SetupRecord, TaskSpec


def note_task() -> TaskSpec:
    """Look a contact up, then write a note on their company (sequential dependency)."""
    return TaskSpec.build(
        instruction="Add a note saying 'Renewal call booked' to the company record of our contact David Anderson.",
        services=["crm"],
        world_seed=0,
        plan=[
            PlanStep(service="crm", tool="search_contacts", arguments={"query": "David Anderson"}),
            PlanStep(
                service="crm",
                tool="add_note",
                arguments={"entity_type": "company", "entity_id": "co_0004", "body": "Renewal call booked"},
            ),
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


def question_task() -> TaskSpec:
    """A question: the answer must state the deal's amount."""
    return TaskSpec.build(
        instruction="How much is deal dl_0002 worth? Answer with the amount.",
        services=["crm"],
        world_seed=0,
        plan=[PlanStep(service="crm", tool="get_deal", arguments={"deal_id": "dl_0002"})],
        checks=[AnswerCheck(id="amount", expected=21600, match="number")],
        rubric=[RubricItem(id="answered", description="States the amount", checks=["amount"])],
        answer=21600,
        capabilities=["information-question"],
    )


def setup_task() -> TaskSpec:
    """A setup record (a new lead) that the agent must find and convert; nothing else may change."""
    return TaskSpec.build(
        instruction="Our new lead Zed Quill (zed.quill@quill.example) just signed: mark them as a customer.",
        services=["crm"],
        world_seed=0,
        setup=[
            SetupRecord(
                service="crm",
                table="contacts",
                row={
                    "id": "ct_9001",
                    "first_name": "Zed",
                    "last_name": "Quill",
                    "email": "zed.quill@quill.example",
                    "lifecycle_stage": "lead",
                    "archived": False,
                    "created_at": "2025-03-01T09:00:00Z",
                },
            )
        ],
        plan=[
            PlanStep(service="crm", tool="find_contact_by_email", arguments={"email": "zed.quill@quill.example"}),
            PlanStep(
                service="crm", tool="update_contact", arguments={"contact_id": "ct_9001", "lifecycle_stage": "customer"}
            ),
        ],
        checks=[
            RowExists(id="converted", service="crm", table="contacts", change="changed",
                      match={"id": "ct_9001", "lifecycle_stage": "customer"}),
            NoCollateral(id="no-collateral", changed_keys={"crm": {"contacts": ["ct_9001"]}}),
        ],
        rubric=[
            RubricItem(id="customer", description="Zed Quill is a customer", checks=["converted"]),
            RubricItem(id="nothing-else", description="Nothing else changed", checks=["converted", "no-collateral"]),
        ],
        capabilities=["sequential-dependency", "distractor-avoidance"],
    )


def crm_tasks() -> list[TaskSpec]:
    return [note_task(), question_task(), setup_task()]


#: Tool-call arguments a model may write that once escaped the harness as exceptions (or broke the
#: trajectory file): each must come back to the model as an error result.
HOSTILE_ARGUMENTS = [
    "[" * 100_000 + "]" * 100_000,  # RecursionError in json, pydantic and repr
    '{"deal_id": ' * 5_000 + '"dl_0002"' + "}" * 5_000,
    "1" * 5_000,  # longer than Python converts to an int
    '{"deal_id": NaN}',
    '{"deal_id": "\\udc00"}',  # a lone surrogate: cannot be written to the trajectory file
    '"[1, 2]"',  # double-encoded, but not an object
    "null",
]


def hostile_turn() -> AgentTurn:
    """One turn of hostile calls on the question task's crm: the arguments above, a megabyte tool
    name, and a two-megabyte note."""
    calls = [ToolCallRequest("crm__get_deal", arguments) for arguments in HOSTILE_ARGUMENTS]
    calls.append(ToolCallRequest("crm__" + "x" * 1_000_000, "{}"))
    note = {"entity_type": "deal", "entity_id": "dl_0002", "body": "y" * 2_000_000}
    calls.append(ToolCallRequest("crm__add_note", json.dumps(note)))
    return AgentTurn(tool_calls=tuple(calls))
