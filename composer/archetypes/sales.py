"""Sales workflows: closing deals, logging losses, meeting requests from prospects and customers."""

from __future__ import annotations

from datetime import datetime, timedelta

from composer.archetypes.common import (
    chat_post,
    clock,
    colleague,
    day_name,
    inbound_email,
    maybe_log_in_crm,
    org_of,
    rule_source,
    signature,
)
from composer.plan import ListOf, Lit
from composer.scenario import Scenario, archetype, detail

_LOSS_REASONS = (
    ("we have decided to go with another vendor whose price fits our budget better", "Chose a cheaper competitor", "Competitor"),
    ("our budget for this was cut for the rest of the year", "Budget cut", "Price"),
    ("we are putting the project on hold after a reorganisation", "Project on hold", "Timing"),
    ("the product does not cover the integrations we need", "Missing integrations", "Product fit"),
)
_LOSS_CATEGORIES = ("Price", "Timing", "Competitor", "Product fit", "No decision")


def _open_deals(s: Scenario) -> list:
    return [d for d in s.records("crm", "deal") if d["stage"] in ("proposal", "negotiation") and d["contact_id"]]


def _one_open_deal_per_company(s: Scenario) -> list:
    deals = _open_deals(s)
    companies = [d["company_id"] for d in s.records("crm", "deal") if d["stage"] in ("qualification", "proposal", "negotiation")]
    return [d for d in deals if companies.count(d["company_id"]) == 1]


@archetype(
    "lost-deal-log",
    family="sales",
    title="A prospect writes that they chose someone else: close the deal as lost with their reason",
    services=("crm", "mailbox"),
)
def lost_deal_log(s: Scenario) -> None:
    deal = s.pick(_one_open_deal_per_company(s), "no company with one open deal")
    contact = s.record("crm", "contact", deal["contact_id"])
    person = s.person(contact["email"])
    org = org_of(s, person)
    why, reason, category = s.pick(list(_LOSS_REASONS), "no reasons")
    playbook = s.rng.random() < 0.6
    if playbook:
        document, pointer = rule_source(
            s, "Sales playbook",
            "- Keep every open deal's stage current.\n- When a deal is lost, its lost reason must be exactly one of: "
            + ", ".join(_LOSS_CATEGORIES) + ". Put the customer's own words in a note if you want to keep them.",
            author_role="sales lead",
        )
    email, when = inbound_email(
        s, person, f"Re: {deal['name']}",
        f"Hi,\n\nThank you for the proposal and your time. Unfortunately {why}, so we will not go ahead for now.\n\n"
        f"Kind regards,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call(
        "crm", "list_deals", {"company_id": deal["company_id"]}, select=deal,
        say=f"find the open deal with {org.name} in the CRM",
    )
    s.refer(deal, f"the open deal with {org.name}", relation="customer",
            where={"company_id": deal["company_id"], "stage": ("qualification", "proposal", "negotiation")})
    won = [d for d in s.records("crm", "deal", where={"company_id": deal["company_id"]}) if d["stage"] == "won"]
    if won:
        s.trap("won-deal", won[0], f"their earlier won deal '{won[0]['name']}'", step=found)
    marked = s.call(
        "crm", "update_deal_stage", {"deal_id": found.ref("id"), "stage": "lost", "lost_reason": category if playbook else reason},
        say="mark it lost with the reason category the sales playbook asks for" if playbook else f"mark it lost with the reason \"{reason}\"",
    )
    if playbook:
        s.set_policy(document, "lost reasons are one of the playbook's categories", marked, "lost_reason", category, reason,
                     f"The lost reason is the playbook category {category!r}")
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": s.text(
            f"Hi {person.first_name},\n\nThanks for letting us know, and for considering us. If anything changes, "
            "we would be glad to pick this up again.")},
        say=f"send {person.first_name} a short, friendly reply thanking them",
    )
    s.brief.intro = f"{person.name} from {org.name} emailed {when} about our proposal"
    if playbook:
        s.brief.goal = f"Update the CRM so the {org.name} deal reflects their answer, and thank {person.first_name} for letting us know"
        s.brief.constraints.append(pointer)
        s.brief.anchors += [person.name, org.name]
    else:
        s.brief.goal = (
            f"Update the CRM so the {org.name} deal reflects their answer, with the reason \"{reason}\", "
            f"and thank {person.first_name} for letting us know"
        )
        s.brief.anchors += [person.name, org.name, reason]


@archetype(
    "closed-won-handoff",
    family="sales",
    title="A deal is signed: mark it won, introduce the customer to onboarding and book the kickoff",
    services=("crm", "chat", "mailbox", "calendar"),
)
def closed_won_handoff(s: Scenario) -> None:
    deal = s.pick(_one_open_deal_per_company(s), "no company with one open deal")
    contact = s.record("crm", "contact", deal["contact_id"])
    person = s.person(contact["email"])
    org = org_of(s, person)
    seller = colleague(s, "sales lead")
    onboarding = colleague(s, "product manager")
    post, when = chat_post(s, seller, "sales", f"{org.name} just signed! Can you do the handoff to onboarding today?")
    found = s.call("crm", "list_deals", {"company_id": deal["company_id"]}, select=deal, say=f"find the open {org.name} deal in the CRM")
    s.refer(deal, f"the open {org.name} deal", relation="customer",
            where={"company_id": deal["company_id"], "stage": ("qualification", "proposal", "negotiation")})
    s.call("crm", "update_deal_stage", {"deal_id": found.ref("id"), "stage": "won"}, say="mark it won")
    start = (s.world.now_dt + timedelta(days=s.rng.randint(2, 6))).replace(hour=s.rng.choice((10, 11, 14, 15)), minute=0, second=0)
    if start.weekday() >= 5:
        start += timedelta(days=7 - start.weekday())
    start_iso = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    end_iso = (start + timedelta(minutes=45)).strftime("%Y-%m-%dT%H:%M:%SZ")
    title = f"Kickoff: {org.name} onboarding"
    s.call(
        "calendar", "create_event",
        {"title": title, "start": start_iso, "end": end_iso, "attendee_emails": ListOf((Lit(person.email), Lit(onboarding.email))),
         "add_video_link": True},
        say=f"put a 45-minute video call \"{title}\" in the calendar on {day_name(start_iso)} {start.day} {start.strftime('%B')} at "
            f"{clock(start_iso)} UTC with {person.first_name} and {onboarding.name}",
    )
    s.call(
        "mailbox", "send_email",
        {"to": ListOf((Lit(person.email),)), "cc": ListOf((Lit(onboarding.email),)), "subject": detail(f"Welcome to {s.world.home.name}"),
         "body": s.text(
             f"Hi {person.first_name},\n\nWelcome aboard! {onboarding.name} will guide you through onboarding; "
             f"you will find a kickoff invitation for {day_name(start_iso)} in your calendar.")},
        say=f"email {person.first_name} a welcome with {onboarding.first_name} in copy",
    )
    s.call("chat", "reply_in_thread", {"message_id": post.key, "text": detail("Handoff done: deal marked won, kickoff booked.")},
           say=f"tell {seller.first_name} in the thread that it's done")
    s.brief.intro = f"{seller.name} posted in #sales {when} that {org.name} signed"
    s.brief.goal = (
        f"Do the onboarding handoff for {org.name}: the CRM should show the deal as won, {person.first_name} and "
        f"{onboarding.name} need a 45-minute video kickoff on {day_name(start_iso)} {start.day} {start.strftime('%B')} at "
        f"{clock(start_iso)} UTC called \"{title}\", {person.first_name} should get a welcome email with "
        f"{onboarding.first_name} in copy, and {seller.first_name} should hear back in the thread"
    )
    s.brief.needs_date = True
    s.brief.anchors += [org.name, seller.name, onboarding.name, title]


@archetype(
    "meeting-request",
    family="sales",
    title="A customer asks for a call at a time that suits them: book it and confirm",
    services=("calendar", "mailbox"),
)
def meeting_request(s: Scenario) -> None:
    person = s.pick(list(s.world.customers), "no customers")
    org = org_of(s, person)
    day = s.world.now_dt + timedelta(days=s.rng.randint(2, 8))
    if day.weekday() >= 5:
        day += timedelta(days=7 - day.weekday())
    start = day.replace(hour=s.rng.choice((9, 10, 11, 14, 15, 16)), minute=s.rng.choice((0, 30)), second=0)
    start_iso = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    end_iso = (start + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    when_text = f"{day_name(start_iso)} {start.day} {start.strftime('%B')} at {clock(start_iso)} UTC"
    email, when = inbound_email(
        s, person, "Quick call?",
        f"Hi,\n\nCould we have a 30-minute call about our renewal? {when_text} would suit me.\n\n"
        f"Best,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    rules = s.rng.random() < 0.5
    title = f"Renewal call with {org.name}"
    if rules:
        title = f"Customer call: {org.name}"
        document, pointer = rule_source(
            s, "Meeting rules",
            "- Every call with a customer has a video link.\n- Its title is 'Customer call: ' followed by the "
            "customer's company name, so the team can find them in the calendar.",
        )
    event = s.call(
        "calendar", "create_event",
        {"title": title, "start": start_iso, "end": end_iso, "attendee_emails": ListOf((Lit(person.email),)), "add_video_link": True},
        say=(f"book a 30-minute call with {person.first_name} at the time they asked for, set up as our meeting rules say"
             if rules else f"book a 30-minute video call \"{title}\" with {person.first_name} at the time they asked for"),
    )
    if rules:
        s.set_policy(document, "customer calls are titled 'Customer call: <company>'", event, "title", title,
                     f"Renewal call with {org.name}", "The call's title follows the meeting rules")
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": s.text(
            f"Hi {person.first_name},\n\n{when_text} works. Here is the link for the call: ", event.ref("meeting_url"), ".")},
        say=f"reply to {person.first_name} to confirm, with the meeting link",
        mentions=[(event.ref("meeting_url"), "the meeting link")],
    )
    logged = maybe_log_in_crm(s, person, "Call booked, meeting link", event.ref("meeting_url"), "the meeting link", p=0.35)
    if logged:
        s.brief.constraints.append("Log the call with its link on their CRM contact")
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking for a call"
    if rules:
        s.brief.goal = f"Set up the call {person.first_name} asked for and confirm it to them with the meeting link"
        s.brief.constraints.append(pointer)
        s.brief.anchors += [person.name]
    else:
        s.brief.goal = f"Set up the call {person.first_name} asked for as a video meeting called \"{title}\" and confirm it to them with the link"
        s.brief.anchors += [person.name, title]
    _ = datetime
