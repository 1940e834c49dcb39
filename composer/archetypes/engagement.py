"""Engagement workflows: what voicemails, missed calls, webinars and email campaigns start.

Support and sales work that begins on the phone (a voicemail asking for a call back, a billing call
left on the billing line, a missed call on the sales line), the follow-up of a webinar, meetings
customers move, and marketing's own work under its rules (consent, segments, how often an audience
may be emailed). The services: ``voice`` (Aircall), ``meetings`` (Zoom), ``tasks`` (Asana) and
``marketing`` (Mailchimp), with the CRM, the helpdesk and whatever carries the request (``stages.channels``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mcp_services.kernel.world import Person

from composer.archetypes.common import money, org_of, rule_author
from composer.plan import ListOf, Lit, Ref
from composer.scenario import Rec, Said, Scenario, Skip, archetype, detail
from composer.stages.acts import act, log
from composer.stages.channels import (
    COLLEAGUE, Ask, Trigger, arrive, asking, can_arrive, email_of, recent_hours, reply, reply_clause, when_phrase,
)
from composer.stages.lookup import lookup, shows
from composer.stages.rules import colleague, consult, limit_near, near_first

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


def _phone_customers(s: Scenario) -> list[Person]:
    """Customers in the phone book, so a call from them shows who called."""
    book = {c["phone_number"] for c in s.records("voice", "contact")}
    return [p for p in s.world.customers if p.phone in book]


def _asked_by(trigger: Trigger) -> str:
    """How a request says who asked, without the company that would tell a namesake apart ("Ana Ruiz texted us")."""
    person = trigger.person
    if trigger.relayed:
        return f"{trigger.sender.name} passed on a call from {person.name} {trigger.when}"
    said = {"email": "emailed", "sms": "texted our number", "voice": "left a voicemail", "ticket": "opened a ticket",
            "form": "wrote in through our contact form"}
    return f"{person.name} {said.get(trigger.channel, 'got in touch')} {trigger.when}"


# -- support ---------------------------------------------------------------------------------------------

_CALLBACK_ASKS = (
    "I have a few questions about {topic} and it's easier to talk it through. Could we do a quick call on {when}?",
    "We'd like to go over {topic} with someone on your side. Would {when} work for a short video call?",
)
_CALLBACK_TOPICS = ("adding seats to our plan", "the reporting setup", "our renewal next quarter", "the data migration")


@archetype(
    "voicemail-callback-meeting",
    family="support",
    title="A customer leaves a voicemail asking for a call at a time: book it as a Zoom call, send the link, close the voicemail",
    services=("voice", "meetings"),
    fits=can_arrive(("voice",)),
)
def voicemail_callback_meeting(s: Scenario) -> None:
    person = s.pick(_phone_customers(s), "no customer in the phone book")
    org = org_of(s, person)
    s.subject = person
    day = _working_day(s, s.rng.choice((1, 2)))
    start = _iso(day.replace(hour=s.rng.choice((14, 15, 16, 17)), minute=s.rng.choice((0, 30))))
    topic = s.rng.choice(_CALLBACK_TOPICS)
    earlier = s.event("voice", "voicemail_left", "call", from_number=person.phone, team="Support",
                      transcript=f"Hi, it's {person.first_name} from {org.name}, just checking you got my email from last week. No rush.",
                      hours_ago=24.0 * s.rng.randint(2, 5) + 3)
    trigger = arrive(s, person, Ask(subject=f"Call about {topic}",
                                    text=s.rng.choice(_CALLBACK_ASKS).format(topic=topic, when=_spoken(start))),
                     channels=("voice",))
    if shows(s, trigger.step, earlier):
        s.trap("older-voicemail", earlier, f"{person.first_name}'s older voicemail", step=trigger.step)
    policy = s.rng.random() < 0.6
    minutes = int(s.rng.choice((15, 20, 45))) if policy else 30
    if policy:
        rule = consult(
            s, "Callback rules",
            f"- Return every voicemail the same working day.\n- When a caller asks for a call at a given time, book a Zoom "
            f"call of {minutes} minutes at that time, hosted by you, with the caller invited, and send them the join link.\n"
            "- Mark the voicemail done once the call is booked.",
            author_role=rule_author(s, "support lead"),
        )
    meeting = s.call(
        "meetings", "create_meeting",
        {"topic": detail(f"Call with {person.name} ({org.name})"), "start_time": start,
         "duration": minutes if policy else detail(minutes), "invitees": ListOf((email_of(s, trigger),)),
         "agenda": detail(topic.capitalize())},
        say=f"book a Zoom meeting at the time {person.first_name} proposes, with them invited"
            + (", the way the callback rules say" if policy else ""),
    )
    if policy:
        s.set_policy(rule.rec, f"callback calls last {minutes} minutes", meeting, "duration", minutes, 30,
                     f"The call is booked for {minutes} minutes, as the callback rules say")
        s.brief.constraints.append(rule.pointer)
    reply(s, trigger, [f"Hi {person.first_name}, thanks for your message. Here is the link for our call on {_spoken(start)}: ",
                       meeting.ref("join_url")],
          say=reply_clause(trigger, "the time and the join link"),
          facts=[Said("the meeting link", meeting.ref("join_url")), Said("the time", Lit(start), "datetime")],
          subject=f"Our call on {_day(start)}")
    act(s, "close", trigger.step, say="mark the voicemail as done")
    s.brief.intro = f"{trigger.intro} asking for a call"
    s.brief.goal = (f"Book the call {person.first_name} asked for as a Zoom meeting at the time they proposed, "
                    f"{reply_clause(trigger, 'the time and the join link')}, and mark the voicemail done")
    s.brief.constraints.append("Only mark that voicemail done")
    s.brief.anchors += [person.name]


_BILLING_DISPUTES = (
    "this month's invoice lists {seats} seats on the {plan} but we only have {fewer} users",
    "we were charged twice for the {plan} this month, once on the first and again on the third",
    "our invoice still shows the {plan} although we moved to a smaller plan last month",
    "the card on file was charged after we asked to cancel the {addon}",
)
_BILLING_QUESTIONS = (
    "how do we download our invoices for the {plan} from the portal",
    "could you send a copy of last month's invoice for the {plan} to our accounts team",
    "can we change the billing email on our {plan} account to our finance inbox",
)


@archetype(
    "voicemail-billing-ticket",
    family="support",
    title="A customer leaves a voicemail on the billing line: a ticket with the transcript, triaged, noted on the call",
    services=("voice", "helpdesk"),
    fits=can_arrive(("voice",)),
)
def voicemail_billing_ticket(s: Scenario) -> None:
    callers = _phone_customers(s)
    person = s.pick(callers, "no customer in the phone book")
    other = s.pick([p for p in callers if p.organisation_id != person.organisation_id], "no second caller")
    s.subject = person
    plan = s.rng.choice(("Pro plan", "Enterprise plan", "Standard plan"))
    seats = s.rng.randint(9, 25)
    # A dispute or a plain question: the triage rules, not the line it came in on, decide the ticket's priority.
    dispute = s.rng.random() < 0.6
    problem = s.rng.choice(_BILLING_DISPUTES if dispute else _BILLING_QUESTIONS).format(
        plan=plan, seats=seats, fewer=seats - s.rng.randint(2, 6), addon="Priority support add-on")
    hours = recent_hours(s)
    s.event("voice", "voicemail_left", "call", from_number=other.phone, team="Billing", hours_ago=hours + s.rng.uniform(0.3, 1.5),
            transcript=f"Hello, {other.first_name} from {org_of(s, other).name}. I have a question about our invoice, "
                       f"{s.rng.choice(_BILLING_DISPUTES).format(plan=plan, seats=12, fewer=9, addon='SMS bundle')}. "
                       "Please call me back.")
    decoy = s.records("voice", "call", where={"from_number": other.phone, "outcome": "voicemail"}, order=("-started_at",))[0]
    earlier = s.event("voice", "voicemail_left", "call", from_number=person.phone, team="Billing", hours_ago=24.0 * s.rng.randint(3, 9),
                      transcript=f"Hi, {person.first_name} here from {org_of(s, person).name}. Just confirming we received "
                                 "the new invoice, no need to call back. Thanks!")
    trigger = arrive(s, person, Ask(subject="Billing", topic="Billing",
                                    text=f"I'm calling about our bill: {problem}. Could someone look into it and get back to me?"),
                     channels=("voice",))
    for rec, description in ((earlier, f"{person.first_name}'s older voicemail"), (decoy, f"{other.first_name}'s voicemail")):
        if shows(s, trigger.step, rec):
            s.trap("other-voicemail", rec, description, step=trigger.step)
    triage = s.rng.random() < 0.6
    if triage:
        lead = s.world.team_member("support lead")
        rule = consult(
            s, "Support triage rules",
            "- Anything that blocks a customer from logging in or getting their data out is **high** priority.\n"
            "- Billing disputes (a wrong amount, a double charge, a charge after cancelling) are **high** priority and "
            "tagged billing.\n"
            f"- Everything else, billing questions included, starts at **normal**; {lead.name} re-triages weekly.",
            author_role=rule_author(s, "support lead"),
        )
    priority = "high" if dispute else "normal"
    ticket = s.call(
        "helpdesk", "create_ticket",
        {"requester_email": email_of(s, trigger), "requester_name": detail(person.name),
         "subject": detail(f"Billing call from {person.name} (voicemail)"),
         "description": s.text("Voicemail on the billing line: ", trigger.step.ref("transcript")), "channel": detail("phone"),
         "priority": priority if triage else detail(priority),
         **({"tags": ListOf((Lit("billing"),)) if triage else detail(["billing"])} if dispute else {})},
        say=f"open a helpdesk ticket for {person.first_name} with the voicemail's transcript as its description"
            + (", triaged by our rules" if triage else ""),
        mentions=[(trigger.step.ref("transcript"), "the voicemail transcript")],
    )
    if triage:
        s.set_policy(rule.rec, "billing disputes are high priority, questions normal", ticket, "priority", priority,
                     "normal" if dispute else "high", f"The ticket is {priority} priority, as the triage rules say")
        s.brief.constraints.append(rule.pointer)
    log(s, trigger.step, ["Logged as ticket ", ticket.ref("id"), "."], say="note the ticket number on the call",
        facts=[Said("the ticket number", ticket.ref("id"))], stage="report")
    act(s, "close", trigger.step, say="mark the voicemail as done")
    s.brief.intro = f"{trigger.intro} about their bill"
    s.brief.goal = (f"Get {person.first_name}'s billing call into the helpdesk as a ticket under their email, with the "
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
    title="A missed call on the sales line: the caller's account owner calls back, as the missed-call rules say for key accounts",
    services=("voice", "crm", "tasks"),
)
def vip_missed_call_callback(s: Scenario) -> None:
    contacts = s.records("crm", "contact", where={"archived": False})
    names = [c["name"] for c in contacts]
    owned = {c["email"]: c for c in contacts if c["owner_email"] and names.count(c["name"]) == 1}
    # A key account is one whose won deals add up to the line the rules draw: the caller's company has won deals, in
    # one currency, and the line sits near their total (on either side).
    won: dict[str, list[Rec]] = {}
    for deal in s.records("crm", "deal", where={"stage": "won"}):
        won.setdefault(deal["company_id"], []).append(deal)
    callers = [p for p in _phone_customers(s) if p.email in owned]
    person = s.pick([p for p in callers if len({d["currency"] for d in won.get(owned[p.email]["company_id"], [])}) == 1],
                    "no caller with an account owner and won deals")
    contact = owned[person.email]
    org = org_of(s, person)
    # No s.subject: follow-ups a walk adds would name the caller, whom the request must leave to the data.
    deals = won[contact["company_id"]]
    total, currency = round(sum(float(d["amount"]) for d in deals), 2), deals[0]["currency"]
    line = limit_near(s, total, (500, 1000, 2500, 5000, 10000))
    vip = total >= line
    today = s.world.now[:10]
    later = _working_day(s, 1).strftime("%Y-%m-%d")
    due = today if vip else later
    rule = consult(
        s, "Missed call rules",
        f"- Our key accounts are the customers whose won deals in the CRM add up to {money(line, currency)} or more.\n"
        "- A missed call from anyone at a key account is returned the "
        "same day by the account owner (the owner of the caller's contact in the CRM): add a task \"Call back <their full "
        "name>\" to the Customer follow-ups project, assigned to the owner and due today, and assign the call to the owner "
        "in the phone system.\n- Any other missed call is returned by the account owner the same way, due the next working day.",
        author_role=rule_author(s, "sales lead"),
    )
    # The request names no caller: the latest missed call on the line says who it was.
    hours = recent_hours(s)
    decoy_person = s.pick([p for p in callers if p.organisation_id != person.organisation_id], "no second caller")
    decoy = s.event("voice", "call_missed", "call", from_number=decoy_person.phone, team="Sales",
                    hours_ago=hours + s.rng.uniform(0.3, 1.5))
    call = s.event("voice", "call_missed", "call", from_number=person.phone, team="Sales", hours_ago=hours)
    s.trigger, s.topic = call, "Missed call"
    when = when_phrase(s, hours)
    s.refer(call, f"the missed call on the sales line {when}", relation="line",
            where={"outcome": "missed", "team": "Sales"}, latest="started_at")
    found = lookup(s, call, {"outcome": "missed", "team": "Sales", "archived": False}, stage="trigger",
                   say="find the latest missed call on the sales line", name="the latest missed call on the sales line")
    if shows(s, found, decoy):
        s.trap("other-missed-call", decoy, f"the earlier missed call from {decoy_person.first_name}", step=found)
    crm = lookup(s, s.record("crm", "contact", contact["id"]), {"query": found.ref("contact_name"), "name": found.ref("contact_name")},
                 say="look up who owns the caller's contact in the CRM", name="the caller's CRM contact")
    lookup(s, deals[0], {"company_id": crm.ref("company_id"), "stage": "won"}, stage="consult",
           say="add up what the caller's company has won with us in the CRM")
    if len(deals) > 1:
        s.decide("figure", "what the caller's company has won with us, all its won deals together")
    rule_words = "key accounts are called back the same day" if vip else "other accounts are called back the next working day"
    s.decide("rule", rule_words, default=False, value=total, threshold=line)
    project = _follow_ups(s)
    listed = lookup(s, project, {"query": "Customer follow-ups", "name": "Customer follow-ups"},
                    say="find the Customer follow-ups project")
    task = s.call(
        "tasks", "create_task",
        {"project_id": listed.ref("id"), "name": s.text("Call back ", crm.ref("name")), "assignee_email": crm.ref("owner_email"),
         "due_on": due, "notes": detail(f"Missed call from {person.phone} ({org.name}).")},
        say="add a task named with the caller's full name to call them back, for their account owner, due when the missed-call "
            "rules say",
    )
    if vip:
        s.set_policy(rule.rec, "key accounts are called back the same day", task, "due_on", today, later,
                     "The callback is due today, as the missed-call rules say for key accounts")
    else:
        s.set_policy(rule.rec, "other accounts are called back the next working day", task, "due_on", later, today,
                     "The callback is due the next working day, as the missed-call rules say for other accounts")
    act(s, "assign", found, {"assignee_email": crm.ref("owner_email")}, say="assign the missed call to that account owner")
    s.brief.intro = f"We missed a call on the sales line {when}: nobody picked up"
    s.brief.goal = ("Make sure the caller is called back as our missed-call rules say: the task for it, named with the caller's "
                    "full name, and the call assigned to whoever should make it")
    s.brief.constraints.append(rule.pointer)
    s.brief.needs_date = True


@archetype(
    "webinar-customer-followups",
    family="sales",
    title="After a webinar: a follow-up task for each customer who attended, for their account owner",
    services=("meetings", "crm", "tasks"),
    fits=can_arrive(COLLEAGUE),
)
def webinar_customer_followups(s: Scenario) -> None:
    webinars = s.records("meetings", "meeting", where={"kind": "webinar", "status": "ended"})
    webinar = s.pick(webinars, "no webinar has ended")
    registrants = s.records("meetings", "registrant", where={"meeting_id": webinar.key, "status": "approved"})
    crm = {c["email"]: c for c in s.records("crm", "contact", where={"archived": False})}
    customers = sorted((r for r in registrants if r["attended"] and r["email"] in crm and crm[r["email"]]["lifecycle_stage"] == "customer"
                        and crm[r["email"]]["owner_email"]), key=lambda r: r["email"])
    if not 1 <= len(customers) <= 4:
        raise Skip(f"{len(customers)} customers attended; a follow-up request covers one to four")
    if not any(not r["attended"] or r["email"] not in crm or crm[r["email"]]["lifecycle_stage"] != "customer" for r in registrants):
        raise Skip("every registrant is an attending customer: nothing to tell apart")
    lead = colleague(s, "sales lead")
    due_day = _working_day(s, s.rng.choice((3, 4, 5)))
    due = due_day.strftime("%Y-%m-%d")
    topic = webinar["topic"]
    trigger = arrive(s, lead, Ask(
        subject=f"Follow-ups after \"{topic}\"",
        text=f"Thanks everyone for \"{topic}\" on {_day(webinar['start_time'])}! Could someone set up follow-ups for the customers "
             f"who attended: one task each in Customer follow-ups for their account owner, due {_day(_iso(due_day))}? "
             "Prospects and no-shows go to marketing, not us.",
        team="sales",
    ), channels=COLLEAGUE)
    found = lookup(s, webinar, {"kind": "webinar", "query": topic}, say=f"find the webinar \"{topic}\"", name=f"the webinar \"{topic}\"")
    s.refer(webinar, f"the webinar \"{topic}\"", relation="topic", where={"kind": "webinar", "topic": topic})
    lookup(s, customers[0], {"meeting_id": found.ref("id"), "attended": True}, say="check who attended it")
    # Registrants who did not attend or are not customers stand beside those who get a task: the data picks them.
    s.decide("pick", "the registrants who attended and are customers (not prospects, not no-shows)")
    listed = lookup(s, _follow_ups(s), {"query": "Customer follow-ups", "name": "Customer follow-ups"},
                    say="find the Customer follow-ups project")
    names = []
    for registrant in customers:
        looked = lookup(s, s.record("crm", "contact", crm[registrant["email"]]["id"]),
                        {"query": registrant["email"], "email": registrant["email"]},
                        say=f"look up {registrant['name']} in the CRM (a customer, and who owns them)")
        names.append(looked.ref("name"))
        s.call(
            "tasks", "create_task",
            {"project_id": listed.ref("id"), "name": s.text("Follow up with ", looked.ref("name"), " after the webinar"),
             "assignee_email": looked.ref("owner_email"), "due_on": due},
            say=f"add a follow-up task for {registrant['first_name']}, named with their full name, for their account owner, "
                f"due {_day(_iso(due_day))}" if len(names) > 1 else
                f"give each customer who attended a follow-up task named with their full name, for their account owner, "
                f"due {_day(_iso(due_day))}",
            guided=len(names) == 1,  # one clause for them all: a manager does not list the tasks one by one
        )
    parts: list[str | Ref] = [f"Done: {len(customers)} follow-up{'s are' if len(customers) > 1 else ' is'} in, for "]
    for n, name in enumerate(names):
        parts += [name, ", " if n < len(names) - 2 else (" and " if n == len(names) - 2 else ".")]
    reply(s, trigger, parts, say=reply_clause(trigger, "who got a follow-up"),
          facts=[Said("a customer followed up", name) for name in names], subject=f"Re: Follow-ups after \"{topic}\"")
    s.brief.intro = asking(trigger, f"for follow-ups after the webinar \"{topic}\"")
    s.brief.goal = (f"Give every customer who attended \"{topic}\" a follow-up task in Customer follow-ups, named with the "
                    f"customer's full name, assigned to their account owner in the CRM and due {_day(_iso(due_day))}, then "
                    f"{reply_clause(trigger, 'who got a follow-up')}")
    s.brief.constraints.append(
        "Customers only (CRM lifecycle stage customer): no prospects, and nobody who registered but did not attend")
    s.brief.anchors += [lead.name, topic]


@archetype(
    "won-deal-kickoff",
    family="sales",
    title="A deal is won: book the kickoff with the customer's contact and put its prep on the onboarding board",
    services=("crm", "meetings", "tasks"),
    fits=can_arrive(COLLEAGUE),
)
def won_deal_kickoff(s: Scenario) -> None:
    deals = [d for d in s.records("crm", "deal", where={"stage": "won"}) if d["contact_id"]]
    companies = [d["company_id"] for d in deals]
    # "X signed!" is news only on the day the deal closed (the world check's `news` invariant).
    today = s.world.now[:10]
    deal = s.pick([d for d in deals if companies.count(d["company_id"]) == 1 and d["close_date"] == today],
                  "no company with one deal won today")
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
    trigger = arrive(s, seller, Ask(
        subject=f"{company} kickoff",
        text=f"{company} signed! \"{deal['name']}\" is won. Can someone book the kickoff with their contact on the deal for "
             f"{_spoken(start)} (45 minutes, Zoom) and put the prep on the onboarding board for {support.first_name}?",
        team="sales",
    ), channels=COLLEAGUE)
    firm = lookup(s, s.record("crm", "company", deal["company_id"]), {"query": company, "name": company},
                  say=f"find {company} in the CRM", name=company)
    found = lookup(s, deal, {"company_id": firm.ref("id"), "stage": "won"}, say=f"find the won deal with {company}",
                   name=f"the won deal with {company}")
    s.refer(deal, f"the won deal with {company}", relation="customer", where={"company_id": deal["company_id"], "stage": "won"})
    person = lookup(s, contact, {"id": found.ref("contact_id"), "contact_id": found.ref("contact_id")},
                    say="look up the deal's primary contact", name=f"{contact['first_name']}'s CRM contact")
    colleagues = [c for c in s.records("crm", "contact", where={"company_id": deal["company_id"], "archived": False})
                  if c.key != contact.key]
    if colleagues:  # the request names nobody: the deal says which of the company's people is invited
        s.decide("pick", f"the deal's contact among {company}'s {len(colleagues) + 1} people in the CRM")
    meeting = s.call(
        "meetings", "create_meeting",
        {"topic": f"Kickoff: {company}", "start_time": start, "duration": 45, "invitees": ListOf((person.ref("email"),)),
         "agenda": detail("Introductions, goals, the rollout plan and next steps.")},
        say=f"book a 45-minute Zoom meeting called \"Kickoff: {company}\" for {_spoken(start)} with the deal's primary contact invited",
    )
    board = s.pick(s.records("tasks", "project", where={"name": "Customer onboarding", "archived": False}), "no onboarding board")
    listed = lookup(s, board, {"query": "Customer onboarding", "name": "Customer onboarding"}, say="find the Customer onboarding board")
    s.call(
        "tasks", "create_task",
        {"project_id": listed.ref("id"), "name": f"{company}: kickoff prep", "assignee_email": support.email, "due_on": prep,
         "notes": s.text("Kickoff meeting: ", meeting.ref("join_url"))},
        say=f"add a task \"{company}: kickoff prep\" to the Customer onboarding board for {support.name}, due "
            f"{_day(_iso(prep_due))}, with the meeting link in its notes",
        mentions=[(meeting.ref("join_url"), "the meeting link")],
    )
    reply(s, trigger, ["Kickoff booked: ", meeting.ref("join_url")], say=reply_clause(trigger, "the join link"),
          facts=[Said("the meeting link", meeting.ref("join_url"))], subject=f"Re: {company} kickoff")
    s.brief.intro = asking(trigger, f"to book {company}'s kickoff now that they signed")
    s.brief.goal = (f"Book the kickoff {seller.first_name} asked for as a 45-minute Zoom meeting called \"Kickoff: {company}\" with "
                    f"the deal's primary contact, add \"{company}: kickoff prep\" to the Customer onboarding board for "
                    f"{support.name} due {_day(_iso(prep_due))} with the join link in its notes, and "
                    f"{reply_clause(trigger, 'the join link')}")
    s.brief.anchors += [seller.name, company, support.name]


# -- operations ------------------------------------------------------------------------------------------


@archetype(
    "zoom-meeting-reschedule",
    family="operations",
    title="A customer asks to move an upcoming Zoom call: move it and confirm with the (unchanged) join link",
    services=("meetings",),
    fits=can_arrive(),
)
def zoom_meeting_reschedule(s: Scenario) -> None:
    now = s.world.now
    customers = {p.email: p for p in s.world.customers}
    team = {p.email: p for p in s.world.team}
    upcoming = [m for m in s.records("meetings", "meeting", where={"status": "scheduled", "kind": "meeting"})
                if m["start_time"] > _iso(s.world.now_dt + timedelta(hours=20))]
    fits = [(m, customers[m["invitees"][0]]) for m in upcoming
            if m["host_email"] in team and len(m["invitees"]) == 1 and m["invitees"][0] in customers]
    # Someone with another call with us on another day: the day they name picks which one moves.
    twinned = [(m, p) for m, p in fits
               if len({o["start_time"][:10] for o in upcoming if p.email in o["invitees"] and o["host_email"] == m["host_email"]}) > 1]
    meeting, person = s.pick(twinned or fits, "no upcoming Zoom call with one customer")
    host = team[meeting["host_email"]]
    theirs = [m for m in upcoming if person.email in m["invitees"]]
    if len([m for m in theirs if m["start_time"][:10] == meeting["start_time"][:10]]) != 1:
        raise Skip("more than one call with them that day")
    s.subject = person
    start = _dt(meeting["start_time"])
    new_start = _iso(start + timedelta(days=1 if start.weekday() < 4 else 3))
    trigger = arrive(s, person, Ask(
        subject=f"Re: {meeting['topic']}",
        text=s.rng.choice((
            f"Something came up on {start:%A}. Could we move our Zoom call with {host.first_name} to {_spoken(new_start)}, same length?",
            f"Apologies for the short notice: {start:%A} doesn't work for us any more. Could the call with {host.first_name} "
            f"move to {_spoken(new_start)}?",
        )),
        short=f"Could we move our Zoom call with {host.first_name} to {_spoken(new_start)}? Sorry for the short notice.",
        relay=f"{person.first_name} can't make the Zoom call with {host.first_name} on {start:%A} and asks to move it to "
              f"{_spoken(new_start)}.",
    ))
    found = lookup(s, meeting, {"invitee_email": email_of(s, trigger), "host_email": host.email, "from_time": now},
                   say=f"find {host.first_name}'s Zoom call with {person.first_name} on {start:%A}",
                   name=f"the Zoom call with {person.first_name}")
    s.refer(meeting, f"the Zoom call with {person.first_name} on {start:%A}", relation="invitee",
            where={"id": meeting.key, "status": "scheduled"})
    others = [m for m in theirs if m.key != meeting.key and shows(s, found, m)]
    if others:
        s.trap("other-meeting", others[0], f"their other call \"{others[0]['topic']}\"", step=found)
    act(s, "reschedule", found, {"start_time": new_start}, say=f"move the Zoom call with {person.first_name} to {_spoken(new_start)}")
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nNo problem, it's moved to {_spoken(new_start)}. The link stays the same: ", found.ref("join_url")],
        say=reply_clause(trigger, "the new time and the join link"),
        facts=[Said("the new time", Lit(new_start), "datetime"), Said("the meeting link", found.ref("join_url"))],
        subject=f"Re: {meeting['topic']}",
        relay_parts=[f"Moved {person.first_name}'s call to {_spoken(new_start)}; the link stays ", found.ref("join_url"),
                     ". Could you let them know?"],
    )
    s.brief.intro = f"{trigger.intro} asking to move their Zoom call with {host.name}"
    s.brief.goal = (f"Move the call {person.first_name} is asking about to the time they proposed and "
                    f"{reply_clause(trigger, 'the new time and the join link')}")
    s.brief.constraints.append("Don't touch their other meetings")
    s.brief.anchors += [person.name, host.name]


# -- marketing -------------------------------------------------------------------------------------------

_UNSUBSCRIBE_ASKS = (
    "Please take me off your mailing lists. I get far too many newsletters these days.",
    "Could you unsubscribe me from all your marketing emails? I'll still read the product emails my admin forwards.",
    "I'd like to stop receiving your newsletters and announcements, please remove me.",
)


@archetype(
    "unsubscribe-request",
    family="marketing",
    title="A customer asks to stop marketing emails: unsubscribe them everywhere, note it in the CRM, confirm",
    services=("marketing", "crm"),
    fits=can_arrive(),
)
def unsubscribe_request(s: Scenario) -> None:
    members = s.records("marketing", "member")
    active: dict[str, list[Rec]] = {}
    for m in members:
        if m["status"] in ("subscribed", "pending"):
            active.setdefault(m["email_address"], []).append(m)
    contacts = {c["email"]: c for c in s.records("crm", "contact", where={"archived": False})}
    names = [c["name"] for c in contacts.values()]
    fits = [p for p in s.world.customers if p.email in active and p.email in contacts and names.count(p.name) == 1]
    person = s.pick(fits, "no customer on a mailing list and in the CRM")
    s.subject = person
    theirs = sorted(active[person.email], key=lambda m: m["audience_id"])
    others = [o for o in s.world.organisations[1:] if o.id != person.organisation_id]
    twin_org = s.pick(others, "no other company")
    twin_email = f"{person.email.split('@')[0]}@{twin_org.domain}"
    if any(m["email_address"] == twin_email for m in members) or any(p.email == twin_email for p in s.world.people):
        raise Skip("the namesake's address is taken")
    twin = s.copy(theirs[0], email_address=twin_email, company=twin_org.name, city=twin_org.city, tags=["Prospect"],
                  vip=False, source="Signup form", status="subscribed", unsubscribe_reason=None)
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice(("Unsubscribe", "Please remove me", "Too many emails")),
        text=s.rng.choice(_UNSUBSCRIBE_ASKS),
        short="Please take me off all your marketing emails.",
        relay=f"{person.first_name} asks to be taken off all our marketing emails.",
    ))
    strict = s.rng.random() < 0.5
    if strict:
        rule = consult(
            s, "Email consent rules",
            "- When someone asks to stop our marketing emails, unsubscribe their address on every audience it is on, "
            "the same day.\n- Unsubscribe; never archive or delete the member: the unsubscribed record is what keeps "
            "them off future imports.\n- Note the request on their CRM contact.",
            author_role=rule_author(s, "product manager"),
        )
    # Found by name, as people search: the namesake at another company shows beside them.
    found = lookup(s, theirs[0], {"query": person.name}, say=f"find {person.first_name} on our mailing lists",
                   name=f"{person.first_name}'s {theirs[0]['audience_name']} membership")
    s.trap("same-name-member", twin, f"the other {person.name} (at {twin_org.name})", step=found)
    first = act(s, "opt_out", found, {"reason": detail("Asked us to stop marketing emails")},
                say=f"unsubscribe {person.first_name} from {theirs[0]['audience_name']}")
    for member in theirs[1:]:
        more = lookup(s, member, {"query": found.ref("email_address"), "email_address": found.ref("email_address")},
                      say="find their other memberships")
        act(s, "opt_out", more, {"reason": detail("Asked us to stop marketing emails")},
            say=f"unsubscribe them from {member['audience_name']} too")
    lists = [Said("a list they left", Lit(m["audience_name"])) for m in theirs]
    listed = " and ".join(m["audience_name"] for m in theirs)
    crm = lookup(s, s.record("crm", "contact", contacts[person.email]["id"]), {"query": person.name, "email": found.ref("email_address")},
                 say=f"find {person.first_name} in the CRM", name=f"{person.first_name}'s CRM contact")
    log(s, crm, [f"Asked us to stop marketing emails; unsubscribed from {listed}."], say="note the request on their CRM contact",
        facts=lists)
    reply(s, trigger,
          [f"Hi {person.first_name},\n\nDone: you are unsubscribed from {listed} and won't get our marketing emails any more."],
          say=reply_clause(trigger, "the lists you took them off"), facts=lists, subject="Re: your marketing emails",
          relay_parts=[f"Done: {person.first_name} is unsubscribed from {listed}. Could you confirm it to them?"])
    if strict:
        violation = list(s.specs)
        violation[first.index] = s.spec("marketing", "archive_member", {"member_id": found.ref("id")})
        s.forbid_by_policy(rule.rec, "unsubscribe, never archive", first, violation,
                           ("marketing", "members", {"id": theirs[0].key, "status": "archived"}),
                           f"{person.first_name}'s member is unsubscribed, not archived")
        s.brief.constraints.append(rule.pointer)
    s.brief.intro = f"{_asked_by(trigger)} asking us to stop sending marketing emails"
    s.brief.goal = (f"Unsubscribe {person.first_name} from every mailing list they are on, note it on their CRM contact, "
                    f"and {reply_clause(trigger, 'the lists you took them off')}")
    s.brief.anchors += [person.name]


def _one_week_gap(s: Scenario, audience: Rec, when: datetime) -> float:
    """Days from ``when`` to the nearest campaign to ``audience`` sent or scheduled (inf: none)."""
    gaps = [abs((_dt(at) - when).total_seconds()) / 86400
            for c in s.records("marketing", "campaign", where={"audience_id": audience.key})
            if (at := c["send_time"] or c["schedule_time"])]
    return min(gaps, default=float("inf"))


def _nearest_campaign(s: Scenario, audience: Rec, when: datetime) -> Rec:
    sent = [c for c in s.records("marketing", "campaign", where={"audience_id": audience.key}) if c["send_time"] or c["schedule_time"]]
    return min(sent,
               key=lambda c: abs((_dt(c["send_time"] or c["schedule_time"]) - when).total_seconds()))


@archetype(
    "campaign-frequency-cap",
    family="marketing",
    title="A colleague asks to schedule a campaign draft: schedule it only if the email rules allow a send then",
    services=("marketing",),
    fits=can_arrive(COLLEAGUE),
)
def campaign_frequency_cap(s: Scenario) -> None:
    drafts = [d for d in s.records("marketing", "campaign", where={"status": "draft"}) if d["recipient_count"] > 0]
    draft = s.pick(drafts, "no draft campaign with recipients")
    audience = s.record("marketing", "audience", draft["audience_id"])
    pm = colleague(s, "product manager")
    # Any half hour in the hours campaigns go out, from the second working day on for three weeks and a half (on any
    # day: the audience's own newsletters go out on Sundays), with its gap to the audience's nearest other campaign.
    first = _working_day(s, 2)
    moments = [first + timedelta(days=day, hours=hour, minutes=minute)
               for day in range(25) for hour in range(8, 17) for minute in (0, 30)]
    options = [(moment, _one_week_gap(s, audience, moment)) for moment in moments]
    # Near the rule's edge on either side: under seven days from another send (too soon), or over seven (fine), most
    # often within a day of it; never on the line itself, where "within 7 days" would read either way.
    blocked = [(m, gap) for m, gap in options if 4.5 <= gap < 6.9]
    allowed = [(m, gap) for m, gap in options if 7.1 < gap < 10]
    conflict = bool(blocked) and (not allowed or s.rng.random() < 0.5)
    when_at, _ = near_first(s, blocked if conflict else allowed, lambda o: o[1], 7, "no time near the one-week limit to ask for")
    requested = _iso(when_at)
    rule = consult(
        s, "Email marketing rules",
        "- An audience gets at most one campaign a week: nothing goes out within 7 days (before or after) of another "
        "campaign to the same audience, sent or scheduled.\n- If a requested send time breaks this, leave the campaign as "
        "a draft and tell whoever asked, with the conflicting campaign.",
        author_role=rule_author(s, "product manager"),
    )
    trigger = arrive(s, pm, Ask(
        subject=f"Schedule \"{draft['title']}\"",
        text=f"Could someone schedule the \"{draft['title']}\" campaign in Mailchimp for {_spoken(requested)}? It's ready to go.",
        team="general",
    ), channels=COLLEAGUE)
    found = lookup(s, draft, {"query": draft["title"], "status": "draft"}, say=f"find the \"{draft['title']}\" draft in Mailchimp",
                   name=f"the \"{draft['title']}\" draft")
    nearest = _nearest_campaign(s, audience, when_at)
    # The days from the requested send to the nearest other campaign of the audience (sent or scheduled) decide it.
    s.decide("figure", "the days between the requested send and the audience's nearest other campaign")
    s.decide("rule", "one campaign a week per audience", default=not conflict,
             value=_one_week_gap(s, audience, when_at), threshold=7)
    lookup(s, nearest, {"audience_id": found.ref("audience_id")}, say="check what else its audience gets around then")
    if conflict:
        answer = reply(
            s, trigger, [f"I can't schedule it for {_spoken(requested)}: \"{nearest['title']}\" goes to the same audience within a "
                         "week of it, so it stays a draft. Another date?"],
            say=f"schedule it for {_spoken(requested)} only if the rules allow it, and "
                f"{reply_clause(trigger, 'what you did (and the conflicting campaign if it cannot go out then)')}",
            facts=[Said("the conflicting campaign", Lit(nearest["title"]))], subject=f"Re: Schedule \"{draft['title']}\"",
        )
        violation = list(s.specs)
        violation[answer.index] = s.spec("marketing", "schedule_campaign", {"campaign_id": found.ref("id"), "schedule_time": requested})
        s.forbid_by_policy(rule.rec, "one campaign a week per audience", answer, violation,
                           ("marketing", "campaigns", {"id": draft.key, "status": "scheduled"}),
                           "The campaign stays a draft: the rules allow no send that week")
    else:
        act(s, "schedule", found, {"schedule_time": requested}, say=f"schedule it for {_spoken(requested)} only if the rules allow it")
        reply(s, trigger, [f"Scheduled \"{draft['title']}\" for {_spoken(requested)}: nothing else goes to that audience that week."],
              say=reply_clause(trigger, "what you did (and the conflicting campaign if it cannot go out then)"),
              facts=[Said("the send time", Lit(requested), "datetime")], subject=f"Re: Schedule \"{draft['title']}\"")
        s.policy_documents.append(rule.rec)
    s.brief.intro = asking(trigger, f"to schedule the \"{draft['title']}\" campaign")
    s.brief.goal = (f"Schedule \"{draft['title']}\" for the time {pm.first_name} asked if our email marketing rules allow it; "
                    f"if they don't, leave it as a draft. Either way, "
                    f"{reply_clause(trigger, 'what you did (and the conflicting campaign if it cannot go out then)')}")
    s.brief.constraints.append(rule.pointer)
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
    services=("marketing",),
    fits=can_arrive(COLLEAGUE),
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
    # The written rule says where replies go: without it nothing in the data decides any of this work.
    rule = consult(
        s, "Email marketing rules",
        f"- Every campaign's reply-to address is {pm.name}'s ({pm.email}), never the audience's own address.\n"
        "- Build each campaign on a saved segment, named after who it reaches.",
        author_role=rule_author(s, "product manager"),
    )
    trigger = arrive(s, pm, Ask(
        subject=f"{industry} campaign",
        text=f"Could someone draft a campaign in Mailchimp for our newsletter members tagged {industry}? Save them as a segment "
             f"called \"{segment_name}\" and use the subject \"{subject}\". Just a draft for now, I'll review it.",
        team="general",
    ), channels=COLLEAGUE)
    lookup(s, news, {"query": news["name"], "name": news["name"]}, say="find the newsletter audience", name="the newsletter audience")
    segment = s.call(
        "marketing", "create_segment",
        {"audience_id": news.key, "name": segment_name, "tags": ListOf((Lit(industry),)), "match": detail("all")},
        say=f"save a segment \"{segment_name}\" of the newsletter members tagged {industry}",
    )
    # The internal title is left to the agent; it must not contain the stated texts (a check would demand them there).
    args = {"audience_id": news.key, "title": detail(f"{industry} campaign"), "subject_line": subject,
            "content": detail(f"Hi *|FNAME|*,\n\n{pitch}\n\nThe team"), "segment_id": segment.ref("id"), "reply_to": pm.email}
    campaign = s.call("marketing", "create_campaign", args,
                      say=f"draft a campaign to that segment with the subject \"{subject}\", set up the way our email "
                          "marketing rules say")
    s.set_policy(rule.rec, f"the reply-to is {pm.first_name}'s address", campaign, "reply_to", pm.email, news["from_email"],
                 f"Replies go to {pm.first_name}, as the email marketing rules say")
    s.brief.constraints.append(rule.pointer)
    reply(s, trigger, ["Draft ready for review: ", campaign.ref("archive_url")], say=reply_clause(trigger, "the campaign's link"),
          facts=[Said("the campaign link", campaign.ref("archive_url"))], subject=f"Re: {industry} campaign")
    s.brief.intro = asking(trigger, f"for a campaign draft for the {industry} customers")
    s.brief.goal = (f"Save the newsletter members tagged {industry} as a segment \"{segment_name}\", draft a campaign to it with "
                    f"the subject \"{subject}\" (don't send or schedule it), and {reply_clause(trigger, 'its link')}")
    s.brief.anchors += [pm.name, industry, subject]
