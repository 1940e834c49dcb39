"""Expenses a colleague asks us to log for them: the right category, on the report they have open, not twice.

A colleague emails a receipt and what it was for. Which category it goes in is read from the categories' own
descriptions (a dinner with a customer is client entertainment, one on your own is a meal: the look-alikes differ
by who was there); it goes on their open report, or on a new one where they have none open; and where they logged
it themselves already (the same merchant, amount and day), nothing is added and they hear where it is.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from composer.archetypes.common import money, short_date
from composer.archetypes.people import _emailed, _person, _slug
from composer.plan import ListOf, Lit
from composer.scenario import Said, Scenario, Skip, archetype, detail
from composer.stages.channels import reply, reply_clause
from composer.stages.lookup import lookup, shows

#: How often the colleague logged the expense already.
LOGGED_SHARE = 0.35

#: What people spend on, by the category it belongs in: (merchant, what they say it was, the category it looks like).
_SPENDS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "Client entertainment": (("The Grill House", "dinner with {client} from {org} to talk through their renewal", "Meals"),
                             ("Bistro Central", "lunch with {client} ({org}) after the product demo", "Meals")),
    "Meals": (("The Grill House", "my own dinner at the hotel while I was away for the audit", "Client entertainment"),
              ("Noodle Bar", "dinner on my own while working late on the quarter close", "Client entertainment")),
    "Ground transportation": (("Yellow Cab", "the taxi from the airport back to the office", "Airfare"),),
    "Office supplies": (("Staples", "printer paper, pens and sticky notes for the office", "Equipment"),),
    "Equipment": (("Best Buy", "a monitor arm for my desk that stays with the company", "Office supplies"),),
    "Software and subscriptions": (("Lucid", "the yearly licence for the diagram tool our team uses", "Training and conferences"),),
    "Training and conferences": (("Eventbrite", "my ticket for the regional finance conference", "Software and subscriptions"),),
}


@archetype(
    "expense-logging",
    family="finance",
    title="A colleague sends a receipt to log: the right category, on their open report (or a new one), never twice",
    services=("expenses", "mailbox"),
)
def expense_logging(s: Scenario) -> None:
    me = s.world.user.email
    categories = {c["name"]: c for c in s.records("expenses", "category")}
    members = [m for m in s.records("expenses", "member") if m["email"] != me]
    member = s.pick(members, "no colleague in expenses")
    person = _person(s, member["name"], member["email"])
    first = person.first_name
    category = s.rng.choice(sorted(c for c in _SPENDS if c in categories))
    merchant, what, looks_like = s.rng.choice(_SPENDS[category])
    client = s.pick(s.world.customers, "no customer")
    what = what.format(client=client.name, org=s.world.organisation(client.organisation_id).name)
    limit = categories[category]["expense_limit"] or 500.0
    amount = round(s.rng.uniform(0.2, 0.8) * min(float(limit), 600.0), 2)
    day = (datetime.strptime(s.world.now[:10], "%Y-%m-%d") - timedelta(days=s.rng.randint(1, 6))).strftime("%Y-%m-%d")
    mine = s.records("expenses", "expense", where={"spender_email": member["email"]})
    if any(e["merchant"] == merchant for e in mine):
        raise Skip("they have an expense at that merchant already")
    open_reports = s.records("expenses", "report", where={"submitter_email": member["email"], "status": "open"})
    if len(open_reports) > 1:
        raise Skip("more than one open report")
    logged = s.pick(mine, "nothing logged by them") if mine and s.rng.random() < LOGGED_SHARE else None
    if logged is not None:  # they logged it themselves already, and forgot
        merchant, amount, day = logged["merchant"], float(logged["amount"]), logged["date"]
        what = logged.get("description") or f"{merchant.lower()}"
    receipt = f"receipt-{day}-{_slug(merchant)[:20]}.pdf"
    trigger = _emailed(s, person, f"Expense: {merchant}", s.rng.choice((
        f"Hi {s.world.user.first_name},\n\nCould you log an expense for me? {merchant}, {money(amount)} on {short_date(day)}: "
        f"{what}. Receipt attached.\n\nThanks,\n{first}",
        f"Hi,\n\nReceipt attached for {what} - {merchant}, {money(amount)}, {short_date(day)}. Can you put it into expenses "
        f"for me?\n\nThanks a lot,\n{first}",
    )), attachments=(receipt,))
    s.brief.intro = f"{trigger.intro} with a receipt to log"
    s.brief.anchors += [member["name"]]
    s.brief.goal = (f"Get {first}'s expense into expenses, in the category it belongs in and on their open report (a new "
                    f"one if they have none open), and {reply_clause(trigger, 'where it is')}")
    s.brief.constraints.append("Don't log anything twice")
    if logged is not None:
        found = lookup(s, logged, {"spender_email": member["email"], "query": merchant, "date_from": day, "date_to": day},
                       say=f"check whether {first} logged it already")
        s.decide("premise", f"{first}'s expense is not in expenses yet", default=False)
        s.literal_writes.append(s.spec("expenses", "create_expense", {
            "spender_email": member["email"], "merchant": merchant, "amount": amount, "date": day,
            "category_id": logged["category_id"]}))
        reply(s, trigger, [f"Hi {first},\n\nYou had logged this one already: the {merchant} expense of {money(amount)} on "
                           f"{short_date(day)} is in expenses (", found.ref("id"), "), so I haven't added it again."],
              say=reply_clause(trigger, "where it is"),
              facts=[Said("that it was logged already", Lit("already"), "premise"), Said("the expense it is", found.ref("id"))],
              subject=f"Expense: {merchant}")
        return
    s.decide("premise", f"{first}'s expense is not in expenses yet", default=True)
    kind = lookup(s, categories[category], {"query": category.split(" ")[0]}, say="find the category it belongs in",
                  stage="decide")
    s.decide("pick", f"{category}, not {looks_like}")
    if open_reports:
        report = lookup(s, open_reports[0], {"submitter_email": member["email"], "status": "open"},
                        say=f"find {first}'s open report")
        report_id = report.ref("id")
        where = f"on your open report \"{open_reports[0]['title']}\""
    else:
        s.decide("premise", f"{first} has a report open", default=False)
        title = f"{datetime.strptime(day, '%Y-%m-%d').strftime('%B')} expenses"
        made = s.call("expenses", "create_report", {"submitter_email": member["email"], "title": detail(title)},
                      say=f"start a report for {first}, as they have none open")
        report_id = made.ref("id")
        where = "on a new report, as you had none open"
    expense = s.call("expenses", "create_expense", {
        "spender_email": member["email"], "merchant": merchant, "amount": amount, "date": day, "category_id": kind.ref("id"),
        "description": detail(what)}, say=f"log the expense for {first} in the category it belongs in")
    s.call("expenses", "add_expenses_to_report", {"report_id": report_id, "expense_ids": ListOf((expense.ref("id"),))},
           say=f"put it on {first}'s report")
    s.call("expenses", "attach_receipt", {"expense_id": expense.ref("id"), "file_name": receipt},
           say="attach the receipt from the email")
    reply(s, trigger, [f"Hi {first},\n\nDone: the {merchant} expense ({money(amount)}, {short_date(day)}) is logged under "
                       f"{category} {where}, with the receipt."],
          say=reply_clause(trigger, "where it is"),
          facts=[Said("the category", Lit(category))], subject=f"Expense: {merchant}")


@archetype(
    "expense-amount-fix",
    family="finance",
    title="A colleague says they logged an expense with the wrong amount: correct it, unless it already shows the right one",
    services=("expenses", "mailbox"),
)
def expense_amount_fix(s: Scenario) -> None:
    me = s.world.user.email
    open_reports = {r.key for r in s.records("expenses", "report", where={"status": "open"})}
    options = [e for e in s.records("expenses", "expense")
               if e["spender_email"] != me and (e["report_id"] is None or e["report_id"] in open_reports) and e["amount"] >= 10]
    expense = s.pick(options, "no expense that can still be changed")
    member = s.records("expenses", "member", where={"email": expense["spender_email"]})
    if not member:
        raise Skip("the spender is not a member")
    person = _person(s, member[0]["name"], member[0]["email"])
    first = person.first_name
    recorded = float(expense["amount"])
    # They typed the digits the wrong way round; now and then they fixed it themselves already.
    fixed = s.rng.random() < 0.4
    whole, cents = f"{recorded:.2f}".split(".")
    swapped = float(f"{whole[::-1]}.{cents}") if len(whole) > 1 and whole[::-1] != whole and not whole.endswith("0") else recorded + 10.0
    wrong, right = (swapped, recorded) if fixed else (recorded, swapped)
    same_merchant = [e for e in s.records("expenses", "expense", where={"spender_email": person.email, "merchant": expense["merchant"]})
                     if e.key != expense.key]
    trigger = _emailed(s, person, f"Wrong amount: {expense['merchant']}", s.rng.choice((
        f"Hi {s.world.user.first_name},\n\nI entered the {expense['merchant']} expense of {short_date(expense['date'])} as "
        f"{money(wrong)}, but the receipt says {money(right)}. Could you correct it?\n\nThanks,\n{first}",
        f"Hi,\n\nTypo on my side: {expense['merchant']} on {short_date(expense['date'])} should be {money(right)}, not "
        f"{money(wrong)}. Can you fix it in expenses?\n\nThanks,\n{first}",
    )))
    found = lookup(s, expense, {"spender_email": person.email, "query": expense["merchant"], "date_from": expense["date"],
                                "date_to": expense["date"]}, say=f"find {first}'s {expense['merchant']} expense")
    if same_merchant and shows(s, found, same_merchant[0]):
        s.trap("other-expense", same_merchant[0], f"{first}'s other {expense['merchant']} expense", step=found)
    s.decide("premise", f"the {expense['merchant']} expense shows the wrong amount", default=not fixed)
    s.brief.intro = f"{trigger.intro} about the amount of an expense"
    s.brief.goal = f"Make sure {first}'s expense shows the right amount and {reply_clause(trigger, 'what it shows now')}"
    s.brief.anchors += [person.name]
    if fixed:
        s.traps.clear()  # nothing is written, so no look-alike can be written instead
        s.literal_writes.append(s.spec("expenses", "update_expense", {"expense_id": expense.key, "amount": right}))
        reply(s, trigger, [f"Hi {first},\n\nIt already shows {money(right)}: the {expense['merchant']} expense was corrected "
                           "before you wrote, so there was nothing to change."],
              say=reply_clause(trigger, "what it shows now"),
              facts=[Said("that it was right already", Lit("already"), "premise")], subject=f"Expense: {expense['merchant']}")
        return
    s.call("expenses", "update_expense", {"expense_id": found.ref("id"), "amount": right},
           say=f"correct the amount to what {first} says the receipt shows")
    reply(s, trigger, [f"Hi {first},\n\nDone: the {expense['merchant']} expense of {short_date(expense['date'])} now shows "
                       f"{money(right)}."],
          say=reply_clause(trigger, "what it shows now"), facts=[Said("the amount", Lit(right), "money")],
          subject=f"Expense: {expense['merchant']}")
