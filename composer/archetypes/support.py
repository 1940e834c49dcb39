"""Support workflows: requests that arrive by email, chat or text become tickets, replies and fixes."""

from __future__ import annotations

from composer.archetypes.common import (
    chat_post,
    maybe_log_in_crm,
    colleague,
    inbound_email,
    inbound_text,
    inbound_ticket,
    org_of,
    policy_document,
    signature,
)
from composer.scenario import Rec, Scenario, Skip, archetype, detail

_PROBLEMS = (
    ("CSV export is empty", "Since yesterday every CSV export we download from the reports page is empty. We need it for our month-end close."),
    ("Cannot log in after password reset", "I reset my password this morning and now the login page just reloads. Could you help?"),
    ("Invoice PDF shows the wrong address", "The PDF of our latest invoice still shows our old office address. Can that be corrected?"),
    ("Users cannot be added", "When I try to add a new user to our workspace I get an error saying the seat limit is reached, but we have seats left."),
    ("Report dashboard is very slow", "The reporting dashboard has been taking over a minute to load all week. It used to be instant."),
    ("Webhook deliveries failing", "Our webhook endpoint has stopped receiving events since Monday; the delivery log shows timeouts."),
)


def _triage_priority(subject: str) -> str:
    return "high" if any(word in subject.lower() for word in ("log in", "export", "webhook")) else "normal"


def _triage_rules(s: Scenario) -> Rec:
    lead = s.world.team_member("support lead")
    return policy_document(
        s,
        "Support triage rules",
        "- Anything that blocks a customer from logging in or from getting their data out (exports, webhooks) is "
        f"**high** priority.\n- Everything else starts at **normal**; {lead.name} re-triages weekly.",
    )


@archetype(
    "email-to-ticket",
    family="support",
    title="A customer reports a problem by email: log it as a ticket and confirm with its number",
    services=("helpdesk", "mailbox"),
)
def email_to_ticket(s: Scenario) -> None:
    person = s.pick([p for p in s.world.customers], "no customers")
    org = org_of(s, person)
    subject, problem = s.pick(list(_PROBLEMS), "no problems")
    body = f"Hi support,\n\n{problem}\n\nThanks,\n{signature(person, org)}"
    email, when = inbound_email(s, person, subject, body)
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    policy = s.has("files") and s.rng.random() < 0.55
    priority = "normal"
    if policy:
        document = _triage_rules(s)
        priority = _triage_priority(subject)
        if priority != "high":
            s.policy_documents.append(document)
    ticket = s.call(
        "helpdesk", "create_ticket",
        {
            "requester_email": person.email, "requester_name": person.name, "subject": detail(subject),
            "description": detail(problem), "channel": detail("email"), "priority": priority if policy else detail(priority),
        },
        say=f"open a helpdesk ticket for {person.first_name} with the subject and text of the email" +
            (f", at {priority} priority as our triage rules say" if policy else ""),
    )
    if policy and priority == "high":
        s.set_policy(document, "blocking problems are high priority", ticket, "priority", "high", "normal",
                     "The ticket's priority follows the triage rules")
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": s.text(
            f"Hi {person.first_name},\n\nThanks for letting us know. We have logged this as ticket ", ticket.ref("id"),
            " and will update you there.")},
        say=f"reply to {person.first_name} with the ticket number",
        mentions=[(ticket.ref("id"), "the ticket number")],
    )
    logged = maybe_log_in_crm(s, person, "Reported a problem, helpdesk ticket", ticket.ref("id"), "the ticket number")
    s.brief.intro = f"{person.name} ({org.name}) emailed support {when} about \"{subject}\""
    s.brief.goal = f"Get this logged in the helpdesk and let {person.first_name} know the ticket number" + (
        ", and put the ticket number on their CRM contact" if logged else "")
    if policy:
        s.brief.constraints.append("Triage it by the rules in our shared drive")
    s.brief.anchors += [person.name]


@archetype(
    "chat-escalation-to-ticket",
    family="support",
    title="A colleague passes on a customer's problem in #support: open the ticket and answer in the thread",
    services=("chat", "helpdesk", "crm"),
)
def chat_escalation_to_ticket(s: Scenario) -> None:
    contacts = s.records("crm", "contact", where={"archived": False})
    contact = s.pick([c for c in contacts], "no crm contacts")
    person = s.person(contact["email"])
    agent = colleague(s, "account executive")
    subject, problem = s.pick(list(_PROBLEMS), "no problems")
    post, when = chat_post(
        s, agent, "support",
        f"{person.name} from {contact['company_name']} just called me: {problem[0].lower() + problem[1:]} "
        "Can someone open a ticket for them?",
    )
    s.refer(post, f"{agent.first_name}'s message in #support", relation="author", where={"author_email": agent.email}, latest="posted_at")
    found = s.call(
        "crm", "search_contacts", {"query": person.name}, select=contact,
        say=f"find {person.first_name}'s email address in the CRM",
    )
    same_name = [c for c in contacts if c["name"] == contact["name"] and c.key != contact.key]
    if same_name:
        raise Skip("two contacts share the name")
    triage = s.has("files") and s.rng.random() < 0.5
    priority = _triage_priority(subject)
    if triage:
        document = _triage_rules(s)
    ticket = s.call(
        "helpdesk", "create_ticket",
        {"requester_email": found.ref("email"), "requester_name": detail(person.name), "subject": detail(subject),
         "description": detail(problem), "channel": detail("phone"), "priority": priority if triage else detail("normal")},
        say=f"open a ticket for {person.first_name} about it (it came in by phone)" + (", triaged by our rules" if triage else ""),
    )
    if triage:
        if priority == "high":
            s.set_policy(document, "blocking problems are high priority", ticket, "priority", "high", "normal",
                         "The ticket's priority follows the triage rules")
        else:
            s.policy_documents.append(document)
        s.brief.constraints.append("Triage it by the rules in our shared drive")
    s.call(
        "chat", "reply_in_thread",
        {"message_id": post.key, "text": s.text("Ticket ", ticket.ref("id"), " is open for this.")},
        say=f"reply to {agent.first_name} in the thread with the ticket number",
        mentions=[(ticket.ref("id"), "the ticket number")],
    )
    s.brief.intro = f"{agent.name} posted in #support {when} about a call from {person.name}"
    s.brief.goal = f"Make sure {person.first_name}'s problem is logged as a ticket under their own email and tell {agent.first_name} the ticket number in the thread"
    s.brief.anchors += [person.name, agent.name]


@archetype(
    "text-opt-out",
    family="support",
    title="A customer texts STOP: record the opt-out and note it on their CRM record",
    services=("sms", "crm"),
)
def text_opt_out(s: Scenario) -> None:
    mobiles = {p["phone_number"] for p in s.records("sms", "phone") if p["can_receive_sms"]}
    opted = {o["phone_number"] for o in s.records("sms", "opt_out")}
    contacts = {c["phone"]: c for c in s.records("crm", "contact", where={"archived": False}) if c["phone"]}
    person = s.pick(
        [p for p in s.world.customers if p.phone in contacts and p.phone in mobiles and p.phone not in opted],
        "no customer with a mobile in the CRM",
    )
    contact = s.record("crm", "contact", contacts[person.phone]["id"])
    # Not the STOP keyword (the carrier handles that by itself): a person asking in their own words.
    text, when = inbound_text(
        s, person, s.rng.choice(("Please stop texting me, thanks.", "Can you take me off your text list?", "No more SMS please"))
    )
    s.refer(text, f"the text from {person.first_name}", relation="sender", where={"from_number": person.phone}, latest="date_created")
    s.call(
        "sms", "add_opt_out", {"phone_number": person.phone, "note": detail("Asked by text not to be texted again")},
        say=f"opt {person.first_name}'s number out of our text messages",
    )
    found = s.call("crm", "search_contacts", {"query": person.name}, select=contact, say=f"find {person.first_name} in the CRM")
    s.call(
        "crm", "add_note",
        {"entity_type": "contact", "entity_id": found.ref("id"), "body": detail("Asked us by text to stop sending SMS; opted out.")},
        say="note on their CRM contact that they asked not to be texted",
    )
    s.brief.intro = f"{person.name} texted our number {when} asking us to stop"
    s.brief.goal = f"Make sure we never text {person.first_name} again and that the CRM shows why"
    s.brief.anchors += [person.name]


@archetype(
    "bug-report-to-issue",
    family="support",
    title="A customer's ticket turns out to be a bug: file it for engineering and link the two",
    services=("helpdesk", "projects"),
)
def bug_report_to_issue(s: Scenario) -> None:
    person = s.pick(list(s.world.customers), "no customers")
    org = org_of(s, person)
    subject, problem = s.pick([p for p in _PROBLEMS if "slow" in p[0].lower() or "failing" in p[0].lower() or "empty" in p[0].lower()], "no bugs")
    ticket, when = inbound_ticket(s, person, subject, problem, channel="web")
    s.refer(ticket, f"{person.first_name}'s new ticket", relation="requester", where={"requester_id.email": person.email, "status": "new"}, latest="created_at")
    lead = colleague(s, "engineering lead")
    issue = s.call(
        "projects", "create_issue",
        {"project_key": "ENG", "summary": subject, "issue_type": "bug",
         "description": s.text(f"Reported by {person.name} ({org.name}) in helpdesk ticket ", ticket.key, f": {problem}"),
         "priority": detail("high")},
        say="file a bug in the Platform engineering project (ENG) with the ticket's subject as its summary, naming the ticket in the description",
    )
    s.call(
        "helpdesk", "add_ticket_note",
        {"ticket_id": ticket.key, "note": s.text("Filed for engineering as ", issue.ref("key"), ".")},
        say="leave an internal note on the ticket with the bug's key",
        mentions=[(issue.ref("key"), "the bug's key")],
    )
    s.call(
        "helpdesk", "update_ticket", {"ticket_id": ticket.key, "status": "pending", "assignee_email": lead.email},
        say=f"put the ticket on pending and assign it to {lead.name}",
    )
    s.brief.intro = f"{person.name} from {org.name} opened a ticket {when}: {subject.lower()}"
    s.brief.goal = (
        f"This is a bug: get it to engineering as a bug in the ENG project with the ticket's subject as summary, "
        f"note the bug's key on the ticket, and leave the ticket pending with {lead.name}"
    )
    s.brief.anchors += [person.name, lead.name, "ENG"]


@archetype(
    "ticket-fixed-confirmation",
    family="support",
    title="A customer confirms by email that their problem is gone: reply on the ticket and solve it",
    services=("helpdesk", "mailbox"),
)
def ticket_fixed_confirmation(s: Scenario) -> None:
    tickets = [t for t in s.records("helpdesk", "ticket") if t["status"] in ("open", "pending")]
    users = {u.key: u for u in s.records("helpdesk", "user")}
    per_requester: dict[str, int] = {}
    for t in tickets:
        per_requester[t["requester_id"]] = per_requester.get(t["requester_id"], 0) + 1
    fits = [t for t in tickets if per_requester[t["requester_id"]] == 1 and any(p.email == users[t["requester_id"]]["email"] for p in s.world.customers)]
    ticket = s.pick(fits, "no customer with exactly one open ticket")
    person = s.person(users[ticket["requester_id"]]["email"])
    org = org_of(s, person)
    email, when = inbound_email(
        s, person, f"Re: {ticket['subject']}",
        f"Hi,\n\nJust to let you know: this works again on our side, so you can close my ticket. Thanks for the help!\n\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call("helpdesk", "search_tickets", {"requester_email": person.email}, select=ticket,
                   say=f"find {person.first_name}'s open ticket in the helpdesk")
    s.refer(ticket, f"{person.first_name}'s open ticket", relation="requester",
            where={"requester_id.email": person.email, "status": ("new", "open", "pending")})
    closed = [t for t in s.records("helpdesk", "ticket") if t["requester_id"] == ticket["requester_id"] and t["status"] in ("solved", "closed")]
    if closed:
        s.trap("solved-ticket", closed[0], f"their earlier ticket \"{closed[0]['subject']}\"", step=found)
    s.call("helpdesk", "solve_ticket",
           {"ticket_id": found.ref("id"), "comment": detail(f"Thanks {person.first_name}, glad it works again - solving this now.")},
           say="solve it with a short public reply")
    s.brief.intro = f"{person.name} from {org.name} emailed {when} to say their problem is fixed"
    s.brief.goal = f"Wrap up {person.first_name}'s open ticket accordingly, with a short reply to them on it"
    s.brief.anchors += [person.name]
