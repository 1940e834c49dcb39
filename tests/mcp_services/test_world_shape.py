"""A world's shape: how many organisations and people, how many months of books, the home company's industry.

Shapes are frozen, validated values; the default is the world every task was composed on so far; an
episode and a task carry their shape, so the same world is rebuilt wherever the task runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_services.kernel import Episode, World
from mcp_services.kernel.world import DEFAULT_SHAPE, INDUSTRIES, TEAM_ROLES, WorldShape, WorldShapeError
from mcp_services.tasks.spec import TaskSpec, content_id

REPO = Path(__file__).resolve().parents[2]


def test_the_default_shape_is_the_world_tasks_were_composed_on() -> None:
    assert World.from_seed(3) is World.from_seed(3, WorldShape())
    world = World.from_seed(3)
    assert (len(world.organisations), len(world.people), world.shape.months) == (16, 72, 8)
    assert len(world.plan.invoices) == 120 and len(world.plan.suppliers) == 5
    assert DEFAULT_SHAPE.is_default and not WorldShape.varied(3).is_default


@pytest.mark.parametrize(("knobs", "named"), [
    ({"organisations": 3}, "organisations must be a whole number from 6 to 2000, not 3"),
    ({"organisations": 16.5}, "organisations"),
    ({"months": 0}, "months must be a whole number from 2 to 36, not 0"),
    ({"people": 20}, "people must be a whole number from 40 to 610 for 16 organisations"),
    ({"industry": "mining"}, "industry must be one of food and beverage"),
])
def test_a_shape_that_cannot_be_built_is_an_error_naming_the_knob(knobs: dict[str, object], named: str) -> None:
    with pytest.raises(WorldShapeError, match=named):
        replace(WorldShape(), **knobs)  # type: ignore[arg-type]


def test_shapes_read_back_from_their_dict_and_unknown_knobs_are_refused() -> None:
    shape = WorldShape.varied(7)
    assert WorldShape.from_dict(json.loads(json.dumps(shape.to_dict()))) == shape
    with pytest.raises(WorldShapeError, match="unknown knob.*colour"):
        WorldShape.from_dict({"organisations": 20, "colour": "red"})
    with pytest.raises(WorldShapeError, match="size must be one of small, default, large, not 'huge'"):
        WorldShape.sized("huge")


def test_varied_shapes_meet_every_industry_in_turn_and_the_same_seed_gives_the_same_shape() -> None:
    shapes = [WorldShape.varied(seed) for seed in range(len(INDUSTRIES))]
    assert [s.industry for s in shapes] == list(INDUSTRIES)
    assert [WorldShape.varied(seed) for seed in range(len(INDUSTRIES))] == shapes
    assert len({(s.organisations, s.people, s.months) for s in shapes}) > 3  # companies of several sizes


def test_a_shaped_world_has_the_organisations_people_history_and_industry_asked_for() -> None:
    shape = WorldShape(organisations=30, people=len(TEAM_ROLES) + 29 * 3, months=12, industry="healthcare")
    world = World.from_seed(11, shape)
    assert (len(world.organisations), len(world.people), world.home.industry) == (30, 97, "healthcare")
    assert len(world.team) == len(TEAM_ROLES) and len({p.email for p in world.people}) == 97
    assert {p.organisation_id for p in world.customers} == {o.id for o in world.organisations[1:]}
    oldest = min(i.date for i in world.plan.invoices)
    assert (world.now_dt.date() - __import__("datetime").date.fromisoformat(oldest)).days <= 12 * 30
    assert len(world.plan.invoices) > len(World.from_seed(11).plan.invoices)  # more customers, longer books


def test_the_same_seed_and_shape_give_the_same_world_in_a_fresh_process() -> None:
    shape = WorldShape.varied(5)
    here = World.from_seed(5, shape)
    code = (
        "import json, hashlib; from mcp_services.kernel import Episode; from mcp_services.kernel.world import WorldShape; "
        "ep = Episode.create(['crm', 'mailbox', 'helpdesk'], 5, shape=WorldShape.varied(5)); "
        "print(ep.world.to_json()); print(hashlib.sha256(json.dumps(ep.dump(), sort_keys=True).encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "77"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    world_json, digest = out.stdout.strip().splitlines()
    assert world_json == here.to_json()
    with Episode.create(["crm", "mailbox", "helpdesk"], 5, shape=shape) as ep:
        import hashlib
        assert hashlib.sha256(json.dumps(ep.dump(), sort_keys=True).encode()).hexdigest() == digest
    assert here.to_json() != World.from_seed(5).to_json()


def test_a_store_on_disk_remembers_its_world_and_refuses_another_shape(tmp_path: Path) -> None:
    shape = WorldShape.varied(2)
    with Episode.create(["crm"], 2, shape=shape, db_dir=tmp_path) as ep:
        contacts = len(ep.dump()["crm"]["contacts"])
    with Episode.create(["crm"], 2, shape=shape, db_dir=tmp_path) as again:
        assert len(again.dump()["crm"]["contacts"]) == contacts
    with pytest.raises(ValueError, match="shape"):
        Episode.create(["crm"], 2, db_dir=tmp_path)


def _task(shape: WorldShape | None) -> TaskSpec:
    fields = {} if shape is None else {"world_shape": shape}
    return TaskSpec.build(instruction="Look up our contacts.", services=["crm"], world_seed=0, plan=[], checks=[],
                          rubric=[], **fields)


def test_a_default_shape_stays_out_of_the_task_file_and_its_id() -> None:
    plain, explicit = _task(None), _task(WorldShape())
    assert plain.id == explicit.id and "world_shape" not in json.loads(plain.to_json())
    shaped = _task(WorldShape.varied(3))
    body = json.loads(shaped.to_json())
    assert body["world_shape"] == WorldShape.varied(3).to_dict() and shaped.id != plain.id == content_id(plain)
    assert TaskSpec.model_validate_json(shaped.to_json()) == shaped


def test_readmes_shape_example_runs_with_the_names_the_package_exports() -> None:
    """README's ``Episode.create(names, world_seed=3, shape=WorldShape.varied(3))``, with the top-level imports."""
    from mcp_services import Episode, WorldShape

    episode = Episode.create(["crm"], world_seed=3, shape=WorldShape.varied(3))
    try:
        assert episode.world.shape == WorldShape.varied(3)
    finally:
        episode.close()
