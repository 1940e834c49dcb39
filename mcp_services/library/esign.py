"""E-signature: envelopes of documents sent to recipients for signature, their status, corrections,
reminders, voiding and completion (modelled on DocuSign's eSignature REST API).

An envelope is ``created`` (a draft), then ``sent``; it is ``delivered`` once a recipient opened it,
``completed`` when every signer signed, ``declined`` when a signer refused, ``voided`` when the sender
withdrew it (or it expired). Signers sign in routing order: the second signer gets it once the first
has signed. What recipients do (open, sign, decline) is their audit trail; the envelope's and each
recipient's status follow from it. The rules: drafts can be edited and discarded, not voided; a sent
envelope's documents cannot change (void it and send a corrected one); a recipient can be corrected
(a new email or name) until they sign; a completed or declined envelope cannot be voided.

Agreements come from the World's commerce plan (``mcp_services.kernel.plans.commerce``): each envelope
belongs to a sales deal (``deal_name``, ``company_name``) that the plan lists for crm. Every customer's
master services agreement is the World's contract (``world.plan.contracts``, ``contract_number``): signed
by the customer's signatory and countersigned by the account owner, or out for the customer's signature;
the files service keeps the same contract under the same document name. The other agreements (order
forms, NDAs, statements of work, renewals) are countersigned by the finance lead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, WithJsonSchema
from typing_extensions import TypedDict

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field
from mcp_services.kernel.plans.commerce import ENVELOPE_EXPIRY_DAYS, TEMPLATES, commerce_plan
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.semantic import (
    CompanyName,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    FileName,
    PersonName,
    ShortText,
    Subject,
    Text,
)

EnvelopeId = EntityId("esign.envelope")
RecipientId = EntityId("esign.recipient")
DocumentId = EntityId("esign.document")
TemplateId = EntityId("esign.template")
RecipientEventId = EntityId("esign.recipient_event")

EnvelopeStatus = Literal["created", "sent", "delivered", "completed", "declined", "voided"]
RecipientStatus = Literal["created", "sent", "delivered", "completed", "declined"]
RecipientKind = Literal["signer", "carbon_copy"]
Action = Literal["delivered", "signed", "declined"]
Pages = Annotated[int, Field(ge=1, le=500)]
_IN_PROCESS = ("sent", "delivered")

service = Service(
    "esign",
    "Electronic signatures: envelopes of documents sent to signers, with their status, corrections and completion.",
    title="eSignature",
)


class RecipientSummary(TypedDict):
    id: str
    name: str
    email: str
    kind: str
    routing_order: int
    status: str


RecipientSummaries = Annotated[
    list[RecipientSummary], WithJsonSchema({"type": "array", "items": TypeAdapter(RecipientSummary).json_schema()})
]


# -- statuses from the audit trail --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _State:
    status: str
    at: str | None  # when the recipient last acted (opened, signed, declined)
    reason: str | None


def _recipient_states(db: RecordAccess, envelopes: Sequence[Any]) -> dict[str, _State]:
    """Every recipient's status in these envelopes, from what they did since they were (re)routed."""
    by_id = {e.id: e for e in envelopes}
    recipients = db.query(Recipient).where_in("envelope_id", list(by_id)).order_by("routing_order", "id").all()
    events: dict[str, list[Any]] = {}
    for ev in db.query(RecipientEvent).where_in("envelope_id", list(by_id)).order_by("occurred_at", "id").all():
        events.setdefault(ev.recipient_id, []).append(ev)
    states: dict[str, _State] = {}
    done: dict[str, list[tuple[int, bool]]] = {}  # envelope -> (routing order, completed) of its signers
    for r in recipients:
        envelope = by_id[r.envelope_id]
        if r.kind == "carbon_copy":
            continue
        if envelope.sent_at is None:
            states[r.id] = _State("created", None, None)
            continue
        acted = [e for e in events.get(r.id, []) if r.routed_since is None or e.occurred_at >= r.routed_since]
        if acted:
            last = acted[-1]
            status = {"signed": "completed", "declined": "declined", "delivered": "delivered"}[last.action]
            states[r.id] = _State(status, last.occurred_at, last.reason)
        else:
            earlier = [ok for order, ok in done.get(r.envelope_id, []) if order < r.routing_order]
            states[r.id] = _State("sent" if all(earlier) else "created", None, None)
        done.setdefault(r.envelope_id, []).append((r.routing_order, states[r.id].status == "completed"))
    for r in recipients:
        if r.kind == "carbon_copy":
            signers = [states[s.id] for s in recipients if s.envelope_id == r.envelope_id and s.kind == "signer"]
            complete = bool(signers) and all(s.status == "completed" for s in signers)
            states[r.id] = _State("completed" if complete else "created", None, None)
    return states


def _envelope_states(db: RecordAccess, envelopes: Sequence[Any]) -> dict[str, _State]:
    """Each envelope's status and when it got there (its completion, decline or void)."""
    recipients = db.query(Recipient).where_in("envelope_id", [e.id for e in envelopes]).where(kind="signer").all()
    states = _recipient_states(db, envelopes)
    signers: dict[str, list[_State]] = {}
    for r in recipients:
        signers.setdefault(r.envelope_id, []).append(states[r.id])
    found = {}
    for e in envelopes:
        mine = signers.get(e.id, [])
        declined = [s for s in mine if s.status == "declined"]
        if e.voided_at is not None:
            found[e.id] = _State("voided", e.voided_at, e.void_reason)
        elif e.sent_at is None:
            found[e.id] = _State("created", None, None)
        elif declined:
            found[e.id] = _State("declined", declined[0].at, declined[0].reason)
        elif mine and all(s.status == "completed" for s in mine):
            found[e.id] = _State("completed", max(s.at or "" for s in mine), None)
        elif any(s.status in ("delivered", "completed") for s in mine):
            found[e.id] = _State("delivered", None, None)
        else:
            found[e.id] = _State("sent", None, None)
    return found


def _envelope_status(db: RecordAccess, envelopes: Sequence[Any]) -> list[str]:
    states = _envelope_states(db, envelopes)
    return [states[e.id].status for e in envelopes]


def _envelope_completed_at(db: RecordAccess, envelopes: Sequence[Any]) -> list[str | None]:
    states = _envelope_states(db, envelopes)
    return [states[e.id].at if states[e.id].status == "completed" else None for e in envelopes]


def _envelope_declined_reason(db: RecordAccess, envelopes: Sequence[Any]) -> list[str | None]:
    states = _envelope_states(db, envelopes)
    return [states[e.id].reason if states[e.id].status == "declined" else None for e in envelopes]


def _envelope_recipients(db: RecordAccess, envelopes: Sequence[Any]) -> list[list[RecipientSummary]]:
    recipients = (
        db.query(Recipient).where_in("envelope_id", [e.id for e in envelopes]).order_by("routing_order", "id").all()
    )
    states = _recipient_states(db, envelopes)
    by_envelope: dict[str, list[RecipientSummary]] = {}
    for r in recipients:
        by_envelope.setdefault(r.envelope_id, []).append(
            RecipientSummary(
                id=r.id,
                name=r.name,
                email=r.email,
                kind=r.kind,
                routing_order=r.routing_order,
                status=states[r.id].status,
            )
        )
    return [by_envelope.get(e.id, []) for e in envelopes]


def _recipient_field(db: RecordAccess, recipients: Sequence[Any], part: str) -> list[Any]:
    envelopes = list(db.fetch_many(Envelope, [r.envelope_id for r in recipients]).values())
    states = _recipient_states(db, envelopes)
    values = []
    for r in recipients:
        state = states[r.id]
        if part == "status":
            values.append(state.status)
        elif part == "signed_at":
            values.append(state.at if state.status == "completed" and r.kind == "signer" else None)
        else:
            values.append(state.reason if state.status == "declined" else None)
    return values


# -- entities ------------------------------------------------------------------------------------------


@service.entity(table="templates", prefix="tpl", label="name", search=("name", "description"))
class Template:
    """A reusable agreement: its document and who signs it."""

    id: TemplateId
    name: str = field(unique=True)
    description: Text
    pages: int
    countersigned: bool = field(description="Our side signs after the customer")


@service.entity(
    table="envelopes",
    prefix="env",
    label="email_subject",
    search=("email_subject", "contract_number", "company_name", "deal_name"),
)
class Envelope:
    """Documents sent to recipients for signature."""

    id: EnvelopeId = field(mention="the envelope id")
    email_subject: Subject
    email_message: Text | None = None
    sender_email: EmailAddress = field(role="sender")
    contract_number: str | None = field(None, index=True, mention="the contract number")
    company_name: CompanyName | None = field(None, role="customer", link="crm.company.name")
    deal_name: str | None = field(None, link="crm.deal.name", mention="the deal")
    template_id: TemplateId | None = None
    created_at: DateTime
    sent_at: DateTime | None = field(None, mention="when the envelope was sent")
    expires_at: DateTime | None = field(None, mention="when the envelope expires")
    voided_at: DateTime | None = None
    void_reason: ShortText | None = None
    last_reminded_at: DateTime | None = None
    reminders_sent: int = 0

    status = derived(EnvelopeStatus, batch=_envelope_status)
    completed_at = derived(DateTime | None, batch=_envelope_completed_at, description="When the last signer signed")
    declined_reason = derived(Text | None, batch=_envelope_declined_reason)
    recipients = derived(RecipientSummaries, batch=_envelope_recipients)


@service.entity(table="documents", prefix="doc", label="name", search=("name",))
class Document:
    """A document in an envelope."""

    id: DocumentId
    envelope_id: EnvelopeId
    name: FileName
    pages: int
    document_order: int
    added_at: DateTime


@service.entity(table="recipients", prefix="rcp", label="name", search=("name", "email"))
class Recipient:
    """Someone an envelope goes to: a signer (signs in routing order) or a carbon copy (gets the signed copy)."""

    id: RecipientId
    envelope_id: EnvelopeId
    name: PersonName = field(role="signer")
    email: EmailAddress = field(index=True, role="signer")
    role_name: str | None = None
    kind: RecipientKind = "signer"
    routing_order: int = 1
    routed_since: DateTime | None = field(None, description="Set when corrected: what they did before no longer counts")
    added_at: DateTime

    status = derived(RecipientStatus, batch=lambda db, rs: _recipient_field(db, rs, "status"))
    signed_at = derived(DateTime | None, batch=lambda db, rs: _recipient_field(db, rs, "signed_at"))
    declined_reason = derived(Text | None, batch=lambda db, rs: _recipient_field(db, rs, "reason"))


@service.entity(table="recipient_events", prefix="rev")
class RecipientEvent:
    """Something a recipient did: opened (delivered), signed or declined the envelope."""

    id: RecipientEventId
    envelope_id: EnvelopeId
    recipient_id: RecipientId
    action: Action
    reason: Text | None = None
    occurred_at: DateTime


# -- seed ------------------------------------------------------------------------------------------------


@service.seeder
def seed(ctx: ToolContext) -> None:
    plan = commerce_plan(ctx.world)
    templates = {
        name: Template(id=ctx.new_id("tpl"), name=name, description=text, pages=pages, countersigned=counter)
        for name, text, pages, counter in TEMPLATES
    }
    ctx.insert_many(list(templates.values()))
    envelopes, documents, recipients, actions = [], [], [], []
    for planned in plan.envelopes:
        envelope = Envelope(
            id=ctx.new_id("env"),
            email_subject=planned.subject,
            email_message=planned.message,
            sender_email=planned.sender_email,
            contract_number=planned.contract_number,
            company_name=planned.deal.company_name,
            deal_name=planned.deal.name,
            template_id=templates[planned.template].id,
            created_at=planned.created_at,
            sent_at=planned.sent_at,
            expires_at=planned.expires_at,
            voided_at=planned.voided_at,
            void_reason=planned.void_reason,
        )
        envelopes.append(envelope)
        documents += [
            Document(
                id=ctx.new_id("doc"),
                envelope_id=envelope.id,
                name=name,
                pages=pages,
                document_order=n,
                added_at=planned.created_at,
            )
            for n, (name, pages) in enumerate(planned.documents, start=1)
        ]
        for signer in planned.signers:
            recipient = Recipient(
                id=ctx.new_id("rcp"),
                envelope_id=envelope.id,
                name=signer.name,
                email=signer.email,
                role_name=signer.role_name,
                routing_order=signer.routing_order,
                added_at=planned.created_at,
            )
            recipients.append(recipient)
            for action, at, reason in (
                ("delivered", signer.viewed_at, None),
                ("signed", signer.signed_at, None),
                ("declined", signer.declined_at, signer.decline_reason),
            ):
                if at is not None:
                    actions.append((at, action, reason, recipient))
    ctx.insert_many(envelopes)
    ctx.insert_many(documents)
    ctx.insert_many(recipients)
    ctx.insert_many(
        [
            RecipientEvent(
                id=ctx.new_id("rev"),
                envelope_id=r.envelope_id,
                recipient_id=r.id,
                action=action,  # type: ignore[arg-type]
                reason=reason,
                occurred_at=at,
            )
            for at, action, reason, r in sorted(actions, key=lambda a: (a[0], a[3].id, a[1] != "delivered"))
        ]
    )


# -- shared rules -------------------------------------------------------------------------------------------


def _envelope(ctx: ToolContext, envelope_id: str) -> Envelope:
    return ctx.get(Envelope, envelope_id, "envelope", "Use list_envelopes to find envelope ids.")


def _status(ctx: ToolContext, envelope: Envelope) -> str:
    return _envelope_states(ctx, [envelope])[envelope.id].status


def _recipient(ctx: ToolContext, envelope: Envelope, recipient_id: str) -> Recipient:
    recipient = ctx.get(Recipient, recipient_id, "recipient", "Use list_recipients to find recipient ids.")
    if recipient.envelope_id != envelope.id:
        raise ToolError.invalid_argument(f"Recipient {recipient.id} is not on envelope {envelope.id}.")
    return recipient


class PersonIn(BaseModel):
    """A recipient: name and email."""

    name: PersonName = Field(description="The person's full name.")
    email: EmailAddress = Field(description="Where the envelope is sent.")


def _add_recipients(ctx: ToolContext, envelope: Envelope, signers: Sequence[PersonIn], cc: Sequence[PersonIn]) -> None:
    emails = [p.email.strip().lower() for p in [*signers, *cc]]
    if len(set(emails)) != len(emails):
        raise ToolError.invalid_argument("Each recipient's email may appear once.")
    ctx.insert_many(
        [
            Recipient(
                id=ctx.new_id("rcp"),
                envelope_id=envelope.id,
                name=p.name.strip(),
                email=p.email.strip().lower(),
                role_name="Signer",
                routing_order=n,
                added_at=ctx.now_iso,
            )
            for n, p in enumerate(signers, start=1)
        ]
        + [
            Recipient(
                id=ctx.new_id("rcp"),
                envelope_id=envelope.id,
                name=p.name.strip(),
                email=p.email.strip().lower(),
                role_name="Receives a copy",
                kind="carbon_copy",
                routing_order=len(signers) + 1,
                added_at=ctx.now_iso,
            )
            for p in cc
        ]
    )


def _send(ctx: ToolContext, envelope: Envelope) -> Envelope:
    if not ctx.query(Recipient).where(envelope_id=envelope.id, kind="signer").exists():
        raise ToolError.invalid_state(f"Envelope {envelope.id} has no signer; add_recipient first.")
    if not ctx.query(Document).where(envelope_id=envelope.id).exists():
        raise ToolError.invalid_state(f"Envelope {envelope.id} has no document; add_document first.")
    expires = ctx.iso(ctx.now + timedelta(days=ENVELOPE_EXPIRY_DAYS))
    return ctx.update(envelope, sent_at=ctx.now_iso, expires_at=expires)


# -- templates and envelopes -------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check our signature templates", "find the {query} template"))
def list_templates(
    ctx: ToolContext, query: str | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[Template]:
    """List the agreement templates (Master Services Agreement, Order Form, Mutual NDA...).

    Args:
        query: Words to match in the template's name or description (case-insensitive).
        limit: Maximum number of templates to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Template).search(query).order_by("name").page(limit, cursor)


@service.tool(
    "read",
    intent="find",
    phrases=(
        "check the contracts out for signature with {company_name}",
        "find the envelopes {recipient_email} has to sign",
    ),
)
def list_envelopes(
    ctx: ToolContext,
    query: str | None = None,
    status: EnvelopeStatus | None = None,
    company_name: CompanyName | None = None,
    deal_name: ShortText | None = None,
    recipient_email: EmailAddress | None = None,
    sender_email: EmailAddress | None = None,
    sent_from: Date | None = None,
    sent_to: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Envelope]:
    """List envelopes, newest first, with their status and recipients.

    Args:
        query: Words to match in the subject, contract number (e.g. MSA-2025-003), company or deal (case-insensitive).
        status: created (draft), sent, delivered (opened), completed, declined or voided.
        company_name: Only envelopes for this company (exact name, case-insensitive).
        deal_name: Only envelopes for this deal (exact name, case-insensitive).
        recipient_email: Only envelopes sent to this person.
        sender_email: Only envelopes sent by this colleague.
        sent_from: Only envelopes sent on or after this day (YYYY-MM-DD).
        sent_to: Only envelopes sent on or before this day (YYYY-MM-DD).
        limit: Maximum number of envelopes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Envelope).search(query).filter(sender_email=sender_email.strip().lower() if sender_email else None)
    if company_name:
        q.where_sql("lower(company_name) = lower(?)", company_name.strip())
    if deal_name and deal_name.strip():
        q.where_sql("lower(deal_name) = lower(?)", deal_name.strip())
    if recipient_email:
        q.where_sql(
            "EXISTS (SELECT 1 FROM recipients r WHERE r.envelope_id = envelopes.id AND r.email = ?)",
            recipient_email.strip().lower(),
        )
    q.compare("sent_at", ">=", sent_from and f"{sent_from}T00:00:00Z").compare(
        "sent_at", "<=", sent_to and f"{sent_to}T23:59:59Z"
    )
    if status is not None:
        candidates = ctx.query(Envelope).all()
        states = _envelope_states(ctx, candidates)
        q.where_in("id", [e.id for e in candidates if states[e.id].status == status])
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {envelope_id}", "check the status of {envelope_id}"))
def get_envelope(ctx: ToolContext, envelope_id: EnvelopeId) -> Envelope:
    """Get one envelope: subject, deal, status, when it was sent, expires or completed, and its recipients.

    Args:
        envelope_id: The envelope's id, e.g. env_0007 (see list_envelopes).
    """
    return _envelope(ctx, envelope_id)


@service.tool(
    "read", intent="find", phrases=("check who still has to sign {envelope_id}", "list the signers of {envelope_id}")
)
def list_recipients(ctx: ToolContext, envelope_id: EnvelopeId) -> list[Recipient]:
    """List an envelope's recipients in routing order, with each one's status (created: not their turn yet,
    sent, delivered: opened, completed: signed, declined).

    Args:
        envelope_id: The envelope, e.g. env_0007.
    """
    _envelope(ctx, envelope_id)
    return ctx.query(Recipient).where(envelope_id=envelope_id).order_by("routing_order", "id").all()


@service.tool(
    "read",
    intent="find",
    phrases=("check which documents are in {envelope_id}", "list the files attached to {envelope_id}"),
)
def list_documents(ctx: ToolContext, envelope_id: EnvelopeId) -> list[Document]:
    """List an envelope's documents in order.

    Args:
        envelope_id: The envelope, e.g. env_0007.
    """
    _envelope(ctx, envelope_id)
    return ctx.query(Document).where(envelope_id=envelope_id).order_by("document_order").all()


@service.tool(
    "read", intent="check", phrases=("check the history of {envelope_id}", "when did they open {envelope_id}")
)
def list_envelope_history(ctx: ToolContext, envelope_id: EnvelopeId) -> list[RecipientEvent]:
    """What the recipients did, oldest first: opened (delivered), signed, declined (with their reason).

    Args:
        envelope_id: The envelope, e.g. env_0007.
    """
    _envelope(ctx, envelope_id)
    return ctx.query(RecipientEvent).where(envelope_id=envelope_id).order_by("occurred_at").all()


@service.tool(
    "write",
    intent="draft",
    phrases=("prepare {template_id} for {company_name} to sign", "draft an envelope for {deal_name}"),
)
def create_envelope(
    ctx: ToolContext,
    email_subject: Subject,
    signers: list[PersonIn],
    template_id: TemplateId | None = None,
    document_names: list[FileName] | None = None,
    company_name: CompanyName | None = None,
    deal_name: ShortText | None = None,
    email_message: Text | None = None,
    cc: list[PersonIn] | None = None,
    send: bool = False,
) -> Envelope:
    """Create an envelope for signature: a draft by default, or sent at once with send=true. Documents come
    from a template (its document, named for the company) and/or are named in document_names (a draft may
    get them later with add_document; it cannot be sent without one). Signers sign in the order listed.

    Args:
        email_subject: The email subject recipients see, e.g. "Please DocuSign: Order Form - Acme".
        signers: Who signs, in signing order: [{"name", "email"}].
        template_id: A template whose document to use, e.g. tpl_0002 (see list_templates).
        document_names: Names of other documents to include, e.g. ["Pricing schedule.pdf"].
        company_name: The customer the agreement is with, as in the CRM.
        deal_name: The CRM deal this agreement is for.
        email_message: The message recipients read.
        cc: People who get a copy once everyone signed: [{"name", "email"}].
        send: Send it now (default false: keep it as a draft).
    """
    if not signers:
        raise ToolError.invalid_argument("signers must list at least one {name, email}.")
    template = ctx.get(Template, template_id, "template", "Use list_templates.") if template_id else None
    envelope = ctx.insert(
        Envelope(
            id=ctx.new_id("env"),
            email_subject=email_subject.strip(),
            email_message=email_message,
            sender_email=ctx.world.user.email,
            company_name=company_name.strip() if company_name else None,
            deal_name=deal_name.strip() if deal_name and deal_name.strip() else None,
            template_id=template.id if template else None,
            created_at=ctx.now_iso,
        )
    )
    names = (
        [(f"{template.name} - {company_name.strip()}.pdf" if company_name else f"{template.name}.pdf", template.pages)]
        if template
        else []
    )
    names += [(n.strip(), 1) for n in document_names or []]
    if len({n for n, _ in names}) != len(names):
        raise ToolError.invalid_argument("Each document name may appear once.")
    ctx.insert_many(
        [
            Document(
                id=ctx.new_id("doc"),
                envelope_id=envelope.id,
                name=name,
                pages=pages,
                document_order=n,
                added_at=ctx.now_iso,
            )
            for n, (name, pages) in enumerate(names, start=1)
        ]
    )
    _add_recipients(ctx, envelope, signers, cc or [])
    return _send(ctx, envelope) if send else envelope


@service.tool(
    "write",
    intent="update",
    phrases=("change the subject of {envelope_id} to {email_subject}", "reword the message of {envelope_id}"),
)
def update_envelope(
    ctx: ToolContext, envelope_id: EnvelopeId, email_subject: Subject | None = None, email_message: Text | None = None
) -> Envelope:
    """Change a draft envelope's email subject or message.

    Args:
        envelope_id: The draft envelope, e.g. env_0007.
        email_subject: The new subject.
        email_message: The new message.
    """
    envelope = _envelope(ctx, envelope_id)
    if email_subject is None and email_message is None:
        raise ToolError.invalid_argument("Pass email_subject or email_message.")
    status = _status(ctx, envelope)
    if status != "created":
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; only drafts can be edited.")
    changes: dict[str, Any] = {}
    if email_subject is not None:
        changes["email_subject"] = email_subject.strip()
    if email_message is not None:
        changes["email_message"] = email_message
    return ctx.update(envelope, **changes)


@service.tool(
    "write", intent="link", phrases=("add {name} to {envelope_id}", "attach {name} to {envelope_id} before it goes out")
)
def add_document(ctx: ToolContext, envelope_id: EnvelopeId, name: FileName, pages: Pages = 1) -> Document:
    """Add a document to a draft envelope (a sent envelope's documents cannot change: void it and send a new one).

    Args:
        envelope_id: The draft envelope, e.g. env_0007.
        name: The document's file name, e.g. "Pricing schedule - Acme.pdf".
        pages: How many pages it has.
    """
    envelope = _envelope(ctx, envelope_id)
    status = _status(ctx, envelope)
    if status != "created":
        raise ToolError.invalid_state(
            f"Envelope {envelope.id} is {status}; documents can only be added to drafts. "
            "Void it and send a corrected one."
        )
    documents = ctx.query(Document).where(envelope_id=envelope.id).all()
    if any(d.name.lower() == name.strip().lower() for d in documents):
        raise ToolError.conflict(f"Envelope {envelope.id} already has a document named {name.strip()}.")
    return ctx.insert(
        Document(
            id=ctx.new_id("doc"),
            envelope_id=envelope.id,
            name=name.strip(),
            pages=pages,
            document_order=len(documents) + 1,
            added_at=ctx.now_iso,
        )
    )


@service.tool(
    "write",
    intent="invite",
    phrases=("add {email} as a signer on {envelope_id}", "copy {email} on {envelope_id}"),
)
def add_recipient(
    ctx: ToolContext,
    envelope_id: EnvelopeId,
    name: PersonName,
    email: EmailAddress,
    kind: RecipientKind = "signer",
    routing_order: Annotated[int, Field(ge=1, le=20)] | None = None,
) -> Recipient:
    """Add a signer or a carbon-copy recipient to a draft or an envelope still out for signature. On a sent
    envelope a new signer cannot come before a signer who has already signed.

    Args:
        envelope_id: The envelope, e.g. env_0007.
        name: The recipient's full name.
        email: The recipient's email (not already on the envelope).
        kind: signer (default) or carbon_copy.
        routing_order: When they get it (1 first); default after everyone already on it.
    """
    envelope = _envelope(ctx, envelope_id)
    status = _status(ctx, envelope)
    if status not in ("created", *_IN_PROCESS):
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; recipients can no longer change.")
    address = email.strip().lower()
    existing = ctx.query(Recipient).where(envelope_id=envelope.id).all()
    if any(r.email == address for r in existing):
        raise ToolError.conflict(f"{address} is already a recipient of envelope {envelope.id}; use correct_recipient.")
    order = routing_order or max((r.routing_order for r in existing), default=0) + 1
    if status in _IN_PROCESS:
        states = _recipient_states(ctx, [envelope])
        signed = [r.routing_order for r in existing if states[r.id].status == "completed" and r.kind == "signer"]
        if signed and order <= max(signed):
            raise ToolError.invalid_argument(
                f"Signers up to routing order {max(signed)} have signed; a new recipient needs routing_order above it."
            )
    return ctx.insert(
        Recipient(
            id=ctx.new_id("rcp"),
            envelope_id=envelope.id,
            name=name.strip(),
            email=address,
            role_name="Signer" if kind == "signer" else "Receives a copy",
            kind=kind,
            routing_order=order,
            routed_since=ctx.now_iso if status in _IN_PROCESS else None,
            added_at=ctx.now_iso,
        )
    )


class RemovedOut(BaseModel):
    id: str
    deleted: bool


@service.tool(
    "write",
    intent="remove",
    phrases=("take {recipient_id} off {envelope_id}", "remove {recipient_id} from the signers of {envelope_id}"),
)
def remove_recipient(ctx: ToolContext, envelope_id: EnvelopeId, recipient_id: RecipientId) -> RemovedOut:
    """Remove a recipient who has not signed or declined from a draft or an envelope out for signature.
    An envelope keeps at least one signer.

    Args:
        envelope_id: The envelope, e.g. env_0007.
        recipient_id: The recipient to remove, e.g. rcp_0012 (see list_recipients).
    """
    envelope = _envelope(ctx, envelope_id)
    recipient = _recipient(ctx, envelope, recipient_id)
    status = _status(ctx, envelope)
    if status not in ("created", *_IN_PROCESS):
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; recipients can no longer change.")
    state = _recipient_states(ctx, [envelope])[recipient.id]
    if state.status in ("completed", "declined") and recipient.kind == "signer":
        raise ToolError.invalid_state(f"{recipient.name} has {state.status} the envelope; they cannot be removed.")
    others = (
        ctx.query(Recipient).where(envelope_id=envelope.id, kind="signer").where_sql("id != ?", recipient.id).count()
    )
    if recipient.kind == "signer" and others == 0:
        raise ToolError.invalid_state(f"{recipient.name} is the envelope's only signer; add another signer first.")
    ctx.delete(recipient)
    return RemovedOut(id=recipient.id, deleted=True)


@service.tool(
    "write",
    intent="update",
    phrases=("send {envelope_id} to {email} instead", "correct the signer's email on {envelope_id} to {email}"),
)
def correct_recipient(
    ctx: ToolContext,
    envelope_id: EnvelopeId,
    recipient_id: RecipientId,
    email: EmailAddress | None = None,
    name: PersonName | None = None,
) -> Recipient:
    """Correct a recipient's email or name before they sign (a typo, or the signer changed). On a sent envelope
    the corrected recipient is sent the envelope again; what they did before no longer counts.

    Args:
        envelope_id: The envelope, e.g. env_0007.
        recipient_id: The recipient to correct, e.g. rcp_0012 (see list_recipients).
        email: The corrected email.
        name: The corrected name.
    """
    envelope = _envelope(ctx, envelope_id)
    recipient = _recipient(ctx, envelope, recipient_id)
    if email is None and name is None:
        raise ToolError.invalid_argument("Pass the corrected email or name.")
    status = _status(ctx, envelope)
    if status not in ("created", *_IN_PROCESS):
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; its recipients can no longer be corrected.")
    state = _recipient_states(ctx, [envelope])[recipient.id]
    if state.status == "completed" and recipient.kind == "signer":
        raise ToolError.invalid_state(f"{recipient.name} has already signed; a signed recipient cannot be corrected.")
    changes: dict[str, Any] = {}
    if email is not None:
        address = email.strip().lower()
        if address == recipient.email:
            raise ToolError.invalid_argument(f"{recipient.name}'s email is already {address}.")
        if ctx.exists(Recipient, envelope_id=envelope.id, email=address):
            raise ToolError.conflict(f"{address} is already a recipient of envelope {envelope.id}.")
        changes["email"] = address
    if name is not None:
        changes["name"] = name.strip()
    if status in _IN_PROCESS:
        changes["routed_since"] = ctx.now_iso
    return ctx.update(recipient, **changes)


@service.tool("write", intent="send", phrases=("send {envelope_id} for signature", "send out {envelope_id}"))
def send_envelope(ctx: ToolContext, envelope_id: EnvelopeId) -> Envelope:
    """Send a draft envelope to its signers (the first in routing order gets it now). It expires unsigned
    after the account's expiry period.

    Args:
        envelope_id: The draft envelope, e.g. env_0007.
    """
    envelope = _envelope(ctx, envelope_id)
    status = _status(ctx, envelope)
    if status != "created":
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}, not a draft; it was sent already.")
    return _send(ctx, envelope)


@service.tool("write", intent="notify", phrases=("remind the signers of {envelope_id}", "resend {envelope_id}"))
def resend_envelope(ctx: ToolContext, envelope_id: EnvelopeId) -> Envelope:
    """Send a reminder to the recipients whose turn it is on an envelope out for signature.

    Args:
        envelope_id: The envelope, e.g. env_0007.
    """
    envelope = _envelope(ctx, envelope_id)
    status = _status(ctx, envelope)
    if status not in _IN_PROCESS:
        hint = "send_envelope it first" if status == "created" else "nobody is waiting to sign it"
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; {hint}.")
    return ctx.update(envelope, last_reminded_at=ctx.now_iso, reminders_sent=envelope.reminders_sent + 1)


@service.tool("write", intent="cancel", phrases=("void {envelope_id}", "withdraw {envelope_id}"))
def void_envelope(ctx: ToolContext, envelope_id: EnvelopeId, reason: ShortText) -> Envelope:
    """Void an envelope out for signature: nobody can sign it any more, and recipients are told why. A
    completed or declined envelope cannot be voided; a draft is discarded instead (discard_draft).

    Args:
        envelope_id: The envelope to void, e.g. env_0007.
        reason: Why it is voided (recipients see it), e.g. "Replaced by a corrected version".
    """
    envelope = _envelope(ctx, envelope_id)
    if not reason.strip():
        raise ToolError.invalid_argument("reason must not be empty.")
    status = _status(ctx, envelope)
    if status == "completed":
        raise ToolError.invalid_state(
            f"Envelope {envelope.id} is completed: every signer signed, so it cannot be voided."
        )
    if status not in _IN_PROCESS:
        hint = "discard_draft it instead" if status == "created" else "only envelopes out for signature can be voided"
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; {hint}.")
    return ctx.update(envelope, voided_at=ctx.now_iso, void_reason=reason.strip())


@service.tool("write", intent="delete", phrases=("discard {envelope_id}", "delete the unsent {envelope_id}"))
def discard_draft(ctx: ToolContext, envelope_id: EnvelopeId) -> RemovedOut:
    """Delete a draft envelope that was never sent, with its documents and recipients.

    Args:
        envelope_id: The draft envelope, e.g. env_0007.
    """
    envelope = _envelope(ctx, envelope_id)
    status = _status(ctx, envelope)
    if status != "created":
        raise ToolError.invalid_state(
            f"Envelope {envelope.id} is {status}; only drafts can be discarded (void it instead)."
        )
    for record in [
        *ctx.query(Recipient).where(envelope_id=envelope.id).all(),
        *ctx.query(Document).where(envelope_id=envelope.id).all(),
    ]:
        ctx.delete(record)
    ctx.delete(envelope)
    return RemovedOut(id=envelope.id, deleted=True)


class SignatureOut(BaseModel):
    name: PersonName
    email: EmailAddress
    signed_at: DateTime


class CertificateOut(BaseModel):
    """The certificate of completion: who signed which documents, and when."""

    envelope_id: EnvelopeId
    email_subject: Subject
    company_name: CompanyName | None
    deal_name: str | None
    sent_at: DateTime
    completed_at: DateTime
    documents: list[FileName]
    signatures: list[SignatureOut]


@service.tool(
    "read", intent="check", phrases=("get the signed certificate of {envelope_id}", "check who signed {envelope_id}")
)
def get_certificate(ctx: ToolContext, envelope_id: EnvelopeId) -> CertificateOut:
    """The certificate of completion of a completed envelope: every signature with its time, and the documents.

    Args:
        envelope_id: The completed envelope, e.g. env_0007.
    """
    envelope = _envelope(ctx, envelope_id)
    state = _envelope_states(ctx, [envelope])[envelope.id]
    if state.status != "completed":
        raise ToolError.invalid_state(
            f"Envelope {envelope.id} is {state.status}; only completed envelopes have a certificate."
        )
    recipients = (
        ctx.query(Recipient).where(envelope_id=envelope.id, kind="signer").order_by("routing_order", "id").all()
    )
    states = _recipient_states(ctx, [envelope])
    return CertificateOut(
        envelope_id=envelope.id,
        email_subject=envelope.email_subject,
        company_name=envelope.company_name,
        deal_name=envelope.deal_name,
        sent_at=envelope.sent_at or envelope.created_at,
        completed_at=state.at or "",
        documents=[d.name for d in ctx.query(Document).where(envelope_id=envelope.id).order_by("document_order").all()],
        signatures=[SignatureOut(name=r.name, email=r.email, signed_at=states[r.id].at or "") for r in recipients],
    )


# -- world events --------------------------------------------------------------------------------------------


def _current_signers(ctx: ToolContext, envelope: Envelope) -> list[Recipient]:
    """The signers whose turn it is (sent or opened, not yet signed)."""
    status = _status(ctx, envelope)
    if status not in _IN_PROCESS:
        raise ToolError.invalid_state(f"Envelope {envelope.id} is {status}; nobody can act on it.")
    states = _recipient_states(ctx, [envelope])
    signers = ctx.query(Recipient).where(envelope_id=envelope.id, kind="signer").order_by("routing_order", "id").all()
    return [r for r in signers if states[r.id].status in ("sent", "delivered")]


@service.event("envelope_declined")
def envelope_declined(
    ctx: ToolContext, envelope_id: str, reason: str, signer_email: str | None = None, hours_ago: float = 1.0
) -> str:
    """The signer whose turn it is declines to sign, saying why (a task's trigger); returns the event's id."""
    envelope = _envelope(ctx, envelope_id)
    if not reason.strip():
        raise ToolError.invalid_argument("A decline needs the signer's reason.")
    current = _current_signers(ctx, envelope)
    chosen = [r for r in current if signer_email is None or r.email == signer_email.strip().lower()]
    if not chosen:
        raise ToolError.invalid_argument(f"{signer_email} is not a signer whose turn it is on envelope {envelope.id}.")
    return ctx.insert(
        RecipientEvent(
            id=ctx.new_id("rev"),
            envelope_id=envelope.id,
            recipient_id=chosen[0].id,
            action="declined",
            reason=reason.strip(),
            occurred_at=ctx.days_from_now(-hours_ago / 24),
        )
    ).id


@service.event("envelope_completed")
def envelope_completed(ctx: ToolContext, envelope_id: str, hours_ago: float = 1.0) -> str:
    """Every remaining signer signs, in routing order (a task's trigger); returns the last signature's event id."""
    envelope = _envelope(ctx, envelope_id)
    _current_signers(ctx, envelope)
    states = _recipient_states(ctx, [envelope])
    waiting = [
        r
        for r in ctx.query(Recipient)
        .where(envelope_id=envelope.id, kind="signer")
        .order_by("routing_order", "id")
        .all()
        if states[r.id].status != "completed"
    ]
    moment = datetime.strptime(ctx.days_from_now(-hours_ago / 24), "%Y-%m-%dT%H:%M:%SZ")
    last = ""
    for n, recipient in enumerate(waiting):
        at = ctx.iso(moment - timedelta(minutes=10 * (len(waiting) - 1 - n)))
        last = ctx.insert(
            RecipientEvent(
                id=ctx.new_id("rev"),
                envelope_id=envelope.id,
                recipient_id=recipient.id,
                action="signed",
                occurred_at=at,
            )
        ).id
    return last
