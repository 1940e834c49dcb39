"""Chat: the team's workspace of channels, direct messages, threads and reactions (modelled on the Slack Web API).

The workspace's users are the home team (same names, emails, phones and usernames as in every other
service). Conversations are public or private channels, or direct messages ("im") between two
users. Messages quote the world's customers, companies, products and places, so a value read here
(a customer's email, an amount, a SKU) can drive work in the CRM, payments or mailbox, and a
message's permalink can be shared elsewhere. The agent acts as ``world.user``.

Rules (Slack's own): nobody posts, reacts, edits or changes the topic in an archived channel; you
post only where you are a member; private channels need an invitation (join works for public
ones only); #general cannot be archived, left or kicked from; you edit and delete only your own
messages; a thread reply goes to the thread's parent, never to another reply; channel names are
lowercase, without spaces, and unique, archived channels included.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from random import Random
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field
from sqlalchemy import ForeignKey, and_, exists, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, aliased, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
from mcp_services.kernel.semantic import (
    URL,
    ChannelName,
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
from mcp_services.kernel.world import Person, World

UserId = EntityId("chat.user")
ChannelId = EntityId("chat.channel")
MessageId = EntityId("chat.message")

ChannelKind = Literal["public", "private", "im"]
GENERAL = "general"
TOPIC_MAX = 250
MESSAGE_MAX = 4000
TOMBSTONE = "This message was deleted."
_CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
_EMOJI_NAME = re.compile(r"^[a-z0-9_+-]{1,60}$")


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(unique=True)
    display_name: Mapped[str]
    real_name: Mapped[str]
    email: Mapped[str] = mapped_column(unique=True)
    title: Mapped[str]
    phone: Mapped[str]
    is_admin: Mapped[bool]
    status_text: Mapped[str | None]


class Channel(Base):
    __tablename__ = "channels"
    id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str | None] = mapped_column(unique=True)  # null for direct messages
    kind: Mapped[str]
    topic: Mapped[str | None]
    purpose: Mapped[str | None]
    creator_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[str]
    archived: Mapped[bool] = mapped_column(default=False)
    archived_at: Mapped[str | None]


class Membership(Base):
    __tablename__ = "channel_members"
    channel_id: Mapped[str] = mapped_column(ForeignKey("channels.id"), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True)
    joined_at: Mapped[str]


class Message(Base):
    __tablename__ = "messages"
    id: Mapped[str] = mapped_column(primary_key=True)
    channel_id: Mapped[str] = mapped_column(ForeignKey("channels.id"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    text: Mapped[str]
    thread_parent_id: Mapped[str | None] = mapped_column(ForeignKey("messages.id"), index=True)
    broadcast: Mapped[bool] = mapped_column(default=False)  # a thread reply also shown in the channel
    posted_at: Mapped[str] = mapped_column(index=True)
    edited_at: Mapped[str | None]
    deleted: Mapped[bool] = mapped_column(default=False)


class Reaction(Base):
    __tablename__ = "reactions"
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id"), primary_key=True)
    name: Mapped[str] = mapped_column(primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), primary_key=True)
    created_at: Mapped[str]


service = Service(
    "chat",
    "Team chat workspace: public and private channels, direct messages, threads, reactions and message search.",
    Base,
    title="Chat",
)


# -- results -------------------------------------------------------------------------------------


class UserOut(BaseModel):
    id: UserId
    username: Username
    display_name: str
    real_name: PersonName
    email: EmailAddress
    title: JobTitle
    phone: PhoneNumber
    is_admin: bool
    status_text: str | None


class ChannelOut(BaseModel):
    id: ChannelId
    name: ChannelName | None = Field(description="The channel's name without #; null for a direct message")
    kind: ChannelKind
    topic: str | None
    purpose: str | None
    creator_username: Username
    created_at: DateTime
    archived: bool
    archived_at: DateTime | None
    member_count: int
    is_member: bool = Field(description="Whether you are a member")
    dm_with: list[Username] = Field(description="For a direct message: the other participant(s)")


class MemberOut(BaseModel):
    username: Username
    real_name: PersonName
    email: EmailAddress
    title: JobTitle


class ChannelDetailOut(ChannelOut):
    members: list[MemberOut]


class ReactionOut(BaseModel):
    name: str
    count: int
    usernames: list[Username]


class MessageOut(BaseModel):
    id: MessageId
    channel_id: ChannelId
    channel_name: ChannelName | None
    author_username: Username
    author_name: PersonName
    author_email: EmailAddress
    text: Text
    posted_at: DateTime
    edited_at: DateTime | None
    thread_parent_id: MessageId | None = Field(description="The thread's parent message, if this is a reply")
    reply_count: int
    deleted: bool
    reactions: list[ReactionOut]
    permalink: URL


class ThreadOut(BaseModel):
    parent: MessageOut
    replies: list[MessageOut] = Field(description="Replies, oldest first")
    total: int = Field(description="How many replies the thread has")
    next_cursor: str | None


# -- helpers -------------------------------------------------------------------------------------


def _me(ctx: ToolContext) -> User:
    user = ctx.db.scalar(select(User).where(User.email == ctx.world.user.email))
    assert user is not None  # the acting user is always seeded
    return user


def _is_member(ctx: ToolContext, channel_id: str, user_id: str) -> bool:
    return ctx.db.get(Membership, (channel_id, user_id)) is not None


def _member_ids(ctx: ToolContext, channel_id: str) -> list[str]:
    return list(ctx.db.scalars(select(Membership.user_id).where(Membership.channel_id == channel_id)))


def _channel(ctx: ToolContext, ref: str) -> Channel:
    """A channel by id (chan_0003, dm_0001) or name, with or without the leading #."""
    ref = ref.strip()
    channel = ctx.db.get(Channel, ref)
    if channel is None:
        channel = ctx.db.scalar(select(Channel).where(Channel.name == ref.lstrip("#").lower()))
    if channel is None:
        raise ToolError.not_found("channel", ref, "Use list_channels to find channel names and ids.")
    return channel


def _visible(ctx: ToolContext, channel: Channel) -> None:
    """Private channels and direct messages are readable only by their members."""
    if channel.kind != "public" and not _is_member(ctx, channel.id, _me(ctx).id):
        raise ToolError.permission_denied(
            f"{_label(channel)} is private and you are not a member; ask a member to invite you."
        )


def _label(channel: Channel) -> str:
    return f"#{channel.name}" if channel.name else f"direct message {channel.id}"


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
    user = ctx.db.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise ToolError.not_found(
            "user", email, "No workspace member has that email (only the team is in this workspace); see list_users."
        )
    return user


def _user_out(u: User) -> UserOut:
    return UserOut.model_validate(u, from_attributes=True)


def _channel_out(ctx: ToolContext, c: Channel, model: type[ChannelOut] = ChannelOut, **extra: object) -> ChannelOut:
    out = _channel_outs(ctx, [c])[0]
    return out if model is ChannelOut else model(**out.model_dump(), **extra)


def _channel_outs(ctx: ToolContext, channels: list[Channel]) -> list[ChannelOut]:
    """Channels as results, with members, creators and DM participants fetched in three queries per page."""
    if not channels:
        return []
    me = _me(ctx)
    members: dict[str, list[str]] = {c.id: [] for c in channels}
    for channel_id, user_id in ctx.db.execute(
        select(Membership.channel_id, Membership.user_id)
        .where(Membership.channel_id.in_(members))
        .order_by(Membership.channel_id, Membership.user_id)
    ):
        members[channel_id].append(user_id)
    wanted = {c.creator_id for c in channels}
    wanted.update(m for c in channels if c.kind == "im" for m in members[c.id] if m != me.id)
    users = {u.id: u for u in ctx.db.scalars(select(User).where(User.id.in_(wanted)))}
    out = []
    for c in channels:
        creator = users.get(c.creator_id)
        others = [users.get(m) for m in members[c.id] if m != me.id] if c.kind == "im" else []
        out.append(
            ChannelOut(
                id=c.id,
                name=c.name,
                kind=c.kind,  # type: ignore[arg-type]
                topic=c.topic,
                purpose=c.purpose,
                creator_username=creator.username if creator else "",
                created_at=c.created_at,
                archived=c.archived,
                archived_at=c.archived_at,
                member_count=len(members[c.id]),
                is_member=me.id in members[c.id],
                dm_with=[u.username for u in others if u is not None],
            )
        )
    return out


def _permalink(ctx: ToolContext, m: Message) -> str:
    workspace = ctx.world.home.domain.split(".")[0]
    return f"https://{workspace}.chat.example/archives/{m.channel_id}/p{m.id.split('_')[-1]}"


def _messages_out(ctx: ToolContext, rows: list[Message]) -> list[MessageOut]:
    """Result rows for many messages with a fixed number of queries (a page is up to 100 messages)."""
    if not rows:
        return []
    ids = [m.id for m in rows]
    users = {u.id: u for u in ctx.db.scalars(select(User))}
    channels = {c.id: c for c in ctx.db.scalars(select(Channel).where(Channel.id.in_({m.channel_id for m in rows})))}
    reactions: dict[str, dict[str, list[str]]] = {}
    for message_id, name, user_id in ctx.db.execute(
        select(Reaction.message_id, Reaction.name, Reaction.user_id)
        .where(Reaction.message_id.in_(ids))
        .order_by(Reaction.created_at, Reaction.name, Reaction.user_id)
    ):
        reactions.setdefault(message_id, {}).setdefault(name, []).append(users[user_id].username)
    replies = dict(
        ctx.db.execute(
            select(Message.thread_parent_id, func.count())
            .where(Message.thread_parent_id.in_(ids), Message.deleted.is_(False))
            .group_by(Message.thread_parent_id)
        ).all()
    )
    out = []
    for m in rows:
        author = users[m.user_id]
        out.append(
            MessageOut(
                id=m.id,
                channel_id=m.channel_id,
                channel_name=channels[m.channel_id].name,
                author_username=author.username,
                author_name=author.real_name,
                author_email=author.email,
                text=m.text,
                posted_at=m.posted_at,
                edited_at=m.edited_at,
                thread_parent_id=m.thread_parent_id,
                reply_count=int(replies.get(m.id, 0)),
                deleted=m.deleted,
                reactions=[
                    ReactionOut(name=n, count=len(u), usernames=u) for n, u in reactions.get(m.id, {}).items()
                ],
                permalink=_permalink(ctx, m),
            )
        )
    return out


def _message_out(ctx: ToolContext, m: Message) -> MessageOut:
    return _messages_out(ctx, [m])[0]


def _live_message(ctx: ToolContext, message_id: str) -> Message:
    message = ctx.get(Message, message_id, "message", "Use get_channel_history or search_messages to find message ids.")
    if message.deleted:
        raise ToolError.invalid_state(f"Message {message_id} was deleted.")
    return message


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def _clean_text(text: str) -> str:
    if not text.strip():
        raise ToolError.invalid_argument("text must not be empty.")
    if len(text) > MESSAGE_MAX:
        raise ToolError.invalid_argument(f"text is {len(text)} characters; a message can have at most {MESSAGE_MAX}.")
    return text.strip()


def _shown_in_channel() -> object:
    """Messages a channel's history shows: top-level or broadcast, and deleted ones only as thread tombstones."""
    reply = aliased(Message)
    has_replies = exists().where(reply.thread_parent_id == Message.id, reply.deleted.is_(False))
    return and_(
        or_(Message.thread_parent_id.is_(None), Message.broadcast.is_(True)),
        or_(Message.deleted.is_(False), has_replies),
    )


# -- seed ----------------------------------------------------------------------------------------

_ISSUES = (
    "cannot log in since the last update",
    "was charged twice for the same invoice",
    "exports are timing out",
    "needs their billing address changed",
    "asked for a refund on an unused seat",
    "reports the API returning 500 errors",
    "wants to add five more users",
)
_SMALL_TALK = (
    "Anyone up for coffee at 3?",
    "The new espresso beans are excellent.",
    "Happy Friday everyone!",
    "Who left the umbrella in the meeting room?",
    "Lunch recommendations near the office?",
    "Great game last night.",
)
_REPLIES = (
    "On it.",
    "Thanks, {first}!",
    "I'll follow up today.",
    "Done - updated the CRM.",
    "+1",
    "Can we discuss this in the weekly sync?",
    "Looping in finance on this one.",
    "Sounds good to me.",
    "I'll send them an email this afternoon.",
    "Ticket updated, closing the loop.",
)
_REACTIONS = ("+1", "eyes", "white_check_mark", "tada", "pray", "rocket", "heart", "raised_hands")


def _themes(world: World) -> dict[str, Callable[[Random], str]]:
    """Message generators per channel theme, quoting the world's people, companies, products and places."""
    customers = world.customers
    products = world.products
    cur = world.currency
    places = world.places

    def who(rng: Random) -> tuple[Person, str]:
        person = rng.choice(customers)
        return person, world.organisation(person.organisation_id).name

    def sales(rng: Random) -> str:
        p, org = who(rng)
        product = rng.choice(products)
        qty = rng.randint(2, 40)
        return rng.choice(
            (
                f"Call with {p.name} ({p.email}) from {org} went well - they want a quote for "
                f"{qty} x {product.name} ({product.sku}).",
                f"{org} signed! {qty} x {product.name}, {product.unit_price * qty:.2f} {cur}.",
                f"{p.name} at {org} asked for a demo of {product.name} next week. Who can take it?",
                f"Heads up: {org} is evaluating a competitor. {p.name} ({p.phone}) is the decision maker.",
                f"Sent the proposal for {product.name} to {p.email}; following up Thursday.",
            )
        )

    def support(rng: Random) -> str:
        p, org = who(rng)
        return rng.choice(
            (
                f"New escalation from {p.name} at {org}: {rng.choice(_ISSUES)}. Their number is {p.phone}.",
                f"Closed the ticket for {p.email}; root cause was a misconfigured SSO domain.",
                f"{p.name} ({p.email}) {rng.choice(_ISSUES)}. Can someone from engineering take a look?",
                f"Reminder: {org} has priority support, respond within 4 hours.",
            )
        )

    def finance(rng: Random) -> str:
        p, org = who(rng)
        amount = rng.choice(products).unit_price * rng.randint(1, 12)
        return rng.choice(
            (
                f"Invoice for {org} ({amount:.2f} {cur}) is overdue by {rng.randint(5, 45)} days.",
                f"Refund of {amount:.2f} {cur} to {p.email} approved.",
                f"Payment of {amount:.2f} {cur} received from {org}. Matching it to the open invoice now.",
                f"Month-end close starts {(world.now_dt + timedelta(days=rng.randint(1, 20))).date().isoformat()}; "
                "please submit expenses.",
                f"{p.name} from {org} asked for a copy of their last three invoices.",
            )
        )

    def office(rng: Random) -> str:
        place = rng.choice(places)
        product = rng.choice(products)
        return rng.choice(
            (
                f"{place.name} ({place.address}) is out of action on Thursday for maintenance.",
                f"New {product.name} order ({product.sku}) arrives Monday.",
                f"Lunch on Friday at {place.name}, {place.address}. Reply in thread if you're in.",
                "Printer on the second floor is fixed.",
                f"We're low on {product.name.lower()}; ordering more.",
            )
        )

    def engineering(rng: Random) -> str:
        _, org = who(rng)
        return rng.choice(
            (
                f"Deploy of v{rng.randint(2, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)} went out.",
                f"API usage for {org} spiked 4x overnight; looking into it.",
                "Flaky test in the billing suite again, I'm quarantining it.",
                f"Incident: elevated error rates for {org} between 02:00 and 02:40 UTC. Postmortem to follow.",
                "Code freeze starts Wednesday for the release.",
            )
        )

    def product(rng: Random) -> str:
        p, org = who(rng)
        item = rng.choice(products)
        return rng.choice(
            (
                f"Feedback from {p.name} at {org}: they'd pay more for {item.name} with SSO.",
                f"Draft roadmap for next quarter is in the shared folder; comments by Friday.",
                f"{org} is asking about bulk pricing on {item.name} ({item.sku}).",
            )
        )

    def general(rng: Random) -> str:
        place = rng.choice(places)
        colleague = rng.choice(world.team)
        return rng.choice(
            (
                f"Welcome {colleague.first_name} to the {colleague.job_title} role!",
                f"All-hands this month is at {place.name}, {place.address}.",
                "Reminder: submit your timesheets by Friday.",
                f"Big thanks to {colleague.name} for landing the quarter.",
                "The office closes early on Friday for maintenance.",
            )
        )

    def leadership(rng: Random) -> str:
        _, org = who(rng)
        amount = rng.choice(products).unit_price * rng.randint(10, 60)
        return rng.choice(
            (
                f"Q{rng.randint(1, 4)} forecast is {amount * 10:.2f} {cur}; {org} is the biggest open deal.",
                "Board deck draft is ready for review.",
                f"Budget request: {amount:.2f} {cur} for two new support hires.",
                f"Should we offer {org} a discount to close this month?",
            )
        )

    def hiring(rng: Random) -> str:
        return rng.choice(
            (
                "Three strong candidates for the senior engineer role this week.",
                "Offer accepted for the support agent position!",
                "Can someone cover the Thursday interview loop?",
                "Updated the job description for the account executive role.",
            )
        )

    def random_chat(rng: Random) -> str:
        return rng.choice(_SMALL_TALK)

    return {
        "sales": sales,
        "support": support,
        "finance": finance,
        "office": office,
        "engineering": engineering,
        "product": product,
        "general": general,
        "leadership": leadership,
        "hiring": hiring,
        "random": random_chat,
    }


class _ChannelSpec(NamedTuple):
    name: str
    kind: ChannelKind
    theme: str  # a key of _themes(), or "org:<organisation id>" for a customer channel
    roles: tuple[str, ...] | None  # the team roles that are members; None for everyone
    messages: int
    archived: bool
    topic: str


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
_DM_ROLES = ("finance lead", "sales lead", "office manager", "support lead")


@service.seeder
def seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    themes = _themes(world)
    now = ctx.now

    users: dict[str, User] = {}
    for person in world.team:
        user = User(
            id=ctx.new_id("usr"),
            username=person.username,
            display_name=person.first_name,
            real_name=person.name,
            email=person.email,
            title=person.job_title,
            phone=person.phone,
            is_admin=person.job_title in ("operations manager", "office manager"),
            status_text=rng.choice((None, None, "In meetings", "Working remotely", "On a customer call")),
        )
        ctx.db.add(user)
        users[person.job_title] = user
    ctx.db.flush()
    everyone = list(users.values())
    first_names = {u.id: u.display_name for u in everyone}
    me = users[world.user.job_title]

    # Customer channels for three accounts: their messages all name that company.
    specs = list(_CHANNELS)
    customer_orgs = rng.sample(list(world.organisations[1:]), 3)
    for org in customer_orgs:
        slug = re.sub(r"[^a-z0-9]+", "-", org.name.lower()).strip("-")[:60]
        specs.append(
            _ChannelSpec(
                f"customer-{slug}", "public", f"org:{org.id}", _CUSTOMER_CHANNEL_ROLES, 10, False,
                f"Shared notes on the {org.name} account",
            )
        )

    def customer_theme(org_id: str) -> Callable[[Random], str]:
        org = world.organisation(org_id)
        contacts = [p for p in world.customers if p.organisation_id == org_id] or list(world.customers)

        def gen(r: Random) -> str:
            p = r.choice(contacts)
            product = r.choice(world.products)
            return r.choice(
                (
                    f"Kickoff with {org.name} booked; main contact {p.name} <{p.email}>.",
                    f"{p.name} ({p.job_title}) wants to expand to {product.name} ({product.sku}).",
                    f"{org.name}'s office is at {org.address} if anyone visits.",
                    f"{p.name} confirmed the renewal; call them on {p.phone} with questions.",
                )
            )

        return gen

    channels: list[tuple[Channel, list[User], Callable[[Random], str], int]] = []
    for name, kind, theme, roles, count, archived, topic in specs:
        members = everyone if roles is None else [users[r] for r in roles]
        created = now - timedelta(days=rng.randint(200, 700))
        channel = Channel(
            id=ctx.new_id("chan"),
            name=name,
            kind=kind,
            topic=topic,
            purpose=topic,
            creator_id=members[0].id,
            created_at=ctx.iso(created),
            archived=archived,
            archived_at=ctx.iso(now - timedelta(days=rng.randint(30, 60))) if archived else None,
        )
        ctx.db.add(channel)
        gen = customer_theme(theme[4:]) if theme.startswith("org:") else themes[theme]
        channels.append((channel, members, gen, count))
    for role in _DM_ROLES:
        other = users[role]
        dm = Channel(
            id=ctx.new_id("dm"),
            name=None,
            kind="im",
            topic=None,
            purpose=None,
            creator_id=me.id,
            created_at=ctx.iso(now - timedelta(days=rng.randint(100, 400))),
            archived=False,
            archived_at=None,
        )
        ctx.db.add(dm)
        channels.append((dm, [me, other], themes[rng.choice(("sales", "finance", "office", "support"))], 6))
    ctx.db.flush()
    for channel, members, _, _ in channels:
        for user in members:
            ctx.db.add(Membership(channel_id=channel.id, user_id=user.id, joined_at=channel.created_at))
    ctx.db.flush()

    threads: list[tuple[Message, list[User]]] = []
    top_level: list[tuple[Message, list[User]]] = []
    quiet_after: dict[str, datetime] = {}
    for channel, members, gen, count in channels:
        # Archived channels went quiet before they were archived.
        newest = _parse(channel.archived_at) if channel.archived_at else now
        quiet_after[channel.id] = newest
        # Posted during working hours over the last month (or the month before archiving).
        stamps = sorted(
            min(
                (newest - timedelta(days=rng.randint(0, 30))).replace(
                    hour=rng.randint(8, 17), minute=rng.randint(0, 59), second=0
                ),
                newest - timedelta(minutes=rng.randint(5, 90)),
            )
            for _ in range(count)
        )
        for stamp in stamps:
            message = Message(
                id=ctx.new_id("msg"),
                channel_id=channel.id,
                user_id=rng.choice(members).id,
                text=gen(rng),
                thread_parent_id=None,
                broadcast=False,
                posted_at=ctx.iso(stamp),
                edited_at=None,
                deleted=False,
            )
            ctx.db.add(message)
            top_level.append((message, members))
            if rng.random() < 0.35:
                threads.append((message, members))
    ctx.db.flush()
    # Replies come after their parent, never after now or after the channel was archived.
    thread_replies: list[tuple[Message, list[User]]] = []
    for parent, members in threads:
        at = _parse(parent.posted_at)
        for _ in range(rng.randint(1, 4)):
            at = at + timedelta(minutes=rng.randint(2, 240))
            if at >= quiet_after[parent.channel_id]:
                break
            author = rng.choice(members)
            reply = Message(
                id=ctx.new_id("msg"),
                channel_id=parent.channel_id,
                user_id=author.id,
                text=rng.choice(_REPLIES).format(first=first_names[parent.user_id]),
                thread_parent_id=parent.id,
                broadcast=rng.random() < 0.05,
                posted_at=ctx.iso(at),
                edited_at=None,
                deleted=False,
            )
            ctx.db.add(reply)
            thread_replies.append((reply, members))
    ctx.db.flush()
    # Reactions: on every thread parent, every fifth reply and a fifth of the other messages.
    seen: set[tuple[str, str, str]] = set()
    threaded = {m.id for m, _ in threads}
    for message, members in threads + thread_replies[::5] + [
        (m, mem) for m, mem in top_level if m.id not in threaded and rng.random() < 0.2
    ]:
        for emoji in rng.sample(_REACTIONS, rng.randint(1, 2)):
            for user in rng.sample(members, rng.randint(1, min(2, len(members)))):
                if (message.id, emoji, user.id) not in seen:
                    seen.add((message.id, emoji, user.id))
                    ctx.db.add(
                        Reaction(message_id=message.id, name=emoji, user_id=user.id, created_at=message.posted_at)
                    )


# -- users ---------------------------------------------------------------------------------------


@service.tool("read")
def list_users(
    ctx: ToolContext, query: str | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[UserOut]:
    """List the workspace's users (the team), optionally matching a name, username, email or title.

    Args:
        query: Text to match against the real name, display name, username, email or title (case-insensitive).
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(User).order_by(User.real_name, User.id)
    if query:
        like = f"%{query.strip().lstrip('@')}%"
        stmt = stmt.where(
            or_(
                User.real_name.ilike(like),
                User.display_name.ilike(like),
                User.username.ilike(like),
                User.email.ilike(like),
                User.title.ilike(like),
            )
        )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[UserOut](items=[_user_out(u) for u in rows], total=total, next_cursor=next_cursor)


@service.tool("read")
def lookup_user_by_email(ctx: ToolContext, email: EmailAddress) -> UserOut:
    """Find the workspace user with exactly this email address.

    Args:
        email: The email address to look up, e.g. a colleague's work email.
    """
    return _user_out(_user_by_email(ctx, email))


# -- channels ------------------------------------------------------------------------------------


@service.tool("read")
def list_channels(
    ctx: ToolContext,
    query: str | None = None,
    kind: ChannelKind | None = None,
    include_archived: bool = False,
    member_only: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ChannelOut]:
    """List the channels you can see: every public channel, plus the private channels and direct messages you are in.

    Args:
        query: Text to match against the channel name or topic (case-insensitive).
        kind: Only public channels, private channels or im (direct messages).
        include_archived: Also list archived channels (hidden by default).
        member_only: Only channels you are a member of.
        limit: Maximum number of channels to return (1-100).
        cursor: next_cursor from a previous page.
    """
    me = _me(ctx)
    mine = select(Membership.channel_id).where(Membership.user_id == me.id)
    stmt = select(Channel).order_by(Channel.name.is_(None), Channel.name, Channel.id)  # channels, then DMs
    stmt = stmt.where(or_(Channel.kind == "public", Channel.id.in_(mine)))
    if query:
        like = f"%{query.strip().lstrip('#')}%"
        stmt = stmt.where(or_(Channel.name.ilike(like), Channel.topic.ilike(like)))
    if kind:
        stmt = stmt.where(Channel.kind == kind)
    if not include_archived:
        stmt = stmt.where(Channel.archived.is_(False))
    if member_only:
        stmt = stmt.where(Channel.id.in_(mine))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ChannelOut](items=_channel_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_channel(ctx: ToolContext, channel: ChannelName) -> ChannelDetailOut:
    """Get one channel with its topic, state and members.

    Args:
        channel: The channel's name (with or without #, e.g. sales) or id (e.g. chan_0004, dm_0001).
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    members = [
        MemberOut(username=u.username, real_name=u.real_name, email=u.email, title=u.title)
        for u in ctx.db.scalars(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(Membership.channel_id == found.id)
            .order_by(User.username)
        )
    ]
    return _channel_out(ctx, found, ChannelDetailOut, members=members)  # type: ignore[return-value]


@service.tool("write")
def create_channel(
    ctx: ToolContext,
    name: ChannelName,
    is_private: bool = False,
    topic: str | None = None,
    member_emails: list[EmailAddress] | None = None,
) -> ChannelDetailOut:
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
    existing = ctx.db.scalar(select(Channel).where(Channel.name == clean))
    if existing is not None:
        state = "an archived channel (unarchive_channel it to reuse it)" if existing.archived else "an existing channel"
        raise ToolError.conflict(f"The name {clean!r} is taken by {state} ({existing.id}); choose another name.")
    if topic is not None and len(topic) > TOPIC_MAX:
        raise ToolError.invalid_argument(f"topic can have at most {TOPIC_MAX} characters.")
    me = _me(ctx)
    invitees = [_user_by_email(ctx, e) for e in dict.fromkeys(e.lower() for e in (member_emails or []))]
    channel = Channel(
        id=ctx.new_id("chan"),
        name=clean,
        kind="private" if is_private else "public",
        topic=topic,
        purpose=None,
        creator_id=me.id,
        created_at=ctx.now_iso,
        archived=False,
        archived_at=None,
    )
    ctx.db.add(channel)
    ctx.db.flush()
    for user in [me] + [u for u in invitees if u.id != me.id]:
        ctx.db.add(Membership(channel_id=channel.id, user_id=user.id, joined_at=ctx.now_iso))
    ctx.db.flush()
    return get_channel(ctx, channel.id)


@service.tool("write")
def archive_channel(ctx: ToolContext, channel: ChannelName) -> ChannelOut:
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
    found.archived = True
    found.archived_at = ctx.now_iso
    return _channel_out(ctx, found)


@service.tool("write")
def unarchive_channel(ctx: ToolContext, channel: ChannelName) -> ChannelOut:
    """Unarchive an archived channel so people can post in it again.

    Args:
        channel: The archived channel's name (with or without #) or id.
    """
    found = _channel(ctx, channel)
    _visible(ctx, found)
    if not found.archived:
        raise ToolError.invalid_state(f"{_label(found)} is not archived.")
    found.archived = False
    found.archived_at = None
    return _channel_out(ctx, found)


@service.tool("write")
def join_channel(ctx: ToolContext, channel: ChannelName) -> ChannelOut:
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
    ctx.db.add(Membership(channel_id=found.id, user_id=me.id, joined_at=ctx.now_iso))
    ctx.db.flush()
    return _channel_out(ctx, found)


@service.tool("write")
def invite_to_channel(ctx: ToolContext, channel: ChannelName, user_emails: list[EmailAddress]) -> ChannelDetailOut:
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
    for email in dict.fromkeys(e.lower() for e in user_emails):
        user = _user_by_email(ctx, email)
        if _is_member(ctx, found.id, user.id):
            raise ToolError.invalid_state(f"{user.username} is already in {_label(found)}; leave them out and retry.")
        ctx.db.add(Membership(channel_id=found.id, user_id=user.id, joined_at=ctx.now_iso))
    ctx.db.flush()
    return get_channel(ctx, found.id)


@service.tool("write")
def kick_from_channel(ctx: ToolContext, channel: ChannelName, user_email: EmailAddress) -> ChannelDetailOut:
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
    membership = ctx.db.get(Membership, (found.id, user.id))
    if membership is None:
        raise ToolError.invalid_state(f"{user.username} is not a member of {_label(found)}.")
    ctx.db.delete(membership)
    ctx.db.flush()
    return get_channel(ctx, found.id)


@service.tool("write")
def set_channel_topic(ctx: ToolContext, channel: ChannelName, topic: str) -> ChannelOut:
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
    found.topic = topic.strip() or None
    return _channel_out(ctx, found)


@service.tool("write")
def open_direct_message(ctx: ToolContext, user_email: EmailAddress) -> ChannelOut:
    """Open (or reuse) your direct-message conversation with a colleague.

    Post to it with post_message(channel=<the returned id>).

    Args:
        user_email: The colleague's email (see lookup_user_by_email).
    """
    me = _me(ctx)
    other = _user_by_email(ctx, user_email)
    if other.id == me.id:
        raise ToolError.invalid_argument("That is your own email; open a direct message with someone else.")
    mine = select(Membership.channel_id).where(Membership.user_id == me.id)
    theirs = select(Membership.channel_id).where(Membership.user_id == other.id)
    existing = ctx.db.scalar(select(Channel).where(Channel.kind == "im", Channel.id.in_(mine), Channel.id.in_(theirs)))
    if existing is not None:
        return _channel_out(ctx, existing)
    dm = Channel(
        id=ctx.new_id("dm"),
        name=None,
        kind="im",
        topic=None,
        purpose=None,
        creator_id=me.id,
        created_at=ctx.now_iso,
        archived=False,
        archived_at=None,
    )
    ctx.db.add(dm)
    ctx.db.flush()
    ctx.db.add_all(
        [
            Membership(channel_id=dm.id, user_id=me.id, joined_at=ctx.now_iso),
            Membership(channel_id=dm.id, user_id=other.id, joined_at=ctx.now_iso),
        ]
    )
    ctx.db.flush()
    return _channel_out(ctx, dm)


# -- messages ------------------------------------------------------------------------------------


@service.tool("read")
def get_channel_history(
    ctx: ToolContext,
    channel: ChannelName,
    oldest: DateTime | None = None,
    latest: DateTime | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[MessageOut]:
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
    stmt = (
        select(Message)
        .where(Message.channel_id == found.id, _shown_in_channel())  # type: ignore[arg-type]
        .order_by(Message.posted_at.desc(), Message.id.desc())
    )
    if oldest:
        stmt = stmt.where(Message.posted_at >= oldest)
    if latest:
        stmt = stmt.where(Message.posted_at <= latest)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[MessageOut](items=_messages_out(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_thread_replies(
    ctx: ToolContext, message_id: MessageId, limit: Limit = 20, cursor: Cursor = None
) -> ThreadOut:
    """A thread: its parent message and the replies, oldest first.

    Args:
        message_id: The thread's parent message id (a reply's id also works: its thread is shown).
        limit: Maximum number of replies to return (1-100).
        cursor: next_cursor from a previous page.
    """
    message = ctx.get(Message, message_id, "message", "Use get_channel_history or search_messages to find message ids.")
    parent = ctx.get(Message, message.thread_parent_id, "message") if message.thread_parent_id else message
    _visible(ctx, _channel(ctx, parent.channel_id))
    stmt = (
        select(Message)
        .where(Message.thread_parent_id == parent.id, Message.deleted.is_(False))
        .order_by(Message.posted_at, Message.id)
    )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    parent_out, *replies = _messages_out(ctx, [parent, *rows])
    return ThreadOut(parent=parent_out, replies=replies, total=total, next_cursor=next_cursor)


@service.tool("write")
def post_message(ctx: ToolContext, channel: ChannelName, text: Text) -> MessageOut:
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
    message = Message(
        id=ctx.new_id("msg"),
        channel_id=found.id,
        user_id=_me(ctx).id,
        text=_clean_text(text),
        thread_parent_id=None,
        broadcast=False,
        posted_at=ctx.now_iso,
        edited_at=None,
        deleted=False,
    )
    ctx.db.add(message)
    ctx.db.flush()
    return _message_out(ctx, message)


@service.tool("write")
def reply_in_thread(
    ctx: ToolContext, message_id: MessageId, text: Text, also_send_to_channel: bool = False
) -> MessageOut:
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
    reply = Message(
        id=ctx.new_id("msg"),
        channel_id=found.id,
        user_id=_me(ctx).id,
        text=_clean_text(text),
        thread_parent_id=parent.id,
        broadcast=also_send_to_channel,
        posted_at=ctx.now_iso,
        edited_at=None,
        deleted=False,
    )
    ctx.db.add(reply)
    ctx.db.flush()
    return _message_out(ctx, reply)


@service.tool("write")
def update_message(ctx: ToolContext, message_id: MessageId, text: Text) -> MessageOut:
    """Edit the text of one of your own messages.

    Others' messages, deleted messages and messages in archived channels cannot be edited.

    Args:
        message_id: Your message to edit.
        text: The new text (at most 4000 characters).
    """
    message = _live_message(ctx, message_id)
    if message.user_id != _me(ctx).id:
        raise ToolError.permission_denied(
            f"Message {message_id} was posted by someone else; you can edit only your own messages."
        )
    _not_archived(_channel(ctx, message.channel_id), "edit messages in it")
    clean = _clean_text(text)
    if clean == message.text:
        raise ToolError.invalid_argument("The new text is the same as the current text.")
    message.text = clean
    message.edited_at = ctx.now_iso
    return _message_out(ctx, message)


@service.tool("write")
def delete_message(ctx: ToolContext, message_id: MessageId) -> MessageOut:
    """Delete one of your own messages. A thread parent with replies stays as "This message was deleted.".

    Args:
        message_id: Your message to delete.
    """
    message = _live_message(ctx, message_id)
    if message.user_id != _me(ctx).id:
        raise ToolError.permission_denied(
            f"Message {message_id} was posted by someone else; you can delete only your own messages."
        )
    _not_archived(_channel(ctx, message.channel_id), "delete messages in it")
    message.deleted = True
    message.text = TOMBSTONE
    message.edited_at = ctx.now_iso
    return _message_out(ctx, message)


@service.tool("write")
def add_reaction(ctx: ToolContext, message_id: MessageId, name: str) -> MessageOut:
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
    if ctx.db.get(Reaction, (message.id, emoji, me.id)) is not None:
        raise ToolError.conflict(f"You already reacted with :{emoji}: to message {message_id}.")
    ctx.db.add(Reaction(message_id=message.id, name=emoji, user_id=me.id, created_at=ctx.now_iso))
    ctx.db.flush()
    return _message_out(ctx, message)


@service.tool("read")
def search_messages(
    ctx: ToolContext,
    query: str,
    channel: ChannelName | None = None,
    from_email: EmailAddress | None = None,
    after: Date | None = None,
    before: Date | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[MessageOut]:
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
    words = query.split()
    if not words:
        raise ToolError.invalid_argument("query must contain at least one word.")
    me = _me(ctx)
    mine = select(Membership.channel_id).where(Membership.user_id == me.id)
    public = select(Channel.id).where(Channel.kind == "public")
    stmt = (
        select(Message)
        .where(Message.deleted.is_(False), or_(Message.channel_id.in_(public), Message.channel_id.in_(mine)))
        .order_by(Message.posted_at.desc(), Message.id.desc())
    )
    for word in words:
        stmt = stmt.where(Message.text.ilike(f"%{word}%"))
    if channel:
        found = _channel(ctx, channel)
        _visible(ctx, found)
        stmt = stmt.where(Message.channel_id == found.id)
    if from_email:
        stmt = stmt.where(Message.user_id == _user_by_email(ctx, from_email).id)
    if after:
        stmt = stmt.where(Message.posted_at >= f"{after}T00:00:00Z")
    if before:
        stmt = stmt.where(Message.posted_at < f"{before}T00:00:00Z")
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[MessageOut](items=_messages_out(ctx, rows), total=total, next_cursor=next_cursor)
