"""Projects: the team's issue tracker (modelled on Jira Cloud's REST API, with Asana-like projects).

Projects have keys (OPS, FIN, SUP...) and members drawn from the home team; issues are numbered per
project (OPS-12) and move through one workflow: to_do -> in_progress -> in_review -> done, with
"stop progress", "request changes" and "reopen" going back. Rules follow common Jira setups:
only project members can be assigned, work cannot start unassigned, an issue cannot be done while
an unfinished issue blocks it, and archived projects are read-only. Seeded issues mention the
world's customers, companies, products, invoices and orders, so values found in other services
lead here and back. ``search_issues`` takes structured filters and a small JQL subset.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy import JSON, ColumnElement, ForeignKey, Select, String, and_, case, cast, exists, func, or_, select
from sqlalchemy.orm import DeclarativeBase, InstrumentedAttribute, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
from mcp_services.kernel.semantic import (
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    JobTitle,
    PersonName,
    Subject,
    Tag,
    Text,
)
from mcp_services.kernel.world import Person

ProjectKey = EntityId("projects.project")
IssueKey = EntityId("projects.issue")
CommentId = EntityId("projects.comment")
LinkId = EntityId("projects.link")

IssueStatus = Literal["to_do", "in_progress", "in_review", "done"]
IssueType = Literal["task", "bug", "story"]
Priority = Literal["highest", "high", "medium", "low", "lowest"]
Resolution = Literal["done", "won't do", "duplicate"]
ProjectType = Literal["software", "business"]
MemberRole = Literal["administrator", "member"]
LinkType = Literal["blocks", "relates to", "duplicates", "clones"]

STATUSES: tuple[str, ...] = ("to_do", "in_progress", "in_review", "done")
PRIORITIES: tuple[str, ...] = ("highest", "high", "medium", "low", "lowest")
ISSUE_TYPES: tuple[str, ...] = ("task", "bug", "story")

#: The workflow: from each status, the transitions (name, target status) it offers.
WORKFLOW: dict[str, tuple[tuple[str, str], ...]] = {
    "to_do": (("Start progress", "in_progress"),),
    "in_progress": (("Submit for review", "in_review"), ("Stop progress", "to_do")),
    "in_review": (("Approve", "done"), ("Request changes", "in_progress")),
    "done": (("Reopen", "to_do"),),
}

#: How a link reads from its other end (Jira's inward description).
INWARD: dict[str, str] = {
    "blocks": "is blocked by",
    "relates to": "relates to",
    "duplicates": "is duplicated by",
    "clones": "is cloned by",
}


class Base(DeclarativeBase):
    pass


class Project(Base):
    __tablename__ = "projects"
    key: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str]
    description: Mapped[str]
    project_type: Mapped[str]
    lead_email: Mapped[str]
    archived: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[str]


class Member(Base):
    __tablename__ = "members"
    project_key: Mapped[str] = mapped_column(ForeignKey("projects.key"), primary_key=True)
    email: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str]
    role: Mapped[str]


class Issue(Base):
    __tablename__ = "issues"
    key: Mapped[str] = mapped_column(primary_key=True)
    project_key: Mapped[str] = mapped_column(ForeignKey("projects.key"), index=True)
    number: Mapped[int]
    summary: Mapped[str]
    description: Mapped[str]
    issue_type: Mapped[str]
    status: Mapped[str] = mapped_column(index=True)
    priority: Mapped[str]
    assignee_email: Mapped[str | None] = mapped_column(index=True)
    reporter_email: Mapped[str]
    due_date: Mapped[str | None]
    labels: Mapped[list[str]] = mapped_column(JSON)
    resolution: Mapped[str | None]
    created_at: Mapped[str]
    updated_at: Mapped[str]
    resolved_at: Mapped[str | None]


class IssueComment(Base):
    __tablename__ = "comments"
    id: Mapped[str] = mapped_column(primary_key=True)
    issue_key: Mapped[str] = mapped_column(ForeignKey("issues.key"), index=True)
    author_email: Mapped[str]
    body: Mapped[str]
    created_at: Mapped[str]


class Watcher(Base):
    __tablename__ = "watchers"
    issue_key: Mapped[str] = mapped_column(ForeignKey("issues.key"), primary_key=True)
    email: Mapped[str] = mapped_column(primary_key=True)


class IssueLink(Base):
    __tablename__ = "issue_links"
    id: Mapped[str] = mapped_column(primary_key=True)
    link_type: Mapped[str]
    source_key: Mapped[str] = mapped_column(ForeignKey("issues.key"), index=True)  # "source blocks target"
    target_key: Mapped[str] = mapped_column(ForeignKey("issues.key"), index=True)
    created_at: Mapped[str]


service = Service(
    "projects",
    "Project and issue tracker for the team: projects with keys, issues (tasks, bugs, stories) with "
    "assignees, due dates, labels, a to do -> in progress -> in review -> done workflow, comments, "
    "watchers and links between issues.",
    Base,
    title="Projects",
)


# -- results -------------------------------------------------------------------------------------


class MemberOut(BaseModel):
    name: PersonName
    email: EmailAddress
    job_title: JobTitle | None
    role: MemberRole


class ProjectOut(BaseModel):
    key: ProjectKey
    name: str
    description: Text
    project_type: ProjectType
    lead_name: PersonName
    lead_email: EmailAddress
    archived: bool
    members: list[MemberOut]
    issue_counts: dict[str, int]
    created_at: DateTime


class IssueOut(BaseModel):
    key: IssueKey
    project_key: ProjectKey
    summary: Subject
    description: Text
    issue_type: IssueType
    status: IssueStatus
    priority: Priority
    assignee_name: PersonName | None
    assignee_email: EmailAddress | None
    reporter_name: PersonName
    reporter_email: EmailAddress
    due_date: Date | None
    labels: list[Tag]
    resolution: Resolution | None
    created_at: DateTime
    updated_at: DateTime
    resolved_at: DateTime | None


class LinkOut(BaseModel):
    id: LinkId
    link_type: LinkType
    relation: str  # read from the issue's side: "blocks", "is blocked by"...
    issue_key: IssueKey
    summary: Subject
    status: IssueStatus


class IssueDetailOut(IssueOut):
    watchers: list[EmailAddress]
    links: list[LinkOut]
    comment_count: int
    allowed_next_statuses: list[IssueStatus]


class TransitionOut(BaseModel):
    name: str
    to_status: IssueStatus


class TransitionsOut(BaseModel):
    issue_key: IssueKey
    status: IssueStatus
    transitions: list[TransitionOut]


class CommentOut(BaseModel):
    id: CommentId
    issue_key: IssueKey
    author_name: PersonName
    author_email: EmailAddress
    body: Text
    created_at: DateTime


class WatchersOut(BaseModel):
    issue_key: IssueKey
    watchers: list[EmailAddress]


def _person(ctx: ToolContext, email: str) -> Person | None:
    # Everyone a project knows is a colleague from the world's home team (ten people): a scan is cheap.
    for person in ctx.world.team:
        if person.email == email:
            return person
    return None


def _name(ctx: ToolContext, email: str) -> str:
    person = _person(ctx, email)
    return person.name if person else email


def _issue_out(ctx: ToolContext, i: Issue) -> IssueOut:
    return IssueOut(
        key=i.key,
        project_key=i.project_key,
        summary=i.summary,
        description=i.description,
        issue_type=i.issue_type,  # type: ignore[arg-type]
        status=i.status,  # type: ignore[arg-type]
        priority=i.priority,  # type: ignore[arg-type]
        assignee_name=_name(ctx, i.assignee_email) if i.assignee_email else None,
        assignee_email=i.assignee_email,
        reporter_name=_name(ctx, i.reporter_email),
        reporter_email=i.reporter_email,
        due_date=i.due_date,
        labels=list(i.labels),
        resolution=i.resolution,  # type: ignore[arg-type]
        created_at=i.created_at,
        updated_at=i.updated_at,
        resolved_at=i.resolved_at,
    )


def _links_of(ctx: ToolContext, issue_key: str) -> list[LinkOut]:
    links = list(
        ctx.db.scalars(
            select(IssueLink)
            .where(or_(IssueLink.source_key == issue_key, IssueLink.target_key == issue_key))
            .order_by(IssueLink.id)
        )
    )
    if not links:
        return []
    # The issues at the other ends, in one query.
    other_keys = [link.target_key if link.source_key == issue_key else link.source_key for link in links]
    others = {i.key: i for i in ctx.db.scalars(select(Issue).where(Issue.key.in_(set(other_keys))))}
    out = []
    for link, other_key in zip(links, other_keys):
        other = others.get(other_key)
        if other is None:
            raise ToolError.not_found("issue", other_key)
        out.append(
            LinkOut(
                id=link.id,
                link_type=link.link_type,  # type: ignore[arg-type]
                relation=link.link_type if link.source_key == issue_key else INWARD[link.link_type],
                issue_key=other.key,
                summary=other.summary,
                status=other.status,  # type: ignore[arg-type]
            )
        )
    return out


def _watchers_of(ctx: ToolContext, issue_key: str) -> list[str]:
    return list(ctx.db.scalars(select(Watcher.email).where(Watcher.issue_key == issue_key).order_by(Watcher.email)))


def _issue_detail(ctx: ToolContext, i: Issue) -> IssueDetailOut:
    count = ctx.db.scalar(select(func.count()).select_from(IssueComment).where(IssueComment.issue_key == i.key))
    return IssueDetailOut(
        **_issue_out(ctx, i).model_dump(),
        watchers=_watchers_of(ctx, i.key),
        links=_links_of(ctx, i.key),
        comment_count=int(count or 0),
        allowed_next_statuses=[to for _, to in WORKFLOW[i.status]],  # type: ignore[misc]
    )


def _member_out(ctx: ToolContext, m: Member) -> MemberOut:
    person = _person(ctx, m.email)
    return MemberOut(
        name=m.name,
        email=m.email,
        job_title=person.job_title if person else None,
        role=m.role,  # type: ignore[arg-type]
    )


def _project_out(ctx: ToolContext, p: Project) -> ProjectOut:
    return _project_outs(ctx, [p])[0]


def _project_outs(ctx: ToolContext, projects: list[Project]) -> list[ProjectOut]:
    """Projects as results, with members and issue counts per status fetched in two queries per page."""
    if not projects:
        return []
    keys = [p.key for p in projects]
    members: dict[str, list[Member]] = {key: [] for key in keys}
    for m in ctx.db.scalars(
        select(Member).where(Member.project_key.in_(keys)).order_by(Member.project_key, Member.name, Member.email)
    ):
        members[m.project_key].append(m)
    counts = {key: dict.fromkeys(STATUSES, 0) for key in keys}
    for key, status, n in ctx.db.execute(
        select(Issue.project_key, Issue.status, func.count())
        .where(Issue.project_key.in_(keys))
        .group_by(Issue.project_key, Issue.status)
    ):
        counts[key][status] = int(n)
    return [
        ProjectOut(
            key=p.key,
            name=p.name,
            description=p.description,
            project_type=p.project_type,  # type: ignore[arg-type]
            lead_name=_name(ctx, p.lead_email),
            lead_email=p.lead_email,
            archived=p.archived,
            members=[_member_out(ctx, m) for m in members[p.key]],
            issue_counts=counts[p.key],
            created_at=p.created_at,
        )
        for p in projects
    ]


def _comment_out(ctx: ToolContext, c: IssueComment) -> CommentOut:
    return CommentOut(
        id=c.id,
        issue_key=c.issue_key,
        author_name=_name(ctx, c.author_email),
        author_email=c.author_email,
        body=c.body,
        created_at=c.created_at,
    )


# -- rules shared by the tools -------------------------------------------------------------------

_ISSUE_HINT = "Use search_issues to find issue keys (e.g. OPS-12)."


def _project(ctx: ToolContext, key: str) -> Project:
    project = ctx.db.get(Project, key.strip().upper())
    if project is None:
        known = ", ".join(ctx.db.scalars(select(Project.key).order_by(Project.key)))
        raise ToolError.not_found("project", key, f"Known project keys: {known}.")
    return project


def _issue(ctx: ToolContext, key: str) -> Issue:
    return ctx.get(Issue, key.strip().upper(), "issue", _ISSUE_HINT)


def _writable_project(ctx: ToolContext, key: str) -> Project:
    project = _project(ctx, key)
    if project.archived:
        raise ToolError.invalid_state(f"Project {project.key} is archived and read-only; nothing in it can change.")
    return project


def _writable_issue(ctx: ToolContext, key: str) -> Issue:
    issue = _issue(ctx, key)
    _writable_project(ctx, issue.project_key)
    return issue


def _member_email(ctx: ToolContext, project: Project, email: str, what: str) -> str:
    """``email`` if it belongs to a member of ``project``; otherwise say who can be used."""
    email = email.strip().lower()
    if ctx.db.get(Member, (project.key, email)) is None:
        members = ", ".join(ctx.db.scalars(select(Member.email).where(Member.project_key == project.key)))
        raise ToolError.permission_denied(
            f"{email} is not a member of project {project.key}, so they cannot be the {what}. "
            f"Members: {members} (see find_assignable_users)."
        )
    return email


def _check_date(value: str, what: str) -> str:
    try:
        datetime.strptime(value, "%Y-%m-%d")
    except ValueError:
        raise ToolError.invalid_argument(f"{what} {value!r} is not a real date; use YYYY-MM-DD.") from None
    return value


def _normalise_labels(labels: list[str]) -> list[str]:
    out: list[str] = []
    for label in labels:
        clean = label.strip().lower()
        if not clean or any(ch.isspace() for ch in clean) or '"' in clean:
            raise ToolError.invalid_argument(
                f"Label {label!r} is not valid: labels are single words without spaces (use '-', e.g. 'month-end')."
            )
        if clean not in out:
            out.append(clean)
    return out


def _label_condition(label: str) -> ColumnElement[bool]:
    # Labels are a JSON list of quoted strings; matching the quoted value avoids prefix false hits.
    return cast(Issue.labels, String).like(f'%"{_normalise_labels([label])[0]}"%')


def _add_comment(ctx: ToolContext, issue: Issue, body: str) -> IssueComment:
    if not body.strip():
        raise ToolError.invalid_argument("The comment body must not be empty.")
    author = ctx.world.user.email
    comment = IssueComment(
        id=ctx.new_id("cmt"), issue_key=issue.key, author_email=author, body=body.strip(), created_at=ctx.now_iso
    )
    ctx.db.add(comment)
    # Jira's autowatch: commenting on an issue makes you a watcher of it.
    if ctx.db.get(Watcher, (issue.key, author)) is None:
        ctx.db.add(Watcher(issue_key=issue.key, email=author))
    issue.updated_at = ctx.now_iso
    ctx.db.flush()
    return comment


# -- JQL: a small, honest subset ----------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'[^']*')
      | (?P<op>!=|<=|>=|!~|=|~|<|>|\(|\)|,)
      | (?P<word>[^\s=!~<>(),"']+(?:\(\))?)
    )""",
    re.VERBOSE,
)
_JQL_FIELDS = (
    "project, key, assignee, reporter, status, labels, type, priority, resolution, text, summary, "
    "description, due, created, updated, resolved"
)


def _tokens(jql: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = jql.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ToolError.invalid_argument(f"JQL could not be read near {text[pos:pos + 20]!r}.")
        pos = match.end()
        kind = match.lastgroup or "word"
        value = match.group(kind)
        if kind == "string":
            value = value[1:-1].replace('\\"', '"')
        out.append((kind, value))
    return out


def _jql_date(ctx: ToolContext, value: str) -> str:
    """A JQL date: YYYY-MM-DD, now(), or a relative offset like -7d / 2w."""
    if value.lower() in ("now()", "currentdate()", "startofday()"):
        return ctx.now_iso[:10]
    match = re.fullmatch(r"([+-]?\d+)([dw])", value.lower())
    if match:
        days = int(match.group(1)) * (7 if match.group(2) == "w" else 1)
        return ctx.iso(ctx.now + timedelta(days=days))[:10]
    return _check_date(value, "JQL date")


def _jql_value(ctx: ToolContext, field: str, value: str) -> str:
    """Normalise one JQL value for ``field``, rejecting values the field cannot hold."""
    low = value.strip().lower()
    if field in ("assignee", "reporter"):
        return ctx.world.user.email if low == "currentuser()" else low
    if field == "project":
        return value.strip().upper()
    if field == "key":
        return value.strip().upper()
    if field == "status":
        status = low.replace(" ", "_").replace("-", "_")
        status = {"todo": "to_do", "open": "to_do", "closed": "done", "resolved": "done"}.get(status, status)
        if status not in STATUSES:
            raise ToolError.invalid_argument(f"Unknown status {value!r} in JQL; statuses: {', '.join(STATUSES)}.")
        return status
    if field == "type":
        if low not in ISSUE_TYPES:
            raise ToolError.invalid_argument(f"Unknown issue type {value!r}; types: {', '.join(ISSUE_TYPES)}.")
        return low
    if field == "priority":
        if low not in PRIORITIES:
            raise ToolError.invalid_argument(f"Unknown priority {value!r}; priorities: {', '.join(PRIORITIES)}.")
        return low
    if field in ("due", "created", "updated", "resolved"):
        return _jql_date(ctx, value)
    return low


_JQL_ALIASES = {
    "issuetype": "type",
    "label": "labels",
    "duedate": "due",
    "resolutiondate": "resolved",
    "issuekey": "key",
    "issue": "key",
}


def _jql_column(field: str) -> InstrumentedAttribute[Any]:
    return {
        "project": Issue.project_key,
        "key": Issue.key,
        "assignee": Issue.assignee_email,
        "reporter": Issue.reporter_email,
        "status": Issue.status,
        "type": Issue.issue_type,
        "priority": Issue.priority,
        "resolution": Issue.resolution,
        "due": Issue.due_date,
        "created": Issue.created_at,
        "updated": Issue.updated_at,
        "resolved": Issue.resolved_at,
    }[field]


def _text_condition(
    text: str, columns: tuple[str, ...] = ("summary", "description", "comments")
) -> ColumnElement[bool]:
    like = f"%{text.strip()}%"
    parts: list[ColumnElement[bool]] = []
    if "summary" in columns:
        parts.append(Issue.summary.ilike(like))
    if "description" in columns:
        parts.append(Issue.description.ilike(like))
    if "comments" in columns:
        parts.append(exists().where(IssueComment.issue_key == Issue.key, IssueComment.body.ilike(like)))
    return or_(*parts)


def _jql_clause(ctx: ToolContext, field: str, op: str, values: list[str]) -> ColumnElement[bool]:
    if field in ("text", "summary", "description"):
        if op not in ("~", "!~"):
            raise ToolError.invalid_argument(f"JQL field {field} takes ~ (contains), e.g. {field} ~ \"refund\".")
        cols = ("summary", "description", "comments") if field == "text" else (field,)
        cond = _text_condition(values[0], cols)
        return ~cond if op == "!~" else cond
    vals = [_jql_value(ctx, field, v) for v in values]
    if field == "labels":
        if op in ("=", "in"):
            return or_(*[_label_condition(v) for v in vals])
        if op in ("!=", "not in"):
            return and_(*[~_label_condition(v) for v in vals])
        raise ToolError.invalid_argument("JQL labels take =, !=, in, not in or is EMPTY.")
    column = _jql_column(field)
    if op == "=":
        return column == vals[0]
    if op == "!=":
        return or_(column != vals[0], column.is_(None))
    if op == "in":
        return column.in_(vals)
    if op == "not in":
        return or_(column.not_in(vals), column.is_(None))
    if op in ("<", "<=", ">", ">="):
        if field not in ("due", "created", "updated", "resolved"):
            raise ToolError.invalid_argument(f"JQL field {field} cannot be compared with {op}; only dates can.")
        if field != "due" and op in ("<=", ">"):
            # created <= 2025-01-14 means "on or before that day", so compare against the next day.
            nxt = (datetime.strptime(vals[0], "%Y-%m-%d") + timedelta(days=1)).strftime("%Y-%m-%d")
            return column < nxt if op == "<=" else column >= nxt
        return {"<": column < vals[0], "<=": column <= vals[0], ">": column > vals[0], ">=": column >= vals[0]}[op]
    raise ToolError.invalid_argument(f"JQL operator {op!r} is not supported for {field}.")


_ORDER_COLUMNS = ("key", "created", "updated", "due", "priority", "status")


def _parse_jql(ctx: ToolContext, jql: str) -> tuple[list[ColumnElement[bool]], list[Any]]:
    """JQL clauses joined by AND, with an optional ORDER BY, as SQL conditions and orderings."""
    tokens = _tokens(jql)
    conditions: list[ColumnElement[bool]] = []
    order: list[Any] = []
    i = 0

    def peek(offset: int = 0) -> tuple[str, str] | None:
        return tokens[i + offset] if i + offset < len(tokens) else None

    def word(offset: int = 0) -> str:
        tok = peek(offset)
        return tok[1].lower() if tok and tok[0] == "word" else ""

    while i < len(tokens):
        if word() == "order" and word(1) == "by":
            i += 2
            while i < len(tokens):
                field = _JQL_ALIASES.get(word(), word())
                if field not in _ORDER_COLUMNS:
                    raise ToolError.invalid_argument(f"JQL can ORDER BY {', '.join(_ORDER_COLUMNS)}; not {peek()!r}.")
                i += 1
                desc = False
                if word() in ("asc", "desc"):
                    desc = word() == "desc"
                    i += 1
                order.extend(_order_by(field, desc))
                if peek() == ("op", ","):
                    i += 1
            break
        if conditions:
            if word() == "or":
                raise ToolError.invalid_argument("JQL OR is not supported here; use `in (a, b)` or run two searches.")
            if word() != "and":
                raise ToolError.invalid_argument(f"Expected AND or ORDER BY in JQL, found {peek()!r}.")
            i += 1
        tok = peek()
        if tok is None or tok[0] != "word":
            raise ToolError.invalid_argument(f"Expected a field name in JQL, found {tok!r}. Fields: {_JQL_FIELDS}.")
        field = _JQL_ALIASES.get(tok[1].lower(), tok[1].lower())
        if field not in _JQL_FIELDS.split(", "):
            raise ToolError.invalid_argument(f"Unknown JQL field {tok[1]!r}. Fields: {_JQL_FIELDS}.")
        i += 1
        # Operators: = != ~ !~ < <= > >=, in (...), not in (...), is [not] empty.
        if word() == "is":
            negate = word(1) == "not"
            i += 2 if negate else 1
            if word() not in ("empty", "null"):
                raise ToolError.invalid_argument("JQL `is` must be followed by EMPTY (or `is not EMPTY`).")
            i += 1
            if field == "labels":
                empty = cast(Issue.labels, String) == "[]"
            elif field in ("text", "summary", "description"):
                raise ToolError.invalid_argument(f"JQL field {field} cannot be EMPTY-tested.")
            else:
                empty = _jql_column(field).is_(None)
            conditions.append(~empty if negate else empty)
            continue
        if word() in ("in", "not"):
            op = "in"
            if word() == "not":
                if word(1) != "in":
                    raise ToolError.invalid_argument("Expected `not in (...)` in JQL.")
                op, i = "not in", i + 1
            i += 1
            if peek() != ("op", "("):
                raise ToolError.invalid_argument(
                    f"JQL `{op}` needs a list in parentheses, e.g. status in (to_do, done)."
                )
            i += 1
            values: list[str] = []
            while peek() is not None and peek() != ("op", ")"):
                kind, value = tokens[i]
                if (kind, value) != ("op", ","):
                    values.append(value)
                i += 1
            if peek() is None or not values:
                raise ToolError.invalid_argument(f"JQL `{op} (` list is empty or not closed with ')'.")
            i += 1
            conditions.append(_jql_clause(ctx, field, op, values))
            continue
        tok = peek()
        if tok is None or tok[0] != "op" or tok[1] in ("(", ")", ","):
            raise ToolError.invalid_argument(f"Expected an operator after {field} in JQL (=, !=, ~, in, is...).")
        op = tok[1]
        value_tok = peek(1)
        if value_tok is None or value_tok[0] == "op":
            raise ToolError.invalid_argument(f"JQL clause `{field} {op}` has no value.")
        i += 2
        conditions.append(_jql_clause(ctx, field, op, [value_tok[1]]))
    return conditions, order


def _order_by(field: str, desc: bool) -> list[Any]:
    if field == "key":
        cols: list[Any] = [Issue.project_key, Issue.number]
    elif field == "priority":
        # Rank, not alphabet: highest first when descending.
        rank = case({p: len(PRIORITIES) - n for n, p in enumerate(PRIORITIES)}, value=Issue.priority)
        cols = [rank]
    elif field == "status":
        cols = [case({s: n for n, s in enumerate(STATUSES)}, value=Issue.status)]
    else:
        cols = [_jql_column(field)]
    # Issues without a due date (or resolution date) sort last either way, as in Jira.
    return [(c.desc() if desc else c.asc()).nulls_last() for c in cols]


# -- seed ----------------------------------------------------------------------------------------

# (key, name, description, type, lead role, member roles, archived)
_PROJECTS: tuple[tuple[str, str, str, str, str, tuple[str, ...], bool], ...] = (
    (
        "OPS", "Operations", "Day-to-day operations: vendors, equipment, office and logistics.", "business",
        "operations manager", ("office manager", "finance lead", "support lead", "account executive"), False,
    ),
    (
        "FIN", "Finance", "Invoicing, collections, refunds, reconciliations and the month-end close.", "business",
        "finance lead", ("accountant", "operations manager", "account executive"), False,
    ),
    (
        "SUP", "Support escalations",
        "Customer problems escalated from the helpdesk to the product and engineering teams.", "software",
        "support lead", ("support agent", "engineering lead", "product manager", "operations manager"), False,
    ),
    (
        "ENG", "Platform engineering", "The product backlog: bugs, features and infrastructure work.", "software",
        "engineering lead", ("product manager", "support lead", "operations manager"), False,
    ),
    (
        "SAL", "Sales enablement", "Proposals, demos, renewals and customer onboarding.", "business",
        "sales lead", ("account executive", "product manager", "operations manager", "finance lead"), False,
    ),
    (
        "MOVE", "Office move", "Moving into the new office. Finished; kept for reference.", "business",
        "office manager", ("operations manager", "finance lead"), True,
    ),
)

# Per project: (summary, description, type, labels). Placeholders are filled by _fill().
_ISSUE_TEMPLATES: dict[str, tuple[tuple[str, str, str, tuple[str, ...]], ...]] = {
    "OPS": (
        ("Order {qty} x {goods} for the office", "Quote from the supplier is {goods_amount}. Needed by {due}.",
         "task", ("procurement",)),
        ("Book {place} for the quarterly all-hands", "About 40 people; catering for lunch. Address: {place_address}.",
         "task", ("events",)),
        ("Replace broken {goods} in {room}", "Reported by the team on {day}. Check the warranty first.",
         "task", ("facilities",)),
        ("Renew service contract with {company}", "Current contract ends {due}. Ask {customer} ({customer_email}) "
         "for the renewal terms.", "task", ("vendors", "contracts")),
        ("Courier pickup failed for order {order}", "The courier did not collect order {order} for {company} on "
         "{day}. Rebook and tell {customer}.", "bug", ("logistics",)),
        ("Set up equipment for new hire starting {due}", "Laptop, {goods} and accounts.", "task", ("onboarding",)),
        ("Audit software licences", "List every paid tool, its owner and the monthly cost.", "story", ("licences",)),
    ),
    "FIN": (
        ("Reconcile invoice {invoice} for {company}", "Invoice {invoice} ({amount}) does not match the payment we "
         "received. Contact: {customer} <{customer_email}>.", "task", ("reconciliation",)),
        ("Chase overdue invoice {invoice} from {company}", "{amount} overdue since {day}. Send a reminder to "
         "{customer_email}.", "task", ("collections",)),
        ("Refund {amount} to {customer} for order {order}", "Approved refund for order {order} ({qty} x {product}). "
         "Customer email: {customer_email}.", "task", ("refunds",)),
        ("Duplicate charge of {amount} for {company}", "{customer} was charged twice for order {order}. Find the "
         "duplicate charge and refund it.", "bug", ("billing", "refunds")),
        ("Month-end close for {month}", "Close the books for {month}: accruals, bank reconciliation, reports.",
         "task", ("month-end",)),
        ("Update VAT rates in the billing system", "New rates apply from {due}.", "story", ("tax",)),
        ("Approve expense report from {colleague}", "Expenses of {amount} for a client visit to {company}.",
         "task", ("expenses",)),
    ),
    "SUP": (
        ("{company}: CSV export fails with error 500", "Reported by {customer} ({customer_email}) on {day}. "
         "Blocks their month-end close.", "bug", ("customer-escalation", "export")),
        ("{company}: dashboard counts order {order} twice", "Revenue shows {amount} too much. Customer: "
         "{customer} <{customer_email}>.", "bug", ("customer-escalation", "reporting")),
        ("Login loop after password reset for {customer_email}", "{customer} at {company} cannot log in since "
         "{day}.", "bug", ("customer-escalation", "login")),
        ("API rate limit too strict for {company}", "They bought the {product} ({amount}) but get HTTP 429.",
         "bug", ("customer-escalation", "api")),
        ("SSO setup guide for {company}", "{customer} asked how to connect their identity provider.",
         "story", ("docs",)),
        ("Data export of all invoices for {company}", "{customer} ({customer_email}) needs every invoice since "
         "{day} as a ZIP.", "task", ("data-request",)),
    ),
    "ENG": (
        ("Fix CSV export timeout in {area}", "Exports over 10k rows time out after 30 s.", "bug", ("export",)),
        ("Add SAML single sign-on to {area}", "Customers keep asking for SSO.", "story", ("sso", "security")),
        ("Rate limiter counts retries twice in {area}", "Retried requests are counted against the quota twice.",
         "bug", ("api",)),
        ("Revenue widget ignores refunds in {area}", "Refunded orders still count as revenue.", "bug",
         ("reporting",)),
        ("Audit log for admin actions in {area}", "Record who changed what and when.", "story", ("security",)),
        ("Flaky test in the {area} suite", "Fails about one run in ten on CI.", "bug", ("tests",)),
        ("Speed up the {area} page", "p95 load time is 4 s; target 1 s.", "story", ("performance",)),
        ("Upgrade the database driver used by {area}", "The old driver is out of support on {due}.", "task",
         ("infrastructure",)),
    ),
    "SAL": (
        ("Proposal for {company}: {qty} x {product}", "Draft the proposal for {customer} ({customer_email}); list "
         "price {amount}.", "task", ("proposal",)),
        ("Demo of {product} for {customer} at {company}", "Book 45 minutes before {due}.", "task", ("demo",)),
        ("Onboarding workshop for {company}", "Kick-off with {customer}; the workshop was sold for {amount}.",
         "story", ("onboarding",)),
        ("Renewal quote for {company} ({amount})", "Their plan renews on {due}. Contact {customer_email}.",
         "task", ("renewal",)),
        ("Update the price sheet for {product}", "New list price from {due}.", "task", ("pricing",)),
    ),
    "MOVE": (
        ("Pack and label the {room}", "Boxes arrive on {day}.", "task", ("move",)),
        ("Order {qty} x {goods} for the new office", "Supplier quote {goods_amount}.", "task", ("move", "procurement")),
        ("Set up the network in the new office", "Two access points per floor.", "task", ("move", "it")),
    ),
}

_ISSUES_PER_PROJECT = {"OPS": 40, "FIN": 45, "SUP": 40, "ENG": 40, "SAL": 35, "MOVE": 12}
_AREAS = ("billing", "reports", "orders", "admin console", "public API", "mobile app", "search", "notifications")
_ROOMS = ("kitchen", "meeting room", "reception", "storage room", "open space")
_COMMENTS = (
    "Started on this today.",
    "Blocked until finance confirms the amount.",
    "Pull request is up for review.",
    "Confirmed with {customer} by email.",
    "Moving this to next week; waiting on {company}.",
    "Done on my side, please double-check.",
    "Can we bump the priority? {company} is asking again.",
)
_PHYSICAL = ("hardware", "furniture", "pantry", "supplies", "merchandise")
_SEED_STATUSES = ("to_do",) * 3 + ("in_progress",) * 3 + ("in_review",) * 2 + ("done",) * 3


def _fill(ctx: ToolContext, rng: random.Random, created_days_ago: float) -> dict[str, str]:
    """Concrete values for one issue: a customer and their company, a product, money, dates."""
    world = ctx.world
    customer = rng.choice(world.customers)
    company = world.organisation(customer.organisation_id)
    product = rng.choice(world.products)
    goods = rng.choice([p for p in world.products if p.category in _PHYSICAL])
    place = rng.choice(world.places)
    qty = rng.randint(1, 10) if product.category in _PHYSICAL else rng.randint(1, 3)
    goods_qty = rng.randint(2, 12)
    day = ctx.days_from_now(-created_days_ago - rng.randint(1, 10))
    return {
        "customer": customer.name,
        "customer_email": customer.email,
        "company": company.name,
        "product": product.name,
        "qty": str(qty),
        "amount": f"{product.unit_price * qty:,.2f} {world.currency}",
        "goods": goods.name,
        "goods_amount": f"{goods.unit_price * goods_qty:,.2f} {world.currency}",
        "order": f"ORD-{rng.randint(10000, 99999)}",
        "invoice": f"INV-{day[:4]}-{rng.randint(1, 999):04d}",
        "place": place.name,
        "place_address": place.address,
        "room": rng.choice(_ROOMS),
        "area": rng.choice(_AREAS),
        "month": datetime.strptime(day[:10], "%Y-%m-%d").strftime("%B %Y"),
        "day": day[:10],
        "due": ctx.days_from_now(rng.randint(3, 40))[:10],
        "colleague": rng.choice(world.team).name,
    }


@service.seeder
def seed(ctx: ToolContext) -> None:
    # new_id runs an UPDATE, which would autoflush once per row; flush by hand, parents first, since
    # without relationship() the unit of work does not order inserts by foreign key.
    with ctx.db.no_autoflush:
        _seed(ctx)


def _seed(ctx: ToolContext) -> None:
    world = ctx.world
    rng = ctx.rng("seed")
    by_role = {p.job_title: p for p in world.team}
    issues: list[Issue] = []
    children: list[Base] = []  # watchers and comments, added once their issues are stored
    for key, name, description, kind, lead_role, member_roles, archived in _PROJECTS:
        lead = by_role[lead_role]
        ctx.db.add(
            Project(
                key=key,
                name=name,
                description=description,
                project_type=kind,
                lead_email=lead.email,
                archived=archived,
                created_at=ctx.days_from_now(-rng.randint(200, 700)),
            )
        )
        ctx.db.flush()
        # The user the agent acts for belongs to every project, so their default reporter is valid.
        roles = [lead_role, *member_roles]
        members = [by_role[r] for r in roles]
        if world.user not in members:
            members.append(world.user)
        for person in members:
            role = "administrator" if person is lead else "member"
            ctx.db.add(Member(project_key=key, email=person.email, name=person.name, role=role))
        ctx.db.flush()
        templates = _ISSUE_TEMPLATES[key]
        for number in range(1, _ISSUES_PER_PROJECT[key] + 1):
            summary_t, body_t, issue_type, labels = templates[(number - 1) % len(templates)]
            status = "done" if archived else rng.choice(_SEED_STATUSES)
            age = rng.uniform(1, 90) if not archived else rng.uniform(150, 300)
            facts = _fill(ctx, rng, age)
            reporter = rng.choice(members)
            assignee = rng.choice(members) if status != "to_do" or rng.random() < 0.6 else None
            due = None
            if rng.random() < 0.6:
                due = ctx.days_from_now(rng.randint(-20, 45) if not archived else -rng.randint(120, 200))[:10]
            updated = ctx.days_from_now(-age * rng.uniform(0, 0.8))
            issue = Issue(
                key=f"{key}-{number}",
                project_key=key,
                number=number,
                summary=summary_t.format(**facts),
                description=body_t.format(**facts),
                issue_type=issue_type,
                status=status,
                priority=rng.choice(("highest", "high", "high", "medium", "medium", "medium", "low", "lowest")),
                assignee_email=assignee.email if assignee else None,
                reporter_email=reporter.email,
                due_date=due,
                labels=list(labels),
                resolution=("done" if rng.random() < 0.9 else "won't do") if status == "done" else None,
                created_at=ctx.days_from_now(-age),
                updated_at=updated,
                resolved_at=updated if status == "done" else None,
            )
            ctx.db.add(issue)
            issues.append(issue)
            watchers = {reporter.email}
            if assignee:
                watchers.add(assignee.email)
            if rng.random() < 0.4:
                watchers.add(rng.choice(members).email)
            for email in sorted(watchers):
                children.append(Watcher(issue_key=issue.key, email=email))
            for n in range(rng.choice((0, 0, 1, 1, 2, 3))):
                author = assignee or reporter
                children.append(
                    IssueComment(
                        id=ctx.new_id("cmt"),
                        issue_key=issue.key,
                        author_email=(author if n % 2 == 0 else reporter).email,
                        body=rng.choice(_COMMENTS).format(**facts),
                        created_at=ctx.days_from_now(-age + (n + 1) * age / 5),
                    )
                )
    ctx.db.flush()
    ctx.db.add_all(children)
    _seed_links(ctx, rng, issues)
    ctx.db.flush()


def _seed_links(ctx: ToolContext, rng: random.Random, issues: list[Issue]) -> None:
    """Links that make sense: ENG work blocking the SUP escalation on the same topic, related or
    blocking work inside a project, and duplicates only between issues made from the same template."""
    live = [i for i in issues if i.project_key != "MOVE"]
    pairs: list[tuple[Issue, Issue, str]] = []
    eng_by_label: dict[str, list[Issue]] = {}
    for issue in live:
        if issue.project_key == "ENG":
            for label in issue.labels:
                eng_by_label.setdefault(label, []).append(issue)
    for escalation in (i for i in live if i.project_key == "SUP"):
        topic = next((label for label in escalation.labels if label in eng_by_label), None)
        if topic and rng.random() < 0.5:
            pairs.append((rng.choice(eng_by_label[topic]), escalation, "blocks"))
    while len(pairs) < 45:
        a, b = rng.sample(live, 2)
        if a.project_key != b.project_key:
            continue
        # Only engineering work is generic enough to be filed twice ("Flaky test in ..." twice).
        same_work = a.project_key == "ENG" and a.summary.split(" in ")[0] == b.summary.split(" in ")[0]
        kind = "duplicates" if same_work else rng.choice(("blocks", "relates to"))
        pairs.append((a, b, kind))
    seen: set[frozenset[str]] = set()
    for source, target, link_type in pairs:
        pair = frozenset((source.key, target.key))
        if pair in seen:
            continue
        seen.add(pair)
        # A done issue cannot be blocked by unfinished work (do_transition enforces it), so such pairs only relate.
        if link_type == "blocks" and target.status == "done" and source.status != "done":
            link_type = "relates to"
        ctx.db.add(
            IssueLink(
                id=ctx.new_id("lnk"),
                link_type=link_type,
                source_key=source.key,
                target_key=target.key,
                created_at=max(source.created_at, target.created_at),
            )
        )


# -- projects ------------------------------------------------------------------------------------


@service.tool("read")
def search_projects(
    ctx: ToolContext,
    query: str | None = None,
    member_email: EmailAddress | None = None,
    include_archived: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[ProjectOut]:
    """Search projects by key, name or description, with their members and issue counts per status.

    Args:
        query: Text to match against the project key, name or description (case-insensitive).
        member_email: Only projects this colleague is a member of.
        include_archived: Also return archived (read-only) projects.
        limit: Maximum number of projects to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Project).order_by(Project.key)
    if query and query.strip():
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Project.key.ilike(like), Project.name.ilike(like), Project.description.ilike(like)))
    if member_email:
        stmt = stmt.where(
            Project.key.in_(select(Member.project_key).where(Member.email == member_email.strip().lower()))
        )
    if not include_archived:
        stmt = stmt.where(Project.archived.is_(False))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ProjectOut](items=_project_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_project(ctx: ToolContext, project_key: ProjectKey) -> ProjectOut:
    """Get one project by key: its lead, members and how many issues are in each status.

    Args:
        project_key: The project's key, e.g. OPS.
    """
    return _project_out(ctx, _project(ctx, project_key))


@service.tool("read")
def find_assignable_users(
    ctx: ToolContext,
    project_key: ProjectKey,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[MemberOut]:
    """List the people who can be assigned issues in a project (its members).

    Args:
        project_key: The project's key, e.g. OPS.
        query: Text to match against the member's name or email (case-insensitive).
        limit: Maximum number of people to return (1-100).
        cursor: next_cursor from a previous page.
    """
    project = _project(ctx, project_key)
    stmt = select(Member).where(Member.project_key == project.key).order_by(Member.name, Member.email)
    if query and query.strip():
        like = f"%{query.strip()}%"
        stmt = stmt.where(or_(Member.name.ilike(like), Member.email.ilike(like)))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[MemberOut](items=[_member_out(ctx, m) for m in rows], total=total, next_cursor=next_cursor)


# -- issues: reads --------------------------------------------------------------------------------


@service.tool("read")
def search_issues(
    ctx: ToolContext,
    jql: str | None = None,
    project_key: ProjectKey | None = None,
    assignee_email: EmailAddress | None = None,
    reporter_email: EmailAddress | None = None,
    status: IssueStatus | None = None,
    label: Tag | None = None,
    issue_type: IssueType | None = None,
    priority: Priority | None = None,
    text: str | None = None,
    due_before: Date | None = None,
    unassigned: bool = False,
    include_archived: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[IssueOut]:
    """Search issues with filters and/or JQL, most recently updated first. Everything combines with AND.

    JQL subset: clauses joined by AND, e.g.
    `project = SUP AND status in ("to do", "in progress") AND assignee = currentUser() ORDER BY due ASC`.
    Fields: project, key, assignee, reporter, status, labels, type, priority, resolution, due,
    created, updated, resolved (operators = != in, not in, is EMPTY, is not EMPTY; dates also < <= > >=
    with YYYY-MM-DD, now() or offsets like -7d), and text / summary / description with ~ (contains).
    ORDER BY key, created, updated, due, priority or status, ASC or DESC. OR is not supported.
    Issues of archived projects are left out unless include_archived is true or project_key names one.

    Args:
        jql: A JQL query in the subset above.
        project_key: Only issues of this project, e.g. OPS.
        assignee_email: Only issues assigned to this colleague.
        reporter_email: Only issues reported by this colleague.
        status: Only issues in this status: to_do, in_progress, in_review or done.
        label: Only issues with this label, e.g. refunds.
        issue_type: Only issues of this type: task, bug or story.
        priority: Only issues of this priority: highest, high, medium, low or lowest.
        text: Text to find in the summary, description or comments (case-insensitive), e.g. an invoice number.
        due_before: Only issues due on or before this date (YYYY-MM-DD).
        unassigned: Only issues that nobody is assigned to.
        include_archived: Also search the issues of archived projects.
        limit: Maximum number of issues to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt: Select[Any] = select(Issue)
    order: list[Any] = []
    if jql and jql.strip():
        conditions, order = _parse_jql(ctx, jql)
        stmt = stmt.where(*conditions)
    if project_key:
        project = _project(ctx, project_key)
        stmt = stmt.where(Issue.project_key == project.key)
        include_archived = include_archived or project.archived
    if not include_archived:
        stmt = stmt.where(Issue.project_key.in_(select(Project.key).where(Project.archived.is_(False))))
    if assignee_email:
        stmt = stmt.where(Issue.assignee_email == assignee_email.strip().lower())
    if reporter_email:
        stmt = stmt.where(Issue.reporter_email == reporter_email.strip().lower())
    if status:
        stmt = stmt.where(Issue.status == status)
    if label:
        stmt = stmt.where(_label_condition(label))
    if issue_type:
        stmt = stmt.where(Issue.issue_type == issue_type)
    if priority:
        stmt = stmt.where(Issue.priority == priority)
    if text and text.strip():
        stmt = stmt.where(_text_condition(text))
    if due_before:
        stmt = stmt.where(Issue.due_date <= _check_date(due_before, "due_before"))
    if unassigned:
        stmt = stmt.where(Issue.assignee_email.is_(None))
    # A stable tiebreak keeps pages from overlapping whatever the requested order.
    stmt = stmt.order_by(*(order or [Issue.updated_at.desc()]), Issue.project_key, Issue.number)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[IssueOut](items=[_issue_out(ctx, i) for i in rows], total=total, next_cursor=next_cursor)


@service.tool("read")
def get_issue(ctx: ToolContext, issue_key: IssueKey) -> IssueDetailOut:
    """Get one issue by key with its watchers, links to other issues and the statuses it can move to next.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
    """
    return _issue_detail(ctx, _issue(ctx, issue_key))


@service.tool("read")
def get_transitions(ctx: ToolContext, issue_key: IssueKey) -> TransitionsOut:
    """List the workflow transitions an issue can take now (use do_transition to take one).

    Workflow: to_do -> in_progress (Start progress); in_progress -> in_review (Submit for review) or
    to_do (Stop progress); in_review -> done (Approve) or in_progress (Request changes); done -> to_do (Reopen).

    Args:
        issue_key: The issue's key, e.g. OPS-12.
    """
    issue = _issue(ctx, issue_key)
    return TransitionsOut(
        issue_key=issue.key,
        status=issue.status,  # type: ignore[arg-type]
        transitions=[TransitionOut(name=n, to_status=to) for n, to in WORKFLOW[issue.status]],  # type: ignore[arg-type]
    )


@service.tool("read")
def get_comments(ctx: ToolContext, issue_key: IssueKey, limit: Limit = 20, cursor: Cursor = None) -> Page[CommentOut]:
    """List an issue's comments, oldest first.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    issue = _issue(ctx, issue_key)
    stmt = select(IssueComment).where(IssueComment.issue_key == issue.key).order_by(
        IssueComment.created_at, IssueComment.id
    )
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[CommentOut](items=[_comment_out(ctx, c) for c in rows], total=total, next_cursor=next_cursor)


# -- issues: writes -------------------------------------------------------------------------------


@service.tool("write")
def create_issue(
    ctx: ToolContext,
    project_key: ProjectKey,
    summary: Subject,
    issue_type: IssueType = "task",
    description: Text = "",
    priority: Priority = "medium",
    assignee_email: EmailAddress | None = None,
    reporter_email: EmailAddress | None = None,
    due_date: Date | None = None,
    labels: list[Tag] | None = None,
) -> IssueDetailOut:
    """Create an issue in a project; it starts in to_do and gets the next key, e.g. OPS-41.

    The assignee and reporter must be members of the project (see find_assignable_users). The
    reporter defaults to you and watches the issue. Archived projects take no new issues.

    Args:
        project_key: The project's key, e.g. OPS.
        summary: A one-line title.
        issue_type: task (default), bug or story.
        description: The details, e.g. the customer, amounts and order or invoice numbers involved.
        priority: highest, high, medium (default), low or lowest.
        assignee_email: The member to assign it to.
        reporter_email: The member who reports it; defaults to you.
        due_date: When it is due (YYYY-MM-DD).
        labels: Labels without spaces, e.g. ["refunds", "customer-escalation"].
    """
    project = _writable_project(ctx, project_key)
    if not summary.strip():
        raise ToolError.invalid_argument("summary must not be empty.")
    reporter = _member_email(ctx, project, reporter_email or ctx.world.user.email, "reporter")
    assignee = _member_email(ctx, project, assignee_email, "assignee") if assignee_email else None
    # Keys are never reused: issues are never deleted, so the highest number is the last one given out.
    number = (ctx.db.scalar(select(func.max(Issue.number)).where(Issue.project_key == project.key)) or 0) + 1
    issue = Issue(
        key=f"{project.key}-{number}",
        project_key=project.key,
        number=number,
        summary=summary.strip(),
        description=description.strip(),
        issue_type=issue_type,
        status="to_do",
        priority=priority,
        assignee_email=assignee,
        reporter_email=reporter,
        due_date=_check_date(due_date, "due_date") if due_date else None,
        labels=_normalise_labels(labels or []),
        resolution=None,
        created_at=ctx.now_iso,
        updated_at=ctx.now_iso,
        resolved_at=None,
    )
    ctx.db.add(issue)
    ctx.db.flush()  # the issue before its watcher: the unit of work does not order inserts by foreign key
    ctx.db.add(Watcher(issue_key=issue.key, email=reporter))
    ctx.db.flush()
    return _issue_detail(ctx, issue)


@service.tool("write")
def edit_issue(
    ctx: ToolContext,
    issue_key: IssueKey,
    summary: Subject | None = None,
    description: Text | None = None,
    issue_type: IssueType | None = None,
    priority: Priority | None = None,
    due_date: Date | None = None,
    add_labels: list[Tag] | None = None,
    remove_labels: list[Tag] | None = None,
) -> IssueDetailOut:
    """Edit an issue's fields. Only what you pass changes. Status changes go through do_transition,
    the assignee through assign_issue.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        summary: A new one-line title.
        description: A new description (replaces the old one).
        issue_type: New type: task, bug or story.
        priority: New priority: highest, high, medium, low or lowest.
        due_date: New due date (YYYY-MM-DD).
        add_labels: Labels to add.
        remove_labels: Labels to remove; each must be on the issue.
    """
    issue = _writable_issue(ctx, issue_key)
    fields = (summary, description, issue_type, priority, due_date, add_labels, remove_labels)
    if all(f is None for f in fields):
        raise ToolError.invalid_argument("Pass at least one field to change.")
    if summary is not None:
        if not summary.strip():
            raise ToolError.invalid_argument("summary must not be empty.")
        issue.summary = summary.strip()
    if description is not None:
        issue.description = description.strip()
    if issue_type is not None:
        issue.issue_type = issue_type
    if priority is not None:
        issue.priority = priority
    if due_date is not None:
        issue.due_date = _check_date(due_date, "due_date")
    labels = list(issue.labels)
    if remove_labels:
        remove = _normalise_labels(remove_labels)
        missing = [label for label in remove if label not in labels]
        if missing:
            raise ToolError.invalid_argument(
                f"Issue {issue.key} does not have the label(s) {', '.join(missing)}; "
                f"its labels are: {', '.join(labels) or 'none'}."
            )
        labels = [label for label in labels if label not in remove]
    if add_labels:
        labels += [label for label in _normalise_labels(add_labels) if label not in labels]
    issue.labels = labels
    issue.updated_at = ctx.now_iso
    return _issue_detail(ctx, issue)


@service.tool("write")
def assign_issue(ctx: ToolContext, issue_key: IssueKey, assignee_email: EmailAddress | None) -> IssueDetailOut:
    """Assign an issue to a project member, or pass null to unassign it.

    Only members of the issue's project can be assigned (see find_assignable_users); customers and
    colleagues outside the project cannot. Issues in progress or in review must keep an assignee.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        assignee_email: The member's email, or null to leave the issue unassigned.
    """
    issue = _writable_issue(ctx, issue_key)
    project = _project(ctx, issue.project_key)
    if assignee_email is None:
        if issue.status in ("in_progress", "in_review"):
            raise ToolError.invalid_state(
                f"Issue {issue.key} is {issue.status} and must keep an assignee; assign someone else, or "
                "do_transition it back to to_do first."
            )
        if issue.assignee_email is None:
            raise ToolError.invalid_state(f"Issue {issue.key} is already unassigned.")
        issue.assignee_email = None
    else:
        email = _member_email(ctx, project, assignee_email, "assignee")
        if issue.assignee_email == email:
            raise ToolError.invalid_state(f"Issue {issue.key} is already assigned to {email}.")
        issue.assignee_email = email
    issue.updated_at = ctx.now_iso
    return _issue_detail(ctx, issue)


@service.tool("write")
def do_transition(
    ctx: ToolContext,
    issue_key: IssueKey,
    status: IssueStatus,
    comment: Text | None = None,
    resolution: Resolution | None = None,
) -> IssueDetailOut:
    """Move an issue along the workflow to a new status (see get_transitions for the allowed moves).

    Rules: to_do -> in_progress needs an assignee; in_review -> done is refused while an issue
    that blocks this one is not done; done sets a resolution (done by default); reopening a done
    issue (-> to_do) clears it. Skipping steps (to_do -> done) is not allowed.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        status: The status to move to: to_do, in_progress, in_review or done.
        comment: A comment to add with the transition.
        resolution: Only when moving to done: done (default), won't do or duplicate.
    """
    issue = _writable_issue(ctx, issue_key)
    if status == issue.status:
        raise ToolError.invalid_state(f"Issue {issue.key} is already {status}.")
    allowed = {to: name for name, to in WORKFLOW[issue.status]}
    if status not in allowed:
        moves = ", ".join(f"{to} ({name})" for to, name in allowed.items())
        raise ToolError.invalid_state(
            f"Issue {issue.key} is {issue.status} and cannot move to {status}; from {issue.status} it can "
            f"move to: {moves}."
        )
    if resolution is not None and status != "done":
        raise ToolError.invalid_argument("resolution is only set when moving to done.")
    if status == "in_progress" and issue.assignee_email is None:
        raise ToolError.invalid_state(
            f"Issue {issue.key} has no assignee; assign_issue it to a project member before starting progress."
        )
    if status == "done":
        blockers = ctx.db.scalars(
            select(Issue)
            .join(IssueLink, IssueLink.source_key == Issue.key)
            .where(IssueLink.target_key == issue.key, IssueLink.link_type == "blocks", Issue.status != "done")
            .order_by(Issue.project_key, Issue.number)
        ).all()
        if blockers:
            listed = ", ".join(f"{b.key} ({b.status})" for b in blockers)
            raise ToolError.invalid_state(
                f"Issue {issue.key} is blocked by unfinished issue(s) {listed}; finish them or remove the "
                "link (delete_issue_link) before moving it to done."
            )
        issue.resolution = resolution or "done"
        issue.resolved_at = ctx.now_iso
    elif issue.status == "done":
        issue.resolution = None
        issue.resolved_at = None
    issue.status = status
    issue.updated_at = ctx.now_iso
    if comment is not None:
        _add_comment(ctx, issue, comment)
    return _issue_detail(ctx, issue)


@service.tool("write")
def add_comment(ctx: ToolContext, issue_key: IssueKey, body: Text) -> CommentOut:
    """Comment on an issue as yourself; you start watching it.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        body: The comment text.
    """
    issue = _writable_issue(ctx, issue_key)
    return _comment_out(ctx, _add_comment(ctx, issue, body))


@service.tool("write")
def add_watcher(ctx: ToolContext, issue_key: IssueKey, email: EmailAddress) -> WatchersOut:
    """Add a colleague as a watcher of an issue so they are notified of changes.

    Only people on the team can watch issues (customers cannot).

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        email: The colleague's email.
    """
    issue = _writable_issue(ctx, issue_key)
    email = email.strip().lower()
    if _person(ctx, email) is None:
        raise ToolError.permission_denied(
            f"{email} is not on the team, so they cannot watch issues. Watchers must be colleagues "
            f"({ctx.world.home.name})."
        )
    if ctx.db.get(Watcher, (issue.key, email)) is not None:
        raise ToolError.invalid_state(f"{email} already watches {issue.key}.")
    ctx.db.add(Watcher(issue_key=issue.key, email=email))
    ctx.db.flush()
    return WatchersOut(issue_key=issue.key, watchers=_watchers_of(ctx, issue.key))


@service.tool("write")
def remove_watcher(ctx: ToolContext, issue_key: IssueKey, email: EmailAddress) -> WatchersOut:
    """Stop someone watching an issue.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        email: The watcher's email.
    """
    issue = _writable_issue(ctx, issue_key)
    watcher = ctx.db.get(Watcher, (issue.key, email.strip().lower()))
    if watcher is None:
        current = ", ".join(_watchers_of(ctx, issue.key)) or "nobody"
        raise ToolError.invalid_state(f"{email} does not watch {issue.key}; its watchers are: {current}.")
    ctx.db.delete(watcher)
    ctx.db.flush()
    return WatchersOut(issue_key=issue.key, watchers=_watchers_of(ctx, issue.key))


@service.tool("write")
def link_issues(
    ctx: ToolContext, issue_key: IssueKey, link_type: LinkType, other_issue_key: IssueKey
) -> IssueDetailOut:
    """Link two issues: "<issue_key> <link_type> <other_issue_key>", e.g. ENG-4 blocks SUP-2.

    Issues of different projects can be linked. An issue cannot be linked to itself, the same link
    cannot be made twice, and two issues cannot block each other.

    Args:
        issue_key: The issue the link reads from, e.g. ENG-4.
        link_type: blocks, relates to, duplicates or clones.
        other_issue_key: The issue it points to, e.g. SUP-2.
    """
    issue = _writable_issue(ctx, issue_key)
    other = _writable_issue(ctx, other_issue_key)
    if issue.key == other.key:
        raise ToolError.invalid_argument(f"An issue cannot be linked to itself ({issue.key}).")
    existing = ctx.db.scalars(
        select(IssueLink).where(
            or_(
                and_(IssueLink.source_key == issue.key, IssueLink.target_key == other.key),
                and_(IssueLink.source_key == other.key, IssueLink.target_key == issue.key),
            )
        )
    ).all()
    for link in existing:
        forward = link.source_key == issue.key
        if link.link_type == link_type and (forward or link_type == "relates to"):
            raise ToolError.conflict(f"{issue.key} already {link_type} {other.key} (link {link.id}).")
        if link_type == "blocks" and link.link_type == "blocks" and not forward:
            raise ToolError.invalid_state(
                f"{other.key} already blocks {issue.key}; two issues cannot block each other."
            )
    ctx.db.add(
        IssueLink(
            id=ctx.new_id("lnk"),
            link_type=link_type,
            source_key=issue.key,
            target_key=other.key,
            created_at=ctx.now_iso,
        )
    )
    issue.updated_at = ctx.now_iso
    other.updated_at = ctx.now_iso
    ctx.db.flush()
    return _issue_detail(ctx, issue)


@service.tool("write")
def delete_issue_link(ctx: ToolContext, link_id: LinkId) -> IssueDetailOut:
    """Remove a link between two issues (get_issue lists an issue's links with their ids).

    Args:
        link_id: The link's id, e.g. lnk_0007.
    """
    link = ctx.get(IssueLink, link_id, "issue link", "get_issue lists an issue's links with their ids.")
    source = _writable_issue(ctx, link.source_key)
    other = _writable_issue(ctx, link.target_key)
    ctx.db.delete(link)
    source.updated_at = ctx.now_iso
    other.updated_at = ctx.now_iso
    ctx.db.flush()
    return _issue_detail(ctx, source)
