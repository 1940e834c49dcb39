"""A task on a world of another shape (another company, industry and size) runs on that world everywhere:
in process and over a stdio task server the reference rollout is the same trajectory, and it passes."""

from __future__ import annotations

import asyncio

import pytest

from harness.agents.reference import ReferenceAgent
from harness.runner import RolloutJob, RunnerConfig, run_episode
from harness.tools import make_transport
from harness.trajectory import Trajectory
from mcp_services.kernel import Episode
from mcp_services.kernel.world import WorldShape
from mcp_services.tasks.checks import NoCollateral, RowExists
from mcp_services.tasks.grading import RubricItem
from mcp_services.tasks.spec import PlanStep, TaskSpec

pytestmark = pytest.mark.e2e

SHAPE = WorldShape.varied(7)  # a manufacturing company of its own size, not the default world
SEED = 7


def shaped_task() -> TaskSpec:
    """Note a renewal on the CRM company of a customer who exists only in the shaped world."""
    with Episode.create(["crm"], SEED, shape=SHAPE) as episode:
        person = episode.world.customers[-1]
        contact = episode.call("crm", "find_contact_by_email", {"email": person.email}).data
    assert contact["company_id"]
    return TaskSpec.build(
        instruction=f"Add a note saying 'Renewal call booked' to the company of our contact {person.name}.",
        services=["crm"],
        world_seed=SEED,
        world_shape=SHAPE,
        plan=[
            PlanStep(service="crm", tool="find_contact_by_email", arguments={"email": person.email}),
            PlanStep(service="crm", tool="add_note", arguments={
                "entity_type": "company", "entity_id": contact["company_id"], "body": "Renewal call booked"}),
        ],
        checks=[
            RowExists(id="note-added", service="crm", table="notes", change="added",
                      match={"entity_id": contact["company_id"], "body": {"$icontains": "renewal call booked"}}),
            NoCollateral(id="no-collateral", added_counts={"crm": {"notes": 1}}),
        ],
        rubric=[RubricItem(id="noted", description="The company carries the note", checks=["note-added", "no-collateral"])],
    )


def rollout(task: TaskSpec, transport: str) -> Trajectory:
    job = RolloutJob(task, 0, 11)
    config = RunnerConfig(mode="direct", call_timeout=60)
    return asyncio.run(run_episode(job, ReferenceAgent([task]), make_transport(transport), config))


def test_a_task_on_a_shaped_world_replays_the_same_in_process_and_over_stdio() -> None:
    task = shaped_task()
    local = rollout(task, "inprocess")
    remote = rollout(task, "stdio")
    assert local.passed and remote.without_timings() == local.without_timings()
    # The system prompt speaks of that world's company and user, not the default world's.
    with Episode.create(["crm"], SEED, shape=SHAPE) as episode:
        system = local.messages[0]["content"]
        assert episode.world.home.name in system and episode.world.user.email in system
