"""Event guest lists kept in spreadsheets: a guest who cancels is marked, never deleted, on the right event's list.

A guest writes that they cannot come. Their row on that event's guest list stays (the catering count and the thank-you
emails after the event read the Status column) and is marked "Cancelled", as the events team's rule says; "take me
off the list", read literally, deletes it. A guest on two events' lists cancels one of them: the other row stays.
"""

from __future__ import annotations

from composer.archetypes.common import rule_author, teammate
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup, shows
from composer.stages.rules import consult

_CANCELLED = "Cancelled"


def _guest_lists(s: Scenario) -> list[tuple[Rec, Rec]]:
    """(spreadsheet, sheet) of every event guest list."""
    found = []
    for book in s.records("sheets", "spreadsheet"):
        if str(book["title"]).startswith("Guest list: "):
            found += [(book, sheet) for sheet in s.records("sheets", "sheet", where={"spreadsheet_id": book.key})
                      if "Status" in sheet["columns"]]
    return found


@archetype(
    "guest-cancellation",
    family="marketing",
    title="A guest cancels: mark their row on that event's guest list Cancelled (never delete it), and tell them",
    services=("sheets",),
    fits=can_arrive(),
)
def guest_cancellation(s: Scenario) -> None:
    lists = _guest_lists(s)
    people = {p.email: p for p in s.world.customers}
    options = [(book, sheet, row) for book, sheet in lists for row in s.records("sheets", "row", where={"sheet_id": sheet.key})
               if row["values"].get("Status") == "Registered" and row["values"].get("Email") in people]
    book, sheet, row = s.pick(options, "no registered guest we know")
    person = people[row["values"]["Email"]]
    event = str(book["title"]).removeprefix("Guest list: ")
    s.subject = person
    others = [(b, sh) for b, sh in lists if b.key != book.key]
    twin = None
    if others and s.rng.random() < 0.6:  # they are on another event's list too: that row stays
        other_book, other_sheet = s.rng.choice(others)
        theirs = s.records("sheets", "row", where={"sheet_id": other_sheet.key})
        if any(r["values"].get("Email") == person.email for r in theirs):
            raise Skip("they are on the other list already")
        position = max((int(r["position"]) for r in theirs), default=0) + 1
        twin = s.copy(row, sheet_id=other_sheet.key, position=position)
    rule = consult(s, "Event guest list rules",
                   "- Guest lists live in the shared spreadsheets, one per event.\n"
                   f"- When a guest cancels, keep their row and set its Status to \"{_CANCELLED}\": the catering count and the "
                   "thank-you emails after the event read that column. Never delete a guest's row.",
                   author_role=rule_author(s, "operations manager"))
    trigger = arrive(s, person, Ask(
        subject=f"Can't make the {event}",
        text=s.rng.choice((
            f"I'm sorry, but I can no longer come to the {event}. Please take me off the guest list.",
            f"Something came up and I won't make it to the {event} after all - could you remove me from the list?",
        )),
        short=f"Sorry, can't make the {event} any more. Please take me off the list.",
        topic="Something else",
        relay=f"{person.first_name} can't make the {event} any more and asked to be taken off the guest list.",
    ))
    found_book = lookup(s, book, {"query": event, "title": book["title"]}, say=f"find the guest list of the {event}")
    found_sheet = lookup(s, sheet, {"spreadsheet_id": found_book.ref("id")}, say="open its guest sheet")
    found = lookup(s, row, {"sheet_id": found_sheet.ref("id"), "spreadsheet_id": found_book.ref("id"), "value": person.email,
                            "query": person.name}, say=f"find {person.first_name}'s row")
    if twin is not None and shows(s, found, twin):
        s.trap("other-event", twin, f"{person.first_name}'s row on the other event's guest list", step=found)
    marked = s.call("sheets", "update_row", {"row_id": found.ref("id"), "fields": {"Status": _CANCELLED}},
                    say=f"take {person.first_name} off the list the way our rule for guest lists says")
    s.decide("rule", "a guest who cancels keeps their row, marked Cancelled", default=False)
    s.literal_steps[marked.index] = s.spec("sheets", "delete_row", {"row_id": row.key})
    reply(s, trigger, [f"Hi {person.first_name},\n\nNo problem - I've cancelled your place at the {event}. We hope to see "
                       "you at the next one."],
          say=reply_clause(trigger, "a confirmation"), facts=[Said("the event", Lit(event))], subject=f"The {event}")
    s.brief.intro = f"{trigger.intro} to say they can't make the {event}"
    s.brief.goal = f"Take {person.first_name} off the guest list and {reply_clause(trigger, 'a confirmation')}"
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [person.name]


@archetype(
    "guest-list-duplicate",
    family="marketing",
    title="A colleague sees a guest twice on an event's list: delete the later row if it is the same person, else keep both",
    services=("sheets",),
    fits=can_arrive(COLLEAGUE),
)
def guest_list_duplicate(s: Scenario) -> None:
    lists = _guest_lists(s)
    options = [(book, sheet, row) for book, sheet in lists for row in s.records("sheets", "row", where={"sheet_id": sheet.key})
               if row["values"].get("Status") == "Registered" and row["values"].get("Email")]
    book, sheet, row = s.pick(options, "no registered guest")
    event = str(book["title"]).removeprefix("Guest list: ")
    name, email = row["values"]["Name"], row["values"]["Email"]
    rows = s.records("sheets", "row", where={"sheet_id": sheet.key})
    position = max(int(r["position"]) for r in rows) + 1
    same = s.rng.random() < 0.55
    # The second row: the same person registering again, or a namesake from another company (another address).
    other_email = email if same else f"{name.lower().replace(' ', '.')}@{s.rng.choice(('gmail', 'outlook'))}.example"
    cells = [other_email if c == email else c for c in row["cells"]]
    if not same:
        cells = [("Self-employed" if c == row["values"].get("Company") else c) for c in cells]
    later = s.copy(row, position=position, cells=cells)
    sender = teammate(s)
    trigger = arrive(s, sender, Ask(
        subject=f"{name} twice on the {event} list",
        text=f"{name} shows up twice on the guest list for the {event}. Can you tidy that up before I send the catering count?",
        team="general",
    ), channels=COLLEAGUE)
    rule = consult(s, "Event guest list rules",
                   "- Guest lists live in the shared spreadsheets, one per event.\n"
                   "- Someone who registered twice keeps their first registration: delete the later row. Two guests who "
                   "share a name are two guests (tell them apart by email): both stay.",
                   author_role=rule_author(s, "operations manager"))
    found_book = lookup(s, book, {"query": event, "title": book["title"]}, say=f"find the guest list of the {event}")
    found_sheet = lookup(s, sheet, {"spreadsheet_id": found_book.ref("id")}, say="open its guest sheet")
    found = lookup(s, later, {"sheet_id": found_sheet.ref("id")}, say=f"look at both of {name}'s rows", stage="decide")
    s.decide("premise", f"the two {name} rows are the same guest", default=same)
    s.brief.intro = f"{trigger.intro} about {name} appearing twice on the {event} guest list"
    s.brief.goal = f"Sort out the guest list as our rules say and {reply_clause(trigger, 'what you found')}"
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [sender.name]
    if not same:
        s.literal_writes.append(s.spec("sheets", "delete_row", {"row_id": later.key}))
        reply(s, trigger, [f"They're two different guests who share a name: one is {email}, the other {other_email}. I've kept "
                           "both on the list."],
              say=reply_clause(trigger, "what you found"), facts=[Said("the second guest's email", Lit(other_email))],
              subject=f"{name} on the {event} list")
        return
    s.call("sheets", "delete_row", {"row_id": found.ref("id")}, say="delete the later registration")
    reply(s, trigger, [f"{name} had registered twice with the same address, so I've deleted the later row and kept the first "
                       "registration. The count is right now."],
          say=reply_clause(trigger, "what you found"), facts=[Said("the guest", Lit(name))],
          subject=f"{name} on the {event} list")
