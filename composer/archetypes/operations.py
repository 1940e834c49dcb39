"""Operations workflows: rescheduling, sharing documents, answering colleagues' questions from the data."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from composer.archetypes.common import (
    chat_post,
    clock,
    colleague,
    day_name,
    inbound_email,
    maybe_log_in_crm,
    money,
    org_of,
    rule_source,
    signature,
)
from composer.scenario import Scenario, Skip, archetype, detail


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(iso: str) -> datetime:
    return datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")


@archetype(
    "meeting-reschedule",
    family="operations",
    title="A customer asks to move an upcoming meeting: move it and confirm the new time",
    services=("calendar", "mailbox"),
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
    event, person = s.pick(candidates, "no upcoming meeting with one customer")
    theirs = [e for e in upcoming if any(a["email"] == person.email for a in e["attendees"])]
    same_day = [e for e in theirs if e["start"][:10] == event["start"][:10]]
    if len(same_day) != 1:
        raise Skip("more than one meeting with them that day")
    org = org_of(s, person)
    start = _parse(event["start"])
    moved = start + timedelta(days=1 if start.weekday() < 4 else 3)
    new_start = _iso(moved)
    email, when = inbound_email(
        s, person, f"Re: {event['title']}",
        f"Hi,\n\nSomething came up on {day_name(event['start'])}. Could we move our meeting to {day_name(new_start)} "
        f"{moved.day} {moved.strftime('%B')}, same time ({clock(new_start)} UTC)?\n\nSorry for the trouble,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call(
        "calendar", "list_events", {"attendee_email": person.email, "time_min": now}, select=event,
        say=f"find the meeting with {person.first_name} on {day_name(event['start'])} in the calendar",
    )
    s.refer(event, f"the meeting with {person.first_name} on {day_name(event['start'])}", relation="attendee",
            where={"id": event.key, "status": "confirmed"})
    others = [e for e in theirs if e.key != event.key]
    if others:
        s.trap("other-meeting", others[0], f"their other meeting \"{others[0]['title']}\"", step=found)
    s.call(
        "calendar", "move_event", {"event_id": found.ref("id"), "new_start": new_start},
        say=f"move it to {day_name(new_start)} at the same time",
    )
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": s.text(
            f"Hi {person.first_name},\n\nNo problem - I've moved it to {day_name(new_start)} {moved.day} "
            f"{moved.strftime('%B')} at {clock(new_start)} UTC. The invitation is updated.")},
        say=f"reply to {person.first_name} to confirm the new time",
    )
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking to move a meeting"
    s.brief.goal = f"Move the meeting {person.first_name} is asking about to the time they proposed and confirm it to them"
    s.brief.constraints.append("Don't touch their other meetings")
    s.brief.anchors += [person.name]


@archetype(
    "share-document",
    family="operations",
    title="A customer asks for a copy of a document we keep about them: share it and tell them",
    services=("files", "mailbox"),
)
def share_document(s: Scenario) -> None:
    files = [f for f in s.records("files", "file", where={"trashed": False}) if f["name"].lower().endswith(".pdf")]
    customers = s.world.customers
    candidates = []
    for person in customers:
        org = org_of(s, person)
        theirs = [f for f in files if org.name in f["name"] and ("Agreement" in f["name"] or "Contract" in f["name"])]
        if len(theirs) == 1 and person.email not in (theirs[0]["shared_with"] or []):
            candidates.append((person, theirs[0]))
    person, document = s.pick(candidates, "no customer with one agreement on file")
    org = org_of(s, person)
    email, when = inbound_email(
        s, person, "Copy of our agreement",
        f"Hello,\n\nOur legal team is reviewing vendors this quarter. Could you share a copy of our signed agreement "
        f"with me?\n\nThank you,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call("files", "search_files", {"company_name": org.name, "query": "agreement"}, select=document,
                   say=f"find {org.name}'s agreement in the shared drive")
    s.refer(document, f"{org.name}'s agreement", relation="describes", where={"id": document.key})
    rules = s.rng.random() < 0.5
    if rules:
        document, pointer = rule_source(
            s, "Document sharing rules",
            "- Share signed contracts with customers as **viewer** only, never editor or co-owner.\n"
            "- Never send contracts by public link.",
        )
    shared = s.call("files", "share_file", {"file_id": found.ref("id"), "email": person.email, "role": "viewer"},
                    say=f"share it with {person.first_name}" + (" the way our sharing rules say" if rules else " as a viewer"))
    if rules:
        s.set_policy(document, "contracts are shared as viewer only", shared, "role", "viewer", "editor",
                     "The agreement is shared as viewer only, as the sharing rules say")
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": s.text(f"Hi {person.first_name},\n\nI've shared ", found.ref("name"),
                                                 " with you; you should have an email from the drive with the link.")},
        say=f"reply to {person.first_name} saying which file you shared",
        mentions=[(found.ref("name"), "the file's name")],
    )
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking for a copy of their agreement"
    logged = maybe_log_in_crm(s, person, "Shared the signed agreement", found.ref("name"), "the file's name", p=0.35)
    noted = ", and note on their CRM contact which file you shared" if logged else ""
    if rules:
        s.brief.goal = f"Give {person.first_name} access to their agreement and reply with the name of the file you shared{noted}"
        s.brief.constraints += [pointer, "Only share that one document"]
    else:
        s.brief.goal = (
            f"Give {person.first_name} read-only access to their agreement and reply with the name of the file you shared{noted}"
        )
        s.brief.constraints.append("Only share that one document, and only as a viewer")
    s.brief.anchors += [person.name]


@archetype(
    "outstanding-balance-question",
    family="finance",
    title="A colleague asks in chat how much a customer still owes: answer from the books",
    services=("accounting", "chat"),
)
def outstanding_balance_question(s: Scenario) -> None:
    contacts = [c for c in s.records("accounting", "contact") if c["is_customer"] and c["outstanding"] > 0]
    contact = s.pick(contacts, "no customer owes anything")
    seller = colleague(s, "account executive")
    _post, when = chat_post(
        s, seller, "finance",
        f"Before my call with {contact['name']} this afternoon: how much do they still owe us on open invoices?",
    )
    found = s.call("accounting", "list_contacts", {"query": contact["name"]}, select=contact,
                   say=f"look up {contact['name']} in accounting")
    others = [c["outstanding"] for c in contacts if c.key != contact.key and c["outstanding"] != contact["outstanding"]][:3]
    s.ask(f"how much {contact['name']} still owes on open invoices", contact["outstanding"], forbidden=[round(contact["overdue"], 2)] if contact["overdue"] not in (0, contact["outstanding"]) else [])
    _ = (found, others, money)
    s.brief.intro = f"{seller.name} asked in #finance {when} how much {contact['name']} still owes us"
    s.brief.goal = "Tell me the amount so I can pass it on"
    s.brief.anchors += [contact["name"], seller.name]


@archetype(
    "book-room-for-meeting",
    family="operations",
    title="A colleague needs a room for an upcoming meeting: book one that is free and big enough",
    services=("calendar", "chat"),
)
def book_room_for_meeting(s: Scenario) -> None:
    now = s.world.now
    me = s.world.user.email
    horizon = (s.world.now_dt + timedelta(days=6)).strftime("%Y-%m-%dT%H:%M:%SZ")  # "on Thursday" means this week
    events = [
        e for e in s.records("calendar", "event", where={"status": "confirmed"})
        if now < e["start"] < horizon and not e["room_id"] and e["organizer_email"] == me
        and not e["title"].startswith("1:1") and len(e["attendees"]) >= 3
    ]
    event = s.pick(events, "no upcoming meeting of the user without a room")
    people = s.rng.choice((5, 8, 10))
    listed = s.runner.call(
        "calendar", "list_rooms", {"min_capacity": people, "start": event["start"], "end": event["end"], "only_available": True}
    )
    free = [r["id"] for r in listed.data] if listed.success else []
    if not free:
        raise Skip("no room is free and big enough")
    asker = colleague(s, s.rng.choice(("sales lead", "support lead", "product manager")))
    post, when = chat_post(
        s, asker, "general",
        f"We'll be {people} people at \"{event['title']}\" on {day_name(event['start'])} - could someone book a room for it?",
    )
    s.refer(s.record("calendar", "event", event.key), f"\"{event['title']}\" on {day_name(event['start'])}", relation="title",
            where={"title": event["title"], "start": event["start"], "status": "confirmed"})
    found = s.call("calendar", "list_events", {"query": event["title"], "time_min": now}, select=event,
                   say=f"find \"{event['title']}\" in the calendar")
    s.call("calendar", "list_rooms", {"min_capacity": people, "start": found.ref("start"), "end": found.ref("end"), "only_available": True},
           select=free[0], say=f"check which rooms seat {people} and are free then")
    s.call("calendar", "book_room", {"event_id": found.ref("id"), "room_id": free[0]},
           say="book one of them for it", accept={"room_id": free})
    s.call("chat", "reply_in_thread", {"message_id": post.key, "text": detail("Booked a room for it.")},
           say=f"let {asker.first_name} know in the thread")
    s.brief.intro = f"{asker.name} asked in #general {when} for a room for \"{event['title']}\" ({people} people)"
    s.brief.goal = f"Get a room that is free then and seats {people} booked for that meeting, and tell {asker.first_name} in the thread"
    s.brief.anchors += [asker.name, event["title"]]


@archetype(
    "meeting-reminder-text",
    family="operations",
    title="A colleague asks in chat for a text reminding a customer of their meeting with us: text their mobile",
    services=("chat", "crm", "calendar", "sms"),
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
            same_day = [e for e in upcoming if e["start"][:10] == event["start"][:10] and any(a["email"] == contact["email"] for a in e["attendees"])]
            if len(same_day) == 1:
                candidates.append((event, contact))
    event, contact = s.pick(candidates, "no customer with a mobile and one meeting with us on a day this week")
    person = s.person(contact["email"])
    org = org_of(s, person)
    s.subject = person
    start = _parse(event["start"])
    tomorrow = (start.date() - s.world.now_dt.date()).days == 1
    day = "tomorrow" if tomorrow else f"on {day_name(event['start'])}"
    seller = colleague(s, "account executive")
    post, when = chat_post(
        s, seller, "sales",
        s.rng.choice((
            f"{person.name} ({org.name}) asked for a text reminder before our meeting with them {day}. Could someone send it?",
            f"Can someone text {person.name} from {org.name} a reminder about our meeting {day}? They prefer texts to email.",
        )),
    )
    s.refer(post, f"{seller.first_name}'s message in #sales", relation="author", where={"author_email": seller.email}, latest="posted_at")
    found = s.call("crm", "search_contacts", {"query": person.name}, select=contact, say=f"find {person.first_name}'s mobile number in the CRM")
    meeting = s.call(
        "calendar", "list_events", {"attendee_email": person.email, "time_min": now}, select=event,
        say=f"find the meeting with {person.first_name} {day} in the calendar",
    )
    s.refer(event, f"the meeting with {person.first_name} {day}", relation="attendee", where={"id": event.key, "status": "confirmed"})
    others = [e for e in upcoming if e.key != event.key and e["title"] != event["title"] and any(a["email"] == person.email for a in e["attendees"])]
    if others:
        s.trap("other-meeting", others[0], f"their other meeting \"{others[0]['title']}\"", step=meeting)
    rules = s.rng.random() < 0.7
    sender: dict[str, Any] = {}
    if rules:
        lines = {n["friendly_name"]: n for n in s.records("sms", "sender_number")}
        if "Appointments" not in lines or not lines["Appointments"]["sms_enabled"]:
            raise Skip("no appointments line")
        document, pointer = rule_source(
            s, "Texting rules",
            "- Meeting and appointment reminders go out from our **Appointments** number; billing texts from Billing; "
            "everything else from the Support line.\n- Only text mobiles, and never a number that opted out.",
        )
        ours = s.call("sms", "list_sender_numbers", {"sms_enabled": True}, select=lines["Appointments"],
                      say="look up our Appointments number, which our texting rules say reminders come from")
        sender = {"from_number": ours.ref("phone_number")}
    text = s.call(
        "sms", "send_message",
        {"to": found.ref("phone"), **sender, "body": s.text(
            f"Hi {person.first_name}, a reminder of ", meeting.ref("title"), f" with us {day} at {clock(event['start'])} UTC. See you then!")},
        say=f"text {person.first_name} a reminder naming the meeting and its time" + (" from that number" if rules else ""),
        mentions=[(meeting.ref("title"), "the meeting's title")],
    )
    if rules:
        default = next(n for n in s.records("sms", "sender_number") if n["is_default"])
        s.set_policy(document, "reminders are texted from the Appointments number", text, "from_number",
                     ours.ref("phone_number"), default["phone_number"], "The reminder comes from the Appointments number, as the texting rules say")
        s.brief.constraints.append(pointer)
    s.call("chat", "reply_in_thread", {"message_id": post.key, "text": detail("Done - texted them the reminder.")},
           say=f"let {seller.first_name} know in the thread")
    s.brief.intro = f"{seller.name} asked in #sales {when} for a text reminder to {person.name} about a meeting"
    s.brief.goal = (
        f"Text {person.first_name}'s mobile a reminder of the meeting with its title and time, and tell {seller.first_name} in the thread"
    )
    s.brief.constraints.append("Don't touch the meeting itself")
    s.brief.needs_date = True
    s.brief.anchors += [person.name, seller.name]
