"""Engagement workflows: what voicemails, missed calls, webinars and email campaigns start.

Support and sales work that begins on the phone (a voicemail asking for a call back, a billing complaint
left on the billing line, a missed call from a key account), the follow-up of a webinar, meetings
customers move, and marketing's own work under its rules (consent, segments, how often an audience
may be emailed). The services: ``voice`` (Aircall), ``meetings`` (Zoom), ``tasks`` (Asana) and
``marketing`` (Mailchimp), with the CRM, the mailbox, the helpdesk and chat.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from composer.archetypes.common import (
    chat_post,
    colleague,
    inbound_email,
    org_of,
    policy_email,
    recent_hours,
    rule_source,
    signature,
    when_phrase,
)
from composer.plan import ListOf, Lit
from composer.scenario import Rec, Scenario, Skip, archetype, detail
from mcp_services.kernel.world import Person

# -- small facts people use --------------------------------------------------------------------------


def _dt(iso: str) -> datetime:
    return datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _spoken(iso: str) -> str:
    """``2025-03-14T15:30:00Z`` -> ``Friday 14 March at 15:30 UTC``."""
    moment = _dt(iso)
    return f"{moment:%A} {moment.day} {moment:%B} at {moment:%H:%M} UTC"


def _day(iso: str) -> str:
    moment = _dt(iso)
    return f"{moment:%A} {moment.day} {moment:%B}"


def _working_day(s: Scenario, ahead: int) -> datetime:
    """The ``ahead``-th working day after today (1: the next one), at midnight UTC."""
    day = s.world.now_dt.replace(hour=0, minute=0, second=0, microsecond=0)
    while ahead > 0:
        day += timedelta(days=1)
        if day.weekday() < 5:
            ahead -= 1
    return day


def _rules(s: Scenario, title: str, text: str, *, author_role: str) -> tuple[Rec, str]:
    """Where a rule lives: ``rule_source`` (a shared-drive document or a manager's email).

    Workaround: ``rule_source`` tries the drive whenever a ``files`` service is mounted, and skips the
    candidate where that service has no ``document_added`` event yet; then the rule comes by email.
    """
    files = s.catalog.services.get("files")
    if files is None or "document_added" in files.events or not s.has("mailbox"):
        return rule_source(s, title, text, author_role=author_role)
    manager = s.world.team_member(author_role)
    message = policy_email(s, manager, title, f"Hi all,\n\nA reminder of our {title.lower()}:\n\n{text}\n\nThanks,\n{manager.name}")
    return message, f"Stick to the {title.lower()} {manager.first_name} emailed the team"


def _asks(s: Scenario, author: Person, channel: str, text: str) -> tuple[Rec, str]:
    """A colleague's request in a channel, posted after anything else they wrote there (so "their message" is this one)."""
    channels = s.records("chat", "channel", where={"name": channel})
    if not channels:
        raise Skip(f"no #{channel} channel")
    theirs = [m["posted_at"] for m in s.records("chat", "message", where={"channel_id": channels[0].key})
              if m["author_email"] == author.email]
    hours = recent_hours(s)
    if theirs:
        gap = (s.world.now_dt - _dt(max(theirs))).total_seconds() / 3600
        if gap < 0.2:
            raise Skip(f"{author.name} posted in #{channel} a moment ago")
        hours = min(hours, round(gap / 2, 2))
    post, when = chat_post(s, author, channel, text, hours_ago=hours)
    s.refer(post, f"{author.first_name}'s message in #{channel}", relation="author",
            where={"author_email": author.email, "channel_id": post["channel_id"]}, latest="posted_at")
    return post, when


def _callers(s: Scenario) -> list[tuple[Person, Rec, Rec]]:
    """Customers in the phone book and in the CRM (one contact of that name), with their phone-book and CRM records."""
    book = {c["phone_number"]: c for c in s.records("voice", "contact")}
    contacts = s.records("crm", "contact", where={"archived": False})
    names = [c["name"] for c in contacts]
    by_email = {c["email"]: c for c in contacts}
    found = []
    for person in s.world.customers:
        contact = by_email.get(person.email)
        if person.phone in book and contact is not None and names.count(contact["name"]) == 1:
            found.append((person, book[person.phone], contact))
    return found


def _voicemail(s: Scenario, person: Person, transcript: str, team: str, hours_ago: float) -> Rec:
    return s.event("voice", "voicemail_left", "call", from_number=person.phone, transcript=transcript, team=team,
                   hours_ago=hours_ago)


# -- support ---------------------------------------------------------------------------------------------

_CALLBACK_ASKS = (
    "Hi, this is {first} from {company}. I have a few questions about {topic} and it's easier to talk it through. "
    "Could we do a quick call on {when}? Thanks.",
    "Hello, {first} at {company} here. We'd like to go over {topic} with someone on your side. Would {when} work "
    "for a short video call? Talk soon.",
)
_CALLBACK_TOPICS = ("adding seats to our plan", "the reporting setup", "our renewal next quarter", "the data migration")


@archetype(
    "voicemail-callback-meeting",
    family="support",
    title="A customer leaves a voicemail asking for a call at a time: book it as a Zoom call, send the link, close the voicemail",
    services=("voice", "crm", "meetings", "mailbox"),
)
def voicemail_callback_meeting(s: Scenario) -> None:
    person, _book, contact = s.pick(_callers(s), "no customer in both the phone book and the CRM")
    org = org_of(s, person)
    s.subject = person
    day = _working_day(s, s.rng.choice((1, 2)))
    start = _iso(day.replace(hour=s.rng.choice((14, 15, 16, 17)), minute=s.rng.choice((0, 30))))
    facts = {"first": person.first_name, "company": org.name, "topic": s.rng.choice(_CALLBACK_TOPICS), "when": _spoken(start)}
    earlier = _voicemail(s, person, "Hi, it's {first} from {company}, just checking you got my email from last week. "
                         "No rush.".format(**facts), "Sales", hours_ago=24.0 * s.rng.randint(2, 5) + 3)
    hours = recent_hours(s)
    call = _voicemail(s, person, s.rng.choice(_CALLBACK_ASKS).format(**facts), "Sales", hours_ago=hours)
    s.trigger = call
    when = when_phrase(s, hours)
    s.refer(call, f"the voicemail {person.first_name} left {when}", relation="caller",
            where={"from_number": person.phone, "outcome": "voicemail"}, latest="started_at")
    policy = s.rng.random() < 0.6
    minutes = int(s.rng.choice((15, 20, 45))) if policy else 30
    if policy:
        document, pointer = _rules(
            s, "Callback rules",
            f"- Return every voicemail the same working day.\n- When a caller asks for a call at a given time, book a Zoom "
            f"call of {minutes} minutes at that time, hosted by you, with the caller invited, and email them the join link.\n"
            "- Mark the voicemail done once the call is booked.",
            author_role="support lead",
        )
    found = s.call("voice", "list_calls", {"outcome": "voicemail", "archived": False}, select=call,
                   say=f"find {person.first_name}'s voicemail in the phone system")
    s.trap("older-voicemail", s.record("voice", "call", earlier.key), f"{person.first_name}'s older voicemail", step=found)
    crm = s.call("crm", "search_contacts", {"query": person.name}, select=contact,
                 say=f"look up {person.first_name}'s email address in the CRM")
    meeting = s.call(
        "meetings", "create_meeting",
        {"topic": detail(f"Call with {person.name} ({org.name})"), "start_time": start,
         "duration": minutes if policy else detail(minutes), "invitees": ListOf((crm.ref("email"),)),
         "agenda": detail(facts["topic"].capitalize())},
        say=f"book a Zoom meeting at the time {person.first_name} proposes, with them invited"
            + (", the way the callback rules say" if policy else ""),
    )
    if policy:
        s.set_policy(document, f"callback calls last {minutes} minutes", meeting, "duration", minutes, 30,
                     f"The call is booked for {minutes} minutes, as the callback rules say")
    s.call(
        "mailbox", "send_email",
        {"to": ListOf((crm.ref("email"),)), "subject": detail(f"Our call on {_day(start)}"),
         "body": s.text(f"Hi {person.first_name},\n\nThanks for your message. Here is the link for our call on "
                        f"{_spoken(start)}: ", meeting.ref("join_url"), "\n\nTalk then!")},
        say=f"email {person.first_name} the join link",
        mentions=[(meeting.ref("join_url"), "the meeting link")],
    )
    s.call("voice", "archive_call", {"call_id": found.ref("id")}, say="mark the voicemail as done")
    s.brief.intro = f"{person.name} from {org.name} left a voicemail {when} asking for a call"
    s.brief.goal = (f"Book the call {person.first_name} asked for as a Zoom meeting at the time they proposed, email them "
                    "the join link, and mark the voicemail done")
    if policy:
        s.brief.constraints.append(pointer)
    s.brief.constraints.append("Only mark that voicemail done")
    s.brief.anchors += [person.name]


_BILLING_PROBLEMS = (
    "this month's invoice lists {seats} seats on the {plan} but we only have {fewer} users",
    "we were charged twice for the {plan} this month, once on the first and again on the third",
    "our invoice still shows the {plan} although we moved to a smaller plan last month",
    "the card on file was charged after we asked to cancel the {addon}",
)


def _triage(s: Scenario) -> tuple[Rec, str]:
    lead = s.world.team_member("support lead")
    return _rules(
        s, "Support triage rules",
        "- Anything that blocks a customer from logging in or getting their data out is **high** priority.\n"
        "- Billing disputes (a wrong amount, a double charge, a charge after cancelling) are **high** priority and "
        "tagged billing.\n"
        f"- Everything else starts at **normal**; {lead.name} re-triages weekly.",
        author_role="support lead",
    )


@archetype(
    "voicemail-billing-ticket",
    family="support",
    title="A customer leaves a voicemail about a billing problem: a ticket with the transcript, noted on the call",
    services=("voice", "crm", "helpdesk"),
)
def voicemail_billing_ticket(s: Scenario) -> None:
    callers = _callers(s)
    person, _book, contact = s.pick(callers, "no customer in both the phone book and the CRM")
    other, _, _ = s.pick([c for c in callers if c[0].organisation_id != person.organisation_id], "no second caller")
    org = org_of(s, person)
    s.subject = person
    plan = s.rng.choice(("Pro plan", "Enterprise plan", "Standard plan"))
    seats = s.rng.randint(9, 25)
    problem = s.rng.choice(_BILLING_PROBLEMS).format(plan=plan, seats=seats, fewer=seats - s.rng.randint(2, 6),
                                                     addon="Priority support add-on")
    text = (f"Hi, this is {person.first_name} {person.last_name} from {org.name}. I'm calling about our bill: {problem}. "
            "Could someone look into it and get back to me? Thanks.")
    decoy = _voicemail(s, other, f"Hello, {other.first_name} from {org_of(s, other).name}. I have a question about "
                       f"our invoice, {s.rng.choice(_BILLING_PROBLEMS).format(plan=plan, seats=12, fewer=9, addon='SMS bundle')}. "
                       "Please call me back.", "Billing", hours_ago=recent_hours(s) + 0.4)
    hours = recent_hours(s)
    call = _voicemail(s, person, text, "Billing", hours_ago=hours)
    s.trigger = call
    when = when_phrase(s, hours)
    s.refer(call, f"the voicemail {person.first_name} left {when}", relation="caller",
            where={"from_number": person.phone, "outcome": "voicemail"}, latest="started_at")
    triage = s.rng.random() < 0.6
    if triage:
        document, pointer = _triage(s)
    found = s.call("voice", "list_calls", {"outcome": "voicemail", "team": "Billing", "archived": False}, select=call,
                   say=f"find {person.first_name}'s voicemail on the billing line")
    s.trap("other-voicemail", s.record("voice", "call", decoy.key), f"{other.first_name}'s voicemail", step=found)
    crm = s.call("crm", "search_contacts", {"query": person.name}, select=contact, say=f"look up {person.first_name}'s email in the CRM")
    ticket = s.call(
        "helpdesk", "create_ticket",
        {"requester_email": crm.ref("email"), "requester_name": detail(person.name),
         "subject": detail(f"Billing question from {person.name} (voicemail)"),
         "description": s.text("Voicemail on the billing line: ", found.ref("transcript")), "channel": detail("phone"),
         "priority": "high" if triage else detail("normal"), "tags": ListOf((Lit("billing"),)) if triage else detail(["billing"])},
        say=f"open a helpdesk ticket for {person.first_name} with the voicemail's transcript as its description"
            + (", triaged by our rules" if triage else ""),
        mentions=[(found.ref("transcript"), "the voicemail transcript")],
    )
    if triage:
        s.set_policy(document, "billing disputes are high priority", ticket, "priority", "high", "normal",
                     "The ticket is high priority, as the triage rules say for billing disputes")
        s.brief.constraints.append(pointer)
    s.call("voice", "add_call_note", {"call_id": found.ref("id"), "content": s.text("Logged as ticket ", ticket.ref("id"), ".")},
           say="note the ticket number on the call", mentions=[(ticket.ref("id"), "the ticket number")])
    s.call("voice", "archive_call", {"call_id": found.ref("id")}, say="mark the voicemail as done")
    s.brief.intro = f"{person.name} from {org.name} left a voicemail on the billing line {when}"
    s.brief.goal = (f"Get {person.first_name}'s billing problem into the helpdesk as a ticket under their email, with the "
                    "voicemail's transcript as the description, note the ticket number on the call and mark the voicemail done")
    s.brief.constraints.append("Leave the other voicemails alone")
    s.brief.anchors += [person.name]


# -- sales -----------------------------------------------------------------------------------------------


def _follow_ups(s: Scenario) -> Rec:
    projects = s.records("tasks", "project", where={"name": "Customer follow-ups", "archived": False})
    return s.pick(projects, "no Customer follow-ups project")


@archetype(
    "vip-missed-call-callback",
    family="sales",
    title="A missed call from a customer: the account owner calls back, as the missed-call rules say for key accounts",
    services=("voice", "crm", "tasks"),
)
def vip_missed_call_callback(s: Scenario) -> None:
    callers = [(p, b, c) for p, b, c in _callers(s) if c["owner_email"]]
    person, _book, contact = s.pick(callers, "no caller with an account owner")
    org = org_of(s, person)
    s.subject = person
    others = sorted({org_of(s, p).name for p, _, _ in callers if p.organisation_id != person.organisation_id})
    vip = s.rng.random() < 0.6
    key_accounts = sorted(s.rng.sample(others, min(3, len(others))) + ([org.name] if vip else []))
    today = s.world.now[:10]
    later = _working_day(s, 1).strftime("%Y-%m-%d")
    due = today if vip else later
    document, pointer = _rules(
        s, "Missed call rules",
        f"- Our key accounts: {', '.join(key_accounts)}.\n- A missed call from anyone at a key account is returned the "
        "same day by the account owner (the owner of the caller's contact in the CRM): add a task \"Call back <their full "
        "name>\" to the This week section of the Customer follow-ups project, assigned to the owner and due today, and "
        "assign the call to the owner in "
        "the phone system.\n- Any other missed call is returned by the account owner the same way, due the next working day.",
        author_role="sales lead",
    )
    decoy_person = s.pick([p for p, _, _ in callers if p.organisation_id != person.organisation_id], "no second caller")
    decoy = s.event("voice", "call_missed", "call", from_number=decoy_person.phone, team="Sales", hours_ago=recent_hours(s) + 0.3)
    hours = recent_hours(s)
    call = s.event("voice", "call_missed", "call", from_number=person.phone, team="Sales", hours_ago=hours)
    s.trigger = call
    when = when_phrase(s, hours)
    s.refer(call, f"the missed call from {person.first_name} {when}", relation="caller",
            where={"from_number": person.phone, "outcome": "missed"}, latest="started_at")
    found = s.call("voice", "list_calls", {"outcome": "missed", "archived": False}, select=call,
                   say=f"find {person.first_name}'s missed call in the phone system")
    s.trap("other-missed-call", s.record("voice", "call", decoy.key), f"the missed call from {decoy_person.first_name}", step=found)
    crm = s.call("crm", "search_contacts", {"query": person.name}, select=contact,
                 say=f"look up who owns {person.first_name}'s contact in the CRM")
    project = _follow_ups(s)
    listed = s.call("tasks", "list_projects", {"query": "Customer follow-ups"}, select=project,
                    say="find the Customer follow-ups project")
    task = s.call(
        "tasks", "create_task",
        {"project_id": listed.ref("id"), "name": s.text("Call back ", crm.ref("name")), "assignee_email": crm.ref("owner_email"),
         "due_on": due, "notes": detail(f"Missed call from {person.phone} ({org.name}).")},
        say=f"add a task named with {person.first_name}'s full name to call them back, for their account owner, due when "
            "the missed-call rules say",
    )
    if vip:
        s.set_policy(document, "key accounts are called back the same day", task, "due_on", today, later,
                     "The callback is due today, as the missed-call rules say for key accounts")
    else:
        s.policy_documents.append(document)
    s.call("voice", "assign_call", {"call_id": found.ref("id"), "assignee_email": crm.ref("owner_email")},
           say="assign the missed call to that account owner in the phone system")
    s.brief.intro = f"{person.name} from {org.name} called {when} and nobody picked up"
    s.brief.goal = (f"Make sure {person.first_name} is called back as our missed-call rules say: the task for it, named with "
                    f"{person.first_name}'s full name, and the call assigned to whoever should make it")
    s.brief.constraints.append(pointer)
    s.brief.anchors += [person.name]
    s.brief.needs_date = True


@archetype(
    "webinar-customer-followups",
    family="sales",
    title="After a webinar: a follow-up task for each customer who attended, for their account owner",
    services=("meetings", "crm", "tasks", "chat"),
)
def webinar_customer_followups(s: Scenario) -> None:
    webinars = s.records("meetings", "meeting", where={"kind": "webinar", "status": "ended"})
    webinar = s.pick(webinars, "no webinar has ended")
    registrants = s.records("meetings", "registrant", where={"meeting_id": webinar.key, "status": "approved"})
    crm = {c["email"]: c for c in s.records("crm", "contact", where={"archived": False})}
    customers = [r for r in registrants if r["attended"] and crm.get(r["email"], {}).get("lifecycle_stage") == "customer"
                 and crm[r["email"]]["owner_email"]]
    if not 1 <= len(customers) <= 4:
        raise Skip(f"{len(customers)} customers attended; a follow-up request covers one to four")
    if not any(not r["attended"] or r["email"] not in crm or crm[r["email"]]["lifecycle_stage"] != "customer" for r in registrants):
        raise Skip("every registrant is an attending customer: nothing to tell apart")
    lead = colleague(s, "sales lead")
    due_day = _working_day(s, s.rng.choice((3, 4, 5)))
    due = due_day.strftime("%Y-%m-%d")
    topic = webinar["topic"]
    post, when = _asks(
        s, lead, "sales",
        f"Thanks everyone for \"{topic}\" on {_day(webinar['start_time'])}! Could someone set up follow-ups for the customers "
        f"who attended: one task each in Customer follow-ups (This week) for their account owner, due {_day(_iso(due_day))}? "
        "Prospects and no-shows go to marketing, not us.",
    )
    found = s.call("meetings", "list_meetings", {"kind": "webinar", "query": topic}, select=webinar,
                   say=f"find the webinar \"{topic}\"")
    s.refer(webinar, f"the webinar \"{topic}\"", relation="topic", where={"kind": "webinar", "topic": topic})
    first = sorted(customers, key=lambda r: r["email"])[0]
    s.call("meetings", "list_registrants", {"meeting_id": found.ref("id"), "attended": True}, select=first,
           say="check who attended it")
    project = _follow_ups(s)
    listed = s.call("tasks", "list_projects", {"query": "Customer follow-ups"}, select=project, say="find the Customer follow-ups project",
                    needed=False)
    for registrant in sorted(customers, key=lambda r: r["email"]):
        contact = s.record("crm", "contact", crm[registrant["email"]]["id"])
        looked = s.call("crm", "search_contacts", {"query": registrant["email"]}, select=contact,
                        say=f"look up {registrant['name']} in the CRM (a customer, and who owns them)")
        s.call(
            "tasks", "create_task",
            {"project_id": listed.ref("id"), "name": s.text("Follow up with ", looked.ref("name"), " after the webinar"),
             "assignee_email": looked.ref("owner_email"), "due_on": due},
            say=f"add a follow-up task for {registrant['first_name']}, named with their full name, in This week for their "
                f"account owner, due {_day(_iso(due_day))}",
        )
    s.call("chat", "reply_in_thread", {"message_id": post.key, "text": detail(f"Done: {len(customers)} follow-ups are in.")},
           say=f"tell {lead.first_name} in the thread when they are in")
    s.brief.intro = f"{lead.name} asked in #sales {when} for follow-ups after the webinar \"{topic}\""
    s.brief.goal = (f"Give every customer who attended \"{topic}\" a follow-up task in the This week section of Customer "
                    f"follow-ups, named with the customer's full name, assigned to their account owner in the CRM and due {_day(_iso(due_day))}, then "
                    f"tell {lead.first_name} in the thread")
    s.brief.constraints.append("Customers only (CRM lifecycle stage customer): no prospects, and nobody who registered but did not attend")
    s.brief.anchors += [lead.name, topic]


@archetype(
    "won-deal-kickoff",
    family="sales",
    title="A deal is won: book the kickoff with the customer's contact and put its prep on the onboarding board",
    services=("crm", "meetings", "tasks", "chat"),
)
def won_deal_kickoff(s: Scenario) -> None:
    deals = [d for d in s.records("crm", "deal", where={"stage": "won"}) if d["contact_id"]]
    companies = [d["company_id"] for d in deals]
    deal = s.pick([d for d in deals if companies.count(d["company_id"]) == 1], "no company with one won deal")
    contact = s.record("crm", "contact", deal["contact_id"])
    if contact["archived"]:
        raise Skip("the deal's contact is archived")
    company = deal["company_name"]
    seller = colleague(s, s.rng.choice(("sales lead", "account executive")))
    support = s.world.team_member("support lead")
    day = _working_day(s, s.rng.choice((3, 4, 5)))
    start = _iso(day.replace(hour=s.rng.choice((15, 16)), minute=0))
    prep_due = day - timedelta(days=1)
    while prep_due.weekday() >= 5:  # the working day before the kickoff
        prep_due -= timedelta(days=1)
    prep = prep_due.strftime("%Y-%m-%d")
    post, when = _asks(
        s, seller, "sales",
        f"{company} signed! \"{deal['name']}\" is won. Can someone book the kickoff with their contact on the deal for "
        f"{_spoken(start)} (45 minutes, Zoom) and put the prep on the onboarding board for {support.first_name}?",
    )
    found = s.call("crm", "list_deals", {"company_id": deal["company_id"], "stage": "won"}, select=deal,
                   say=f"find the won deal with {company} in the CRM")
    s.refer(deal, f"the won deal with {company}", relation="customer", where={"company_id": deal["company_id"], "stage": "won"})
    person = s.call("crm", "get_contact", {"contact_id": found.ref("contact_id")}, say="look up the deal's primary contact")
    meeting = s.call(
        "meetings", "create_meeting",
        {"topic": f"Kickoff: {company}", "start_time": start, "duration": 45, "invitees": ListOf((person.ref("email"),)),
         "agenda": detail("Introductions, goals, the rollout plan and next steps.")},
        say=f"book a 45-minute Zoom meeting called \"Kickoff: {company}\" for {_spoken(start)} with that contact invited",
    )
    board = s.pick(s.records("tasks", "project", where={"name": "Customer onboarding", "archived": False}), "no onboarding board")
    listed = s.call("tasks", "list_projects", {"query": "Customer onboarding"}, select=board, say="find the Customer onboarding board",
                    needed=False)
    s.call(
        "tasks", "create_task",
        {"project_id": listed.ref("id"), "name": f"{company}: kickoff prep", "assignee_email": support.email, "due_on": prep,
         "notes": s.text("Kickoff meeting: ", meeting.ref("join_url"))},
        say=f"add a task \"{company}: kickoff prep\" to the Kickoff column of the Customer onboarding board for {support.name}, due "
            f"{_day(_iso(prep_due))}, with the meeting link in its notes",
        mentions=[(meeting.ref("join_url"), "the meeting link")],
    )
    s.call("chat", "reply_in_thread", {"message_id": post.key, "text": s.text("Kickoff booked: ", meeting.ref("join_url"))},
           say=f"reply to {seller.first_name} in the thread with the join link", mentions=[(meeting.ref("join_url"), "the meeting link")])
    s.brief.intro = f"{seller.name} posted in #sales {when} that {company} signed"
    s.brief.goal = (f"Book the kickoff {seller.first_name} asked for as a 45-minute Zoom meeting called \"Kickoff: {company}\" with "
                    f"the deal's primary contact, add \"{company}: kickoff prep\" to the Kickoff column of the Customer onboarding board for "
                    f"{support.name} due {_day(_iso(prep_due))} with the join link in its notes, and reply in the thread with the link")
    s.brief.anchors += [seller.name, company, support.name]


# -- operations ------------------------------------------------------------------------------------------


@archetype(
    "zoom-meeting-reschedule",
    family="operations",
    title="A customer asks to move an upcoming Zoom call: move it and confirm with the (unchanged) join link",
    services=("meetings", "mailbox"),
)
def zoom_meeting_reschedule(s: Scenario) -> None:
    now = s.world.now
    customers = {p.email: p for p in s.world.customers}
    team = {p.email: p for p in s.world.team}
    upcoming = [m for m in s.records("meetings", "meeting", where={"status": "scheduled", "kind": "meeting"})
                if m["start_time"] > _iso(s.world.now_dt + timedelta(hours=20))]
    fits = [(m, customers[m["invitees"][0]]) for m in upcoming
            if m["host_email"] in team and len(m["invitees"]) == 1 and m["invitees"][0] in customers]
    meeting, person = s.pick(fits, "no upcoming Zoom call with one customer")
    host = team[meeting["host_email"]]
    theirs = [m for m in upcoming if person.email in m["invitees"]]
    if len([m for m in theirs if m["start_time"][:10] == meeting["start_time"][:10]]) != 1:
        raise Skip("more than one call with them that day")
    org = org_of(s, person)
    start = _dt(meeting["start_time"])
    moved = start + timedelta(days=1 if start.weekday() < 4 else 3)
    new_start = _iso(moved)
    email, when = inbound_email(
        s, person, f"Re: {meeting['topic']}",
        f"Hi,\n\nSomething came up on {start:%A}. Could we move our Zoom call with {host.first_name} to "
        f"{_spoken(new_start)}, same length?\n\n"
        f"Sorry for the short notice,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call("meetings", "list_meetings", {"invitee_email": person.email, "status": "scheduled", "from_time": now},
                   select=meeting, say=f"find {host.first_name}'s Zoom call with {person.first_name} on {start:%A}")
    s.refer(meeting, f"the Zoom call with {person.first_name} on {start:%A}", relation="invitee",
            where={"id": meeting.key, "status": "scheduled"})
    others = [m for m in theirs if m.key != meeting.key]
    if others:
        s.trap("other-meeting", others[0], f"their other call \"{others[0]['topic']}\"", step=found)
    s.call("meetings", "update_meeting", {"meeting_id": found.ref("id"), "start_time": new_start},
           say=f"move it to {_spoken(new_start)}")
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": s.text(f"Hi {person.first_name},\n\nNo problem, it's moved to {_spoken(new_start)}. "
                                                 "The link stays the same: ", found.ref("join_url"))},
        say=f"reply to {person.first_name} confirming the new time, with the join link",
        mentions=[(found.ref("join_url"), "the meeting link")],
    )
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking to move their Zoom call with {host.name}"
    s.brief.goal = f"Move the call {person.first_name} is asking about to the time they proposed and confirm it to them with the join link"
    s.brief.constraints.append("Don't touch their other meetings")
    s.brief.anchors += [person.name, host.name]


# -- marketing -------------------------------------------------------------------------------------------

_UNSUBSCRIBE_ASKS = (
    "Hi,\n\nPlease take me off your mailing lists. I get far too many newsletters these days.\n\nThanks,\n{sig}",
    "Hello,\n\nCould you unsubscribe me from all your marketing emails? I'll still read the product emails my admin "
    "forwards.\n\nBest,\n{sig}",
    "Hi there,\n\nI'd like to stop receiving your newsletters and announcements, please remove me.\n\nRegards,\n{sig}",
)


@archetype(
    "unsubscribe-request",
    family="marketing",
    title="A customer asks by email to stop marketing emails: unsubscribe them everywhere, note it in the CRM, confirm",
    services=("mailbox", "marketing", "crm"),
)
def unsubscribe_request(s: Scenario) -> None:
    members = s.records("marketing", "member")
    active = {}
    for m in members:
        if m["status"] in ("subscribed", "pending"):
            active.setdefault(m["email_address"], []).append(m)
    contacts = {c["email"]: c for c in s.records("crm", "contact", where={"archived": False})}
    names = [c["name"] for c in contacts.values()]
    fits = [p for p in s.world.customers if p.email in active and p.email in contacts and names.count(p.name) == 1]
    person = s.pick(fits, "no customer on a mailing list and in the CRM")
    org = org_of(s, person)
    s.subject = person
    theirs = sorted(active[person.email], key=lambda m: m["audience_id"])
    others = [o for o in s.world.organisations[1:] if o.id != person.organisation_id]
    twin_org = s.pick(others, "no other company")
    twin_email = f"{person.email.split('@')[0]}@{twin_org.domain}"
    if any(m["email_address"] == twin_email for m in members) or any(p.email == twin_email for p in s.world.people):
        raise Skip("the namesake's address is taken")
    twin = s.copy(theirs[0], email_address=twin_email, company=twin_org.name, city=twin_org.city, tags=["Prospect"],
                  vip=False, source="Signup form", status="subscribed", unsubscribe_reason=None)
    email, when = inbound_email(s, person, s.rng.choice(("Unsubscribe", "Please remove me", "Too many emails")),
                                s.rng.choice(_UNSUBSCRIBE_ASKS).format(sig=signature(person, org)))
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    strict = s.rng.random() < 0.5
    if strict:
        document, pointer = _rules(
            s, "Email consent rules",
            "- When someone asks to stop our marketing emails, unsubscribe their address on every audience it is on, "
            "the same day.\n- Unsubscribe; never archive or delete the member: the unsubscribed record is what keeps "
            "them off future imports.\n- Note the request on their CRM contact.",
            author_role="product manager",
        )
    found = s.call("marketing", "search_members", {"query": person.name}, select=theirs[0],
                   say=f"find {person.first_name} on our mailing lists")
    s.trap("same-name-member", twin, f"the other {person.name} (at {twin_org.name})", step=found)
    first = s.call("marketing", "unsubscribe_member", {"member_id": found.ref("id"), "reason": detail("Asked us by email")},
                   say=f"unsubscribe {person.first_name} from {theirs[0]['audience_name']}")
    for member in theirs[1:]:
        s.call("marketing", "unsubscribe_member", {"member_id": member.key, "reason": detail("Asked us by email")},
               say=f"unsubscribe them from {member['audience_name']} too")
    contact = s.record("crm", "contact", contacts[person.email]["id"])
    crm = s.call("crm", "search_contacts", {"query": person.name}, select=contact, say=f"find {person.first_name} in the CRM")
    s.call("crm", "add_note", {"entity_type": "contact", "entity_id": crm.ref("id"),
                               "body": detail("Asked by email to stop marketing emails; unsubscribed from every list.")},
           say="note the request on their CRM contact")
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key, "body": detail(f"Hi {person.first_name},\n\nDone: you won't get our marketing emails any more.")},
           say=f"reply to {person.first_name} to confirm")
    if strict:
        violation = [s.specs[0], s.spec("marketing", "archive_member", {"member_id": found.ref("id")}), *s.specs[1 + len(theirs):]]
        s.forbid_by_policy(document, "unsubscribe, never archive", first, violation,
                           ("marketing", "members", {"id": theirs[0].key, "status": "archived"}),
                           f"{person.first_name}'s member is unsubscribed, not archived")
        s.brief.constraints.append(pointer)
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking us to stop sending marketing emails"
    s.brief.goal = (f"Unsubscribe {person.first_name} from every mailing list they are on, note it on their CRM contact, "
                    "and confirm it to them")
    s.brief.anchors += [person.name, org.name]


def _one_week_rule(s: Scenario, audience: Rec, when: datetime) -> list[Rec]:
    """The campaigns to ``audience`` sent or scheduled within seven days of ``when``."""
    near = []
    for c in s.records("marketing", "campaign", where={"audience_id": audience.key}):
        at = c["send_time"] or c["schedule_time"]
        if at and abs((_dt(at) - when).total_seconds()) < 7 * 86400:
            near.append(c)
    return near


@archetype(
    "campaign-frequency-cap",
    family="marketing",
    title="A colleague asks to schedule a campaign draft: schedule it only if the email rules allow a send then",
    services=("marketing", "chat"),
)
def campaign_frequency_cap(s: Scenario) -> None:
    drafts = [d for d in s.records("marketing", "campaign", where={"status": "draft"}) if d["recipient_count"] > 0]
    draft = s.pick(drafts, "no draft campaign with recipients")
    audience = s.record("marketing", "audience", draft["audience_id"])
    pm = colleague(s, "product manager")
    options = []
    for ahead in range(2, 26):
        day = _working_day(s, ahead)
        moment = day.replace(hour=s.rng.choice((9, 10, 14, 15)), minute=s.rng.choice((0, 30)))
        options.append((moment, not _one_week_rule(s, audience, moment)))
    allowed = [m for m, ok in options if ok]
    blocked = [m for m, ok in options if not ok]
    conflict = bool(blocked) and (not allowed or s.rng.random() < 0.6)
    when_at = s.pick(blocked if conflict else allowed, "no time to ask for")
    requested = _iso(when_at)
    document, pointer = _rules(
        s, "Email marketing rules",
        "- An audience gets at most one campaign a week: nothing goes out within 7 days (before or after) of another "
        "campaign to the same audience, sent or scheduled.\n- If a requested send time breaks this, leave the campaign as "
        "a draft and tell whoever asked, with the conflicting campaign.",
        author_role="product manager",
    )
    post, when = _asks(
        s, pm, "general",
        f"Could someone schedule the \"{draft['title']}\" campaign in Mailchimp for {_spoken(requested)}? It's ready to go.",
    )
    found = s.call("marketing", "list_campaigns", {"query": draft["title"], "status": "draft"}, select=draft,
                   say=f"find the \"{draft['title']}\" draft in Mailchimp")
    s.call("marketing", "list_campaigns", {"audience_id": found.ref("audience_id")}, select=draft,
           say="check what else its audience gets around then")
    if conflict:
        reply = s.call("chat", "reply_in_thread",
                       {"message_id": post.key, "text": detail("I can't schedule it then: it's within a week of another campaign to that audience.")},
                       say=f"schedule it for {_spoken(requested)} only if the rules allow it, and answer {pm.first_name} in the "
                           "thread (with the reason if it cannot go out then)")
        violation = [s.specs[0], s.spec("marketing", "schedule_campaign", {"campaign_id": found.ref("id"), "schedule_time": requested}),
                     s.specs[2]]
        s.forbid_by_policy(document, "one campaign a week per audience", reply, violation,
                           ("marketing", "campaigns", {"id": draft.key, "status": "scheduled"}),
                           "The campaign stays a draft: the rules allow no send that week")
    else:
        s.call("marketing", "schedule_campaign", {"campaign_id": found.ref("id"), "schedule_time": requested},
               say=f"schedule it for {_spoken(requested)} only if the rules allow it")
        s.call("chat", "reply_in_thread", {"message_id": post.key, "text": detail("Scheduled.")},
               say=f"answer {pm.first_name} in the thread")
        s.policy_documents.append(document)
    s.brief.intro = f"{pm.name} asked in #general {when} to schedule the \"{draft['title']}\" campaign"
    s.brief.goal = (f"Schedule \"{draft['title']}\" for the time {pm.first_name} asked if our email marketing rules allow it; "
                    f"if they don't, leave it as a draft and tell {pm.first_name} in the thread why")
    s.brief.constraints.append(pointer)
    s.brief.anchors += [pm.name, draft["title"]]


_ANNOUNCEMENTS = (
    ("New: scheduled reports", "Scheduled reports are here: pick a report, a time and who gets it."),
    ("Your industry benchmark is ready", "See how teams like yours use the product, with this year's benchmark."),
    ("Join our customer advisory board", "We are inviting a few customers to shape next year's roadmap with us."),
)


@archetype(
    "segment-campaign-draft",
    family="marketing",
    title="Marketing wants a campaign for one industry's customers: save the segment, draft the campaign under the email rules",
    services=("marketing", "chat"),
)
def segment_campaign_draft(s: Scenario) -> None:
    audiences = s.records("marketing", "audience")
    news = s.pick([a for a in audiences if a["name"].endswith("Newsletter")], "no newsletter audience")
    members = s.records("marketing", "member", where={"audience_id": news.key, "status": "subscribed"})
    segments = s.records("marketing", "segment", where={"audience_id": news.key})
    industries: dict[str, int] = {}
    for m in members:
        for tag in m["tags"]:
            if tag not in ("Customer", "Prospect", "Event attendee", "Beta program") and not tag.endswith(" plan"):
                industries[tag] = industries.get(tag, 0) + 1
    fits = sorted(t for t, n in industries.items() if n >= 2 and not any(t.lower() in seg["name"].lower() for seg in segments))
    industry = s.pick(fits, "no industry tag with two subscribed members")
    pm = colleague(s, "product manager")
    subject, pitch = s.pick(list(_ANNOUNCEMENTS), "no announcements")
    segment_name = f"{industry} customers"
    policy = s.rng.random() < 0.6
    if policy:
        document, pointer = _rules(
            s, "Email marketing rules",
            f"- Every campaign's reply-to address is {pm.name}'s ({pm.email}), never the audience's own address.\n"
            "- Build each campaign on a saved segment, named after who it reaches.",
            author_role="product manager",
        )
    post, when = _asks(
        s, pm, "general",
        f"Could someone draft a campaign in Mailchimp for our newsletter members tagged {industry}? Save them as a segment "
        f"called \"{segment_name}\" and use the subject \"{subject}\". Just a draft for now, I'll review it.",
    )
    s.call("marketing", "list_audiences", {}, select=news, say="find the newsletter audience")
    segment = s.call(
        "marketing", "create_segment",
        {"audience_id": news.key, "name": segment_name, "tags": ListOf((Lit(industry),)), "match": detail("all")},
        say=f"save a segment \"{segment_name}\" of the newsletter members tagged {industry}",
    )
    # The internal title is left to the agent; it must not contain the stated texts (a check would demand them there).
    args = {"audience_id": news.key, "title": detail(f"{industry} campaign"), "subject_line": subject,
            "content": detail(f"Hi *|FNAME|*,\n\n{pitch}\n\nThe team"), "segment_id": segment.ref("id")}
    if policy:
        args["reply_to"] = pm.email
    campaign = s.call("marketing", "create_campaign", args,
                      say=f"draft a campaign to that segment with the subject \"{subject}\""
                          + (", set up the way our email marketing rules say" if policy else ""))
    if policy:
        s.set_policy(document, f"the reply-to is {pm.first_name}'s address", campaign, "reply_to", pm.email, news["from_email"],
                     f"Replies go to {pm.first_name}, as the email marketing rules say")
        s.brief.constraints.append(pointer)
    s.call("chat", "reply_in_thread", {"message_id": post.key, "text": s.text("Draft ready for review: ", campaign.ref("archive_url"))},
           say=f"reply to {pm.first_name} in the thread with the campaign's link", mentions=[(campaign.ref("archive_url"), "the campaign link")])
    s.brief.intro = f"{pm.name} asked in #general {when} for a campaign draft for the {industry} customers"
    s.brief.goal = (f"Save the newsletter members tagged {industry} as a segment \"{segment_name}\", draft a campaign to it with "
                    f"the subject \"{subject}\" (don't send or schedule it), and reply to {pm.first_name} with its link")
    s.brief.anchors += [pm.name, industry, subject]
