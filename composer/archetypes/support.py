"""Support workflows: problems customers report on any channel become tickets, bugs, replies and fixes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from mcp_services.kernel.world import Person

from composer.archetypes.common import org_of, short_date
from composer.decisions import near_threshold
from composer.plan import Expr, Lit, Ref
from composer.scenario import Rec, Said, Scenario, Skip, Step, archetype, detail
from composer.stages.acts import act, log
from composer.stages.channels import CUSTOMER, Ask, Channel, Trigger, arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import colleague, consult


@dataclass(frozen=True)
class Problem:
    """A problem customers report, in their words on each channel."""

    subject: str
    text: str  # first person, as in an email or a voicemail
    short: str  # as in a text message
    relay: str  # third person, as a colleague who took the call sums it up
    topic: str  # the contact form's topic
    blocking: bool  # the triage rules make it high priority (a login, an export, a webhook)
    bug: bool  # something engineering fixes


_PROBLEMS = (
    Problem("CSV export is empty",
            "Since yesterday every CSV export we download from the reports page is empty. We need it for our month-end close.",
            "Every CSV export from the reports page has come out empty since yesterday. Can you help?",
            "every CSV export they download from the reports page has been empty since yesterday, and they need it for month-end.",
            "Technical problem", True, True),
    Problem("Cannot log in after password reset",
            "I reset my password this morning and now the login page just reloads. Could you help?",
            "Since I reset my password this morning the login page just reloads. Could you help?",
            "since resetting their password this morning the login page just reloads and they can't get in.",
            "Account and users", True, False),
    Problem("Invoice PDF shows the wrong address",
            "The PDF of our latest invoice still shows our old office address. Can that be corrected?",
            "Our latest invoice PDF still has our old office address on it. Can you correct it?",
            "the PDF of their latest invoice still shows their old office address and they'd like it corrected.",
            "Billing", False, False),
    Problem("Users cannot be added",
            "When I try to add a new user to our workspace I get an error saying the seat limit is reached, but we have seats left.",
            "Adding a user to our workspace says the seat limit is reached, but we have seats left.",
            "adding a user to their workspace fails with 'seat limit reached' although they have seats left.",
            "Account and users", False, False),
    Problem("Report dashboard is very slow",
            "The reporting dashboard has been taking over a minute to load all week. It used to be instant.",
            "Our reporting dashboard takes over a minute to load, all week now. It used to be instant.",
            "their reporting dashboard has taken over a minute to load all week; it used to be instant.",
            "Technical problem", False, True),
    Problem("Webhook deliveries failing",
            "Our webhook endpoint has stopped receiving events since Monday; the delivery log shows timeouts.",
            "Our webhook endpoint gets no events since Monday, the delivery log shows timeouts.",
            "their webhook endpoint has received no events since Monday and the delivery log shows timeouts.",
            "Technical problem", True, True),
)

#: How a ticket records the channel a request came in on (the helpdesk knows email, web, phone and chat).
_TICKET_CHANNEL: dict[Channel, str] = {"email": "email", "form": "web", "voice": "phone", "chat": "phone"}

_TRIAGE = ("- Anything that blocks a customer from logging in or from getting their data out (exports, webhooks) is "
           "**high** priority.\n- Everything else starts at **normal**; {lead} re-triages weekly.")


def _ask(problem: Problem) -> Ask:
    return Ask(subject=problem.subject, text=problem.text, short=problem.short, topic=problem.topic, relay=problem.relay)


def their_email(s: Scenario, trigger: Trigger) -> Expr:
    """The person's email address as the agent comes to know it: on the message itself, or else (a text, a call) on
    their CRM contact or helpdesk profile, found by their name or number."""
    step = trigger.step
    if trigger.channel == "email":
        return step.ref("from_email")
    if trigger.channel == "form":
        return step.ref("respondent_email")
    if trigger.channel == "ticket":
        return step.ref("requester_email")
    person = trigger.person
    for service, entity in (("crm", "contact"), ("helpdesk", "user")):
        if not s.has(service):
            continue
        found = [r for r in s.records(service, entity, where={"email": person.email}) if not r.get("archived")]
        if len(found) == 1:
            noun = "CRM contact" if service == "crm" else "helpdesk profile"
            return lookup(s, found[0], known_sender(trigger), say=f"find {person.first_name}'s email address",
                          name=f"{person.first_name}'s {noun}").ref("email")
    raise Skip(f"nothing mounted knows {person.name}'s email address")


def known_sender(trigger: Trigger) -> dict[str, Expr | str]:
    """What a message tells about whose request it is: their name (a text may not even say it, but the number finds
    them), their email on an email, a form or a ticket, their number on a text or a call."""
    person = trigger.person
    known: dict[str, Expr | str] = {"query": person.name, "name": person.name}
    if trigger.channel in ("email", "form", "ticket"):
        known["email"] = person.email
    if trigger.channel in ("sms", "voice"):
        known["phone"] = person.phone
    return known


def about(trigger: Trigger, subject: str, plain: str = "to report a problem") -> str:
    """The request's first sentence: how the work came up, with the subject where the channel has one."""
    if trigger.channel == "ticket":
        return trigger.intro
    if trigger.channel == "email":
        return f'{trigger.intro} about "{subject}"'
    return f"{trigger.intro} {plain}"


def confirm_ticket(s: Scenario, trigger: Trigger, ticket: Step, subject: str) -> Step:
    """Tell the person, on the channel they used, the number of the ticket opened for them."""
    return reply(
        s, trigger,
        [f"Hi {trigger.person.first_name},\n\nThanks for getting in touch. We have logged this as ticket ", ticket.ref("id"),
         " and will keep you updated there."],
        say=reply_clause(trigger, "the ticket number"), facts=[Said("the ticket number", ticket.ref("id"))],
        subject=f"Your ticket: {subject}", mentions=[(ticket.ref("id"), "the ticket number")],
    )


def _triage(s: Scenario, problem: Problem, share: float = 0.55) -> tuple[Rec, str, str] | None:
    """Now and then (``share``) the triage rules apply: (where they live, how the request points at them, the priority
    they give)."""
    if s.rng.random() >= share:
        return None
    lead = colleague(s, "support lead")
    rule = consult(s, "Support triage rules", _TRIAGE.format(lead=lead.name), author_role="support lead")
    return rule.rec, rule.pointer, "high" if problem.blocking else "normal"


def _apply_triage(s: Scenario, triage: tuple[Rec, str, str] | None, ticket: Step) -> None:
    if triage is None:
        return
    document, pointer, priority = triage
    if priority == "high":
        s.set_policy(document, "blocking problems are high priority", ticket, "priority", "high", "normal",
                     "The ticket's priority follows the triage rules")
    else:
        s.policy_documents.append(document)
    s.brief.constraints.append(pointer)


def _open_ticket(s: Scenario, trigger: Trigger, problem: Problem, requester: Expr, priority: str | None, say: str) -> Step:
    person = trigger.person
    channel = _TICKET_CHANNEL.get(trigger.channel)
    return s.call(
        "helpdesk", "create_ticket",
        {"requester_email": requester, "requester_name": detail(person.name), "subject": detail(problem.subject),
         "description": detail(problem.text), "channel": channel if channel else detail("web"),
         "priority": priority if priority else detail("normal")},
        say=say,
    )


@archetype(
    "email-to-ticket",
    family="support",
    title="A customer reports a problem (an email, a text, a voicemail, the contact form): log it as a ticket and confirm its number",
    services=("helpdesk",),
)
def email_to_ticket(s: Scenario) -> None:
    person = s.pick(list(s.world.customers), "no customers")
    problem = s.pick(list(_PROBLEMS), "no problems")
    s.subject = person
    trigger = arrive(s, person, _ask(problem), channels=("email", "sms", "voice", "form"))
    triage = _triage(s, problem, share=1.0)  # the triage rules decide its priority: nothing else in the data does
    requester = their_email(s, trigger)
    how = {"email": "email", "form": "web", "voice": "phone"}.get(trigger.channel)
    ticket = _open_ticket(
        s, trigger, problem, requester, triage[2] if triage else None,
        say=f"log it as a helpdesk ticket under {person.first_name}'s email address" + (f" (channel {how})" if how else "")
            + (", at the priority our triage rules give it" if triage else ""),
    )
    _apply_triage(s, triage, ticket)
    confirm_ticket(s, trigger, ticket, problem.subject)
    s.brief.intro = about(trigger, problem.subject)
    s.brief.goal = f"Get this logged in the helpdesk under {person.first_name}'s own email address and {reply_clause(trigger, 'the ticket number')}"
    s.brief.anchors += [person.name]


@archetype(
    "chat-escalation-to-ticket",
    family="support",
    title="A colleague passes on a customer's call in #support: find the customer in the CRM, open the ticket, answer in the thread",
    services=("chat", "helpdesk", "crm"),
)
def chat_escalation_to_ticket(s: Scenario) -> None:
    contacts = s.records("crm", "contact", where={"archived": False})
    emails = {c["email"]: c for c in contacts}
    people = [p for p in s.world.customers if p.email in emails and sum(c["name"] == p.name for c in contacts) == 1]
    person = s.pick(people, "no customer with a CRM contact")
    contact = emails[person.email]
    s.subject = person
    problem = s.pick(list(_PROBLEMS), "no problems")
    twin = same_name_contact(s, contact, person) if s.rng.random() < 0.6 else None
    trigger = arrive(s, person, _ask(problem), channels=("chat",), relay_by=colleague(s, "account executive"))
    triage = _triage(s, problem)
    # The relay names the caller and their company; the CRM may hold someone else of that name elsewhere.
    found = lookup(s, contact, {"query": person.name, "name": person.name}, say=f"find {person.first_name} in the CRM",
                   name=f"{person.first_name}'s CRM contact")
    if twin is not None:
        s.trap("same-name-contact", twin, f"{twin['name']} of {twin['company_name']}, who has the same name", step=found)
    ticket = _open_ticket(
        s, trigger, problem, found.ref("email"), triage[2] if triage else None,
        say=f"open a ticket for {person.first_name} under their email from the CRM (it came in by phone)"
            + (", at the priority our triage rules give it" if triage else ""),
    )
    _apply_triage(s, triage, ticket)
    sender = trigger.sender
    reply(
        s, trigger, [], say=f"answer {sender.first_name} in the thread with the ticket number",
        facts=[Said("the ticket number", ticket.ref("id"))], mentions=[(ticket.ref("id"), "the ticket number")],
        relay_parts=["Ticket ", ticket.ref("id"), f" is open for {person.first_name}'s problem."],
    )
    # The request says who called, never their company: the message in the channel does (a namesake may be in the CRM).
    s.brief.intro = f"{sender.name} posted in #support {trigger.when} about a call from {person.name}"
    s.brief.goal = (f"Make sure {person.first_name}'s problem is logged as a ticket under their own email address and tell "
                    f"{sender.first_name} the ticket number in the thread")
    s.brief.anchors += [sender.name, person.name]


def same_name_contact(s: Scenario, contact: Rec, person: Person) -> Rec | None:
    """A contact of another company with the caller's name (people share names; the caller's company tells them apart)."""
    companies = [c for c in s.records("crm", "company") if c.key != contact["company_id"]]
    if not companies:
        return None
    other = s.pick(companies, "no other company")
    email = f"{person.first_name}.{person.last_name}@{other['domain']}".lower()
    if s.records("crm", "contact", where={"email": email}) or any(p.email == email for p in s.world.people):
        return None
    return s.copy(contact, email=email, company_id=other.key, phone=None, owner_email=other["owner_email"])


@archetype(
    "text-opt-out",
    family="support",
    title="A customer asks us to stop texting them: opt their mobile out of texts and note it on their CRM contact",
    services=("sms", "crm"),
)
def text_opt_out(s: Scenario) -> None:
    mobiles = {p["phone_number"] for p in s.records("sms", "phone") if p["can_receive_sms"]}
    opted = {o["phone_number"] for o in s.records("sms", "opt_out")}
    contacts = {c["email"]: c for c in s.records("crm", "contact", where={"archived": False})}
    person = s.pick(
        [p for p in s.world.customers if p.email in contacts and contacts[p.email]["phone"] == p.phone
         and p.phone in mobiles and p.phone not in opted],
        "no customer with a mobile in the CRM",
    )
    s.subject = person
    contact = s.record("crm", "contact", contacts[person.email].key)
    # Not the STOP keyword (the carrier handles that by itself): a person asking in their own words.
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice(("Please stop the text messages", "Texts", "No more SMS please")),
        text=s.rng.choice((
            "Could you please stop sending text messages to my mobile? Email is fine, but no more texts.",
            "I keep getting text messages from you on my mobile. Please take my number off your text list.",
        )),
        short=s.rng.choice(("Please stop texting me, thanks.", "Can you take me off your text list?", "No more SMS please")),
        topic="Account and users",
        relay=f"{person.first_name} doesn't want any more text messages from us on their mobile.",
    ))
    found = lookup(s, contact, known_sender(trigger), say=f"find {person.first_name} in the CRM",
                   name=f"{person.first_name}'s CRM contact")
    # A text gives the number; any other channel leaves it to their CRM contact.
    number: Ref = trigger.step.ref("from_number") if trigger.channel == "sms" else found.ref("phone")
    stops = s.records("sms", "opt_out")
    if trigger.channel != "sms" and stops and s.rng.random() < ALREADY_OPTED_OUT:
        _opted_out_already(s, trigger, person, stops[0], number)
        return
    s.decide("premise", f"{person.first_name}'s mobile is still texted", default=True)
    s.call("sms", "add_opt_out", {"phone_number": number, "note": detail(f"Asked by {trigger.channel} not to be texted again")},
           say=f"opt {person.first_name}'s mobile number out of our text messages")
    log(s, found, [f"{person.first_name} asked us ({trigger.channel}) to stop texting them: ", number, " is opted out of SMS."],
        say="note on their CRM contact that the number is opted out of texts", facts=[Said("the opted-out number", number)])
    if trigger.channel != "sms":  # a text back is exactly what they asked us not to send
        reply(s, trigger, [f"Hi {person.first_name},\n\nDone: we will not send any more text messages to ", number, "."],
              say=reply_clause(trigger, "the number we stopped texting"), facts=[Said("the opted-out number", number)],
              subject="Text messages")
    s.brief.intro = f"{trigger.intro} asking us to stop texting them"
    s.brief.goal = f"Make sure we never text {person.first_name} again and that the CRM shows it" + (
        "" if trigger.channel == "sms" else f", then {reply_clause(trigger, 'the number we stopped texting')}")
    s.brief.anchors += [person.name]


#: How often the customer asking us to stop texting them was opted out already (a day or two ago, after the texts
#: they mean): nothing changes, and they hear since when.
ALREADY_OPTED_OUT = 0.4


def _opted_out_already(s: Scenario, trigger: Trigger, person: Person, stop: Rec, number: Ref) -> None:
    """Their number is on the opt-out list already: the agent checks it there, changes nothing and says since when."""
    when = (s.world.now_dt - timedelta(days=s.rng.randint(1, 2), hours=s.rng.randint(1, 6))).strftime("%Y-%m-%dT%H:%M:%SZ")
    planted = s.copy(stop, phone_number=person.phone, source="manual", keyword=None, message_sid=None,
                     note="Asked not to be texted", opted_out_at=when)
    lookup(s, planted, {"phone_number": number}, say=f"check whether {person.first_name}'s number is opted out already")
    s.decide("premise", f"{person.first_name}'s mobile is still texted", default=False)
    s.literal_writes.append(s.spec("sms", "add_opt_out", {"phone_number": number}))
    reply(s, trigger, [f"Hi {person.first_name},\n\nYour number ", number, f" is already opted out of our texts (since "
                       f"{short_date(when)}), so nothing more goes to it; anything you got before then was already on its way."],
          say=reply_clause(trigger, "where things stand with the texts"),
          facts=[Said("the opted-out number", number), Said("that it was opted out already", Lit("already"), "premise")],
          subject="Text messages",
          relay_parts=[f"{person.first_name}'s number ", number, f" is already opted out of our texts (since {short_date(when)}), "
                       "so there was nothing to change. Could you let them know?"])
    s.brief.intro = f"{trigger.intro} asking us to stop texting them"
    s.brief.goal = f"Make sure we never text {person.first_name} again, then {reply_clause(trigger, 'where things stand with the texts')}"
    s.brief.anchors += [person.name]


_BUG_INTAKE = (
    "- Before filing a bug for a customer, search the Platform engineering project (ENG).\n"
    "- If an open ENG issue already covers the problem, do not file a new one: comment on that issue with the "
    "customer's company (and their ticket number, if they opened one).\n"
    "- File a new ENG bug only when no open issue covers it.\n"
    "- Tell the customer the key of the issue that tracks it (on their ticket, if they opened one)."
)


@archetype(
    "bug-report-to-issue",
    family="support",
    title="A customer reports what turns out to be a bug: file it for engineering and tell them it is tracked",
    services=("projects",),
)
def bug_report_to_issue(s: Scenario) -> None:
    person = s.pick(list(s.world.customers), "no customers")
    org = org_of(s, person)
    s.subject = person
    problem = s.pick([p for p in _PROBLEMS if p.bug], "no bugs")
    lead = colleague(s, "engineering lead")
    trigger = arrive(s, person, _ask(problem), channels=CUSTOMER)
    # Engineering may track it already: the intake rules say to search ENG first, and what ENG holds about the same
    # feature (an export that times out is not an export that comes out empty) does not cover this bug.
    covering = [i for i in s.records("projects", "issue", where={"project_key": "ENG"})
                if i["status"] in _OPEN_ISSUE and i["summary"].lower().startswith(problem.subject.lower())]
    if covering:
        raise Skip(f"ENG already tracks {problem.subject!r}")
    rule = consult(s, "Bug intake rules", _BUG_INTAKE, author_role="engineering lead")
    s.decide("rule", "a new ENG bug only when no open ENG issue covers the problem", default=True)
    s.brief.constraints.append(rule.pointer)
    where: list[str | Ref] = [" in helpdesk ticket ", trigger.step.ref("id")] if trigger.channel == "ticket" else [f" by {trigger.channel}"]
    issue = s.call(
        "projects", "create_issue",
        {"project_key": "ENG", "summary": detail(problem.subject), "issue_type": "bug",
         "description": s.text(f"Reported by {person.name} ({org.name})", *where, f": {problem.text}"),
         "priority": detail("high")},
        say="file it as a bug in the Platform engineering project (ENG), naming the customer",
    )
    if trigger.channel == "ticket":  # the reply on the ticket below names the bug's key
        act(s, "update", trigger.step, {"status": "pending", "assignee_email": lead.email},
            say=f"put the ticket on pending and assign it to {lead.name}")
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nThanks for reporting this. Our engineers are looking into it; it is tracked as ",
         issue.ref("id"), ". We'll let you know when it is fixed."],
        say=reply_clause(trigger, "the bug's reference"), facts=[Said("the bug's key", issue.ref("id"))],
        subject=f"Re: {problem.subject}", mentions=[(issue.ref("id"), "the bug's key")],
    )
    s.brief.intro = about(trigger, problem.subject)
    s.brief.goal = (
        "This is a bug: get it to engineering as a bug in the ENG project"
        + (f", leave the ticket pending with {lead.name}" if trigger.channel == "ticket" else "")
        + f", and {reply_clause(trigger, 'the bug reference')}"
    )
    s.brief.anchors += [person.name, "ENG"] + ([lead.name] if trigger.channel == "ticket" else [])


_OPEN_TICKET = ("new", "open", "pending")


@archetype(
    "ticket-fixed-confirmation",
    family="support",
    title="A customer says the problem of one of their tickets is gone: solve that ticket and confirm",
    services=("helpdesk",),
)
def ticket_fixed_confirmation(s: Scenario) -> None:
    tickets = [t for t in s.records("helpdesk", "ticket") if t["status"] in _OPEN_TICKET]
    users = {u.key: u for u in s.records("helpdesk", "user")}
    customers = {p.email: p for p in s.world.customers}
    per_requester: dict[str, list[Rec]] = {}
    for t in tickets:
        per_requester.setdefault(t["requester_id"], []).append(t)
    # One open ticket, or two about different things: the customer's message says which one is fixed.
    fits = [t for t in tickets if users[t["requester_id"]]["email"] in customers and len(per_requester[t["requester_id"]]) <= 2
            and len({o["subject"] for o in per_requester[t["requester_id"]]}) == len(per_requester[t["requester_id"]])]
    ticket = s.pick([t for t in fits if t["status"] != "new"], "no customer with one or two open tickets")
    person = customers[users[ticket["requester_id"]]["email"]]
    s.subject = person
    subject = ticket["subject"]
    trigger = arrive(s, person, Ask(
        subject=f"Re: {subject}",
        text=s.rng.choice((
            f"Just to let you know: the problem from our ticket \"{subject}\" is gone, it works again on our side. "
            "You can close that ticket. Thanks for the help!",
            f"Good news on \"{subject}\": it's working again for us, so that ticket can be closed. Thanks!",
        )),
        short=f"Hi, \"{subject}\" works again for us, you can close that ticket. Thanks!",
        topic="Something else",
        relay=f"the problem of their ticket \"{subject}\" is fixed on their side and that ticket can be closed.",
    ), channels=("email", "sms", "voice", "form", "chat"))
    requester = their_email(s, trigger)
    found = lookup(s, ticket, {"requester_email": requester}, say=f"find the ticket {person.first_name} means in the helpdesk",
                   name=f"the ticket {person.first_name} says is fixed")
    s.refer(ticket, f"the ticket {person.first_name} says is fixed", relation="requester and subject",
            where={"requester_id.email": person.email, "subject": subject, "status": _OPEN_TICKET})
    others = [t for t in per_requester[ticket["requester_id"]] if t.key != ticket.key]
    closed = [t for t in s.records("helpdesk", "ticket", where={"requester_id": ticket["requester_id"]}) if t["status"] in ("solved", "closed")]
    if others:
        s.trap("other-open-ticket", others[0], f"their other open ticket \"{others[0]['subject']}\"", step=found)
    elif closed:
        s.trap("solved-ticket", closed[0], f"their earlier ticket \"{closed[0]['subject']}\"", step=found)
    else:
        raise Skip("no other ticket of theirs to tell the fixed one from")  # the task is telling them apart
    # Solved or closed for good: either wraps it up (whichever tool the agent uses).
    act(s, "update", found, {"status": "solved"}, say=f"solve the ticket {person.first_name} says is fixed",
        accept={"status": ["solved", "closed"]})
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nThanks for letting us know! I have solved ticket ", found.ref("id"),
         f" (\"{subject}\"). Just reply if it comes back."],
        say=reply_clause(trigger, "the number of the ticket you solved"), facts=[Said("the ticket number", found.ref("id"))],
        subject=f"Re: {subject}",
    )
    s.brief.intro = f"{trigger.intro} to say a problem of theirs is fixed"
    s.brief.goal = f"Wrap up the ticket {person.first_name} says is fixed and {reply_clause(trigger, 'the number of the ticket you solved')}"
    if s.traps:
        s.brief.constraints.append("Leave their other tickets as they are")
    s.brief.anchors += [person.name]


#: Customer bugs the support team escalates in the SUP project, by the words of the seeded summaries:
#: (what the summary says after the company, how the customer describes the problem).
_ESCALATED = (
    ("CSV export fails with error 500", "our CSV exports still fail with an error 500"),
    ("dashboard counts order", "the dashboard still counts one of our orders twice"),
    ("Login loop after password reset", "I still can't log in after resetting my password"),
)
_OPEN_ISSUE = ("to_do", "in_progress", "in_review")
_RAISABLE = ("medium", "low", "lowest")


def _escalation_of(issue: Rec) -> str | None:
    """Which known escalation an SUP issue is (None for the rest)."""
    return next((words for words, _ in _ESCALATED if words in issue["summary"]), None)


def _age(s: Scenario, issue: Rec) -> int:
    """Whole days since the issue was opened."""
    return (s.world.now_dt.date() - datetime.strptime(issue["created_at"][:10], "%Y-%m-%d").date()).days


def _near_threshold(s: Scenario, age: int) -> int:
    """A threshold in days near ``age`` on either side, never equal to it (the rule must decide, by a little)."""
    options = [d for d in (7, 10, 14, 15, 20, 21, 25, 28, 30, 35, 40, 42, 45, 50, 56, 60, 75, 90)
               if 1 <= abs(age - d) <= max(6, age // 3)]
    near = [d for d in options if near_threshold(age, d)]
    return int(s.pick(near or options, "the escalation's age is near no threshold"))  # by a little wherever it can


@archetype(
    "bug-status-chase",
    family="support",
    title="A customer chases the bug they reported: find its escalation, raise it as the escalation rules say, reply",
    services=("projects",),
)
def bug_status_chase(s: Scenario) -> None:
    issues = s.records("projects", "issue", where={"project_key": "SUP", "issue_type": "bug"})
    live = [i for i in issues if i["status"] in _OPEN_ISSUE]
    candidates = []
    for issue in live:
        kind = _escalation_of(issue)
        person = next((p for p in s.world.customers if p.email in issue["description"] or p.email in issue["summary"]), None)
        if kind is None or person is None or issue["priority"] not in _RAISABLE:
            continue
        theirs = [i for i in live if person.email in i["description"] or person.email in i["summary"]]
        twins = [i for i in live if i["summary"] == issue["summary"]]
        if len(theirs) == 1 and len(twins) == 1:
            candidates.append((issue, person, kind))
    # An escalation ten days old or more can sit a day or two from the rule's line (a younger one is always far from it).
    old_enough = [c for c in candidates if _age(s, c[0]) >= 10]
    issue, person, kind = s.pick(old_enough if old_enough and s.rng.random() < 0.8 else candidates,
                                 "no customer with exactly one open bug escalation")
    org = org_of(s, person)
    s.subject = person
    problem = next(words for summary, words in _ESCALATED if summary == kind)
    order = re.search(r"ORD-\d+", issue["summary"])
    if order:  # the customer names the order their dashboard counts twice
        problem = problem.replace("one of our orders", f"order {order.group()}")
    age = _age(s, issue)
    days = _near_threshold(s, age)
    priority = "highest" if age >= days else "high"
    s.decide("rule", "a chased bug open long enough goes to highest", default=priority == "high", value=age, threshold=days)
    rule = consult(
        s, "Customer bug escalation rules",
        "- When a customer chases a bug we track in the SUP project, comment on the issue that they asked for news, "
        "naming their company.\n"
        f"- Then raise its priority: to **high** if the issue was opened less than {days} days ago, to **highest** if it "
        f"has been open {days} days or more. Never lower a priority.\n"
        "- Reply to the customer with the priority the bug now has.",
        author_role="support lead",
    )
    third = problem.replace("our ", "their ").replace("I still can't", "they still can't").replace("my ", "their ")
    trigger = arrive(s, person, Ask(
        subject="Any news on our bug?",
        text=f"A while ago we reported that {problem}. Is there any news? We'd like to know when to expect a fix.",
        short=f"Any news on the bug we reported? {problem[0].upper() + problem[1:]}.",
        topic="Technical problem",
        relay=f"they reported a while ago that {third} and would like news on a fix.",
    ))
    found = lookup(s, issue, {"text": kind},
                   say=f"find the SUP escalation of the bug {person.first_name} reported (it names them)",
                   name=f"the escalation of {person.first_name}'s bug")
    s.refer(issue, f"the escalation of {person.first_name}'s bug", relation="mentions the customer",
            where={"project_key": "SUP", "summary": issue["summary"], "status": _OPEN_ISSUE})
    others = [i for i in live if _escalation_of(i) == kind and i.key != issue.key]
    if others:
        twin = s.pick(others, "no twin")
        s.trap("other-customer-bug", twin, f"{twin.key}, the same bug reported by another customer", step=found)
    log(s, found, [f"{person.name} ({org.name}) asked today for news on this."],
        say=f"comment on the escalation of {person.first_name}'s bug that they asked for news",
        facts=[Said("the customer's company", Lit(org.name))],
        stage="act")
    raised = act(s, "update", found, {"priority": priority}, say="raise its priority as our escalation rules say")
    s.set_policy(rule.rec, f"a chased bug open {days} days or more goes to highest, a newer one to high", raised, "priority",
                 priority, "high" if priority == "highest" else "highest", "The priority is raised as the escalation rules say")
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nThanks for checking in. The bug is with our engineers and I've raised it to "
         f"{priority} priority; we'll let you know as soon as the fix is out."],
        say=reply_clause(trigger, "the priority the bug now has"), facts=[Said("the bug's new priority", Lit(priority))],
        subject="Re: Any news on our bug?",
    )
    s.brief.intro = about(trigger, "Any news on our bug?", "chasing a bug they reported")
    s.brief.goal = (
        f"Find the escalation of {person.first_name}'s bug in the tracker and handle the chase as our escalation rules say, "
        f"then {reply_clause(trigger, 'where it stands')}"
    )
    s.brief.constraints += [rule.pointer, "Leave other customers' escalations alone"]
    s.brief.anchors += [person.name]


#: Engineering's recurring bugs (seeded ENG summaries "<words> in <area>"): the words to search for,
#: and the customer's report of it (subject, description with {area}).
_KNOWN_BUGS = (
    ("Fix CSV export timeout in ", "CSV export timeout", "CSV exports time out",
     "Exports of more than 10,000 rows from {area} stop after about 30 seconds with a timeout. Smaller exports work fine."),
    ("Rate limiter counts retries twice in ", "rate limiter retries", "Retries use up our API quota",
     "Our integration retries failed requests to {area}, and every retry seems to count twice against our quota, so we "
     "get HTTP 429 long before we should."),
    ("Revenue widget ignores refunds in ", "revenue widget refunds", "Revenue includes refunded orders",
     "The revenue widget in {area} still counts orders we refunded, so our revenue looks too high."),
)
_AREAS = {"admin console": "the admin console", "mobile app": "the mobile app", "public API": "the public API",
          "reports": "the reports", "billing": "billing", "orders": "orders", "search": "search", "notifications": "notifications"}


def _third_person(text: str) -> str:
    """A customer's first-person report as a colleague passes it on."""
    for ours, theirs in (("Our ", "Their "), (" our ", " their "), (" we ", " they "), (" us ", " them ")):
        text = text.replace(ours, theirs)
    return text[0].lower() + text[1:]


@archetype(
    "known-bug-ticket",
    family="support",
    title="A customer reports a bug engineering already tracks: add them to the open issue instead of filing a new one",
    services=("projects",),
)
def known_bug_ticket(s: Scenario) -> None:
    live = [i for i in s.records("projects", "issue", where={"project_key": "ENG", "issue_type": "bug"}) if i["status"] in _OPEN_ISSUE]
    candidates = []
    for issue in live:
        bug = next((b for b in _KNOWN_BUGS if issue["summary"].startswith(b[0])), None)
        area = issue["summary"][len(bug[0]):] if bug else ""
        if bug and area in _AREAS and [i["summary"] for i in live].count(issue["summary"]) == 1:
            candidates.append((issue, bug, area))
    issue, (prefix, words, subject, description), area = s.pick(candidates, "no open engineering bug a customer could hit")
    person = s.pick(list(s.world.customers), "no customers")
    org = org_of(s, person)
    s.subject = person
    text = description.format(area=_AREAS[area])
    rule = consult(s, "Bug intake rules", _BUG_INTAKE, author_role="engineering lead")
    trigger = arrive(s, person, Ask(subject=subject, text=text, short=text, topic="Technical problem", relay=_third_person(text)))
    found = lookup(s, issue, {"text": words},
                   say=f"look in the ENG project for an open bug that covers it (it is about {area})", name="the open ENG bug about it")
    s.refer(issue, "the open ENG bug about it", relation="same problem",
            where={"project_key": "ENG", "summary": issue["summary"], "status": _OPEN_ISSUE})
    twins = [i for i in live if i["summary"].startswith(prefix) and i.key != issue.key]
    if twins:
        twin = s.pick(twins, "no twin")
        s.trap("other-area-bug", twin, f"{twin.key}, the same bug in {twin['summary'][len(prefix):]}", step=found)
    ticket = trigger.channel == "ticket"
    comment = log(
        s, found,
        [f"Also hit by {person.name} ({org.name})", *((", helpdesk ticket ", trigger.step.ref("id")) if ticket else ()), "."],
        say=f"comment on the open ENG bug that covers it that {org.name} is affected too" + (", with the ticket number" if ticket else ""),
        facts=[Said("the customer's company", Lit(org.name))], stage="act",
    )
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nThanks for reporting this. It is a known problem our engineers are already working on "
         "(tracked as ", found.ref("key"), "); we'll let you know as soon as it is fixed."],
        say=reply_clause(trigger, "the key of the issue that tracks it"), facts=[Said("the issue key", found.ref("key"))],
        subject=f"Re: {subject}",
    )
    filed = s.spec("projects", "create_issue", {
        "project_key": "ENG", "summary": subject, "issue_type": "bug", "description": f"Reported by {person.name} ({org.name}): {text}",
    })
    violation = [filed if j == comment.index else spec for j, spec in enumerate(s.specs)]
    s.forbid_by_policy(rule.rec, "no new ENG bug when an open issue already covers the problem", comment, violation,
                       ("projects", "issues", {"project_key": "ENG", "created_at": s.world.now}),
                       "No duplicate bug was filed in ENG")
    s.brief.intro = about(trigger, subject)
    s.brief.goal = (
        f"Make sure engineering knows {org.name} is affected" + (", with the ticket number" if ticket else "")
        + f"; {reply_clause(trigger, 'the key of the issue that tracks it')}"
        + (" and leave the ticket open" if ticket else "")
    )
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [person.name, org.name]
