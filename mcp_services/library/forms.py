"""Forms: forms with their questions, and the responses people submit (modelled on Typeform / Google Forms).

The company's public forms: Contact us, Request a demo, the Refund request form, a registration form per
customer event (whose responses agree with the event's guest list in ``sheets``, both from
``mcp_services.kernel.plans.policies``) and a satisfaction survey. Each question has a ``ref`` (a short
key, as Typeform's field refs) and a type; a response holds its answers by ref, with the respondent's
email when the form asks for one.

Rules, as the products have them: a closed form takes no responses; a response must answer every
required question, with a value of the question's type (an email for email, one of the choices for a
choice, a real date for a date, 1 to 5 for a rating); a question that has answers cannot be deleted.
``response_submitted`` is the world event of a person filling in a form.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.plans.policies import policy_plan
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.semantic import URL, DateTime, EmailAddress, EntityId, PersonName, ShortText, Subject, Text

FormId = EntityId("forms.form")
QuestionId = EntityId("forms.question")
ResponseId = EntityId("forms.response")

FormStatus = Literal["open", "closed"]
QuestionType = Literal[
    "short_text", "long_text", "email", "phone_number", "number", "date", "multiple_choice", "yes_no", "rating"
]
Ref = Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[a-z][a-z0-9_]*$")]
Answer = str | int | float | bool
#: What a caller passes as an answer: text for most questions, a number for number and rating, true/false for yes_no.
AnswerIn = Annotated[str, Field(max_length=5000)] | int | float | bool

service = Service(
    "forms",
    "Online forms and their responses: contact, demo request, refund request and event registration forms; "
    "find, read and filter what people submitted.",
    title="Forms",
)


def _response_counts(db: RecordAccess, forms: Sequence[Form]) -> list[int]:
    counts = dict(db.sql("SELECT form_id, COUNT(*) FROM responses GROUP BY 1"))
    return [int(counts.get(f.id, 0)) for f in forms]


@service.entity(
    table="forms",
    prefix="fm",
    label="title",
    search=("title", "description"),
    state=StateDef(
        field="status", values=["open", "closed"], initial="open", transitions={"open": ["closed"], "closed": ["open"]}
    ),
)
class Form:
    """A form people fill in."""

    id: FormId
    title: Subject = field(index=True)
    description: Text
    status: FormStatus
    owner_email: EmailAddress = field(role="owner")
    public_url: URL = field(mention="the form's link")
    created_at: DateTime
    updated_at: DateTime

    response_count = derived(int, batch=_response_counts, description="Responses submitted so far")


@service.entity(table="questions", prefix="fq", label="title", search=("title",))
class Question:
    """A question of a form, in order."""

    id: QuestionId
    form_id: FormId = field(index=True)
    ref: str
    title: str
    type: QuestionType
    required: bool
    choices: list[str]
    position: int


@service.entity(table="responses", prefix="rsp", search=("respondent_name", "respondent_email", "answers_text"))
class Response:
    """What one person submitted: their answers by question ref."""

    id: ResponseId = field(mention="the response id")
    form_id: FormId = field(index=True)
    respondent_email: EmailAddress | None = field(None, index=True, role="respondent")
    respondent_name: PersonName | None = field(None, role="respondent")
    answers: dict[str, Answer]
    answers_text: str = field(description="Every answer as text, for search")
    submitted_at: DateTime = field(index=True)

    form_title = joined(str, via="form_id", field="title")


class ChoiceCount(BaseModel):
    choice: str
    count: int


class QuestionSummary(BaseModel):
    ref: str
    title: str
    type: str
    answered: int
    choices: list[ChoiceCount] = Field(
        default_factory=list, description="For choice and yes/no questions: answers per choice"
    )
    average: float | None = Field(None, description="For rating and number questions: the mean answer")


class FormSummary(BaseModel):
    """How a form's responses add up, question by question."""

    form_id: str
    title: str
    responses: int
    questions: list[QuestionSummary]


# -- rules shared by the tools -------------------------------------------------------------------

_FORM_HINT = "Use list_forms to find form ids."
_RESPONSE_HINT = "Use list_responses or search_responses to find response ids."
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE = re.compile(r"^\+[1-9][0-9]{6,14}$")
_CHOICE_TYPES = ("multiple_choice", "yes_no")


def _form(ctx: ToolContext, form_id: str) -> Form:
    return ctx.get(Form, form_id, hint=_FORM_HINT)


def _questions(ctx: ToolContext, form: Form) -> list[Question]:
    return ctx.query(Question).where(form_id=form.id).order_by("position").all()


def _answer(question: Question, value: Any) -> Answer:
    """``value`` as an answer to ``question``, or an error that says what the question takes."""
    where = f"Question {question.ref!r} ({question.title})"
    kind = question.type
    if kind == "yes_no":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
            return value.strip().lower() == "yes"
        raise ToolError.invalid_argument(f"{where} takes true or false (yes or no).")
    if kind in ("number", "rating"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ToolError.invalid_argument(f"{where} takes a number.")
        if kind == "rating" and (not float(value).is_integer() or not 1 <= value <= 5):
            raise ToolError.invalid_argument(f"{where} takes a whole rating from 1 to 5.")
        return int(value) if kind == "rating" else value
    if not isinstance(value, str) or isinstance(value, bool):
        raise ToolError.invalid_argument(f"{where} takes text.")
    text = value.strip() if kind == "long_text" else " ".join(value.split())
    if not text:
        raise ToolError.invalid_argument(f"{where}: the answer is blank; leave the question out instead.")
    if kind == "email":
        if not _EMAIL.match(text):
            raise ToolError.invalid_argument(f"{where} takes an email address.")
        return text.lower()
    if kind == "phone_number" and not _PHONE.match(text):
        raise ToolError.invalid_argument(f"{where} takes a phone number in E.164 form, e.g. +14155550123.")
    if kind == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            raise ToolError.invalid_argument(f"{where} takes a date (YYYY-MM-DD).") from None
    if kind == "multiple_choice":
        for choice in question.choices:
            if choice.casefold() == text.casefold():
                return choice
        raise ToolError.invalid_argument(f"{where} takes one of: {', '.join(question.choices)}.")
    return text


def _checked_answers(ctx: ToolContext, form: Form, answers: Mapping[str, Any]) -> dict[str, Answer]:
    questions = {q.ref: q for q in _questions(ctx, form)}
    unknown = [ref for ref in answers if ref not in questions]
    if unknown:
        raise ToolError.invalid_argument(
            f"Form {form.title!r} has no question {unknown[0][:40]!r}; its question refs: {', '.join(questions)}."
        )
    checked = {ref: _answer(questions[ref], value) for ref, value in answers.items()}
    missing = [q for q in questions.values() if q.required and q.ref not in checked]
    if missing:
        raise ToolError.invalid_argument(
            f"Required questions not answered: {', '.join(f'{q.ref} ({q.title})' for q in missing)}."
        )
    return {q.ref: checked[q.ref] for q in questions.values() if q.ref in checked}


def _text_of(answers: Mapping[str, Answer]) -> str:
    return " | ".join(("yes" if v else "no") if isinstance(v, bool) else str(v) for v in answers.values())


def _respondent(ctx: ToolContext, form: Form, answers: Mapping[str, Answer]) -> tuple[str | None, str | None]:
    """The respondent's email and name, from the form's email question and its name question(s)."""
    questions = _questions(ctx, form)
    email = next((str(answers[q.ref]) for q in questions if q.type == "email" and q.ref in answers), None)
    first = answers.get("first_name")
    last = answers.get("last_name")
    name = answers.get("full_name") or (f"{first} {last}" if first and last else None)
    return email, str(name) if name else None


def _insert_response(ctx: ToolContext, form: Form, answers: dict[str, Answer], at: str) -> Response:
    email, name = _respondent(ctx, form, answers)
    return ctx.insert(
        Response(
            id=ctx.new_id("rsp"),
            form_id=form.id,
            respondent_email=email,
            respondent_name=name,
            answers=answers,
            answers_text=_text_of(answers),
            submitted_at=at,
        )
    )


# -- seed ----------------------------------------------------------------------------------------

#: (ref, title, type, required, choices)
QuestionSpec = tuple[str, str, str, bool, tuple[str, ...]]

DEMO_SLOTS = ("09:00 UTC", "11:00 UTC", "14:00 UTC", "16:00 UTC")
CONTACT_TOPICS = ("Billing", "Technical problem", "Account and users", "Orders and shipping", "Something else")
INTERESTS = ("Pro plan", "Enterprise plan", "Priority support", "Data migration", "Security audit", "API usage")

_CONTACT: tuple[QuestionSpec, ...] = (
    ("full_name", "Your name", "short_text", True, ()),
    ("email", "Your email", "email", True, ()),
    ("company", "Company", "short_text", False, ()),
    ("topic", "What is it about?", "multiple_choice", True, CONTACT_TOPICS),
    ("message", "How can we help?", "long_text", True, ()),
)
_DEMO: tuple[QuestionSpec, ...] = (
    ("first_name", "First name", "short_text", True, ()),
    ("last_name", "Last name", "short_text", True, ()),
    ("email", "Work email", "email", True, ()),
    ("company", "Company", "short_text", True, ()),
    ("job_title", "Job title", "short_text", False, ()),
    ("interest", "What would you like to see?", "multiple_choice", True, INTERESTS),
    ("preferred_date", "Preferred date for the demo", "date", True, ()),
    ("preferred_time", "Preferred time", "multiple_choice", True, DEMO_SLOTS),
    ("notes", "Anything we should know?", "long_text", False, ()),
)
_REFUND: tuple[QuestionSpec, ...] = (
    ("full_name", "Your name", "short_text", True, ()),
    ("email", "Email on the account", "email", True, ()),
    ("company", "Company", "short_text", True, ()),
    ("invoice_number", "Invoice or order number", "short_text", True, ()),
    ("amount", "Amount to refund (USD)", "number", True, ()),
    ("reason", "Why are you asking for a refund?", "long_text", True, ()),
)
_REGISTRATION: tuple[QuestionSpec, ...] = (
    ("full_name", "Your name", "short_text", True, ()),
    ("email", "Your email", "email", True, ()),
    ("company", "Company", "short_text", True, ()),
    ("dietary", "Dietary requirements", "short_text", False, ()),
)
_SURVEY: tuple[QuestionSpec, ...] = (
    ("email", "Your email", "email", False, ()),
    ("rating", "How satisfied are you with our support?", "rating", True, ()),
    ("recommend", "Would you recommend us to a colleague?", "yes_no", True, ()),
    ("comment", "What could we do better?", "long_text", False, ()),
)

_CONTACT_MESSAGES = (
    ("Billing", "[Could you send me last month's invoice again?|Please resend our latest invoice.|Can I get a copy of "
     "last month's invoice?] [Our accounts team lost the email.|It never reached our AP inbox.|We need it for the "
     "close.]"),
    ("Technical problem", "The [reports page|dashboard|export screen] has been slow [all week|since Monday|for a few "
     "days]; it takes [a minute|ages|over a minute] to load.[ It slows down {work}.|]"),
    ("Account and users", "We would like to add [three|a few|two] more people to our account[ at {site}|]. [How do "
     "seats work?|What does an extra seat cost?|Is there a discount for more seats?]"),
    ("Orders and shipping", "Our order still shows as processing after a week. [When will it ship?|Is there a "
     "delay?|Can you check on it?][ We need it before {rush}.|]"),
    ("Something else", "[Do you have|Is there] a partner programme for [consultancies|resellers|agencies like "
     "ours]?[ We work with {clients}.|]"),
)
_SURVEY_COMMENTS = (
    "[Faster first replies, please.|Replies could be quicker.|The first answer took too long.][ Otherwise great.|]",
    "[Great help with our invoices.|Billing questions were sorted quickly.|Very helpful on billing.][ Thanks to the "
    "team!|]",
    "[The help center articles could be clearer.|Some help articles are out of date.|The docs need more "
    "screenshots.][ Especially for {work}.|]",
)
_REFUND_REASONS = ("[We were charged for|You billed us for|The invoice includes] {item} after [cancelling|we cancelled|"
                   "our cancellation][.|; please refund it.| last month.]")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The company's forms and their past responses (the event registrations from the policy plan)."""
    world = ctx.world
    plan = policy_plan(world)
    rng = ctx.rng("seed")
    words = ctx.rng("words")  # how people word their answers, apart from who answered what when
    team = {p.job_title: p for p in world.team}
    forms: list[Form] = []
    questions: list[Question] = []
    responses: list[Response] = []
    base = f"https://forms.{world.home.domain}/to"

    def form(
        title: str, about: str, owner: str, specs: Sequence[QuestionSpec], days_ago: int, status: str = "open"
    ) -> Form:
        made = Form(
            id=ctx.new_id("fm"),
            title=title,
            description=about,
            status=status,
            owner_email=team[owner].email,
            public_url=f"{base}/{_slug(title)}",
            created_at=ctx.days_from_now(-days_ago),
            updated_at=ctx.days_from_now(-days_ago + 2),
        )
        forms.append(made)
        for n, (ref, text, kind, required, choices) in enumerate(specs):
            questions.append(
                Question(
                    id=ctx.new_id("fq"),
                    form_id=made.id,
                    ref=ref,
                    title=text,
                    type=kind,
                    required=required,
                    choices=list(choices),
                    position=n,
                )
            )
        return made

    def answered(made: Form, answers: dict[str, Answer], at: str) -> None:
        email = answers.get("email")
        name = answers.get("full_name") or (
            f"{answers['first_name']} {answers['last_name']}" if "first_name" in answers else None
        )
        responses.append(
            Response(
                id="",
                form_id=made.id,
                respondent_email=str(email) if email else None,
                respondent_name=str(name) if name else None,
                answers=answers,
                answers_text=_text_of(answers),
                submitted_at=at,
            )
        )

    def past(low: float, high: float) -> str:
        return ctx.days_from_now(-round(rng.uniform(low, high), 3))

    contact = form(
        "Contact us", "Questions for our team; we answer within one working day.", "support lead", _CONTACT, 600
    )
    demo = form("Request a demo", "See the product with one of our specialists.", "sales lead", _DEMO, 400)
    refund = form(
        "Refund request", "Ask for a refund of a charge; our team reviews every request.", "finance lead", _REFUND, 300
    )
    survey = form("Support satisfaction survey", "Tell us how we did.", "support lead", _SURVEY, 200)
    for event in plan.events:
        registration = form(
            event.form_title,
            f"Join us on {event.day} at {event.venue}. Places are limited.",
            "office manager",
            _REGISTRATION,
            25,
        )
        for r in event.registrations:
            answers: dict[str, Answer] = {"full_name": r.name, "email": r.email, "company": r.company}
            if rng.random() < 0.25:
                answers["dietary"] = rng.choice(("Vegetarian", "Vegan", "No nuts", "Gluten free"))
            answered(registration, answers, r.registered_at)
    form("Holiday party RSVP (last year)", "Our end-of-year party.", "office manager", _REGISTRATION[:3], 320, "closed")

    customers = list(world.customers)
    for _ in range(14):
        person = rng.choice(customers)
        topic, message = rng.choice(_CONTACT_MESSAGES)
        message = write(words, message, industry_facts(words, world.organisation(person.organisation_id).industry))
        answered(
            contact,
            {
                "full_name": person.name,
                "email": person.email,
                "company": world.organisation(person.organisation_id).name,
                "topic": topic,
                "message": message,
            },
            past(2, 120),
        )
    for _ in range(8):
        person = rng.choice(customers)
        when = (world.now_dt - timedelta(days=rng.randint(10, 90))).date().isoformat()
        answered(
            demo,
            {
                "first_name": person.first_name,
                "last_name": person.last_name,
                "email": person.email,
                "company": world.organisation(person.organisation_id).name,
                "job_title": person.job_title,
                "interest": rng.choice(INTERESTS),
                "preferred_date": when,
                "preferred_time": rng.choice(DEMO_SLOTS),
            },
            past(12, 95),
        )
    for _ in range(5):
        person = rng.choice(customers)
        # A refund of one line of a paid invoice of the plan: the requester's company's where one was paid.
        invoice = world.plan.invoice_to_mention(rng, lambda i: i.status == "PAID", person.organisation_id)
        if invoice is None:
            continue
        if invoice.organisation_id != person.organisation_id:
            person = world.plan.billing_contacts[invoice.organisation_id]
        line = invoice.lines[rng.randrange(len(invoice.lines))]
        answered(
            refund,
            {
                "full_name": person.name,
                "email": person.email,
                "company": world.organisation(person.organisation_id).name,
                "invoice_number": invoice.number,
                "amount": line.amount,
                "reason": write(words, _REFUND_REASONS, {"item": line.description}),
            },
            past(5, 60),
        )
    for _ in range(12):
        person = rng.choice(customers)
        answers = {"email": person.email, "rating": rng.choice((3, 4, 4, 5, 5, 2)), "recommend": rng.random() < 0.8}
        if rng.random() < 0.4:
            answers["comment"] = write(words, rng.choice(_SURVEY_COMMENTS),
                                       industry_facts(words, world.organisation(person.organisation_id).industry))
        answered(survey, answers, past(1, 60))
    ctx.insert_many(forms)
    ctx.insert_many(questions)
    # Ids in the order responses came in, as the product numbers them.
    ordered = sorted(responses, key=lambda r: (r.submitted_at, r.form_id))
    ctx.insert_many([dataclasses.replace(r, id=ctx.new_id("rsp")) for r in ordered])


# -- forms ---------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look for the {query} form", "list our forms"))
def list_forms(
    ctx: ToolContext,
    query: str | None = None,
    status: FormStatus | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Form]:
    """List forms by words in their title or description, newest first, with their response counts.

    Args:
        query: Words to find in the title or description (every word must appear, case-insensitive).
        status: Only open forms (taking responses) or closed ones.
        limit: Maximum number of forms to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Form).search(query).filter(status=status).order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the form {form_id}", "check which questions {form_id} asks"))
def get_form(ctx: ToolContext, form_id: FormId) -> Form:
    """Get a form's title, description, status, link and response count (list_questions gives its questions).

    Args:
        form_id: The form's id, e.g. fm_0002 (see list_forms).
    """
    return _form(ctx, form_id)


@service.tool("read", intent="find", phrases=("check the questions of {form_id}", "see what {form_id} asks"))
def list_questions(ctx: ToolContext, form_id: FormId) -> list[Question]:
    """A form's questions in order: each one's ref (the key its answers use), title, type, whether it is required
    and, for multiple choice, its choices.

    Args:
        form_id: The form.
    """
    return _questions(ctx, _form(ctx, form_id))


@service.tool("write", intent="create", phrases=("make a new form called {title}", "set up a form {title}"))
def create_form(ctx: ToolContext, title: Subject, description: Text | None = None) -> Form:
    """Create an open form, owned by you, with no questions yet (add_question adds them).

    Args:
        title: The form's title.
        description: The text shown above the questions.
    """
    clean = " ".join(title.split())
    if not clean:
        raise ToolError.invalid_argument("title must not be empty.")
    form_id = ctx.new_id("fm")
    return ctx.insert(
        Form(
            id=form_id,
            title=clean,
            description=(description or "").strip(),
            status="open",
            owner_email=ctx.world.user.email,
            public_url=f"https://forms.{ctx.world.home.domain}/to/{_slug(clean)}-{form_id.rsplit('_', 1)[-1]}",
            created_at=ctx.now_iso,
            updated_at=ctx.now_iso,
        )
    )


@service.tool(
    "write", intent="update", phrases=("add the question {title} to {form_id}", "put a question {title} on {form_id}")
)
def add_question(
    ctx: ToolContext,
    form_id: FormId,
    ref: Ref,
    title: ShortText,
    type: QuestionType,  # noqa: A002 - Typeform's name
    required: bool = False,
    choices: list[ShortText] | None = None,
) -> Question:
    """Add a question at the end of a form.

    Args:
        form_id: The form.
        ref: A short key for the question's answers, unique in the form (lowercase, e.g. company_size).
        title: The question as people read it.
        type: short_text, long_text, email, phone_number, number, date, multiple_choice, yes_no or rating (1-5).
        required: Whether every response must answer it (only for a form without responses yet).
        choices: For multiple_choice: the choices, at least two, all different.
    """
    form = _form(ctx, form_id)
    existing = _questions(ctx, form)
    if any(q.ref == ref for q in existing):
        raise ToolError.conflict(f"Form {form.title!r} already has a question with ref {ref!r}.")
    if not title.strip():
        raise ToolError.invalid_argument("title must not be empty.")
    options = [" ".join(c.split()) for c in (choices or [])]
    if type == "multiple_choice":
        if len(options) < 2 or any(not c for c in options) or len({c.casefold() for c in options}) != len(options):
            raise ToolError.invalid_argument(
                "A multiple_choice question needs at least two different, non-blank choices."
            )
    elif options:
        raise ToolError.invalid_argument(f"Only multiple_choice questions take choices, not {type}.")
    if required and ctx.exists(Response, form_id=form.id):
        raise ToolError.invalid_state(
            f"Form {form.title!r} already has responses that could not answer a new required question; add it as "
            "optional."
        )
    ctx.update(form, updated_at=ctx.now_iso)
    return ctx.insert(
        Question(
            id=ctx.new_id("fq"),
            form_id=form.id,
            ref=ref,
            title=" ".join(title.split()),
            type=type,
            required=required,
            choices=options,
            position=len(existing),
        )
    )


@service.tool(
    "write",
    intent="delete",
    phrases=("remove the question {question_id}", "take the question {question_id} off the form"),
)
def delete_question(ctx: ToolContext, question_id: QuestionId) -> Question:
    """Delete a question that no response has answered (answers are never thrown away). Returns it as it was.

    Args:
        question_id: The question (see list_questions).
    """
    question = ctx.get(Question, question_id, hint="Use list_questions to find question ids.")
    answered = ctx.query(Response).where(form_id=question.form_id).all()
    if any(question.ref in r.answers for r in answered):
        raise ToolError.invalid_state(
            f"Question {question.ref!r} has answers in existing responses and cannot be deleted; make it optional "
            "instead."
        )
    ctx.delete(question)
    return question


@service.tool("write", intent="update", phrases=("change the form {form_id}", "rename {form_id} to {title}"))
def update_form(
    ctx: ToolContext, form_id: FormId, title: Subject | None = None, description: Text | None = None
) -> Form:
    """Change a form's title or description (its link stays the same).

    Args:
        form_id: The form.
        title: A new title.
        description: A new description.
    """
    form = _form(ctx, form_id)
    changes: dict[str, Any] = {}
    if title is not None:
        if not title.strip():
            raise ToolError.invalid_argument("title must not be empty.")
        changes["title"] = " ".join(title.split())
    if description is not None:
        changes["description"] = description.strip()
    changes = {k: v for k, v in changes.items() if getattr(form, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass a new title or description that differs from the current one.")
    return ctx.update(form, **changes, updated_at=ctx.now_iso)


@service.tool("write", intent="close", phrases=("close the form {form_id}", "stop taking responses on {form_id}"))
def close_form(ctx: ToolContext, form_id: FormId) -> Form:
    """Stop a form taking responses (its responses stay).

    Args:
        form_id: The open form.
    """
    form = _form(ctx, form_id)
    if form.status == "closed":
        raise ToolError.invalid_state(f"Form {form_id} is already closed.")
    return ctx.update(form, status="closed", updated_at=ctx.now_iso)


@service.tool("write", intent="reopen", phrases=("reopen the form {form_id}", "open {form_id} for responses again"))
def reopen_form(ctx: ToolContext, form_id: FormId) -> Form:
    """Let a closed form take responses again.

    Args:
        form_id: The closed form.
    """
    form = _form(ctx, form_id)
    if form.status == "open":
        raise ToolError.invalid_state(f"Form {form_id} is already open.")
    return ctx.update(form, status="open", updated_at=ctx.now_iso)


# -- responses -----------------------------------------------------------------------------------


@service.tool(
    "read", intent="find", phrases=("go through the responses to {form_id}", "check what came in on {form_id}")
)
def list_responses(
    ctx: ToolContext,
    form_id: FormId,
    since: DateTime | None = None,
    until: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Response]:
    """A form's responses, newest first, optionally within a time window.

    Args:
        form_id: The form.
        since: Only responses submitted at or after this time.
        until: Only responses submitted before this time.
        limit: Maximum number of responses to return (1-100).
        cursor: next_cursor from a previous page.
    """
    form = _form(ctx, form_id)
    q = (
        ctx.query(Response)
        .where(form_id=form.id)
        .compare("submitted_at", ">=", since)
        .compare("submitted_at", "<", until)
    )
    return q.order_by("-submitted_at").page(limit, cursor)


@service.tool(
    "read",
    intent="find",
    phrases=("find the form responses from {respondent_email}", "look for responses mentioning {query}"),
)
def search_responses(
    ctx: ToolContext,
    query: str | None = None,
    form_id: FormId | None = None,
    respondent_email: EmailAddress | None = None,
    question_ref: Ref | None = None,
    answer: ShortText | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Response]:
    """Search responses of every form (or one) by words in the answers or the respondent, by respondent email, or by
    the answer to one question; newest first.

    Args:
        query: Words to find in the answers, name or email (every word must appear, case-insensitive).
        form_id: Only responses to this form.
        respondent_email: Only responses from this email address.
        question_ref: With answer: the question to compare (its ref, see list_questions).
        answer: With question_ref: the answer it must have (case-insensitive, whole answer).
        limit: Maximum number of responses to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if (question_ref is None) != (answer is None):
        raise ToolError.invalid_argument("Pass question_ref and answer together (or neither).")
    if form_id is not None:
        _form(ctx, form_id)
    q = ctx.query(Response).search(query).filter(form_id=form_id)
    if respondent_email is not None:
        q.where(respondent_email=respondent_email.strip().lower())
    if question_ref is not None and answer is not None:
        wanted = " ".join(answer.split()).casefold()
        keep = [r.id for r in q.all() if _matches(r.answers.get(question_ref), wanted)]
        q = ctx.query(Response).where_in("id", keep)
    return q.order_by("-submitted_at").page(limit, cursor)


def _matches(value: Answer | None, wanted: str) -> bool:
    if value is None:
        return False
    text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
    return " ".join(text.split()).casefold() == wanted


@service.tool("read", intent="get", phrases=("open the response {response_id}", "read the response {response_id}"))
def get_response(ctx: ToolContext, response_id: ResponseId) -> Response:
    """Get one response with every answer by question ref, who sent it and when.

    Args:
        response_id: The response's id, e.g. rsp_0031.
    """
    return ctx.get(Response, response_id, hint=_RESPONSE_HINT)


@service.tool(
    "write", intent="submit", phrases=("fill in {form_id} for them with {answers}", "submit {form_id} with {answers}")
)
def submit_response(ctx: ToolContext, form_id: FormId, answers: dict[Ref, AnswerIn]) -> Response:
    """Submit a response to an open form on someone's behalf (e.g. they registered by phone).

    Every required question must be answered, each with a value of its type.

    Args:
        form_id: The open form.
        answers: Answers by question ref, e.g. {"full_name": "Ana Ruiz", "email": "ana@brightline.example"}.
    """
    form = _form(ctx, form_id)
    if form.status != "open":
        raise ToolError.invalid_state(f"Form {form.title!r} is closed and takes no responses; reopen_form it first.")
    return _insert_response(ctx, form, _checked_answers(ctx, form, answers), ctx.now_iso)


@service.tool(
    "write",
    intent="delete",
    phrases=("delete the response {response_id}", "remove the response {response_id} from the form"),
)
def delete_response(ctx: ToolContext, response_id: ResponseId) -> Response:
    """Delete a response (spam, a test, a duplicate). Returns it as it was.

    Args:
        response_id: The response to delete.
    """
    response = ctx.get(Response, response_id, hint=_RESPONSE_HINT)
    ctx.delete(response)
    return response


@service.tool(
    "read",
    intent="check",
    phrases=("check how the answers to {form_id} add up", "summarise the responses to {form_id}"),
)
def get_form_summary(ctx: ToolContext, form_id: FormId) -> FormSummary:
    """How a form's responses add up: per question, how many answered it, the count per choice, the mean rating.

    Args:
        form_id: The form.
    """
    form = _form(ctx, form_id)
    responses = ctx.query(Response).where(form_id=form.id).all()
    out = []
    for q in _questions(ctx, form):
        values = [r.answers[q.ref] for r in responses if q.ref in r.answers]
        summary = QuestionSummary(ref=q.ref, title=q.title, type=q.type, answered=len(values))
        if q.type == "multiple_choice":
            summary.choices = [ChoiceCount(choice=c, count=sum(1 for v in values if v == c)) for c in q.choices]
        elif q.type == "yes_no":
            summary.choices = [
                ChoiceCount(choice=c, count=sum(1 for v in values if v is (c == "yes"))) for c in ("yes", "no")
            ]
        elif q.type in ("number", "rating") and values:
            numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            summary.average = round(sum(numbers) / len(numbers), 2) if numbers else None
        out.append(summary)
    return FormSummary(form_id=form.id, title=form.title, responses=len(responses), questions=out)


@service.event("response_submitted")
def response_submitted(ctx: ToolContext, form_title: str, answers: dict[str, Any], hours_ago: float = 1.0) -> str:
    """Someone fills in a form ``hours_ago`` (a task's trigger: a contact form, a demo request, an event registration,
    a refund request). The answers are checked as the form checks them. Returns the response's id.
    """
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    form = ctx.find(Form, title=form_title)
    if form is None:
        raise ToolError.invalid_argument(f"No form is titled {form_title!r}.")
    if form.status != "open":
        raise ToolError.invalid_state(f"Form {form.title!r} is closed and takes no responses.")
    return _insert_response(ctx, form, _checked_answers(ctx, form, answers), ctx.days_from_now(-hours_ago / 24)).id
