"""Texts again: a customer who opted out of our texts asks for them back.

How they opted out decides what we can do. An opt-out we recorded for them (on a call, by email) we can lift
ourselves; one they made by texting STOP only they can lift, by texting START to our texting number, and the carrier
refuses anyone else. The customer hears which it is.
"""

from __future__ import annotations

from composer.plan import Lit
from composer.scenario import Said, Scenario, Skip, archetype
from composer.stages.channels import Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup


@archetype(
    "texts-again",
    family="marketing",
    title="A customer who opted out of our texts wants them back: lift our opt-out, or tell them to text START",
    services=("sms",),
    fits=can_arrive(("email", "voice", "ticket", "form", "chat")),
)
def texts_again(s: Scenario) -> None:
    phones = {p.phone: p for p in s.world.customers if p.phone}
    outs = [o for o in s.records("sms", "opt_out") if o["phone_number"] in phones]
    senders = [n for n in s.records("sms", "sender_number") if n["sms_enabled"]]
    if not senders:
        raise Skip("no number sends texts")
    ours = next((n for n in senders if n["is_default"]), senders[0])
    by_keyword = [o for o in outs if o["source"] == "keyword"]
    manual = [o for o in outs if o["source"] == "manual"]
    keyword = bool(by_keyword) and (not manual or s.rng.random() < 0.5)
    opt_out = s.pick(by_keyword if keyword else manual, "nobody opted out")
    person = phones[opt_out["phone_number"]]
    s.subject = person
    trigger = arrive(s, person, Ask(
        subject="Text messages",
        text=s.rng.choice((
            "I stopped your text messages a while ago, but I'd like to get them again (delivery updates especially). Could "
            "you switch them back on?",
            "Please start sending me your text updates again - I opted out by mistake.",
        )),
        topic="Something else",
        relay=f"{person.first_name} opted out of our texts a while ago and wants them back.",
    ), channels=("email", "voice", "ticket", "form", "chat"))
    s.brief.intro = f"{trigger.intro} asking to get our texts again"
    s.brief.goal = f"Get {person.first_name} our texts again if we can and {reply_clause(trigger, 'where things stand')}"
    s.brief.anchors += [person.name]
    found = lookup(s, opt_out, {"phone_number": person.phone}, say=f"find {person.first_name}'s opt-out")
    s.decide("premise", f"we can lift {person.first_name}'s opt-out ourselves", default=not keyword)
    if keyword:
        s.literal_writes.append(s.spec("sms", "remove_opt_out", {"phone_number": person.phone}))
        reply(s, trigger, [f"Hi {person.first_name},\n\nYou stopped our texts by replying STOP, and only you can switch them "
                           f"back on: text START to {ours['phone_number']} and they will start again."],
              say=reply_clause(trigger, "where things stand"),
              facts=[Said("what to text", Lit("START")), Said("our texting number", Lit(ours["phone_number"]))],
              subject="Text messages")
        return
    s.call("sms", "remove_opt_out", {"phone_number": found.ref("phone_number")},
           say=f"take {person.first_name} off the opt-out list")
    s.call("sms", "lookup_phone_number", {"phone_number": found.ref("phone_number")},
           say="check the number can get texts again", stage="decide")
    reply(s, trigger, [f"Hi {person.first_name},\n\nDone: you're off our opt-out list, so our texts will reach "
                       f"{person.phone} again."],
          say=reply_clause(trigger, "where things stand"),
          facts=[Said("the number", Lit(person.phone))], subject="Text messages")
