"""HR and people-finance workflows: time off, hiring, new hires and onboarding, expense reports and reimbursements.

The people are the home organisation's staff (``mcp_services.kernel.plans.staff``): the user runs
Operations, manages its staff and approves their time off, approves most job openings, and is an
expense admin. Only the World's team (the department heads, the office manager...) are in the chat
workspace and have calendars, so the rest of the staff are written to by email. The rules that decide
the work live in the data: the time-off policies in hr, the job's approval and salary range in
recruiting, the expense policy and its categories in expenses, and guides kept in the shared drive or
sent by a manager (``rule_source``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from faker.providers.person.en_US import Provider as _PersonNames

from composer.archetypes.common import chat_post, money, recent_hours, rule_source, short_date, when_phrase
from composer.plan import ListOf, Lit
from composer.scenario import Rec, Scenario, Skip, Step, Trap, archetype, detail
from mcp_services.kernel.plans.staff import business_days, staff_plan

# -- the staff, as the services hold them ------------------------------------------------------------


def _today(s: Scenario) -> date:
    return s.world.now_dt.date()


def _employee(s: Scenario, email: str) -> Rec:
    found = s.records("hr", "employee", where={"work_email": email})
    if not found:
        raise Skip(f"{email} is not on the payroll")
    return found[0]


def _me(s: Scenario) -> Rec:
    return _employee(s, s.world.user.email)


def _settled_reports(s: Scenario) -> list[Rec]:
    """The user's direct reports who have been here over a month (new hires have no time off history yet)."""
    cutoff = (_today(s) - timedelta(days=30)).isoformat()
    return [e for e in s.records("hr", "employee", where={"manager_id": _me(s).key}) if e["hire_date"] < cutoff]


def _team_emails(s: Scenario) -> set[str]:
    return {p.email for p in s.world.team}


def _staff_email(
    s: Scenario, name: str, email: str, subject: str, body: str, *, hours_ago: float | None = None,
    attachments: tuple[str, ...] = (),
) -> tuple[Rec, str]:
    """An email a colleague (anyone on the payroll) or a candidate sends the user; it starts the work."""
    hours = recent_hours(s) if hours_ago is None else hours_ago
    extra = {"attachments": list(attachments)} if attachments else {}
    message = s.event("mailbox", "email_received", "message", from_email=email, from_name=name, subject=subject, body=body,
                      hours_ago=hours, **extra)
    s.trigger = message
    return message, when_phrase(s, hours)


def _channel_members(s: Scenario, channel: str) -> set[str]:
    """The emails of the members of a chat channel (empty without chat)."""
    if not s.has("chat"):
        return set()
    found = s.records("chat", "channel", where={"name": channel})
    if not found:
        return set()
    users = {u.key: u["email"] for u in s.records("chat", "user")}
    return {users[m["user_id"]] for m in s.records("chat", "membership", where={"channel_id": found[0].key})}


@dataclass(frozen=True)
class _Ask:
    """A colleague's request that starts the work, by email or in a chat channel, and how to answer it."""

    message: Rec
    when: str
    channel: str | None  # the chat channel it was posted in; None for an email
    first_name: str

    @property
    def wrote(self) -> str:
        return f"wrote in #{self.channel}" if self.channel else "emailed"

    def refer(self, s: Scenario) -> None:
        if self.channel:
            s.refer(self.message, f"{self.first_name}'s message in #{self.channel}", relation="author",
                    where={"user_id.email": self.message["author_email"], "channel_id.name": self.channel}, latest="posted_at")
        else:
            s.refer(self.message, f"{self.first_name}'s email", relation="sender",
                    where={"from_email": self.message["from_email"]}, latest="sent_at")

    def answer(self, s: Scenario, text: str, say: str) -> None:
        if self.channel:
            s.call("chat", "reply_in_thread", {"message_id": self.message.key, "text": detail(text)}, say=f"{say} in the thread")
        else:
            s.call("mailbox", "reply_to_message", {"message_id": self.message.key, "body": detail(text)}, say=say)


def _asked(s: Scenario, name: str, email: str, subject: str, body: str, chat_text: str, *, channel: str) -> _Ask:
    """The request, posted in ``channel`` when its author is a member there (half the time), else emailed."""
    first = name.split(" ")[0]
    author = next((p for p in s.world.team if p.email == email), None)
    if author is not None and email in _channel_members(s, channel) and s.world.user.email in _channel_members(s, channel) \
            and s.rng.random() < 0.5:
        message, when = chat_post(s, author, channel, chat_text)
        ask = _Ask(message, when, channel, first)
    else:
        message, when = _staff_email(s, name, email, subject, body)
        ask = _Ask(message, when, None, first)
    ask.refer(s)
    return ask


def _day(iso: str) -> str:
    """``2025-04-14`` -> ``Monday 14 April``."""
    return f"{date.fromisoformat(iso[:10]).strftime('%A')} {short_date(iso)}"


def _span(start: str, end: str) -> str:
    return _day(start) if start == end else f"{_day(start)} to {_day(end)}"


def _weekday_on_or_after(day: date) -> date:
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def _working_days_from(start: date, count: int) -> date:
    """The last day of ``count`` working days that start on ``start`` (a weekday), counted as hr counts them."""
    end = start
    while business_days(start.isoformat(), end.isoformat()) < count:
        end += timedelta(days=1)
    return end


def _iso_at(day: date, hour: int, minute: int = 0) -> str:
    return datetime(day.year, day.month, day.day, hour, minute).strftime("%Y-%m-%dT%H:%M:%SZ")


def _plus(iso: str, minutes: int) -> str:
    return (datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ") + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _overlaps(start: str, end: str, taken: list[tuple[str, str]]) -> bool:
    return any(start <= b and end >= a for a, b in taken)


def _free_stretch(
    s: Scenario, length: int, taken: list[tuple[str, str]], *, earliest: int = 6, latest: int = 70
) -> tuple[str, str]:
    """A stretch of ``length`` working days some weeks ahead, within this year, clear of ``taken``."""
    today = _today(s)
    for _ in range(20):
        start = _weekday_on_or_after(today + timedelta(days=s.rng.randint(earliest, latest)))
        end = _working_days_from(start, length)
        first, last = start.isoformat(), end.isoformat()
        if end.year == today.year and not _overlaps(first, last, taken):
            return first, last
    raise Skip("no free stretch of working days left this year")


def _calendar_of(s: Scenario, email: str) -> Rec:
    found = s.records("calendar", "calendar", where={"owner_email": email, "is_primary": True})
    if not found:
        raise Skip(f"{email} has no calendar")
    return found[0]


# -- time off ------------------------------------------------------------------------------------

_TIME_OFF_NOTES = {
    "vacation": ("Family trip", "Visiting my parents", "A friend's wedding abroad", "Hiking trip",
                 "Taking the kids to the coast"),
    "personal": ("Moving to a new apartment", "Closing on the house", "Jury duty", "Family matters"),
}
_KIND_WORDS = {"vacation": "vacation", "personal": "personal days", "sick": "sick leave"}
_CHANGED_PLANS = {
    "vacation": ("my plans have changed", "the trip fell through", "I'd rather keep the days for later in the year"),
    "personal": ("we've had to postpone the move", "the appointment was moved", "it turns out I don't need the days after all"),
}
#: The longest stretch people ask for in one go, in working days.
_LONGEST = {"vacation": 15, "personal": 5}


def _requests_of(s: Scenario, employee: Rec, statuses: tuple[str, ...] = ("requested", "approved")) -> list[Rec]:
    return s.records("hr", "time_off_request", where={"employee_id": employee.key, "status": statuses})


def _balance(s: Scenario, employee: Rec, kind: str, year: int) -> Rec:
    found = s.records("hr", "time_off_balance", where={"employee_id": employee.key, "type": kind, "year": year})
    if not found:
        raise Skip(f"{employee['name']} has no {kind} balance for {year}")
    return found[0]


def _room(balance: Rec) -> float:
    """Days a new request may take under the policy: available, minus other requests still waiting."""
    return round(float(balance["available_days"]) - float(balance["pending_days"]), 2)


def _file_other_request(s: Scenario, employee: Rec, taken: list[tuple[str, str]]) -> Rec | None:
    """A short request the employee filed some days ago for other dates, within their balance (as the product files it)."""
    kind = s.rng.choice(("vacation", "personal"))
    length = min(int(_room(_balance(s, employee, kind, _today(s).year))), s.rng.randint(1, 3))
    if length < 1:
        return None
    start, end = _free_stretch(s, length, taken, earliest=20, latest=80)
    taken.append((start, end))
    return s.event("hr", "time_off_requested", "time_off_request", employee_email=employee["work_email"], type=kind,
                   start_date=start, end_date=end, note=s.rng.choice(_TIME_OFF_NOTES[kind]), hours_ago=24.0 * s.rng.randint(2, 9))


def _time_off_label(request: Rec) -> str:
    state = "waiting request" if request["status"] == "requested" else "approved time off"
    return f"{state} for {_span(request['start_date'], request['end_date'])}"


@archetype(
    "time-off-decision",
    family="hr",
    title="A report files time off: approve or deny it by the balance rule of the time-off policy and tell them",
    services=("hr", "mailbox"),
)
def time_off_decision(s: Scenario) -> None:
    today = _today(s)
    employee = s.pick(_settled_reports(s), "the user manages nobody who has been here a month")
    first = employee["first_name"]
    approve = s.rng.random() < 0.5
    taken = [(r["start_date"], r["end_date"]) for r in _requests_of(s, employee)]

    # Another request of theirs still waiting, for other dates: seeded, or filed some days ago.
    if not [r for r in _requests_of(s, employee, ("requested",)) if r["start_date"] > today.isoformat()] and s.rng.random() < 0.7:
        _file_other_request(s, employee, taken)

    # How long the new request is decides it: within the room the policy leaves, or beyond it.
    options = []
    for kind in ("vacation", "personal"):
        room = _room(_balance(s, employee, kind, today.year))
        lengths = range(1, min(int(room), 5) + 1) if approve else range(int(room) + 1, min(int(room) + 3, _LONGEST[kind]) + 1)
        options += [(kind, n) for n in lengths if n >= 1]
    kind, length = s.pick(options, "no request length fits the decision")
    start, end = _free_stretch(s, length, taken)
    note = s.rng.choice(_TIME_OFF_NOTES[kind])
    hours = recent_hours(s)
    request = s.event("hr", "time_off_requested", "time_off_request", employee_email=employee["work_email"], type=kind,
                      start_date=start, end_date=end, note=note, hours_ago=hours)
    s.trigger = request
    when = when_phrase(s, hours)
    by_email = s.rng.random() < 0.5
    if by_email:
        email, when = _staff_email(
            s, employee["name"], employee["work_email"],
            f"Time off {short_date(start)}" + ("" if start == end else f" - {short_date(end)}"),
            f"Hi {s.world.user.first_name},\n\nI've just put in a request in HR for {_KIND_WORDS[kind]}, {_span(start, end)} "
            f"({note.lower()}). Could you have a look when you get a chance?\n\nThanks,\n{first}",
            hours_ago=max(0.1, hours - 0.1),
        )
        s.refer(email, f"{first}'s email", relation="sender", where={"from_email": employee["work_email"]}, latest="sent_at")
    s.refer(request, f"the request {first} filed {when}", relation="requester",
            where={"employee_id": employee.key, "status": "requested"}, latest="created_at")

    found = s.call(
        "hr", "list_time_off_requests", {"approver_email": s.world.user.email, "status": "requested"}, select=request,
        say=f"find the time-off request {first} filed {when} among the requests waiting for you in HR",
    )
    others = [r for r in _requests_of(s, employee, ("requested",)) if r.key != request.key]
    if others:
        other = others[0]
        s.trap("other-request", other, f"{first}'s other {_time_off_label(other)}", step=found)
    balance = _balance(s, employee, kind, today.year)
    s.call("hr", "get_time_off_balances", {"employee_id": found.ref("employee_id")}, select=balance,
           say=f"check {first}'s {_KIND_WORDS[kind]} balance")
    policy = s.records("hr", "time_off_policy", where={"type": kind})[0]
    s.call("hr", "list_time_off_policies", {}, select=policy, say="read the time-off policy")
    decide = "approve the request if the policy allows it, and otherwise deny it with the reason"
    if approve:
        decision = s.call("hr", "approve_time_off_request", {"request_id": found.ref("id"), "note": detail("Approved - enjoy!")},
                          say=decide)
    else:
        decision = s.call(
            "hr", "deny_time_off_request",
            {"request_id": found.ref("id"), "reason": detail(f"It goes beyond your available {_KIND_WORDS[kind]} balance.")},
            say=decide,
        )
    outcome = "approved" if approve else "denied, and why"
    if by_email:
        tell = s.call("mailbox", "reply_to_message",
                      {"message_id": email.key, "body": detail(f"Hi {first},\n\nYour request is {outcome}.")},
                      say=f"reply to {first}'s email with your decision")
    else:
        tell = s.call("mailbox", "send_email",
                      {"to": ListOf((found.ref("employee_email"),)), "subject": detail("Your time-off request"),
                       "body": detail(f"Hi {first},\n\nYour request is {outcome}.")},
                      say=f"email {first} your decision")
    rule = f"a request cannot exceed the available {_KIND_WORDS[kind]} balance, after other requests still waiting"
    if approve:
        s.policy_documents.append(policy)
    else:
        approve_instead = s.spec("hr", "approve_time_off_request", {"request_id": found.ref("id")})
        violation = [*s.specs[:3], approve_instead, s.specs[tell.index]]
        s.forbid_by_policy(policy, rule, decision, violation,
                           ("hr", "time_off_requests", {"id": request.key, "status": "approved"}),
                           "The request beyond the balance was not approved")
    if by_email:
        s.brief.intro = f"{employee['name']}, who reports to you, emailed {when} about time off they just requested"
    else:
        s.brief.intro = f"{employee['name']}, who reports to you, filed a time-off request in HR {when}"
    tell_how = f"reply to {first}'s email with the outcome" if by_email else f"email {first} the outcome"
    s.brief.goal = f"Decide {first}'s new request the way our time-off policy says and {tell_how}"
    if others:
        s.brief.constraints.append(f"Only that request: leave {first}'s other requests as they are")
    s.brief.anchors += [employee["name"]]


@archetype(
    "time-off-cancellation",
    family="hr",
    title="A report's plans changed: cancel the time off they name (not their other requests) and confirm",
    services=("hr", "mailbox"),
)
def time_off_cancellation(s: Scenario) -> None:
    today = _today(s).isoformat()
    upcoming = [r for e in _settled_reports(s) for r in _requests_of(s, e) if r["start_date"] > today]
    request = s.pick(upcoming, "none of the user's reports has upcoming time off")
    employee = s.record("hr", "employee", request["employee_id"])
    first, kind = employee["first_name"], request["type"]
    span = _span(request["start_date"], request["end_date"])
    why = s.rng.choice(_CHANGED_PLANS[kind if kind in _CHANGED_PLANS else "vacation"])
    taken = [(r["start_date"], r["end_date"]) for r in _requests_of(s, employee)]
    if len([r for r in _requests_of(s, employee) if r["start_date"] > today]) == 1 and s.rng.random() < 0.7:
        _file_other_request(s, employee, taken)
    email, when = _staff_email(
        s, employee["name"], employee["work_email"], "Cancel my time off",
        f"Hi {s.world.user.first_name},\n\nUnfortunately {why}, so could you cancel my {_KIND_WORDS[kind]} for {span}? "
        f"Sorry for the back and forth.\n\nThanks,\n{first}",
    )
    s.refer(email, f"{first}'s email", relation="sender", where={"from_email": employee["work_email"]}, latest="sent_at")
    s.refer(request, f"{first}'s time off for {span}", relation="requester",
            where={"employee_id": employee.key, "start_date": request["start_date"], "end_date": request["end_date"],
                   "status": ("requested", "approved")})
    person = s.call("hr", "search_employees", {"query": employee["name"]}, select=employee, say=f"look {first} up in HR")
    found = s.call("hr", "list_time_off_requests", {"employee_id": person.ref("id")}, select=request,
                   say=f"find the time off {first} wants cancelled among their requests")
    others = [r for r in _requests_of(s, employee) if r.key != request.key and r["start_date"] > today]
    if others:
        other = others[0]
        s.trap("other-time-off", other, f"{first}'s {_time_off_label(other)}", step=found)
    s.call("hr", "cancel_time_off_request", {"request_id": found.ref("id"), "reason": detail(why[:1].upper() + why[1:])},
           say="cancel it")
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key, "body": detail(f"Hi {first},\n\nDone: your time off for {span} is cancelled.")},
           say=f"reply to {first} to confirm")
    s.brief.intro = f"{employee['name']}, who reports to you, emailed {when} asking to cancel some time off"
    s.brief.goal = f"Cancel the time off {first} asks about and reply to confirm"
    if others:
        s.brief.constraints.append(f"{first}'s other time off stays as it is")
    s.brief.anchors += [employee["name"]]


# -- hiring --------------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _monday_weeks_ahead(s: Scenario, low: int, high: int) -> date:
    day = _today(s) + timedelta(weeks=s.rng.randint(low, high))
    return day - timedelta(days=day.weekday())


def _round_salary(s: Scenario, job: Rec) -> float:
    """A salary an offer would name: a round figure inside the job's range."""
    low, high = int(job["salary_min"] // 1000), int(job["salary_max"] // 1000)
    return float(s.rng.randint(low + (1 if low * 1000 < job["salary_min"] else 0), high) * 1000)


def _offer_can_be_out(s: Scenario, application: Rec) -> bool:
    """The application has an extended offer starting on a weekday, or none yet (the recruiter may have just sent one)."""
    offers = s.records("recruiting", "offer", where={"application_id": application.key})
    return not offers or any(o["status"] == "extended" and date.fromisoformat(o["start_date"]).weekday() < 5 for o in offers)


def _offer_out(s: Scenario, application: Rec, job: Rec) -> Rec:
    """The extended offer of an offer-stage application: seeded, or extended by the recruiter lately."""
    offers = s.records("recruiting", "offer", where={"application_id": application.key, "status": "extended"})
    if offers:
        return offers[0]
    start = _monday_weeks_ahead(s, 3, 6).isoformat()
    return s.event("recruiting", "offer_extended", "offer", application_id=application.key, salary=_round_salary(s, job),
                   start_date=start, hours_ago=24.0 * s.rng.randint(1, 4))


def _offer_stage(s: Scenario, *, approval: str) -> list[tuple[Rec, Rec]]:
    """Active offer-stage applications of open jobs with this approval status, with their job."""
    jobs = {j.key: j for j in s.records("recruiting", "job", where={"status": "open", "approval_status": approval})}
    return [
        (a, jobs[a["job_id"]])
        for a in s.records("recruiting", "application", where={"stage": "offer", "status": "active"})
        if a["job_id"] in jobs
    ]


@archetype(
    "offer-accepted-hire",
    family="hr",
    title="A candidate accepts our offer: record it, hire them, add them to HR and book the welcome meeting the guide asks for",
    services=("recruiting", "hr", "calendar", "mailbox"),
)
def offer_accepted_hire(s: Scenario) -> None:
    domain = s.world.home.domain
    team = _team_emails(s)
    fits = [(a, j) for a, j in _offer_stage(s, approval="approved")
            if j["hiring_manager_email"] in team and _offer_can_be_out(s, a)]
    application, job = s.pick(fits, "no offer-stage candidate of an approved job")
    offer = _offer_out(s, application, job)
    candidate = s.record("recruiting", "candidate", application["candidate_id"])
    first, last, name = candidate["first_name"], candidate["last_name"], candidate["name"]
    work_email = f"{_slug(first)}.{_slug(last)}@{domain}"
    if s.records("hr", "employee", where={"work_email": work_email}):
        raise Skip("the new hire's work address is taken")
    hour, minute = s.rng.choice(((9, 30), (10, 0), (10, 30), (11, 0)))
    minutes = s.rng.choice((30, 45, 60))
    guide, pointer = rule_source(
        s, "New hire setup guide",
        "- When a candidate accepts an offer, record the acceptance in recruiting and mark the application hired.\n"
        "- Add the new hire to HR the same day: the job's title and department, the offer's start date as the hire date, "
        f"the email they applied with as their home email, and a work email of the form firstname.lastname@{domain} "
        "(lowercase).\n"
        f"- Book a {minutes}-minute welcome meeting on their first day at {_clock(hour, minute)} UTC with the new hire "
        "(at their work email) and their manager.",
        author_role="office manager",
    )
    starts = offer["start_date"]
    email, when = _staff_email(
        s, name, candidate["email"], f"Re: Your offer - {job['title']}",
        s.rng.choice((
            f"Hello,\n\nI'm delighted to accept your offer for the {job['title']} role. I'm looking forward to starting on "
            f"{_day(starts)}.\n\nBest regards,\n{name}",
            f"Hi,\n\nThank you - I accept the offer! The start date of {_day(starts)} works for me.\n\nKind regards,\n{name}",
        )),
    )
    s.refer(email, f"{first}'s email", relation="sender", where={"from_email": candidate["email"]}, latest="sent_at")
    s.refer(offer, f"the offer out to {first}", relation="candidate", where={"candidate_id": candidate.key, "status": "extended"})

    found = s.call("recruiting", "list_offers", {"status": "extended"}, select=offer,
                   say=f"find the offer out to {first} in recruiting")
    others = [o for o in s.records("recruiting", "offer", where={"status": "extended"}) if o.key != offer.key]
    if others:
        s.trap("other-offer", others[0], f"the offer out to {others[0]['candidate_name']}", step=found)
    s.call("recruiting", "record_offer_response",
           {"offer_id": found.ref("id"), "response": "accepted", "notes": detail("Accepted by email.")},
           say="record that it was accepted")
    s.call("recruiting", "hire_application", {"application_id": found.ref("application_id")}, say="mark the application hired")
    role = s.call("recruiting", "get_job", {"job_id": found.ref("job_id")},
                  say="open the job to see its department and hiring manager")
    department = s.records("hr", "department", where={"name": job["department"]})
    if not department:
        raise Skip(f"hr has no {job['department']} department")
    unit = s.call("hr", "list_departments", {}, select=department[0], say=f"find the {job['department']} department in HR")
    s.call(
        "hr", "add_employee",
        {"first_name": first, "last_name": last, "work_email": work_email, "job_title": role.ref("title"),
         "department_id": unit.ref("id"), "hire_date": found.ref("start_date"), "home_email": candidate["email"]},
        say=f"add {first} to HR as the new hire setup guide says",
    )
    first_day = date.fromisoformat(starts)
    start = _iso_at(first_day, hour, minute)
    end = _plus(start, minutes)
    mine, theirs = _calendar_of(s, s.world.user.email).key, _calendar_of(s, job["hiring_manager_email"]).key
    welcome = s.call(
        "calendar", "create_event",
        {"title": detail(f"Welcome, {first}!"), "start": start, "end": end,
         "attendee_emails": ListOf((Lit(work_email), role.ref("hiring_manager_email"))), "calendar_id": mine},
        say=f"book the welcome meeting the guide asks for with {first} and their manager",
        accept={"calendar_id": [mine, theirs]},  # in your calendar or the manager's: both invite the two of them
    )
    early = _iso_at(first_day, 9, 0) if (hour, minute) != (9, 0) else _iso_at(first_day, 9, 30)
    s.set_policy(guide, f"the welcome meeting is at {_clock(hour, minute)} UTC on the first day", welcome, "start", start, early,
                 f"The welcome meeting starts at {_clock(hour, minute)} UTC on the first day, as the new hire setup guide says")
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key,
            "body": detail(f"Hi {first},\n\nWonderful news - welcome aboard! See you on {_day(starts)}.")},
           say=f"reply to {first} to welcome them")
    s.brief.intro = f"{name} emailed {when} to accept our offer for the {job['title']} role"
    s.brief.goal = f"Get {first} hired and set up the way our new hire setup guide says, and reply to welcome {first}"
    s.brief.constraints.append(pointer)
    if others:
        s.brief.constraints.append("Leave the other offers that are out as they are")
    s.brief.anchors += [name, job["title"]]


_FIRST_NAMES = tuple(sorted(_PersonNames.first_names))
_LAST_NAMES = tuple(sorted(_PersonNames.last_names))
_MAIL_PROVIDERS = ("gmail.example", "outlook.example", "icloud.example", "proton.example")
_CURRENT_ROLES = {
    "Engineering": (("Software Engineer", "a fintech start-up"), ("Backend Developer", "an online retailer")),
    "Customer Support": (("Customer Support Representative", "a software company"), ("Help Desk Analyst", "a university")),
    "Sales": (("Account Manager", "a logistics company"), ("Sales Representative", "a SaaS vendor")),
    "Finance": (("Staff Accountant", "an accounting firm"), ("FP&A Associate", "a manufacturer")),
    "Operations": (("Office Coordinator", "a law firm"), ("Operations Assistant", "a hospital")),
    "Product": (("UX Designer", "a design agency"), ("Interaction Designer", "a bank")),
}
_TOO_HIGH = "Compensation expectations too high"


def _new_applicant(s: Scenario, taken: set[str]) -> tuple[str, str, str]:
    """A fresh person's name and the personal address they apply with."""
    for _ in range(50):
        first, last = s.rng.choice(_FIRST_NAMES), s.rng.choice(_LAST_NAMES)
        email = f"{_slug(first)}.{_slug(last)}@{s.rng.choice(_MAIL_PROVIDERS)}"
        if email not in taken:
            return first, last, email
    raise Skip("no fresh applicant name")


@archetype(
    "application-screening",
    family="hr",
    title="A new application arrives: screen it by the rules (salary expectation against the range), move it on or "
          "reject it, and email the candidate",
    services=("recruiting", "mailbox"),
)
def application_screening(s: Scenario) -> None:
    jobs = [j for j in s.records("recruiting", "job", where={"status": "open"}) if j["department"] in _CURRENT_ROLES]
    job = s.pick(jobs, "no open job")
    candidates = s.records("recruiting", "candidate")
    taken = {c["email"] for c in candidates}
    # Now and then the applicant shares the name of someone who applied for a job in another department.
    namesakes = [
        c for c in candidates
        if any(a["job_id"] != job.key and a["job_id"] in {j.key for j in jobs if j["department"] != job["department"]}
               for a in s.records("recruiting", "application", where={"candidate_id": c.key}))
    ]
    namesake = s.pick(namesakes, "nobody applied elsewhere") if namesakes and s.rng.random() < 0.5 else None
    if namesake is not None:
        first, last = namesake["first_name"], namesake["last_name"]
        email = next(f"{_slug(first)}.{_slug(last)}{n}@{p}" for n in ("", "1", "2") for p in _MAIL_PROVIDERS
                     if f"{_slug(first)}.{_slug(last)}{n}@{p}" not in taken)
    else:
        first, last, email = _new_applicant(s, taken)
    name = f"{first} {last}"
    too_high = s.rng.random() < 0.5
    top, bottom = job["salary_max"], job["salary_min"]
    expected = round((top * s.rng.uniform(1.06, 1.25) if too_high else s.rng.uniform(bottom, top)) / 1000) * 1000.0
    if (expected > top) != too_high:
        raise Skip("the expectation rounds across the top of the range")
    title, employer = s.rng.choice(_CURRENT_ROLES[job["department"]])
    letter = (
        f"I'm applying for the {job['title']} role. For the last few years I have worked as a {title} at {employer}, "
        f"and I'd love to bring that experience to your team. My salary expectation is {money(expected, job['currency'])} a year."
    )
    rules, pointer = rule_source(
        s, "Screening rules",
        "- Screen every new application within a day of it arriving.\n"
        "- Compare the salary expectation the candidate states with the job's salary range in recruiting. If it is above "
        f"the top of the range, reject the application with the reason \"{_TOO_HIGH}\".\n"
        "- Otherwise move it on to the phone screen.\n- Either way, email the candidate the outcome.",
        author_role="office manager" if job["hiring_manager_email"] == s.world.user.email else
        next(p.job_title for p in s.world.team if p.email == job["hiring_manager_email"]),
    )
    hours = recent_hours(s)
    application = s.event("recruiting", "application_received", "application", first_name=first, last_name=last, email=email,
                          requisition_id=job["requisition_id"], source=s.rng.choice(("Careers page", "LinkedIn", "Indeed")),
                          cover_letter=letter, current_title=title, hours_ago=hours)
    s.trigger = application
    when = when_phrase(s, hours)
    candidate = s.record("recruiting", "candidate", application["candidate_id"])
    s.refer(application, f"{first}'s application for the {job['title']} role", relation="applicant",
            where={"candidate_id.name": name, "job_id": job.key, "status": "active"})
    found = s.call("recruiting", "search_candidates", {"query": name}, select=candidate, say=f"look {name} up among the candidates")
    if namesake is not None:
        s.trap("namesake", namesake, f"the other candidate named {name}", step=found)
        # What an agent that took the namesake for the applicant would change: their application.
        for other in s.records("recruiting", "application", where={"candidate_id": namesake.key}):
            s.traps.append(Trap("namesake-application", other, f"{name}'s application for the {other['job_title']} role"))
    applied = s.call("recruiting", "list_applications", {"candidate_id": found.ref("id")},
                     say=f"open {first}'s application for the {job['title']} role")
    s.call("recruiting", "get_job", {"job_id": applied.ref("job_id")}, say="check the job's salary range")
    reason = s.records("recruiting", "rejection_reason", where={"name": _TOO_HIGH})[0]
    decide = "move it on to the phone screen, or reject it if the screening rules say so"
    if too_high:
        decision = s.call("recruiting", "reject_application",
                          {"application_id": applied.ref("id"), "rejection_reason_id": reason.key,
                           "notes": detail("Salary expectation above the range.")}, say=decide)
    else:
        decision = s.call("recruiting", "advance_application",
                          {"application_id": applied.ref("id"), "from_stage": "application_review"}, say=decide)
    outcome = "we will not take the application further" if too_high else "we'd like to set up a phone screen"
    tell = s.call("mailbox", "send_email",
                  {"to": ListOf((found.ref("email"),)), "subject": detail(f"Your application for {job['title']}"),
                   "body": detail(f"Hi {first},\n\nThank you for applying: {outcome}.")},
                  say=f"email {first} the outcome")
    if too_high:
        advance = s.spec("recruiting", "advance_application",
                         {"application_id": applied.ref("id"), "from_stage": "application_review"})
        s.forbid_by_policy(rules, "expectations above the top of the range are rejected", decision,
                           [*s.specs[:3], advance, s.specs[tell.index]],
                           ("recruiting", "applications", {"id": application.key, "stage": "phone_screen"}),
                           "The application was not moved on to the phone screen")
    else:
        s.policy_documents.append(rules)
    s.brief.intro = f"{name} applied for the {job['title']} role {when}"
    s.brief.goal = f"Screen {first}'s application by our screening rules and email {first} the outcome"
    s.brief.constraints.append(pointer)
    s.brief.anchors += [name, job["title"]]


#: Colleagues who support hiring rather than judge a candidate's craft.
_NOT_INTERVIEWERS = ("IT administrator", "recruiter", "people operations specialist", "facilities coordinator",
                     "payroll specialist")
_NEXT_STAGE = {"phone_screen": ("skills_interview", 60), "skills_interview": ("final_interview", 90)}
_STAGE_WORDS = {"phone_screen": "phone screen", "skills_interview": "skills interview", "final_interview": "final interview"}


def _passed_stage(s: Scenario, application: Rec) -> bool:
    """The interview of the application's current stage took place and every scorecard recommends going on."""
    interviews = s.records("recruiting", "interview", where={"application_id": application.key, "stage": application["stage"]})
    cards = s.records("recruiting", "scorecard", where={"application_id": application.key, "stage": application["stage"]})
    return (bool(interviews) and all(i["status"] == "completed" for i in interviews) and bool(cards)
            and all(c["recommendation"] in ("yes", "strong_yes") for c in cards))


@archetype(
    "interview-panel-scheduling",
    family="hr",
    title="A candidate passed a stage: move them on and book the next interview with the panel when the calendars are free",
    services=("recruiting", "calendar", "mailbox"),
)
def interview_panel_scheduling(s: Scenario) -> None:
    jobs = {j.key: j for j in s.records("recruiting", "job", where={"status": "open"})}
    staff = staff_plan(s.world)
    team = _team_emails(s)
    fits = [
        a for a in s.records("recruiting", "application", where={"status": "active", "stage": tuple(_NEXT_STAGE)})
        if a["job_id"] in jobs and jobs[a["job_id"]]["hiring_manager_email"] in team and _passed_stage(s, a)
    ]
    application = s.pick(fits, "no candidate has just passed an interview stage")
    job = jobs[application["job_id"]]
    manager_email = job["hiring_manager_email"]
    users = {u["email"]: u for u in s.records("recruiting", "user", where={"department": job["department"]})}
    colleagues = [p.email for p in staff.employees if p.department == job["department"] and p.email != manager_email
                  and p.email in users and p.job_title not in _NOT_INTERVIEWERS]
    colleagues.sort(key=lambda e: e not in team)  # a teammate first: someone whose calendar we can see
    if not colleagues:
        raise Skip(f"nobody else in {job['department']} can interview")
    colleague = users[colleagues[0]] if colleagues[0] in team or s.rng.random() < 0.5 else users[s.rng.choice(colleagues)]
    candidate = s.record("recruiting", "candidate", application["candidate_id"])
    first, name = candidate["first_name"], candidate["name"]
    stage = application["stage"]
    next_stage, minutes = _NEXT_STAGE[stage]
    panel = (manager_email, colleague["email"])

    # A day this week or next when the panel has room: the first window the calendars leave.
    # Days whose morning is taken first: then finding the first free time needs the calendars.
    days: list[tuple[date, list[dict[str, Any]]]] = []
    for offset in range(1, 11):
        day = _today(s) + timedelta(days=offset)
        if day.weekday() >= 5:
            continue
        listed = s.runner.call("calendar", "find_free_slots",
                               {"attendee_emails": list(panel), "date": day.isoformat(), "duration_minutes": minutes})
        if listed.success and listed.data["slots"]:
            days.append((day, listed.data["slots"]))
    busy_mornings = [(d, f) for d, f in days if not f[0]["start"].endswith("T09:00:00Z")]
    day, free = s.pick(busy_mornings or days, "the panel has no free time soon")
    manager = next(p for p in s.world.team if p.email == manager_email)
    you = s.world.user.email == manager_email
    with_whom = f"{colleague['name']} and {'you' if you else 'me'}"
    pair = f"{colleague['name']} and {'you' if you else manager.first_name}"
    wanted = (f"{name} did well in the {_STAGE_WORDS[stage]} for the {job['title']} role. Could you move {first} on and set up "
              f"the {_STAGE_WORDS[next_stage]} ({minutes} minutes) with {with_whom} on {_day(day.isoformat())}, at the first "
              "time we're both free? Please send everyone the calendar invite too.")
    # The user hires for this job: the recruiter writes.
    if you:
        asker_name, asker_email = _employee(s, job["recruiter_email"])["name"], job["recruiter_email"]
    else:
        asker_name, asker_email = manager.name, manager.email
    ask = _asked(s, asker_name, asker_email, f"{name}: next step",
                 f"Hi {s.world.user.first_name},\n\n{wanted}\n\nThanks,\n{asker_name.split(' ')[0]}", wanted, channel="hiring")
    asker = ask.first_name
    role_words = ", our recruiter," if you else ""
    s.brief.intro = f"{asker_name}{role_words} {ask.wrote} {ask.when} about {name}, a candidate for the {job['title']} role"
    s.brief.anchors += [asker_name]

    found = s.call("recruiting", "search_candidates", {"query": name}, select=candidate, say=f"look {name} up among the candidates")
    applied = s.call("recruiting", "list_applications", {"candidate_id": found.ref("id"), "status": "active"},
                     say=f"open {first}'s application")
    s.call("recruiting", "advance_application", {"application_id": applied.ref("id"), "from_stage": stage},
           say=f"move it on from the {_STAGE_WORDS[stage]}")
    s.call("calendar", "find_free_slots", {"attendee_emails": list(panel), "date": day.isoformat(), "duration_minutes": minutes},
           say=f"find when {pair} are both free on {_day(day.isoformat())}")
    start = free[0]["start"]
    booked = s.call(
        "recruiting", "schedule_interview",
        {"application_id": applied.ref("id"), "start_at": start, "end_at": _plus(start, minutes),
         "interviewer_emails": list(panel), "location": detail("Video call")},
        say=f"schedule the {_STAGE_WORDS[next_stage]} in recruiting at the first of those times, with the two of them "
            "as the panel",
    )
    mine, theirs = _calendar_of(s, s.world.user.email).key, _calendar_of(s, manager_email).key
    s.call(
        "calendar", "create_event",
        {"title": detail(f"{_STAGE_WORDS[next_stage].capitalize()}: {name}"), "start": booked.ref("start_at"),
         "end": booked.ref("end_at"), "attendee_emails": ListOf((Lit(panel[0]), Lit(panel[1]), found.ref("email"))),
         "calendar_id": mine},
        say=f"send the calendar invite for it to the panel and to {first}",
        accept={"calendar_id": [mine, theirs]},
    )
    ask.answer(s, "Done - the invite is out.", f"reply to {asker} with the time")
    s.brief.goal = (f"Move {first} on to the {_STAGE_WORDS[next_stage]} and book it with {pair} on {_day(day.isoformat())} at the "
                    f"first time they are both free: in recruiting, and with a calendar invite to the two of them and {first}. Then "
                    f"reply to {asker} with the time")
    s.brief.anchors += [name, colleague["name"]]


@archetype(
    "offer-request",
    family="hr",
    title="A hiring manager asks for an offer: extend it when the hiring rules allow, else ask the job's approver "
          "first (no offer)",
    services=("recruiting", "mailbox"),
)
def offer_request(s: Scenario) -> None:
    team = _team_emails(s)
    me = s.world.user.email
    # Allowed: an approved job with no offer out yet. Not yet: a job still waiting for an approver other than the user.
    allowed = [(a, j) for a, j in _offer_stage(s, approval="approved")
               if not s.records("recruiting", "offer", where={"application_id": a.key})]
    blocked = [(a, j) for a, j in _offer_stage(s, approval="pending") if j["approver_email"] != me]
    ok = s.rng.random() < 0.5 if allowed and blocked else bool(allowed)
    application, job = s.pick(allowed if ok else blocked, "no offer-stage candidate")
    candidate = s.record("recruiting", "candidate", application["candidate_id"])
    first, name = candidate["first_name"], candidate["name"]
    salary = _round_salary(s, job)
    start = _monday_weeks_ahead(s, 3, 6).isoformat()
    if job["hiring_manager_email"] in team and job["hiring_manager_email"] != me:
        asker = next(p for p in s.world.team if p.email == job["hiring_manager_email"])
        asker_name, asker_email, asker_first = asker.name, asker.email, asker.first_name
    else:  # the user hires for this job: the recruiter asks
        recruiter = _employee(s, job["recruiter_email"])
        asker_name, asker_email, asker_first = recruiter["name"], recruiter["work_email"], recruiter["first_name"]
    wanted = (f"{name} is our pick for the {job['title']} role. Could you get the offer out today: "
              f"{money(salary, job['currency'])} a year, starting {_day(start)}?")
    ask = _asked(s, asker_name, asker_email, f"Offer for {name}",
                 f"Hi {s.world.user.first_name},\n\n{wanted}\n\nThanks,\n{asker_first}", wanted, channel="hiring")
    if first == asker_first:
        first = name  # "Ryan's offer, as Ryan asks" would not say which Ryan
    # The rules recruiting states, as the finance lead (who signs off headcount) sent them round.
    document, pointer = rule_source(s, "Hiring rules", staff_plan(s.world).hiring_rules, author_role="finance lead")
    decide = (f"if the hiring rules allow it, make the offer {asker_first} asks for; if they do not, email whoever has to "
              "sign off first instead")
    found = s.call("recruiting", "search_candidates", {"query": name}, select=candidate, say=f"look {name} up among the candidates")
    applied = s.call("recruiting", "list_applications", {"candidate_id": found.ref("id"), "status": "active"},
                     say=f"open {first}'s application")
    role = s.call("recruiting", "get_job", {"job_id": applied.ref("job_id")}, say="check the job's approval and salary range")
    if ok:
        s.call("recruiting", "create_offer", {"application_id": applied.ref("id"), "salary": salary, "start_date": start},
               say=decide)
        ask.answer(s, f"Done - the offer to {first} is out.", f"reply to {asker_first} with where it stands")
        s.policy_documents.append(document)
    else:
        escalate = s.call(
            "mailbox", "send_email",
            {"to": ListOf((role.ref("approver_email"),)), "subject": detail(f"Approval needed: {job['title']}"),
             "body": detail(f"Hi,\n\nWe'd like to make an offer for the {job['title']} role; could you give the job "
                            "its approval?")},
            say=decide,
        )
        ask.answer(s, f"The job needs its approval before the offer to {first} can go out.",
                   f"reply to {asker_first} with where it stands")
        offer = s.spec("recruiting", "create_offer", {"application_id": applied.ref("id"), "salary": salary, "start_date": start})
        s.forbid_by_policy(document, "an offer needs the job's official approval first", escalate,
                           [*s.specs[:3], offer, s.specs[-1]], ("recruiting", "offers", {"application_id": application.key}),
                           "No offer went out before the job's approval")
    s.brief.goal = (f"Get {first}'s offer out as {asker_first} asks ({money(salary, job['currency'])} a year, starting "
                    f"{_day(start)}) if our hiring rules allow it; if they do not, email whoever has to sign off first. "
                    f"Either way, reply to {asker_first}")
    s.brief.intro = f"{asker_name} {ask.wrote} {ask.when} asking for an offer to {name}"
    s.brief.constraints.append(pointer)
    s.brief.anchors += [asker_name, name]


# -- onboarding ----------------------------------------------------------------------------------

#: Who covers an onboarding task's owner while they are out, by the owner's job title (the onboarding guide).
_ONBOARDING_COVER = {
    "facilities coordinator": "operations coordinator",
    "people operations specialist": "recruiter",
    "recruiter": "people operations specialist",
    "IT administrator": "engineering lead",
    "payroll specialist": "accountant",
}
_AWAY_BECAUSE = ("I've been called for jury duty", "I'm having a small operation", "a family matter came up",
                 "I have to fly out to help my parents move")
_ONBOARDING_GUIDE = (
    "- Every task on a new hire's onboarding checklist has one owner, who ticks it off once it is done.\n"
    "- When the owner of an open task will be out of the office on its due date, hand the task to their cover "
    "before they go: the facilities coordinator's tasks go to the operations coordinator, the people operations "
    "specialist's to the recruiter, the recruiter's to the people operations specialist, the IT administrator's "
    "to the engineering lead and the payroll specialist's to the accountant.\n"
    "- Tasks due before the owner leaves or after they are back stay with them, and nothing is ticked off "
    "until it is done."
)


def _clear_of(due: date, start: date, end: date) -> bool:
    """A due date outside the stretch that no one could read as falling in it.

    A weekend right after the last day out could: the owner is away on the last working day before it.
    """
    if start <= due <= end:
        return False
    return due < start or due.weekday() < 5 or (due - end).days >= 3


def _away_stretch(s: Scenario, tasks: list[Rec]) -> tuple[date, date, list[Rec], list[Rec]]:
    """Working days out, some days ahead, during which some of ``tasks`` fall due: (start, end, covered, not)."""
    today = _today(s)
    options = []
    for offset in range(1, 22):
        start = today + timedelta(days=offset)
        if start.weekday() >= 5:
            continue
        for length in range(1, 6):
            end = _working_days_from(start, length)
            covered = [t for t in tasks if start <= date.fromisoformat(t["due_date"]) <= end]
            rest = [t for t in tasks if t not in covered]
            if covered and all(_clear_of(date.fromisoformat(t["due_date"]), start, end) for t in rest):
                options.append((start, end, covered, rest))
    if not options:
        raise Skip("no stretch out of the office catches an open onboarding task cleanly")
    with_rest = [o for o in options if o[3]]
    return s.rng.choice(with_rest if with_rest and s.rng.random() < 0.8 else options)


@archetype(
    "onboarding-cover",
    family="hr",
    title="A checklist owner will be out: hand their onboarding tasks due while they are away to the cover the guide "
          "names (not the others), and tell them who covers",
    services=("hr", "mailbox"),
)
def onboarding_cover(s: Scenario) -> None:
    me = s.world.user.email
    owners = []
    for title, cover_title in _ONBOARDING_COVER.items():
        holders = s.records("hr", "employee", where={"job_title": title})
        covers = s.records("hr", "employee", where={"job_title": cover_title})
        if len(holders) == 1 and len(covers) == 1 and holders[0]["work_email"] != me:
            tasks = s.records("hr", "onboarding_task", where={"assignee_email": holders[0]["work_email"], "status": "open"})
            if tasks:
                owners.append((holders[0], covers[0], tasks))
    owner, cover, tasks = s.pick(owners, "no owner of open onboarding tasks with a single cover")
    start, end, covered, rest = _away_stretch(s, sorted(tasks, key=lambda t: (t["due_date"], t.key)))
    first, span = owner["first_name"], _span(start.isoformat(), end.isoformat())
    guide, pointer = rule_source(s, "Onboarding checklist guide", _ONBOARDING_GUIDE, author_role="office manager")
    email, when = _staff_email(
        s, owner["name"], owner["work_email"], "Out of the office " + short_date(start.isoformat()),
        f"Hi {s.world.user.first_name},\n\n{s.rng.choice(_AWAY_BECAUSE)}, so I'll be out {span}. I still have some "
        "onboarding tasks open for our new starters: could you make sure nothing slips while I'm away?\n\n"
        f"Thanks,\n{first}",
    )
    s.refer(email, f"{first}'s email", relation="sender", where={"from_email": owner["work_email"]}, latest="sent_at")
    found = s.call("hr", "list_onboarding_tasks", {"assignee_email": owner["work_email"], "status": "open"},
                   select=covered[0], say=f"list the onboarding tasks {first} still has open")
    if rest:
        near = min(rest, key=lambda t: min(abs((date.fromisoformat(t["due_date"]) - d).days) for d in (start, end)))
        s.trap("not-while-away", near, f"{first}'s task \"{near['title']}\" for {near['employee_name']}, due "
               f"{_day(near['due_date'])}", step=found)
    who = s.call("hr", "search_employees", {"query": cover["job_title"]}, select=cover,
                 say=f"see in the onboarding checklist guide who covers {first}, and look them up in HR")
    handed = s.call("hr", "assign_onboarding_task", {"task_id": found.ref("id"), "assignee_email": who.ref("work_email")},
                    say=f"hand \"{covered[0]['title']}\" for {covered[0]['employee_name']} to them")
    for task in covered[1:]:
        s.call("hr", "assign_onboarding_task", {"task_id": task.key, "assignee_email": who.ref("work_email")},
               say=f"hand \"{task['title']}\" for {task['employee_name']} to them as well")
    s.set_policy(guide, f"the {owner['job_title']}'s tasks go to the {cover['job_title']}", handed, "assignee_email",
                 who.ref("work_email"), me,
                 f"The tasks go to the {cover['job_title']}, the cover the onboarding checklist guide names")
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key,
            "body": s.text(f"Hi {first},\n\nAll covered: ", who.ref("first_name"), " has your onboarding tasks due "
                           "while you're out.")},
           say=f"reply to {first} with who is covering", mentions=[(who.ref("first_name"), "the cover's name")])
    s.brief.intro = f"{owner['name']}, our {owner['job_title']}, emailed {when} about some days out of the office"
    s.brief.goal = (f"Make sure none of {first}'s onboarding tasks slips while {first} is out: hand the ones due then to "
                    f"the cover our onboarding checklist guide names, and reply to {first} with who is covering")
    s.brief.constraints.append(pointer)
    if rest:
        s.brief.constraints.append(f"{first}'s tasks that are not due while {first} is away stay with {first}")
    s.brief.anchors += [owner["name"]]


# -- expenses ------------------------------------------------------------------------------------

_AIRLINES = ("Delta Air Lines", "United Airlines", "Alaska Airlines", "Southwest Airlines")
_HOTELS = ("Hilton Garden Inn", "Hyatt Place", "Courtyard by Marriott", "Holiday Inn Express")
_RIDES = ("Uber", "Lyft", "Amtrak")
_DINERS = ("Corner Bistro", "Panera Bread", "Sweetgreen", "Shake Shack")
_RESTAURANTS = ("The Capital Grille", "Seasons 52", "Maggiano's Little Italy")


def _expense(merchant: str, amount: float, category: str, day: date, description: str, *, receipt: bool = True,
             attendees: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"merchant": merchant, "amount": round(amount, 2), "category": category, "date": day.isoformat(),
            "description": description, "receipt": receipt, "attendees": list(attendees)}


def _report_items(s: Scenario, submitter: str) -> tuple[str, list[dict[str, Any]]]:
    """A report someone would file: a customer trip, a client dinner or a conference, dated last week."""
    day = _weekday_on_or_after(_today(s) - timedelta(days=s.rng.randint(6, 12)))
    org = s.rng.choice(s.world.organisations[1:])
    kind = s.rng.choice(("trip", "trip", "dinner", "conference"))
    if kind == "trip":
        nights = s.rng.choice((1, 1, 2))
        back = day + timedelta(days=nights)
        hotel = s.rng.choice(_HOTELS)
        return f"Customer visit: {org.name}, {org.city}", [
            _expense(s.rng.choice(_AIRLINES), s.rng.uniform(280, 760), "Airfare", day,
                     f"Round trip to {org.city} to visit {org.name}"),
            _expense(hotel, s.rng.uniform(130, 170) * nights, "Lodging", day, f"{hotel}, {org.city}: {nights} night(s)"),
            _expense(s.rng.choice(_RIDES), s.rng.uniform(22, 70), "Ground transportation", day, "Airport to hotel"),
            _expense(s.rng.choice(_DINERS), s.rng.uniform(14, 40), "Meals", day, "Dinner on the road"),
            _expense(s.rng.choice(_RIDES), s.rng.uniform(22, 70), "Ground transportation", back, "Hotel to airport"),
        ]
    if kind == "dinner":
        guest = s.rng.choice([p for p in s.world.customers if p.organisation_id == org.id] or list(s.world.customers))
        company = s.world.organisation(guest.organisation_id).name
        place = s.rng.choice(_RESTAURANTS)
        return f"Client dinner with {company}", [
            _expense(place, s.rng.uniform(140, 260), "Client entertainment", day, f"Dinner with {guest.name} of {company}",
                     attendees=(guest.name, submitter)),
            _expense(s.rng.choice(_RIDES), s.rng.uniform(18, 45), "Ground transportation", day, "Ride home after the dinner"),
        ]
    return "Conference: SaaS Operations Summit", [
        _expense("Eventbrite", s.rng.uniform(450, 1100), "Training and conferences", day, "Conference ticket"),
        _expense(s.rng.choice(_RIDES), s.rng.uniform(18, 60), "Ground transportation", day, "To the venue and back"),
        _expense(s.rng.choice(_DINERS), s.rng.uniform(12, 30), "Meals", day, "Lunch at the conference"),
    ]


def _spoil(s: Scenario, items: list[dict[str, Any]], limits: dict[str, float | None], receipt_over: float) -> str:
    """Break the policy on one expense, as people do: over its category's limit, or no receipt above the threshold.

    Returns what is wrong, in words."""
    over = [k for k, e in enumerate(items) if limits.get(e["category"]) and e["category"] not in ("Airfare",)]
    missing = [k for k, e in enumerate(items) if e["amount"] > receipt_over]
    if missing and (not over or s.rng.random() < 0.5):
        k = s.rng.choice(missing)
        items[k]["receipt"] = False
        return f"the {items[k]['merchant']} expense has no receipt"
    k = s.rng.choice(over)
    limit = limits[items[k]["category"]]
    assert limit is not None
    items[k]["amount"] = round(limit * s.rng.uniform(1.08, 1.3), 2)
    return f"the {items[k]['merchant']} expense is over the {items[k]['category']} limit"


_EXPENSE_GUIDELINES = (
    "- Check every report against the expense policy: the category limits and receipts (each expense shows its "
    "violations).\n"
    "- No violations: approve it.\n"
    "- A violation on a report from one of your own direct reports: reject it back to them with the reason (which "
    "expense, what is missing or over the limit).\n"
    "- A violation on anyone else's report: leave the report as it is (only their manager, the report's approver, may "
    "approve it) and email that manager the report's title and what you found."
)


def _expense_guidelines(s: Scenario) -> tuple[Rec, str]:
    return rule_source(s, "Expense approval guidelines", _EXPENSE_GUIDELINES, author_role="finance lead")


def _send_back(s: Scenario, guide: Rec, found: Step, report: Rec, problem: str, say: str) -> None:
    """Reject a report of the user's own report back to them with the reason, as the guidelines say (never approve it)."""
    decision = s.call("expenses", "reject_report",
                      {"report_id": found.ref("id"), "reason": detail(problem[:1].upper() + problem[1:] + ".")}, say=say)
    approve = s.spec("expenses", "approve_report", {"report_id": found.ref("id")})
    s.forbid_by_policy(guide, "a report with a violation from your own report goes back to them", decision,
                       [*s.specs[:decision.index], approve],
                       ("expenses", "reports", {"id": report.key, "status": "approved"}),
                       "The report that breaks the policy was not approved")


@archetype(
    "expense-report-review",
    family="finance",
    title="A colleague submits an expense report: approve it within policy; when it breaks the policy, reject it back to "
          "your own report or leave it to their manager",
    services=("expenses", "mailbox"),
)
def expense_report_review(s: Scenario) -> None:
    me = s.world.user.email
    policy = s.records("expenses", "policy")[0]
    limits = {c["name"]: c["expense_limit"] for c in s.records("expenses", "category")}
    members = [m for m in s.records("expenses", "member") if m["email"] != me]
    own = [m for m in members if m["submits_to_email"] == me]
    others = [m for m in members if m["submits_to_email"] != me and m["submits_to_email"] in _team_emails(s)]
    case = s.rng.choice(("clean", "clean", "own-violation", "other-violation"))
    pool = own if case == "own-violation" else others if case == "other-violation" else members
    member = s.pick(pool, f"nobody fits the {case} case")
    first = member["name"].split(" ")[0]
    title, items = _report_items(s, member["name"])
    problem = _spoil(s, items, limits, policy["receipt_required_over"]) if case != "clean" else ""
    guide, pointer = _expense_guidelines(s)
    hours = recent_hours(s)
    report = s.event("expenses", "report_submitted", "report", submitter_email=member["email"], title=title, expenses=items,
                     hours_ago=hours)
    email, when = _staff_email(
        s, member["name"], member["email"], f"Expenses: {title}",
        f"Hi {s.world.user.first_name},\n\nI've just submitted my expense report \"{title}\". Could you approve it so it makes "
        f"this week's payout?\n\nThanks,\n{first}",
        hours_ago=max(0.1, hours - 0.1),
    )
    s.refer(email, f"{first}'s email", relation="sender", where={"from_email": member["email"]}, latest="sent_at")
    s.refer(report, f"the report {first} submitted {when}", relation="submitter",
            where={"submitter_email": member["email"], "status": "submitted"}, latest="submitted_at")
    found = s.call("expenses", "list_reports", {"submitter_email": member["email"]}, select=report,
                   say=f"find the report {first} submitted {when} in expenses")
    earlier = [r for r in s.records("expenses", "report", where={"submitter_email": member["email"]})
               if r.key != report.key and r["status"] in ("approved", "reimbursed", "submitted")]
    if earlier:
        s.trap("earlier-report", earlier[0], f"{first}'s {earlier[0]['status']} report \"{earlier[0]['title']}\"", step=found)
    opened = s.call("expenses", "get_report", {"report_id": found.ref("id")},
                    say="open it to see its expenses' policy violations and who its approver is")
    s.call("expenses", "get_policy", {}, select=policy, say="check the expense policy")
    decide = "approve it, reject it with the reason, or leave it to their manager, as the guidelines say"
    if case == "clean":
        decision = s.call("expenses", "approve_report", {"report_id": found.ref("id")}, say=decide)
        s.policy_documents.append(guide)
    elif case == "own-violation":
        _send_back(s, guide, found, report, problem, decide)
    else:
        decision = s.call(
            "mailbox", "send_email",
            {"to": ListOf((opened.ref("approver_email"),)), "subject": detail(f"{first}'s expense report"),
             "body": s.text(f"Hi,\n\n{first}'s report \"", opened.ref("title"), f"\" breaks the expense policy: {problem}. "
                            "It's yours to decide.")},
            say=decide, mentions=[(opened.ref("title"), "the report's title")],
        )
        reject = s.spec("expenses", "reject_report", {"report_id": found.ref("id"), "reason": problem})
        s.forbid_by_policy(guide, "a report with a violation from someone else's team is left to their manager", decision,
                           [*s.specs[:3], reject], ("expenses", "reports", {"id": report.key}),
                           "The report was left for the submitter's manager to decide")
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key, "body": detail(f"Hi {first},\n\nHere is where your report stands.")},
           say=f"reply to {first} with where the report stands")
    s.brief.intro = f"{member['name']} emailed {when} asking you to approve the expense report they just submitted"
    s.brief.goal = (f"Deal with {first}'s new report the way our expense approval guidelines say and reply to {first} "
                    "with where it stands")
    s.brief.constraints.append(pointer)
    if earlier:
        s.brief.constraints.append(f"Only that report: {first}'s earlier reports stay as they are")
    s.brief.anchors += [member["name"]]


@archetype(
    "reimbursement-payout",
    family="finance",
    title="A colleague asks when an approved expense report will be paid: reimburse it and send them the reference",
    services=("expenses", "mailbox"),
)
def reimbursement_payout(s: Scenario) -> None:
    approved = s.records("expenses", "report", where={"status": "approved"})
    mine = s.world.user.email
    fits = [r for r in approved if r["submitter_email"] != mine
            and len([o for o in approved if o["submitter_email"] == r["submitter_email"]]) == 1]
    report = s.pick(fits, "no approved report waits for its payout")
    name, email_address = report["submitter_name"], report["submitter_email"]
    first = name.split(" ")[0]
    email, when = _staff_email(
        s, name, email_address, f"Re: {report['title']}",
        s.rng.choice((
            f"Hi {s.world.user.first_name},\n\nMy report \"{report['title']}\" was approved a few days ago but I haven't been "
            f"paid yet. Could you check?\n\nThanks,\n{first}",
            f"Hello,\n\nAny news on the reimbursement for \"{report['title']}\"? It shows as approved.\n\nCheers,\n{first}",
        )),
    )
    s.refer(email, f"{first}'s email", relation="sender", where={"from_email": email_address}, latest="sent_at")
    s.refer(report, f"{first}'s approved report", relation="submitter",
            where={"submitter_email": email_address, "status": "approved"})
    found = s.call("expenses", "list_reports", {"submitter_email": email_address}, select=report,
                   say=f"find {first}'s approved report in expenses")
    others = [r for r in s.records("expenses", "report", where={"submitter_email": email_address})
              if r.key != report.key and r["status"] in ("submitted", "reimbursed")]
    if others:
        s.trap("other-report", others[0], f"{first}'s {others[0]['status']} report \"{others[0]['title']}\"", step=found)
    paid = s.call("expenses", "reimburse_report", {"report_id": found.ref("id")}, say="reimburse it")
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key, "body": s.text(f"Hi {first},\n\nSorry for the wait: it's paid now, reference ",
                                                    paid.ref("reimbursement_reference"), ".")},
           say=f"reply to {first} with the reimbursement reference",
           mentions=[(paid.ref("reimbursement_reference"), "the reimbursement reference")])
    s.brief.intro = f"{name} emailed {when} asking about the payout of an approved expense report"
    s.brief.goal = f"Get {first} paid for that report and reply with the reimbursement reference"
    if others:
        s.brief.constraints.append(f"Leave {first}'s other reports as they are")
    s.brief.anchors += [name]


@archetype(
    "expense-missing-receipt",
    family="finance",
    title="A report of yours submitted without a receipt: attach the one the colleague emailed to the right expense, "
          "then approve the report or, if it still breaks the policy, send it back with the reason",
    services=("expenses", "mailbox"),
)
def expense_missing_receipt(s: Scenario) -> None:
    me = s.world.user.email
    policy = s.records("expenses", "policy")[0]
    threshold = policy["receipt_required_over"]
    limits = {c["name"]: c["expense_limit"] for c in s.records("expenses", "category")}
    member = s.pick([m for m in s.records("expenses", "member") if m["email"] != me and m["submits_to_email"] == me],
                    "nobody submits expenses to the user")
    first = member["name"].split(" ")[0]
    title, items = _report_items(s, member["name"])
    needing = [k for k, e in enumerate(items) if e["amount"] > threshold]
    k = s.pick(needing, "no expense on the report needs a receipt")
    items[k]["receipt"] = False
    problem = ""
    over = [j for j, e in enumerate(items) if j != k and limits.get(e["category"]) and e["category"] != "Airfare"]
    if over and s.rng.random() < 0.35:
        j = s.rng.choice(over)
        limit = limits[items[j]["category"]]
        assert limit is not None
        items[j]["amount"] = round(limit * s.rng.uniform(1.08, 1.3), 2)
        problem = f"the {items[j]['merchant']} expense is over the {items[j]['category']} limit"
    missing = items[k]
    guide, pointer = _expense_guidelines(s)
    hours = recent_hours(s)
    report = s.event("expenses", "report_submitted", "report", submitter_email=member["email"], title=title,
                     expenses=items, hours_ago=hours + s.rng.uniform(2, 20))
    expense = s.records("expenses", "expense", where={"report_id": report.key, "merchant": missing["merchant"],
                                                      "date": missing["date"]})
    if len(expense) != 1:
        raise Skip("the expense without a receipt is not the only one of its merchant that day")
    receipt = f"receipt-{missing['date']}-{_slug(missing['merchant'])[:20]}.pdf"
    email, when = _staff_email(
        s, member["name"], member["email"], f"Receipt for {missing['merchant']}",
        f"Hi {s.world.user.first_name},\n\nThe {missing['merchant']} receipt didn't make it onto my report \"{title}\" "
        "when I submitted it - I found it in my inbox, it's attached. Could you add it and get the report "
        f"approved?\n\nThanks,\n{first}",
        hours_ago=hours, attachments=(receipt,),
    )
    s.refer(email, f"{first}'s email", relation="sender", where={"from_email": member["email"]}, latest="sent_at")
    s.refer(report, f"the report {first} names", relation="submitter",
            where={"submitter_email": member["email"], "title": title, "status": "submitted"})
    found = s.call("expenses", "list_reports", {"submitter_email": member["email"]}, select=report,
                   say=f"find the report {first} names in expenses")
    earlier = [r for r in s.records("expenses", "report", where={"submitter_email": member["email"]})
               if r.key != report.key and r["status"] in ("approved", "reimbursed", "submitted")]
    if earlier:
        s.trap("earlier-report", earlier[0], f"{first}'s {earlier[0]['status']} report \"{earlier[0]['title']}\"",
               step=found)
    listed = s.call("expenses", "search_expenses", {"report_id": found.ref("id")}, select=expense[0],
                    say="go through its expenses and their policy violations")
    receipted = [e for e in s.records("expenses", "expense", where={"report_id": report.key})
                 if e.key != expense[0].key and e["amount"] > threshold]
    if receipted:
        other = receipted[0]
        s.trap("other-expense", other, f"the {other['merchant']} expense on the same report, which has its receipt",
               step=listed)
    s.call("expenses", "attach_receipt", {"expense_id": listed.ref("id"), "file_name": receipt},
           say=f"attach the receipt {first} sent to the {missing['merchant']} expense")
    decide = "approve the report if nothing else breaks the policy, otherwise send it back with the reason"
    if not problem:
        s.call("expenses", "approve_report", {"report_id": found.ref("id")}, say=decide)
        s.policy_documents.append(guide)
    else:
        _send_back(s, guide, found, report, problem, decide)
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key, "body": detail(f"Hi {first},\n\nThanks - the receipt is on. Here is where the report "
                                                    "stands.")},
           say=f"reply to {first} with where the report stands")
    s.brief.intro = f"{member['name']}, who reports to you, emailed {when} with a receipt missing from an expense report"
    s.brief.goal = (f"Put the receipt {first} sent on the expense it belongs to, then settle the report the way our "
                    f"expense approval guidelines say, and reply to {first} with where it stands")
    s.brief.constraints.append(pointer)
    if earlier:
        s.brief.constraints.append(f"Only that report: {first}'s other reports stay as they are")
    s.brief.anchors += [member["name"]]
