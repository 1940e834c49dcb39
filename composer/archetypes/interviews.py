"""Interviews after they are booked: feedback logged as scorecards, candidates who withdraw, referrals added.

An interviewer sends their feedback: it becomes their scorecard on the interview they ran (not another one of theirs),
and the interview feedback procedure says what follows from the stage's scorecards together: every interviewer of the
stage in favour moves the candidate on, a no goes to the hiring manager. A candidate withdraws: their upcoming
interviews are cancelled, each interviewer told, and the application closed with the reason the withdrawal procedure
names. A colleague refers someone for a role: a new person is added as a candidate, someone who applied before gets
an application of their own for the role (the referrer credited either way).
"""

from __future__ import annotations

from composer.archetypes.people import _asks, _day, _emailed, _in_chat, _new_applicant, _outsider, _person, _trap
from composer.plan import Lit
from composer.scenario import Said, Scenario, Skip, archetype, detail
from composer.stages.acts import tell
from composer.stages.channels import reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult
from mcp_services.kernel.world import Person

#: What an interviewer says for each recommendation the recruiting service records.
_SAYS = {
    "strong_yes": ("a strong yes from me", "definitely hire, strong yes"),
    "yes": ("I'd say yes", "a yes from me"),
    "no": ("I'd say no", "not a fit for me, so no"),
    "definitely_not": ("a definite no", "definitely not"),
}
_POSITIVE = ("yes", "strong_yes")
#: The reason the withdrawal procedure gives an interview it cancels.
_WITHDREW = "Candidate withdrew"
_NOTES = {
    True: ("Clear thinker, walked through the problem step by step and asked good questions.",
           "Strong on the fundamentals and easy to work with; answered the scenario questions well."),
    False: ("Struggled with the core questions and could not explain their past work in any depth.",
            "Answers stayed vague; not enough experience for what the role needs."),
}
_STAGE_WORDS = {"phone_screen": "phone screen", "skills_interview": "skills interview", "final_interview": "final interview",
                "application_review": "application review"}
_NEXT = {"phone_screen": "skills interview", "skills_interview": "final interview", "final_interview": "offer"}


def _colleague_of(s: Scenario, email: str) -> Person | None:
    """The team member with this address (never the user), as a person the stages can reach."""
    if email == s.world.user.email:
        return None
    users = s.records("recruiting", "user", where={"email": email})
    name = users[0]["name"] if users else next((p.name for p in s.world.people if p.email == email), "")
    return _person(s, name, email) if name else None


def _how(s: Scenario, person: Person) -> tuple[str, ...]:
    """How a word reaches a colleague: a direct message where they are in chat, else an email."""
    return ("chat", "email") if _in_chat(s, person) else ("email",)


@archetype(
    "interview-scorecard",
    family="hr",
    title="An interviewer sends their feedback: log it as their scorecard and do what the stage's scorecards together call for",
    services=("recruiting", "mailbox"),
)
def interview_scorecard(s: Scenario) -> None:
    now = s.world.now
    done = [i for i in s.records("recruiting", "interview", where={"status": "scheduled"})
            if i["start_at"] < now and i["stage"] in _NEXT]
    options = [(i, e) for i in done for e in i["interviewer_emails"]
               if not s.records("recruiting", "scorecard", where={"interview_id": i.key, "interviewer_email": e})]
    interview, email = s.pick(options, "no interview waiting for a scorecard")
    person = _colleague_of(s, email)
    if person is None:
        raise Skip("the interviewer is the user")
    application = s.record("recruiting", "application", interview["application_id"])
    if application["status"] != "active" or application["stage"] != interview["stage"]:
        raise Skip("the application has moved on since the interview")
    job = s.record("recruiting", "job", interview["job_id"])
    candidate = interview["candidate_name"]
    first = candidate.split(" ")[0]
    stage = _STAGE_WORDS[interview["stage"]]
    recommendation = s.rng.choice(("strong_yes", "yes", "yes", "no", "definitely_not"))
    positive = recommendation in _POSITIVE
    notes = s.rng.choice(_NOTES[positive])
    trigger = _asks(s, person, f"Feedback: {candidate}", (
        f"Finished the {stage} with {candidate} on {_day(interview['start_at'])}. {notes} Overall {s.rng.choice(_SAYS[recommendation])}. "
        "Could you put my scorecard into recruiting for me?",
        f"My feedback on {candidate} ({stage}, {_day(interview['start_at'])}): {notes} Recommendation: "
        f"{s.rng.choice(_SAYS[recommendation])}. Can you log it as my scorecard?",
    ), short=f"Please log my {stage} scorecard for {candidate}: {s.rng.choice(_SAYS[recommendation])}.", team="hiring")
    rule = consult(
        s, "Interview feedback procedure",
        "- Interviewers' feedback goes into recruiting as their scorecard on the interview they ran, the day it comes in.\n"
        "- Once a scorecard is in, look at all the scorecards of that stage for the application. When every one of them "
        "recommends yes or strong yes, move the application on to the next stage.\n"
        "- When any of them says no or definitely not, leave the application where it is and let the job's hiring manager "
        "know, with the candidate's name and the stage, so they can decide.",
        author_role="office manager",
    )
    rec = s.record("recruiting", "interview", interview.key)
    found = lookup(s, rec, {"interviewer_email": email, "application_id": application.key, "status": "scheduled",
                            "starts_before": now, "query": candidate},
                   say=f"find the {stage} {person.first_name} ran with {candidate} in recruiting", name=f"the {stage}")
    others = [i for i in s.records("recruiting", "interview", where={"status": "scheduled"})
              if i.key != interview.key and email in i["interviewer_emails"] and i["start_at"] < now]
    if others:
        _trap(s, "other-interview", others[0], f"{person.first_name}'s {others[0]['stage'].replace('_', ' ')} with "
                                               f"{others[0]['candidate_name']}", found)
    s.call("recruiting", "submit_scorecard",
           {"interview_id": found.ref("id"), "interviewer_email": email, "recommendation": recommendation,
            "notes": detail(notes)},
           say=f"log {person.first_name}'s scorecard on the {stage} with their recommendation")
    peers = [c for c in s.records("recruiting", "scorecard", where={"application_id": application.key, "stage": interview["stage"]})]
    s.call("recruiting", "list_scorecards", {"application_id": found.ref("application_id"), "stage": interview["stage"]},
           say=f"look at every scorecard of {first}'s {stage}", stage="decide")
    together = all(c["recommendation"] in _POSITIVE for c in peers)
    s.decide("rule", "the stage's scorecards together decide whether the candidate moves on", default=False)
    s.brief.intro = f"{trigger.intro} with feedback on {candidate}"
    s.brief.anchors += [person.name]
    s.brief.constraints.append(rule.pointer)
    if together:
        moved = s.call("recruiting", "advance_application",
                       {"application_id": found.ref("application_id"), "from_stage": interview["stage"]},
                       say=f"move {first} on to the next stage, as the procedure says")
        s.require_by_policy(rule.rec, "every scorecard of the stage in favour moves the candidate on", moved,
                            f"{candidate} moved on to the {_NEXT[interview['stage']]}")
        reply(s, trigger, [f"Done: your scorecard for {candidate} is in, and as every {stage} scorecard is in favour, "
                           f"{first} has moved on to the {_NEXT[interview['stage']]}."],
              say=reply_clause(trigger, "what you logged and where the candidate stands"),
              facts=[Said("the next stage", Lit(_NEXT[interview["stage"]]))], subject=f"Feedback: {candidate}")
    else:
        against = next(c for c in peers if c["recommendation"] not in _POSITIVE)
        manager = _colleague_of(s, job["hiring_manager_email"])
        if manager is None or manager.email == email:
            raise Skip("the hiring manager is the user or the interviewer")
        told = tell(s, manager, [f"{candidate}'s {stage} for the {job['title']} role has a scorecard against "
                                 f"({against['interviewer_email']}: {against['recommendation'].replace('_', ' ')}), so I have "
                                 "left the application where it is for you to decide."],
                    say="let whoever the procedure names know, with the candidate and the stage",
                    facts=[Said("the candidate", Lit(candidate))], subject=f"{candidate}: {stage} feedback")
        s.require_by_policy(rule.rec, "a scorecard against goes to the hiring manager", told,
                            f"The hiring manager hears about the {stage} scorecard against {candidate}")
        reply(s, trigger, [f"Done: your scorecard for {candidate} is in. There is a no among the {stage} scorecards, so "
                           f"{first} stays where they are and I've let {manager.first_name} know."],
              say=reply_clause(trigger, "what you logged and where the candidate stands"),
              facts=[Said("who was told", Lit(manager.first_name))], subject=f"Feedback: {candidate}")
    s.brief.goal = (f"Get {person.first_name}'s feedback on {candidate} into recruiting, follow it up the way the procedure "
                    f"says and {reply_clause(trigger, 'what you did')}")


@archetype(
    "candidate-withdrawal",
    family="hr",
    title="A candidate withdraws: cancel their upcoming interviews, tell the interviewers and close the application",
    services=("recruiting", "mailbox"),
)
def candidate_withdrawal(s: Scenario) -> None:
    now = s.world.now
    upcoming = [i for i in s.records("recruiting", "interview", where={"status": "scheduled"}) if i["start_at"] > now]
    interview = s.pick(upcoming, "no upcoming interview")
    application = s.record("recruiting", "application", interview["application_id"])
    if application["status"] != "active":
        raise Skip("the application is closed")
    candidate = s.record("recruiting", "candidate", interview["candidate_id"])
    who = _outsider(candidate)
    s.subject = who
    interviewers = [p for p in (_colleague_of(s, e) for e in interview["interviewer_emails"]) if p is not None]
    if not interviewers:
        raise Skip("the user runs the interview alone")
    why, reason = s.rng.choice((("I've accepted an offer elsewhere", "Accepted another offer"),
                                ("for personal reasons I need to step back from my job search", "Withdrew: personal reasons")))
    trigger = _emailed(s, who, f"Withdrawing - {interview['job_title']}", s.rng.choice((
        f"Hello,\n\nThank you for your time so far. I'm writing to withdraw my application for the {interview['job_title']} "
        f"role: {why}. Sorry for the short notice.\n\nBest regards,\n{candidate['name']}",
        f"Hi,\n\nI'd like to withdraw from the {interview['job_title']} process - {why}. Thanks for understanding.\n\n"
        f"Kind regards,\n{candidate['name']}",
    )))
    rule = consult(
        s, "Candidate withdrawal procedure",
        "- When a candidate withdraws, first cancel every interview of theirs that has not happened yet, with the reason "
        f"\"{_WITHDREW}\" (closing the application cancels them too, but without saying why).\n"
        "- Let each interviewer of those interviews know the candidate withdrew, so they can free the time.\n"
        "- Reject the application with the rejection reason that matches why they withdrew (another offer, or personal "
        "reasons), and reply to the candidate to confirm.",
        author_role="office manager",
    )
    found = lookup(s, candidate, {"query": candidate["name"], "email": candidate["email"]},
                   say=f"find {candidate['first_name']} among the candidates")
    booked = lookup(s, s.record("recruiting", "interview", interview.key),
                    {"application_id": application.key, "status": "scheduled", "starts_after": now},
                    say=f"find {candidate['first_name']}'s upcoming interviews", name="their upcoming interview")
    s.call("recruiting", "cancel_interview", {"interview_id": booked.ref("id"), "reason": _WITHDREW},
           say=f"cancel {candidate['first_name']}'s upcoming interview")
    reasons = s.records("recruiting", "rejection_reason", where={"name": reason})
    if not reasons:
        raise Skip(f"no rejection reason {reason!r}")
    picked = lookup(s, reasons[0], {"query": reason, "name": reason}, say="find the rejection reason that fits")
    s.call("recruiting", "reject_application",
           {"application_id": booked.ref("application_id"), "rejection_reason_id": picked.ref("id"),
            "notes": detail("Candidate withdrew by email.")},
           say=f"close {candidate['first_name']}'s application with the reason that fits why they withdrew")
    s.decide("pick", "the rejection reason that matches why the candidate withdrew")
    for n, person in enumerate(interviewers):
        told = tell(s, person, [f"{candidate['name']} has withdrawn from the {interview['job_title']} process, so the interview "
                                f"on {_day(interview['start_at'])} is cancelled."],
                    say="let the interviewer know, as the procedure says", facts=[Said("the candidate", Lit(candidate["name"]))],
                    subject=f"Interview cancelled: {candidate['name']}", how=_how(s, person))
        if n == 0:
            s.require_by_policy(rule.rec, "interviewers hear when a candidate withdraws", told,
                                f"{person.name} hears that {candidate['name']} withdrew")
    reply(s, trigger, [f"Hi {candidate['first_name']},\n\nThank you for letting us know. I've cancelled your interview on "
                       f"{_day(interview['start_at'])} and withdrawn your application. Best of luck!"],
          say=reply_clause(trigger, "a confirmation"),
          facts=[Said("the cancelled interview", Lit(interview["start_at"]), "date")], subject="Your application")
    s.brief.intro = f"{trigger.intro} to withdraw from the {interview['job_title']} process"
    s.brief.goal = (f"Handle {candidate['first_name']}'s withdrawal the way our candidate withdrawal procedure says and "
                    f"{reply_clause(trigger, 'a confirmation')}")
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [candidate["name"]]


@archetype(
    "candidate-referral",
    family="hr",
    title="A colleague refers someone for an open role: add them as a candidate, or give someone we know a new application",
    services=("recruiting", "mailbox"),
)
def candidate_referral(s: Scenario) -> None:
    jobs = [j for j in s.records("recruiting", "job", where={"status": "open"})]
    job = s.pick(jobs, "no open job")
    team = [p for p in s.world.team if p.email != s.world.user.email]
    referrer = s.pick(team, "nobody to refer")
    candidates = s.records("recruiting", "candidate")
    applied = {a["candidate_id"] for a in s.records("recruiting", "application", where={"job_id": job.key})}
    known = [c for c in candidates if c.key not in applied]
    again = s.pick(known, "everyone applied for it") if known and s.rng.random() < 0.45 else None
    if again is not None:
        first, last, email = again["first_name"], again["last_name"], again["email"]
    else:
        first, last, email = _new_applicant(s, {c["email"] for c in candidates})
    name = f"{first} {last}"
    trigger = _asks(s, referrer, f"Referral for the {job['title']} role", (
        f"I'd like to refer {name} ({email}) for our {job['title']} opening - we worked together before and they'd be "
        "great. Could you get them into recruiting?",
        f"Referral: {name}, {email}, for the {job['title']} role. I can vouch for them. Can you add them to the process?",
    ), team="hiring")
    s.brief.intro = f"{trigger.intro} to refer {name} for the {job['title']} role"
    s.brief.anchors += [referrer.name, name, job["title"]]
    role = lookup(s, s.record("recruiting", "job", job.key), {"query": job["title"], "title": job["title"], "status": "open"},
                  say=f"find the open {job['title']} job in recruiting")
    source = {"source": "Referral", "referrer_email": referrer.email}
    if again is not None:
        found = lookup(s, again, {"query": email, "email": email}, say=f"check whether {first} is in recruiting already")
        s.decide("premise", f"{name} is new to recruiting", default=False)
        s.literal_writes.append(s.spec("recruiting", "add_candidate", {"first_name": first, "last_name": last, "email": email,
                                                                        "job_id": job.key, **source}))
        s.call("recruiting", "add_application", {"candidate_id": found.ref("id"), "job_id": role.ref("id"), **source},
               say=f"get {first} into recruiting for the role, as {referrer.first_name}'s referral")
        words = (f"{first} was in recruiting already from an earlier application, so I've added a new application for the "
                 f"{job['title']} role to their record, as your referral.")
        facts = [Said("that they were in recruiting already", Lit("already"), "premise")]
    else:
        s.decide("premise", f"{name} is new to recruiting", default=True)
        s.call("recruiting", "add_candidate", {"first_name": first, "last_name": last, "email": email, "job_id": role.ref("id"),
                                                **source},
               say=f"get {first} into recruiting for the role, as {referrer.first_name}'s referral")
        words = f"{first} is now in recruiting as a candidate for the {job['title']} role, as your referral."
        facts = [Said("the role", Lit(job["title"]))]
    reply(s, trigger, [f"Thanks {referrer.first_name}! {words}"], say=reply_clause(trigger, "what you did"), facts=facts,
          subject=f"Referral: {name}")
    s.brief.goal = (f"Get {first} into recruiting for the role as {referrer.first_name}'s referral and "
                    f"{reply_clause(trigger, 'what you did')}")
