"""The planner: a raw service (as an importer read it) -> our ``ServiceSpec``, or reasons why not.

1. service checks (a name, tools, not huge);
2. per tool: a valid, unique MCP name in the kernel's form, a normalised input schema (or a reason);
3. per tool: its intent (``intents.analyse``);
4. entities and tool bindings (``assemble.Assembler``), validated as a spec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from generator.importers.raw import RawService
from generator.naming import collision_note, product_title, service_name, singular, tool_name, words
from generator.planner.assemble import Assembler, Planned
from generator.planner.intents import PreparedTool, analyse, keyed_segments
from generator.schemas import SchemaRejected, clean_text, hoist_wrappers, normalise_input_schema, service_plumbing
from generator.spec import ServiceSpec, SpecError, load_spec

MAX_TOOLS = 900
#: Over this many tools, only a product's core resources (those its API lets you create, read and list:
#: what its users automate) are planned as behaviours; its other tools are simulated.
CORE_ONLY_OVER = 200

__all__ = ["CORE_ONLY_OVER", "MAX_TOOLS", "PlanResult", "plan_service"]


@dataclass
class PlanResult:
    """A service's spec (None when the whole service is rejected) and its tools' fates."""

    name: str
    source_name: str
    spec: ServiceSpec | None
    rejected: dict[str, str] = field(default_factory=dict)  # tool (source) name -> reason
    notes: dict[str, list[str]] = field(default_factory=dict)  # tool name -> what was normalised
    problem: str | None = None


def plan_service(raw: RawService, name: str | None = None) -> PlanResult:
    """Plan ``raw`` as a service called ``name`` (default: derived from the source's name)."""
    name = name or service_name(raw.name)
    result = PlanResult(name=name, source_name=raw.name, spec=None)
    if raw.problem:
        result.problem = raw.problem
        return result
    if not raw.tools:
        result.problem = "the service has no tools"
        return result
    if len(raw.tools) > MAX_TOOLS:
        result.problem = f"huge spec: {len(raw.tools)} tools (the limit is {MAX_TOOLS})"
        return result
    prepared = _prepare(raw, name, result)
    provider = frozenset(words(name)) | frozenset(words(raw.name.split(":")[0].split(".")[0]))
    collections = keyed_segments([t.path for t in prepared if t.path])
    planned = [Planned(tool, analyse(tool, provider, collections)) for tool in prepared]
    if not planned:
        result.problem = "every tool was rejected"
        return result
    for _ in range(4):
        assembler = Assembler(name, planned, core_only=len(raw.tools) > CORE_ONLY_OVER)
        entities, tools = assembler.run()
        data = {
            "name": name,
            "title": product_title(raw.title, raw.name) if raw.title else name.replace("_", " ").title(),
            "description": " ".join(filter(None, [collision_note(raw.name),
                                                  clean_text(raw.description or raw.title or name, 600) or name])),
            "source": raw.source or raw.name,
            "license": raw.license,
            "upstream_license": raw.upstream_license,
            "format": raw.format,
            "version": raw.version,
            "categories": raw.categories,
            "entities": [e.model_dump() for e in entities],
            "tools": [t.model_dump(exclude_none=True) for t in tools],
        }
        try:
            result.spec = load_spec(data)
        except SpecError as exc:
            culprits = [p for p in planned if f"tool {p.tool.name!r}" in str(exc)]
            if not culprits:
                result.problem = f"the planner produced an invalid spec: {str(exc)[:300]}"
                return result
            for p in culprits:
                result.rejected[p.tool.source] = f"the planner could not build this tool: {_first_problem(str(exc), p.tool.name)}"
            planned = [p for p in planned if p not in culprits]
            if not planned:
                result.problem = "every tool was rejected"
                return result
            continue
        for tool_name_, notes in assembler.notes.items():
            result.notes.setdefault(tool_name_, []).extend(notes)
        return result
    result.problem = "the planner could not produce a valid spec"
    return result


def _prepare(raw: RawService, service: str, result: PlanResult) -> list[PreparedTool]:
    seen_raw: set[str] = set()
    seen: dict[str, str] = {}
    prefix = _shared_prefix([t.name for t in raw.tools], service)
    prepared: list[PreparedTool] = []
    for tool in raw.tools:
        if tool.problem:
            result.rejected[tool.name] = tool.problem
            continue
        if tool.name in seen_raw:
            result.rejected[f"{tool.name} (#{len(result.rejected) + 1})"] = f"duplicate tool name {tool.name!r}"
            continue
        seen_raw.add(tool.name)
        short = tool.name[len(prefix) :] if prefix and tool.name.startswith(prefix) else tool.name
        if tool.method and tool.path and not _meaningful(short):
            short = f"{tool.method.lower()}_{tool.path}"  # an opaque operation id ("54763641281d"): name it by its route
        name = tool_name(short)
        if name in seen:
            result.rejected[tool.name] = f"duplicate tool name {name!r} once normalised (also from {seen[name]!r})"
            continue
        try:
            normalised = normalise_input_schema(tool.input_schema)
        except SchemaRejected as exc:
            result.rejected[tool.name] = str(exc)
            continue
        seen[name] = tool.name
        schema = normalised.schema
        if (tool.method or "").upper() in ("GET", "HEAD", "DELETE"):  # a read has no request body
            schema = _without_empty_bodies(schema)
        if tool.path:  # Square's {"group": {...}} on /customers/groups: the body is the group
            nouns = {w for segment in tool.path.split("/") if segment and "{" not in segment for w in words(segment)}
            schema, hoisted = hoist_wrappers(schema, nouns | {singular(w) for w in nouns})
            normalised.notes.extend(hoisted)
        notes = list(normalised.notes)
        if name != tool.name:
            notes.insert(0, f"renamed from {tool.name!r}")
        if normalised.dropped:
            notes.append(f"dropped credential/transport parameters: {', '.join(normalised.dropped)}")
        if notes:
            result.notes[name] = notes
        prepared.append(
            PreparedTool(
                name=name,
                source=tool.name,
                description=tool.description,
                schema=schema,
                method=tool.method,
                path=tool.path,
                read_only=tool.read_only,
                output_schema=tool.output_schema,
                renamed=normalised.renamed,
                notes=notes,
            )
        )
    return _without_plumbing(prepared, result)


def _without_plumbing(prepared: list[PreparedTool], result: PlanResult) -> list[PreparedTool]:
    """Credentials and transport headers that most of a service's tools take (Mandrill's ``key``,
    Postmark's ``X_Postmark_Server_Token``, Apideck's ``x_apideck_consumer_id``) are removed like any other
    credential: they never filter rows and are never seeded as row data."""
    in_paths = frozenset(p for t in prepared if t.path for p in re.findall(r"\{([^}]+)\}", t.path))
    spelled = {new: old for t in prepared for new, old in t.renamed.items()}  # xero_tenant_id: xero-tenant-id
    plumbing = service_plumbing([t.properties for t in prepared], in_paths, spelled)
    if not plumbing:
        return prepared
    for tool in prepared:
        gone = [p for p in tool.properties if p in plumbing]
        if not gone:
            continue
        tool.schema = {**tool.schema, "properties": {k: v for k, v in tool.properties.items() if k not in plumbing}}
        required = [r for r in tool.required if r not in plumbing]
        if required:
            tool.schema["required"] = required
        else:
            tool.schema.pop("required", None)
        tool.notes.append(f"dropped credential/transport parameters every call carries: {', '.join(gone)}")
        result.notes[tool.name] = tool.notes
    return prepared


def _without_empty_bodies(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    empty = [n for n, sub in props.items() if n.lower() in ("body", "data", "payload") and isinstance(sub, dict)
             and sub.get("type") in (None, "object") and not sub.get("properties")]
    if not empty:
        return schema
    out = {**schema, "properties": {n: v for n, v in props.items() if n not in empty}}
    if "required" in out:
        out["required"] = [r for r in out["required"] if r not in empty]
        if not out["required"]:
            out.pop("required")
    return out


def _meaningful(name: str) -> bool:
    """Whether a name has a real word in it (operation ids are sometimes hex digests)."""
    return any(len(w) >= 3 and w.isalpha() and not all(c in "abcdef" for c in w) for w in words(name))


def _shared_prefix(names: list[str], service: str) -> str:
    """``github_`` when every tool is named ``github_...`` (Composio): the service name already says it."""
    if len(names) < 2:
        return ""
    first = names[0].split("_", 1)[0]
    if len(first) < 3 or not all(n.startswith(first + "_") for n in names):
        return ""
    return first + "_"


def _first_problem(message: str, tool: str) -> str:
    for part in message.split("; "):
        if f"tool {tool!r}" in part:
            return part.split(": ", 1)[-1][:200]
    return message[:200]
