"""Chat: the team's workspace of channels, direct messages, threads and reactions (modelled on the Slack Web API).

The workspace's users are the home team (same names, emails, phones and usernames as in every other
service). Conversations are public or private channels, or direct messages ("im") between two
users. Messages quote the world's customers, companies, products and places, so a value read here
(a customer's email, an amount, a SKU) can drive work in the CRM, payments or mailbox, and a
message's permalink can be shared elsewhere. The agent acts as ``world.user``. Channels are named as
people type them ("#support", with or without the #) and people by their handle ("ana.ruiz", "@ana.ruiz"
in a search) or email.

Rules (Slack's own): nobody posts, reacts, edits or changes the topic in an archived channel; you
post only where you are a member; private channels need an invitation (join works for public
ones only); #general cannot be archived, left or kicked from; you edit and delete only your own
messages; a thread reply goes to the thread's parent, never to another reply; channel names are
lowercase, without spaces, and unique, archived channels included.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from random import Random
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, Field, WithJsonSchema

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import runtime_of
from mcp_services.kernel.pagination import page_of
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query, RecordAccess
from mcp_services.kernel.semantic import (
    URL,
    ChannelName,
    CompanyName,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    JobTitle,
    PersonName,
    PhoneNumber,
    Text,
    Username,
)
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.plans.staff import staff_plan
from mcp_services.kernel.prose import industry_facts, money, write
from mcp_services.kernel.world import World

UserId = EntityId("chat.user")
ChannelId = EntityId("chat.channel")
MessageId = EntityId("chat.message")
MembershipId = EntityId("chat.membership")
ReactionId = EntityId("chat.reaction")
WorkspaceId = EntityId("chat.workspace")

ChannelKind = Literal["public", "private", "im"]
GENERAL = "general"
TOPIC_MAX = 250
MESSAGE_MAX = 4000
TOMBSTONE = "This message was deleted."
_CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
_EMOJI_NAME = re.compile(r"^[a-z0-9_+-]{1,60}$")

service = Service(
    "chat",
    "Team chat workspace: public and private channels, direct messages, threads, reactions and message search.",
    title="Chat",
)


class ReactionOut(BaseModel):
    name: str
    count: int
    usernames: list[Username]


class MemberOut(BaseModel):
    username: Username
    real_name: PersonName
    email: EmailAddress
    title: JobTitle


#: A message's reactions as returned: one entry per emoji, oldest first.
Reactions = Annotated[list[dict[str, Any]], WithJsonSchema({"type": "array", "items": ReactionOut.model_json_schema()})]


# -- entities ------------------------------------------------------------------------------------


@service.entity(
    table="users", prefix="usr", label="real_name", search=("real_name", "display_name", "username", "email", "title")
)
class User:
    """A member of the workspace: one of the home team."""

    id: UserId
    username: Username = field(unique=True, role="self", mention="the chat handle")
    display_name: str = field(role="self")
    real_name: PersonName = field(role="self")
    email: EmailAddress = field(unique=True, role="self")
    title: JobTitle
    phone: PhoneNumber = field(role="self")
    is_admin: bool
    status_text: str | None = None


@service.entity(table="workspace", prefix="ws", label="name")
class Workspace:
    """The workspace (a Slack team): its name and address, and the user signed in to it, the one we act for."""

    id: WorkspaceId
    name: CompanyName = field(role="company")
    domain: str
    url: URL
    user_id: UserId = field(role="self")


# -- values of returned records that other rows hold ---------------------------------------------


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def _workspace(db: RecordAccess) -> Workspace:
    workspace = db.find(Workspace)
    assert workspace is not None  # seeded with the store
    return workspace


def _members(db: RecordAccess, channels: Sequence[Channel]) -> dict[str, list[str]]:
    """Member ids of each channel, in one query."""
    ids = [c.id for c in channels]
    members: dict[str, list[str]] = {c: [] for c in ids}
    for channel_id, user_id in db.sql(
        f"SELECT channel_id, user_id FROM channel_members WHERE channel_id IN ({_marks(ids)}) "
        "ORDER BY channel_id, user_id",
        *ids,
    ):
        members[channel_id].append(user_id)
    return members


def _member_counts(db: RecordAccess, channels: Sequence[Channel]) -> list[int]:
    members = _members(db, channels)
    return [len(members[c.id]) for c in channels]


def _you_are_member(db: RecordAccess, channels: Sequence[Channel]) -> list[bool]:
    me, members = _workspace(db).user_id, _members(db, channels)
    return [me in members[c.id] for c in channels]


def _dm_partners(db: RecordAccess, channels: Sequence[Channel]) -> list[list[str]]:
    me, members = _workspace(db).user_id, _members(db, channels)
    others = {c.id: [m for m in members[c.id] if m != me] if c.kind == "im" else [] for c in channels}
    wanted = sorted({m for ids in others.values() for m in ids})
    names = db.sql(f"SELECT id, username FROM users WHERE id IN ({_marks(wanted)})", *wanted) if wanted else []
    usernames = dict(names)
    return [[usernames[m] for m in others[c.id]] for c in channels]


def _reply_counts(db: RecordAccess, messages: Sequence[Message]) -> list[int]:
    ids = [m.id for m in messages]
    replies = dict(db.sql(
        f"SELECT thread_parent_id, COUNT(*) FROM messages WHERE thread_parent_id IN ({_marks(ids)}) "
        "AND deleted = 0 GROUP BY thread_parent_id",
        *ids,
    ))
    return [replies.get(i, 0) for i in ids]


def _reactions_to(db: RecordAccess, messages: Sequence[Message]) -> list[list[dict[str, Any]]]:
    """Each message's reactions, one entry per emoji, oldest first."""
    ids = [m.id for m in messages]
    by_emoji: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
    for message_id, name, username in db.sql(
        "SELECT r.message_id, r.name, u.username FROM reactions AS r JOIN users AS u ON u.id = r.user_id "
        f"WHERE r.message_id IN ({_marks(ids)}) ORDER BY r.created_at, r.name, r.user_id",
        *ids,
    ):
        by_emoji[message_id].setdefault(name, []).append(username)
    return [[{"name": n, "count": len(u), "usernames": u} for n, u in by_emoji[i].items()] for i in ids]


def _permalinks(db: RecordAccess, messages: Sequence[Message]) -> list[str]:
    url = _workspace(db).url
    return [f"{url}archives/{m.channel_id}/p{m.id.split('_')[-1]}" for m in messages]


@service.entity(table="channels", prefix="chan", label="name", search=("name", "topic"))
class Channel:
    """A public or private channel, or a direct message between two users."""

    id: ChannelId
    name: ChannelName | None = field(
        None, unique=True, mention="the channel", description="The channel's name without #; null for a direct message"
    )
    kind: ChannelKind
    topic: str | None = None
    purpose: str | None = None
    creator_id: UserId = field(role="creator")
    created_at: DateTime
    archived: bool = False
    archived_at: DateTime | None = None

    creator_username = joined(Username, via="creator_id", field="username")
    member_count = derived(int, batch=_member_counts)
    is_member = derived(bool, batch=_you_are_member, description="Whether you are a member")
    dm_with = derived(list[Username], batch=_dm_partners, description="For a direct message: the other participant(s)")


@service.entity(table="messages", prefix="msg", search=("text",))
class Message:
    """A message in a channel or direct message, or a reply in a message's thread."""

    id: MessageId
    channel_id: ChannelId = field(index=True)
    user_id: UserId = field(role="author")
    text: Text
    thread_parent_id: MessageId | None = field(
        None, index=True, description="The thread's parent message, if this is a reply"
    )
    broadcast: bool = False  # a thread reply also shown in the channel
    posted_at: DateTime = field(index=True)
    edited_at: DateTime | None = None
    deleted: bool = False

    channel_name = joined(ChannelName | None, via="channel_id", field="name")
    author_username = joined(Username, via="user_id", field="username")
    author_name = joined(PersonName, via="user_id", field="real_name")
    author_email = joined(EmailAddress, via="user_id", field="email")
    reply_count = derived(int, batch=_reply_counts)
    reactions = derived(Reactions, batch=_reactions_to)
    permalink = derived(URL, batch=_permalinks)


@service.entity(table="channel_members", prefix="mem")
class Membership:
    """A user's membership of a channel or direct message."""

    id: MembershipId
    channel_id: ChannelId = field(index=True)
    user_id: UserId = field(index=True, role="member")
    joined_at: DateTime


@service.entity(table="reactions", prefix="rx")
class Reaction:
    """One user's emoji reaction to a message."""

    id: ReactionId
    message_id: MessageId = field(index=True)
    name: str
    user_id: UserId = field(role="author")
    created_at: DateTime


def _record(ctx: ToolContext, cls: type[Any], record: Any) -> dict[str, Any]:
    """A record as a tool returns it, for results that hold records inside a summary or add to them."""
    return present_records(ctx.conn, runtime_of(cls), [record])[0]


def _record_with(cls: type[Any], **extra: dict[str, Any]) -> Any:
    """The result type of a record of ``cls`` returned with extra fields (given by their JSON schemas)."""
    schema = copy.deepcopy(runtime_of(cls).schema)
    schema["properties"].update(extra)
    schema["required"] = [*schema["required"], *extra]
    return Annotated[dict[str, Any], WithJsonSchema(schema)]


MessageRecord = Annotated[dict[str, Any], WithJsonSchema(runtime_of(Message).schema)]
ChannelDetail = _record_with(Channel, members={"type": "array", "items": MemberOut.model_json_schema()})


class ThreadOut(BaseModel):
    parent: MessageRecord
    replies: list[MessageRecord] = Field(description="Replies, oldest first")
    total: int = Field(description="How many replies the thread has")
    next_cursor: str | None


# -- rules ---------------------------------------------------------------------------------------


def _me(ctx: ToolContext) -> User:
    """The user signed in to the workspace: the one we act for."""
    return ctx.get(User, _workspace(ctx).user_id)


def _is_member(ctx: ToolContext, channel_id: str, user_id: str) -> bool:
    return ctx.exists(Membership, channel_id=channel_id, user_id=user_id)


def _channel(ctx: ToolContext, ref: str) -> Channel:
    """A channel by id (chan_0003, dm_0001) or name, with or without the leading #."""
    ref = ref.strip()
    channel = ctx.fetch(Channel, ref) or ctx.find(Channel, name=ref.lstrip("#").lower())
    if channel is None:
        raise ToolError.not_found("channel", ref, "Use list_channels to find channel names and ids.")
    return channel


def _label(channel: Channel) -> str:
    return f"#{channel.name}" if channel.name else f"direct message {channel.id}"


def _visible(ctx: ToolContext, channel: Channel) -> None:
    """Private channels and direct messages are readable only by their members."""
    if channel.kind != "public" and not _is_member(ctx, channel.id, _me(ctx).id):
        raise ToolError.permission_denied(
            f"{_label(channel)} is private and you are not a member; ask a member to invite you."
        )


def _not_archived(channel: Channel, action: str) -> None:
    if channel.archived:
        raise ToolError.invalid_state(
            f"{_label(channel)} is archived, so you cannot {action}; unarchive_channel it first."
        )


def _must_be_member(ctx: ToolContext, channel: Channel, action: str) -> None:
    if not _is_member(ctx, channel.id, _me(ctx).id):
        how = "join_channel it first" if channel.kind == "public" else "ask a member to invite you"
        raise ToolError.permission_denied(f"You are not a member of {_label(channel)}, so you cannot {action}; {how}.")


def _user_by_email(ctx: ToolContext, email: str) -> User:
    user = ctx.find(User, email=email.strip().lower())
    if user is None:
        raise ToolError.not_found(
            "user", email, "No workspace member has that email (only the team is in this workspace); see list_users."
        )
    return user


def _join(ctx: ToolContext, channel: Channel, users: list[User]) -> None:
    ctx.insert_many([
        Membership(id=ctx.new_id("mem"), channel_id=channel.id, user_id=u.id, joined_at=ctx.now_iso) for u in users
    ])


def _live_message(ctx: ToolContext, message_id: str) -> Message:
    message = _get_message(ctx, message_id)
    if message.deleted:
        raise ToolError.invalid_state(f"Message {message_id} was deleted.")
    return message


def _get_message(ctx: ToolContext, message_id: str) -> Message:
    return ctx.get(Message, message_id, hint="Use get_channel_history or search_messages to find message ids.")


def _own_message(ctx: ToolContext, message_id: str, action: str) -> Message:
    message = _live_message(ctx, message_id)
    if message.user_id != _me(ctx).id:
        raise ToolError.permission_denied(
            f"Message {message_id} was posted by someone else; you can {action} only your own messages."
        )
    _not_archived(_channel(ctx, message.channel_id), f"{action} messages in it")
    return message


def _clean_text(text: str) -> str:
    if not text.strip():
        raise ToolError.invalid_argument("text must not be empty.")
    if len(text) > MESSAGE_MAX:
        raise ToolError.invalid_argument(f"text is {len(text)} characters; a message can have at most {MESSAGE_MAX}.")
    return text.strip()


def _readable(q: Query[Message], me: User) -> Query[Message]:
    """Messages in public channels, and in private ones and direct messages ``me`` is in."""
    return q.where_sql(
        "channel_id IN (SELECT id FROM channels WHERE kind = 'public') "
        "OR channel_id IN (SELECT channel_id FROM channel_members WHERE user_id = ?)",
        me.id,
    )


#: Messages a channel's history shows: top-level or broadcast, and deleted ones only as thread tombstones.
_SHOWN_IN_CHANNEL = (
    "(thread_parent_id IS NULL OR broadcast = 1) AND (deleted = 0 OR EXISTS "
    "(SELECT 1 FROM messages AS reply WHERE reply.thread_parent_id = messages.id AND reply.deleted = 0))"
)


def _post(
    ctx: ToolContext, channel: Channel, text: str, parent: Message | None = None, broadcast: bool = False
) -> Message:
    message = Message(
        id=ctx.new_id("msg"), channel_id=channel.id, user_id=_me(ctx).id, text=_clean_text(text),
        thread_parent_id=parent.id if parent else None, broadcast=broadcast, posted_at=ctx.now_iso,
    )
    return ctx.insert(message)


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


# -- seed: what people write, per channel theme --------------------------------------------------

#: What customers run into, in the words colleagues relay them with.
_ISSUES = (
    "cannot log in since the last update", "says their exports time out", "needs their billing address changed",
    "asked for a refund on an unused seat", "reports the API returning 500 errors", "wants to add five more users",
    "says the reports page is slow", "lost access after an SSO change", "gets duplicate notification emails",
    "cannot find last month's invoice in the portal", "says the mobile app crashes on start",
    "wants the data export in CSV", "sees the wrong time zone on their dashboards",
)
_FIXES = (
    "a misconfigured SSO domain", "an expired API key", "a browser extension blocking the page", "a stale cache",
    "a permissions setting on their side", "a typo in the billing email", "a sync job that had stopped",
)
_REACTIONS = ("+1", "eyes", "white_check_mark", "tada", "pray", "rocket", "heart", "raised_hands")
_OFFERINGS = ("subscriptions", "services", "usage")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_LUNCH = ("tacos", "sushi", "the Thai place", "pizza", "the salad bar", "dumplings", "the new deli")


class _Writer:
    """What colleagues post, drawn from the world's records as they stood when each message was posted."""

    def __init__(self, world: World, rng: Random) -> None:
        self.world, self.rng = world, rng
        self.deals = commerce_plan(world).deals
        self.refunds = [(o, r) for o in commerce_plan(world).orders for r in o.refunds]
        self.jobs = [j for j in staff_plan(world).jobs if j.status == "open"]
        self.hires = [e for e in staff_plan(world).employees if not e.team]

    def facts(self, at: datetime, org_id: str | None) -> dict[str, Any]:
        world, rng = self.world, self.rng
        customers = [p for p in world.customers if p.organisation_id == org_id] or list(world.customers)
        person, place = rng.choice(customers), rng.choice(world.places)
        product = rng.choice([p for p in world.products if p.category in _OFFERINGS])
        supply = rng.choice([p for p in world.products if p.category not in _OFFERINGS])
        colleague = rng.choice(world.team)
        org = world.organisation(person.organisation_id)
        return {
            "name": person.name, "first": person.first_name, "email": person.email, "phone": person.phone,
            "job": person.job_title, "org": org.name, "org_id": org.id, "org_address": org.address,
            "product": product.name, "sku": product.sku, "supply": supply.name, "supply_sku": supply.sku, "place": place.name, "place_address": place.address,
            "colleague": colleague.name, "colleague_first": colleague.first_name, "role": colleague.job_title,
            "issue": rng.choice(_ISSUES), "fix": rng.choice(_FIXES), "weekday": rng.choice(_WEEKDAYS),
            "lunch": rng.choice(_LUNCH), "home": world.home.name,
            "version": f"{rng.randint(2, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            **industry_facts(rng, org.industry),
        }

    def post(self, theme: str, at: datetime, org_id: str | None) -> str:
        facts = self.facts(at, org_id)
        options = [o for o in (make(self, at, facts) for make in _POSTS[theme]) if o is not None]
        template, extra = self.rng.choice(options)
        return write(self.rng, template, {**facts, **extra})

    def reply(self, theme: str, at: datetime, to_first: str) -> str:
        facts = {**self.facts(at, None), "to": to_first, "action_short": self.rng.choice(("nice", "great work", "thanks"))}
        return write(self.rng, self.rng.choices(_REPLIES[theme], weights=(6, 3, 1))[0], facts)

    # records as they stood at ``at``
    def overdue(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        day = at.date().isoformat()
        due = [i for i in self.world.plan.overdue_on(day) if i.status != "DRAFT"]
        if not due:
            return None
        inv = self.rng.choice(due)
        days = (at.date() - datetime.fromisoformat(inv.due_date).date()).days
        org = self.world.organisation(inv.organisation_id)
        return (
            "[Heads up|FYI|Chasing this one|Flagging]: [invoice |]{inv} for {due_org} ({due_amount}) is {days} "
            "day{s} overdue. [I'll email {due_first} today.|Sending {due_first} a reminder.|Can sales give them a nudge?|"
            "Adding it to the month-end list.|Anyone know if they changed AP contacts?]",
            {"inv": inv.number, "due_org": org.name, "due_amount": money(inv.total, self.world.currency), "days": days,
             "s": "" if days == 1 else "s", "due_first": inv.billing_name.split()[0]},
        )

    def paid(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        end = at.date()
        found = self.world.plan.payments_between((end - timedelta(days=12)).isoformat(), (end - timedelta(days=1)).isoformat())
        if not found:
            return None
        found = tuple((i, p) for i, p in found if p.amount == i.total) or found  # a payment in full reads plainly
        inv, payment = self.rng.choice(found)
        how = {"card": "Card payment", "bank_transfer": "Bank transfer", "cheque": "Cheque"}[payment.method]
        return (
            "{how} of {paid_amount} [received|in|landed] from {paid_org} for {inv}. [Matched it in the books.|"
            "Marked it in accounting.|Reconciled.|That's one off the overdue list.|]",
            {"how": how, "paid_amount": money(payment.amount, self.world.currency), "inv": inv.number,
             "paid_org": self.world.organisation(inv.organisation_id).name},
        )

    def refunded(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        stamp = self.world.now_dt.strftime("%Y-%m-%dT%H:%M:%SZ") if at >= self.world.now_dt else at.strftime("%Y-%m-%dT%H:%M:%SZ")
        done = [(o, r) for o, r in self.refunds if r.created_at <= stamp and r.created_at >= (at - timedelta(days=20)).strftime("%Y-%m-%dT%H:%M:%SZ")]
        if not done:
            return None
        order, refund = self.rng.choice(done)
        return (
            "[Refunded|Refund done:|Processed a refund of] {refund_amount} [on|for] order {order}[ ({refund_reason})|]. "
            "[{customer_first} has been told.|Customer emailed.|Logged it in the CRM.|]",
            {"refund_amount": money(refund.amount, self.world.currency), "order": order.name,
             "refund_reason": refund.reason.lower(), "customer_first": order.customer.first_name},
        )

    def won(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        """News of a deal won that day (or the day before, said so): never a deal won weeks ago as if it were new."""
        day, yesterday = at.date().isoformat(), (at.date() - timedelta(days=1)).isoformat()
        won = [d for d in self.deals if d.stage == "won" and d.close_date in (day, yesterday)]
        if not won:
            return None
        deal = self.rng.choice(won)
        news = ("[{won_org} signed!|Signed: {won_org}.|We won {won_org}!|{won_org} is in!]" if deal.close_date == day
                else "[{won_org} signed yesterday!|Signed yesterday: {won_org}.|We won {won_org} yesterday!]")
        return (
            news + " [{deal}|The {deal}] [for|at|worth] "
            "{deal_amount}. [Great team effort.|Thanks {colleague_first} for the demo.|Onboarding kicks off next week.|]",
            {"won_org": d_org(self.world, deal.organisation_id), "deal": deal.name,
             "deal_amount": money(deal.amount, self.world.currency)},
        )

    def kickoff(self, at: datetime, org_id: str | None) -> tuple[str, dict[str, Any]] | None:
        """A kickoff booked with a customer that won a deal in the six weeks before: why there is a kickoff."""
        day, since = at.date().isoformat(), (at.date() - timedelta(weeks=6)).isoformat()
        if not any(d.organisation_id == org_id and d.stage == "won" and since <= d.close_date <= day for d in self.deals):
            return None
        return ("[Kickoff|The kickoff] with {org} [booked|is set for {weekday}]; main contact {name} <{email}>.", {})

    def proposal(self, at: datetime, org_id: str | None) -> tuple[str, dict[str, Any]] | None:
        day = at.date().isoformat()
        sent = [p for p in self.world.plan.proposals if p.date <= day and (org_id is None or p.organisation_id == org_id)]
        if not sent:
            return None
        proposal = self.rng.choice(sent)
        contact = next(p for p in self.world.people if p.email == proposal.prepared_for_email)
        return (
            "[Sent|Just sent|Emailed] [our|the] proposal {proposal} to {p_first} at {p_org}[: {p_total}| ({p_total})| for "
            "{p_total}]. [Following up {weekday}.|They want to decide before {rush}.|Fingers crossed.|I'll chase next week.|]",
            {"proposal": proposal.number, "p_first": contact.first_name,
             "p_org": self.world.organisation(proposal.organisation_id).name,
             "p_total": money(proposal.total, self.world.currency)},
        )

    def biggest_open_deal(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        open_deals = [d for d in self.deals if d.stage in ("proposal", "negotiation")]
        if not open_deals:
            return None
        deal = max(open_deals, key=lambda d: d.amount)
        return (
            "[Biggest open deal|Our largest deal in flight|Top of the pipeline] is {deal} ({deal_amount}). "
            "[Can we get it over the line before {rush}?|Who is on the next call?|Let's review it {weekday}.]",
            {"deal": deal.name, "deal_amount": money(deal.amount, self.world.currency)},
        )

    def job(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        if not self.jobs:
            return None
        job = self.rng.choice(self.jobs)
        return (
            "[A few|Two|Several] [strong|promising|good] candidates for the {job_title} role [this week|so far]. "
            "[Can someone cover the {weekday} interview loop?|Scorecards by {weekday} please.|I'll send invites today.|]",
            {"job_title": job.title},
        )

    def welcome(self, at: datetime) -> tuple[str, dict[str, Any]] | None:
        day = at.date().isoformat()
        new = [e for e in self.hires if e.hire_date <= day and e.hire_date >= (at - timedelta(days=40)).date().isoformat()]
        if not new:
            return None
        hire = self.rng.choice(new)
        return (
            "[Please welcome|A warm welcome to|Say hi to] {hire}, who joins [us|the {dept} team] as {hire_title}! "
            "[Coffee is on me {weekday}.|Drop by and say hello.|]",
            {"hire": hire.name, "dept": hire.department, "hire_title": hire.job_title},
        )


def d_org(world: World, organisation_id: str) -> str:
    return world.organisation(organisation_id).name


def _plain(template: str) -> Any:
    return lambda writer, at, facts: (template, {})


#: Per theme: the kinds of post, each a template of its own or a story drawn from the world's records.
_POSTS: dict[str, tuple[Any, ...]] = {
    "sales": (
        _plain("[Call|Good call|Intro call] with {name} ({job}) at {org} [went well|was promising|was useful]: they "
               "[want|are looking at|asked about] {product} for {site}. [Quote to follow.|I'll send pricing.|"
               "They need a demo first.|]"),
        _plain("[Heads up|FYI|Watch out]: {org} is [evaluating|talking to|trialling] a competitor[ before {rush}|]. "
               "{name} [is the decision maker|makes the call|signs off on it]."),
        _plain("{name} at {org} [asked for|wants] a demo of {product} [next week|on {weekday}|before {rush}]. "
               "[Who can take it?|Anyone free?|Can someone cover?]"),
        lambda w, at, f: w.proposal(at, None),
        lambda w, at, f: w.won(at),
    ),
    "support": (
        _plain("[New escalation|Escalation|Urgent one] from {name} at {org}: [they |]{issue}. [Their number is "
               "{phone}.|Reach them on {phone}.|They asked for a call back on {phone}.]"),
        _plain("[Closed|Wrapped up|Resolved] [the ticket|the case|the issue] for {email}; [root cause was|it was|turned "
               "out to be] {fix}."),
        _plain("{name} ({org}) {issue}[ - it's holding up {work}| and it's hitting {clients}|]. [Can someone from "
               "engineering take a look?|Engineering, any ideas?|Who can dig in?]"),
        _plain("[Reminder|Heads up]: {org} [has|is on] priority support[, respond within 4 hours|; first reply within "
               "4 hours| - please answer them first]."),
        _plain("[Quiet|Busy|Steady] [morning|day] in the queue so far; [most tickets are|lots of] [password resets|"
               "billing questions|export questions|SSO questions][ from {clients}|]."),
    ),
    "finance": (
        lambda w, at, f: w.overdue(at),
        lambda w, at, f: w.overdue(at),
        lambda w, at, f: w.paid(at),
        lambda w, at, f: w.refunded(at),
        _plain("[Month-end close starts|We start the month-end close|Close kicks off] {weekday}[; please submit "
               "expenses| - expenses in by then please|. Receipts in Expensify, please]."),
        _plain("{name} from {org} asked for [a copy of|copies of] their [last three invoices|latest statement|"
               "invoices this year]. [On it.|Can someone send them?|I'll pull them from accounting.]"),
    ),
    "office": (
        _plain("{place} ({place_address}) is [out of action|closed|unavailable] on {weekday} [for maintenance|for "
               "cleaning|for an inspection]."),
        _plain("[New|Fresh] {supply} [order|delivery] ({supply_sku}) arrives {weekday}[; shout if you need one|]."),
        _plain("[Lunch|Team lunch] on {weekday} [at|from] {place}, {place_address}: {lunch}. [Reply in thread if "
               "you're in.|Thumbs up if you're coming.|]"),
        _plain("[Printer on the second floor|The coffee machine|The meeting room screen|The door badge reader] is "
               "[fixed|working again|back]. [Thanks {colleague_first}!|]"),
        _plain("[We're low on|Running out of|Almost out of] {supply}; [ordering more|I've put in an order|restocking "
               "{weekday}]."),
    ),
    "engineering": (
        _plain("[Deploy of|Shipped|Released] v{version}[ went out| is live| to production][ - no errors so far|]."),
        _plain("API usage for {org} [spiked|jumped|went up] [4x|threefold|sharply] overnight; [looking into it|checking "
               "whether it's {work}|I've opened a ticket]."),
        _plain("[Flaky test|Another flaky test|A flaky test] in the [billing|export|auth] suite again[, quarantining "
               "it|; I'll fix it after standup|]."),
        _plain("[Incident|Postmortem to follow]: [elevated error rates|slow responses|timeouts] for {org} [this "
               "morning|overnight|for about 40 minutes][; it hit {work}|]."),
        _plain("[Code freeze starts|Freeze from] {weekday} for the release[; merge what you can by then|]."),
    ),
    "product": (
        _plain("Feedback from {name} at {org}: they'd [pay more for|love|need] {product} with [SSO|audit logs|an "
               "API|offline mode][ for {site}|]."),
        _plain("[Draft roadmap|The roadmap draft] for next quarter is in the shared folder; [comments by {weekday}|"
               "please comment by {weekday}|review before {weekday}]."),
        _plain("{org} is asking about [bulk pricing|volume discounts|an annual plan] on {product} ({sku})[ ahead of "
               "{rush}|]."),
    ),
    "general": (
        lambda w, at, f: w.welcome(at),
        _plain("[All-hands|The all-hands] this month is at {place}, {place_address}[; lunch after|]."),
        _plain("[Reminder|Friendly reminder]: [timesheets are due|please log your hours|expense reports are due] by "
               "{weekday}[, thanks!|.|]"),
        _plain("[Big thanks|Shout-out|Kudos] to {colleague} for [landing the quarter|the customer workshop|covering the "
               "support queue|sorting out the office move]!"),
        _plain("The office [closes early|is closed] on {weekday} [for maintenance|for the fire drill|for the "
               "deep clean]."),
    ),
    "leadership": (
        lambda w, at, f: w.biggest_open_deal(at),
        _plain("[Board deck draft|The board pack|Draft slides for the board] [is|are] ready for review[; comments by "
               "{weekday}|]."),
        _plain("[Budget request|Proposal]: two new [support|sales|engineering] hires [next quarter|before {rush}]. "
               "[Thoughts?|Can we discuss on {weekday}?|]"),
        _plain("Should we offer {org} a discount to close [this month|before {rush}]? [{name} is asking for one.|They "
               "mentioned budget limits.|]"),
    ),
    "hiring": (
        lambda w, at, f: w.job(at),
        lambda w, at, f: w.job(at),
        _plain("[Can someone cover|Who can take] the {weekday} interview loop? [I'm out that day.|Two slots left.|]"),
        _plain("[Updated|Refreshed|Rewrote] the job description for the {role} role[; have a look|, feedback "
               "welcome|]."),
    ),
    "random": (
        _plain("[Anyone up for coffee|Coffee run] at [3|half past two|4]? [☕|]"),
        _plain("The new {supply} [is excellent|is great|was worth it|is a game changer]."),
        _plain("[Happy Friday everyone!|Happy Friday!|Have a good weekend all!] [🎉|]"),
        _plain("Who left [the umbrella|a blue jacket|a water bottle] in {place}?"),
        _plain("[Lunch recommendations|Any good lunch spots] near the office? [Craving {lunch}.|Not {lunch} again.|]"),
        _plain("[Great game last night.|Did anyone watch the match?|What a finish last night.]"),
    ),
    "customer": (
        lambda w, at, f: w.kickoff(at, f["org_id"]),
        _plain("{name} ({job}) wants to [expand to|add|try] {product} ({sku})[ for {site}|]."),
        _plain("{org}'s office is at {org_address} if anyone [visits|is nearby|drops by]."),
        _plain("{name} confirmed the renewal[; call them on {phone} with questions|. Questions to {phone}|]."),
        lambda w, at, f: w.proposal(at, f["org_id"]),
    ),
}
#: A thread reply: an acknowledgement, what the replier will do (per theme), when, and perhaps a last word.
_ACK = ("[On it|Will do|Got it|Thanks|Thank you|Cheers|Nice one|Good catch|Makes sense|Agreed|Sounds good|Noted|"
        "Perfect|Great|Ok|Understood][, {to}|][.|!]")
_WHEN = "[today|this afternoon|after lunch|before end of day|tomorrow morning|first thing tomorrow|on {weekday}|]"
_LAST = "[|Let's discuss in the weekly sync.|Ping me if you need anything.|Shout if it gets worse.|I'll post here once done.|]"
_ACTIONS: dict[str, str] = {
    "any": "[I'll|Going to|Let me] [follow up|take a look|check|pick it up|sort it out|loop back] [with them|on my side|"
           "with {colleague_first}|]",
    "sales": "[I can take the call|Happy to join the demo|I'll update the CRM|I'll send them pricing|I'll ask {first} for "
             "a date]",
    "support": "[I'm checking the logs|I'll call them back|I'll reply on the ticket|I'll check their account|I'll ask "
               "engineering]",
    "finance": "[I'll match it in the books|I'll check the invoice|I'll loop in accounting|I'll send the reminder|"
               "I'll update the ledger]",
    "office": "[I'm in|Count me in|I'll sort the booking|I'll order more|I'll tell the landlord]",
    "engineering": "[I'll watch the dashboards|I'll check the alerts|I'll review the PR|I'll take the rollback if "
                   "needed|I'll write the postmortem]",
    "product": "[I'll add it to the backlog|I'll raise it at the roadmap review|I'll write it up|I'll ask {first} for "
               "details]",
    "general": "[Welcome aboard|Great to have you|I'll be there|I'll bring snacks]",
    "leadership": "[I'll prepare the numbers|Let's decide at the next review|I'll draft a proposal|I'll talk to "
                  "{colleague_first}]",
    "hiring": "[I can cover the morning slot|I'll take one of the interviews|I'll send my scorecard|I'll review the "
              "CVs]",
    "random": "[I'm in|Count me in|Try {lunch}|Same here|Not for me]",
    "customer": "[I'll let the team know|I'll update their record|I'll call {first}|I'll prepare the kickoff deck]",
}
_REPLIES: dict[str, tuple[str, ...]] = {
    theme: (f"{_ACK} {action} {_WHEN}. {_LAST}", f"{_ACK} {_ACTIONS['any']} {_WHEN}. {_LAST}",
            "[+1|Agreed|Same here|Seconded][!|.| - {action_short}]")
    for theme, action in _ACTIONS.items()
}


class _ChannelSpec(NamedTuple):
    name: str
    kind: ChannelKind
    theme: str  # a key of _THEMES
    roles: tuple[str, ...] | None  # the team roles that are members; None for everyone
    messages: int
    archived: bool
    topic: str
    org_id: str | None = None  # for a customer channel: the company it is about


_OPS, _FIN, _SALES = "operations manager", "finance lead", "sales lead"
_ENG, _PM = "engineering lead", "product manager"
_CHANNELS: tuple[_ChannelSpec, ...] = (
    _ChannelSpec("general", "public", "general", None, 14, False, "Company-wide announcements and work-based matters"),
    _ChannelSpec("random", "public", "random", None, 12, False, "Non-work banter and water-cooler talk"),
    _ChannelSpec("announcements", "public", "general", None, 6, False, "Company news, one post per announcement"),
    _ChannelSpec(
        "sales", "public", "sales", (_OPS, _SALES, "account executive", _PM, _FIN), 30, False,
        "Pipeline, deals and customer calls",
    ),
    _ChannelSpec(
        "support", "public", "support", (_OPS, "support lead", "support agent", _ENG, _PM), 30, False,
        "Customer escalations; P1s in the first line",
    ),
    _ChannelSpec(
        "engineering", "public", "engineering", (_ENG, _PM, "support lead"), 18, False,
        "Deploys, incidents and code reviews",
    ),
    _ChannelSpec(
        "finance", "public", "finance", (_OPS, _FIN, "accountant"), 20, False, "Invoices, refunds and month-end close"
    ),
    _ChannelSpec("office", "public", "office", None, 14, False, "Office logistics, supplies and lunches"),
    _ChannelSpec(
        "product", "public", "product", (_PM, _ENG, _SALES, "support lead"), 14, False, "Roadmap and customer feedback"
    ),
    _ChannelSpec(
        "leadership", "private", "leadership", (_OPS, _FIN, _SALES, _ENG, _PM), 12, False, "Leadership team only"
    ),
    _ChannelSpec(
        "hiring", "private", "hiring", (_OPS, _ENG, "office manager"), 8, False, "Open roles and interview loops"
    ),
    _ChannelSpec("eng-oncall", "private", "engineering", (_ENG, "support lead"), 8, False, "On-call handovers"),
    _ChannelSpec("project-phoenix", "public", "engineering", (_OPS, _ENG, _PM), 8, True, "Phoenix migration (done)"),
    _ChannelSpec("offsite-2024", "public", "office", None, 8, True, "Planning the 2024 team offsite"),
)
_CUSTOMER_CHANNEL_ROLES = (_OPS, _SALES, "account executive", "support lead")
#: Colleagues the user has a direct-message conversation with, and what they talk about there.
_DM_ROLES = ("finance lead", "sales lead", "office manager", "support lead")
_DM_THEMES = ("sales", "finance", "office", "support")


@service.seeder
def seed(ctx: ToolContext) -> None:
    world, rng, now = ctx.world, ctx.rng("seed"), ctx.now
    users = {
        person.job_title: User(
            id=ctx.new_id("usr"), username=person.username, display_name=person.first_name, real_name=person.name,
            email=person.email, title=person.job_title, phone=person.phone,
            is_admin=person.job_title in ("operations manager", "office manager"),
            status_text=rng.choice((None, None, "In meetings", "Working remotely", "On a customer call")),
        )
        for person in world.team
    }
    ctx.insert_many(list(users.values()))
    everyone, me = list(users.values()), users[world.user.job_title]
    domain = world.home.domain.split(".")[0]
    ctx.insert(Workspace(id=ctx.new_id("ws"), name=world.home.name, domain=domain,
                         url=f"https://{domain}.chat.example/", user_id=me.id))
    first_names = {u.id: u.display_name for u in everyone}

    specs = list(_CHANNELS)
    for org in rng.sample(list(world.organisations[1:]), 3):  # three accounts get a channel of their own
        slug = re.sub(r"[^a-z0-9]+", "-", org.name.lower()).strip("-")[:60]
        specs.append(_ChannelSpec(f"customer-{slug}", "public", "customer", _CUSTOMER_CHANNEL_ROLES, 10, False,
                                  f"Shared notes on the {org.name} account", org.id))
    # (channel, members, theme, customer org, how many messages)
    channels: list[tuple[Channel, list[User], str, str | None, int]] = []
    for name, kind, theme, roles, count, archived, topic, org_id in specs:
        members = everyone if roles is None else [users[r] for r in roles]
        created = now - timedelta(days=rng.randint(200, 700))
        channel = Channel(
            id=ctx.new_id("chan"), name=name, kind=kind, topic=topic, purpose=topic, creator_id=members[0].id,
            created_at=ctx.iso(created), archived=archived,
            archived_at=ctx.iso(now - timedelta(days=rng.randint(30, 60))) if archived else None,
        )
        channels.append((channel, members, theme, org_id, count))
    for role in _DM_ROLES:
        dm = Channel(id=ctx.new_id("dm"), kind="im", creator_id=me.id,
                     created_at=ctx.iso(now - timedelta(days=rng.randint(100, 400))))
        channels.append((dm, [me, users[role]], rng.choice(_DM_THEMES), None, 6))
    ctx.insert_many([c for c, *_ in channels])
    ctx.insert_many([
        Membership(id=ctx.new_id("mem"), channel_id=c.id, user_id=u.id, joined_at=c.created_at)
        for c, members, *_ in channels for u in members
    ])

    writer = _Writer(world, rng)
    themes = {channel.id: theme for channel, _, theme, _, _ in channels}
    top_level: list[tuple[Message, list[User]]] = []
    threads: list[tuple[Message, list[User]]] = []
    quiet_after: dict[str, datetime] = {}
    for channel, members, theme, org_id, count in channels:
        # Archived channels went quiet before they were archived.
        newest = _parse(channel.archived_at) if channel.archived_at else now
        quiet_after[channel.id] = newest
        # Posted during working hours over the last month (or the month before archiving).
        stamps = sorted(
            min(
                (newest - timedelta(days=rng.randint(0, 30))).replace(
                    hour=rng.randint(8, 17), minute=rng.randint(0, 59), second=0
                ),
                newest - timedelta(minutes=rng.randint(30, 120)),  # nobody posted a moment ago
            )
            for _ in range(count)
        )
        for stamp in stamps:
            author = rng.choice(members)
            text = writer.post(theme, stamp, org_id)
            message = Message(id=ctx.new_id("msg"), channel_id=channel.id, user_id=author.id, text=text,
                              posted_at=ctx.iso(stamp))
            top_level.append((message, members))
            if rng.random() < 0.35:
                threads.append((message, members))
    # Replies come after their parent, never after now or after the channel was archived.
    replies: list[tuple[Message, list[User]]] = []
    for parent, members in threads:
        at = _parse(parent.posted_at)
        for _ in range(rng.randint(1, 4)):
            at = at + timedelta(minutes=rng.randint(2, 240))
            if at >= quiet_after[parent.channel_id]:
                break
            reply = Message(
                id=ctx.new_id("msg"), channel_id=parent.channel_id, user_id=rng.choice(members).id,
                text=writer.reply(themes[parent.channel_id], at, first_names[parent.user_id]), thread_parent_id=parent.id,
                broadcast=rng.random() < 0.05, posted_at=ctx.iso(at),
            )
            replies.append((reply, members))
    ctx.insert_many([m for m, _ in top_level + replies])
    # Reactions: on every thread parent, every fifth reply and a fifth of the other messages.
    threaded = {m.id for m, _ in threads}
    others = [(m, members) for m, members in top_level if m.id not in threaded and rng.random() < 0.2]
    seen: set[tuple[str, str, str]] = set()
    reactions = []
    for message, members in threads + replies[::5] + others:
        for emoji in rng.sample(_REACTIONS, rng.randint(1, 2)):
            for user in rng.sample(members, rng.randint(1, min(2, len(members)))):
                if (message.id, emoji, user.id) not in seen:
                    seen.add((message.id, emoji, user.id))
                    reactions.append(Reaction(id=ctx.new_id("rx"), message_id=message.id, name=emoji, user_id=user.id,
                                              created_at=message.posted_at))
    ctx.insert_many(reactions)


# -- users ---------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look {query} up in the team chat", "find {query} in the chat workspace"))
def list_users(ctx: ToolContext, query: str | None = None, limit: Limit = 20, cursor: Cursor = None) -> Page[User]:
    """List the workspace's users (the team), optionally matching a name, handle, email or title.

    Args:
        query: Words to match against the real name, display name, username (an @handle works too), email or title
            (case-insensitive; every word must match).
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    words = " ".join(w.lstrip("@") for w in query.split()) if query else None
    return ctx.query(User).search(words).order_by("real_name").page(limit, cursor)


@service.tool("read", intent="find", phrases=("find the colleague whose email is {email} in the team chat",))
def lookup_user_by_email(ctx: ToolContext, email: EmailAddress) -> User:
    """Find the workspace user with exactly this email address.

    Args:
        email: The email address to look up, e.g. a colleague's work email.
    """
    return _user_by_email(ctx, email)


# -- channels ------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check which chat channels there are about {query}",))
def list_channels(
    ctx: ToolContext,
    query: str | None = None,
    kind: ChannelKind | None = None,
    include_archived: bool = False,
    member_only: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Channel]:
    """List the channels you can see: every public channel, plus the private channels and direct messages you are in.

    Channels come first, by name, then direct messages.

    Args:
        query: Words to match against the channel name (with or without #) or topic (case-insensitive).
        kind: Only public channels, private channels or im (direct messages).
        include_archived: Also list archived channels (hidden by default).
        member_only: Only channels you are a member of.
        limit: Maximum number of channels to return (1-100).
        cursor: next_cursor from a previous page.
    """
    mine = "id IN (SELECT channel_id FROM channel_members WHERE user_id = ?)"
    me = _me(ctx).id
    q = ctx.query(Channel).where_sql(f"kind = 'public' OR {mine}", me).filter(kind=kind)
    q.search(" ".join(w.lstrip("#") for w in query.split()) if query else None)
    if not include_archived:
        q.where(archived=False)
    if member_only:
        q.where_sql(mine, me)
    # Direct messages have no name and come last; the query orders by name only (SQLite puts NULL first),
    # and a workspace has a few dozen channels, so the page is cut here.
    return page_of(sorted(q.order_by("name").all(), key=lambda c: c.name is None), limit, cursor)


@service.tool("read", intent="get", phrases=("check who is in {channel}", "open the {channel} channel"))
def get_channel(ctx: ToolContext, channel: ChannelName) -> ChannelDetail:
    """Get one channel with its topic, state and members.

    Args:
        channel: The channel's name (with or without #, e.g. sales) or id (e.g. chan_0004, dm_0001).
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    members = ctx.query(User).where_sql(
        "id IN (SELECT user_id FROM channel_members WHERE channel_id = ?)", found.id
    ).order_by("username").all()
    return {
        **_record(ctx, Channel, found),
        "members": [{"username": u.username, "real_name": u.real_name, "email": u.email, "title": u.title}
                    for u in members],
    }


@service.tool(
    "write",
    intent="create",
    phrases=("create a chat channel called {name}", "set up a {name} channel in the team chat"),
)
def create_channel(
    ctx: ToolContext,
    name: ChannelName,
    is_private: bool = False,
    topic: str | None = None,
    member_emails: list[EmailAddress] | None = None,
) -> ChannelDetail:
    """Create a public or private channel; you become its first member.

    Names are lowercase letters, digits, hyphens and underscores (at most 80), with no spaces, and
    must not be taken by any channel, archived ones included.

    Args:
        name: The new channel's name without #, e.g. customer-brightline or q3-launch.
        is_private: Create a private channel (only invited members can see it).
        topic: The channel's topic (at most 250 characters).
        member_emails: Colleagues to add right away, by email.
    """
    clean = name.strip().lstrip("#")
    if not _CHANNEL_NAME.match(clean):
        suggestion = re.sub(r"[^a-z0-9_-]+", "-", clean.lower()).strip("-")[:80]
        raise ToolError.invalid_argument(
            f"Channel name {name!r} is not allowed: use lowercase letters, digits, - and _, no spaces "
            f"(for example {suggestion!r})."
        )
    existing = ctx.find(Channel, name=clean)
    if existing is not None:
        state = "an archived channel (unarchive_channel it to reuse it)" if existing.archived else "an existing channel"
        raise ToolError.conflict(f"The name {clean!r} is taken by {state} ({existing.id}); choose another name.")
    if topic is not None and len(topic) > TOPIC_MAX:
        raise ToolError.invalid_argument(f"topic can have at most {TOPIC_MAX} characters.")
    me = _me(ctx)
    invitees = [_user_by_email(ctx, e) for e in dict.fromkeys(e.lower() for e in (member_emails or []))]
    channel = ctx.insert(Channel(
        id=ctx.new_id("chan"), name=clean, kind="private" if is_private else "public", topic=topic, creator_id=me.id,
        created_at=ctx.now_iso,
    ))
    _join(ctx, channel, [me] + [u for u in invitees if u.id != me.id])
    return get_channel(ctx, channel.id)


@service.tool("write", intent="delete", phrases=("archive {channel}", "close down the {channel} channel"))
def archive_channel(ctx: ToolContext, channel: ChannelName) -> Channel:
    """Archive a channel: it becomes read-only and hidden from lists by default. #general cannot be archived.

    Args:
        channel: The channel's name (with or without #) or id.
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    if found.kind == "im":
        raise ToolError.invalid_argument("Direct messages cannot be archived.")
    if found.name == GENERAL:
        raise ToolError.permission_denied("#general is the workspace's default channel and cannot be archived.")
    if found.archived:
        raise ToolError.invalid_state(f"{_label(found)} is already archived.")
    return ctx.update(found, archived=True, archived_at=ctx.now_iso)


@service.tool("write", intent="restore", phrases=("unarchive {channel}", "bring {channel} back from the archive"))
def unarchive_channel(ctx: ToolContext, channel: ChannelName) -> Channel:
    """Unarchive an archived channel so people can post in it again.

    Args:
        channel: The archived channel's name (with or without #) or id.
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    if not found.archived:
        raise ToolError.invalid_state(f"{_label(found)} is not archived.")
    return ctx.update(found, archived=False, archived_at=None)


@service.tool("write", intent="invite", phrases=("join {channel}", "join the {channel} channel in the team chat"))
def join_channel(ctx: ToolContext, channel: ChannelName) -> Channel:
    """Join a public channel. Private channels need an invitation from a member instead.

    Args:
        channel: The public channel's name (with or without #) or id.
    """
    found = _channel(ctx, channel)
    me = _me(ctx)
    if found.kind != "public":
        raise ToolError.permission_denied(f"{_label(found)} is not public; ask a member to invite you.")
    _not_archived(found, "join it")
    if _is_member(ctx, found.id, me.id):
        raise ToolError.invalid_state(f"You are already a member of {_label(found)}.")
    _join(ctx, found, [me])
    return found


@service.tool("write", intent="invite", phrases=("add {user_emails} to {channel}", "invite {user_emails} to {channel}"))
def invite_to_channel(ctx: ToolContext, channel: ChannelName, user_emails: list[EmailAddress]) -> ChannelDetail:
    """Add colleagues to a channel you are a member of. Fails, adding nobody, if any of them is already in it.

    Args:
        channel: The channel's name (with or without #) or id.
        user_emails: The emails of the colleagues to add (see lookup_user_by_email).
    """
    found = _channel(ctx, channel)
    if found.kind == "im":
        raise ToolError.invalid_argument("You cannot invite people to a direct message; create_channel instead.")
    _not_archived(found, "invite people")
    _must_be_member(ctx, found, "invite people")
    if not user_emails:
        raise ToolError.invalid_argument("user_emails must list at least one colleague.")
    invitees = [_user_by_email(ctx, email) for email in dict.fromkeys(e.lower() for e in user_emails)]
    for user in invitees:
        if _is_member(ctx, found.id, user.id):
            raise ToolError.invalid_state(f"{user.username} is already in {_label(found)}; leave them out and retry.")
    _join(ctx, found, invitees)
    return get_channel(ctx, found.id)


@service.tool(
    "write", intent="remove", phrases=("remove {user_email} from {channel}", "take {user_email} out of {channel}")
)
def kick_from_channel(ctx: ToolContext, channel: ChannelName, user_email: EmailAddress) -> ChannelDetail:
    """Remove a colleague from a channel you are in.

    Nobody can be removed from #general, and you cannot remove yourself.

    Args:
        channel: The channel's name (with or without #) or id.
        user_email: The email of the member to remove.
    """
    found = _channel(ctx, channel)
    if found.kind == "im":
        raise ToolError.invalid_argument("You cannot remove people from a direct message.")
    if found.name == GENERAL:
        raise ToolError.permission_denied("Nobody can be removed from #general.")
    _not_archived(found, "remove people")
    _must_be_member(ctx, found, "remove people")
    user = _user_by_email(ctx, user_email)
    if user.id == _me(ctx).id:
        raise ToolError.invalid_argument("You cannot remove yourself from a channel.")
    membership = ctx.find(Membership, channel_id=found.id, user_id=user.id)
    if membership is None:
        raise ToolError.invalid_state(f"{user.username} is not a member of {_label(found)}.")
    ctx.delete(membership)
    return get_channel(ctx, found.id)


@service.tool("write", intent="update", phrases=("set the topic of {channel} to {topic}", "change the {channel} topic"))
def set_channel_topic(ctx: ToolContext, channel: ChannelName, topic: str) -> Channel:
    """Set a channel's topic (the line shown under its name). Pass an empty string to clear it.

    Args:
        channel: The channel's name (with or without #) or id; you must be a member and it must not be archived.
        topic: The new topic, at most 250 characters.
    """
    found = _channel(ctx, channel)
    if found.kind == "im":
        raise ToolError.invalid_argument("Direct messages have no topic.")
    _not_archived(found, "change its topic")
    _must_be_member(ctx, found, "change its topic")
    if len(topic) > TOPIC_MAX:
        raise ToolError.invalid_argument(f"topic is {len(topic)} characters; at most {TOPIC_MAX} are allowed.")
    return ctx.update(found, topic=topic.strip() or None)


@service.tool(
    "write",
    intent="create",
    phrases=("open a direct message with {user_email}", "start a private chat with {user_email}"),
)
def open_direct_message(ctx: ToolContext, user_email: EmailAddress) -> Channel:
    """Open (or reuse) your direct-message conversation with a colleague.

    Post to it with post_message(channel=<the returned id>).

    Args:
        user_email: The colleague's email (see lookup_user_by_email).
    """
    me = _me(ctx)
    other = _user_by_email(ctx, user_email)
    if other.id == me.id:
        raise ToolError.invalid_argument("That is your own email; open a direct message with someone else.")
    member = "id IN (SELECT channel_id FROM channel_members WHERE user_id = ?)"
    existing = ctx.query(Channel).where(kind="im").where_sql(member, me.id).where_sql(member, other.id).first()
    if existing is not None:
        return existing
    dm = ctx.insert(Channel(id=ctx.new_id("dm"), kind="im", creator_id=me.id, created_at=ctx.now_iso))
    _join(ctx, dm, [me, other])
    return dm


# -- messages ------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find", phrases=("read the latest messages in {channel}", "catch up on what was said in {channel}")
)
def get_channel_history(
    ctx: ToolContext,
    channel: ChannelName,
    oldest: DateTime | None = None,
    latest: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Message]:
    """A channel's (or direct message's) messages, newest first; thread replies are read with get_thread_replies.

    Args:
        channel: The channel's name (with or without #) or id (dm_... for a direct message).
        oldest: Only messages posted at or after this time (ISO 8601 UTC).
        latest: Only messages posted at or before this time (ISO 8601 UTC).
        limit: Maximum number of messages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    q = ctx.query(Message).where(channel_id=found.id).where_sql(_SHOWN_IN_CHANNEL)
    q.compare("posted_at", ">=", oldest).compare("posted_at", "<=", latest)
    return q.order_by("-posted_at", "-id").page(limit, cursor)


@service.tool("read", intent="get", phrases=("read the replies to {message_id}", "check the thread under {message_id}"))
def get_thread_replies(ctx: ToolContext, message_id: MessageId, limit: Limit = 20, cursor: Cursor = None) -> ThreadOut:
    """A thread: its parent message and the replies, oldest first.

    Args:
        message_id: The thread's parent message id (a reply's id also works: its thread is shown).
        limit: Maximum number of replies to return (1-100).
        cursor: next_cursor from a previous page.
    """
    message = _get_message(ctx, message_id)
    parent = _get_message(ctx, message.thread_parent_id) if message.thread_parent_id else message
    _visible(ctx, _channel(ctx, parent.channel_id))
    q = ctx.query(Message).where(thread_parent_id=parent.id, deleted=False)
    page = q.order_by("posted_at", "id").page(limit, cursor)
    shown = present_records(ctx.conn, runtime_of(Message), [parent, *page.items])
    return ThreadOut(parent=shown[0], replies=shown[1:], total=page.total, next_cursor=page.next_cursor)


@service.tool("write", intent="post", phrases=("post in {channel}: {text}", "write in {channel} that {text}"))
def post_message(ctx: ToolContext, channel: ChannelName, text: Text) -> Message:
    """Post a message to a channel or direct message you are a member of. Archived channels accept no posts.

    Args:
        channel: The channel's name (with or without #) or id; for a direct message, the dm_... id from
            open_direct_message.
        text: The message text (at most 4000 characters).
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    _not_archived(found, "post in it")
    _must_be_member(ctx, found, "post in it")
    return _post(ctx, found, text)


@service.tool(
    "write",
    intent="reply",
    phrases=("reply in the thread of {message_id}: {text}", "answer {message_id} in its thread"),
)
def reply_in_thread(ctx: ToolContext, message_id: MessageId, text: Text, also_send_to_channel: bool = False) -> Message:
    """Reply in the thread of a message (starting the thread if it has none).

    Reply to the thread's parent, not to another reply. The channel must not be archived and you
    must be a member.

    Args:
        message_id: The parent message to reply to.
        text: The reply text (at most 4000 characters).
        also_send_to_channel: Also show the reply in the channel's history.
    """
    parent = _live_message(ctx, message_id)
    if parent.thread_parent_id:
        raise ToolError.invalid_argument(
            f"Message {message_id} is itself a reply; reply to its thread's parent {parent.thread_parent_id} instead."
        )
    found = _channel(ctx, parent.channel_id)
    _visible(ctx, found)
    _not_archived(found, "reply in it")
    _must_be_member(ctx, found, "reply in it")
    return _post(ctx, found, text, parent, also_send_to_channel)


@service.tool("write", intent="update", phrases=("edit {message_id} to say {text}", "correct my message {message_id}"))
def update_message(ctx: ToolContext, message_id: MessageId, text: Text) -> Message:
    """Edit the text of one of your own messages.

    Others' messages, deleted messages and messages in archived channels cannot be edited.

    Args:
        message_id: Your message to edit.
        text: The new text (at most 4000 characters).
    """
    message = _own_message(ctx, message_id, "edit")
    clean = _clean_text(text)
    if clean == message.text:
        raise ToolError.invalid_argument("The new text is the same as the current text.")
    return ctx.update(message, text=clean, edited_at=ctx.now_iso)


@service.tool("write", intent="delete", phrases=("delete the chat message {message_id}",))
def delete_message(ctx: ToolContext, message_id: MessageId) -> Message:
    """Delete one of your own messages. A thread parent with replies stays as "This message was deleted.".

    Args:
        message_id: Your message to delete.
    """
    message = _own_message(ctx, message_id, "delete")
    return ctx.update(message, deleted=True, text=TOMBSTONE, edited_at=ctx.now_iso)


@service.tool(
    "write", intent="tag", phrases=("react to {message_id} with :{name}:", "put a {name} reaction on {message_id}")
)
def add_reaction(ctx: ToolContext, message_id: MessageId, name: str) -> Message:
    """Add an emoji reaction to a message, e.g. white_check_mark to mark it done.

    Args:
        message_id: The message to react to.
        name: The emoji name without colons, e.g. +1, eyes, white_check_mark, tada.
    """
    emoji = name.strip().strip(":").lower()
    if not _EMOJI_NAME.match(emoji):
        raise ToolError.invalid_argument(
            f"{name!r} is not an emoji name; use a name like +1, eyes or white_check_mark."
        )
    message = _live_message(ctx, message_id)
    found = _channel(ctx, message.channel_id)
    _visible(ctx, found)
    _not_archived(found, "react in it")
    me = _me(ctx)
    if ctx.exists(Reaction, message_id=message.id, name=emoji, user_id=me.id):
        raise ToolError.conflict(f"You already reacted with :{emoji}: to message {message_id}.")
    ctx.insert(Reaction(id=ctx.new_id("rx"), message_id=message.id, name=emoji, user_id=me.id, created_at=ctx.now_iso))
    return message


@service.tool(
    "read", intent="find", phrases=("search the team chat for {query}", "find the chat messages that mention {query}")
)
def search_messages(
    ctx: ToolContext,
    query: str,
    channel: ChannelName | None = None,
    from_email: EmailAddress | None = None,
    after: Date | None = None,
    before: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Message]:
    """Search the messages you can see (public channels, and private ones and DMs you are in), newest first.

    Every word of the query must appear in the message (case-insensitive), so an email address,
    company name or SKU finds the messages that mention it. Thread replies are included.

    Args:
        query: Words to look for, e.g. "refund" or an email address.
        channel: Only messages in this channel (name with or without #, or id).
        from_email: Only messages posted by this colleague.
        after: Only messages posted on or after this date (YYYY-MM-DD).
        before: Only messages posted before this date (YYYY-MM-DD).
        limit: Maximum number of messages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if not query.split():
        raise ToolError.invalid_argument("query must contain at least one word.")
    q = _readable(ctx.query(Message).where(deleted=False).search(query), _me(ctx))
    if channel:
        found = _channel(ctx, channel)
        _visible(ctx, found)
        q.where(channel_id=found.id)
    if from_email:
        q.where(user_id=_user_by_email(ctx, from_email).id)
    q.compare("posted_at", ">=", f"{after}T00:00:00Z" if after else None)
    q.compare("posted_at", "<", f"{before}T00:00:00Z" if before else None)
    return q.order_by("-posted_at", "-id").page(limit, cursor)


# -- world events (what arrives from outside; the composer plants task triggers with them) ---------


@service.event("message_posted")
def message_posted(ctx: ToolContext, channel: str, author_email: str, text: str, hours_ago: float = 1.0) -> str:
    """A colleague posts in a channel; returns the message id."""
    found = _channel(ctx, channel)
    author = _user_by_email(ctx, author_email)
    message = ctx.insert(
        Message(
            id=ctx.new_id("msg"), channel_id=found.id, user_id=author.id, text=text, thread_parent_id=None,
            broadcast=False, posted_at=ctx.days_from_now(-hours_ago / 24),
        )
    )
    return message.id
