"""The held-out check of issue 32: generated services nobody tuned, played as a user of each product.

``sample`` draws services at random (by seed) from the implemented generated services, leaving out every
service an issue or a commit of generator/ work named (those were looked at, so they say nothing about the
services nobody looked at). ``draft_calls`` writes the calls a user of the product makes on its core
resources (list, get, create and read it back, update, an action, delete, bad input); the ratings file
keeps those calls with a person's rating of each response against the product's public API, and
``replay`` runs them again on a fresh episode so the figures can be checked against the code.

Arguments may name an earlier call's answer: ``"$3.id"`` is the ``id`` in the data of call 3 of the same
service (a created row's id, as a user copies it from the answer).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.catalog import generated_entry, generated_names
from generator.compiler.runtime import ServiceRuntime
from generator.gate.examples import NoExample, rows_by_entity, valid_example, wrong_type
from generator.spec import ToolDef
from mcp_services.kernel.episode import Episode
from mcp_services.registry import get_service

RATINGS = ("plausible", "weak", "nonsense")
MIN_IMPLEMENTED = 8  # a service a user can play for ~20 calls
EXCERPT = 600  # characters of a response kept beside its rating

# Named by issue 32 (its table and its examples): mandrill, postmark, apideck, jira, paylocity, docusign, ebay,
# google tasks, drchrono, drive, sheets, gmail, trello, braze, brex.
ISSUE_NAMED = ("mandrillapp", "postmarkapp_*", "apideck_*", "jira", "atlassian_jira", "paylocity", "docusign",
               "ebay_*", "googleapis_tasks", "drchrono", "googleapis_drive", "googledrive", "googleapis_sheets",
               "googleapis_gmail", "trello", "braze", "brex")
# Named in the messages of commits to generator/ (git log -- generator/): tuned or checked by name.
COMMIT_NAMED = ("asana", "box", "cloud_elements_ecwid", "exavault", "files_api", "gitlab", "google_admin",
                "google_classroom",  # the Composio toolkits re-imported by name ('those four services')
                "googleapis_admin", "pocketsmith", "sendgrid", "slack", "squareup", "stripe", "storecove",
                "twinehealth", "youneedabudget")
# Tried as a user in earlier issues' notes (issue 23's twelve, the last stop's ten).
EARLIER_TRIALS = ("hubapi_crm", "notion", "googleapis_calendar", "personio_personnel", "shipengine",
                  "twilio_messaging_v1", "salesloft")
EXCLUDED = ISSUE_NAMED + COMMIT_NAMED + EARLIER_TRIALS


def excluded(name: str) -> bool:
    return any(name == e or (e.endswith("*") and name.startswith(e[:-1])) for e in EXCLUDED)


def eligible() -> list[str]:
    """The generated services the check may draw: enough implemented tools to play, none named before."""
    out = []
    for name in generated_names():
        entry = generated_entry(name)
        if entry is not None and not excluded(name) and sum(t.status == "implemented" for t in entry.tools) >= MIN_IMPLEMENTED:
            out.append(name)
    return out


def sample(seed: int, count: int, avoid: tuple[str, ...] = ()) -> list[str]:
    """``count`` services drawn with ``seed`` (same seed, same services), none of ``avoid``."""
    pool = [n for n in eligible() if n not in avoid]
    return sorted(random.Random(f"heldout:{seed}").sample(pool, min(count, len(pool))))


# -- drafting the calls a user makes ------------------------------------------------------------------------


@dataclass
class Call:
    tool: str
    arguments: dict[str, Any]
    what: str  # what the user is doing ("create a contact, then read it back")
    rating: str = ""
    reason: str = ""
    response: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": self.arguments, "what": self.what, "response": self.response,
                "rating": self.rating, "reason": self.reason}


@dataclass
class _Planner:
    runtime: ServiceRuntime
    rows: dict[str, list[dict[str, Any]]]
    episode: Episode
    calls: list[Call] = field(default_factory=list)

    @staticmethod
    def first(tools: list[ToolDef]) -> ToolDef | None:
        return tools[0] if tools else None

    def kind(self, tool: ToolDef) -> str:
        b = tool.behaviour
        return b.planned or b.kind if b.kind == "simulated" else b.kind

    def tools(self, entity: str, *kinds: str) -> list[ToolDef]:
        return [t for t in self.runtime.spec.tools if t.behaviour.entity == entity and self.kind(t) in kinds]

    def example(self, tool: ToolDef | None) -> dict[str, Any] | None:
        if tool is None:
            return None
        try:
            return dict(valid_example(self.runtime, tool, self.rows, self.episode.world).arguments)
        except NoExample:
            return None

    def add(self, tool: ToolDef, arguments: dict[str, Any], what: str) -> int:
        self.calls.append(Call(tool.name, arguments, what))
        return len(self.calls) - 1

    def key_param(self, tool: ToolDef) -> str | None:
        return next((p for p, b in tool.bindings.items() if b.role == "key"), None)

    def names_new_row(self, tool: ToolDef, created: dict[str, Any] | None) -> bool:
        """Whether ``tool`` names a row by its id or by a value the create was given (never by a filter)."""
        key = self.key_param(tool)
        column = (tool.bindings[key].column if key else None) or "id"
        return column == "id" or column in (created or {})

    def on_new_row(self, tool: ToolDef, args: dict[str, Any], made: int, created: dict[str, Any] | None) -> dict[str, Any]:
        """``args`` aimed at the row call ``made`` created, under the parents the create named."""
        key = self.key_param(tool)
        parents = {p for p, b in tool.bindings.items() if b.role == "parent"}
        out = {p: (created[p] if created and p in created and p in parents else v) for p, v in args.items()}
        out[key or "id"] = self.made_key(tool, made)
        return out

    def made_key(self, tool: ToolDef, made: int) -> str:
        """The created row's value that ``tool`` names it by (its id, or a natural key such as a code)."""
        key = self.key_param(tool)
        return f"${made}.{(tool.bindings[key].column if key else None) or 'id'}"

    def entity_calls(self, entity: str) -> None:
        lister = self.first(sorted(self.tools(entity, "list", "search"), key=lambda t: len(t.parameters.get("required", []))))
        getter = self.first([t for t in self.tools(entity, "get") if self.key_param(t) and not t.behaviour.via])
        creator = self.first(self.tools(entity, "create", "send"))
        updater = self.first(self.tools(entity, "update"))
        actor = self.first(self.tools(entity, "transition", "custom", "link", "unlink")
                      or [t for t in self.runtime.spec.tools if t.behaviour.entity == entity and t.effect == "write"
                          and self.kind(t) == "simulated"])
        deleter = self.first(self.tools(entity, "delete"))
        noun = entity.replace("_", " ")
        args = self.example(lister)
        if lister is not None and args is not None:
            self.add(lister, args, f"list the {noun}s")
        args = self.example(getter)
        if getter is not None and args is not None:
            self.add(getter, args, f"get one {noun} seen in the list")
        made: int | None = None
        created_args = self.example(creator)
        if creator is not None and created_args is not None:
            made = self.add(creator, created_args, f"create a {noun}")
            if getter is not None:
                self.read_back(getter, made, created_args, f"read the new {noun} back")
        pairs: list[tuple[ToolDef | None, str]] = [(updater, "update"), (actor, "act on")]
        for tool, what in pairs:
            args = self.example(tool)
            if tool is None or args is None:
                continue
            key = self.key_param(tool)
            if made is not None and key and tool is updater and self.names_new_row(tool, created_args):
                args = self.on_new_row(tool, args, made, created_args)
            self.add(tool, args, f"{what} the {noun}" + (" just created" if made is not None and tool is updater else ""))
            if getter is not None and key:
                self.read_back(getter, None, args, f"read the {noun} after the {what}", key_value=args.get(key))
        args = self.example(deleter)
        if deleter is not None and args is not None:
            key = self.key_param(deleter)
            if made is not None and key and self.names_new_row(deleter, created_args):
                args = self.on_new_row(deleter, args, made, created_args)
            self.add(deleter, args, f"delete the {noun}")
            if getter is not None and key:
                self.read_back(getter, None, args, f"read the deleted {noun}", key_value=args.get(key))

    def read_back(self, getter: ToolDef, made: int | None, source: dict[str, Any], what: str,
                  key_value: Any = None) -> None:
        base = self.example(getter)
        key = self.key_param(getter)
        if base is None or key is None:
            return
        for param in base:  # parents as the earlier call named them
            if param in source and param != key:
                base[param] = source[param]
        base[key] = self.made_key(getter, made) if made is not None else key_value
        self.add(getter, base, what)

    def bad_input(self, entity: str) -> None:
        tools = self.tools(entity, "create", "send", "update")
        for tool in tools:
            args = self.example(tool)
            required = tool.parameters.get("required", [])
            typed = [p for p in required if tool.parameters["properties"].get(p, {}).get("type") in ("string", "integer")
                     and tool.bindings.get(p) is not None and tool.bindings[p].role == "field"]
            if args is not None and typed:
                param = typed[0]
                bad = {**args, param: wrong_type(tool.parameters["properties"][param])}
                self.add(tool, bad, f"bad input: {param} of the wrong type")
                return
            if args is not None and required:
                self.add(tool, {k: v for k, v in args.items() if k != required[0]},
                         f"bad input: leave out the required {required[0]}")
                return


def core_entities(runtime: ServiceRuntime, count: int = 2) -> list[str]:
    """The resources a user of the product works on: most tools, with a list or a create."""
    score: dict[str, int] = {}
    for tool in runtime.spec.tools:
        if tool.behaviour.entity:
            score[tool.behaviour.entity] = score.get(tool.behaviour.entity, 0) + 1
    kinds = {e: {(t.behaviour.planned or t.behaviour.kind) for t in runtime.spec.tools if t.behaviour.entity == e}
             for e in score}
    usable = [e for e in score if kinds[e] & {"get", "list", "search"}]
    return sorted(usable, key=lambda e: (not kinds[e] & {"create", "send"}, -score[e], e))[:count]


def draft_calls(name: str, world_seed: int = 0, wanted: int = 20) -> list[Call]:
    """The calls a user of service ``name`` makes on its two core resources, one bad input, then the reads and
    actions of its other resources until there are about ``wanted``."""
    service = get_service(name)
    runtime: ServiceRuntime = service.runtime  # type: ignore[attr-defined]
    with Episode([service], world_seed) as episode:
        rows = rows_by_entity(runtime, {t: dict(r) for t, r in episode.dump()[name].items()})
        planner = _Planner(runtime, rows, episode)
        entities = core_entities(runtime)
        for entity in entities:
            planner.entity_calls(entity)
        if entities:
            planner.bad_input(entities[0])
        used = {c.tool for c in planner.calls}
        for tool in runtime.spec.tools:  # the rest of the product, in its documented order
            if len(planner.calls) >= wanted:
                break
            if tool.name in used or (planner.kind(tool) in ("delete",)):
                continue
            args = planner.example(tool)
            if args is not None:
                planner.add(tool, args, f"{tool.description.split('.')[0][:80]}")
                used.add(tool.name)
    return planner.calls


# -- running the calls ---------------------------------------------------------------------------------------


def _resolve(value: Any, answers: list[Any]) -> Any:
    if isinstance(value, str) and value.startswith("$") and "." in value and value[1:].split(".", 1)[0].isdigit():
        index, path = value[1:].split(".", 1)
        data = answers[int(index)] if int(index) < len(answers) else None
        for step in path.split("."):
            data = data.get(step) if isinstance(data, dict) else None
        return data
    if isinstance(value, dict):
        return {k: _resolve(v, answers) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, answers) for v in value]
    return value


def replay(name: str, calls: list[Call], world_seed: int = 0) -> list[str]:
    """Each call run in order on a fresh episode of ``name``: the response as text, cut to ``EXCERPT``."""
    out: list[str] = []
    answers: list[Any] = []
    with Episode([get_service(name)], world_seed) as episode:
        for call in calls:
            result = episode.call(name, call.tool, _resolve(call.arguments, answers))
            answers.append(result.data if result.success else None)
            text = (json.dumps(result.data, sort_keys=True, default=str) if result.success
                    else f"ERROR {result.error_code}: {result.error_message}")
            out.append(text[:EXCERPT])
    return out


# -- the ratings file ------------------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    for service in data["services"]:
        service["calls"] = [Call(**c) for c in service["calls"]]
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    out = {**data, "services": [{**s, "calls": [c.as_json() for c in s["calls"]]} for s in data["services"]]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


def shares(calls: list[Call]) -> dict[str, float]:
    rated = [c for c in calls if c.rating in RATINGS]
    return {r: (sum(c.rating == r for c in rated) / len(rated) if rated else 0.0) for r in RATINGS}
