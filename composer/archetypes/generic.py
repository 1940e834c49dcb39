"""Workflows any service can take part in, found by the intents and semantic types its tools declare.

These archetypes name no service but the CRM: the other side is whichever mounted service (hand-written
or generated) has a tool with the right intent, so composition scales with every service the catalog
holds. The wording comes from the chosen tool's declared phrases and its entity's noun.
"""

from __future__ import annotations

from typing import Any

from composer.archetypes.common import chat_post, colleague, org_of
from composer.catalog import Catalog, ToolInfo
from composer.plan import ListOf, Ref
from composer.scenario import Scenario, Skip, Step, archetype

_NAME_PARAMS = {"name": "name", "full_name": "name", "first_name": "first_name", "last_name": "last_name"}


def _noun(tool: ToolInfo) -> str:
    entity = (tool.entity or "").split(".", 1)[-1]
    return entity.replace("_", " ") if entity else "record"


def _fill(s: Scenario, tool: ToolInfo, found: Step) -> tuple[dict[str, Any], list[str]] | None:
    """Arguments for a create tool: the contact's details where a parameter takes them, and stated values
    (an amount, a quantity) for the other required ones. Returns them with what the request must state."""
    by_type = {"email_address": "email", "person_name": "name", "phone_number": "phone", "company_name": "company_name"}
    args: dict[str, Any] = {}
    stated: list[str] = []
    for param in tool.params:
        source = by_type.get(param.semtype or "") or (_NAME_PARAMS.get(param.name) if param.semtype is None else None)
        if source is not None and found.value(source) is not None:
            value: Any = found.ref(source)
            args[param.name] = ListOf((value,)) if param.is_list else value
        elif param.required and param.semtype == "money":
            amount = float(s.rng.choice((120, 250, 480, 990, 1500)))
            args[param.name] = amount
            stated.append(f"{amount:,.2f} {s.world.currency}")
        elif param.required and param.semtype == "quantity":
            args[param.name] = 1
        elif param.required and param.semtype == "currency":
            args[param.name] = s.world.currency
        elif param.required:
            return None
    if not any(p.semtype == "email_address" for p in tool.params if p.name in args):
        return None
    return args, stated


class _Preview:
    """A CRM contact's row posing as the step that will read it (to try the arguments before the plan)."""

    index = -1

    def __init__(self, row: Any) -> None:
        self.row = row

    def value(self, name: str) -> Any:
        return self.row.get(name)

    def ref(self, name: str) -> Ref:
        return Ref(-1, name)


def _concrete(args: dict[str, Any], row: Any) -> dict[str, Any]:
    def value(v: Any) -> Any:
        if isinstance(v, Ref):
            return row.get(v.field)
        if isinstance(v, ListOf):
            return [value(i) for i in v.items]
        return v

    return {k: value(v) for k, v in args.items()}


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _targets(catalog: Catalog) -> list[ToolInfo]:
    """Create tools of services beyond the hand-written library that take an email address."""
    from mcp_services.registry import LIBRARY

    return [
        t for t in catalog.tools.values()
        if t.intent == "create" and t.service not in LIBRARY and t.key_field and any(p.semtype == "email_address" for p in t.params)
    ]


@archetype(
    "contact-into-service",
    family="operations",
    title="A colleague asks to set a CRM contact up in another system and note the new record on the contact",
    services=("crm", "chat"),
    fits=lambda catalog: bool(_targets(catalog)),
)
def contact_into_service(s: Scenario) -> None:
    tools = _targets(s.catalog)
    contacts = [c for c in s.records("crm", "contact", where={"archived": False}) if c["company_id"]]
    pairs = [(t, c) for t in sorted(tools, key=lambda t: t.key) for c in contacts]
    s.rng.shuffle(pairs)
    for tool, contact in pairs[:12]:  # a contact the other system does not know yet
        s.rng.seed(f"{contact.key}:{tool.key}")
        filled = _fill(s, tool, _Preview(contact.row))  # type: ignore[arg-type]  # a Step in all but name
        if filled is not None and s.would_succeed(tool.service, tool.name, _concrete(filled[0], contact.row)):
            break
    else:
        raise Skip("no other system takes a new record for a CRM contact")
    person = s.person(contact["email"])
    service = s.catalog.services[tool.service]
    title = service.title
    asker = colleague(s, s.rng.choice(("sales lead", "account executive", "support lead")))
    noun = _noun(tool)
    a_noun = f"{_article(noun)} {noun}"
    _post, when = chat_post(
        s, asker, "general",
        f"Could someone create {a_noun} in {title} for {person.name} from {org_of(s, person).name}? Their details are in the CRM.",
    )
    found = s.call("crm", "find_contact_by_email", {"email": person.email}, say=f"look up {person.first_name}'s details in the CRM")
    s.rng.seed(f"{contact.key}:{tool.key}")  # the same amounts as in the preview
    filled = _fill(s, tool, found)
    if filled is None:
        raise Skip(f"{tool.key} needs values a CRM contact does not have")
    args, stated = filled
    extra = f" for {' and '.join(stated)}" if stated else ""
    created = s.call(tool.service, tool.name, args, say=f"create {a_noun} for {person.first_name} in {title}{extra}")
    key = tool.key_field or "id"
    if created.value(key) is None:
        raise Skip(f"{tool.key} returns no id")
    s.call(
        "crm", "add_note",
        {"entity_type": "contact", "entity_id": found.ref("id"), "body": s.text(f"Created {noun} ", Ref(created.index, key), f" in {title}.")},
        say=f"note the new {noun}'s id on their CRM contact", mentions=[(Ref(created.index, key), f"the new {noun}'s id")],
    )
    s.brief.intro = f"{asker.name} asked in #general {when} for {a_noun} in {title} for {person.name}"
    s.brief.goal = (
        f"Create {a_noun} for {person.first_name} in {title}{extra} from their CRM details and note the new {noun}'s id "
        "on their CRM contact"
    )
    s.brief.anchors += [person.name, title, *stated]
