"""The records of a catalog as the stages see them: kinds of record, how each relates to people, and the tools on each.

A stage never names a tool. It asks for "a record of this person of kind *ticket*", "the tool that does
*refund* on this charge", "a read that returns this record", and this index answers from what every
service declares: entity nouns, field roles ("requester", "customer", "self"), links to other services,
mentions, state machines, each tool's intent and the entity ids it takes. A generated service that
declares the same things fills the same stages.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
import re
from functools import cached_property, lru_cache
from typing import Literal

from mcp_services.kernel.entity import EntityRuntime
from mcp_services.kernel.schema import FieldDef

from composer.catalog import Catalog, ToolInfo

PersonValue = Literal["email", "name", "phone", "company"]

#: Semantic types that say who a record is about, and what of the person they hold.
PERSON_TYPES: dict[str, PersonValue] = {
    "email_address": "email",
    "person_name": "name",
    "phone_number": "phone",
    "company_name": "company",
}

#: Intents of tools that write a message people read (their text must carry the facts the task demands).
MESSAGE_INTENTS = frozenset({"notify", "reply", "post", "note", "forward"})


@dataclass(frozen=True, slots=True)
class PersonPath:
    """A path from a record to a value that names a person or company: ``requester_id.email`` (role requester)."""

    path: str
    role: str
    value: PersonValue


@dataclass(frozen=True)
class Kind:
    """One kind of record of one service (``helpdesk.ticket``), as the stages use it."""

    service: str
    entity: str
    runtime: EntityRuntime
    people: tuple[PersonPath, ...]
    writers: tuple[ToolInfo, ...] = field(repr=False)
    readers: tuple[ToolInfo, ...] = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.service}.{self.entity}"

    @property
    def noun(self) -> str:
        return self.runtime.noun

    @property
    def label(self) -> str | None:
        return self.runtime.definition.label

    @property
    def state_field(self) -> str | None:
        state = self.runtime.definition.state
        return state.field if state is not None else None

    def fields(self) -> list[FieldDef]:
        return list(self.runtime.definition.fields)

    def mentions(self) -> dict[str, str]:
        """Fields whose values people pass on in messages, with how they name them ("the refund id")."""
        definition = self.runtime.definition
        found = {"id": definition.key.mention} if definition.key.mention else {}
        found.update({f.name: f.mention for f in definition.fields if f.mention})
        return {name: str(noun) for name, noun in found.items()}

    def links(self) -> dict[str, str]:
        """Fields whose value equals a field of another service's record: field -> ``service.entity.field``."""
        return {f.name: str(f.link) for f in self.runtime.definition.fields if f.link and f.link.count(".") == 2}

    def person_paths(self, *, role: str | None = None, value: PersonValue | None = None) -> list[PersonPath]:
        return [p for p in self.people if (role is None or p.role == role) and (value is None or p.value == value)]

    @property
    def is_person(self) -> bool:
        """Whether a record of this kind *is* a person or company (a contact, a customer, a candidate)."""
        return any(p.role == "self" for p in self.people)

    def acting(self, intent: str | None = None) -> list[ToolInfo]:
        """Write tools that act on one record of this kind (they take its id), optionally of one intent."""
        return [t for t in self.writers if intent is None or t.intent == intent]


def _person_paths(runtime: EntityRuntime, depth: int = 0) -> list[PersonPath]:
    found: list[PersonPath] = []
    for f in runtime.definition.fields:
        if f.role is None:
            continue
        value = PERSON_TYPES.get(f.semantic or "")
        if value is not None and f.type in ("string", "array"):
            found.append(PersonPath(f.name, f.role, value))
        elif f.ref is not None and depth == 0 and f.ref in runtime.siblings:
            target = runtime.siblings[f.ref]
            for inner in _person_paths(target, depth + 1):
                if inner.role == "self":  # the record points at a person (its requester), whose own email names them
                    found.append(PersonPath(f"{f.name}.{inner.path}", f.role, inner.value))
    return found


#: Intents of tools that make a record: a creator names the new record's label, it does not act on a record by it.
_CREATING = frozenset({"create", "schedule", "draft"})


@dataclass(frozen=True, slots=True)
class Naming:
    """How a tool names the one record it acts on: the parameter, the record's field it takes (its id, or a
    natural key people use, such as a chat channel's name), and the type parameter of a polymorphic pair."""

    param: str
    field: str = "id"
    type_param: str | None = None


def naming(tool: ToolInfo, runtime: EntityRuntime) -> Naming | None:
    """How ``tool`` names one record of the entity ``runtime``, or None when it takes none.

    A typed id (``charge_id: id:payments.charge``); a polymorphic pair (``entity_type`` whose enum holds the
    entity's name, beside an untyped ``entity_id``: a CRM note on a contact, a company or a deal); or, for a
    tool of the entity's own service that does not make one, a parameter of the label's semantic type
    (``archive_channel(channel: channel_name)`` takes the channel's name).
    """
    service, entity = runtime.service, runtime.name
    semtype = f"id:{service}.{entity}"
    for p in tool.params:
        if p.required and p.semtype == semtype and not p.is_list:
            return Naming(p.name)
    if tool.service != service:
        return None
    for p in tool.params:
        if p.required and not p.semtype and p.json_type == "string" and p.name.endswith("_id"):
            partner = tool.param(p.name[: -len("_id")] + "_type")
            if partner is not None and entity in partner.enum:
                return Naming(p.name, type_param=partner.name)
    definition = runtime.definition
    label = next((f for f in definition.fields if f.name == definition.label), None)
    if label is None or label.semantic in (None, "text", "subject") or tool.entity != f"{service}.{entity}" or tool.intent in _CREATING:
        return None
    for p in tool.params:
        if p.required and p.semtype == label.semantic and not p.is_list:
            return Naming(p.name, field=label.name)
    return None


class Kinds:
    """Every kind of record of a catalog, with its people paths, the tools that act on it and the reads that return it."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._kinds: dict[str, Kind] = {}
        for name, service in catalog.services.items():
            # A stage never writes through a simulated tool, and reads through one only where the world model
            # answers from the episode's rows.
            tools = [t for t in catalog.tools_of(name) if not t.simulated or (not t.is_write and t.state_backed)]
            for entity, runtime in service.entities.items():
                writers = tuple(t for t in tools if t.is_write and naming(t, runtime) is not None)
                readers = tuple(t for t in tools if not t.is_write and t.entity == f"{name}.{entity}")
                self._kinds[f"{name}.{entity}"] = Kind(name, entity, runtime, tuple(_person_paths(runtime)), writers, readers)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._kinds.values())

    def get(self, service: str, entity: str) -> Kind | None:
        return self._kinds.get(f"{service}.{entity}")

    def of(self, service: str, entity: str) -> Kind:
        kind = self.get(service, entity)
        if kind is None:
            raise KeyError(f"no kind {service}.{entity}")
        return kind

    def named(self, noun: str, services: Iterable[str] | None = None) -> list[Kind]:
        """Kinds people call ``noun`` ("ticket", "contact") in any of ``services`` (default: every service)."""
        wanted = set(services) if services is not None else None
        return [k for k in self if (wanted is None or k.service in wanted) and noun in (k.noun, k.entity)]

    def creators(self, service: str, entity: str) -> list[ToolInfo]:
        """Write tools that make a new record of this kind (they return it and take no id of it)."""
        return [
            t for t in self.catalog.tools_of(service)
            if t.is_write and not t.simulated and t.entity == f"{service}.{entity}" and self.naming(t, service, entity) is None
        ]

    def naming(self, tool: ToolInfo, service: str, entity: str) -> Naming | None:
        """How ``tool`` names one record of ``service.entity`` (see ``naming``)."""
        return naming(tool, self.catalog.services[service].entities[entity])

    @cached_property
    def incidental(self) -> dict[str, dict[str, list[str]]]:
        """Per service and table, the columns working with a record changes (read flags, labels): never collateral."""
        out: dict[str, dict[str, list[str]]] = {}
        for kind in self:
            columns = sorted(f.name for f in kind.runtime.definition.fields if f.incidental and f.stored)
            if columns:
                out.setdefault(kind.service, {})[kind.runtime.table.name] = columns
        return out

    @cached_property
    def recipients(self) -> dict[str, dict[str, list[str]]]:
        """Per service and table, the columns that name a message's recipients (an email's to, cc and bcc; a text's to)."""
        out: dict[str, dict[str, list[str]]] = {}
        for kind in self:
            if not any(tool.intent in MESSAGE_INTENTS for tool in kind.writers):
                continue  # a campaign's recipient list or an order's ship-to is a record, not a message
            columns = sorted(f.name for f in kind.runtime.definition.fields if f.role == "recipient" and f.stored)
            if columns:
                out.setdefault(kind.service, {})[kind.runtime.table.name] = columns
        return out

    @cached_property
    def by_tool(self) -> dict[str, Kind]:
        """The kind each write tool acts on (its first required id of its own service)."""
        out: dict[str, Kind] = {}
        for kind in self:
            for tool in kind.writers:
                out.setdefault(tool.key, kind)
        return out


#: How people name a vendor whose API host names it otherwise.
_VENDORS = {"googleapis": "Google", "hubapi": "HubSpot"}
#: Words of an API's title that say nothing about the product (its protocol, format, version, documentation).
_BOILERPLATE = re.compile(
    r"\b(?:the|restful|rest|json|web|api|apis|endpoints|documentation|specification|version\s*\d[\w.]*|v\d[\w.]*)\b|\(beta\)|\s-(?=\s|$)",
    re.I,
)
#: A title that is only a generic word ("Accounting", "Data") names no product: the vendor goes in front of it.
_GENERIC_TITLES = frozenset({"accounting", "data", "email activity", "airports", "kyc"})


def system_name(catalog: Catalog, service: str) -> str:
    """How people name a service: its title without API boilerplate, with the vendor where the title lacks it
    ("CRM API" of ``apideck_crm`` -> "Apideck CRM"; "Braze Endpoints" -> "Braze"; "The SureVoIP RESTful API" ->
    "SureVoIP"; "Twilio - Chat" -> "Twilio Chat"; "Googleapis Gmail" -> "Google Gmail")."""
    raw = catalog.services[service].title or service
    if re.fullmatch(r"[a-z0-9_]+", raw):  # a title that is only an identifier ("google_admin"): said as words
        raw = raw.replace("_", " ").title()
    title = re.sub(r"\s+(Platform\s+)?(REST\s+)?(API|APIs|Endpoints|Service)(\s+v?\d[\w.]*)?$", "", raw.strip(), flags=re.I)
    title = re.sub(r"\s+", " ", _BOILERPLATE.sub(" ", title.replace("&amp;", "&"))).replace("( )", "")
    title = re.sub(r"\s+([,:])", r"\1", title).strip(" -:,./–&")
    title = re.sub(r"\s+(?:for|of|and|&)$", "", title)
    vendor = service.split("_", 1)[0]
    named = _VENDORS.get(vendor, vendor.capitalize())
    if title.lower().startswith(f"{vendor} ") and vendor in _VENDORS:
        title = f"{named}{title[len(vendor):]}"
    generic = title.lower() in _GENERIC_TITLES or not title
    if generic or (vendor.lower() not in title.lower().replace(" ", "") and named.lower() not in title.lower() and "_" in service):
        title = f"{named} {title}".strip()
    return re.sub(rf"^{re.escape(named)} {re.escape(named)}\b", named, title) or service  # "Google Google Docs"


@lru_cache(maxsize=8)
def kinds_of(catalog: Catalog) -> Kinds:
    """The index of a catalog, built once per catalog object."""
    return Kinds(catalog)


__all__ = ["MESSAGE_INTENTS", "PERSON_TYPES", "Kind", "Kinds", "Naming", "PersonPath", "kinds_of", "naming", "system_name"]
