"""The contract every service of the library keeps, checked tool by tool.

Parametrized over ``mcp_services.registry.LIBRARY`` and over each service's tools. A service whose
module does not import yet is skipped with its name and the import error, so the suite is green
while the library is being written and covers every service once it lands.

What is checked (see the test names): tool names, descriptions and JSON schemas; bad arguments
(missing, extra, wrong-typed) and unknown ids are refused with the right code and change nothing;
read tools change nothing; the same world seed gives the same state (in this process and in a
fresh one); a write in one episode is invisible to another; no tool looks like a control operation.

Arguments are built from each tool's input schema: ``x-semantic-type`` picks a plausible value
(an email, a date next week...) and ids of the service's own entities come from its seeded tables.
One seeded episode per service is reused and reset between cases, so the suite stays fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator

from mcp_services.kernel import Episode, Service, ToolResult, ToolSpec
from mcp_services.kernel.episode import EpisodeSnapshot
from mcp_services.kernel.semantic import SEMANTIC_KEY, semantic_type_of
from mcp_services.registry import LIBRARY, get_service

REPO = Path(__file__).resolve().parents[2]
WORLD_SEED = 0
MIN_TOOLS = 12
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
MISSING_ID = "zz_contract_missing_0000"
EXTRA_ARGUMENT = "contract_test_extra_argument"

#: Words of the episode control API (Python only, never an agent's tool).
CONTROL_WORDS = {"reset", "snapshot", "restore", "dump", "diff", "grade", "seed"}
#: Words that are never a domain verb in this library: a tool containing one is a control operation.
ALWAYS_CONTROL = {"snapshot", "dump", "diff", "grade", "seed"}
#: What a control operation acts on; "restore_contact" is a domain operation, "restore_state" is not.
CONTROL_OBJECTS = {
    "state", "states", "episode", "world", "store", "environment", "env", "db", "database", "all", "task", "rollout"
}

#: How arguments are built: "seeded" uses a customer of the world (the CRM's people), "team" a colleague
#: of the user, "fresh" values no seeded row has (a new email...). Ids always come from seeded tables.
Mode = Literal["seeded", "team", "fresh"]
MODES: tuple[Mode, ...] = ("seeded", "team", "fresh")
#: Parameter-name words that mark the later end of a range (end after start, time_max after time_min).
LATER_WORDS = {"end", "due", "until", "to", "max", "before", "expires", "expiry", "stop", "finish", "last"}


# -- loading services (skipping those that do not import yet) --------------------------------------


def _load(name: str) -> Service | str:
    try:
        return get_service(name)
    except Exception as exc:  # noqa: BLE001 - any import failure means "not landed yet"
        return f"service {name!r} does not import yet ({type(exc).__name__}: {exc})"


LOADED: dict[str, Service | str] = {name: _load(name) for name in LIBRARY}


def require(name: str) -> Service:
    loaded = LOADED[name]
    if isinstance(loaded, str):
        pytest.skip(loaded)
    return loaded


def tool_params(keep: Callable[[ToolSpec], bool] = lambda tool: True) -> list[Any]:
    """(service, tool) pairs; a service that does not import yet is one case that skips with its name."""
    params = []
    for name, loaded in LOADED.items():
        if isinstance(loaded, str):
            params.append(pytest.param(name, "", id=f"{name}-not-importable"))
        else:
            params += [pytest.param(name, t.name, id=f"{name}.{t.name}") for t in loaded.tools.values() if keep(t)]
    return params


# -- one seeded episode per service, reset between cases --------------------------------------------


class Seeded:
    """A service's episode with its initial state, compared fast (snapshot) and exactly (dump JSON)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.episode = Episode([service], world_seed=WORLD_SEED)
        self.initial: EpisodeSnapshot = self.episode.snapshot()
        self.initial_json = dump_json(self.episode)
        self.ids = seeded_ids(self.episode, service.name)

    def reset(self) -> Episode:
        self.episode.reset()
        return self.episode

    def unchanged(self) -> bool:
        """The state is byte-identical to the seeded one (same dump JSON)."""
        # Same database image implies the same dump; only when the images differ is the dump compared.
        return self.episode.snapshot() == self.initial or dump_json(self.episode) == self.initial_json


@pytest.fixture(scope="module")
def seeded_cache() -> Iterator[dict[str, Seeded]]:
    cache: dict[str, Seeded] = {}
    yield cache
    for seeded in cache.values():
        seeded.episode.close()


@pytest.fixture
def seeded(seeded_cache: dict[str, Seeded], request: pytest.FixtureRequest) -> Seeded:
    name = request.node.callspec.params["service_name"]
    service = require(name)
    if name not in seeded_cache:
        seeded_cache[name] = Seeded(service)
    entry = seeded_cache[name]
    entry.reset()
    return entry


def dump_json(episode: Episode) -> str:
    return json.dumps(episode.dump(), sort_keys=True)


def seeded_ids(episode: Episode, service: str) -> dict[str, list[str]]:
    """Primary keys of each seeded table of the service; composite keys ("a|b") are never entity ids."""
    found = {table: [key for key in rows if "|" not in key] for table, rows in episode.dump()[service].items()}
    return {table: keys for table, keys in found.items() if keys}


def ids_for(seeded: Seeded, semantic: str) -> list[str]:
    """Seeded ids for ``id:<service>.<entity>``: the table named after the entity, if the service has one."""
    owner, _, entity = semantic.removeprefix("id:").partition(".")
    if owner != seeded.service.name:
        return []
    for table in (entity + "s", entity + "es", entity[:-1] + "ies", entity):
        if table in seeded.ids:
            return seeded.ids[table]
    for table, ids in seeded.ids.items():
        if table.rstrip("s").endswith(entity) or entity.endswith(table.rstrip("s")):
            return ids
    # Entities sharing a table (files and folders in "items") are told apart by their id prefix.
    return [i for ids in seeded.ids.values() for i in ids if i.startswith((f"{entity}_", f"{entity}-"))]


# -- building arguments from schemas ----------------------------------------------------------------


def resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def non_null(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = resolve(schema, defs)
    if "anyOf" in schema:
        options = [resolve(o, defs) for o in schema["anyOf"] if resolve(o, defs).get("type") != "null"]
        if options:
            merged = dict(options[0])
            for key in ("description", SEMANTIC_KEY):
                if key in schema and key not in merged:
                    merged[key] = schema[key]
            return merged
    return schema


def semantic_value(seeded: Seeded, semantic: str, param: str, mode: Mode, pick: int = 0) -> Any:
    world = seeded.episode.world
    later = bool(set(param.split("_")) & LATER_WORDS)
    person = world.team[1] if mode == "team" else world.customers[0]
    fresh = mode == "fresh"
    next_week = world.now_dt + timedelta(days=7)
    values: dict[str, Any] = {
        "email_address": "contract.test@example.com" if fresh else person.email,
        "phone_number": "+14155550123" if fresh else person.phone,
        "person_name": "Casey Contract" if fresh else person.name,
        "company_name": "Contract Test Co" if fresh else world.organisation(person.organisation_id).name,
        "money": 10.0,
        "currency": world.currency,
        "datetime": next_week.replace(hour=11 if later else 10, minute=0, second=0).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "date": (next_week + timedelta(days=1 if later else 0)).strftime("%Y-%m-%d"),
        "url": "https://example.com/contract-test",
        "address": "1 Contract Street, Testville",
        "product_sku": world.products[0].sku,
        "product_name": world.products[0].name,
        "domain_name": "example.com",
        "job_title": "Tester",
        "file_name": "contract-test.txt",
        "file_ref": "/contract-test.txt",
        "city": "Testville",
        "country_code": "US",
        "text": "Contract test text.",
        "subject": "Contract test",
        "tag": "contract-test",
        "username": "contract.test" if fresh else person.username,
        "channel_name": "contract-test",
        "percentage": 10.0,
        "quantity": 1,
    }
    if semantic.startswith("id:"):
        ids = ids_for(seeded, semantic)
        return ids[pick % len(ids)] if ids else MISSING_ID
    return values.get(semantic)


def sample(
    seeded: Seeded, schema: dict[str, Any], defs: dict[str, Any], param: str, mode: Mode, pick: int = 0
) -> Any:
    """A value that satisfies ``schema`` (plausible for the seeded data); ``pick`` chooses which seeded id."""
    schema = non_null(schema, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    semantic = schema.get(SEMANTIC_KEY)
    if semantic:
        value = semantic_value(seeded, semantic, param, mode, pick)
        if value is not None:
            return value
    kind = schema.get("type")
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), min(1, int(schema.get("maximum", 1))))
    if kind == "number":
        return float(max(schema.get("minimum", 1.0), min(1.0, schema.get("maximum", 1.0))))
    if kind == "boolean":
        return bool(schema.get("default", False))
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [sample(seeded, schema.get("items", {}), defs, param, mode, pick + i) for i in range(count)]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: sample(seeded, props[k], defs, k, mode, pick) for k in schema.get("required", ())}
    text = "contract test"
    return text.ljust(int(schema.get("minLength", 0)), "x")[: int(schema.get("maxLength", 10_000))]


def build_args(
    seeded: Seeded, tool: ToolSpec, mode: Mode, names: list[str] | None = None, pick: int = 0
) -> dict[str, Any]:
    """Values for the required parameters (or for ``names``); ``pick`` chooses which seeded rows' ids."""
    schema = tool.input_schema
    defs = schema.get("$defs", {})
    props = schema.get("properties", {})
    wanted = names if names is not None else list(schema.get("required", ()))
    return {name: sample(seeded, props[name], defs, name, mode, pick) for name in wanted}


def accepted_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    schema = resolve(schema, defs)
    if "anyOf" in schema:
        return set().union(*(accepted_types(o, defs) for o in schema["anyOf"]))
    if "type" in schema:
        kinds = schema["type"]
        return set(kinds) if isinstance(kinds, list) else {kinds}
    if "properties" in schema:
        return {"object"}
    if "enum" in schema or "const" in schema:
        return {type(v).__name__ for v in schema.get("enum", [schema.get("const")])} | {"string"}
    return set()  # unconstrained: any value is valid


def wrong_value(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value of a JSON type the parameter does not accept, or None if it accepts everything."""
    kinds = accepted_types(schema, defs)
    if not kinds:
        return None
    if "object" not in kinds:
        return {"wrong": "type"}
    if "array" not in kinds:
        return ["wrong", "type"]
    return None


def id_params(tool: ToolSpec) -> list[tuple[str, str]]:
    props = tool.input_schema.get("properties", {})
    found = []
    for name, prop in props.items():
        semantic = semantic_type_of(prop)
        if semantic and semantic.startswith("id:"):
            found.append((name, semantic))
    return found


def call(seeded: Seeded, tool: ToolSpec, args: dict[str, Any]) -> ToolResult:
    result = seeded.episode.call(seeded.service.name, tool.name, args)
    assert result.error_code != "internal_error", f"{tool.qualified_name}({args}) crashed: {result.error_message}"
    if result.success:
        Draft202012Validator(tool.output_schema).validate(result.envelope())
    return result


def tool_of(service_name: str, tool_name: str) -> ToolSpec:
    service = require(service_name)
    return service.tools[tool_name]


# -- per service --------------------------------------------------------------------------------------


@pytest.mark.parametrize("service_name", LIBRARY)
def test_service_has_enough_tools_with_valid_names(service_name: str) -> None:
    service = require(service_name)
    assert len(service.tools) >= MIN_TOOLS, f"{service_name} has {len(service.tools)} tools; at least {MIN_TOOLS}"
    for name in service.tools:
        assert TOOL_NAME.match(name), f"{service_name}.{name} does not match {TOOL_NAME.pattern}"


@pytest.mark.parametrize("service_name", LIBRARY)
def test_no_tool_is_named_like_a_control_operation(service_name: str) -> None:
    service = require(service_name)
    for name in service.tools:
        words = name.split("_")
        assert not set(words) & ALWAYS_CONTROL, f"{service_name}.{name} looks like an episode control operation"
        if words[0] in CONTROL_WORDS:
            assert set(words[1:]) - CONTROL_OBJECTS, f"{service_name}.{name} looks like an episode control operation"


@pytest.fixture(scope="module")
def fresh_process_digests() -> dict[str, str]:
    """Each importable service's seeded dump digest, computed in a fresh interpreter with another hash seed."""
    script = (
        "import hashlib, json, sys\n"
        "from mcp_services.kernel import Episode\n"
        "out = {}\n"
        "for name in sys.argv[2:]:\n"
        "    with Episode.create([name], world_seed=int(sys.argv[1])) as ep:\n"
        "        out[name] = hashlib.sha256(json.dumps(ep.dump(), sort_keys=True).encode()).hexdigest()\n"
        "print(json.dumps(out))\n"
    )
    names = [n for n, loaded in LOADED.items() if not isinstance(loaded, str)]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}  # set/dict-order bugs show up as different states
    proc = subprocess.run(
        [sys.executable, "-c", script, str(WORLD_SEED), *names],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("service_name", LIBRARY)
def test_same_world_seed_gives_identical_state(
    service_name: str, seeded: Seeded, fresh_process_digests: dict[str, str]
) -> None:
    with Episode.create([service_name], world_seed=WORLD_SEED) as one, Episode.create(
        [service_name], world_seed=WORLD_SEED
    ) as two:
        assert dump_json(one) == dump_json(two) == seeded.initial_json
    digest = hashlib.sha256(seeded.initial_json.encode()).hexdigest()
    assert fresh_process_digests[service_name] == digest, "seeding differs between processes: is it deterministic?"


@pytest.mark.parametrize("service_name", LIBRARY)
def test_a_write_in_one_episode_is_not_visible_in_another(service_name: str, seeded: Seeded) -> None:
    service = seeded.service
    with Episode.create([service_name], world_seed=WORLD_SEED) as other:
        attempts = []
        for tool in (t for t in service.tools.values() if t.effect == "write"):
            for mode in ("fresh", "team", "seeded"):
                seeded.reset()
                args = build_args(seeded, tool, mode)
                result = call(seeded, tool, args)
                if result.success and not seeded.unchanged():
                    break
                attempts.append(f"{tool.name}({args}) -> {result.error_code}: {result.error_message}")
            else:
                continue
            break
        else:
            pytest.fail(f"no write tool of {service_name} could be made to succeed:\n" + "\n".join(attempts))
        assert dump_json(other) == seeded.initial_json, f"{tool.name} in one episode changed another episode"
        with Episode.create([service_name], world_seed=WORLD_SEED) as later:
            assert dump_json(later) == seeded.initial_json, f"{tool.name} changed the seeded image itself"


# -- per tool -------------------------------------------------------------------------------------------

TOOLS = tool_params()
READ_TOOLS = tool_params(lambda tool: tool.effect == "read")
TOOLS_WITH_IDS = tool_params(lambda tool: bool(id_params(tool)))


@pytest.mark.parametrize(("service_name", "tool_name"), TOOLS)
def test_tool_is_described_and_its_schemas_are_valid(service_name: str, tool_name: str) -> None:
    check_described(tool_of(service_name, tool_name))


def check_described(tool: ToolSpec) -> None:
    """The tool and each of its parameters are described; its schemas are valid and refuse extra arguments."""
    assert tool.description.strip(), f"{tool.qualified_name} has no description"
    Draft202012Validator.check_schema(tool.input_schema)
    Draft202012Validator.check_schema(tool.output_schema)
    assert tool.input_schema.get("type") == "object"
    assert tool.input_schema.get("additionalProperties") is False, f"{tool.qualified_name} accepts extra arguments"
    for name, prop in tool.input_schema.get("properties", {}).items():
        assert str(prop.get("description", "")).strip(), f"{tool.qualified_name}: parameter {name!r} has no description"


@pytest.mark.parametrize(("service_name", "tool_name"), TOOLS)
def test_bad_arguments_are_refused_and_change_nothing(service_name: str, tool_name: str, seeded: Seeded) -> None:
    tool = seeded.service.tools[tool_name]
    schema = tool.input_schema
    defs = schema.get("$defs", {})
    props = schema.get("properties", {})
    full = build_args(seeded, tool, "seeded", list(props))
    cases: list[tuple[str, dict[str, Any]]] = [
        (f"without required {name!r}", {k: v for k, v in full.items() if k != name})
        for name in schema.get("required", ())
    ]
    cases.append(("with an extra argument", {**full, EXTRA_ARGUMENT: 1}))
    for name, prop in props.items():
        wrong = wrong_value(prop, defs)
        if wrong is not None:
            cases.append((f"with {name!r} of the wrong type", {**full, name: wrong}))
    for label, args in cases:
        result = call(seeded, tool, args)
        assert not result.success and result.error_code == "invalid_argument", (
            f"{tool.qualified_name} {label}: expected invalid_argument, got {result.envelope()}"
        )
        assert seeded.unchanged(), f"{tool.qualified_name} {label} changed the state"


@pytest.mark.parametrize(("service_name", "tool_name"), TOOLS_WITH_IDS)
def test_unknown_ids_are_refused_and_change_nothing(service_name: str, tool_name: str, seeded: Seeded) -> None:
    tool = seeded.service.tools[tool_name]
    required = set(tool.input_schema.get("required", ()))
    props = tool.input_schema.get("properties", {})
    defs = tool.input_schema.get("$defs", {})
    rows = max((len(ids) for ids in seeded.ids.values()), default=1)
    for name, semantic in id_params(tool):
        missing: Any = [MISSING_ID] if non_null(props[name], defs).get("type") == "array" else MISSING_ID
        refusals = []
        # The other arguments must be valid, state included (restoring needs a trashed file, merging an
        # open ticket): walk the seeded rows until the call is decided by the unknown id.
        for pick in range(min(rows, 400)):
            # Fresh values (an unused email...) so that only the unknown id can make the call fail.
            args = {**build_args(seeded, tool, "fresh", pick=pick), name: missing}
            result = call(seeded, tool, args)
            assert seeded.unchanged(), f"{tool.qualified_name} with unknown {name} changed the state"
            if result.success:
                # A read tool may treat an optional id as a filter that matches nothing.
                is_filter = name not in required and tool.effect == "read"
                assert is_filter and isinstance(result.data, dict) and result.data.get("items") == [], (
                    f"{tool.qualified_name} accepted the unknown {semantic} {MISSING_ID!r}: {result.envelope()}"
                )
                break
            if result.error_code in ("not_found", "invalid_argument"):
                break
            refusals.append(f"{args} -> {result.error_code}: {result.error_message}")
        else:
            pytest.fail(
                f"{tool.qualified_name}: no seeded row made the other arguments valid:\n" + "\n".join(refusals[:5])
            )


@pytest.mark.parametrize(("service_name", "tool_name"), READ_TOOLS)
def test_read_tool_changes_nothing(service_name: str, tool_name: str, seeded: Seeded) -> None:
    tool = seeded.service.tools[tool_name]
    for mode in MODES:
        args = build_args(seeded, tool, mode)
        result = call(seeded, tool, args)
        assert seeded.unchanged(), f"read tool {tool.qualified_name}({args}) changed the state"
        if result.success:
            break
    if not tool.input_schema.get("required"):
        assert result.success, f"{tool.qualified_name}() failed: {result.envelope()}"
