"""Workflows any service can take part in, found by the intents and semantic types its tools declare.

These archetypes name no service but the hand-written ones they start from (the CRM, the mailbox,
chat): the other side is whichever mounted service beyond the library (a generated one) has a tool
with the right intent, so composition scales with every service the catalog holds. The wording comes
from the chosen tool's entity noun and the service's display name, never from the tool's name.

Generated services keep their records in tables the kernel's entity layer does not describe, so the
composer reads them straight from the service's store (``_rows``) and refers to them only through
what the data itself states: an id a customer quotes, a record the plan has just created.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcp_services.kernel.world import Person

from composer.archetypes.support import same_name_contact
from composer.catalog import HEADER_PARAM, Catalog, Param, ToolInfo
from composer.kinds import system_name
from composer.plan import ListOf, Lit, Ref
from composer.scenario import Rec, Said, Scenario, Skip, Step, archetype, detail
from composer.stages.acts import log
from composer.stages.channels import COLLEAGUE, CUSTOMER, Ask, Trigger, arrive, org_of, reply, reply_clause
from composer.stages.lookup import lookup, shows
from composer.stages.rules import colleague

_NAME_PARAMS = {"name": "name", "full_name": "name", "first_name": "first_name", "last_name": "last_name"}
#: Semantic types of a create tool's parameters that a CRM contact's details fill.
_BY_TYPE = {"email_address": "email", "person_name": "name", "phone_number": "phone", "company_name": "company_name"}
#: Entities a person can ask to be set up as, or ask about, themselves, and how they say it.
_SELF_NOUNS = {"customer": "customer account", "applicant": "application", "member": "membership", "subscriber": "subscription"}
#: Records a customer has with a company and asks about by the reference they were given (an order, a booking), and
#: how they say it; each names the customer by an email address.
_THEIR_NOUNS = {
    "order": "order", "appointment": "appointment", "booking": "booking", "reservation": "reservation",
    "subscription": "subscription", "transaction": "transaction", "payment link": "payment link", "charge": "payment",
    "payment": "payment", "refund": "refund", "shipment": "shipment", "return": "return", "quote": "quote",
    "application": "application",
}
#: Every record a customer asks about, and how they say it.
_ASKED_ABOUT = {**_THEIR_NOUNS, **_SELF_NOUNS}
#: Of those, the ones a customer asks us to open for them (an applicant applies on their own).
_SIGNUP_NOUNS = ("customer", "member", "subscriber")
#: Records of the people who work here, never made for a customer.
_STAFF_NOUNS = frozenset({"user", "employee", "agent", "admin", "staff", "team member"})
_STATE_FIELDS = ("status", "state", "stage")


def _ask_colleague(s: Scenario, asker: Person, subject: str, text: str) -> Trigger:
    """A colleague's request, by email or in chat."""
    return arrive(s, asker, Ask(subject=subject, text=text, team="general"), channels=COLLEAGUE)


def catalog_weight(catalog: Catalog) -> float:
    """A workflow any mounted service can fill weighs more the more services the catalog holds beyond the library."""
    beyond = sum(1 for name in catalog.services if name not in _library())
    return 1.0 + beyond / 40


def services_weight(tools: Callable[[Catalog], Sequence[Any]]) -> Callable[[Catalog], float]:
    """The weight of a workflow that fills from the tools ``tools`` finds: it grows with the services among them
    (making records in 54 services weighs more than answering from the one service whose reads fit)."""

    def weigh(catalog: Catalog) -> float:
        found = tools(catalog)
        return 1.0 + len({(t[0] if isinstance(t, tuple) else t).service for t in found}) / 2.5

    return weigh


def _library() -> frozenset[str]:
    from mcp_services.registry import LIBRARY

    return frozenset(LIBRARY)


def _noun(tool: ToolInfo) -> str:
    entity = (tool.entity or "").split(".", 1)[-1]
    return entity.replace("_", " ") if entity else "record"


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _schema_of(catalog: Catalog, tool: ToolInfo, param: Param) -> Mapping[str, Any]:
    schema = catalog.services[tool.service].tools[tool.name].input_schema
    defs = schema.get("$defs", {})
    prop: Mapping[str, Any] = schema.get("properties", {}).get(param.name, {})
    for _ in range(8):
        if "$ref" in prop:
            prop = defs.get(str(prop["$ref"]).rsplit("/", 1)[-1], {})
        elif "anyOf" in prop:
            real = [o for o in prop["anyOf"] if o.get("type") != "null"]
            prop = real[0] if len(real) == 1 else prop
            if len(real) != 1:
                break
        else:
            break
    return prop


def email_item_key(catalog: Catalog, tool: ToolInfo, param: Param) -> str | None:
    """For a list of objects that holds email addresses (``emails: [{"email": ..., "type": ...}]``), the key of
    the address; None for any other parameter. Only lists whose other keys are all optional qualify."""
    if not (param.is_list and param.item_type == "object"):
        return None
    items = _schema_of(catalog, tool, param).get("items", {})
    props: Mapping[str, Any] = items.get("properties", {}) if isinstance(items, Mapping) else {}
    required = set(items.get("required", ())) if isinstance(items, Mapping) else set()
    key = next((k for k, p in props.items() if p.get("format") == "email" or p.get("x-semantic-type") == "email_address"), None)
    if key is None and "email" in props:
        key = "email"
    return key if key is not None and required <= {key} else None


#: What a required HTTP header parameter gets: the request leaves it to the agent (any value is right).
_HEADER_VALUE = detail("default")


def _fill(s: Scenario, tool: ToolInfo, found: Step) -> tuple[dict[str, Any], list[str]] | None:
    """Arguments for a create tool: the contact's details where a parameter takes them (a name, or a first and
    last name; a company; an email address, flat or, for a person's record, inside a list of addresses), and
    stated values (an amount, a quantity) for the other required ones. Returns them with what the request must
    state, or None when the tool needs something a CRM contact does not have, or the call would not carry the
    person's address (and, for a record of the person themselves, their name)."""
    person = _person_entity(s.catalog, tool)
    args: dict[str, Any] = {}
    stated: list[str] = []
    has_email = has_name = False
    for param in tool.params:
        source = _BY_TYPE.get(param.semtype or "") or (_NAME_PARAMS.get(param.name) if param.semtype is None else None)
        if source == "phone" and "phone" not in param.name:
            source = None  # a fax number is not the contact's phone
        nested = email_item_key(s.catalog, tool, param) if person and param.name.startswith("email") else None
        if source is not None and found.value(source) is not None and not (param.is_list and param.item_type == "object"):
            value: Any = found.ref(source)
            args[param.name] = ListOf((value,)) if param.is_list else value
            if source not in ("email", "name", "first_name", "last_name"):  # the request names only their name and email
                args[param.name] = detail([found.value(source)] if param.is_list else found.value(source))
            has_email = has_email or source == "email"
            has_name = has_name or source in ("name", "first_name", "last_name")
        elif nested is not None and found.value("email") is not None:
            # An address inside an object: the plan cannot check an object built around a looked-up value
            # fairly (the agent may add a "type"), so the address is the agent's detail; the name is checked.
            args[param.name] = detail([{nested: found.value("email")}])
            has_email = True
        elif param.required and param.semtype == "money":
            amount = float(s.rng.choice((120, 250, 480, 990, 1500)))
            args[param.name] = amount
            stated.append(f"{amount:,.2f} {s.world.currency}")
        elif param.required and param.semtype == "quantity":
            args[param.name] = 1
        elif param.required and param.semtype == "currency":
            args[param.name] = s.world.currency
        elif param.required and _plain(param):
            args[param.name] = _HEADER_VALUE
        elif param.required:
            return None
    if not has_email or (person and not has_name):
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
        if isinstance(v, Lit):
            return v.value
        return v

    return {k: value(v) for k, v in args.items()}


def _person_entity(catalog: Catalog, tool: ToolInfo) -> bool:
    """Whether the tool's records are people (a generated spec says so; otherwise a person's name is its name)."""
    spec = getattr(catalog.services[tool.service], "spec", None)
    entity = (tool.entity or "").split(".", 1)[-1]
    definition = next((e for e in getattr(spec, "entities", ()) if e.name == entity), None)
    if definition is not None:
        return bool(definition.person)
    name = tool.param("name")
    return name is None or name.semtype == "person_name"


def _creates(catalog: Catalog) -> list[ToolInfo]:
    """Create tools of services beyond the hand-written library that make a record for a customer: the customer
    themselves (a person's record, from their name and address) or something of theirs that takes their email
    address (an order). Never a company's record, never a colleague's account."""
    library = _library()
    found = []
    for t in catalog.tools.values():
        if t.intent != "create" or t.service in library or not t.key_field or _noun(t) in _STAFF_NOUNS:
            continue
        flat = any(p.semtype == "email_address" for p in t.params)
        if _person_entity(catalog, t):
            nested = any(p.name.startswith("email") and email_item_key(catalog, t, p) for p in t.params)
            names = any(p.semtype == "person_name" or (p.semtype is None and p.name in _NAME_PARAMS) for p in t.params)
            fits = (flat or nested) and names
        else:
            fits = flat and (t.param("name") is None or t.param("name").semtype != "company_name")  # type: ignore[union-attr]
        if fits:
            found.append(t)
    return sorted(found, key=lambda t: t.key)


def _spread(s: Scenario, options: list[Any], reason: str) -> Any:
    """One of ``options`` (tuples whose first item is the tool), a random one among those whose tool the set has used
    least: the set spreads over every generated service instead of the few with the most rows."""
    if not options:
        raise Skip(reason)
    s.rng.shuffle(options)
    chosen = s.less_used_first(options, lambda option: (option[0],))[0]
    s.intended.append(chosen[0])
    return chosen


def _details(catalog: Catalog, tool: ToolInfo) -> str:
    return "their name and email" if _person_entity(catalog, tool) else "their email"


def _new_record_for(s: Scenario, tools: list[ToolInfo]) -> tuple[ToolInfo, Rec]:
    """A (create tool, CRM contact of a customer company) pair whose call would succeed now, tried in a random order."""
    contacts = [c for c in s.records("crm", "contact", where={"archived": False}) if c["company_id"]]
    pairs = [(t, c) for t in tools for c in contacts]
    s.rng.shuffle(pairs)
    for tool, contact in s.less_used_first(pairs, lambda pair: (pair[0],))[:16]:
        s.rng.seed(f"{contact.key}:{tool.key}")
        filled = _fill(s, tool, _Preview(contact.row))  # type: ignore[arg-type]  # a Step in all but name
        if filled is not None and s.would_succeed(tool.service, tool.name, _concrete(filled[0], contact.row)):
            s.intended.append(tool)
            return tool, contact
        s.tried_in_vain(tool)
    raise Skip("no other system takes a new record for a CRM contact")


def _create(s: Scenario, tool: ToolInfo, contact: Rec, title: str) -> tuple[Step, Step, list[str]]:
    """Look the person up in the CRM and make their record with the details found there: (the lookup, the
    new record, the values the request states)."""
    person = s.person(contact["email"])
    # A namesake at another company is in the CRM too: their details are not this person's.
    twin = same_name_contact(s, contact, person)
    found = lookup(s, contact, {"email": person.email, "query": person.name}, say=f"look up {person.first_name}'s details in the CRM",
                   name=f"{person.first_name}'s CRM contact")
    if twin is not None and shows(s, found, twin):
        s.trap("same-name-contact", twin, f"{twin['name']} of {twin['company_name']}, who has the same name", step=found)
    noun = _noun(tool)
    say = f"create {_article(noun)} {noun} for {person.first_name} in {title}"
    s.rng.seed(f"{contact.key}:{tool.key}")  # the same amounts as in the preview
    filled = _fill(s, tool, found)
    if filled is None:
        raise Skip(f"{tool.key} needs values a CRM contact does not have")
    args, stated = filled
    extra = f" for {' and '.join(stated)}" if stated else ""
    created = s.call(tool.service, tool.name, args, say=f"{say}{extra} with {_details(s.catalog, tool)}")
    if created.value(tool.key_field or "id") is None:
        raise Skip(f"{tool.key} returns no id")
    return found, created, stated


@archetype(
    "contact-into-service",
    family="operations",
    title="A colleague asks to set a CRM contact up in another system and note the new record on the contact",
    services=("crm", "chat"),
    fits=lambda catalog: bool(_creates(catalog)),
    weigh=services_weight(_creates),
)
def contact_into_service(s: Scenario) -> None:
    tool, contact = _new_record_for(s, _creates(s.catalog))
    person, title = s.person(contact["email"]), system_name(s.catalog, tool.service)
    asker = colleague(s, s.rng.choice(("sales lead", "account executive", "support lead")))
    noun = _noun(tool)
    a_noun = f"{_article(noun)} {noun}"
    trigger = _ask_colleague(
        s, asker, f"{noun.capitalize()} for {person.name}",
        f"Could you create {a_noun} in {title} for {person.name} from {org_of(s, person).name}? Their details are in the CRM.",
    )
    details = _details(s.catalog, tool)
    found, created, stated = _create(s, tool, contact, title)
    extra = f" for {' and '.join(stated)}" if stated else ""
    key = tool.key_field or "id"
    new_id = (f"the new {noun}'s id", created.ref(key))
    log(s, found, [f"Created {noun} ", created.ref(key), f" in {title}."], say=f"note the new {noun}'s id on their CRM contact",
        facts=[Said(*new_id)])
    reply(s, trigger, [f"Done: {person.first_name} is set up in {title} as {noun} ", created.ref(key), "."],
          say=reply_clause(trigger, f"the new {noun}'s id"), facts=[Said(*new_id)], subject=f"{noun.capitalize()} for {person.name}")
    s.brief.intro = f"{trigger.intro} for {a_noun} in {title} for {person.name}"
    s.brief.goal = (
        f"Create {a_noun} for {person.first_name} in {title}{extra} from {details} in the CRM, note the new "
        f"{noun}'s id on their CRM contact and {reply_clause(trigger, 'the id')}"
    )
    s.brief.anchors += [person.name, title, *stated]


# -- records of generated services ------------------------------------------------------------------


def _rows(s: Scenario, service: str, entity: str) -> list[dict[str, Any]]:
    """A generated service's records of ``entity``, as stored (the composer's own read, never the agent's)."""
    spec = getattr(s.catalog.services[service], "spec", None)
    definition = next((e for e in getattr(spec, "entities", ()) if e.name == entity), None)
    if definition is None:
        raise Skip(f"{service} has no entity {entity}")
    cursor = s.runner.episode.stores[service]._raw.execute(f'SELECT * FROM "{definition.table}" ORDER BY id')  # noqa: SLF001
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def _is_key(tool: ToolInfo, param: Param) -> bool:
    return param.semtype == f"id:{tool.entity}"


def _plain(param: Param) -> bool:
    return param.json_type == "string" and not param.enum and bool(HEADER_PARAM.match(param.name))


def _gets(catalog: Catalog) -> list[ToolInfo]:
    """Get-by-id tools of generated services for a customer's record with a state: the customer's own (an email and
    a name) or something of theirs that names them by email (an order, an appointment)."""
    library = _library()
    return sorted(
        (
            t for t in catalog.tools.values()
            if t.intent == "get" and t.service not in library and t.entity and _noun(t) in _ASKED_ABOUT
            and any(_is_key(t, p) for p in t.required) and all(_is_key(t, p) or _plain(p) for p in t.required)
            and _email_field(t) is not None and _state_field(t) is not None and (not t.simulated or t.state_backed)
            and (_noun(t) not in _SELF_NOUNS or any(f.path == "name" for f in t.fields))
        ),
        key=lambda t: t.key,
    )


def _email_field(tool: ToolInfo) -> str | None:
    """The top-level field that names the record's person by email (``email``, ``buyer_email``)."""
    fields = [f.path for f in tool.fields if f.semtype == "email_address" and "." not in f.path]
    return "email" if "email" in fields else next(iter(fields), None)


def _state_field(tool: ToolInfo) -> str | None:
    for f in tool.fields:
        if f.path in _STATE_FIELDS and f.enum and "." not in f.path:
            return f.path
    return None


def _word(value: Any) -> bool:
    """A state a person says as it is stored ("archived"), not an identifier ("gdpr-erasure-request")."""
    return isinstance(value, str) and value.isalpha() and value.lower() != "unknown"


def _people_records(s: Scenario, tool: ToolInfo) -> list[tuple[dict[str, Any], Any]]:
    """Records of the tool's entity that belong to one of the world's customers: their own record (name and email
    agree, one per address), or one that names them by email (their order)."""
    customers = {p.email: p for p in s.world.people if p not in s.world.team}
    email = _email_field(tool) or "email"
    own = _noun(tool) in _SELF_NOUNS
    found = []
    for row in _rows(s, tool.service, tool.entity.split(".", 1)[1]):  # type: ignore[union-attr]
        person = customers.get(row.get(email) or "")
        if person is not None and (not own or row.get("name") == person.name):
            found.append((row, person))
    if not own:
        return found
    by_email = Counter(row[email] for row, _ in found)
    return [(row, person) for row, person in found if by_email[row[email]] == 1]


def _get_args(tool: ToolInfo, key: Any) -> dict[str, Any]:
    return {p.name: (key if _is_key(tool, p) else _HEADER_VALUE) for p in tool.required}


@archetype(
    "record-status-question",
    family="support",
    title="A customer emails asking where their record in another system stands: look it up by the reference they quote",
    services=("mailbox",),
    fits=lambda catalog: bool(_gets(catalog)),
    weigh=services_weight(_gets),
)
def record_status_question(s: Scenario) -> None:
    options = [(t, row, person) for t in _gets(s.catalog) for row, person in _people_records(s, t) if _word(row.get(_state_field(t) or ""))]
    tool, row, person = _spread(s, options, "no customer record with a plain state in another system")
    field = _state_field(tool) or "status"
    noun, title = _noun(tool), system_name(s.catalog, tool.service)
    thing = _ASKED_ABOUT[noun]
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice((f"Question about my {thing}", f"My {thing} {field}")),
        text=s.rng.choice((
            f"Could you tell me what {field} my {thing} with you shows at the moment? My reference is {row['id']}.",
            f"I'm not sure my {thing} is set up properly. Which {field} does it have on your side? The reference I was given is {row['id']}."
            if noun in _SELF_NOUNS else
            f"I haven't heard anything about my {thing} yet. Which {field} does it have on your side? The reference is {row['id']}.",
        )),
        short=f"What {field} does my {thing} show? Ref {row['id']}.",
        relay=f"they want to know which {field} their {thing} shows; their reference is {row['id']}.",
    ), channels=CUSTOMER)
    found = s.call(tool.service, tool.name, _get_args(tool, row["id"]), say=f"look up the {thing} {person.first_name} quotes in {title}")
    value = found.value(field)
    if value != row[field]:
        raise Skip(f"{tool.key} does not show the stored {field}")
    declared = tool.field_of(field)
    others = sorted({v for v in (declared.enum if declared else ()) if isinstance(v, str)} - {value})
    s.ask(f"which {field} {person.first_name}'s {thing} has in {title}", value,
          forbidden=[v for v in others if value.lower() not in v.lower() and v.lower() not in value.lower()])
    s.brief.intro = f"{trigger.intro} asking about their {thing}"
    s.brief.goal = f"Tell me which {field} {person.first_name}'s {thing} has in {title}"
    s.brief.anchors += [person.name, title]


def _updates(catalog: Catalog) -> list[tuple[ToolInfo, ToolInfo, str]]:
    """(update tool, get tool, state parameter) of generated services: a person-like record's state can be set."""
    gets = {t.entity: t for t in _gets(catalog) if _noun(t) in _SELF_NOUNS}  # a customer's own record, not their order
    found = []
    for t in catalog.tools.values():
        get = gets.get(t.entity)
        if t.intent != "update" or get is None or t.service != get.service:
            continue
        state = next((p for p in t.params if p.name in _STATE_FIELDS and p.enum and not p.is_list), None)
        fields = {f.path for f in get.fields}
        if state is None or not any(_is_key(t, p) for p in t.required):
            continue
        if all(_is_key(t, p) or _plain(p) or p is state or p.name in fields for p in t.required):
            found.append((t, get, state.name))
    return sorted(found, key=lambda x: x[0].key)


#: Why a customer's record changes state, as the customer writes it (their email is in the inbox) and as the colleague
#: who asks cites it; another state: the customer asks for it in those words.
_STATE_ASKS = {
    "archived": ("Please close my account with you: we no longer need it.", "they are closing their account with us"),
    "inactive": ("We would like to pause our contract with you for now.", "they are pausing their contract"),
    "active": ("We have renewed with you: could our account be switched back on?", "they have renewed with us"),
    "closed": ("Thanks, my request is dealt with: it can be closed.", "their request is dealt with"),
    "open": ("I need your help again with the same thing, I'm afraid.", "they need our help again"),
}


def _customer_asks(s: Scenario, person: Person, noun: str, title: str, value: str) -> str:
    """The customer's email that gives the reason for the change (planted in the inbox some hours before the ask), and
    how the asker cites it: a reason that lives in the data, never a stock sentence."""
    body, cited = _STATE_ASKS.get(value.lower(), (f"Could my {noun} with you be set to {value}, please?",
                                                  f"they want their {noun} set to {value}"))
    if not s.has("mailbox"):
        raise Skip("no inbox carries the customer's reason for the change")
    s.event("mailbox", "email_received", "message", from_email=person.email, from_name=person.name,
            subject=f"My {noun} in {title}", body=f"Hello,\n\n{body}\n\nThanks,\n{person.first_name}",
            hours_ago=round(s.rng.uniform(5.0, 40.0), 2))
    s.reasons.append("mailbox.message")
    return f"{person.first_name} emailed us that {cited}."


#: How often the record a colleague asks to change is in the asked state already (their premise is false).
SET_ALREADY = 0.3


@archetype(
    "chat-record-status-update",
    family="operations",
    title="A colleague asks in chat to change the state of a customer's record in another system",
    services=("chat",),
    fits=lambda catalog: bool(_updates(catalog)),
    weigh=services_weight(_updates),
)
def chat_record_status_update(s: Scenario) -> None:
    # Now and then (``SET_ALREADY``) the record is in that state already: nothing changes, and the colleague hears so.
    already = s.rng.random() < SET_ALREADY
    options = []
    for update, get, state in _updates(s.catalog):
        values = [v for v in (update.param(state).enum if update.param(state) else ()) if _word(v)]  # type: ignore[union-attr]
        for row, person in _people_records(s, get):
            for value in values:
                if (value == row.get(state)) == already and _word(row.get(state)):
                    options.append((update, get, state, row, person, value))
    update, get, state, row, person, value = _spread(s, options, "no customer record whose state could change")
    noun, title = _noun(get), system_name(s.catalog, get.service)
    asker = colleague(s, s.rng.choice(("support lead", "account executive")))
    reason = _customer_asks(s, person, noun, title, value)
    trigger = _ask_colleague(
        s, asker, f"{person.name}'s {noun} record", f"Could you set {person.name}'s {noun} record in {title} ({row['id']}) to {value}? {reason}",
    )
    found = s.call(get.service, get.name, _get_args(get, row["id"]), say=f"open {person.first_name}'s {noun} record in {title}")
    s.decide("premise", f"{person.first_name}'s {noun} record is not {value} yet", default=not already)  # its state says
    args: dict[str, Any] = {}
    for p in update.required:
        if _is_key(update, p):
            args[p.name] = found.ref(get.key_field or "id")
        elif _plain(p):
            args[p.name] = _HEADER_VALUE
        elif p.name != state:
            if found.value(p.name) is None:
                raise Skip(f"{update.key} needs {p.name}, which the {noun} does not have")
            args[p.name] = found.ref(p.name)  # a field the API wants back as it is
    args[state] = value
    if already:
        s.literal_writes.append(s.spec(update.service, update.name, args))  # setting it again is not what was needed
        reply(s, trigger, [f"{person.first_name}'s {noun} record was {value} already, so I've left it as it is."],
              say=reply_clause(trigger, "a word once it is done"),
              facts=[Said(f"its {state}", Lit(value), "text"), Said("that it was so already", Lit("already"), "premise")],
              subject=f"{person.name}'s {noun} record")
    else:
        s.call(update.service, update.name, args, say=f"set its {state} to {value}")
        reply(s, trigger, [f"Done: {person.first_name}'s {noun} record is {value} now."],
              say=reply_clause(trigger, "a word once it is done"), facts=[Said(f"the new {state}", Lit(value), "text")],
              subject=f"{person.name}'s {noun} record")
    s.brief.intro = f"{trigger.intro} for a change to {person.name}'s {noun} record in {title}"
    s.brief.goal = (f"Set {person.first_name}'s {noun} record in {title} to {value}, as {asker.first_name} asked "
                    f"({reason.rstrip('.')}), and {reply_clause(trigger, 'a word once it is done')}")
    s.brief.anchors += [person.name, title, value]


def _signups(catalog: Catalog) -> list[ToolInfo]:
    return [t for t in _creates(catalog) if _noun(t) in _SIGNUP_NOUNS]


@archetype(
    "signup-reply-with-number",
    family="support",
    title="A customer asks by email to be set up in another system: create the record from the CRM and reply with its number",
    services=("crm", "mailbox"),
    fits=lambda catalog: bool(_signups(catalog)),
    weigh=services_weight(_signups),
)
def signup_reply_with_number(s: Scenario) -> None:
    tool, contact = _new_record_for(s, _signups(s.catalog))
    person, title = s.person(contact["email"]), system_name(s.catalog, tool.service)
    org, noun = org_of(s, person), _noun(tool)
    thing = _SELF_NOUNS[noun]
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice((f"New {thing}", f"Setting up my {thing}")),
        text=s.rng.choice((
            f"Could you set up {_article(thing)} {thing} for me in {title}? Please use the details you already have for me.",
            f"We'd like to get started - can you open {_article(thing)} {thing} for me in {title} and send me the number?",
        )),
        short=f"Can you open {_article(thing)} {thing} for me in {title} and text me the number?",
        relay=f"they would like {_article(thing)} {thing} in {title}, set up with the details we have.",
    ), channels=CUSTOMER)
    _found, created, stated = _create(s, tool, contact, title)
    key = tool.key_field or "id"
    number = Said(f"the new {noun}'s number", created.ref(key))
    reply(s, trigger, [f"Hi {person.first_name},\n\nyour {thing} in {title} is set up. Its number is ", created.ref(key), "."],
          say=reply_clause(trigger, f"the new {noun}'s number"), facts=[number], subject=f"Your {thing}")
    extra = f" for {' and '.join(stated)}" if stated else ""
    s.brief.intro = f"{trigger.intro} asking for {_article(thing)} {thing} in {title}"
    s.brief.goal = (f"Set {person.first_name} up as {_article(noun)} {noun} in {title}{extra} with the name and email we have in the CRM, "
                    f"and {reply_clause(trigger, f'the new {noun} number')}")
    s.brief.anchors += [person.name, title, *stated]
