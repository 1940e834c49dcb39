"""Support workflows: requests that arrive by email, chat or text become tickets, replies and fixes."""

from __future__ import annotations

import re
from datetime import datetime

from composer.archetypes.common import (
    chat_post,
    maybe_log_in_crm,
    colleague,
    inbound_email,
    inbound_text,
    inbound_ticket,
    org_of,
    policy_document,
    rule_source,
    signature,
)
from composer.plan import Ref
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
    for t in s.records("helpdesk", "ticket"):  # every unsolved ticket counts: "their open ticket" is one of these
        if t["status"] in ("new", "open", "pending"):
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


@archetype(
    "bug-status-chase",
    family="support",
    title="A customer chases the bug they reported: find its escalation, raise it as the escalation rules say, reply",
    services=("projects", "mailbox"),
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
    issue, person, kind = s.pick(candidates, "no customer with exactly one open bug escalation")
    org = org_of(s, person)
    s.subject = person
    problem = next(words for summary, words in _ESCALATED if summary == kind)
    order = re.search(r"ORD-\d+", issue["summary"])
    if order:  # the customer names the order their dashboard counts twice
        problem = problem.replace("one of our orders", f"order {order.group()}")
    age = (s.world.now_dt.date() - datetime.strptime(issue["created_at"][:10], "%Y-%m-%d").date()).days
    days = s.pick([d for d in (7, 14, 21, 30, 45) if abs(age - d) >= 3], "the escalation's age is too close to every threshold")
    priority = "highest" if age >= days else "high"
    document, pointer = rule_source(
        s, "Customer bug escalation rules",
        "- When a customer chases a bug we track in the SUP project, comment on the issue that they asked for news.\n"
        f"- Then raise its priority: to **high** if the issue was opened less than {days} days ago, to **highest** if it "
        f"has been open {days} days or more. Never lower a priority.\n- Reply to the customer with where the bug stands.",
        author_role="support lead",
    )
    email, when = inbound_email(
        s, person, "Any news on our bug?",
        f"Hi,\n\nA while ago we reported that {problem}. Is there any news? We'd like to know when to expect a fix.\n\n"
        f"Thanks,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call(
        "projects", "search_issues", {"project_key": "SUP", "text": kind}, select=issue,
        say=f"find the SUP escalation of the bug {person.first_name} reported (it names them or their company)",
    )
    s.refer(issue, f"the escalation of {person.first_name}'s bug", relation="mentions the customer",
            where={"project_key": "SUP", "summary": issue["summary"], "status": _OPEN_ISSUE})
    others = [i for i in live if _escalation_of(i) == kind and i.key != issue.key]
    if others:
        twin = s.pick(others, "no twin")
        s.trap("other-customer-bug", twin, f"{twin.key}, the same bug reported by another customer", step=found)
    s.call(
        "projects", "add_comment",
        {"issue_key": found.ref("key"), "body": detail(f"{person.name} ({org.name}) emailed today asking for news on this.")},
        say=f"comment on it that {person.first_name} asked for news",
    )
    raised = s.call(
        "projects", "edit_issue", {"issue_key": found.ref("key"), "priority": priority},
        say="raise its priority as our escalation rules say",
    )
    s.set_policy(document, f"a chased bug open {days} days or more goes to highest, a newer one to high", raised, "priority",
                 priority, "high" if priority == "highest" else "highest", "The priority is raised as the escalation rules say")
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": detail(
            f"Hi {person.first_name},\n\nThanks for checking in. The bug is with our engineers and I've raised its priority; "
            "we'll let you know as soon as the fix is out.")},
        say=f"reply to {person.first_name} with where the bug stands",
    )
    s.brief.intro = f"{person.name} from {org.name} emailed {when} chasing a bug they reported"
    s.brief.goal = (
        f"Find the escalation of {person.first_name}'s bug in the tracker, comment on it that they chased, give it the priority "
        f"our escalation rules call for, and reply to {person.first_name} with where it stands"
    )
    s.brief.constraints += [pointer, "Leave other customers' escalations alone"]
    s.brief.anchors += [person.name]


#: Engineering's recurring bugs (seeded ENG summaries "<words> in <area>"): the words to search for,
#: and the customer's ticket about it (subject, description with {area}).
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


@archetype(
    "known-bug-ticket",
    family="support",
    title="A customer's ticket reports a bug engineering already tracks: add them to the open issue instead of filing a new one",
    services=("helpdesk", "projects"),
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
    ticket, when = inbound_ticket(s, person, subject, description.format(area=_AREAS[area]), channel="web")
    s.refer(ticket, f"{person.first_name}'s new ticket", relation="requester",
            where={"requester_id.email": person.email, "status": "new"}, latest="created_at")
    document, pointer = rule_source(
        s, "Bug intake rules",
        "- Before filing a bug for a customer, search the Platform engineering project (ENG).\n"
        "- If an open ENG issue already covers the problem, do not file a new one: comment on that issue with the "
        "customer's company and ticket number, and note the issue key on the ticket.\n"
        "- File a new ENG bug only when no open issue covers it.",
        author_role="engineering lead",
    )
    read = s.call("helpdesk", "get_ticket", {"ticket_id": ticket.key}, say=f"read {person.first_name}'s ticket")
    found = s.call("projects", "search_issues", {"project_key": "ENG", "text": words}, select=issue,
                   say=f"look in the ENG project for an open bug that covers it (it is about {area})")
    s.refer(issue, "the open ENG bug about it", relation="same problem",
            where={"project_key": "ENG", "summary": issue["summary"], "status": _OPEN_ISSUE})
    twins = [i for i in live if i["summary"].startswith(prefix) and i.key != issue.key]
    if twins:
        twin = s.pick(twins, "no twin")
        s.trap("other-area-bug", twin, f"{twin.key}, the same bug in {twin['summary'][len(prefix):]}", step=found)
    comment = s.call(
        "projects", "add_comment",
        {"issue_key": found.ref("key"), "body": s.text(f"Also hit by {person.name} ({org.name}), helpdesk ticket ", read.ref("id"), ".")},
        say=f"comment on that issue that {org.name} is affected too, with the ticket number",
        mentions=[(read.ref("id"), "the ticket number")],
    )
    s.call(
        "helpdesk", "add_ticket_note",
        {"ticket_id": ticket.key, "note": s.text("Known bug, tracked by engineering as ", found.ref("key"), ".")},
        say="note the issue's key on the ticket",
        mentions=[(found.ref("key"), "the issue key")],
    )
    s.call(
        "helpdesk", "add_ticket_reply",
        {"ticket_id": ticket.key, "status": "open", "body": detail(
            f"Hi {person.first_name},\n\nThanks for reporting this. It is a known problem our engineers are already working on; "
            "we'll let you know here as soon as it is fixed.")},
        say=f"reply to {person.first_name} that engineering is already on it, keeping the ticket open (it is not fixed yet)",
        accept={"status": ["open", "pending"]},
    )
    filed = s.spec("projects", "create_issue", {
        "project_key": "ENG", "summary": subject, "issue_type": "bug",
        "description": s.text(f"Reported by {person.name} ({org.name}) in helpdesk ticket ", Ref(0, "id"), "."),
    })
    violation = [s.specs[0], s.specs[1], filed, s.specs[3].with_arg("note", s.text("Filed for engineering as ", Ref(2, "key"), ".")), s.specs[4]]
    s.forbid_by_policy(document, "no new ENG bug when an open issue already covers the problem", comment, violation,
                       ("projects", "issues", {"project_key": "ENG", "created_at": s.world.now}),
                       "No duplicate bug was filed in ENG")
    s.brief.intro = f"{person.name} from {org.name} opened a ticket {when}: \"{subject}\""
    s.brief.goal = (
        f"Make sure engineering knows {org.name} is affected, with the ticket number, and that the ticket shows the issue key; "
        f"reply to {person.first_name} that engineering is on it and leave the ticket open"
    )
    s.brief.constraints.append(pointer)
    s.brief.anchors += [person.name, org.name]
