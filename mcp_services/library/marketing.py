"""Marketing: audiences, their members with tags and consent, segments and email campaigns (modelled on
Mailchimp's Marketing API).

Audiences and members come from the marketing plan (``mcp_services.kernel.plans.marketing``): the
World's customers with their work address and company, and people who signed up on the website.

Consent is the rule everything else follows. Only ``subscribed`` members receive campaigns; a member
who unsubscribed stays on the audience (archiving hides a member but keeps the record) and is never
added back as subscribed: ``resubscribe_member`` (or re-adding an archived address) makes them
``pending`` and Mailchimp emails them to confirm. Bounced (``cleaned``) addresses cannot be
resubscribed at all.

A campaign goes to an audience or to one of its segments (saved conditions on tags and the VIP flag).
Campaigns are drafts until they are scheduled (a quarter hour, at least 15 minutes ahead) or sent now;
a scheduled campaign goes back to draft with ``unschedule_campaign`` before it can be edited. Sending
counts the members who are subscribed at that moment, so unsubscribes are always honoured; the sent-to
list shows who got it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.marketing import marketing_plan
from mcp_services.kernel.records import Query, RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.prose import write
from mcp_services.kernel.semantic import (
    URL,
    City,
    CompanyName,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    ShortText,
    Subject,
    Tag,
    Text,
    moment,
)

AudienceId = EntityId("marketing.audience")
MemberId = EntityId("marketing.member")
NoteId = EntityId("marketing.member_note")
SegmentId = EntityId("marketing.segment")
CampaignId = EntityId("marketing.campaign")
RecipientId = EntityId("marketing.recipient")

MemberStatus = Literal["subscribed", "unsubscribed", "cleaned", "pending", "archived"]
NewMemberStatus = Literal["subscribed", "pending"]
CampaignStatus = Literal["draft", "scheduled", "sent"]
Match = Literal["any", "all"]

MEMBER_STATUS = StateDef(
    field="status",
    values=["subscribed", "unsubscribed", "cleaned", "pending", "archived"],
    initial="subscribed",
    transitions={
        "subscribed": ["unsubscribed", "archived"],
        "pending": ["subscribed", "unsubscribed", "archived"],
        "unsubscribed": ["pending", "archived"],
        "cleaned": ["archived"],
        "archived": ["subscribed", "pending"],
    },
)
CAMPAIGN_STATUS = StateDef(
    field="status",
    values=["draft", "scheduled", "sent"],
    initial="draft",
    terminal=["sent"],
    transitions={"draft": ["scheduled", "sent"], "scheduled": ["draft"], "sent": []},
)
#: Mailchimp schedules on the quarter hour, at least this far ahead.
MIN_LEAD = timedelta(minutes=15)

service = Service(
    "marketing",
    "Email marketing: audiences and their members with tags and consent (subscribed, unsubscribed...), "
    "segments, campaigns from draft to scheduled or sent, their reports and who received them.",
    title="Marketing",
)


# -- entities ------------------------------------------------------------------------------------


def _counts(db: RecordAccess, audiences: Sequence[Audience], status: str) -> list[int]:
    ids = [a.id for a in audiences]
    marks = ", ".join("?" for _ in ids)
    found = dict(db.sql(f"SELECT audience_id, COUNT(*) FROM members WHERE status = ? AND audience_id IN ({marks}) "
                        "GROUP BY audience_id", status, *ids))
    return [int(found.get(i, 0)) for i in ids]


@service.entity(table="audiences", prefix="aud", label="name", search=("name",))
class Audience:
    """A Mailchimp audience (list): the people who agreed to get one kind of email from us."""

    id: AudienceId
    name: str = field(unique=True)
    description: Text
    permission_reminder: Text
    from_name: str
    from_email: EmailAddress
    created_at: DateTime

    member_count = derived(int, batch=lambda db, a: _counts(db, a, "subscribed"), description="Subscribed members")
    unsubscribe_count = derived(int, batch=lambda db, a: _counts(db, a, "unsubscribed"), description="Unsubscribed members")
    cleaned_count = derived(int, batch=lambda db, a: _counts(db, a, "cleaned"), description="Bounced (cleaned) addresses")


@service.entity(
    table="members", prefix="mem", label="email_address", search=("email_address", "first_name", "last_name", "company"),
    state=MEMBER_STATUS,
)
class Member:
    """One person on one audience, with their consent status and tags."""

    id: MemberId
    audience_id: AudienceId = field(index=True)
    email_address: EmailAddress = field(index=True, role="self")
    first_name: str
    last_name: str
    company: CompanyName | None = field(None, role="employer")
    city: City | None = None
    status: MemberStatus = field(index=True)
    tags: list[Tag]
    vip: bool = False
    source: str
    opted_in_at: DateTime
    last_changed: DateTime
    unsubscribe_reason: str | None = None

    full_name = derived(PersonName, lambda m: f"{m.first_name} {m.last_name}".strip())
    audience_name = joined(str, via="audience_id", field="name")


@service.entity(table="member_notes", prefix="mnote", search=("note",))
class MemberNote:
    """A note on a member's profile, for the team."""

    id: NoteId
    member_id: MemberId = field(index=True)
    note: Text
    created_by: EmailAddress = field(role="author")
    created_at: DateTime


def _segment_counts(db: RecordAccess, segments: Sequence[Segment]) -> list[int]:
    return [_matching(db, s.audience_id, s).count() for s in segments]


@service.entity(table="segments", prefix="seg", label="name", search=("name",))
class Segment:
    """A saved segment: the subscribed members of an audience whose tags (and VIP flag) match its conditions."""

    id: SegmentId
    audience_id: AudienceId = field(index=True)
    name: str
    match: Match
    tags: list[Tag]
    vip_only: bool = False
    created_at: DateTime
    updated_at: DateTime

    member_count = derived(int, batch=_segment_counts, description="Subscribed members who match now")
    audience_name = joined(str, via="audience_id", field="name")


def _recipient_counts(db: RecordAccess, campaigns: Sequence[Campaign]) -> list[int]:
    segments = db.fetch_many(Segment, [c.segment_id for c in campaigns])
    return [
        c.emails_sent if c.status == "sent" else _matching(db, c.audience_id, segments.get(c.segment_id)).count()
        for c in campaigns
    ]


@service.entity(
    table="campaigns", prefix="cmp", label="title", search=("title", "subject_line", "content"), state=CAMPAIGN_STATUS
)
class Campaign:
    """An email campaign to an audience, or to one of its segments."""

    id: CampaignId
    audience_id: AudienceId = field(index=True)
    segment_id: SegmentId | None = None
    title: str
    subject_line: Subject = field(mention="the subject line")
    preview_text: str | None = None
    from_name: str
    reply_to: EmailAddress
    content: Text
    status: CampaignStatus = field(index=True)
    schedule_time: DateTime | None = field(None, mention="the send time")
    send_time: DateTime | None = None
    emails_sent: int = 0
    opens: int = 0
    clicks: int = 0
    unsubscribes: int = 0
    bounces: int = 0
    archive_url: URL = field(mention="the campaign link")
    created_at: DateTime
    updated_at: DateTime

    audience_name = joined(str, via="audience_id", field="name")
    segment_name = joined(str | None, via="segment_id", field="name")
    recipient_count = derived(
        int, batch=_recipient_counts, description="Emails sent (sent campaigns), or subscribed members it would reach now"
    )


@service.entity(table="recipients", prefix="rcp")
class Recipient:
    """One email of a sent campaign: who it went to, and whether they opened it."""

    id: RecipientId
    campaign_id: CampaignId = field(index=True)
    member_id: MemberId
    email_address: EmailAddress = field(role="recipient")
    opened: bool = False
    clicked: bool = False


# -- summaries -------------------------------------------------------------------------------------


class ChecklistItem(BaseModel):
    type: Literal["success", "error"]
    heading: str
    details: str


class Checklist(BaseModel):
    campaign_id: CampaignId
    is_ready: bool
    items: list[ChecklistItem]


class CampaignReport(BaseModel):
    campaign_id: CampaignId
    title: str
    send_time: DateTime
    emails_sent: int
    opens: int
    clicks: int
    unsubscribes: int
    bounces: int
    open_rate: float
    click_rate: float


# -- rules -----------------------------------------------------------------------------------------

_MEMBER_HINT = "Use search_members to find member ids."
_CAMPAIGN_HINT = "Use list_campaigns to find campaign ids."


def _has_tag(tag: str) -> tuple[str, str]:
    """A member's tags hold ``tag`` (case-insensitive): its JSON text, matched with LIKE.

    (Not json_each: SQLite 3.40 crashes on cached statements with table-valued functions once a
    snapshot has been restored on the connection.)
    """
    return "tags LIKE ? ESCAPE '\\'", like_pattern(json_text(" ".join(tag.split())))


def _matching(db: RecordAccess, audience_id: str, segment: Segment | None) -> Query[Member]:
    """The subscribed members a campaign to this audience (or segment) reaches now."""
    q = db.query(Member).where(audience_id=audience_id, status="subscribed")
    if segment is None:
        return q
    if segment.vip_only:
        q.where(vip=True)
    if segment.tags:
        conditions = [_has_tag(t) for t in segment.tags]
        joiner = " OR " if segment.match == "any" else " AND "
        q.where_sql(joiner.join(c for c, _ in conditions), *(t for _, t in conditions))
    return q


def _member(ctx: ToolContext, member_id: str) -> Member:
    return ctx.get(Member, member_id, hint=_MEMBER_HINT)


def _campaign(ctx: ToolContext, campaign_id: str) -> Campaign:
    return ctx.get(Campaign, campaign_id, hint=_CAMPAIGN_HINT)


def _draft(ctx: ToolContext, campaign_id: str, action: str) -> Campaign:
    campaign = _campaign(ctx, campaign_id)
    if campaign.status == "scheduled":
        raise ToolError.invalid_state(
            f"Campaign {campaign_id} is scheduled for {campaign.schedule_time}; unschedule_campaign it before you {action} it."
        )
    if campaign.status == "sent":
        raise ToolError.invalid_state(f"Campaign {campaign_id} was sent on {campaign.send_time}; a sent campaign cannot be changed.")
    return campaign


def _clean_tags(tags: Sequence[str]) -> list[str]:
    cleaned: list[str] = []
    for tag in tags:
        tag = " ".join(tag.split())
        if tag and tag.lower() not in {t.lower() for t in cleaned}:
            cleaned.append(tag)
    return cleaned


def _segment_of(ctx: ToolContext, campaign: Campaign) -> Segment | None:
    return ctx.get(Segment, campaign.segment_id) if campaign.segment_id else None


def _checklist(ctx: ToolContext, campaign: Campaign) -> Checklist:
    reach = _matching(ctx, campaign.audience_id, _segment_of(ctx, campaign)).count()
    audience = ctx.get(Audience, campaign.audience_id)
    where = f"segment {campaign.segment_id}" if campaign.segment_id else f"audience {audience.name}"
    items = [
        ("Subject line", bool(campaign.subject_line.strip()), f"Subject: {campaign.subject_line!r}", "Add a subject line."),
        ("From", bool(campaign.from_name.strip() and campaign.reply_to),
         f"From {campaign.from_name} <{campaign.reply_to}>", "Set a from name and a reply-to address."),
        ("Content", len(campaign.content.strip()) >= 20, "The email has content.",
         "Write the email's content (at least a sentence)."),
        ("Recipients", reach > 0, f"{reach} subscribed members of {where} will receive it.",
         f"Nobody subscribed is in {where}; pick another audience or segment."),
    ]
    shown = [ChecklistItem(type="success" if ok else "error", heading=h, details=good if ok else bad) for h, ok, good, bad in items]
    return Checklist(campaign_id=campaign.id, is_ready=all(i.type == "success" for i in shown), items=shown)


def _require_ready(ctx: ToolContext, campaign: Campaign, action: str) -> int:
    checklist = _checklist(ctx, campaign)
    if not checklist.is_ready:
        problems = "; ".join(i.details for i in checklist.items if i.type == "error")
        raise ToolError.invalid_state(f"Campaign {campaign.id} cannot be {action} yet: {problems}")
    return _matching(ctx, campaign.audience_id, _segment_of(ctx, campaign)).count()


def _archive_url(ctx: ToolContext, campaign_id: str) -> str:
    return f"https://mailchi.mp/{ctx.world.home.domain.split('.')[0]}/{campaign_id.replace('_', '-')}"


def _deliver(ctx: ToolContext, campaign: Campaign, members: Sequence[Member], opened: set[str], clicked: set[str]) -> None:
    ctx.insert_many([
        Recipient(id=ctx.new_id("rcp"), campaign_id=campaign.id, member_id=m.id, email_address=m.email_address,
                  opened=m.id in opened, clicked=m.id in clicked)
        for m in members
    ])


# -- seed ------------------------------------------------------------------------------------------

#: (title, subject, preview, content) of the monthly newsletter; {home} and {month} are filled in.
_NEWSLETTERS = (
    ("{month} newsletter", "What's new at {home} this {month}", "Three updates worth five minutes",
     "Hi *|FNAME|*,\n\nThis month: faster exports, a redesigned reports page and a customer story from the field. "
     "Read on for the details and a few tips from our support team.\n\nThe {home} team"),
    ("{month} newsletter", "{month} at {home}: tips, stories and one big release", "Plus the webinar schedule",
     "Hi *|FNAME|*,\n\nWe shipped scheduled reports, added two integrations and published our spring webinar "
     "schedule. Here is what it means for your team.\n\nThe {home} team"),
)
_DRAFTS = (
    ("Customer survey {year}", "Two minutes to tell us how we are doing?", "Your answers shape our roadmap",
     "Hi *|FNAME|*,\n\nWe read every answer. Tell us what works and what does not in a two-minute survey, and "
     "we will share what we learn.\n\nThank you,\nThe {home} team", None),
    ("Pro plan: new reporting features", "New in your Pro plan: scheduled reports", "Set them up in a minute",
     "Hi *|FNAME|*,\n\nScheduled reports are now part of the Pro plan: pick a report, a time and the recipients, "
     "and we deliver it by email.\n\nThe {home} team", "Pro plan customers"),
    ("Enterprise: security review pack", "Your security review pack is ready", "Everything your auditors ask for",
     "Hi *|FNAME|*,\n\nThe pack holds our SOC 2 report, the penetration test summary and the data processing "
     "agreement. Reply to this email to get access.\n\nThe {home} team", "Enterprise customers"),
)
#: (name, match, tags, vip_only) of the segments the team saved.
_SEGMENTS: tuple[tuple[str, Match, tuple[str, ...], bool], ...] = (
    ("Pro plan customers", "all", ("Customer", "Pro plan"), False),
    ("Enterprise customers", "all", ("Customer", "Enterprise plan"), False),
    ("VIP customers", "all", ("Customer",), True),
    ("Event attendees", "any", ("Event attendee",), False),
    ("Prospects", "any", ("Prospect",), False),
)


_VIP_NOTE = ("[VIP: invite to the customer advisory board.|VIP - invite {first} to the advisory board.|Key account contact: "
             "advisory board invite.|VIP: first in line for the customer advisory board.] [Ask the account owner "
             "first.|Loves the product updates.|]")
_UNSUBSCRIBED_NOTE = ("[Unsubscribed after the last newsletter|Opted out after the last campaign|{first} unsubscribed "
                      "last month]; [do not add back to any list without their say-so|never re-add without consent|no "
                      "re-imports, please].")


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The plan's audiences and members; saved segments; past newsletters, webinar invitations, drafts, a scheduled reminder."""
    world, rng, now = ctx.world, ctx.rng("seed"), ctx.now
    plan = marketing_plan(world)
    audiences = {
        a.key: Audience(id=ctx.new_id("aud"), name=a.name, description=a.description,
                        permission_reminder=a.permission_reminder, from_name=a.from_name, from_email=a.from_email,
                        created_at=a.created_at)
        for a in plan.audiences
    }
    ctx.insert_many(list(audiences.values()))
    members = [
        Member(id=ctx.new_id("mem"), audience_id=audiences[s.audience].id, email_address=s.email, first_name=s.first_name,
               last_name=s.last_name, company=s.company, city=s.city, status=s.status, tags=list(s.tags), vip=s.vip,
               source=s.source, opted_in_at=s.opted_in_at, last_changed=s.changed_at,
               unsubscribe_reason=s.unsubscribe_reason)
        for s in plan.subscribers
    ]
    ctx.insert_many(members)
    news = audiences["newsletter"]
    segments = {
        name: Segment(id=ctx.new_id("seg"), audience_id=news.id, name=name, match=match, tags=list(tags), vip_only=vip,
                      created_at=ctx.days_from_now(-rng.randint(60, 300)), updated_at=ctx.days_from_now(-rng.randint(5, 59)))
        for name, match, tags, vip in _SEGMENTS
    }
    ctx.insert_many(list(segments.values()))
    home = world.home.name
    pm = world.team_member("product manager")

    def campaign(audience: Audience, title: str, subject: str, preview: str, content: str, *, status: str,
                 segment: Segment | None = None, at: datetime | None = None, created: datetime) -> Campaign:
        cid = ctx.new_id("cmp")
        return Campaign(
            id=cid, audience_id=audience.id, segment_id=segment.id if segment else None, title=title,
            subject_line=subject, preview_text=preview, from_name=audience.from_name,
            reply_to=pm.email if audience is news else audience.from_email, content=content, status=status,
            schedule_time=ctx.iso(at) if at and status == "scheduled" else None,
            send_time=ctx.iso(at) if at and status == "sent" else None, archive_url=_archive_url(ctx, cid),
            created_at=ctx.iso(created), updated_at=ctx.iso(min(created + timedelta(days=1), now)),
        )

    def sent(c: Campaign) -> None:
        """Deliver a past campaign to who was subscribed then, with its opens and clicks."""
        assert c.send_time is not None
        reached = [
            m for m in _matching(ctx, c.audience_id, segments_by_id.get(c.segment_id or "")).all()
            if m.opted_in_at < c.send_time
        ] + [
            m for m in ctx.query(Member).where(audience_id=c.audience_id).where_in("status", ("unsubscribed", "cleaned")).all()
            if m.opted_in_at < c.send_time < m.last_changed and c.segment_id is None
        ]
        opened = {m.id for m in reached if rng.random() < 0.42}
        clicked = {m.id for m in reached if m.id in opened and rng.random() < 0.3}
        later = [m for m in reached if m.status == "unsubscribed"]
        bounced = [m for m in reached if m.status == "cleaned"]
        ctx.insert(c)
        ctx.update(c, emails_sent=len(reached), opens=len(opened), clicks=len(clicked), unsubscribes=len(later),
                   bounces=len(bounced))
        _deliver(ctx, c, reached, opened, clicked)

    segments_by_id = {s.id: s for s in segments.values()}
    # Newsletters went out every few weeks; the last one a few days ago.
    last = now - timedelta(days=rng.randint(2, 12), hours=rng.randint(0, 5))
    for i in range(4):
        at = (last - timedelta(days=28 * i)).replace(hour=rng.choice((9, 14)), minute=0, second=0, microsecond=0)
        title, subject, preview, content = _NEWSLETTERS[i % len(_NEWSLETTERS)]
        month = at.strftime("%B")
        sent(campaign(news, title.format(month=month), subject.format(home=home, month=month), preview,
                      content.format(home=home), status="sent", at=at, created=at - timedelta(days=rng.randint(3, 8))))
    product = audiences["product"]
    release = (now - timedelta(days=rng.randint(15, 40))).replace(hour=15, minute=0, second=0, microsecond=0)
    sent(campaign(product, "Release notes", f"Release notes: what changed in {home} this month", "Exports, reports and fixes",
                  "Hello,\n\nThis release speeds up CSV exports, adds scheduled reports and fixes the invoice PDF "
                  f"address bug. Full notes are in the help centre.\n\nThe {home} Product Team", status="sent",
                  at=release, created=release - timedelta(days=2)))
    for webinar in plan.webinars:
        at = datetime.fromisoformat(webinar.invitation_sent_at.replace("Z", "+00:00"))
        when = datetime.fromisoformat(webinar.start_time.replace("Z", "+00:00"))
        sent(campaign(
            news, f"Webinar invitation: {webinar.topic}", f"You're invited: {webinar.topic}", f"Live on {when:%A %d %B}",
            f"Hi *|FNAME|*,\n\nJoin us live on {when:%A %d %B} at {when:%H:%M} UTC for \"{webinar.topic}\". "
            f"{webinar.agenda}\n\nRegister here: {webinar.registration_url}\n\nThe {home} team",
            status="sent", at=at, created=at - timedelta(days=2),
        ))
        if not webinar.ended:
            reminder = when - timedelta(days=2)
            ctx.insert(campaign(
                news, f"Webinar reminder: {webinar.topic}", f"In two days: {webinar.topic}", "Save your seat",
                f"Hi *|FNAME|*,\n\nA reminder that \"{webinar.topic}\" is live on {when:%A %d %B} at {when:%H:%M} UTC. "
                f"Register here: {webinar.registration_url}\n\nThe {home} team",
                status="scheduled", at=reminder.replace(hour=9),
                created=now - timedelta(days=1),
            ))
    for title, subject, preview, content, segment in _DRAFTS:
        created = now - timedelta(days=rng.randint(1, 9), hours=rng.randint(0, 8))
        ctx.insert(campaign(news, title.format(year=now.year), subject, preview, content.format(home=home), status="draft",
                            segment=segments[segment] if segment else None, created=created))
    notes = rng.sample([m for m in members if m.vip or m.status == "unsubscribed"], 4)
    words = ctx.rng("words")
    ctx.insert_many([
        MemberNote(id=ctx.new_id("mnote"), member_id=m.id,
                   note=write(words, _VIP_NOTE if m.vip else _UNSUBSCRIBED_NOTE, {"first": m.first_name or "They"}),
                   # Written after what it is about: their latest change on the list.
                   created_by=pm.email, created_at=max(ctx.days_from_now(-rng.randint(1, 60)), m.last_changed))
        for m in notes
    ])


# -- audiences -----------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check our mailing lists", "look at the audiences in Mailchimp"))
def list_audiences(ctx: ToolContext, query: str | None = None) -> list[Audience]:
    """List the audiences (mailing lists) with their subscribed, unsubscribed and cleaned counts.

    Args:
        query: Words to match in the audience's name.
    """
    return ctx.query(Audience).search(query).order_by("name").all()


# -- members -------------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find",
    phrases=("look {query} up in Mailchimp", "find {query} on our mailing lists", "check the subscribers tagged {tag}"),
)
def search_members(
    ctx: ToolContext,
    query: str | None = None,
    audience_id: AudienceId | None = None,
    status: MemberStatus | None = None,
    tag: Tag | None = None,
    vip: bool | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Member]:
    """Search members across audiences (or in one) by name, email or company, status, tag and VIP flag.

    A person on two audiences is two members (one per audience), each with its own status.

    Args:
        query: Words to match against the email address, first name, last name or company (every word must match).
        audience_id: Only members of this audience (see list_audiences).
        status: subscribed, unsubscribed, cleaned (bounced), pending (not confirmed yet) or archived.
        tag: Only members with this tag (case-insensitive), e.g. Pro plan.
        vip: Only VIP members (true) or only the others (false).
        limit: Maximum number of members to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Member).search(query).filter(audience_id=audience_id, status=status, vip=vip)
    if tag is not None:
        q.where_sql(*_has_tag(tag))
    return q.order_by("email_address", "audience_id").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the Mailchimp profile of {member_id}",))
def get_member(ctx: ToolContext, member_id: MemberId) -> Member:
    """Get one member: email, name, company, status, tags, VIP flag, when they opted in and last changed.

    Args:
        member_id: The member's id, e.g. mem_0012 (see search_members).
    """
    return _member(ctx, member_id)


@service.tool(
    "write", intent="create",
    phrases=("add {email_address} to {audience_id}", "sign {first_name} {last_name} up for {audience_id}"),
)
def add_member(
    ctx: ToolContext,
    audience_id: AudienceId,
    email_address: EmailAddress,
    first_name: str,
    last_name: str,
    status: NewMemberStatus = "pending",
    company: CompanyName | None = None,
    tags: list[Tag] | None = None,
) -> Member:
    """Add a person to an audience. Use status pending (the default: Mailchimp emails them to confirm) unless they
    gave their consent to us already (then subscribed).

    An address already on the audience is refused (update it instead). An archived member is restored; if they had
    unsubscribed before, they can only come back as pending: nobody who opted out is subscribed again without
    confirming it themselves.

    Args:
        audience_id: The audience (see list_audiences).
        email_address: The person's email address.
        first_name: Given name.
        last_name: Family name.
        status: pending (default: a confirmation email asks them to opt in) or subscribed (they already agreed).
        company: The company they work for.
        tags: Tags to give them, e.g. ["Prospect"].
    """
    audience = ctx.get(Audience, audience_id)
    email = email_address.strip().lower()
    if not first_name.strip() or not last_name.strip():
        raise ToolError.invalid_argument("first_name and last_name must not be empty.")
    existing = ctx.find(Member, audience_id=audience.id, email_address=email)
    if existing is not None and existing.status != "archived":
        raise ToolError.conflict(
            f"{email} is already on {audience.name} as member {existing.id} ({existing.status}); use update_member "
            "or update_member_tags to change it."
        )
    if existing is not None and existing.unsubscribe_reason and status == "subscribed":
        raise ToolError.permission_denied(
            f"{email} unsubscribed from {audience.name} before ({existing.unsubscribe_reason!r}); add them back as "
            "pending so that they confirm by email."
        )
    values = {
        "first_name": first_name.strip(), "last_name": last_name.strip(), "company": company.strip() if company else None,
        "status": status, "tags": _clean_tags(tags or []), "opted_in_at": ctx.now_iso, "last_changed": ctx.now_iso,
    }
    if existing is not None:
        return ctx.update(existing, **values)
    return ctx.insert(Member(id=ctx.new_id("mem"), audience_id=audience.id, email_address=email, city=None,
                             vip=False, source="API", unsubscribe_reason=None, **values))


@service.tool("write", intent="update", phrases=("update the Mailchimp profile of {member_id}", "mark {member_id} as a VIP"))
def update_member(
    ctx: ToolContext,
    member_id: MemberId,
    first_name: str | None = None,
    last_name: str | None = None,
    company: CompanyName | None = None,
    city: City | None = None,
    vip: bool | None = None,
) -> Member:
    """Change a member's name, company, city or VIP flag. Only what you pass changes; consent has its own tools
    (unsubscribe_member, resubscribe_member, archive_member).

    Args:
        member_id: The member to update.
        first_name: New given name.
        last_name: New family name.
        company: New company.
        city: New city.
        vip: Mark (true) or unmark (false) as a VIP.
    """
    member = _member(ctx, member_id)
    if member.status == "archived":
        raise ToolError.invalid_state(f"Member {member_id} is archived; add_member them again to restore them first.")
    changes = {
        "first_name": first_name.strip() if first_name else None, "last_name": last_name.strip() if last_name else None,
        "company": company.strip() if company else None, "city": city.strip() if city else None, "vip": vip,
    }
    changes = {k: v for k, v in changes.items() if v is not None and getattr(member, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value to change.")
    return ctx.update(member, **changes, last_changed=ctx.now_iso)


@service.tool("write", intent="tag", phrases=("tag {member_id} with {add}", "remove the tag {remove} from {member_id}"))
def update_member_tags(
    ctx: ToolContext, member_id: MemberId, add: list[Tag] | None = None, remove: list[Tag] | None = None
) -> Member:
    """Add tags to a member and remove others (tags are case-insensitive; removing a tag they lack is refused).

    Args:
        member_id: The member to tag.
        add: Tags to add, e.g. ["Event attendee"].
        remove: Tags to remove.
    """
    member = _member(ctx, member_id)
    adding, removing = _clean_tags(add or []), _clean_tags(remove or [])
    if not adding and not removing:
        raise ToolError.invalid_argument("Pass at least one tag to add or remove.")
    have = {t.lower() for t in member.tags}
    missing = [t for t in removing if t.lower() not in have]
    if missing:
        raise ToolError.invalid_argument(f"Member {member_id} has no tag {missing[0]!r}; its tags: {', '.join(member.tags) or 'none'}.")
    both = {t.lower() for t in adding} & {t.lower() for t in removing}
    if both:
        raise ToolError.invalid_argument(f"Tag {sorted(both)[0]!r} is both added and removed; pass it once.")
    gone = {t.lower() for t in removing}
    tags = [t for t in member.tags if t.lower() not in gone]
    tags += [t for t in adding if t.lower() not in {x.lower() for x in tags}]
    if tags == member.tags:
        raise ToolError.invalid_state(f"Member {member_id} already has those tags.")
    return ctx.update(member, tags=tags, last_changed=ctx.now_iso)


@service.tool(
    "write", intent="opt_out",
    phrases=("unsubscribe {member_id}", "take {member_id} off the mailing list", "opt {member_id} out of our emails"),
)
def unsubscribe_member(ctx: ToolContext, member_id: MemberId, reason: ShortText | None = None) -> Member:
    """Unsubscribe a member from their audience: they get no more campaigns from it (scheduled ones included).
    The member stays on the audience as unsubscribed, so nobody adds them back by mistake. Unsubscribing covers
    one audience; someone on several audiences has a member on each.

    Args:
        member_id: The member (one audience's record of the person; see search_members).
        reason: Why, in their words or one of Mailchimp's reasons (e.g. I no longer want to receive these emails).
    """
    member = _member(ctx, member_id)
    if member.status not in ("subscribed", "pending"):
        raise ToolError.invalid_state(
            f"Member {member_id} ({member.email_address}) is {member.status}, not subscribed; there is nothing to unsubscribe."
        )
    why = reason.strip() if reason and reason.strip() else "Unsubscribed by an admin"
    return ctx.update(member, status="unsubscribed", unsubscribe_reason=why, last_changed=ctx.now_iso)


@service.tool("write", intent="restore", phrases=("resubscribe {member_id}", "put {member_id} back on the mailing list"))
def resubscribe_member(ctx: ToolContext, member_id: MemberId) -> Member:
    """Ask an unsubscribed member to opt back in: they become pending and Mailchimp emails them a confirmation
    link (only they can subscribe themselves again). Bounced (cleaned) addresses cannot be resubscribed.

    Args:
        member_id: The unsubscribed member.
    """
    member = _member(ctx, member_id)
    if member.status == "cleaned":
        raise ToolError.permission_denied(
            f"{member.email_address} bounced (cleaned) and cannot be resubscribed; ask the person for a working address."
        )
    if member.status != "unsubscribed":
        raise ToolError.invalid_state(f"Member {member_id} is {member.status}; only unsubscribed members can be resubscribed.")
    return ctx.update(member, status="pending", last_changed=ctx.now_iso)


@service.tool("write", intent="delete", phrases=("archive {member_id} in Mailchimp", "remove {member_id} from the audience"))
def archive_member(ctx: ToolContext, member_id: MemberId) -> Member:
    """Archive a member: they disappear from the audience's counts and segments but the record (and whether they
    had unsubscribed) is kept. Archiving is not unsubscribing: to respect an opt-out, use unsubscribe_member.

    Args:
        member_id: The member to archive.
    """
    member = _member(ctx, member_id)
    if member.status == "archived":
        raise ToolError.invalid_state(f"Member {member_id} is already archived.")
    return ctx.update(member, status="archived", last_changed=ctx.now_iso)


@service.tool("write", intent="note", phrases=("add a note to {member_id} in Mailchimp: {note}",))
def add_member_note(ctx: ToolContext, member_id: MemberId, note: Text) -> MemberNote:
    """Add a note to a member's profile for the team.

    Args:
        member_id: The member.
        note: The note's text.
    """
    member = _member(ctx, member_id)
    if not note.strip():
        raise ToolError.invalid_argument("note must not be empty.")
    return ctx.insert(MemberNote(id=ctx.new_id("mnote"), member_id=member.id, note=note.strip(),
                                 created_by=ctx.world.user.email, created_at=ctx.now_iso))


@service.tool("read", intent="find", phrases=("read the Mailchimp notes on {member_id}",))
def list_member_notes(ctx: ToolContext, member_id: MemberId, limit: Limit = 20, cursor: Cursor = None) -> Page[MemberNote]:
    """A member's notes, newest first.

    Args:
        member_id: The member.
        limit: Maximum number of notes to return (1-100).
        cursor: next_cursor from a previous page.
    """
    member = _member(ctx, member_id)
    return ctx.query(MemberNote).where(member_id=member.id).order_by("-created_at").page(limit, cursor)


# -- segments ------------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check the saved segments of {audience_id}", "look at our Mailchimp segments"))
def list_segments(ctx: ToolContext, audience_id: AudienceId | None = None, query: str | None = None) -> list[Segment]:
    """List saved segments with their conditions and how many subscribed members match now.

    Args:
        audience_id: Only segments of this audience.
        query: Words to match in the segment's name.
    """
    if audience_id is not None:
        ctx.get(Audience, audience_id, hint="Use list_audiences to find audience ids.")
    return ctx.query(Segment).filter(audience_id=audience_id).search(query).order_by("name").all()


@service.tool(
    "write", intent="create",
    phrases=("save a segment called {name} of the members tagged {tags}", "make a segment {name} in {audience_id}"),
)
def create_segment(
    ctx: ToolContext, audience_id: AudienceId, name: ShortText, tags: list[Tag] | None = None, match: Match = "all",
    vip_only: bool = False,
) -> Segment:
    """Save a segment of an audience: its subscribed members with the given tags (all of them, or any) and, with
    vip_only, who are VIPs. Every tag must be in use on the audience. Names are unique per audience.

    Args:
        audience_id: The audience to segment.
        name: The segment's name, e.g. Logistics customers.
        tags: Tags to match, e.g. ["Customer", "Logistics"].
        match: all (default: members with every tag) or any (members with at least one).
        vip_only: Only VIP members.
    """
    audience = ctx.get(Audience, audience_id)
    label = " ".join(name.split())
    if not label:
        raise ToolError.invalid_argument("name must not be empty.")
    wanted = _clean_tags(tags or [])
    if not wanted and not vip_only:
        raise ToolError.invalid_argument("A segment needs at least one tag or vip_only=true.")
    in_use = {t.lower() for (text,) in ctx.sql("SELECT DISTINCT tags FROM members WHERE audience_id = ?", audience.id)
              for t in json.loads(text)}
    unknown = [t for t in wanted if t.lower() not in in_use]
    if unknown:
        raise ToolError.invalid_argument(f"No member of {audience.name} has the tag {unknown[0]!r}; check the tags with search_members.")
    clash = ctx.query(Segment).where(audience_id=audience.id).where_sql("lower(name) = lower(?)", label).first()
    if clash is not None:
        raise ToolError.conflict(f"{audience.name} already has a segment called {clash.name!r} ({clash.id}).")
    return ctx.insert(Segment(id=ctx.new_id("seg"), audience_id=audience.id, name=label, match=match, tags=wanted,
                              vip_only=vip_only, created_at=ctx.now_iso, updated_at=ctx.now_iso))


@service.tool("read", intent="find", phrases=("check who is in the segment {segment_id}",))
def list_segment_members(ctx: ToolContext, segment_id: SegmentId, limit: Limit = 20, cursor: Cursor = None) -> Page[Member]:
    """The subscribed members a segment matches now (who a campaign to it would reach).

    Args:
        segment_id: The segment (see list_segments).
        limit: Maximum number of members to return (1-100).
        cursor: next_cursor from a previous page.
    """
    segment = ctx.get(Segment, segment_id)
    return _matching(ctx, segment.audience_id, segment).order_by("email_address").page(limit, cursor)


# -- campaigns -----------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find",
    phrases=("check the campaigns in Mailchimp", "look for the {query} campaign", "see which campaigns are scheduled"),
)
def list_campaigns(
    ctx: ToolContext,
    query: str | None = None,
    status: CampaignStatus | None = None,
    audience_id: AudienceId | None = None,
    sent_since: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Campaign]:
    """List campaigns, newest first, by words in the title, subject or content, status, audience, or send date.

    Args:
        query: Words to match in the title, subject line or content.
        status: draft, scheduled or sent.
        audience_id: Only campaigns to this audience.
        sent_since: Only campaigns sent at or after this time (ISO 8601 UTC).
        limit: Maximum number of campaigns to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Campaign).search(query).filter(status=status, audience_id=audience_id)
    q.compare("send_time", ">=", sent_since)
    return q.order_by("-created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the campaign {campaign_id}",))
def get_campaign(ctx: ToolContext, campaign_id: CampaignId) -> Campaign:
    """Get one campaign: audience, segment, subject, content, status, schedule or send time and its figures.

    Args:
        campaign_id: The campaign's id, e.g. cmp_0004 (see list_campaigns).
    """
    return _campaign(ctx, campaign_id)


@service.tool(
    "write", intent="draft",
    phrases=("draft a campaign to {segment_id} with the subject {subject_line}", "set up a Mailchimp campaign {title}"),
)
def create_campaign(
    ctx: ToolContext,
    audience_id: AudienceId,
    title: ShortText,
    subject_line: Subject,
    content: Text,
    segment_id: SegmentId | None = None,
    preview_text: ShortText | None = None,
    from_name: ShortText | None = None,
    reply_to: EmailAddress | None = None,
) -> Campaign:
    """Create a draft campaign to an audience, or to one of its segments. From name and reply-to default to the
    audience's. Nothing is sent until you schedule_campaign or send_campaign it.

    Args:
        audience_id: The audience it goes to.
        title: The internal name of the campaign (recipients do not see it).
        subject_line: The email's subject line (at most 150 characters).
        content: The email's text.
        segment_id: Only this segment of the audience (see list_segments).
        preview_text: The snippet shown after the subject in the inbox.
        from_name: The sender name recipients see.
        reply_to: Where replies go.
    """
    audience = ctx.get(Audience, audience_id)
    if segment_id is not None:
        segment = ctx.get(Segment, segment_id)
        if segment.audience_id != audience.id:
            raise ToolError.invalid_argument(f"Segment {segment_id} belongs to another audience ({segment.audience_id}), not {audience.id}.")
    if not title.strip():
        raise ToolError.invalid_argument("title must not be empty.")
    if len(subject_line) > 150:
        raise ToolError.invalid_argument(f"The subject line has {len(subject_line)} characters; Mailchimp allows 150.")
    cid = ctx.new_id("cmp")
    return ctx.insert(Campaign(
        id=cid, audience_id=audience.id, segment_id=segment_id, title=title.strip(), subject_line=subject_line.strip(),
        preview_text=preview_text.strip() if preview_text else None, from_name=(from_name or audience.from_name).strip(),
        reply_to=(reply_to or audience.from_email).lower(), content=content.strip(), status="draft",
        archive_url=_archive_url(ctx, cid), created_at=ctx.now_iso, updated_at=ctx.now_iso,
    ))


@service.tool("write", intent="update", phrases=("change the subject of {campaign_id} to {subject_line}", "edit the draft {campaign_id}"))
def update_campaign(
    ctx: ToolContext,
    campaign_id: CampaignId,
    title: ShortText | None = None,
    subject_line: Subject | None = None,
    content: Text | None = None,
    preview_text: ShortText | None = None,
    segment_id: SegmentId | None = None,
    reply_to: EmailAddress | None = None,
) -> Campaign:
    """Edit a draft campaign; only what you pass changes. A scheduled campaign must be unscheduled first.

    Args:
        campaign_id: The draft to edit.
        title: New internal name.
        subject_line: New subject line (at most 150 characters).
        content: New email text.
        preview_text: New preview snippet.
        segment_id: Send it to this segment of its audience instead.
        reply_to: New reply-to address.
    """
    campaign = _draft(ctx, campaign_id, "edit")
    if segment_id is not None and ctx.get(Segment, segment_id).audience_id != campaign.audience_id:
        raise ToolError.invalid_argument(f"Segment {segment_id} belongs to another audience than campaign {campaign_id}.")
    if subject_line is not None and len(subject_line) > 150:
        raise ToolError.invalid_argument(f"The subject line has {len(subject_line)} characters; Mailchimp allows 150.")
    changes = {
        "title": title.strip() if title else None, "subject_line": subject_line.strip() if subject_line else None,
        "content": content.strip() if content else None, "preview_text": preview_text.strip() if preview_text else None,
        "segment_id": segment_id, "reply_to": reply_to.lower() if reply_to else None,
    }
    changes = {k: v for k, v in changes.items() if v is not None and getattr(campaign, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value to change.")
    return ctx.update(campaign, **changes, updated_at=ctx.now_iso)


@service.tool("read", intent="check", phrases=("check whether {campaign_id} is ready to send",))
def get_campaign_checklist(ctx: ToolContext, campaign_id: CampaignId) -> Checklist:
    """Mailchimp's send checklist for a campaign: subject, sender, content and recipients, and whether it can go out.

    Args:
        campaign_id: The campaign to check.
    """
    return _checklist(ctx, _campaign(ctx, campaign_id))


@service.tool(
    "write", intent="schedule",
    phrases=("schedule {campaign_id} for {schedule_time}", "set {campaign_id} to go out at {schedule_time}"),
)
def schedule_campaign(ctx: ToolContext, campaign_id: CampaignId, schedule_time: DateTime) -> Campaign:
    """Schedule a draft campaign to go out at a time: on a quarter hour (:00, :15, :30 or :45, UTC) at least 15
    minutes from now. It must pass its checklist. It goes to whoever is subscribed when it is sent.

    Args:
        campaign_id: The draft to schedule.
        schedule_time: When it goes out (ISO 8601 UTC), e.g. 2025-03-18T14:00:00Z.
    """
    campaign = _campaign(ctx, campaign_id)
    if campaign.status != "draft":
        raise ToolError.invalid_state(
            f"Campaign {campaign_id} is {campaign.status}"
            + (f" for {campaign.schedule_time}; unschedule_campaign it to pick another time." if campaign.status == "scheduled" else
               "; only drafts can be scheduled.")
        )
    at = moment(schedule_time)
    if at.minute % 15 or at.second:
        raise ToolError.invalid_argument(f"{schedule_time} is not on a quarter hour; Mailchimp schedules at :00, :15, :30 or :45.")
    if at < ctx.now + MIN_LEAD:
        raise ToolError.invalid_argument(f"{schedule_time} is less than 15 minutes from now ({ctx.now_iso}); pick a later time.")
    _require_ready(ctx, campaign, "scheduled")
    return ctx.update(campaign, status="scheduled", schedule_time=ctx.iso(at), updated_at=ctx.now_iso)


@service.tool("write", intent="cancel", phrases=("unschedule {campaign_id}", "stop {campaign_id} from going out"))
def unschedule_campaign(ctx: ToolContext, campaign_id: CampaignId) -> Campaign:
    """Take a scheduled campaign back to draft (it will not go out until scheduled or sent again).

    Args:
        campaign_id: The scheduled campaign.
    """
    campaign = _campaign(ctx, campaign_id)
    if campaign.status != "scheduled":
        raise ToolError.invalid_state(f"Campaign {campaign_id} is {campaign.status}, not scheduled.")
    return ctx.update(campaign, status="draft", schedule_time=None, updated_at=ctx.now_iso)


@service.tool("write", intent="send", phrases=("send {campaign_id} now", "send out the campaign {campaign_id}"))
def send_campaign(ctx: ToolContext, campaign_id: CampaignId) -> Campaign:
    """Send a draft campaign now to the subscribed members of its audience or segment (unsubscribed, cleaned, pending
    and archived members never get it). It must pass its checklist. A scheduled campaign must be unscheduled first.

    Args:
        campaign_id: The draft to send.
    """
    campaign = _draft(ctx, campaign_id, "send")
    _require_ready(ctx, campaign, "sent")
    members = _matching(ctx, campaign.audience_id, _segment_of(ctx, campaign)).order_by("email_address").all()
    sent = ctx.update(campaign, status="sent", send_time=ctx.now_iso, emails_sent=len(members), updated_at=ctx.now_iso)
    _deliver(ctx, sent, members, set(), set())
    return sent


@service.tool("write", intent="delete", phrases=("delete the draft {campaign_id}",))
def delete_campaign(ctx: ToolContext, campaign_id: CampaignId) -> Campaign:
    """Delete a draft campaign (scheduled ones must be unscheduled first; sent ones stay for their reports).

    Args:
        campaign_id: The draft to delete.
    """
    campaign = _draft(ctx, campaign_id, "delete")
    ctx.delete(campaign)
    return campaign


@service.tool("read", intent="check", phrases=("check how {campaign_id} did", "look at the report of {campaign_id}"))
def get_campaign_report(ctx: ToolContext, campaign_id: CampaignId) -> CampaignReport:
    """The report of a sent campaign: emails sent, opens, clicks, unsubscribes and bounces, with open and click rates.

    Args:
        campaign_id: A sent campaign.
    """
    c = _campaign(ctx, campaign_id)
    if c.status != "sent" or c.send_time is None:
        raise ToolError.invalid_state(f"Campaign {campaign_id} is {c.status}; only sent campaigns have a report.")
    rate = (lambda n: round(100 * n / c.emails_sent, 1) if c.emails_sent else 0.0)
    return CampaignReport(campaign_id=c.id, title=c.title, send_time=c.send_time, emails_sent=c.emails_sent, opens=c.opens,
                          clicks=c.clicks, unsubscribes=c.unsubscribes, bounces=c.bounces, open_rate=rate(c.opens),
                          click_rate=rate(c.clicks))


@service.tool("read", intent="find", phrases=("check who received {campaign_id}", "see whether {email_address} got {campaign_id}"))
def list_campaign_recipients(
    ctx: ToolContext, campaign_id: CampaignId, email_address: EmailAddress | None = None, limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Recipient]:
    """The sent-to list of a sent campaign: each address it went to, and whether they opened or clicked.

    Args:
        campaign_id: A sent campaign.
        email_address: Only this address (to check whether someone got it).
        limit: Maximum number of recipients to return (1-100).
        cursor: next_cursor from a previous page.
    """
    campaign = _campaign(ctx, campaign_id)
    if campaign.status != "sent":
        raise ToolError.invalid_state(f"Campaign {campaign_id} is {campaign.status}; only sent campaigns have recipients.")
    q = ctx.query(Recipient).where(campaign_id=campaign.id)
    if email_address:
        q.where(email_address=email_address.strip().lower())
    return q.order_by("email_address").page(limit, cursor)


# -- world events ----------------------------------------------------------------------------------------


@service.event("member_signed_up")
def member_signed_up(
    ctx: ToolContext, audience: str, email_address: str, first_name: str, last_name: str, company: str | None = None,
    tags: Sequence[str] = (), hours_ago: float = 1.0,
) -> str:
    """Someone signs up on the website form of an audience (by name or id) ``hours_ago``: a pending member waiting
    to confirm. Returns the member's id."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    found = ctx.fetch(Audience, audience) or ctx.find(Audience, name=audience)
    if found is None:
        raise ToolError.invalid_argument(f"No audience is called or has the id {audience!r}.")
    email = email_address.strip().lower()
    if ctx.exists(Member, audience_id=found.id, email_address=email):
        raise ToolError.conflict(f"{email} is already on {found.name}.")
    at = ctx.days_from_now(-hours_ago / 24)
    return ctx.insert(Member(
        id=ctx.new_id("mem"), audience_id=found.id, email_address=email, first_name=first_name.strip(),
        last_name=last_name.strip(), company=company, city=None, status="pending", tags=_clean_tags(tags), vip=False,
        source="Signup form", opted_in_at=at, last_changed=at,
    )).id
