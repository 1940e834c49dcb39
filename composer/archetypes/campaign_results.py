"""Campaign results put to use: the next campaign borrows the subject line of the one that did better.

"Better" is what the marketing playbook says it is: the click rate, not the open rate (mail apps inflate opens). Two
sent campaigns are compared on their reports; where opens and clicks disagree, only the playbook picks the winner,
and the draft takes that campaign's subject line.
"""

from __future__ import annotations

from composer.archetypes.common import rule_author, teammate
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult


def _rate(campaign: Rec, what: str) -> float:
    sent = float(campaign["emails_sent"] or 0)
    return round(100.0 * float(campaign[what] or 0) / sent, 1) if sent else 0.0


@archetype(
    "subject-line-from-results",
    family="marketing",
    title="The next campaign takes the subject line of the past campaign that did better, judged as the playbook says",
    services=("marketing",),
    fits=can_arrive(COLLEAGUE),
)
def subject_line_from_results(s: Scenario) -> None:
    sent = [c for c in s.records("marketing", "campaign", where={"status": "sent"}) if c["emails_sent"]]
    drafts = s.records("marketing", "campaign", where={"status": "draft"})
    pairs = [(a, b, d) for a in sent for b in sent for d in drafts
             if a.key < b.key and a["audience_id"] == b["audience_id"] == d["audience_id"]
             and _rate(a, "clicks") != _rate(b, "clicks") and _rate(a, "opens") != _rate(b, "opens")
             and len({a["subject_line"], b["subject_line"], d["subject_line"]}) == 3]
    # Half the time opens and clicks disagree: then only the playbook says which did better.
    split = [p for p in pairs if (_rate(p[0], "clicks") > _rate(p[1], "clicks")) != (_rate(p[0], "opens") > _rate(p[1], "opens"))]
    a, b, draft = s.pick(split if split and s.rng.random() < 0.6 else pairs, "no two sent campaigns to compare")
    if s.rng.random() < 0.5:
        a, b = b, a
    winner = a if _rate(a, "clicks") > _rate(b, "clicks") else b
    by_opens = a if _rate(a, "opens") > _rate(b, "opens") else b
    sender = teammate(s)
    trigger = arrive(s, sender, Ask(
        subject=f"Subject line for \"{draft['title']}\"",
        text=s.rng.choice((
            f"Before \"{draft['title']}\" goes out: give it the subject line of whichever did better, \"{a['title']}\" or "
            f"\"{b['title']}\".",
            f"Can you swap the subject line of our draft \"{draft['title']}\" for the one from the better of \"{a['title']}\" "
            f"and \"{b['title']}\"? Let me know which one won.",
        )),
        team="general",
    ), channels=COLLEAGUE)
    rule = consult(s, "Marketing playbook",
                   "- We judge a sent campaign by its click rate (clicks per email sent), never by its open rate: mail apps "
                   "open emails on their own, so opens flatter every campaign.\n"
                   "- A new campaign may reuse the subject line of the past campaign that did better.",
                   author_role=rule_author(s, "marketing manager"))
    steps = {}
    for campaign in (a, b):
        found = lookup(s, campaign, {"query": campaign["title"], "title": campaign["title"], "status": "sent"},
                       say=f"find \"{campaign['title']}\"")
        s.call("marketing", "get_campaign_report", {"campaign_id": found.ref("id")},
               say=f"read the report of \"{campaign['title']}\"", stage="decide")
        steps[campaign.key] = found
    mine = lookup(s, draft, {"query": draft["title"], "title": draft["title"], "status": "draft"},
                  say=f"find the draft \"{draft['title']}\"")
    s.decide("figure", "the click rates of the two campaigns")
    s.decide("rule", "campaigns are judged by click rate, not opens", default=winner.key == by_opens.key)
    if winner.key == by_opens.key and (abs(_rate(a, "clicks") - _rate(b, "clicks")) < 0.05):
        raise Skip("the click rates are too close to tell")
    changed = s.call("marketing", "update_campaign", {"campaign_id": mine.ref("id"),
                                                      "subject_line": steps[winner.key].ref("subject_line")},
                     say="give the draft the subject line of the campaign that did better, as the playbook judges it")
    if winner.key != by_opens.key:
        s.set_policy(rule.rec, "campaigns are judged by click rate, not opens", changed, "subject_line",
                     steps[winner.key].ref("subject_line"), by_opens["subject_line"],
                     f"The draft takes the subject line of \"{winner['title']}\", the better click rate")
    reply(s, trigger, [f"Done: \"{winner['title']}\" did better ({_rate(winner, 'clicks')}% of recipients clicked against "
                       f"{_rate(b if winner is a else a, 'clicks')}%), so \"{draft['title']}\" now has its subject line: "
                       f"\"{winner['subject_line']}\"."],
          say=reply_clause(trigger, "which campaign did better"),
          facts=[Said("the campaign that did better", Lit(winner["title"]))],
          subject=f"Subject line for \"{draft['title']}\"")
    s.brief.intro = f"{trigger.intro} about the subject line of the draft \"{draft['title']}\""
    s.brief.goal = (f"Give the draft the subject line of the campaign that did better and "
                    f"{reply_clause(trigger, 'which one that was')}")
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [sender.name]
