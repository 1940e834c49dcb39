"""Workflows that run on what the company has written down: rules in the wiki (``docs``), tables in
spreadsheets (``sheets``), the help center (``kb``) and what people submit through forms (``forms``).

The rules and tables come from one plan (``mcp_services.kernel.plans.policies``): the wiki states them,
the spreadsheets hold them, and these archetypes read the same figures to know what a careful colleague
does. A request points at where a rule lives ("our lead handling rules, in the Sales space of the wiki")
and never states it: the agent reads the page and the rows. Requests arrive on the channels the stages
offer (``composer.stages.channels``); a form's own submissions (a demo request, an event registration)
stay on their form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from faker.providers.person.en_US import Provider as _PersonNames

from composer.archetypes.common import money, org_of, recent_hours, short_date, when_phrase
from composer.archetypes.support import confirm_ticket, known_sender
from composer.plan import Composed, Expr, ListOf, Lit, Ref, resolve
from composer.runner import result_items
from composer.scenario import Rec, Said, Scenario, Skip, Step, archetype, detail
from composer.stages.acts import act
from composer.stages.channels import COLLEAGUE, CUSTOMER, Ask, Trigger, arrive, reply, reply_clause
from composer.stages.lookup import finds, lookup
from composer.stages.rules import colleague, near_first
from mcp_services.kernel.plans.policies import (
    DEMO_MINUTES,
    DEMO_TITLE,
    DISCOUNT,
    ESCALATION,
    EVENTS,
    KB_DRAFTS,
    Account,
    Policies,
    policy_plan,
    raised,
)
from mcp_services.kernel.plans.staff import EXPENSE_CATEGORIES, RECEIPT_REQUIRED_OVER, TIME_OFF_POLICIES
from mcp_services.kernel.world import Organisation, Person

# -- where things live ---------------------------------------------------------------------------


def _plan(s: Scenario) -> Policies:
    return policy_plan(s.world)


def _one(found: list[Rec], what: str) -> Rec:
    if len(found) != 1:
        raise Skip(f"expected one {what}, found {len(found)}")
    return found[0]


def _page(s: Scenario, title: str) -> Rec:
    return _one(s.records("docs", "page", where={"title": title, "status": "current"}), f"wiki page {title!r}")


def _read_page(s: Scenario, title: str, say: str) -> tuple[Rec, Step]:
    """Read a rule's page (by its title, or by searching the wiki), and record how the request points at it."""
    page = _page(s, title)
    step = lookup(s, page, {"title": title, "space_key": page["space_key"], "query": title}, say=say, stage="consult")
    s.refer(page, f"the wiki page {title!r}", relation="title", where={"title": title, "status": "current"})
    s.read_rule(title)
    return page, step


def _spreadsheet(s: Scenario, title: str) -> Rec:
    return _one(s.records("sheets", "spreadsheet", where={"title": title}), f"spreadsheet {title!r}")


def _sheet(s: Scenario, title: str, spreadsheet: Rec) -> Rec:
    return _one(
        s.records("sheets", "sheet", where={"title": title, "spreadsheet_id": spreadsheet.key}), f"sheet {title!r}"
    )


def _row(s: Scenario, sheet: Rec, key: str) -> Rec:
    return _one(
        s.records("sheets", "row", where={"sheet_id": sheet.key, "key": key}), f"row {key!r} of {sheet['title']}"
    )


def _open_spreadsheet(s: Scenario, title: str) -> Step:
    return lookup(s, _spreadsheet(s, title), {"query": title, "title": title}, say=f"open the {title} spreadsheet",
                  stage="consult")


def _lookup(s: Scenario, spreadsheet: str, tab: str, key: str, column: str, say: str, text: str) -> tuple[Rec, Step]:
    """Find a row by its first cell in one tab of a spreadsheet (opening the spreadsheet, searching its tabs, as people
    do)."""
    book = _spreadsheet(s, spreadsheet)
    row = _row(s, _sheet(s, tab, book), key)
    opened = _open_spreadsheet(s, spreadsheet)
    step = lookup(s, row, {"value": key, "spreadsheet_id": opened.ref("id"), "column": column}, say=say, stage="consult")
    s.refer(row, text, relation="key", where={"sheet_id": row["sheet_id"], "key": key})
    return row, step


def _account_row(s: Scenario, account: Account, say: str) -> tuple[Rec, Step]:
    return _lookup(
        s,
        "Account hierarchy",
        "Accounts",
        account.company,
        "Company",
        say,
        f"{account.company}'s row in the Account hierarchy spreadsheet",
    )


def _customer(s: Scenario, *, contact: bool = True) -> tuple[Person, Organisation, Account]:
    """A customer with an account in the hierarchy (and, if asked, a live CRM contact)."""
    plan = _plan(s)
    people = list(s.world.customers)
    if contact:
        live = {c["email"] for c in s.records("crm", "contact", where={"archived": False})}
        people = [p for p in people if p.email in live]
    person = s.pick(people, "no customer fits")
    return person, org_of(s, person), plan.account_of(person)


def _results(s: Scenario, step: Step) -> list[dict[str, Any]]:
    """What the read of ``step`` shows the agent (every item, not only the one the plan selects)."""
    spec = s.specs[step.index]
    tool = s.catalog.tool(spec.service, spec.tool)
    result = s.runner.episode.call(spec.service, spec.tool, {n: resolve(e, s.items) for n, e in spec.args})
    return result_items(tool, result.data) if result.success else []


def _shows(s: Scenario, step: Step, rec: Rec) -> bool:
    """Whether the read of ``step`` shows ``rec`` too (a trap the agent must tell apart there)."""
    spec = s.specs[step.index]
    return finds(s, s.catalog.tool(spec.service, spec.tool), dict(spec.args), rec)


_FIRST = tuple(sorted(_PersonNames.first_names))
_LAST = tuple(sorted(_PersonNames.last_names))
_TITLES = (
    "Head of Operations",
    "Finance Manager",
    "IT Director",
    "Customer Success Lead",
    "Procurement Manager",
    "Product Owner",
    "Office Manager",
    "Engineering Manager",
)



def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _newcomer(s: Scenario, org: Organisation) -> tuple[str, str, str]:
    """A person at ``org`` whom no service knows yet: first name, last name, work email."""
    known = {p.email for p in s.world.people} | {c["email"] for c in s.records("crm", "contact")}
    for _ in range(50):
        first, last = s.rng.choice(_FIRST), s.rng.choice(_LAST)
        email = f"{_slug(first)}.{_slug(last)}@{org.domain}"
        if email not in known:
            return first, last, email
    raise Skip("no fresh name")


def _weekday_ahead(s: Scenario, low: int, high: int) -> datetime:
    day = s.world.now_dt + timedelta(days=s.rng.randint(low, high))
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _form_response(s: Scenario, form: str, answers: dict[str, object]) -> tuple[Rec, str]:
    """Someone submits ``form`` a little while ago (the trigger of a workflow about that form); returns the response
    and when it came."""
    hours = recent_hours(s)
    response = s.event("forms", "response_submitted", "response", form_title=form, answers=answers, hours_ago=hours)
    s.trigger = response
    return response, when_phrase(s, hours)


def _find_response(
    s: Scenario, response: Rec, form: str, email: str, known: dict[str, Expr | str], text: str, say: str
) -> Step:
    """Find ``response`` (the latest that ``email`` sent through ``form``) from what the request says (``known``), and
    record ``text``, how the request points at it."""
    form_id = _one(s.records("forms", "form", where={"title": form}), f"form {form!r}").key
    s.refer(response, text, relation="respondent", where={"form_id": form_id, "respondent_email": email},
            latest="submitted_at")
    step = lookup(s, response, {**known, "form_id": form_id}, say=say, stage="trigger")
    s.names[step.index] = text
    return step


def _pass_on(
    s: Scenario, trigger: Trigger, to: Sequence[Expr], cc: Sequence[Expr], parts: Sequence[str | Ref], *, say: str,
    facts: Sequence[Said], subject: str,
) -> Step:
    """Hand a customer's message to colleagues: forward the email itself, or write to them about a text, a call, a
    ticket or a form."""
    copied = {"cc": ListOf(tuple(cc))} if cc else {}
    if trigger.channel == "email":
        return s.call("mailbox", "forward_message", {"message_id": trigger.step.ref("id"), "to": ListOf(tuple(to)), **copied,
                                                      "note": Composed(tuple(parts))}, say=say, facts=facts, stage="report")
    if not s.has("mailbox"):
        raise Skip("no mailbox to pass the request on")
    return s.call("mailbox", "send_email", {"to": ListOf(tuple(to)), **copied, "subject": detail(subject),
                                            "body": Composed(tuple(parts))}, say=say, facts=facts, stage="report")


# -- tickets and where they go -------------------------------------------------------------------

#: (queue category in the routing table, contact form topic, subject, what the customer writes)
_PROBLEMS: tuple[tuple[str, str, str, str], ...] = (
    (
        "Billing",
        "Billing",
        "Charged twice this month",
        "Our card was charged twice for this month's subscription. Could you look into it and refund one?",
    ),
    (
        "Billing",
        "Billing",
        "VAT on our invoice",
        "Our latest invoice adds VAT although we are tax exempt and sent you our certificate last year.",
    ),
    (
        "Login and access",
        "Technical problem",
        "Locked out after a password reset",
        "Since I reset my password this morning the login page just reloads and I cannot get in.",
    ),
    (
        "Login and access",
        "Technical problem",
        "Single sign-on stopped working",
        "Nobody on our team can sign in with single sign-on today; our identity provider shows an error.",
    ),
    (
        "Data and exports",
        "Technical problem",
        "CSV export comes out empty",
        "Every CSV export we download from the reports page has been empty since yesterday. We need it for month-end.",
    ),
    (
        "Data and exports",
        "Technical problem",
        "Dashboard totals look wrong",
        "The revenue dashboard shows a total for last month that is far off from our own records.",
    ),
    (
        "API and integrations",
        "Technical problem",
        "API keeps answering 429",
        "Our integration keeps getting HTTP 429 responses although we are well under the usage we paid for.",
    ),
    (
        "API and integrations",
        "Technical problem",
        "Webhooks stopped arriving",
        "Our webhook endpoint has not received any events since Monday; your delivery log shows timeouts.",
    ),
    (
        "Account and users",
        "Account and users",
        "Cannot add a new user",
        "Adding a colleague to our account fails with 'seat limit reached', but we should have seats left.",
    ),
    (
        "Account and users",
        "Account and users",
        "Admin rights for a colleague",
        "A colleague of mine needs admin rights on our account. I am the account owner.",
    ),
    (
        "Orders and shipping",
        "Orders and shipping",
        "Monitors arrived damaged",
        "Two of the monitors we ordered arrived with cracked screens. What should we do?",
    ),
    (
        "Orders and shipping",
        "Orders and shipping",
        "Our desk order is late",
        "The standing desks we ordered were due last week and the tracking has not moved since.",
    ),
    (
        "How-to questions",
        "Something else",
        "Changing the date range of a report",
        "Where do I pick a custom date range on the reports page? Nothing is broken, I just cannot find it.",
    ),
    (
        "How-to questions",
        "Something else",
        "Turning off the daily summary email",
        "How do I stop the daily summary emails for my own account? Nothing is wrong, I just get too many.",
    ),
)



def _priority(plan: Policies, account: Account, category: str) -> tuple[str, str]:
    """(the queue's default priority, the priority the escalation rules give this account)."""
    default = plan.queue(category).priority
    return default, raised(default) if account.tier == ESCALATION.raised_tier else default


def _route(
    s: Scenario, plan: Policies, account: Account, org: Organisation, category: str, what: str
) -> tuple[Rec, Step, str, str]:
    """Read the routing rules, the queue of ``category`` and the account's tier, as whoever routes a ticket does.

    Returns the rules page, the queue's lookup, the queue's default priority and the priority the rules give."""
    page, _ = _read_page(
        s, "Ticket escalation and routing rules", "read our ticket escalation and routing rules in the wiki"
    )
    _, queue = _lookup(
        s,
        "Routing",
        "Support queues",
        category,
        "Category",
        f"find the queue for this kind of {what} in the Routing spreadsheet",
        f"the {category} queue of the routing table",
    )
    _account_row(s, account, f"check {org.name}'s tier in the Account hierarchy spreadsheet")
    default, priority = _priority(plan, account, category)
    return page, queue, default, priority


def _routed(queue: Step, default: str, priority: str) -> dict[str, object]:
    """A ticket's assignee and priority as the queue's row gives them (raised for the escalated tier)."""
    return {
        "assignee_email": queue.ref("values.Assignee email"),
        "priority": priority if priority != default else queue.ref("values.Default priority"),
    }


def _follow_escalation(
    s: Scenario,
    page: Rec,
    routed: Step,
    ticket: Step,
    org: Organisation,
    account: Account,
    subject: str,
    default: str,
    priority: str,
) -> None:
    """The escalation rule decides the priority of ``routed`` (where it raises it); urgent tickets go to #support."""
    if priority != default:
        s.set_policy(
            page,
            f"{ESCALATION.raised_tier}-tier accounts go one priority level above their queue's default",
            routed,
            "priority",
            priority,
            default,
            f"The ticket is at {priority} priority: {org.name} is an {account.tier} account",
        )
    else:
        s.policy_documents.append(page)
    if priority == "urgent":
        if not s.has("chat"):
            raise Skip("an urgent ticket goes to #support, and no chat is mounted")
        s.call(
            "chat",
            "post_message",
            {"channel": "support", "text": s.text("Urgent ticket ", ticket.ref("id"), f" from {org.name}: {subject}")},
            say="post it in #support, as the rules ask for urgent tickets",
            facts=[Said("the ticket number", ticket.ref("id"))],
            mentions=[(ticket.ref("id"), "the ticket number")],
            stage="report",
            guided=False,  # the rules ask for it: a request that said so would tell the agent the ticket is urgent
        )


@archetype(
    "ticket-routing",
    family="support",
    title="A new ticket comes in: route it by the routing table and the escalation rules in the wiki",
    services=("helpdesk", "sheets", "docs"),
)
def ticket_routing(s: Scenario) -> None:
    plan = _plan(s)
    person, org, account = _customer(s, contact=False)
    category, topic, subject, text = s.pick(list(_PROBLEMS), "no problems")
    s.subject = person
    trigger = arrive(s, person, Ask(subject=subject, text=text, topic=topic), channels=("ticket",))
    found = trigger.step
    others = [
        t
        for t in s.records("helpdesk", "ticket")
        if t.key != trigger.rec.key
        and t["status"] in ("new", "open", "pending")
        and t["requester_id"] == trigger.rec["requester_id"]
    ]
    if others:
        other = max(others, key=lambda t: t["created_at"])
        if _shows(s, found, other):
            s.trap("older-ticket", other, f'their older ticket "{other["subject"]}"', step=found)
    page, queue, default, priority = _route(s, plan, account, org, category, "ticket")
    routed = act(s, "update", found, _routed(queue, default, priority),
                 say="assign it to the assignee of its queue in the routing table, at the priority the rules give it")
    _follow_escalation(s, page, routed, found, org, account, subject, default, priority)
    s.brief.intro = trigger.intro
    s.brief.goal = "Route this ticket the way our rules say: the right assignee and the right priority"
    s.brief.constraints.append('The rules are on the wiki page "Ticket escalation and routing rules" (Support space)')
    if s.traps:
        s.brief.constraints.append("Leave their other tickets as they are")
    s.brief.anchors += [person.name, org.name]


@archetype(
    "contact-form-to-ticket",
    family="support",
    title="Someone writes in through the contact form: open a ticket for them, routed by the routing table, and tell them its number",
    services=("forms", "helpdesk", "sheets", "docs", "mailbox"),
)
def contact_form_to_ticket(s: Scenario) -> None:
    plan = _plan(s)
    person, org, account = _customer(s, contact=False)
    category, topic, subject, text = s.pick(list(_PROBLEMS), "no problems")
    s.subject = person
    trigger = arrive(s, person, Ask(subject=subject, text=text, topic=topic), channels=("form",))
    page, queue, default, priority = _route(s, plan, account, org, category, "request")
    ticket = s.call(
        "helpdesk",
        "create_ticket",
        {
            "requester_email": trigger.step.ref("respondent_email"),
            "requester_name": detail(person.name),
            "subject": detail(subject),
            "description": detail(text),
            "channel": "web",
            **_routed(queue, default, priority),
        },
        say=f"open a helpdesk ticket for {person.first_name} with their message (channel web), assigned and "
        "prioritised as the routing rules say",
    )
    _follow_escalation(s, page, ticket, ticket, org, account, subject, default, priority)
    confirm_ticket(s, trigger, ticket, subject)
    s.brief.intro = trigger.intro
    s.brief.goal = (
        f"Turn {person.first_name}'s message into a helpdesk ticket (it came in on the web), with the assignee "
        f"and priority our routing rules give it, and {reply_clause(trigger, 'the ticket number')}"
    )
    s.brief.constraints.append('The rules are on the wiki page "Ticket escalation and routing rules" (Support space)')
    s.brief.anchors += [person.name, org.name]


# -- sales: demos, discounts, accounts -----------------------------------------------------------


@archetype(
    "demo-request-to-lead",
    family="sales",
    title="A demo request arrives through the website form: add the lead to the CRM with its owner and book the demo",
    services=("forms", "crm", "sheets", "docs", "calendar"),
)
def demo_request_to_lead(s: Scenario) -> None:
    plan = _plan(s)
    companies = {c["domain"]: c for c in s.records("crm", "company")}
    orgs = [o for o in s.world.organisations[1:] if o.domain in companies]
    org = s.pick(orgs, "no customer company in the CRM")
    account = plan.account(org.domain)
    company = s.record("crm", "company", companies[org.domain].key)
    first, last, email = _newcomer(s, org)
    name = f"{first} {last}"
    title = s.rng.choice(_TITLES)
    day = _weekday_ahead(s, 2, 7)
    slot = s.rng.choice(("09:00 UTC", "11:00 UTC", "14:00 UTC", "16:00 UTC"))
    start = day.replace(hour=int(slot[:2]), minute=0, second=0)
    interest = s.rng.choice(("Pro plan", "Enterprise plan", "Priority support", "Data migration", "API usage"))
    # A colleague of theirs asked a few days ago and is already in the CRM: a near-duplicate request.
    earlier = [
        p
        for p in s.world.customers
        if p.organisation_id == org.id
        and p.email in {c["email"] for c in s.records("crm", "contact", where={"company_id": company.key})}
    ]
    older = None
    if earlier and s.rng.random() < 0.6:
        colleague_ = s.pick(earlier, "no colleague")
        older = s.event(
            "forms",
            "response_submitted",
            "response",
            form_title="Request a demo",
            hours_ago=24.0 * s.rng.randint(2, 6),
            answers={
                "first_name": colleague_.first_name,
                "last_name": colleague_.last_name,
                "email": colleague_.email,
                "company": org.name,
                "interest": interest,
                "preferred_date": _weekday_ahead(s, 1, 3).date().isoformat(),
                "preferred_time": slot,
            },
        )
    response, when = _form_response(
        s,
        "Request a demo",
        {
            "first_name": first,
            "last_name": last,
            "email": email,
            "company": org.name,
            "job_title": title,
            "interest": interest,
            "preferred_date": start.date().isoformat(),
            "preferred_time": slot,
            "notes": s.rng.choice(
                (
                    "We are comparing two vendors this month.",
                    "Our team of 40 would use it daily.",
                    "Please include the reporting features.",
                )
            ),
        },
    )
    found = _find_response(
        s,
        response,
        "Request a demo",
        email,
        {"query": org.name},
        f"{first}'s demo request",
        f"find {first}'s demo request in the forms",
    )
    if older is not None and _shows(s, found, older):
        s.trap("colleague-request", older, "the earlier demo request from their colleague", step=found)
    page, _ = _read_page(s, "Lead handling rules", "read our lead handling rules in the wiki")
    _, row = _account_row(s, account, f"find {org.name}'s account manager in the Account hierarchy spreadsheet")
    at = lookup(s, company, {"query": org.name, "name": org.name, "domain": org.domain}, say=f"find {org.name} in the CRM")
    created = s.call(
        "crm",
        "create_contact",
        {
            "first_name": found.ref("answers.first_name"),
            "last_name": found.ref("answers.last_name"),
            "email": found.ref("answers.email"),
            "company_id": at.ref("id"),
            "job_title": detail(title),
            "lifecycle_stage": "lead",
        },
        say=f"add {first} to the CRM as a lead at {org.name}, with the details from the form",
    )
    # A new contact's owner is whoever created it (the CRM takes no owner on create): the rules make it the account
    # manager.
    act(s, "update", created, {"owner_email": row.ref("values.Account manager email")},
        say="make their company's account manager the contact's owner, as the rules say")
    demo_title = DEMO_TITLE.format(company=org.name)
    demo = s.call(
        "calendar",
        "create_event",
        {
            "title": demo_title,
            "start": _iso(start),
            "end": _iso(start + timedelta(minutes=DEMO_MINUTES)),
            "attendee_emails": ListOf((found.ref("answers.email"), row.ref("values.Account manager email"))),
            "add_video_link": True,
        },
        say=f"book the demo at the date and time {first} picked, with {first} and their company's account manager, "
        "set up as the rules describe",
    )
    s.set_policy(
        page,
        f"demos are {DEMO_MINUTES}-minute video calls titled '{DEMO_TITLE.format(company='<company>')}'",
        demo,
        "title",
        demo_title,
        f"Demo with {first} {last}",
        "The demo's title follows the lead handling rules",
    )
    s.brief.intro = f"{name} from {org.name} asked for a demo through the form on our website {when}"
    s.brief.goal = (
        f"Handle {first}'s demo request the way our lead handling rules say: {first} in the CRM as a lead "
        "at their company with the right owner, and the demo booked with that colleague when they asked for it"
    )
    s.brief.constraints.append('The rules are on the wiki page "Lead handling rules" (Sales space)')
    s.brief.anchors += [name, org.name]


def _discount_total(price: float, quantity: int, percent: int) -> float | None:
    """The discounted total, when rounding per unit and on the whole give the same cents (else None)."""
    whole = round(price * quantity * (100 - percent) / 100, 2)
    per_unit = round(round(price * (100 - percent) / 100, 2) * quantity, 2)
    return whole if abs(whole - per_unit) < 0.001 else None


@archetype(
    "discount-request",
    family="sales",
    title="A customer asks for a discount: check the price list and the discount policy; log it or pass it on for approval",
    services=("crm", "sheets", "docs", "mailbox"),
)
def discount_request(s: Scenario) -> None:
    plan = _plan(s)
    person, org, account = _customer(s)
    contact = _one(s.records("crm", "contact", where={"email": person.email}), "crm contact")
    entries = [
        p
        for p in plan.price_list
        if p.max_discount > 0 and p.category in ("subscriptions", "services", "usage", "hardware", "furniture")
    ]
    entry = s.pick(entries, "no discountable product")
    allowed = DISCOUNT.allowed(entry.max_discount, account.tier)
    # Near the limit on both sides: a point or a few above it needs approval, the limit itself does not.
    beyond = s.rng.random() < 0.5 and allowed < DISCOUNT.ceiling
    choices = (range(allowed + 1, min(DISCOUNT.ceiling, allowed + 5) + 1) if beyond else
               range(max(1, allowed - 5), allowed + 1))
    asked = near_first(s, list(choices), lambda a: a, allowed, "no discount to ask for")
    quantity = s.rng.choice((2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25))
    total = _discount_total(entry.list_price, quantity, asked)
    if total is None:
        raise Skip("the total rounds two ways")
    s.subject = person
    lead = colleague(s, DISCOUNT.approver_role)
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice((f"Discount on {entry.product}?", "Pricing question", f"Quote for {quantity} x {entry.product}")),
        text=f"We would like to order {quantity} x {entry.product}. Could you do {asked}% off the list price? If so, "
        "we can confirm this week.",
        short=f"Could we get {asked}% off the list price for {quantity} x {entry.product}? We'd confirm this week.",
        topic="Orders and shipping",
        relay=f"they'd like to order {quantity} x {entry.product} and ask for {asked}% off the list price; they can confirm this week.",
    ), relay_by=colleague(s, "support agent"))
    page, _ = _read_page(s, "Discount approval policy", "read our discount approval policy in the wiki")
    _lookup(
        s,
        "Price list",
        f"{plan.year} prices",
        entry.sku,
        "SKU",
        f"look up {entry.product} in this year's tab of the Price list spreadsheet",
        f"{entry.product} in this year's price list",
    )
    _account_row(s, account, f"check {org.name}'s tier in the Account hierarchy spreadsheet")
    found = lookup(s, contact, known_sender(trigger), say=f"find {person.first_name} in the CRM",
                   name=f"{person.first_name}'s CRM contact")
    rule = (
        f"sales may give up to the product's max discount ({DISCOUNT.enterprise_extra_points} points more for "
        f"Enterprise); above that the {DISCOUNT.approver_role} approves"
    )
    deal = {
        "name": detail(f"{entry.product} for {org.name}"),
        "company_id": found.ref("company_id"),
        "amount": total,
        "contact_id": found.ref("id"),
        "close_date": detail((s.world.now_dt + timedelta(days=14)).date().isoformat()),
    }
    s.decide("rule", "discounts beyond what sales may give need approval", default=not beyond, value=asked, threshold=allowed)
    # What sales may give comes from the product's row and the account's tier; the total from the price and quantity.
    s.decide("figure", "the discount sales may give, and the discounted total")
    if not beyond:
        logged = s.call("crm", "create_deal", deal,
                        say=f"if the policy lets us give it, log the deal in the CRM for {org.name} at the discounted "
                        f"total, with {person.first_name} as its contact")
        reply(
            s, trigger,
            [f"Hi {person.first_name},\n\nGood news: your {asked}% discount is approved. For {quantity} x {entry.product} "
             f"that comes to {money(total)}, and I have logged the order at that total."],
            say=reply_clause(trigger, "the outcome (the discounted total, or who reviews it)"),
            facts=[Said("the decision", Lit("approve"), "decision"), Said("the discounted total", Lit(total), "money")],
            subject=f"Re: {entry.product}",
        )
        # Within the limit the policy has sales log the deal itself: passing it on for approval is not following it.
        s.require_by_policy(page, f"sales gives up to {allowed}% here on its own and logs the deal", logged,
                            "The deal is logged at the discounted total, as the policy says for a discount within the limit")
    else:
        handed = _pass_on(
            s, trigger, [Lit(lead.email)], [],
            [f"{org.name} ({person.name}) asks for {asked}% off {quantity} x {entry.product}. The most we may give them "
             f"on our own is {allowed}%; can you approve?"],
            say="if it needs approval, pass it to whoever the policy says approves it, saying the most we may give them on "
            "our own",
            facts=[Said("the most we may give on our own", Lit(allowed), "number")], subject=f"Discount approval: {org.name}",
        )
        reply(
            s, trigger,
            [f"Hi {person.first_name},\n\nThanks! A discount of {asked}% needs a sign-off from our sales lead, {lead.name}. "
             "I have passed your request on and we will come back to you shortly."],
            say=reply_clause(trigger, "the outcome (the discounted total, or who reviews it)"),
            facts=[Said("who reviews it", Lit(lead.name))],
            subject=f"Re: {entry.product}",
        )
        violation = [s.spec("crm", "create_deal", deal) if j == handed.index else spec for j, spec in enumerate(s.specs)]
        s.forbid_by_policy(
            page,
            rule,
            handed,
            violation,
            ("crm", "deals", {"company_id": contact["company_id"]}),
            f"No deal was logged at a discount the {DISCOUNT.approver_role} has not approved",
        )
    s.brief.intro = trigger.intro if trigger.channel == "ticket" else f"{trigger.intro} asking for a discount"
    s.brief.goal = (
        f"Deal with {person.first_name}'s request as our discount approval policy says: if we may give the "
        "discount, log the deal in the CRM at the discounted total and confirm it with that total; if it needs "
        "approval, pass it to whoever approves it with the most we may give them on our own, and tell "
        f"{person.first_name} who reviews it"
    )
    s.brief.constraints.append(
        'The policy is on the wiki page "Discount approval policy" (Sales space); prices and '
        "limits are in the Price list spreadsheet, tiers in the Account hierarchy spreadsheet"
    )
    s.brief.anchors += [person.name, org.name]


#: What a customer who may leave writes, and how a colleague who took the call passes it on.
_CHURN = (
    ("we are reviewing our tools and will probably not renew when our contract ends",
     "they are reviewing their tools and will probably not renew when their contract ends."),
    ("after the outages last month we are thinking about cancelling our subscription",
     "after last month's outages they are thinking about cancelling their subscription."),
    ("our budget was cut and we may have to cancel at the end of this term",
     "their budget was cut and they may have to cancel at the end of this term."),
)


@archetype(
    "churn-risk-to-account-manager",
    family="sales",
    title="A customer says they may cancel: hand it to their account manager as the escalation rules say",
    services=("sheets", "docs", "mailbox"),
)
def churn_risk_to_account_manager(s: Scenario) -> None:
    plan = _plan(s)
    person, org, account = _customer(s, contact=False)
    s.subject = person
    words, relayed = s.pick(list(_CHURN), "no churn")
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice(("Our subscription", "Renewal", "Thinking about our contract")),
        text=f"I wanted to let you know that {words}. Happy to talk before we decide.",
        short=f"Just so you know, {words}. Happy to talk before we decide.",
        topic="Account and users",
        relay=relayed,
    ), relay_by=colleague(s, "support agent"))
    page, _ = _read_page(s, "Ticket escalation and routing rules", "read our escalation rules in the wiki")
    _, row = _account_row(s, account, f"find {org.name}'s account manager in the Account hierarchy spreadsheet")
    copy = colleague(s, ESCALATION.cancellation_copy_role)
    if copy.email == account.manager_email:
        raise Skip("the account manager is the person to copy")
    handed = _pass_on(
        s, trigger, [row.ref("values.Account manager email")], [Lit(copy.email)],
        [f"{org.name} ({account.tier} account) may not renew: {person.name} got in touch about it. Can you reach out?"],
        say=f"pass {person.first_name}'s message on to {org.name}'s account manager with the account's tier, copying "
        "whoever the escalation rules say",
        facts=[Said("the account's tier", Lit(account.tier))], subject=f"{org.name} may not renew",
    )
    s.set_policy(
        page,
        f"cancellations go to the account manager with the {ESCALATION.cancellation_copy_role} in copy",
        handed,
        "cc",
        ListOf((Lit(copy.email),)),
        ListOf(()),
        f"The {ESCALATION.cancellation_copy_role} is in copy, as the escalation rules say",
    )
    answered = reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nThank you for telling us. Your account manager, ", row.ref("values.Account manager"),
         ", will be in touch shortly to talk it through."],
        say=reply_clause(trigger, "the name of their account manager, who will be in touch"),
        facts=[Said("the account manager's name", row.ref("values.Account manager"))], subject="Re: your subscription",
        mentions=[(row.ref("values.Account manager"), "the account manager's name")],
    )
    # Naming every account manager is no answer: the reply names theirs only.
    others = sorted({a.manager_name for a in plan.accounts} - {account.manager_name})
    s.notes[answered.index].unsaid = [Said("another account manager", Lit(name)) for name in others]
    s.brief.intro = trigger.intro if trigger.channel == "ticket" else f"{trigger.intro} about their subscription"
    s.brief.goal = (
        f"Get this to the right people as our escalation rules say, with the account's tier, and "
        f"{reply_clause(trigger, 'the name of who will get in touch')}"
    )
    s.brief.constraints.append(
        'The rules are on the wiki page "Ticket escalation and routing rules"; account '
        "managers and tiers are in the Account hierarchy spreadsheet"
    )
    s.brief.anchors += [person.name, org.name]


# -- the help center -----------------------------------------------------------------------------

#: (what the customer asks, the published article that answers it, words to search for, a draft on the same topic)
_QUESTIONS: tuple[tuple[str, str, str, str, str | None], ...] = (
    (
        "Exporting a report",
        "How do I export one of our reports to a CSV file?",
        "How to export a report to CSV",
        "export",
        "Exporting large reports",
    ),
    (
        "Making a colleague an admin",
        "How can I give a colleague admin rights on our account?",
        "How to make someone an admin",
        "admin",
        "Admin roles explained",
    ),
    (
        "Single sign-on",
        "Is single sign-on possible for our team, and where do we set it up?",
        "How to set up single sign-on (SSO)",
        "single sign-on",
        None,
    ),
    (
        "Adding users",
        "How do I invite more people from my team to our account?",
        "How to add users to your account",
        "users",
        None,
    ),
    (
        "Invoice copy",
        "Where can I download a copy of one of our invoices?",
        "How to download a copy of an invoice",
        "invoice",
        None,
    ),
    ("API key", "How do we create an API key for a new integration?", "How to create an API key", "API key", None),
    (
        "Upgrading",
        "How do we move to a bigger plan, and when does it start?",
        "How to upgrade your plan",
        "upgrade",
        None,
    ),
    ("Tracking an order", "How can I track the hardware order we placed?", "How to track your order", "track", None),
)



@archetype(
    "kb-answer-question",
    family="support",
    title="A customer asks how to do something: answer with the link to the right published help center article",
    services=("kb", "docs"),
)
def kb_answer_question(s: Scenario) -> None:
    person, org, _ = _customer(s, contact=False)
    subject, question, title, words, draft = s.pick(list(_QUESTIONS), "no questions")
    s.subject = person
    article = _one(s.records("kb", "article", where={"title": title, "status": "published"}), f"article {title!r}")
    trigger = arrive(s, person, Ask(subject=subject, text=question, short=question, topic="Something else"),
                     relay_by=colleague(s, "support agent"))
    page, _ = _read_page(s, "Help center writing guidelines", "check our help center guidelines in the wiki")
    s.policy_documents.append(page)
    hit = lookup(s, article, {"query": words}, say="find the published help center article that answers it",
                 name="the help center article that answers it")
    shown = [i for i in _results(s, hit) if str(i.get("id")) != article.key and i.get("html_url")]
    if draft is not None:
        unpublished = _one(s.records("kb", "article", where={"title": draft}), "draft")
        if _shows(s, hit, unpublished):
            s.trap("draft-article", unpublished, f'the unpublished draft "{draft}"', step=hit)
    answered = reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nThis article walks you through it: ", hit.ref("html_url"),
         "\n\nLet us know if anything is unclear."],
        say=reply_clause(trigger, "the link to the help center article that answers it"),
        facts=[Said("the article's link", hit.ref("html_url"))],
        subject=f"Re: {subject}", mentions=[(hit.ref("html_url"), "the article link")],
    )
    # Pasting every search result is no answer: the reply links the one article (never a draft the search shows).
    s.notes[answered.index].unsaid = [Said("another article's link", Lit(i["html_url"])) for i in shown[:3]]
    solved = trigger.channel == "ticket"
    if solved:
        act(s, "close", trigger.step, say="mark the ticket solved", prefer="solve_ticket")
    s.brief.intro = about_question(trigger, subject)
    s.brief.goal = (
        f"{reply_clause(trigger, 'the link to the help center article that covers it')[:1].upper()}"
        f"{reply_clause(trigger, 'the link to the help center article that covers it')[1:]}"
        + (", and solve the ticket" if solved else "")
    )
    s.brief.constraints.append('Follow our help center guidelines (the wiki page "Help center writing guidelines")')
    s.brief.anchors += [person.name]


def about_question(trigger: Trigger, subject: str) -> str:
    if trigger.channel == "ticket":
        return trigger.intro
    if trigger.channel == "email":
        return f'{trigger.intro} asking about "{subject}"'
    return f"{trigger.intro} with a question"


#: Solved tickets worth writing up: (ticket tag, help center section, the new article's title)
_WRITE_UPS: tuple[tuple[str, str, str], ...] = (
    ("export", "Reports and exports", "Why a CSV export fails with error 500"),
    ("login", "Account setup", "Getting out of a login loop"),
    ("api", "API", "Why the API answers 429 below your quota"),
    ("tax", "Invoices and payments", "Getting VAT removed from an invoice"),
    ("payment_failed", "Invoices and payments", "Paying an invoice after a failed payment"),
    ("user_management", "Users and permissions", "Asking for admin rights for a colleague"),
    ("damaged_item", "Deliveries", "Replacing items that arrived damaged"),
    ("cancellation", "Plans and subscriptions", "Cancelling at the end of the billing period"),
)



@archetype(
    "ticket-to-kb-draft",
    family="support",
    title="The support lead asks to turn a solved ticket into a help center draft, following the writing guidelines",
    services=("helpdesk", "kb", "docs"),
)
def ticket_to_kb_draft(s: Scenario) -> None:
    tickets = [t for t in s.records("helpdesk", "ticket", where={"status": ("solved", "closed")})]
    options = [(t, section, title) for t in tickets for tag, section, title in _WRITE_UPS if tag in t["tags"]]
    ticket, section_name, title = s.pick(options, "no solved ticket to write up")
    section = _one(s.records("kb", "section", where={"name": section_name}), f"section {section_name!r}")
    lead = colleague(s, KB_DRAFTS.reviewer_role)
    trigger = arrive(s, lead, Ask(
        subject=f"Help center article from {ticket.key}",
        text=f'Ticket {ticket.key} ("{ticket["subject"]}") is a question we get a lot. Could someone write it up as a help '
        f'center article called "{title}" in the {section_name} section? Leave it as a draft for me to review.',
        team="support",
    ), channels=COLLEAGUE)
    lookup(s, _first_comment(s, ticket.key), {"ticket_id": ticket.key},
           say=f"read the conversation on the ticket {lead.first_name} mentions")
    page, _ = _read_page(s, "Help center writing guidelines", "read our help center writing guidelines in the wiki")
    where = lookup(s, section, {"query": section_name, "name": section_name}, say=f"find the {section_name} section of the help center")
    article = s.call(
        "kb",
        "create_article",
        {
            "section_id": where.ref("id"),
            "title": title,
            "status": "draft",
            "label_names": ListOf((Lit(KB_DRAFTS.label),)),
            "body": detail(
                f"{ticket['description']}\n\nWhat to do: contact support with the details above; we fix it the "
                "same day."
            ),
        },
        say=f'write the article "{title}" as a draft in the {section_name} section from what the ticket says, labelled '
        "as the guidelines ask for articles from tickets",
    )
    s.set_policy(
        page,
        f"articles written from a ticket carry the label {KB_DRAFTS.label}",
        article,
        "label_names",
        ListOf((Lit(KB_DRAFTS.label),)),
        ListOf(()),
        f"The draft carries the label {KB_DRAFTS.label!r}",
    )
    reply(
        s, trigger, ["Draft is ready for your review: ", article.ref("html_url")],
        say=reply_clause(trigger, "the draft's link"), facts=[Said("the draft's link", article.ref("html_url"))],
        subject=f"Re: Help center article from {ticket.key}", mentions=[(article.ref("html_url"), "the draft's link")],
    )
    s.brief.intro = f"{trigger.intro} for a help center article from one of our tickets"
    s.brief.goal = (
        f'Write up the draft "{title}" that {lead.first_name} asked for (leave it unpublished) and '
        f"{reply_clause(trigger, 'its link')}"
    )
    s.brief.constraints.append(
        'Follow our help center writing guidelines (the wiki page "Help center writing guidelines")'
    )
    s.brief.anchors += [lead.name, title]


def _first_comment(s: Scenario, ticket_id: str) -> Rec:
    comments = s.records("helpdesk", "comment", where={"ticket_id": ticket_id}, order=("created_at",))
    if not comments:
        raise Skip("the ticket has no conversation")
    return comments[0]


# -- events --------------------------------------------------------------------------------------


@archetype(
    "event-registration",
    family="marketing",
    title="Someone registers for a customer event: add them to the guest list (or the waitlist) and confirm",
    services=("forms", "sheets", "docs", "mailbox"),
)
def event_registration(s: Scenario) -> None:
    plan = _plan(s)
    # Most often the event at (or nearest) its capacity: the count on the guest list decides, not a glance at it.
    event = near_first(s, list(plan.events), lambda e: e.registered, lambda e: e.capacity, "no events")
    taken = {r.email for e in plan.events for r in e.registrations}
    person = s.pick([p for p in s.world.customers if p.email not in taken], "everyone is registered")
    org = org_of(s, person)
    s.subject = person
    response, when = _form_response(
        s, event.form_title, {"full_name": person.name, "email": person.email, "company": org.name}
    )
    found = _find_response(
        s,
        response,
        event.form_title,
        person.email,
        {"query": person.name, "respondent_email": person.email},
        f"{person.first_name}'s registration",
        f"find {person.first_name}'s registration in the forms",
    )
    rules, _ = _read_page(s, "Event registration rules", "read our event registration rules in the wiki")
    _read_page(s, event.name, f"check the capacity of {event.name} on its wiki page")
    book = _spreadsheet(s, event.guest_list_title)
    sheet = _sheet(s, "Guests", book)
    guests = s.records("sheets", "row", where={"sheet_id": sheet.key}, order=("position",))
    registered = [g for g in guests if EVENTS.registered in g["cells"]]
    opened = _open_spreadsheet(s, event.guest_list_title)
    # Counting who holds a place: the rows whose status is Registered.
    counted = lookup(s, s.pick(registered[:1], "nobody is registered yet"),
                     {"value": EVENTS.registered, "spreadsheet_id": opened.ref("id"), "column": "Status"},
                     say="count who is registered on the event's guest list", stage="consult")
    status = EVENTS.waitlisted if event.is_full else EVENTS.registered
    s.decide("figure", "how many places the guest list's registered rows take")  # the count decides the status
    s.decide("rule", "once the event is full, new registrants go on the waitlist", default=not event.is_full,
             value=event.registered, threshold=event.capacity)
    other = EVENTS.registered if event.is_full else EVENTS.waitlisted
    cells = (found.ref("answers.full_name"), found.ref("answers.email"), found.ref("answers.company"))
    added = s.call(
        "sheets",
        "append_row",
        {"sheet_id": counted.ref("sheet_id"), "values": ListOf((*cells, Lit(status)))},
        say=f"add {person.first_name} to the guest list with their name, email, company and the status the rules give",
    )
    if event.is_full:
        s.set_policy(
            rules,
            f"once the event is full, new registrants go on the {EVENTS.waitlisted}",
            added,
            "values",
            ListOf((*cells, Lit(status))),
            ListOf((*cells, Lit(other))),
            f"{person.first_name} is on the guest list as {status}: the event is full",
        )
    else:
        s.policy_documents.append(rules)
    outcome = ("The event is full, so you are on the Waitlist; we will let you know as soon as a place opens up."
               if event.is_full else "You have a place: you are Registered.")
    confirmed = s.call(
        "mailbox",
        "send_email",
        {
            "to": ListOf((found.ref("respondent_email"),)),
            "subject": detail(f"Your registration: {event.name}"),
            "body": s.text(f"Hi {person.first_name},\n\nThanks for registering for {event.name} on {short_date(event.day)}. "
                           f"{outcome}"),
        },
        say=f"email {person.first_name} to confirm the event's date and whether they have a place or are on the waitlist",
        # In lower case, a status reads as an outcome, negation-aware: "you are not registered" does not say registered.
        facts=[Said("where they stand", Lit(status.lower())), Said("the event's date", Lit(event.day), "date")],
        stage="report",
    )
    if not event.is_full:  # someone with a place is not told they wait (a waitlisted one may well hear "registered")
        s.notes[confirmed.index].unsaid = [Said("the other status", Lit(EVENTS.waitlisted.lower()))]
    s.brief.intro = f"{person.name} from {org.name} registered for {event.name} through its form {when}"
    s.brief.goal = (
        f"Put {person.first_name} on the event's guest list as our event registration rules say, and email "
        f"{person.first_name} to confirm the date and where they stand"
    )
    s.brief.constraints.append("The rules and the event's capacity are in the Marketing space of the wiki")
    s.brief.anchors += [person.name, event.name]


# -- questions the wiki answers ------------------------------------------------------------------


def _people_questions() -> list[tuple[str, str, str, str, float, tuple[float, ...]]]:
    """(what a colleague asks, the page that answers it, words to search for, the answer as said, the value, the other
    figures of that page one could give instead)."""
    vacation = next(p for p in TIME_OFF_POLICIES if p.type == "vacation")
    sick = next(p for p in TIME_OFF_POLICIES if p.type == "sick")
    personal = next(p for p in TIME_OFF_POLICIES if p.type == "personal")
    days = (float(vacation.annual_days), float(vacation.carryover_days), float(sick.annual_days), float(personal.annual_days))
    limits = {c.name: float(c.limit or 0.0) for c in EXPENSE_CATEGORIES}
    amounts = (*limits.values(), float(RECEIPT_REQUIRED_OVER))
    asked = [
        ("How many unused vacation days can we carry over into next year?", "Time off policy", "vacation",
         "how many unused vacation days carry over", float(vacation.carryover_days), days),
        ("How many sick days do we get a year?", "Time off policy", "sick", "how many sick days we get a year",
         float(sick.annual_days), days),
        ("How many personal days do we get each year?", "Time off policy", "personal days",
         "how many personal days we get a year", float(personal.annual_days), days),
        ("What's the most I can expense for a hotel stay?", "Expense policy", "lodging", "the limit per hotel stay",
         limits["Lodging"], amounts),
        ("From what amount does an expense need a receipt?", "Expense policy", "receipt",
         "the amount above which an expense needs a receipt", float(RECEIPT_REQUIRED_OVER), amounts),
        ("What's our limit per expense for client entertainment?", "Expense policy", "client entertainment",
         "the limit per expense for client entertainment", limits["Client entertainment"], amounts),
        ("What's the limit on a conference ticket or training course?", "Expense policy", "training",
         "the limit per expense for training and conferences", limits["Training and conferences"], amounts),
    ]
    return [(q, title, words, what, value, _nearest(value, figures)) for q, title, words, what, value, figures in asked]


def _nearest(value: float, figures: Sequence[float], n: int = 3) -> tuple[float, ...]:
    """The ``n`` other figures closest to ``value`` (the ones an answer could confuse with it)."""
    others = sorted({f for f in figures if abs(f - value) > 0.005}, key=lambda f: (abs(f - value) / max(value, 1.0), f))
    return tuple(others[:n])


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


@archetype(
    "people-policy-question",
    family="hr",
    title="A colleague asks about time off or expenses: answer from the policy in the wiki",
    services=("docs",),
)
def people_policy_question(s: Scenario) -> None:
    asked, title, words, what, value, others = s.pick(_people_questions(), "no questions")
    asker = colleague(
        s, s.rng.choice(("support agent", "account executive", "engineering lead", "accountant", "office manager"))
    )
    trigger = arrive(s, asker, Ask(subject="Quick question", text=f"Quick question: {asked[0].lower() + asked[1:]}",
                                   team="general"), channels=COLLEAGUE)
    page = _page(s, title)
    lookup(s, page, {"query": words, "space_key": "PPL"}, say=f"find our {title.lower()} in the wiki", stage="consult")
    s.refer(page, f"our {title.lower()}", relation="title", where={"title": title, "status": "current"})
    s.policy_documents.append(page)
    # The other figures of the page: an answer that lists them all, the right one among them, is no answer.
    s.ask(what, _plain(value), forbidden=[_plain(f) for f in others])
    topic = "time off" if title.startswith("Time off") else "expenses"
    s.brief.intro = f"{trigger.intro} about {topic}"
    s.brief.goal = "Read what they asked, look it up in our wiki and tell me the answer so I can reply"
    s.brief.anchors += [asker.name]


__all__ = [
    "churn_risk_to_account_manager",
    "contact_form_to_ticket",
    "demo_request_to_lead",
    "discount_request",
    "event_registration",
    "kb_answer_question",
    "people_policy_question",
    "ticket_routing",
    "ticket_to_kb_draft",
]
