"""Sales workflows: closing deals, logging losses, meeting requests from prospects and customers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from composer.archetypes.common import clock, day_name, org_of, rule_author, short_date
from composer.plan import ListOf, Lit
from composer.scenario import Rec, Said, Scenario, Step, archetype, detail
from composer.stages.acts import act, tell
from composer.stages.channels import COLLEAGUE, Ask, arrive, asking, can_arrive, email_of, reply, reply_clause
from composer.stages.lookup import lookup, shows
from composer.stages.rules import colleague, consult

_LOSS_REASONS = (
    ("we have decided to go with another vendor whose price fits our budget better", "Chose a cheaper competitor", "Competitor"),
    ("our budget for this was cut for the rest of the year", "Budget cut", "Price"),
    ("we are putting the project on hold after a reorganisation", "Project on hold", "Timing"),
    ("the product does not cover the integrations we need", "Missing integrations", "Product fit"),
)
_LOSS_CATEGORIES = ("Price", "Timing", "Competitor", "Product fit", "No decision")
_OPEN = ("qualification", "proposal", "negotiation")


def _one_open_deal_per_company(s: Scenario) -> list[Rec]:
    deals = [d for d in s.records("crm", "deal") if d["stage"] in ("proposal", "negotiation") and d["contact_id"]]
    companies = [d["company_id"] for d in s.records("crm", "deal") if d["stage"] in _OPEN]
    return [d for d in deals if companies.count(d["company_id"]) == 1]


def _open_deal(s: Scenario, deal: Rec, company: str) -> Step:
    """The company's open deal, found through the company in the CRM (its won deals are a trap where they show)."""
    firm = lookup(s, s.record("crm", "company", deal["company_id"]), {"query": company, "name": company},
                  say=f"find {company} in the CRM", name=company)
    found = lookup(s, deal, {"company_id": firm.ref("id")}, say=f"find the open deal with {company}",
                   name=f"the open deal with {company}")
    s.refer(deal, f"the open deal with {company}", relation="customer",
            where={"company_id": deal["company_id"], "stage": _OPEN})
    won = [d for d in s.records("crm", "deal", where={"company_id": deal["company_id"]}) if d["stage"] == "won" and shows(s, found, d)]
    if won:
        s.trap("won-deal", won[0], f"their earlier won deal '{won[0]['name']}'", step=found)
    return found


def _owner(s: Scenario, deal: Rec) -> Any:
    """Who hears about the deal: its owner, or the sales lead when the user owns it."""
    owner = next((p for p in s.world.team if p.email == deal["owner_email"]), None)
    if owner is None or owner.email == s.world.user.email:
        return colleague(s, "sales lead")
    return owner


@archetype(
    "lost-deal-log",
    family="sales",
    title="A prospect writes that they chose someone else: close the deal as lost with their reason, tell its owner",
    services=("crm",),
    fits=can_arrive(),
)
def lost_deal_log(s: Scenario) -> None:
    deal = s.pick(_one_open_deal_per_company(s), "no company with one open deal")
    contact = s.record("crm", "contact", deal["contact_id"])
    person = s.person(contact["email"])
    org = org_of(s, person)
    s.subject = person
    why, reason, category = s.pick(list(_LOSS_REASONS), "no reasons")
    playbook = s.rng.random() < 0.6
    if playbook:
        rule = consult(
            s, "Sales playbook",
            "- Keep every open deal's stage current.\n- When a deal is lost, its lost reason must be exactly one of: "
            + ", ".join(_LOSS_CATEGORIES) + ". Put the customer's own words in a note if you want to keep them.",
            author_role=rule_author(s, "sales lead"),
        )
    trigger = arrive(s, person, Ask(
        subject=f"Re: {deal['name']}",
        text=s.rng.choice((
            f"Thank you for the proposal and your time. Unfortunately {why}, so we will not go ahead for now.",
            f"I wanted to let you know where we landed: {why}, so we won't be moving forward with your proposal.",
        )),
        short=f"Thanks for the proposal, but {why}, so we won't go ahead.",
        relay=f"{person.first_name} says {why}, so {org.name} won't go ahead with our proposal.",
        team="sales",
    ))
    found = _open_deal(s, deal, org.name)
    lost_reason = category if playbook else reason
    marked = act(s, "transition", found, {"stage": "lost", "lost_reason": lost_reason},
                 say=f"mark the open deal with {org.name} lost with the reason category the sales playbook asks for" if playbook
                 else f"mark the open deal with {org.name} lost with the reason \"{reason}\"")
    if playbook:
        s.set_policy(rule.rec, "lost reasons are one of the playbook's categories", marked, "lost_reason", category, reason,
                     f"The lost reason is the playbook category {category!r}")
        s.brief.constraints.append(rule.pointer)
    owner = _owner(s, deal)
    tell(s, owner, ["Lost ", found.ref("name"), f": {person.name} wrote that {why}. Logged as {lost_reason}."],
         say=f"let {owner.name} know which deal we lost and why",
         facts=[Said("the deal", found.ref("name")), Said("the lost reason", Lit(lost_reason))],
         subject=f"Lost: {deal['name']}")
    s.brief.intro = f"{trigger.intro} about our proposal"
    s.brief.goal = (f"Update the CRM so the {org.name} deal reflects their answer"
                    + ("" if playbook else f", with the reason \"{reason}\"")
                    + f", and let {owner.name} know which deal we lost and why")
    s.brief.anchors += [person.name, org.name, owner.name] + ([] if playbook else [reason])


@archetype(
    "closed-won-handoff",
    family="sales",
    title="A deal is signed: mark it won, book the kickoff with the customer and onboarding, and welcome the customer",
    services=("crm", "calendar", "mailbox"),
    fits=can_arrive(COLLEAGUE),
)
def closed_won_handoff(s: Scenario) -> None:
    open_deals = _one_open_deal_per_company(s)
    # A company with an earlier won deal beside the open one: which deal "signed" is the open one, not any of theirs.
    won = {d["company_id"] for d in s.records("crm", "deal") if d["stage"] == "won"}
    deal = s.pick([d for d in open_deals if d["company_id"] in won] or open_deals, "no company with one open deal")
    contact = s.record("crm", "contact", deal["contact_id"])
    person = s.person(contact["email"])
    org = org_of(s, person)
    seller = colleague(s, "sales lead")
    onboarding = colleague(s, "product manager")
    start = (s.world.now_dt + timedelta(days=s.rng.randint(2, 6))).replace(hour=s.rng.choice((10, 11, 14, 15)), minute=0, second=0)
    if start.weekday() >= 5:
        start += timedelta(days=7 - start.weekday())
    start_iso = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    end_iso = (start + timedelta(minutes=45)).strftime("%Y-%m-%dT%H:%M:%SZ")
    when = f"{day_name(start_iso)} {short_date(start_iso)} at {clock(start_iso)} UTC"
    title = f"Kickoff: {org.name} onboarding"
    trigger = arrive(s, seller, Ask(
        subject=f"{org.name} signed!",
        text=s.rng.choice((
            f"{org.name} just signed! Can you do the handoff to onboarding today? Kickoff \"{title}\" on {when}, 45 minutes "
            f"on video, with their contact on the deal and {onboarding.name}. And a welcome email to them, "
            f"{onboarding.first_name} in copy.",
            f"Great news: {org.name} signed. Please mark the deal won, book a 45-minute video kickoff \"{title}\" for {when} "
            f"with their deal contact and {onboarding.name}, and send them a welcome email copying {onboarding.first_name}.",
        )),
        team="sales",
    ), channels=COLLEAGUE)
    s.subject = person
    found = _open_deal(s, deal, org.name)
    act(s, "transition", found, {"stage": "won"}, say=f"mark the {org.name} deal won")
    who = lookup(s, contact, {"id": found.ref("contact_id"), "contact_id": found.ref("contact_id")},
                 say="look up the deal's contact", name=f"{person.first_name}'s CRM contact")
    colleagues = [c for c in s.records("crm", "contact", where={"company_id": deal["company_id"], "archived": False})
                  if c.key != contact.key]
    if colleagues:  # the request names nobody: the deal says which of the company's people is invited and welcomed
        s.decide("pick", f"the deal's contact among {org.name}'s {len(colleagues) + 1} people in the CRM")
    event = s.call(
        "calendar", "create_event",
        {"title": title, "start": start_iso, "end": end_iso, "attendee_emails": ListOf((who.ref("email"), Lit(onboarding.email))),
         "add_video_link": True},
        say=f"put the 45-minute video kickoff \"{title}\" in the calendar for {when} with {person.first_name} and {onboarding.name}",
    )
    s.call(
        "mailbox", "send_email",
        {"to": ListOf((who.ref("email"),)), "cc": ListOf((Lit(onboarding.email),)), "subject": detail(f"Welcome to {s.world.home.name}"),
         "body": s.text(f"Hi {person.first_name},\n\nWelcome aboard! {onboarding.name} will guide you through onboarding; "
                        f"our kickoff is on {when} (link: ", event.ref("meeting_url"), ").")},
        say=f"email {person.first_name} a welcome with {onboarding.name} in copy, saying who guides them and when the kickoff is",
        facts=[Said("the kickoff time", Lit(start_iso), "datetime"), Said("who guides them", Lit(onboarding.name))],
    )
    reply(s, trigger, [f"Handoff done: the deal is won and the kickoff is booked for {when}; {person.first_name} has the welcome email."],
          say=reply_clause(trigger, "the kickoff time"), facts=[Said("the kickoff time", Lit(start_iso), "datetime")],
          subject=f"Re: {org.name} signed!")
    s.brief.intro = asking(trigger, f"for the onboarding handoff now that {org.name} signed")
    s.brief.goal = (f"Do the onboarding handoff for {org.name} the way {seller.first_name} asks: the CRM should show the deal as "
                    f"won, the kickoff should be in the calendar, {person.first_name} should get the welcome email, and "
                    f"{reply_clause(trigger, 'the kickoff time')}")
    s.brief.needs_date = True
    s.brief.anchors += [org.name, seller.name]


@archetype(
    "meeting-request",
    family="sales",
    title="A customer asks for a call at a time that suits them: book it and confirm",
    services=("calendar",),
    fits=can_arrive(),
)
def meeting_request(s: Scenario) -> None:
    person = s.pick(list(s.world.customers), "no customers")
    org = org_of(s, person)
    s.subject = person
    day = s.world.now_dt + timedelta(days=s.rng.randint(2, 8))
    if day.weekday() >= 5:
        day += timedelta(days=7 - day.weekday())
    start = day.replace(hour=s.rng.choice((9, 10, 11, 14, 15, 16)), minute=s.rng.choice((0, 30)), second=0)
    start_iso = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    end_iso = (start + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    when_text = f"{day_name(start_iso)} {start.day} {start.strftime('%B')} at {clock(start_iso)} UTC"
    trigger = arrive(s, person, Ask(
        subject="Quick call?",
        text=s.rng.choice((
            f"Could we have a 30-minute call about our renewal? {when_text} would suit me.",
            f"I'd like to go over our renewal with you. Are you free for half an hour on {when_text}?",
        )),
        short=f"Could we do a 30-minute call about our renewal on {when_text}?",
        relay=f"{person.first_name} would like a 30-minute call about their renewal on {when_text}.",
        team="sales",
    ))
    # The meeting rules say how the call is set up (its title): without them nothing in the data decides any of it.
    title = f"Customer call: {org.name}"
    rule = consult(
        s, "Meeting rules",
        "- Every call with a customer has a video link.\n- Its title is 'Customer call: ' followed by the "
        "customer's company name, so the team can find them in the calendar.",
        author_role=rule_author(s, "sales lead"),
    )
    event = s.call(
        "calendar", "create_event",
        {"title": title, "start": start_iso, "end": end_iso, "attendee_emails": ListOf((email_of(s, trigger),)), "add_video_link": True},
        say=f"book a 30-minute call with {person.first_name} at the time they asked for, set up as our meeting rules say",
    )
    s.set_policy(rule.rec, "customer calls are titled 'Customer call: <company>'", event, "title", title,
                 f"Renewal call with {org.name}", "The call's title follows the meeting rules")
    s.brief.constraints.append(rule.pointer)
    reply(
        s, trigger, [f"Hi {person.first_name},\n\n{when_text} works. Here is the link for the call: ", event.ref("meeting_url"), "."],
        say=reply_clause(trigger, "the time and the meeting link"),
        facts=[Said("the time", Lit(start_iso), "datetime"), Said("the meeting link", event.ref("meeting_url"))],
        subject="Re: Quick call?",
        relay_parts=[f"Booked {person.first_name}'s call for {when_text}: ", event.ref("meeting_url"), ". Could you send them the link?"],
    )
    s.brief.intro = f"{trigger.intro} asking to book a call"
    s.brief.goal = f"Set up the call {person.first_name} asked for and {reply_clause(trigger, 'the time and the meeting link')}"
    s.brief.anchors += [person.name]



