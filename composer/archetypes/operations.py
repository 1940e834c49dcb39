"""Operations workflows: rescheduling, sharing documents, rooms, reminders, answering colleagues' questions from the data."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from mcp_services.kernel.world import Person

from composer.archetypes.common import clock, day_name, org_of, rule_author, short_date
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.acts import act
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, email_of, reply, reply_clause
from composer.stages.lookup import lookup, shows
from composer.stages.rules import colleague, consult, near_first


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(iso: str) -> datetime:
    return datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")


def _spoken(iso: str) -> str:
    """``2025-03-14T15:30:00Z`` -> ``Friday 14 March at 15:30 UTC``."""
    moment = _parse(iso)
    return f"{day_name(iso)} {moment.day} {moment:%B} at {clock(iso)} UTC"


@archetype(
    "meeting-reschedule",
    family="operations",
    title="A customer asks to move an upcoming meeting: move it and confirm the new time",
    services=("calendar",),
    fits=can_arrive(),
)
def meeting_reschedule(s: Scenario) -> None:
    now = s.world.now
    customers = {p.email: p for p in s.world.customers}
    upcoming = [e for e in s.records("calendar", "event", where={"status": "confirmed"}) if e["start"] > now]
    candidates = []
    for event in upcoming:
        guests = [a for a in event["attendees"] if a["email"] in customers]
        if len(guests) == 1:
            candidates.append((event, customers[guests[0]["email"]]))
    # Someone with another meeting with us on another day: the day they name picks which one moves.
    def meetings(person: Person) -> list[Rec]:
        return [e for e in upcoming if any(a["email"] == person.email for a in e["attendees"])]

    twinned = [(e, p) for e, p in candidates if len({m["start"][:10] for m in meetings(p)}) > 1]
    event, person = s.pick(twinned or candidates, "no upcoming meeting with one customer")
    theirs = meetings(person)
    if len([e for e in theirs if e["start"][:10] == event["start"][:10]]) != 1:
        raise Skip("more than one meeting with them that day")
    s.subject = person
    start = _parse(event["start"])
    new_start = _iso(start + timedelta(days=1 if start.weekday() < 4 else 3))
    day, new_day = day_name(event["start"]), _spoken(new_start)
    trigger = arrive(s, person, Ask(
        subject=f"Re: {event['title']}",
        text=s.rng.choice((
            f"Something came up on {day}. Could we move our meeting to {new_day}, same time? Sorry for the trouble.",
            f"I'm afraid {day} no longer works on our side. Would {new_day} work for our meeting instead?",
            f"Could we push our meeting on {day} to {new_day}? Apologies for the short notice.",
        )),
        short=f"Could we move our {day} meeting to {new_day}? Sorry!",
        relay=f"{person.first_name} can't make the meeting on {day} and asks to move it to {new_day}.",
    ))
    found = lookup(s, event, {"attendee_email": email_of(s, trigger), "time_min": now},
                   say=f"find the meeting with {person.first_name} on {day} in the calendar",
                   name=f"the meeting with {person.first_name}")
    s.refer(event, f"the meeting with {person.first_name} on {day}", relation="attendee",
            where={"id": event.key, "status": "confirmed"})
    others = [e for e in theirs if e.key != event.key and shows(s, found, e)]
    if others:
        s.trap("other-meeting", others[0], f"their other meeting \"{others[0]['title']}\"", step=found)
    # The move resets the guests' answers by default; an agent that keeps them (reset_responses=false) moves it too.
    act(s, "reschedule", found, {"new_start": new_start}, say=f"move the meeting with {person.first_name} to {new_day}",
        incidental=("attendees",))
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nNo problem: I've moved our meeting to {new_day}. The invitation is updated."],
        say=reply_clause(trigger, "the new time"), facts=[Said("the new time", Lit(new_start), "datetime")],
        subject=f"Re: {event['title']}",
        relay_parts=[f"Done: the meeting with {person.first_name} is moved to {new_day}. Could you let them know?"],
    )
    s.brief.intro = f"{trigger.intro} asking to move a meeting"
    s.brief.goal = (f"Move the meeting {person.first_name} is asking about to the time they proposed and "
                    f"{reply_clause(trigger, 'the new time')}")
    s.brief.constraints.append("Don't touch their other meetings")
    s.brief.anchors += [person.name]


_AGREEMENT_WORDS = ("Agreement", "Contract")
#: How often the customer asking for their agreement can open it already (shared with them weeks ago): nothing is
#: shared again, and they hear where to find it.
ALREADY_SHARED = 0.4


@archetype(
    "share-document",
    family="operations",
    title="A customer asks for a copy of a document we keep about them: share it and tell them",
    services=("files",),
    fits=can_arrive(),
)
def share_document(s: Scenario) -> None:
    files = [f for f in s.records("files", "file", where={"trashed": False}) if f["name"].lower().endswith(".pdf")]
    candidates = []
    for person in s.world.customers:
        org = org_of(s, person)
        theirs = [f for f in files if org.name in f["name"]]
        agreements = [f for f in theirs if any(w in f["name"] for w in _AGREEMENT_WORDS)]
        if len(agreements) == 1 and person.email not in (agreements[0]["shared_with"] or []):
            candidates.append((person, agreements[0], [f for f in theirs if f.key != agreements[0].key]))
    person, document, others = s.pick(candidates, "no customer with one agreement on file")
    org = org_of(s, person)
    kind = "master services agreement" if "Master Services" in document["name"] else "agreement"
    s.subject = person
    shares = s.records("files", "share")
    already = _iso(s.world.now_dt - timedelta(days=s.rng.randint(20, 90))) if shares and s.rng.random() < ALREADY_SHARED else None
    if already is not None:  # their premise is false: the agreement was shared with them as a viewer already
        s.copy(shares[0], item_id=document.key, email=person.email, person_name=person.name, role="viewer",
               shared_by_email=s.world.user.email, created_at=already, updated_at=already)
    trigger = arrive(s, person, Ask(
        subject="Copy of our agreement",
        text=s.rng.choice((
            f"Our legal team is reviewing vendors this quarter. Could you share a copy of our signed {kind} with me?",
            f"I can't find our signed {kind} with you anywhere. Could you give me access to a copy?",
            f"For our annual audit I need the {kind} we signed with you. Could you share it with me, please?",
        )),
        short=f"Could you share a copy of our signed {kind} with me? Our legal team needs it.",
        relay=f"{person.first_name} needs a copy of {org.name}'s signed {kind} with us for their legal team.",
    ))
    found = lookup(s, document, {"query": f"{org.name} agreement", "company_name": org.name},
                   say=f"find {org.name}'s {kind} in the shared drive", name=f"{org.name}'s {kind}")
    s.refer(document, f"{org.name}'s {kind}", relation="describes", where={"id": document.key})
    shown = [f for f in others if shows(s, found, f)]
    if shown:
        s.trap("other-document", shown[0], f"{org.name}'s other document {shown[0]['name']!r}", step=found)
    s.decide("premise", f"{person.first_name} cannot open the {kind} yet", default=already is None)
    if already is not None:
        s.traps.clear()  # nothing is written, so no look-alike record can be written instead
        s.literal_writes.append(s.spec("files", "share_file", {"file_id": found.ref("id"), "email": email_of(s, trigger),
                                                               "role": "viewer"}))
        reply(
            s, trigger,
            [f"Hi {person.first_name},\n\n", found.ref("name"), f" is already shared with you (since {short_date(already)}), "
             "so there was nothing to share again: it is under \"Shared with me\" in the drive, and the drive's email from "
             "then has the link."],
            say=reply_clause(trigger, "the name of the file, and where things stand"),
            facts=[Said("the file's name", found.ref("name")), Said("that it was shared already", Lit("already"), "premise")],
            subject="Your agreement",
            relay_parts=[found.ref("name"), f" is already shared with {person.first_name} (since {short_date(already)}): "
                         "nothing to share again. Could you let them know it is under \"Shared with me\"?"],
        )
        s.brief.intro = f"{trigger.intro} asking for a copy of their {kind}"
        s.brief.goal = (f"Make sure {person.first_name} can open their {kind} (read-only) and "
                        f"{reply_clause(trigger, 'the name of the file, and where things stand')}")
        s.brief.constraints.append("Only that one document")
        s.brief.anchors += [person.name]
        return
    rules = s.rng.random() < 0.5
    if rules:
        rule = consult(
            s, "Document sharing rules",
            "- Share signed contracts with customers as **viewer** only, never editor or co-owner.\n"
            "- Never send contracts by public link.",
            author_role=rule_author(s),
        )
    shared = act(s, "share", found, {"email": email_of(s, trigger), "role": "viewer"}, prefer="share_file",
                 say=f"share their {kind} with {person.first_name}" + (" the way our sharing rules say" if rules else " as a viewer"))
    if rules:
        s.set_policy(rule.rec, "contracts are shared as viewer only", shared, "role", "viewer", "editor",
                     "The agreement is shared as viewer only, as the sharing rules say")
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nI've shared ", found.ref("name"),
         " with you; you should have an email from the drive with the link."],
        say=reply_clause(trigger, "the name of the file you shared"), facts=[Said("the file's name", found.ref("name"))],
        subject="Your agreement",
        relay_parts=["Done: I've shared ", found.ref("name"), f" with {person.first_name} as a viewer. Could you let them know?"],
    )
    s.brief.intro = f"{trigger.intro} asking for a copy of their {kind}"
    if rules:
        s.brief.goal = f"Give {person.first_name} access to their {kind} and {reply_clause(trigger, 'the name of the file you shared')}"
        s.brief.constraints += [rule.pointer, "Only share that one document"]
    else:
        s.brief.goal = (f"Give {person.first_name} read-only access to their {kind} and "
                        f"{reply_clause(trigger, 'the name of the file you shared')}")
        s.brief.constraints.append("Only share that one document, and only as a viewer")
    s.brief.anchors += [person.name]


@archetype(
    "outstanding-balance-question",
    family="finance",
    title="A colleague asks how much a customer still owes, net of credit not yet applied: answer from the books",
    services=("accounting",),
    fits=can_arrive(COLLEAGUE),
)
def outstanding_balance_question(s: Scenario) -> None:
    contacts = [c for c in s.records("accounting", "contact") if c["is_customer"] and c["outstanding"] > 0]
    notes: dict[str, list[Rec]] = {}
    for note in s.records("accounting", "credit_note"):
        notes.setdefault(note["contact_id"], []).append(note)
    unapplied = {key: round(sum(n["remaining_credit"] for n in theirs if n["status"] == "AUTHORISED"), 2)
                 for key, theirs in notes.items()}
    credited = [c for c in contacts if 0 < unapplied.get(c.key, 0.0) < c["outstanding"]]
    applied_only = [c for c in contacts if c.key in notes and not unapplied.get(c.key)]
    # Half the time the customer holds credit not applied yet (the answer needs both records); else their credit
    # notes are all applied already (taking them off again is the mistake), or they have none.
    if credited and s.rng.random() < 0.5:
        pool = credited
    else:
        pool = applied_only or [c for c in contacts if c.key not in notes]
    contact = s.pick(pool, "no customer owes anything")
    theirs = notes.get(contact.key, [])
    credit = unapplied.get(contact.key, 0.0)
    owed = round(contact["outstanding"] - credit, 2)
    seller = colleague(s, "account executive")
    trigger = arrive(s, seller, Ask(
        subject=f"{contact['name']}: what do they owe?",
        text=s.rng.choice((
            f"Before my call with {contact['name']} this afternoon: how much do they still owe us on open invoices, "
            "after any credit we've given them that isn't applied yet?",
            f"Quick one: what's {contact['name']}'s real balance with us? Open invoices minus any unused credit notes.",
        )),
        team="finance",
    ), channels=COLLEAGUE)
    found = lookup(s, contact, {"query": contact["name"], "name": contact["name"]},
                   say=f"look up {contact['name']} in accounting", name=contact["name"])
    if theirs:
        lookup(s, theirs[0], {"contact_id": found.ref("id")}, say=f"check {contact['name']}'s credit notes")
    applied = round(sum(n["total"] - n["remaining_credit"] for n in theirs), 2)
    others = [c["outstanding"] for c in contacts if c.key != contact.key and abs(c["outstanding"] - owed) > 0.01][:2]
    candidates = (contact["outstanding"], contact["overdue"], credit, round(contact["outstanding"] - applied, 2), *others)
    forbidden = {round(v, 2) for v in candidates} - {0.0, owed}
    s.ask(f"how much {contact['name']} still owes us, net of credit not yet applied", owed, forbidden=sorted(forbidden))
    s.brief.intro = f"{trigger.intro} about what {contact['name']} still owes us"
    s.brief.goal = "Work out the figure and tell me, so I can pass it on"
    s.brief.anchors += [contact["name"], seller.name]


@archetype(
    "book-room-for-meeting",
    family="operations",
    title="A colleague needs a room for an upcoming meeting: book the smallest free one in our office that seats everyone",
    services=("calendar",),
    fits=can_arrive(COLLEAGUE),
)
def book_room_for_meeting(s: Scenario) -> None:
    now = s.world.now
    city = s.world.home.city
    team = {p.email: p for p in s.world.team if p.email != s.world.user.email}
    horizon = _iso(s.world.now_dt + timedelta(days=14))
    events = [
        e for e in s.records("calendar", "event", where={"status": "confirmed"})
        if now < e["start"] < horizon and not e["room_id"] and e["organizer_email"] in team
        and not e["title"].startswith("1:1") and len(e["attendees"]) >= 3
    ]
    event = s.pick(events, "no upcoming meeting of a colleague without a room")
    listed = s.runner.call("calendar", "list_rooms", {"start": event["start"], "end": event["end"], "only_available": True})
    free = [r for r in (listed.data if listed.success else []) if r["city"] == city]
    guests = len(event["attendees"])
    largest = max((r["capacity"] for r in free), default=0)
    if largest < guests:
        raise Skip(f"no room in {city} is free then for {guests} people")
    # Everyone invited and now and then a guest or two more: the count decides which room fits, most often one that
    # fills a room to its last seat (one guest more and it takes the next size up).
    def seats(count: int) -> int:
        return int(min(r["capacity"] for r in free if r["capacity"] >= count))

    people = near_first(s, list(range(guests, min(largest, guests + 3) + 1)), lambda n: n, seats, "no head count fits")
    fitting = [r for r in free if r["capacity"] >= people]
    smallest = seats(people)
    best = [r for r in fitting if r["capacity"] == smallest]
    if len(best) != 1:
        raise Skip("two free rooms of the same size: the reply could name either")
    room = best[0]  # as list_rooms shows it (whether a room is free is only known for a time)
    if len(free) > 1:  # the head count and the free rooms' sizes pick the room, not the request
        s.decide("pick", f"the smallest of the {len(free)} free rooms in the {city} office that seats {people}")
    asker = team[event["organizer_email"]]
    day = f"{day_name(event['start'])} {short_date(event['start'])}"
    trigger = arrive(s, asker, Ask(
        subject=f"Room for {event['title']}",
        text=s.rng.choice((
            f"We'll be {people} people at my \"{event['title']}\" on {day} - could someone book a room for it?",
            f"Can someone find us a room for my \"{event['title']}\" on {day}? We're {people} in total.",
        )),
        team="general",
    ), channels=COLLEAGUE)
    policy = s.rng.random() < 0.6
    if policy:
        rule = consult(
            s, "Room booking rules",
            f"- Book meetings in our own office in {city}; the conference venues elsewhere are for events, booked by the "
            "office manager.\n- Take the smallest free room that seats everyone, so the big rooms stay free for big meetings.",
            author_role=rule_author(s, "office manager"),
        )
    s.refer(s.record("calendar", "event", event.key), f"\"{event['title']}\" on {day}", relation="title",
            where={"title": event["title"], "start": event["start"], "status": "confirmed"})
    found = lookup(s, event, {"query": event["title"], "time_min": now}, say=f"find \"{event['title']}\" in the calendar",
                   name=f"\"{event['title']}\" on {day}")
    # A recurring title: the same meeting on another day is the one not to book.
    namesakes = [e for e in s.records("calendar", "event", where={"title": event["title"], "status": "confirmed"})
                 if e.key != event.key and e["start"] > now and shows(s, found, e)]
    if namesakes:
        s.trap("same-title-meeting", namesakes[0], f"\"{event['title']}\" on {day_name(namesakes[0]['start'])} "
               f"{short_date(namesakes[0]['start'])}", step=found)
    rooms = s.call("calendar", "list_rooms", {"min_capacity": people, "start": found.ref("start"), "end": found.ref("end"),
                                               "only_available": True},
                   select=room["id"], say=f"check which rooms seat {people} and are free then")
    booked = act(s, "book", found, {"room_id": rooms.ref("id")}, say="book " + (
        "the room our booking rules point to" if policy else f"the smallest free room in our {city} office that fits"))
    if policy:
        bigger = [r for r in (listed.data or []) if r["id"] != room["id"] and r["capacity"] >= people]
        s.decide("rule", f"the smallest free room in the {city} office that seats everyone", default=not bigger,
                 value=people, threshold=smallest)
        if bigger:
            s.set_policy(rule.rec, f"the smallest free room in the {city} office that seats everyone", booked, "room_id",
                         room["id"], max(bigger, key=lambda r: r["capacity"])["id"],
                         "The room is the smallest free one in our office that seats everyone, as the booking rules say")
        else:
            s.policy_documents.append(rule.rec)
        s.brief.constraints.append(rule.pointer)
    reply(s, trigger, [f"Booked {room['name']} for \"{event['title']}\" on {day}."],
          say=reply_clause(trigger, "the room you booked"), facts=[Said("the room", rooms.ref("name"))])
    s.brief.intro = f"{trigger.intro} about a room for \"{event['title']}\" ({people} people)"
    where = "" if policy else f", the smallest free one in our {city} office that seats {people},"
    s.brief.goal = f"Book a room{where} for that meeting and {reply_clause(trigger, 'the room you booked')}"
    s.brief.anchors += [asker.name, event["title"]]


@archetype(
    "meeting-reminder-text",
    family="operations",
    title="A colleague asks for a text reminding a customer of their meeting with us: text their mobile",
    services=("crm", "calendar", "sms"),
    fits=can_arrive(COLLEAGUE),
)
def meeting_reminder_text(s: Scenario) -> None:
    now = s.world.now
    horizon = _iso(s.world.now_dt + timedelta(days=6))  # "on Thursday" means this week
    contacts = {c["email"]: c for c in s.records("crm", "contact", where={"archived": False})}
    # A reminder goes by text only to a mobile that may be texted (companies' main lines are landlines).
    textable = {p["phone_number"] for p in s.records("sms", "phone") if p["can_receive_sms"]}
    textable -= {o["phone_number"] for o in s.records("sms", "opt_out")}
    names = [c["name"] for c in contacts.values()]
    upcoming = [e for e in s.records("calendar", "event", where={"status": "confirmed"}) if e["start"] > now]
    candidates = []
    for event in upcoming:
        if not now[:10] < event["start"][:10] <= horizon[:10]:
            continue
        for guest in event["attendees"]:
            contact = contacts.get(guest["email"])
            if contact is None or contact["phone"] not in textable or names.count(contact["name"]) != 1:
                continue
            same_day = [e for e in upcoming if e["start"][:10] == event["start"][:10]
                        and any(a["email"] == contact["email"] for a in e["attendees"])]
            if len(same_day) == 1:
                candidates.append((event, contact))

    def others_of(event: Rec, email: str) -> list[Rec]:
        return [e for e in upcoming if e.key != event.key and e["title"] != event["title"]
                and any(a["email"] == email for a in e["attendees"])]

    # Someone with another meeting with us: the day the request names picks which one the reminder is for.
    twinned = [(e, c) for e, c in candidates if others_of(e, c["email"])]
    event, contact = s.pick(twinned or candidates, "no customer with a mobile and one meeting with us on a day this week")
    person = s.person(contact["email"])
    org = org_of(s, person)
    s.subject = person
    start = _parse(event["start"])
    tomorrow = (start.date() - s.world.now_dt.date()).days == 1
    day = "tomorrow" if tomorrow else f"on {day_name(event['start'])}"
    seller = colleague(s, "account executive")
    trigger = arrive(s, seller, Ask(
        subject=f"Reminder for {person.name}",
        text=s.rng.choice((
            f"{person.name} ({org.name}) asked for a text reminder before our meeting with them {day}. Could someone send it?",
            f"Can someone text {person.name} from {org.name} a reminder about our meeting {day}? They prefer texts to email.",
        )),
        team="sales",
    ), channels=COLLEAGUE)
    s.subject = person
    found = lookup(s, contact, {"query": person.name, "name": person.name}, say=f"find {person.first_name}'s mobile number in the CRM",
                   name=f"{person.first_name}'s CRM contact")
    meeting = lookup(s, event, {"attendee_email": found.ref("email"), "time_min": now},
                     say=f"find the meeting with {person.first_name} {day} in the calendar",
                     name=f"the meeting with {person.first_name} {day}")
    s.refer(event, f"the meeting with {person.first_name} {day}", relation="attendee", where={"id": event.key, "status": "confirmed"})
    others = [e for e in others_of(event, person.email) if shows(s, meeting, e)]
    if others:
        s.trap("other-meeting", others[0], f"their other meeting \"{others[0]['title']}\"", step=meeting)
    rules = s.rng.random() < 0.7
    sender: dict[str, Any] = {}
    if rules:
        lines = {n["friendly_name"]: n for n in s.records("sms", "sender_number")}
        if "Appointments" not in lines or not lines["Appointments"]["sms_enabled"]:
            raise Skip("no appointments line")
        rule = consult(
            s, "Texting rules",
            "- Meeting and appointment reminders go out from our **Appointments** number; billing texts from Billing; "
            "everything else from the Support line.\n- Only text mobiles, and never a number that opted out.",
            author_role=rule_author(s),
        )
        ours = s.call("sms", "list_sender_numbers", {"sms_enabled": True}, select=lines["Appointments"],
                      say="look up our Appointments number, which our texting rules say reminders come from")
        sender = {"from_number": ours.ref("phone_number")}
    when = f"{day} at {clock(event['start'])} UTC"
    text = s.call(
        "sms", "send_message",
        {"to": found.ref("phone"), **sender, "body": s.text(
            f"Hi {person.first_name}, a reminder of ", meeting.ref("title"), f" with us {when}. See you then!")},
        say=f"text {person.first_name} a reminder naming the meeting and its time"
            + (" from the number our texting rules name" if rules else ""),
        facts=[Said("the meeting's time", meeting.ref("start"), "time")],
        mentions=[(meeting.ref("title"), "the meeting's title")],
    )
    if rules:
        default = next(n for n in s.records("sms", "sender_number") if n["is_default"])
        s.set_policy(rule.rec, "reminders are texted from the Appointments number", text, "from_number",
                     ours.ref("phone_number"), default["phone_number"],
                     "The reminder comes from the Appointments number, as the texting rules say")
        s.brief.constraints.append(rule.pointer)
    reply(s, trigger, ["Done: I've texted ", found.ref("name"), " a reminder for ", meeting.ref("title"), f" {when}."],
          say=reply_clause(trigger, "the meeting you reminded them of"),
          facts=[Said("the meeting's title", meeting.ref("title"))])
    s.brief.intro = f"{trigger.intro} about a text reminder to {person.name} about a meeting"
    s.brief.goal = (f"Text {person.first_name}'s mobile a reminder of the meeting with its title and time, and "
                    f"{reply_clause(trigger, 'the meeting you reminded them of')}")
    s.brief.constraints.append("Don't touch the meeting itself")
    s.brief.needs_date = True
    s.brief.anchors += [person.name, seller.name]

