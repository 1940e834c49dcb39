"""Recruiting: jobs, candidates and their applications through the hiring pipeline (modelled on Greenhouse's Harvest API).

Jobs, candidates and the staff who hire come from the staff plan (``mcp_services.kernel.plans.staff``):
hiring managers, the recruiter and interviewers are hr's employees with the same emails, and the two
candidates hired lately are hr's new hires. Every application moves through ``PIPELINE_STAGES``
(application review, phone screen, skills interview, final interview, offer) under the hiring rules the
data states (``get_hiring_rules``):

- an application advances one stage at a time, from the stage it is in; into the offer stage only when the
  final interview's scorecards recommend hiring (a yes or strong yes, and no no or definitely not);
- an offer needs the job's official approval (given by the job's approver, never its hiring manager), an
  open job and an application in the offer stage, and a salary within the job's range;
- a candidate is hired only after accepting the offer, which fills one of the job's openings (the job
  closes when none is left); every rejection states a reason.

The agent acts for the world's user: a site admin, and the approver of most jobs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import date, datetime, timedelta, timezone
from typing import Literal, get_args

from pydantic import BaseModel

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.plans.staff import PIPELINE_STAGES, staff_plan
from mcp_services.kernel.prose import write
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    City,
    CompanyName,
    Currency,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    JobTitle,
    Money,
    PersonName,
    PhoneNumber,
    ShortText,
    Text,
)

JobId = EntityId("recruiting.job")
UserId = EntityId("recruiting.user")
CandidateId = EntityId("recruiting.candidate")
ApplicationId = EntityId("recruiting.application")
InterviewId = EntityId("recruiting.interview")
ScorecardId = EntityId("recruiting.scorecard")
OfferId = EntityId("recruiting.offer")
RejectionReasonId = EntityId("recruiting.rejection_reason")
NoteId = EntityId("recruiting.note")

Stage = Literal["application_review", "phone_screen", "skills_interview", "final_interview", "offer"]
INTERVIEW_STAGES = ("phone_screen", "skills_interview", "final_interview")
JobStatus = Literal["draft", "open", "closed"]
ApprovalStatus = Literal["pending", "approved"]
ApplicationStatus = Literal["active", "rejected", "hired"]
InterviewStatus = Literal["scheduled", "completed", "cancelled"]
Recommendation = Literal["definitely_not", "no", "yes", "strong_yes"]
OfferStatus = Literal["extended", "accepted", "declined", "withdrawn"]
OfferResponse = Literal["accepted", "declined"]
Permission = Literal["site_admin", "job_admin", "interviewer"]
RejectionType = Literal["we_rejected", "they_rejected"]
Source = Literal["Careers page", "LinkedIn", "Referral", "Indeed", "Agency"]

assert get_args(Stage) == PIPELINE_STAGES, "the service's stages are the plan's"

service = Service(
    "recruiting",
    "Applicant tracking: job openings with their approvals, candidates and their applications through the hiring "
    "stages, interviews and scorecards, offers, hires and rejections with reasons.",
    title="Recruiting",
)


@service.entity(table="users", prefix="usr", label="name", search=("name", "email", "title", "department"))
class User:
    """A colleague who works in the applicant tracking system: hiring managers, the recruiter, interviewers."""

    id: UserId
    name: PersonName = field(role="self")
    email: EmailAddress = field(unique=True, role="self", link="hr.employee.work_email")
    title: JobTitle
    department: str
    permission: Permission


@service.entity(
    table="jobs", prefix="job", label="title", search=("title", "requisition_id", "department"),
    state=StateDef(field="status", values=["draft", "open", "closed"], initial="draft", terminal=["closed"]),
)
class Job:
    """A job opening (a requisition) and who hires for it."""

    id: JobId
    requisition_id: str = field(unique=True, mention="the requisition number")
    title: str
    department: str = field(index=True)
    location: City
    employment_type: str
    status: JobStatus = field(index=True)
    approval_status: ApprovalStatus
    hiring_manager_email: EmailAddress = field(role="hiring manager")
    recruiter_email: EmailAddress = field(role="recruiter")
    approver_email: EmailAddress = field(role="approver")
    salary_min: Money = field(mention="the bottom of the salary range")
    salary_max: Money = field(mention="the top of the salary range")
    currency: Currency
    openings: int
    description: Text
    opened_at: DateTime | None = None
    approved_at: DateTime | None = None
    closed_at: DateTime | None = None

    active_applications = derived(
        int, batch=lambda db, jobs: _active_counts(db, jobs), description="Applications still in the pipeline"
    )


@service.entity(
    table="candidates", prefix="cand", label="name", search=("name", "email", "current_company", "current_title")
)
class Candidate:
    """A person who applied (or was added) for one or more jobs."""

    id: CandidateId
    first_name: str
    last_name: str = field(index=True)
    name: PersonName = field(role="self")
    email: EmailAddress = field(unique=True, role="self")
    phone: PhoneNumber | None = None
    city: City | None = None
    current_company: CompanyName | None = field(None, role="employer")
    current_title: JobTitle | None = None
    created_at: DateTime

    application_ids = derived(
        list[ApplicationId], batch=lambda db, cands: _application_ids(db, cands), description="The candidate's applications"
    )


@service.entity(
    table="applications", prefix="app", search=("cover_letter",),
    state=StateDef(field="status", values=["active", "rejected", "hired"], initial="active", terminal=["hired"]),
)
class Application:
    """One candidate's application to one job: where it is in the pipeline."""

    id: ApplicationId = field(mention="the application")
    candidate_id: CandidateId = field(index=True, role="candidate")
    job_id: JobId = field(index=True)
    stage: Stage = field(index=True)
    status: ApplicationStatus = field(index=True)
    source: Source
    referrer_email: EmailAddress | None = field(None, role="referrer")
    cover_letter: Text | None = None
    applied_at: DateTime
    last_activity_at: DateTime
    rejection_reason_id: RejectionReasonId | None = None
    rejection_notes: Text | None = None
    rejected_at: DateTime | None = None
    hired_at: DateTime | None = None

    candidate_name = joined(PersonName, via="candidate_id", field="name")
    candidate_email = joined(EmailAddress, via="candidate_id", field="email")
    job_title = joined(str, via="job_id", field="title")
    requisition_id = joined(str, via="job_id", field="requisition_id")
    rejection_reason = joined(str | None, via="rejection_reason_id", field="name")


@service.entity(table="rejection_reasons", prefix="rr", label="name")
class RejectionReason:
    """Why an application was rejected: by us, or because the candidate withdrew."""

    id: RejectionReasonId
    name: str = field(unique=True)
    type: RejectionType


@service.entity(table="interviews", prefix="int")
class Interview:
    """An interview of an application's current stage, with its panel."""

    id: InterviewId
    application_id: ApplicationId = field(index=True)
    candidate_id: CandidateId = field(role="candidate")
    job_id: JobId
    stage: Stage
    interviewer_emails: list[EmailAddress] = field(role="interviewer")
    start_at: DateTime = field(mention="the interview time")
    end_at: DateTime
    location: str = field(mention="where the interview is")
    status: InterviewStatus = field(index=True)
    cancel_reason: ShortText | None = None
    created_at: DateTime

    candidate_name = joined(PersonName, via="candidate_id", field="name")
    job_title = joined(str, via="job_id", field="title")


@service.entity(table="scorecards", prefix="sc", search=("notes",))
class Scorecard:
    """One interviewer's feedback on one interview, with their overall recommendation."""

    id: ScorecardId
    application_id: ApplicationId = field(index=True)
    interview_id: InterviewId
    stage: Stage
    interviewer_email: EmailAddress = field(role="interviewer")
    recommendation: Recommendation
    notes: Text
    submitted_at: DateTime


@service.entity(
    table="offers", prefix="off",
    state=StateDef(field="status", values=["extended", "accepted", "declined", "withdrawn"], initial="extended",
                   terminal=["accepted", "declined", "withdrawn"]),
)
class Offer:
    """A job offer made to a candidate."""

    id: OfferId = field(mention="the offer")
    application_id: ApplicationId = field(index=True)
    candidate_id: CandidateId = field(role="candidate")
    job_id: JobId
    status: OfferStatus = field(index=True)
    salary: Money = field(mention="the offered salary")
    currency: Currency
    start_date: Date = field(mention="the start date")
    notes: Text | None = None
    created_by_email: EmailAddress = field(role="author")
    created_at: DateTime
    resolved_at: DateTime | None = None
    response_notes: Text | None = None

    candidate_name = joined(PersonName, via="candidate_id", field="name")
    job_title = joined(str, via="job_id", field="title")


@service.entity(table="notes", prefix="note", search=("body",))
class Note:
    """A note on a candidate's activity feed."""

    id: NoteId
    candidate_id: CandidateId = field(index=True, role="candidate")
    body: Text
    author_email: EmailAddress = field(role="author")
    created_at: DateTime


class HiringRules(BaseModel):
    """The hiring rules every job follows."""

    rules: str
    stages: list[Stage]
    offer_needs: list[str]


# -- derived values --------------------------------------------------------------------------------


def _active_counts(db: RecordAccess, jobs: Sequence[Job]) -> list[int]:
    ids = [j.id for j in jobs]
    counts = dict(db.sql(
        f"SELECT job_id, COUNT(*) FROM applications WHERE status = 'active' AND job_id IN ({', '.join('?' for _ in ids)}) "
        "GROUP BY job_id", *ids,
    ))
    return [int(counts.get(j.id, 0)) for j in jobs]


def _application_ids(db: RecordAccess, candidates: Sequence[Candidate]) -> list[list[str]]:
    ids = [c.id for c in candidates]
    found: dict[str, list[str]] = {i: [] for i in ids}
    for candidate_id, application_id in db.sql(
        f"SELECT candidate_id, id FROM applications WHERE candidate_id IN ({', '.join('?' for _ in ids)}) ORDER BY id", *ids
    ):
        found[candidate_id].append(application_id)
    return [found[i] for i in ids]


# -- rules shared by the tools ---------------------------------------------------------------------

_APPLICATION_HINT = "Use list_applications or get_candidate to find application ids."
_POSITIVE = ("yes", "strong_yes")
_NEGATIVE = ("no", "definitely_not")


def _active(ctx: ToolContext, application_id: str) -> Application:
    application = ctx.get(Application, application_id, hint=_APPLICATION_HINT)
    if application.status != "active":
        fix = " Use unreject_application first." if application.status == "rejected" else ""
        raise ToolError.invalid_state(f"Application {application_id} is {application.status}, not active.{fix}")
    return application


def _user(ctx: ToolContext, email: str, what: str) -> User:
    user = ctx.find(User, email=email.strip().lower())
    if user is None:
        raise ToolError.invalid_argument(f"{email} is not a recruiting user, so they cannot be {what}; see list_users.")
    return user


def _touch(ctx: ToolContext, application: Application, **changes: object) -> Application:
    return ctx.update(application, last_activity_at=ctx.now_iso, **changes)


def _final_verdict(ctx: ToolContext, application: Application) -> str | None:
    """Why the final interview's scorecards do not recommend hiring, or None when they do."""
    cards = ctx.query(Scorecard).where(application_id=application.id, stage="final_interview").all()
    if not cards:
        return "no final interview scorecard has been submitted yet"
    against = [c for c in cards if c.recommendation in _NEGATIVE]
    if against:
        who = ", ".join(f"{c.interviewer_email} ({c.recommendation})" for c in against)
        return f"the final interview has scorecards against hiring: {who}"
    if not any(c.recommendation in _POSITIVE for c in cards):
        return "no final interview scorecard recommends hiring"
    return None


def _new_application(
    ctx: ToolContext, candidate: Candidate, job_id: str, source: str, referrer_email: str | None, cover_letter: str | None,
    at: str | None = None,
) -> Application:
    job = ctx.get(Job, job_id)
    if job.status != "open":
        raise ToolError.invalid_state(f"Job {job.id} ({job.title}) is {job.status}; applications go to open jobs only.")
    if ctx.exists(Application, candidate_id=candidate.id, job_id=job.id, status="active"):
        raise ToolError.conflict(f"{candidate.name} already has an active application for {job.title}.")
    referrer = _user(ctx, referrer_email, "a referrer").email if referrer_email else None
    if source == "Referral" and referrer is None:
        raise ToolError.invalid_argument("A referral needs referrer_email: the colleague who referred the candidate.")
    return ctx.insert(Application(
        id=ctx.new_id("app"), candidate_id=candidate.id, job_id=job.id, stage="application_review", status="active",
        source=source, referrer_email=referrer, cover_letter=cover_letter.strip() if cover_letter and cover_letter.strip() else None,
        applied_at=at or ctx.now_iso, last_activity_at=at or ctx.now_iso,
    ))


def _new_candidate(
    ctx: ToolContext, first_name: str, last_name: str, email: str, phone: str | None, current_company: str | None,
    current_title: str | None, at: str | None = None,
) -> Candidate:
    first, last = first_name.strip(), last_name.strip()
    if not first or not last:
        raise ToolError.invalid_argument("first_name and last_name must not be empty.")
    return ctx.insert(Candidate(
        id=ctx.new_id("cand"), first_name=first, last_name=last, name=f"{first} {last}", email=email.strip().lower(),
        phone=phone, current_company=current_company.strip() if current_company and current_company.strip() else None,
        current_title=current_title.strip() if current_title and current_title.strip() else None,
        created_at=at or ctx.now_iso,
    ))


def _scorecard(
    ctx: ToolContext, interview_id: str, interviewer_email: str, recommendation: str, notes: str
) -> Scorecard:
    interview = ctx.get(Interview, interview_id)
    if interview.status == "cancelled":
        raise ToolError.invalid_state(f"Interview {interview_id} was cancelled; there is nothing to score.")
    if interview.start_at > ctx.now_iso:
        raise ToolError.invalid_state(
            f"Interview {interview_id} is on {interview.start_at}; scorecards are submitted after the interview."
        )
    email = interviewer_email.strip().lower()
    if email not in interview.interviewer_emails:
        raise ToolError.invalid_argument(
            f"{interviewer_email} was not on the panel of interview {interview_id} ({', '.join(interview.interviewer_emails)})."
        )
    if ctx.exists(Scorecard, interview_id=interview.id, interviewer_email=email):
        raise ToolError.conflict(f"{email} already submitted a scorecard for interview {interview_id}.")
    if not notes.strip():
        raise ToolError.invalid_argument("notes must not be empty: say what the recommendation rests on.")
    card = ctx.insert(Scorecard(
        id=ctx.new_id("sc"), application_id=interview.application_id, interview_id=interview.id, stage=interview.stage,
        interviewer_email=email, recommendation=recommendation, notes=notes.strip(), submitted_at=ctx.now_iso,
    ))
    ctx.update(interview, status="completed")
    _touch(ctx, ctx.get(Application, interview.application_id))
    return card


def _offerable(ctx: ToolContext, application: Application, salary: float, start_date: str) -> Job:
    """The job of an application an offer may go out on now, under the hiring rules (refuses with the rule broken)."""
    job = ctx.get(Job, application.job_id)
    if job.approval_status != "approved":
        raise ToolError.permission_denied(
            f"Job {job.id} ({job.title}) has no official approval yet; {job.approver_email} must approve it before any offer."
        )
    if job.status != "open":
        raise ToolError.invalid_state(f"Job {job.id} ({job.title}) is {job.status}; offers go out for open jobs only.")
    if application.stage != "offer":
        raise ToolError.invalid_state(
            f"Application {application.id} is in {application.stage}; offers are made in the offer stage "
            "(advance_application first)."
        )
    if not job.salary_min <= salary <= job.salary_max:
        raise ToolError.permission_denied(
            f"{salary:,.2f} {job.currency} is outside the range of {job.title} ({job.salary_min:,.2f} to "
            f"{job.salary_max:,.2f}); offers stay within the approved range."
        )
    try:
        first_day = date.fromisoformat(start_date)
    except (TypeError, ValueError):
        raise ToolError.invalid_argument(f"start_date {start_date!r} is not a date (YYYY-MM-DD).") from None
    if first_day <= ctx.now.date():
        raise ToolError.invalid_argument(f"start_date {start_date} must be in the future.")
    if ctx.query(Offer).where(application_id=application.id).where_in("status", ("extended", "accepted")).exists():
        raise ToolError.conflict(f"Application {application.id} already has an extended or accepted offer; see list_offers.")
    return job


# -- seed ------------------------------------------------------------------------------------------

_REASONS: tuple[tuple[str, str], ...] = (
    ("Lacking skills or qualifications", "we_rejected"),
    ("Compensation expectations too high", "we_rejected"),
    ("Hired another candidate", "we_rejected"),
    ("Position filled", "we_rejected"),
    ("Accepted another offer", "they_rejected"),
    ("Withdrew: personal reasons", "they_rejected"),
    ("Unresponsive", "they_rejected"),
)
#: What an interviewer writes on a scorecard: what they saw, with the candidate's stage and the role's skills.
_GOOD_NOTES = (
    "[Clear, structured answers|Well-organised answers|Crisp, clear answers]; [walked through|talked through|explained] a "
    "recent project [end to end|in depth|step by step] and [owned the trade-offs|was honest about what went wrong|knew "
    "the numbers].",
    "[Strong on the fundamentals|Solid fundamentals|Very good grasp of the basics] and asked [sharp|thoughtful|good] "
    "questions about [how the team works|our roadmap|how we measure success|the first 90 days].",
    "[Good communicator|Communicates well|Easy to talk to]; [handled|worked through|approached] the {exercise} "
    "[calmly|methodically|with confidence] and explained the reasoning at each step.",
    "[Solid experience for the level|Right level of experience|More experience than most candidates we have seen]; "
    "[would raise the bar on the team|would fit in well with {manager}'s team|could mentor others].",
    "[Impressive|Convincing|Strong] {exercise}: [spotted the edge cases|kept it simple|asked for the constraints first]. "
    "[Coming from {company}, they know the problem space.|Their time at {company} shows.|]",
)
_BAD_NOTES = (
    "[Struggled with|Got stuck on|Had trouble with] the {exercise} and [could not explain|did not explain|was vague "
    "about] the approach taken.",
    "[Experience is thinner than the resume suggests|Less hands-on experience than the CV says|Mostly managed others "
    "doing the work]; [not ready for this level|better suited to a junior role|not a fit for now].",
    "[Answers were vague|Few concrete examples|Hard to get specifics]; [I'd pass|not convinced|would not move "
    "forward] for the {title} role.",
)
_NOTE_TAILS = ("", "", "", "Happy to discuss in the debrief.", "See my comments in the doc.", "Recommend {next}.",
               "Asked about {topic}; good answer.", "Would like {manager}'s view.")
_EXERCISES = {"phone_screen": ("screening questions", "role questions", "background questions"),
              "skills_interview": ("technical exercise", "case study", "work sample", "live exercise"),
              "final_interview": ("final presentation", "panel questions", "case discussion", "scenario exercise")}
_TOPICS = ("salary expectations", "notice period", "remote work", "team size", "career goals", "the on-call rota")
_COVER_LETTERS = (
    "[I have followed|I've been following|I've admired] {home} [for a while|for some years|since its launch] and the "
    "{title} role [matches what I do best|fits my experience|is exactly what I'm looking for]. [I would love to "
    "talk.|I'd welcome a conversation.|I hope to hear from you.]",
    "Please find my application for the {title} [opening|role|position]. [I am available to start within a "
    "month.|My notice period is four weeks.|I can start in {start_month}.] [I currently work as {current} at "
    "{company}.|]",
    "[A former colleague|A friend at {home}|Someone on your team] recommended {home}; my background [in the field|as "
    "{current}|at {company}] fits the {title} role well.",
    "[After {years} years as {current}|Having spent {years} years at {company}], I'm [ready for|looking for] a role "
    "like {title}. [I'd bring|I can offer] [hands-on experience|a track record of delivery|a calm head under "
    "pressure].",
    None,
)
_REJECTION_NOTES = ("[Thanks for your time|Thank you for your time, {first}|Thanks for interviewing with us]; [we decided "
                    "not to move forward|we won't be moving forward|we've decided to go another way][ for the {title} "
                    "role|]. [We'll keep your details on file.|Best of luck with your search.|]")
_ROOM_FALLBACK = "Video call"
#: How the interview of an application's current stage stands, in turn per stage.
_SCENES = ("positive", "upcoming", "split", "awaiting feedback")
_PANEL = {"phone_screen": 1, "skills_interview": 2, "final_interview": 2}
_LENGTH_MINUTES = {"phone_screen": 30, "skills_interview": 60, "final_interview": 90}


def _at(day: date, hour: int, minute: int = 0) -> str:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _weekday(day: date) -> date:
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def _weekday_before(day: date) -> date:
    day -= timedelta(days=1)
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return day


@service.seeder
def seed(ctx: ToolContext) -> None:
    """Users, jobs and candidates from the staff plan; each application's interviews, scorecards and offers so far."""
    world = ctx.world
    staff = staff_plan(world)
    rng = ctx.rng("seed")
    words = ctx.rng("words")  # the scorecards' and letters' wording, apart from what happened when
    today = ctx.now.date()
    heads = {d.head_email for d in staff.departments}
    admins = {world.user.email, *(j.recruiter_email for j in staff.jobs)}
    users = [
        User(id=ctx.new_id("usr"), name=p.name, email=p.email, title=p.job_title, department=p.department,
             permission="site_admin" if p.email in admins else "job_admin" if p.email in heads else "interviewer")
        for p in staff.employees if date.fromisoformat(p.hire_date) <= today
    ]
    ctx.insert_many(users)
    reasons = {name: RejectionReason(id=ctx.new_id("rr"), name=name, type=kind) for name, kind in _REASONS}
    ctx.insert_many(list(reasons.values()))
    jobs = {
        j.requisition_id: Job(
            id=ctx.new_id("job"), requisition_id=j.requisition_id, title=j.title, department=j.department,
            location=j.location, employment_type=j.employment_type, status=j.status, approval_status=j.approval_status,
            hiring_manager_email=j.hiring_manager_email, recruiter_email=j.recruiter_email,
            approver_email=j.approver_email, salary_min=j.salary_min, salary_max=j.salary_max, currency=world.currency,
            openings=j.openings if j.status != "closed" else 0, description=j.description,
            opened_at=_at(date.fromisoformat(j.opened_on), 9) if j.opened_on else None,
            approved_at=_at(date.fromisoformat(j.opened_on), 15) if j.opened_on and j.approval_status == "approved" else None,
        )
        for j in staff.jobs
    }
    rooms = [p.name for p in world.places if p.kind == "meeting room"] or [_ROOM_FALLBACK]
    by_department: dict[str, list[str]] = {}
    for user in users:
        by_department.setdefault(user.department, []).append(user.email)
    hires = {p.home_email: p for p in staff.employees if p.home_email}
    candidates: list[Candidate] = []
    applications: list[Application] = []
    interviews: list[Interview] = []
    scorecards: list[Scorecard] = []
    offers: list[Offer] = []
    turns: dict[str, int] = {}  # per stage, how many applications are in it so far
    for planned in staff.candidates:
        job = jobs[planned.requisition_id]
        plan_job = staff.job(planned.requisition_id)
        applied = date.fromisoformat(planned.applied_on)
        candidate = Candidate(
            id=ctx.new_id("cand"), first_name=planned.first_name, last_name=planned.last_name, name=planned.name,
            email=planned.email, phone=planned.phone, city=planned.city, current_company=planned.current_company,
            current_title=planned.current_title, created_at=_at(applied, rng.randint(7, 21)),
        )
        if job.opened_at and candidate.created_at <= job.opened_at:  # applied the morning the job opened: after it
            candidate = dataclasses.replace(candidate, created_at=_at(applied, 10 + rng.randint(0, 8)))
        applied_at = candidate.created_at  # the application brings the candidate's record with it
        candidates.append(candidate)
        application_id = ctx.new_id("app")
        reached = PIPELINE_STAGES.index(planned.stage)
        panel_pool = [e for e in by_department.get(job.department, []) if e != job.hiring_manager_email] or [job.hiring_manager_email]
        # One interview per stage passed (or reached), spread between the application and today.
        stages = [s for s in INTERVIEW_STAGES if PIPELINE_STAGES.index(s) <= reached]
        span = max(1, (today - applied).days - 1)
        last = applied
        for n, stage in enumerate(stages):
            current = PIPELINE_STAGES.index(stage) == reached and planned.status == "active"
            # Where the current stage stands, in turn: scored well, coming up, a split panel, awaiting feedback.
            scene = _SCENES[turns.get(stage, 0) % len(_SCENES)] if current else "passed"
            if current:
                turns[stage] = turns.get(stage, 0) + 1
            upcoming = scene == "upcoming"
            if upcoming:
                when = _weekday(today + timedelta(days=rng.randint(1, 6)))
            else:  # a working day after the application and before today
                when = min(_weekday(applied + timedelta(days=max(1, span * (n + 1) // (len(stages) + 1)))), _weekday_before(today))
            panel = [job.recruiter_email] if stage == "phone_screen" else rng.sample(panel_pool, min(_PANEL[stage], len(panel_pool)))
            if stage == "final_interview" and job.hiring_manager_email not in panel:
                panel = [job.hiring_manager_email, *panel[:1]]
            hour = rng.choice((9, 10, 11, 13, 14, 15))
            start = _at(when, hour)
            if not upcoming and start <= applied_at:  # applied the same day: interviewed the next working day
                when = _weekday(when + timedelta(days=1))
                start = _at(when, hour)
                if start >= ctx.now_iso:
                    scene, upcoming = "upcoming", True
            end = (datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ") + timedelta(minutes=_LENGTH_MINUTES[stage])).strftime("%Y-%m-%dT%H:%M:%SZ")
            interview = Interview(
                id=ctx.new_id("int"), application_id=application_id, candidate_id=candidate.id, job_id=job.id, stage=stage,
                interviewer_emails=panel, start_at=start, end_at=end,
                location=_ROOM_FALLBACK if stage == "phone_screen" else rng.choice(rooms),
                status="scheduled",
                # Booked a few days ahead, after the application came in and never after now.
                created_at=min(max(applied_at, _at(when - timedelta(days=4), 12)), ctx.iso(ctx.now - timedelta(hours=1))),
            )
            # Scorecards: positive for stages passed; for the current stage as its scene says.
            if scene in ("passed", "positive", "split"):
                failing = planned.status == "rejected" and PIPELINE_STAGES.index(stage) == reached
                for k, email in enumerate(panel):
                    if failing and planned.rejection_reason == "Lacking skills or qualifications":
                        verdict = rng.choice(_NEGATIVE)
                    elif scene == "split" and k == len(panel) - 1:
                        verdict = "no"  # a split panel: a finalist cannot move to the offer stage
                    else:
                        verdict = rng.choice(_POSITIVE)
                    note = words.choice(_GOOD_NOTES if verdict in _POSITIVE else _BAD_NOTES)
                    facts = {"exercise": words.choice(_EXERCISES[stage]), "company": candidate.current_company,
                             "manager": job.hiring_manager_email.split(".")[0].capitalize(), "title": job.title,
                             "next": words.choice(("moving on", "the next stage", "an offer" if stage == "final_interview"
                                                   else "the next round")), "topic": words.choice(_TOPICS)}
                    scorecards.append(Scorecard(
                        id=ctx.new_id("sc"), application_id=application_id, interview_id=interview.id, stage=stage,
                        interviewer_email=email, recommendation=verdict,
                        notes=write(words, f"{note} {words.choice(_NOTE_TAILS)}", facts),
                        submitted_at=_at(when, min(hour + 3, 18)),
                    ))
                interview = dataclasses.replace(interview, status="completed")
            interviews.append(interview)
            if not upcoming:
                last = max(last, when)
        rejected_at = None
        if planned.status == "rejected":
            rejected_at = _at(min(today - timedelta(days=1), last + timedelta(days=2)), 16)
        hired_at = None
        if planned.status == "hired":
            hire = hires[planned.email]
            accepted = min(today - timedelta(days=1), date.fromisoformat(hire.hire_date) - timedelta(days=21))
            offers.append(Offer(
                id=ctx.new_id("off"), application_id=application_id, candidate_id=candidate.id, job_id=job.id,
                status="accepted", salary=round((plan_job.salary_min + plan_job.salary_max) / 2 / 1000) * 1000.0,
                currency=world.currency, start_date=hire.hire_date, created_by_email=job.recruiter_email,
                created_at=_at(accepted - timedelta(days=3), 11), resolved_at=_at(accepted, 15),
            ))
            hired_at = _at(accepted, 16)
            jobs[planned.requisition_id] = dataclasses.replace(job, closed_at=_at(accepted, 17))
        elif planned.stage == "offer" and planned.status == "active" and job.approval_status == "approved" and rng.random() < 0.5:
            offers.append(Offer(
                id=ctx.new_id("off"), application_id=application_id, candidate_id=candidate.id, job_id=job.id,
                status="extended", salary=round((plan_job.salary_min * 0.4 + plan_job.salary_max * 0.6) / 500) * 500.0,
                currency=world.currency, start_date=(today + timedelta(days=rng.randint(21, 45))).isoformat(),
                created_by_email=job.recruiter_email,
                # Made after the last interview of the application (and its arrival), before now.
                created_at=min(max(_at(today - timedelta(days=rng.randint(1, 4)), 11), _at(last, 17), applied_at),
                               ctx.iso(ctx.now - timedelta(minutes=30))),
            ))
        letter = words.choice(_COVER_LETTERS)
        applications.append(Application(
            id=application_id, candidate_id=candidate.id, job_id=job.id, stage=planned.stage, status=planned.status,
            source=planned.source, referrer_email=planned.referrer_email,
            cover_letter=write(words, letter, {
                "home": world.home.name, "title": job.title, "company": candidate.current_company,
                "current": candidate.current_title, "years": words.randint(3, 12),
                "start_month": (today + timedelta(days=words.randint(30, 75))).strftime("%B")}) if letter else None,
            applied_at=applied_at if rng.randint(7, 21) else applied_at,
            last_activity_at=max(applied_at, min(_at(last, 17), ctx.iso(ctx.now - timedelta(hours=1)))),
            rejection_reason_id=reasons[planned.rejection_reason].id if planned.rejection_reason else None,
            rejection_notes=write(words, _REJECTION_NOTES, {"first": candidate.first_name, "title": job.title})
            if planned.rejection_reason else None,
            rejected_at=rejected_at, hired_at=hired_at,
        ))
    ctx.insert_many(list(jobs.values()))
    ctx.insert_many(candidates)
    ctx.insert_many(applications)
    ctx.insert_many(interviews)
    ctx.insert_many(scorecards)
    ctx.insert_many(offers)


# -- jobs ------------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check the open jobs", "find the {query} opening"))
def list_jobs(
    ctx: ToolContext,
    query: str | None = None,
    department: str | None = None,
    status: JobStatus | None = None,
    approval_status: ApprovalStatus | None = None,
    hiring_manager_email: EmailAddress | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Job]:
    """List job openings by title, requisition number, department, status, approval or hiring manager.

    Args:
        query: Words to match against the title, requisition number or department.
        department: Only jobs of this department, e.g. Engineering.
        status: draft, open or closed.
        approval_status: pending or approved (offers need an approved job).
        hiring_manager_email: Only jobs this colleague hires for.
        limit: Maximum number of jobs to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Job).search(query).filter(status=status, approval_status=approval_status)
    if department and department.strip():
        q.where_sql("lower(department) = lower(?)", department.strip())
    if hiring_manager_email:
        q.where(hiring_manager_email=hiring_manager_email.strip().lower())
    return q.order_by("title").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the job {job_id}",))
def get_job(ctx: ToolContext, job_id: JobId) -> Job:
    """Get one job with its salary range, openings, hiring manager, recruiter, approver and approval status.

    Args:
        job_id: The job's id, e.g. job_0003 (see list_jobs).
    """
    return ctx.get(Job, job_id)


@service.tool("write", intent="approve", phrases=("approve the job {job_id}", "give {job_id} its official approval"))
def approve_job(ctx: ToolContext, job_id: JobId) -> Job:
    """Give a job its official approval, which offers need. Only the job's approver can, and only while it is pending.

    Args:
        job_id: The job to approve.
    """
    job = ctx.get(Job, job_id)
    if job.approval_status == "approved":
        raise ToolError.invalid_state(f"Job {job_id} ({job.title}) is already approved.")
    if job.status == "closed":
        raise ToolError.invalid_state(f"Job {job_id} ({job.title}) is closed; closed jobs are not approved.")
    if job.approver_email != ctx.world.user.email:
        approver = ctx.find(User, email=job.approver_email)
        who = f"{approver.name} ({approver.email})" if approver else job.approver_email
        raise ToolError.permission_denied(f"Only {who}, the approver of {job.title}, can approve it; ask them.")
    return ctx.update(job, approval_status="approved", approved_at=ctx.now_iso)


@service.tool("read", intent="check", phrases=("check our hiring rules", "look up what an offer needs"))
def get_hiring_rules(ctx: ToolContext) -> HiringRules:
    """The hiring rules every job follows: the stages, when an application may advance, and what an offer needs."""
    return HiringRules(
        rules=staff_plan(ctx.world).hiring_rules,
        stages=list(get_args(Stage)),
        offer_needs=["job approval_status approved", "job status open", "application in the offer stage",
                     "salary within the job's salary range", "no other offer extended or accepted"],
    )


@service.tool("read", intent="find", phrases=("find {query} among the hiring team", "check who can interview for {department}"))
def list_users(
    ctx: ToolContext, query: str | None = None, department: str | None = None, limit: Limit = 50, cursor: Cursor = None
) -> Page[User]:
    """List the colleagues who use recruiting (possible interviewers, hiring managers, the recruiter).

    Args:
        query: Words to match against the name, email, title or department.
        department: Only users of this department.
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(User).search(query)
    if department and department.strip():
        q.where_sql("lower(department) = lower(?)", department.strip())
    return q.order_by("name").page(limit, cursor)


# -- candidates ------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up among the candidates", "find the candidates for {job_id}"))
def search_candidates(
    ctx: ToolContext, query: str | None = None, job_id: JobId | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[Candidate]:
    """Search candidates by name, email, current company or title, optionally those who applied to one job.

    Args:
        query: Words to match against the name, email, current company or current title.
        job_id: Only candidates with an application to this job.
        limit: Maximum number of candidates to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Candidate).search(query)
    if job_id is not None:
        q.where_sql("id IN (SELECT candidate_id FROM applications WHERE job_id = ?)", job_id)
    return q.order_by("last_name", "first_name").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the candidate {candidate_id}",))
def get_candidate(ctx: ToolContext, candidate_id: CandidateId) -> Candidate:
    """Get one candidate with their contact details and application ids.

    Args:
        candidate_id: The candidate's id, e.g. cand_0012.
    """
    return ctx.get(Candidate, candidate_id)


@service.tool(
    "write",
    intent="create",
    phrases=("add {first_name} {last_name} as a candidate for {job_id}", "put {first_name} {last_name} in the pipeline for {job_id}"),
)
def add_candidate(
    ctx: ToolContext,
    first_name: str,
    last_name: str,
    email: EmailAddress,
    job_id: JobId,
    source: Source = "Careers page",
    referrer_email: EmailAddress | None = None,
    phone: PhoneNumber | None = None,
    current_company: CompanyName | None = None,
    current_title: JobTitle | None = None,
) -> Application:
    """Add a new candidate with an application to an open job (in application review). Returns the application.

    Args:
        first_name: Given name.
        last_name: Family name.
        email: The candidate's email (unique; for someone already in the system use add_application).
        job_id: The open job they apply for.
        source: Where they came from: Careers page, LinkedIn, Referral, Indeed or Agency.
        referrer_email: For a referral, the colleague who referred them.
        phone: Phone number in E.164 form.
        current_company: Where they work now.
        current_title: Their current job title.
    """
    if ctx.exists(Candidate, email=email.strip().lower()):
        raise ToolError.conflict(f"A candidate with email {email} exists; use search_candidates and add_application.")
    candidate = _new_candidate(ctx, first_name, last_name, email, phone, current_company, current_title)
    return _new_application(ctx, candidate, job_id, source, referrer_email, None)


@service.tool("write", intent="create", phrases=("put {candidate_id} forward for {job_id} too",))
def add_application(
    ctx: ToolContext, candidate_id: CandidateId, job_id: JobId, source: Source = "Careers page",
    referrer_email: EmailAddress | None = None,
) -> Application:
    """Add an application for an existing candidate to another open job.

    Args:
        candidate_id: The candidate.
        job_id: The open job.
        source: Careers page, LinkedIn, Referral, Indeed or Agency.
        referrer_email: For a referral, the colleague who referred them.
    """
    return _new_application(ctx, ctx.get(Candidate, candidate_id), job_id, source, referrer_email, None)


@service.event("application_received")
def application_received(
    ctx: ToolContext,
    first_name: str,
    last_name: str,
    email: str,
    requisition_id: str,
    source: str = "Careers page",
    cover_letter: str | None = None,
    phone: str | None = None,
    current_company: str | None = None,
    current_title: str | None = None,
    referrer_email: str | None = None,
    hours_ago: float = 1.0,
) -> str:
    """Someone applies on the careers page ``hours_ago`` (a task's trigger): an application in review for the job
    with this requisition number, and a new candidate for an unknown email. Returns the application's id."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    at = ctx.days_from_now(-hours_ago / 24)
    if source not in get_args(Source):
        raise ToolError.invalid_argument(f"source {source!r} is not one of {', '.join(get_args(Source))}.")
    job = ctx.find(Job, requisition_id=requisition_id)
    if job is None:
        raise ToolError.not_found("job", requisition_id, "Pass a requisition number list_jobs shows.")
    candidate = ctx.find(Candidate, email=email.strip().lower())
    if candidate is None:
        candidate = _new_candidate(ctx, first_name, last_name, email, phone, current_company, current_title, at)
    return _new_application(ctx, candidate, job.id, source, referrer_email, cover_letter, at).id


@service.tool("write", intent="note", phrases=("note on {candidate_id}: {body}", "add a note to {candidate_id} saying {body}"))
def add_candidate_note(ctx: ToolContext, candidate_id: CandidateId, body: Text) -> Note:
    """Add a note to a candidate's activity feed (what they said on a call, availability, expectations).

    Args:
        candidate_id: The candidate.
        body: The note's text.
    """
    if not body.strip():
        raise ToolError.invalid_argument("body must not be empty.")
    candidate = ctx.get(Candidate, candidate_id)
    return ctx.insert(Note(id=ctx.new_id("note"), candidate_id=candidate.id, body=body.strip(),
                           author_email=ctx.world.user.email, created_at=ctx.now_iso))


@service.tool("read", intent="find", phrases=("read the notes on {candidate_id}",))
def list_candidate_notes(ctx: ToolContext, candidate_id: CandidateId, limit: Limit = 20, cursor: Cursor = None) -> Page[Note]:
    """List the notes on a candidate, newest first.

    Args:
        candidate_id: The candidate.
        limit: Maximum number of notes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    candidate = ctx.get(Candidate, candidate_id)
    return ctx.query(Note).where(candidate_id=candidate.id).order_by("-created_at").page(limit, cursor)


# -- applications ----------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("check the applications for {job_id}", "see who is in the {stage} stage for {job_id}"),
)
def list_applications(
    ctx: ToolContext,
    job_id: JobId | None = None,
    candidate_id: CandidateId | None = None,
    stage: Stage | None = None,
    status: ApplicationStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Application]:
    """List applications by job, candidate, stage or status, most recent activity first.

    Args:
        job_id: Only applications to this job.
        candidate_id: Only this candidate's applications.
        stage: application_review, phone_screen, skills_interview, final_interview or offer.
        status: active, rejected or hired.
        limit: Maximum number of applications to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Application).filter(job_id=job_id, candidate_id=candidate_id, stage=stage, status=status)
    return q.order_by("-last_activity_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the application {application_id}",))
def get_application(ctx: ToolContext, application_id: ApplicationId) -> Application:
    """Get one application: its job, stage, status, source, cover letter and rejection.

    Args:
        application_id: The application's id, e.g. app_0021.
    """
    return ctx.get(Application, application_id, hint=_APPLICATION_HINT)


@service.tool(
    "write",
    intent="transition",
    phrases=("move {application_id} on from {from_stage}", "advance {application_id} to the next stage"),
)
def advance_application(ctx: ToolContext, application_id: ApplicationId, from_stage: Stage) -> Application:
    """Advance an active application to the next stage. Pass the stage it is in now (a stale view is refused).
    Into the offer stage only when the final interview's scorecards recommend hiring: at least one yes or strong yes,
    and no no or definitely not. Scheduled interviews of the stage it leaves are cancelled.

    Args:
        application_id: The application.
        from_stage: The stage the application is in now.
    """
    application = _active(ctx, application_id)
    if application.stage != from_stage:
        raise ToolError.invalid_state(f"Application {application_id} is in {application.stage}, not {from_stage}.")
    position = PIPELINE_STAGES.index(application.stage)
    if position == len(PIPELINE_STAGES) - 1:
        raise ToolError.invalid_state(
            f"Application {application_id} is in the offer stage, the last one; make an offer with create_offer."
        )
    target = PIPELINE_STAGES[position + 1]
    if target == "offer":
        why = _final_verdict(ctx, application)
        if why is not None:
            raise ToolError.permission_denied(
                f"Application {application_id} cannot move to the offer stage: {why}. Reject it with a reason or "
                "get the final interview's scorecards."
            )
    for interview in ctx.query(Interview).where(application_id=application.id, status="scheduled").all():
        if interview.start_at > ctx.now_iso:
            ctx.update(interview, status="cancelled", cancel_reason=f"Candidate moved on to {target}.")
    return _touch(ctx, application, stage=target)


@service.tool(
    "write",
    intent="reject",
    phrases=("reject {application_id} because {rejection_reason_id}", "turn down {application_id}"),
)
def reject_application(
    ctx: ToolContext, application_id: ApplicationId, rejection_reason_id: RejectionReasonId, notes: Text | None = None
) -> Application:
    """Reject an active application with a reason (see list_rejection_reasons). Its upcoming interviews are cancelled
    and an extended offer is withdrawn.

    Args:
        application_id: The application.
        rejection_reason_id: Why, e.g. rr_0001.
        notes: What to tell the team about the decision.
    """
    application = _active(ctx, application_id)
    reason = ctx.get(RejectionReason, rejection_reason_id)
    for interview in ctx.query(Interview).where(application_id=application.id, status="scheduled").all():
        if interview.start_at > ctx.now_iso:
            ctx.update(interview, status="cancelled", cancel_reason="Application rejected.")
    for offer in ctx.query(Offer).where(application_id=application.id, status="extended").all():
        ctx.update(offer, status="withdrawn", resolved_at=ctx.now_iso)
    return _touch(ctx, application, status="rejected", rejection_reason_id=reason.id, rejected_at=ctx.now_iso,
                  rejection_notes=notes.strip() if notes and notes.strip() else None)


@service.tool("write", intent="reopen", phrases=("bring {application_id} back into the pipeline",))
def unreject_application(ctx: ToolContext, application_id: ApplicationId) -> Application:
    """Bring a rejected application back, active in the stage it was rejected from.

    Args:
        application_id: The rejected application.
    """
    application = ctx.get(Application, application_id, hint=_APPLICATION_HINT)
    if application.status != "rejected":
        raise ToolError.invalid_state(f"Application {application_id} is {application.status}, not rejected.")
    job = ctx.get(Job, application.job_id)
    if job.status == "closed":
        raise ToolError.invalid_state(f"Job {job.id} ({job.title}) is closed; its applications cannot come back.")
    if ctx.exists(Application, candidate_id=application.candidate_id, job_id=job.id, status="active"):
        raise ToolError.conflict("The candidate already has another active application for this job.")
    return _touch(ctx, application, status="active", rejection_reason_id=None, rejection_notes=None, rejected_at=None)


@service.tool("read", intent="find", phrases=("check the rejection reasons",))
def list_rejection_reasons(ctx: ToolContext) -> list[RejectionReason]:
    """The reasons an application can be rejected for: ones we give, and ones for candidates who withdrew."""
    return ctx.query(RejectionReason).order_by("id").all()


# -- interviews and scorecards ---------------------------------------------------------------------


@service.tool(
    "write",
    intent="schedule",
    phrases=("set up the {application_id} interview for {start_at} with {interviewer_emails}",
             "book an interview for {application_id} at {start_at}"),
)
def schedule_interview(
    ctx: ToolContext,
    application_id: ApplicationId,
    start_at: DateTime,
    end_at: DateTime,
    interviewer_emails: list[EmailAddress],
    location: ShortText = "Video call",
) -> Interview:
    """Schedule an interview for an active application's current stage (phone screen, skills or final interview).

    Args:
        application_id: The application.
        start_at: When it starts (UTC), in the future.
        end_at: When it ends (UTC), at most 4 hours after the start.
        interviewer_emails: The panel: 1 to 5 recruiting users (see list_users).
        location: A meeting room, or Video call.
    """
    application = _active(ctx, application_id)
    if application.stage not in INTERVIEW_STAGES:
        raise ToolError.invalid_state(
            f"Application {application_id} is in {application.stage}, which has no interview; advance it first."
        )
    if start_at <= ctx.now_iso:
        raise ToolError.invalid_argument(f"start_at {start_at} is not in the future (it is now {ctx.now_iso}).")
    start = datetime.fromisoformat(start_at.replace("Z", "+00:00"))
    end = datetime.fromisoformat(end_at.replace("Z", "+00:00"))
    if not timedelta(0) < end - start <= timedelta(hours=4):
        raise ToolError.invalid_argument("end_at must come after start_at, at most 4 hours later.")
    if not 1 <= len(interviewer_emails) <= 5:
        raise ToolError.invalid_argument("Pass 1 to 5 interviewer_emails.")
    panel: list[str] = []
    for email in interviewer_emails:
        address = _user(ctx, email, "an interviewer").email
        if address not in panel:
            panel.append(address)
    if not location.strip():
        raise ToolError.invalid_argument("location must not be empty: a meeting room, or Video call.")
    interview = ctx.insert(Interview(
        id=ctx.new_id("int"), application_id=application.id, candidate_id=application.candidate_id,
        job_id=application.job_id, stage=application.stage, interviewer_emails=panel,
        start_at=ctx.iso(start), end_at=ctx.iso(end), location=location.strip(), status="scheduled",
        created_at=ctx.now_iso,
    ))
    _touch(ctx, application)
    return interview


@service.tool(
    "read",
    intent="find",
    phrases=("check the interviews of {application_id}", "see which interviews {interviewer_email} has coming up"),
)
def list_interviews(
    ctx: ToolContext,
    application_id: ApplicationId | None = None,
    interviewer_email: EmailAddress | None = None,
    status: InterviewStatus | None = None,
    starts_after: DateTime | None = None,
    starts_before: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Interview]:
    """List interviews, earliest first, by application, interviewer, status or time.

    Args:
        application_id: Only this application's interviews.
        interviewer_email: Only interviews with this colleague on the panel.
        status: scheduled, completed or cancelled.
        starts_after: Only interviews starting at or after this time (UTC).
        starts_before: Only interviews starting before this time (UTC).
        limit: Maximum number of interviews to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Interview).filter(application_id=application_id, status=status)
    if interviewer_email:
        # The panel is stored as a JSON list of addresses; match one whole quoted address.
        q.where_sql("interviewer_emails LIKE ? ESCAPE '\\'", like_pattern(f'"{interviewer_email.strip().lower()}"'))
    q.compare("start_at", ">=", starts_after).compare("start_at", "<", starts_before)
    return q.order_by("start_at").page(limit, cursor)


@service.tool("write", intent="cancel", phrases=("cancel the interview {interview_id}",))
def cancel_interview(ctx: ToolContext, interview_id: InterviewId, reason: ShortText) -> Interview:
    """Cancel an upcoming interview, with the reason.

    Args:
        interview_id: The scheduled interview.
        reason: Why it is cancelled (e.g. the candidate asked to reschedule).
    """
    interview = ctx.get(Interview, interview_id)
    if interview.status != "scheduled":
        raise ToolError.invalid_state(f"Interview {interview_id} is {interview.status}; only scheduled ones can be cancelled.")
    if interview.start_at <= ctx.now_iso:
        raise ToolError.invalid_state(f"Interview {interview_id} took place on {interview.start_at}; submit scorecards instead.")
    if not reason.strip():
        raise ToolError.invalid_argument("reason must not be empty.")
    return ctx.update(interview, status="cancelled", cancel_reason=reason.strip())


@service.tool(
    "write",
    intent="submit",
    phrases=("record {interviewer_email}'s feedback on {interview_id}: {recommendation}",),
)
def submit_scorecard(
    ctx: ToolContext, interview_id: InterviewId, interviewer_email: EmailAddress, recommendation: Recommendation, notes: Text
) -> Scorecard:
    """Submit an interviewer's scorecard for an interview that has taken place; the interview is then completed.
    One scorecard per interviewer per interview.

    Args:
        interview_id: The interview.
        interviewer_email: The panel member the feedback is from.
        recommendation: definitely_not, no, yes or strong_yes.
        notes: What the recommendation rests on.
    """
    return _scorecard(ctx, interview_id, interviewer_email, recommendation, notes)


@service.tool("read", intent="find", phrases=("read the scorecards of {application_id}",))
def list_scorecards(
    ctx: ToolContext, application_id: ApplicationId, stage: Stage | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[Scorecard]:
    """List an application's scorecards, in the order they were submitted.

    Args:
        application_id: The application.
        stage: Only scorecards of this interview stage.
        limit: Maximum number of scorecards to return (1-100).
        cursor: next_cursor from a previous page.
    """
    application = ctx.get(Application, application_id, hint=_APPLICATION_HINT)
    q = ctx.query(Scorecard).where(application_id=application.id).filter(stage=stage)
    return q.order_by("submitted_at").page(limit, cursor)


# -- offers and hires ------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="send",
    phrases=("make {application_id} an offer of {salary} starting {start_date}", "extend an offer to {application_id}"),
)
def create_offer(
    ctx: ToolContext, application_id: ApplicationId, salary: Money, start_date: Date, notes: Text | None = None
) -> Offer:
    """Extend an offer. It needs the job's official approval (approval_status approved), an open job, the application
    in the offer stage, a yearly salary within the job's range and a start date in the future; one offer at a time.

    Args:
        application_id: The application in the offer stage.
        salary: Yearly base salary in the job's currency.
        start_date: The proposed first day (YYYY-MM-DD).
        notes: Terms to note on the offer (signing bonus, relocation).
    """
    application = _active(ctx, application_id)
    job = _offerable(ctx, application, salary, start_date)
    offer = ctx.insert(Offer(
        id=ctx.new_id("off"), application_id=application.id, candidate_id=application.candidate_id, job_id=job.id,
        status="extended", salary=round(salary, 2), currency=job.currency, start_date=start_date,
        notes=notes.strip() if notes and notes.strip() else None, created_by_email=ctx.world.user.email,
        created_at=ctx.now_iso,
    ))
    _touch(ctx, application)
    return offer


@service.event("offer_extended")
def offer_extended(
    ctx: ToolContext, application_id: str, salary: float, start_date: str, notes: str | None = None, hours_ago: float = 48.0
) -> str:
    """The job's recruiter extended an offer ``hours_ago`` (what a candidate then answers: a task's trigger), under the
    rules create_offer applies. Only the offer is added. Returns the offer's id."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    application = _active(ctx, application_id)
    job = _offerable(ctx, application, salary, start_date)
    offer = ctx.insert(Offer(
        id=ctx.new_id("off"), application_id=application.id, candidate_id=application.candidate_id, job_id=job.id,
        status="extended", salary=round(salary, 2), currency=job.currency, start_date=start_date,
        notes=notes.strip() if notes and notes.strip() else None, created_by_email=job.recruiter_email,
        created_at=ctx.days_from_now(-hours_ago / 24),
    ))
    return offer.id


@service.tool("read", intent="find", phrases=("check the offers for {job_id}", "see which offers are still out"))
def list_offers(
    ctx: ToolContext,
    job_id: JobId | None = None,
    application_id: ApplicationId | None = None,
    status: OfferStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Offer]:
    """List offers, newest first, by job, application or status.

    Args:
        job_id: Only offers for this job.
        application_id: Only offers on this application.
        status: extended, accepted, declined or withdrawn.
        limit: Maximum number of offers to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Offer).filter(job_id=job_id, application_id=application_id, status=status)
    return q.order_by("-created_at").page(limit, cursor)


@service.tool(
    "write",
    intent="update",
    phrases=("record that {offer_id} was {response}", "mark {offer_id} as {response}"),
)
def record_offer_response(ctx: ToolContext, offer_id: OfferId, response: OfferResponse, notes: Text | None = None) -> Offer:
    """Record the candidate's answer to an extended offer: accepted or declined.

    Args:
        offer_id: The extended offer.
        response: accepted or declined.
        notes: What the candidate said (e.g. why they declined).
    """
    offer = ctx.get(Offer, offer_id)
    if offer.status != "extended":
        raise ToolError.invalid_state(f"Offer {offer_id} is {offer.status}; only an extended offer takes an answer.")
    return ctx.update(offer, status=response, resolved_at=ctx.now_iso,
                      response_notes=notes.strip() if notes and notes.strip() else None)


@service.tool("write", intent="transition", phrases=("hire {application_id}", "mark {application_id} as hired"))
def hire_application(ctx: ToolContext, application_id: ApplicationId) -> Application:
    """Mark an application hired once its offer is accepted. It fills one of the job's openings; the job closes when
    none is left (its other applications stay as they are: reject them with a reason).

    Args:
        application_id: The application whose offer was accepted.
    """
    application = _active(ctx, application_id)
    if not ctx.exists(Offer, application_id=application.id, status="accepted"):
        raise ToolError.invalid_state(
            f"Application {application_id} has no accepted offer; record the candidate's acceptance first."
        )
    job = ctx.get(Job, application.job_id)
    left = max(0, job.openings - 1)
    ctx.update(job, openings=left, **({"status": "closed", "closed_at": ctx.now_iso} if left == 0 else {}))
    return _touch(ctx, application, status="hired", hired_at=ctx.now_iso)

