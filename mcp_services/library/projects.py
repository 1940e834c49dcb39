"""Projects: the team's issue tracker (modelled on Jira Cloud's REST API, with Asana-like projects).

Projects have keys (OPS, FIN, SUP...) and members drawn from the home team; issues are numbered per
project (OPS-12) and move through one workflow (``WORKFLOW``): to_do -> in_progress -> in_review ->
done, with "stop progress", "request changes" and "reopen" going back. Rules follow common Jira
setups: only project members can be assigned, work cannot start unassigned, an issue cannot be done
while an unfinished issue blocks it, and archived projects are read-only. Seeded issues
(``data/projects_seed.json``) mention the world's customers, companies, products, invoices and
orders, so values found in other services lead here and back. ``search_issues`` takes structured
filters (a customer's email or company among them) and a small JQL subset.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, WithJsonSchema

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field
from mcp_services.kernel.entity import runtime_of
from mcp_services.kernel.present import present_records
from mcp_services.kernel.records import Query, RecordAccess, check_search_text, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    CompanyName,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    JobTitle,
    PersonName,
    Subject,
    Tag,
    Text,
    moment,
)
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.prose import industry_facts, money, write
from mcp_services.kernel.world import PlannedInvoice, World

ProjectKey = EntityId("projects.project")
IssueKey = EntityId("projects.issue")
CommentId = EntityId("projects.comment")
LinkId = EntityId("projects.link")
MemberId = EntityId("projects.member")
WatcherId = EntityId("projects.watcher")

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
WORKFLOW: dict[str, tuple[tuple[str, IssueStatus], ...]] = {
    "to_do": (("Start progress", "in_progress"),),
    "in_progress": (("Submit for review", "in_review"), ("Stop progress", "to_do")),
    "in_review": (("Approve", "done"), ("Request changes", "in_progress")),
    "done": (("Reopen", "to_do"),),
}
ISSUE_STATUS = StateDef(
    field="status",
    values=list(STATUSES),
    initial="to_do",
    terminal=["done"],
    transitions={status: [to for _, to in moves] for status, moves in WORKFLOW.items()},
)

#: How a link reads from its other end (Jira's inward description).
INWARD: dict[str, str] = {
    "blocks": "is blocked by",
    "relates to": "relates to",
    "duplicates": "is duplicated by",
    "clones": "is cloned by",
}

service = Service(
    "projects",
    "Project and issue tracker for the team: projects with keys, issues (tasks, bugs, stories) with "
    "assignees, due dates, labels, a to do -> in progress -> in review -> done workflow, comments, "
    "watchers and links between issues.",
    title="Projects",
)


@service.entity(table="members", prefix="mem", label="name", search=("name", "email"))
class Member:
    """A colleague who belongs to a project; the id is '<project key>|<email>'."""

    id: MemberId
    project_key: ProjectKey = field(index=True)
    email: EmailAddress = field(role="member")
    name: PersonName = field(role="member")
    job_title: JobTitle | None = None
    role: MemberRole


#: What a project shows of each member.
_MEMBER_FIELDS = ("name", "email", "job_title", "role")
_MEMBER_SCHEMA = {
    "type": "object",
    "properties": {f: runtime_of(Member).schema["properties"][f] for f in _MEMBER_FIELDS},
    "required": list(_MEMBER_FIELDS),
}


def _member_lists(db: RecordAccess, projects: Sequence[Any]) -> list[list[dict[str, Any]]]:
    """Each project's members by name, for a whole result in one query."""
    members: dict[str, list[dict[str, Any]]] = {p.id: [] for p in projects}
    for m in db.query(Member).where_in("project_key", list(members)).order_by("project_key", "name", "email").all():
        members[m.project_key].append({f: getattr(m, f) for f in _MEMBER_FIELDS})
    return [members[p.id] for p in projects]


def _issue_counts(db: RecordAccess, projects: Sequence[Any]) -> list[dict[str, int]]:
    """How many issues each project has in each status, for a whole result in one query."""
    counts = {p.id: dict.fromkeys(STATUSES, 0) for p in projects}
    keys = _marks(len(counts))
    grouped = f"SELECT project_key, status, COUNT(*) FROM issues WHERE project_key IN ({keys}) GROUP BY 1, 2"
    for key, status, n in db.sql(grouped, *counts):
        counts[key][status] = int(n)
    return [counts[p.id] for p in projects]


def _marks(n: int) -> str:
    return ", ".join("?" for _ in range(n))


@service.entity(table="projects", prefix="prj", label="name", search=("name", "description"))
class Project:
    """A project of the team; its id is its key, e.g. OPS."""

    id: ProjectKey = field(mention="the project key")
    name: str
    description: Text
    project_type: ProjectType
    lead_email: EmailAddress = field(role="lead")
    lead_name: PersonName = field(role="lead")
    archived: bool = False
    created_at: DateTime

    key = derived(ProjectKey, lambda p: p.id)
    members = derived(
        Annotated[list[dict[str, Any]], WithJsonSchema({"type": "array", "items": _MEMBER_SCHEMA})],
        batch=_member_lists,
        description="The members, by name",
    )
    issue_counts = derived(dict[str, int], batch=_issue_counts, description="How many issues are in each status")


@service.entity(
    table="issues", prefix="iss", label="summary", search=("summary", "description"), state=ISSUE_STATUS
)
class Issue:
    """A task, bug or story in a project; its id is its key, e.g. OPS-12."""

    id: IssueKey = field(mention="the issue key")
    project_key: ProjectKey = field(index=True)
    number: int
    summary: Subject
    description: Text
    issue_type: IssueType
    status: IssueStatus = field(index=True)
    priority: Priority
    assignee_email: EmailAddress | None = field(None, index=True, role="assignee")
    assignee_name: PersonName | None = field(None, role="assignee")
    reporter_email: EmailAddress = field(role="reporter")
    reporter_name: PersonName = field(role="reporter")
    due_date: Date | None = field(None, mention="the due date")
    labels: list[Tag] = field(incidental=True)
    resolution: Resolution | None = None
    created_at: DateTime
    updated_at: DateTime
    resolved_at: DateTime | None = None

    key = derived(IssueKey, lambda i: i.id)


@service.entity(table="comments", prefix="cmt", search=("body",))
class Comment:
    """A comment on an issue."""

    id: CommentId
    issue_key: IssueKey = field(index=True)
    author_email: EmailAddress = field(role="author")
    author_name: PersonName = field(role="author")
    body: Text
    created_at: DateTime


@service.entity(table="watchers", prefix="wat")
class Watcher:
    """A colleague notified of an issue's changes; the id is '<issue key>|<email>'."""

    id: WatcherId
    issue_key: IssueKey
    email: EmailAddress = field(role="watcher")


@service.entity(table="issue_links", prefix="lnk")
class IssueLink:
    """'<source> <link_type> <target>', e.g. ENG-4 blocks SUP-2."""

    id: LinkId
    link_type: LinkType
    source_key: IssueKey = field(index=True)
    target_key: IssueKey = field(index=True)
    created_at: DateTime


class LinkOut(BaseModel):
    """A link seen from one issue: ``relation`` reads from that issue ("blocks", "is blocked by"...)."""

    id: LinkId
    link_type: LinkType
    relation: str
    issue_key: IssueKey
    summary: Subject
    status: IssueStatus


class IssueDetails(BaseModel):
    """What get_issue and the issue writes show beyond a search result (Jira's expanded issue)."""

    watchers: list[EmailAddress] = Field(description="Who is notified of changes")
    links: list[LinkOut] = Field(description="Links to other issues")
    comment_count: int
    allowed_next_statuses: list[IssueStatus] = Field(description="Where do_transition can move it now")


def _inlined(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with its ``$ref``s replaced by their definitions (pydantic refuses foreign refs in WithJsonSchema)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inlined(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inlined(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inlined(v, defs) for v in schema]
    return schema


def _detail_schema() -> dict[str, Any]:
    issue, details = runtime_of(Issue).schema, IssueDetails.model_json_schema()
    return {
        **issue,
        "properties": {**issue["properties"], **_inlined(details["properties"], details.get("$defs", {}))},
        "required": [*issue["required"], *details["required"]],
    }


#: One issue with its details: what get_issue and every issue write return.
IssueDetail = Annotated[dict[str, Any], WithJsonSchema(_detail_schema())]


class TransitionOut(BaseModel):
    name: str
    to_status: IssueStatus


class TransitionsOut(BaseModel):
    issue_key: IssueKey
    status: IssueStatus
    transitions: list[TransitionOut]


class WatchersOut(BaseModel):
    issue_key: IssueKey
    watchers: list[EmailAddress]


# -- records as tools return them (values that need a query, read for a whole page at once) ----------


def _detail(ctx: ToolContext, issue: Issue) -> dict[str, Any]:
    """The issue as a record, with its watchers, links (each read from this issue's side) and comment count."""
    found = ctx.query(IssueLink).where_sql("source_key = ? OR target_key = ?", issue.id, issue.id).all()
    ends = ctx.fetch_many(Issue, [k for link in found for k in (link.source_key, link.target_key) if k != issue.id])
    links = []
    for link in found:  # in id order
        forward = link.source_key == issue.id
        end = ends[link.target_key if forward else link.source_key]
        relation = link.link_type if forward else INWARD[link.link_type]
        links.append(LinkOut(id=link.id, link_type=link.link_type, relation=relation, issue_key=end.id,
                             summary=end.summary, status=end.status))
    details = IssueDetails(
        watchers=_watchers_of(ctx, issue.id),
        links=links,
        comment_count=ctx.query(Comment).where(issue_key=issue.id).count(),
        allowed_next_statuses=[to for _, to in WORKFLOW[issue.status]],
    )
    record = present_records(ctx.conn, runtime_of(Issue), [issue])[0]
    return {**record, **details.model_dump(mode="json")}


# -- rules shared by the tools -------------------------------------------------------------------

_ISSUE_HINT = "Use search_issues to find issue keys (e.g. OPS-12)."


def _project(ctx: ToolContext, key: str) -> Project:
    project = ctx.fetch(Project, key.strip().upper())
    if project is None:
        known = ", ".join(p.id for p in ctx.query(Project).all())
        raise ToolError.not_found("project", key, f"Known project keys: {known}.")
    return project


def _issue(ctx: ToolContext, key: str) -> Issue:
    return ctx.get(Issue, key.strip().upper(), hint=_ISSUE_HINT)


def _writable_project(ctx: ToolContext, key: str) -> Project:
    project = _project(ctx, key)
    if project.archived:
        raise ToolError.invalid_state(f"Project {project.id} is archived and read-only; nothing in it can change.")
    return project


def _writable_issue(ctx: ToolContext, key: str) -> Issue:
    issue = _issue(ctx, key)
    _writable_project(ctx, issue.project_key)
    return issue


def _member(ctx: ToolContext, project: Project, email: str, what: str) -> Member:
    """The member of ``project`` with this email; otherwise say who can be used."""
    email = email.strip().lower()
    member = ctx.fetch(Member, f"{project.id}|{email}")
    if member is None:
        members = ", ".join(m.email for m in ctx.query(Member).where(project_key=project.id).all())
        raise ToolError.permission_denied(
            f"{email} is not a member of project {project.id}, so they cannot be the {what}. "
            f"Members: {members} (see find_assignable_users)."
        )
    return member


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


def _watchers_of(ctx: ToolContext, issue_key: str) -> list[str]:
    return [w.email for w in ctx.query(Watcher).where(issue_key=issue_key).order_by("email").all()]


def _watch(ctx: ToolContext, issue: Issue, email: str) -> None:
    ctx.insert(Watcher(id=f"{issue.id}|{email}", issue_key=issue.id, email=email))


def _add_comment(ctx: ToolContext, issue: Issue, body: str) -> tuple[Issue, Comment]:
    if not body.strip():
        raise ToolError.invalid_argument("The comment body must not be empty.")
    author = ctx.world.user
    comment = ctx.insert(
        Comment(
            id=ctx.new_id("cmt"), issue_key=issue.id, author_email=author.email, author_name=author.name,
            body=body.strip(), created_at=ctx.now_iso,
        )
    )
    # Jira's autowatch: commenting on an issue makes you a watcher of it.
    if ctx.fetch(Watcher, f"{issue.id}|{author.email}") is None:
        _watch(ctx, issue, author.email)
    return ctx.update(issue, updated_at=ctx.now_iso), comment


# -- text conditions (one escaped LIKE, the kernel's) -------------------------------------------

Condition = tuple[str, list[Any]]  # SQL over the issue's columns, and its parameters
_IN_COMMENTS = "EXISTS (SELECT 1 FROM comments c WHERE c.issue_key = issues.id AND c.body LIKE ? ESCAPE '\\')"


def _mention(text: str, columns: tuple[str, ...] = ("summary", "description", "comments")) -> Condition:
    """SQL (and parameters) for: ``text`` appears, as it is written, in one of ``columns``."""
    pattern = like_pattern(check_search_text(text))
    parts = [_IN_COMMENTS if c == "comments" else f"{c} LIKE ? ESCAPE '\\'" for c in columns]
    return "(" + " OR ".join(parts) + ")", [pattern] * len(parts)


def _words(text: str, columns: tuple[str, ...] = ("summary", "description", "comments")) -> Condition:
    """SQL for: every word of ``text`` appears in one of ``columns`` (the kernel's search rule)."""
    clauses = [_mention(word, columns) for word in check_search_text(text).split(" ") if word]
    return " AND ".join(sql for sql, _ in clauses) or "1", [p for _, params in clauses for p in params]


def _any_mention(texts: list[str]) -> Condition:
    clauses = [_mention(t) for t in texts]
    return " OR ".join(sql for sql, _ in clauses), [p for _, params in clauses for p in params]


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
_JQL_ALIASES = {
    "issuetype": "type",
    "label": "labels",
    "duedate": "due",
    "resolutiondate": "resolved",
    "issuekey": "key",
    "issue": "key",
}
_JQL_COLUMNS = {
    "project": "project_key",
    "key": "id",
    "assignee": "assignee_email",
    "reporter": "reporter_email",
    "status": "status",
    "type": "issue_type",
    "priority": "priority",
    "resolution": "resolution",
    "due": "due_date",
    "created": "created_at",
    "updated": "updated_at",
    "resolved": "resolved_at",
}
_DATE_FIELDS = ("due", "created", "updated", "resolved")
_ORDER_FIELDS = ("key", "created", "updated", "due", "priority", "status")
_HAS_LABEL = "EXISTS (SELECT 1 FROM json_each(issues.labels) WHERE value IN ({}))"


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
    if field in ("project", "key"):
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
    if field in _DATE_FIELDS:
        return _jql_date(ctx, value)
    return low


def _jql_clause(ctx: ToolContext, field: str, op: str, values: list[str]) -> Condition:
    if field in ("text", "summary", "description"):
        if op not in ("~", "!~"):
            raise ToolError.invalid_argument(f"JQL field {field} takes ~ (contains), e.g. {field} ~ \"refund\".")
        sql, params = _words(values[0], ("summary", "description", "comments") if field == "text" else (field,))
        return (f"NOT ({sql})" if op == "!~" else sql), params
    vals = [_jql_value(ctx, field, v) for v in values]
    if field == "labels":
        labels = [_normalise_labels([v])[0] for v in vals]
        has = _HAS_LABEL.format(_marks(len(labels)))
        if op in ("=", "in"):
            return has, labels
        if op in ("!=", "not in"):
            return f"NOT {has}", labels
        raise ToolError.invalid_argument("JQL labels take =, !=, in, not in or is EMPTY.")
    column = _JQL_COLUMNS[field]
    if op in ("=", "!=", "in", "not in"):
        sql = {
            "=": "{c} = ?",
            "!=": "({c} != ? OR {c} IS NULL)",
            "in": "{c} IN ({m})",
            "not in": "({c} NOT IN ({m}) OR {c} IS NULL)",
        }
        n = 1 if op in ("=", "!=") else len(vals)
        return sql[op].format(c=column, m=_marks(n)), vals[:n]
    if op in ("<", "<=", ">", ">="):
        if field not in _DATE_FIELDS:
            raise ToolError.invalid_argument(f"JQL field {field} cannot be compared with {op}; only dates can.")
        if field != "due" and op in ("<=", ">"):
            # created <= 2025-01-14 means "on or before that day", so compare against the next day.
            nxt = (datetime.strptime(vals[0], "%Y-%m-%d") + timedelta(days=1)).strftime("%Y-%m-%d")
            return f"{column} {'<' if op == '<=' else '>='} ?", [nxt]
        return f"{column} {op} ?", [vals[0]]
    raise ToolError.invalid_argument(f"JQL operator {op!r} is not supported for {field}.")


def _order_sql(field: str, desc: bool) -> str:
    if field == "key":
        terms = ["project_key", "number"]
    elif field == "priority":  # rank, not alphabet: highest first when descending
        ranks = " ".join(f"WHEN '{p}' THEN {len(PRIORITIES) - n}" for n, p in enumerate(PRIORITIES))
        terms = [f"CASE priority {ranks} END"]
    elif field == "status":
        terms = ["CASE status " + " ".join(f"WHEN '{s}' THEN {n}" for n, s in enumerate(STATUSES)) + " END"]
    else:
        terms = [_JQL_COLUMNS[field]]
    # Issues without a due date (or resolution date) sort last either way, as in Jira.
    return ", ".join(f"{t} IS NULL, {t} {'DESC' if desc else 'ASC'}" for t in terms)


def _parse_jql(ctx: ToolContext, jql: str) -> tuple[list[Condition], list[str]]:
    """JQL clauses joined by AND, with an optional ORDER BY, as SQL conditions and orderings."""
    tokens = _tokens(jql)
    conditions: list[Condition] = []
    order: list[str] = []
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
                if field not in _ORDER_FIELDS:
                    raise ToolError.invalid_argument(f"JQL can ORDER BY {', '.join(_ORDER_FIELDS)}; not {peek()!r}.")
                i += 1
                desc = False
                if word() in ("asc", "desc"):
                    desc = word() == "desc"
                    i += 1
                order.append(_order_sql(field, desc))
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
            if field in ("text", "summary", "description"):
                raise ToolError.invalid_argument(f"JQL field {field} cannot be EMPTY-tested.")
            empty = "labels = '[]'" if field == "labels" else f"{_JQL_COLUMNS[field]} IS NULL"
            conditions.append((f"NOT ({empty})" if negate else empty, []))
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


class _IssueQuery(Query[Issue]):
    """Issues in a JQL order (ranks, NULLS LAST), which ``order_by``'s column names cannot say."""

    __slots__ = ()

    def order_by_sql(self, clause: str) -> _IssueQuery:
        self._order = clause  # built from the fixed fragments of _order_sql only, never from user text
        return self


# -- seed ----------------------------------------------------------------------------------------

_SEED = json.loads(resources.files("mcp_services.library").joinpath("data/projects_seed.json").read_text("utf-8"))
_PHYSICAL = ("hardware", "furniture", "pantry", "supplies", "merchandise")
_SEED_STATUSES = ("to_do",) * 3 + ("in_progress",) * 3 + ("in_review",) * 2 + ("done",) * 3


def _fill(ctx: ToolContext, rng: random.Random, created_days_ago: float) -> dict[str, str]:
    """Everyday values for one issue: a customer and their company, a product, dates, a colleague."""
    world = ctx.world
    customer = rng.choice(world.customers)
    company = world.organisation(customer.organisation_id)
    product = rng.choice(world.products)
    goods = rng.choice([p for p in world.products if p.category in _PHYSICAL])
    place = rng.choice(world.places)
    day = ctx.days_from_now(-created_days_ago - rng.randint(1, 10))
    colleague = rng.choice(world.team)
    workshop = next((p for p in world.products if p.name == "Onboarding workshop"), product)
    return {
        "customer": customer.name,
        "customer_email": customer.email,
        "company": company.name,
        "product": product.name,
        "qty": str(rng.randint(2, 12)),
        "goods": goods.name,
        "goods_unit": money(goods.unit_price, world.currency),
        "workshop": money(workshop.unit_price, world.currency),
        "place": place.name,
        "place_address": place.address,
        "room": rng.choice(_SEED["rooms"]),
        "area": rng.choice(_SEED["areas"]),
        "month": datetime.strptime(day[:10], "%Y-%m-%d").strftime("%B %Y"),
        "day": day[:10],
        "due": ctx.days_from_now(rng.randint(3, 40))[:10],
        "colleague": colleague.name,
        "colleague_first": colleague.first_name,
        "weekday": rng.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")),
        "cause": rng.choice(_SEED["causes"]),
        "estimate": rng.choice(_SEED["estimates"]),
        **industry_facts(rng, company.industry),
    }


def _about(rng: random.Random, world: World, about: str, organisation_id: str) -> tuple[dict[str, str], str] | None:
    """What an issue about ``about`` names, from the world's records (the company's where one fits), and the moment
    (ISO) from which it can be raised; None when no record fits."""
    if about.startswith("invoice:"):
        story = about.split(":", 1)[1]
        invoice = _story_invoice(rng, world, story, organisation_id)
        return (_invoice_facts(world, story, invoice), _invoice_anchor(story, invoice)) if invoice else None
    if about == "duplicate":
        twins = world.plan.duplicates
        if not twins:
            return None
        charge = rng.choice(twins)
        payer = next(p for p in world.customers if p.email == charge.email)
        return ({"invoice": charge.invoice_number, "amount": money(charge.amount, world.currency), "customer": payer.name,
                 "customer_email": payer.email, "company": world.organisation(payer.organisation_id).name},
                f"{charge.date}T18:00:00Z")
    if about == "proposal":
        proposal = next((p for p in world.plan.proposals if p.organisation_id == organisation_id), None)
        proposal = proposal or rng.choice(world.plan.proposals)
        contact = next(p for p in world.people if p.email == proposal.prepared_for_email)
        return ({"proposal": proposal.number, "total": money(proposal.total, world.currency), "valid": proposal.valid_until,
                 "customer": contact.name, "customer_email": contact.email,
                 "company": world.organisation(proposal.organisation_id).name}, f"{proposal.date}T17:00:00Z")
    if about == "contract":
        contract = next((c for c in world.plan.contracts if c.organisation_id == organisation_id and c.signed_on), None)
        if contract is None:
            return None
        signatory = next(p for p in world.people if p.email == contract.signatory_email)
        return ({"contract": contract.number, "annual_fee": money(contract.annual_fee, world.currency),
                 "ends": contract.ends, "customer": signatory.name, "customer_email": signatory.email,
                 "company": world.organisation(contract.organisation_id).name}, f"{contract.effective}T12:00:00Z")
    stories = {"order:pickup": ("awaiting_shipment", "label_created"), "return": ("return_open",),
               "order:any": ("delivered", "delivered_late", "partially_refunded")}[about]
    orders = [o for o in commerce_plan(world).orders if o.story in stories]
    if not orders:
        return None
    order = next((o for o in orders if o.customer.organisation_id == organisation_id), None) or rng.choice(orders)
    line = order.lines[0]
    since = order.returns[0].decided_at if about == "return" and order.returns else order.created_at
    return ({"order": order.name, "qty": str(line.quantity), "product": line.product_title,
             "amount": money(order.total, world.currency), "customer": order.customer.name,
             "customer_email": order.customer.email, "company": order.company, "day": order.created_at[:10]},
            since or order.created_at)


def _story_invoice(rng: random.Random, world: World, story: str, organisation_id: str) -> PlannedInvoice | None:
    """The plan's invoice an issue about ``story`` names, the customer's where one fits."""
    today = world.now_dt.date().isoformat()
    fits = {
        # Money came in that the books do not match: part of it paid, or a card payment not recorded.
        "unmatched": lambda i: i.status == "AUTHORISED" and (bool(i.payments) or i.card == "unrecorded"),
        "overdue": lambda i: i.is_overdue(today),
    }[story]
    return world.plan.invoice_to_mention(rng, lambda i: fits(i) and _invoice_anchor(story, i) < today, organisation_id)


def _invoice_anchor(story: str, invoice: PlannedInvoice) -> str:
    """The day (ISO) an issue about ``story`` can be raised from: issued, or gone overdue (the day after it was due)."""
    if story == "overdue":
        return (datetime.fromisoformat(invoice.due_date) + timedelta(days=1)).date().isoformat()
    return invoice.date


def _invoice_facts(world: World, story: str, invoice: PlannedInvoice) -> dict[str, str]:
    """What an issue says about its invoice and who it is for, as the books hold them."""
    contact = next(p for p in world.customers if p.email == invoice.billing_email)
    amount = invoice.amount_due if story == "overdue" else invoice.total
    return {
        "invoice": invoice.number,
        "amount": money(amount, world.currency),
        "day": invoice.due_date,
        "customer": contact.name,
        "customer_email": contact.email,
        "company": world.organisation(invoice.organisation_id).name,
    }


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The projects of ``data/projects_seed.json`` with the team as members, their issues, comments and links."""
    world = ctx.world
    rng = ctx.rng("seed")
    by_role = {p.job_title: p for p in world.team}
    projects: list[Project] = []
    members: list[Member] = []
    issues: list[Issue] = []
    comments: list[Comment] = []
    watchers: list[Watcher] = []
    for spec in _SEED["projects"]:
        key, archived, lead = spec["key"], spec["archived"], by_role[spec["lead"]]
        projects.append(
            Project(
                id=key, name=spec["name"], description=spec["description"], project_type=spec["type"],
                lead_email=lead.email, lead_name=lead.name, archived=archived,
                created_at=ctx.days_from_now(-rng.randint(200, 700)),
            )
        )
        # The user the agent acts for belongs to every project, so their default reporter is valid.
        team = [by_role[r] for r in [spec["lead"], *spec["members"]]]
        if world.user not in team:
            team.append(world.user)
        members += [
            Member(
                id=f"{key}|{p.email}", project_key=key, email=p.email, name=p.name, job_title=p.job_title,
                role="administrator" if p is lead else "member",
            )
            for p in team
        ]
        templates = spec["templates"]
        for number in range(1, spec["issues"] + 1):
            template = templates[(number - 1) % len(templates)]
            status = "done" if archived else rng.choice(_SEED_STATUSES)
            age = rng.uniform(1, 90) if not archived else rng.uniform(150, 300)
            age = min(age, (ctx.now - moment(projects[-1].created_at)).total_seconds() / 86400 * 0.95)  # after the project
            facts = _fill(ctx, rng, age)
            about = template.get("about")
            if about:
                customer = next(p for p in world.customers if p.email == facts["customer_email"])
                found = _about(rng, world, about, customer.organisation_id)
                if found is None:  # no record of the world fits the story: the issue is about something else
                    template = next(t for t in templates if "about" not in t)
                else:
                    facts.update(found[0])
                    # Raised once there is something to do: after the record's moment.
                    anchor = found[1] if "T" in found[1] else f"{found[1]}T09:00:00Z"
                    since = (ctx.now - datetime.fromisoformat(anchor.replace("Z", "+00:00"))).total_seconds() / 86400
                    if since <= 0.1:
                        template = next(t for t in templates if "about" not in t)
                    elif age >= since:
                        age = since * rng.uniform(0.1, 0.9)
            reporter = rng.choice(team)
            assignee = rng.choice(team) if status != "to_do" or rng.random() < 0.6 else None
            due = None
            if rng.random() < 0.6:
                due = ctx.days_from_now(rng.randint(-20, 45) if not archived else -rng.randint(120, 200))[:10]
                if due < ctx.days_from_now(-age)[:10]:  # nobody files an issue already past due: a week to do it
                    due = ctx.days_from_now(-age + 7)[:10]
            updated = ctx.days_from_now(-age * rng.uniform(0, 0.8))
            priority = rng.choice(("highest", "high", "high", "medium", "medium", "medium", "low", "lowest"))
            resolution = ("done" if rng.random() < 0.9 else "won't do") if status == "done" else None
            issue = Issue(
                id=f"{key}-{number}", project_key=key, number=number, summary=write(rng, template["summary"], facts),
                description=write(rng, " ".join((rng.choice(_SEED["description_openers"]), template["description"],
                                                 rng.choice(_SEED["description_closers"]))), facts), issue_type=template["type"], status=status,
                priority=priority, assignee_email=assignee.email if assignee else None,
                assignee_name=assignee.name if assignee else None, reporter_email=reporter.email,
                reporter_name=reporter.name,
                due_date=due, labels=list(template["labels"]), resolution=resolution,
                created_at=ctx.days_from_now(-age), updated_at=updated,
                resolved_at=updated if status == "done" else None,
            )
            issues.append(issue)
            watching = {reporter.email} | ({assignee.email} if assignee else set())
            if rng.random() < 0.4:
                watching.add(rng.choice(team).email)
            watchers += [
                Watcher(id=f"{issue.id}|{email}", issue_key=issue.id, email=email) for email in sorted(watching)
            ]
            for n in range(rng.choice((0, 0, 1, 1, 2, 3))):
                author = (assignee or reporter) if n % 2 == 0 else reporter
                comments.append(
                    Comment(
                        id=ctx.new_id("cmt"), issue_key=issue.id, author_email=author.email, author_name=author.name,
                        body=write(rng, " ".join((rng.choice(_SEED["comment_openers"]), rng.choice(_SEED["comments"]) + ".",
                                                  rng.choice(_SEED["comment_closers"]))), facts),
                        created_at=ctx.days_from_now(-age + (n + 1) * age / 5),
                    )
                )
    ctx.insert_many(projects)
    ctx.insert_many(members)
    ctx.insert_many(issues)
    ctx.insert_many(comments)
    ctx.insert_many(watchers)
    ctx.insert_many(_seed_links(ctx, rng, issues))


def _seed_links(ctx: ToolContext, rng: random.Random, issues: list[Issue]) -> list[IssueLink]:
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
        pairs.append((a, b, "duplicates" if same_work else rng.choice(("blocks", "relates to"))))
    seen: set[frozenset[str]] = set()
    links: list[IssueLink] = []
    for source, target, link_type in pairs:
        pair = frozenset((source.id, target.id))
        if pair in seen:
            continue
        seen.add(pair)
        # A done issue cannot be blocked by unfinished work (do_transition enforces it), so such pairs only relate.
        if link_type == "blocks" and target.status == "done" and source.status != "done":
            link_type = "relates to"
        links.append(
            IssueLink(
                id=ctx.new_id("lnk"), link_type=link_type, source_key=source.id, target_key=target.id,
                created_at=max(source.created_at, target.created_at),
            )
        )
    return links


# -- projects ------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find", phrases=("look up the projects {member_email} is on", "find the {query} project")
)
def search_projects(
    ctx: ToolContext,
    query: str | None = None,
    member_email: EmailAddress | None = None,
    include_archived: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Project]:
    """Search projects by key, name or description, with their members and issue counts per status.

    Args:
        query: Words to match against the project key, name or description (case-insensitive; every word must match).
        member_email: Only projects this colleague is a member of.
        include_archived: Also return archived (read-only) projects.
        limit: Maximum number of projects to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Project).search(query, "id", "name", "description")
    if member_email:
        q.where_sql("id IN (SELECT project_key FROM members WHERE email = ?)", member_email.strip().lower())
    if not include_archived:
        q.where(archived=False)
    return q.order_by("id").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the {project_key} project", "check the {project_key} project"))
def get_project(ctx: ToolContext, project_key: ProjectKey) -> Project:
    """Get one project by key: its lead, members and how many issues are in each status.

    Args:
        project_key: The project's key, e.g. OPS.
    """
    return _project(ctx, project_key)


@service.tool("read", intent="find", phrases=("check who can be assigned issues in {project_key}",))
def find_assignable_users(
    ctx: ToolContext,
    project_key: ProjectKey,
    query: str | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Member]:
    """List the people who can be assigned issues in a project (its members).

    Args:
        project_key: The project's key, e.g. OPS.
        query: Words to match against the member's name or email (case-insensitive; every word must match).
        limit: Maximum number of people to return (1-100).
        cursor: next_cursor from a previous page.
    """
    project = _project(ctx, project_key)
    q = ctx.query(Member).where(project_key=project.id).search(query)
    return q.order_by("name", "email").page(limit, cursor)


# -- issues: reads --------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=(
        "find the issues about {customer_email} in the tracker",
        "check the tracker for work on {company_name}",
        "look for {text} in the issue tracker",
    ),
)
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
    customer_email: EmailAddress | None = None,
    company_name: CompanyName | None = None,
    due_before: Date | None = None,
    unassigned: bool = False,
    include_archived: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Issue]:
    """Search issues with filters and/or JQL, most recently updated first. Everything combines with AND.

    To find the work about a customer, pass customer_email (issues that mention their email address
    or their name) or company_name (issues that mention the company), e.g. with an email or a company
    found in the CRM or the helpdesk.

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
        text: Words to find in the summary, description or comments (case-insensitive; every word must
            match), e.g. an invoice number.
        customer_email: Only issues about this customer: their email address, or their full name, appears
            in the summary, description or a comment.
        company_name: Only issues that mention this company in the summary, description or a comment (case-insensitive).
        due_before: Only issues due on or before this date (YYYY-MM-DD).
        unassigned: Only issues that nobody is assigned to.
        include_archived: Also search the issues of archived projects.
        limit: Maximum number of issues to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = _IssueQuery(ctx.conn, runtime_of(Issue))
    order: list[str] = []
    if jql and jql.strip():
        conditions, order = _parse_jql(ctx, jql)
        for sql, params in conditions:
            q.where_sql(sql, *params)
    if project_key:
        project = _project(ctx, project_key)
        q.where(project_key=project.id)
        include_archived = include_archived or project.archived
    if not include_archived:
        q.where_sql("project_key IN (SELECT id FROM projects WHERE archived = 0)")
    q.filter(
        assignee_email=assignee_email.strip().lower() if assignee_email else None,
        reporter_email=reporter_email.strip().lower() if reporter_email else None,
        status=status,
        issue_type=issue_type,
        priority=priority,
    )
    if label:
        q.where_sql(_HAS_LABEL.format("?"), _normalise_labels([label])[0])
    mentions: list[Condition] = []
    if text and text.strip():
        mentions.append(_words(text))
    if customer_email:
        email = customer_email.strip().lower()
        person = next((p for p in ctx.world.people if p.email == email), None)
        mentions.append(_any_mention([email, person.name] if person else [email]))
    if company_name and company_name.strip():
        mentions.append(_mention(company_name.strip()))
    for sql, params in mentions:
        q.where_sql(sql, *params)
    if due_before:
        q.compare("due_date", "<=", _check_date(due_before, "due_before"))
    if unassigned:
        q.where(assignee_email=None)
    # A stable tiebreak keeps pages from overlapping whatever the requested order.
    q.order_by_sql(", ".join([*(order or ['"updated_at" DESC']), "project_key", "number", "id"]))
    return q.page(limit, cursor)


@service.tool("read", intent="get", phrases=("open {issue_key}", "look at {issue_key} in the tracker"))
def get_issue(ctx: ToolContext, issue_key: IssueKey) -> IssueDetail:
    """Get one issue by key with its watchers, links to other issues and the statuses it can move to next.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
    """
    return _detail(ctx, _issue(ctx, issue_key))


@service.tool("read", intent="check", phrases=("check where {issue_key} can move next",))
def get_transitions(ctx: ToolContext, issue_key: IssueKey) -> TransitionsOut:
    """List the workflow transitions an issue can take now (use do_transition to take one).

    Workflow: to_do -> in_progress (Start progress); in_progress -> in_review (Submit for review) or
    to_do (Stop progress); in_review -> done (Approve) or in_progress (Request changes); done -> to_do (Reopen).

    Args:
        issue_key: The issue's key, e.g. OPS-12.
    """
    issue = _issue(ctx, issue_key)
    return TransitionsOut(
        issue_key=issue.id,
        status=issue.status,
        transitions=[TransitionOut(name=n, to_status=to) for n, to in WORKFLOW[issue.status]],
    )


@service.tool("read", intent="find", phrases=("read the comments on {issue_key}",))
def get_comments(ctx: ToolContext, issue_key: IssueKey, limit: Limit = 20, cursor: Cursor = None) -> Page[Comment]:
    """List an issue's comments, oldest first.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    issue = _issue(ctx, issue_key)
    return ctx.query(Comment).where(issue_key=issue.id).order_by("created_at").page(limit, cursor)


# -- issues: writes -------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="create",
    phrases=("file an issue in {project_key} called {summary}", "log a {issue_type} in {project_key}: {summary}"),
)
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
) -> IssueDetail:
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
    reporter = _member(ctx, project, reporter_email or ctx.world.user.email, "reporter")
    assignee = _member(ctx, project, assignee_email, "assignee") if assignee_email else None
    # Keys are never reused: issues are never deleted, so the highest number is the last one given out.
    number = int(ctx.sql("SELECT COALESCE(MAX(number), 0) FROM issues WHERE project_key = ?", project.id)[0][0]) + 1
    issue = ctx.insert(
        Issue(
            id=f"{project.id}-{number}", project_key=project.id, number=number, summary=summary.strip(),
            description=description.strip(), issue_type=issue_type, status="to_do", priority=priority,
            assignee_email=assignee.email if assignee else None, assignee_name=assignee.name if assignee else None,
            reporter_email=reporter.email, reporter_name=reporter.name,
            due_date=_check_date(due_date, "due_date") if due_date else None, labels=_normalise_labels(labels or []),
            created_at=ctx.now_iso, updated_at=ctx.now_iso,
        )
    )
    _watch(ctx, issue, reporter.email)
    return _detail(ctx, issue)


@service.tool(
    "write",
    intent="update",
    phrases=("update {issue_key} in the tracker", "set the priority of {issue_key} to {priority}"),
)
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
) -> IssueDetail:
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
    if summary is not None and not summary.strip():
        raise ToolError.invalid_argument("summary must not be empty.")
    changes: dict[str, Any] = {
        "summary": summary.strip() if summary is not None else None,
        "description": description.strip() if description is not None else None,
        "issue_type": issue_type,
        "priority": priority,
        "due_date": _check_date(due_date, "due_date") if due_date is not None else None,
    }
    labels = list(issue.labels)
    if remove_labels:
        remove = _normalise_labels(remove_labels)
        missing = [label for label in remove if label not in labels]
        if missing:
            raise ToolError.invalid_argument(
                f"Issue {issue.id} does not have the label(s) {', '.join(missing)}; "
                f"its labels are: {', '.join(labels) or 'none'}."
            )
        labels = [label for label in labels if label not in remove]
    if add_labels:
        labels += [label for label in _normalise_labels(add_labels) if label not in labels]
    changes = {k: v for k, v in changes.items() if v is not None}
    return _detail(ctx, ctx.update(issue, **changes, labels=labels, updated_at=ctx.now_iso))


@service.tool(
    "write", intent="assign", phrases=("assign {issue_key} to {assignee_email}", "give {issue_key} to {assignee_email}")
)
def assign_issue(ctx: ToolContext, issue_key: IssueKey, assignee_email: EmailAddress | None) -> IssueDetail:
    """Assign an issue to a project member, or pass null to unassign it.

    Only members of the issue's project can be assigned (see find_assignable_users); customers and
    colleagues outside the project cannot. Issues in progress or in review must keep an assignee.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        assignee_email: The member's email, or null to leave the issue unassigned.
    """
    issue = _writable_issue(ctx, issue_key)
    if assignee_email is None:
        if issue.status in ("in_progress", "in_review"):
            raise ToolError.invalid_state(
                f"Issue {issue.id} is {issue.status} and must keep an assignee; assign someone else, or "
                "do_transition it back to to_do first."
            )
        if issue.assignee_email is None:
            raise ToolError.invalid_state(f"Issue {issue.id} is already unassigned.")
        email, name = None, None
    else:
        member = _member(ctx, _project(ctx, issue.project_key), assignee_email, "assignee")
        if issue.assignee_email == member.email:
            raise ToolError.invalid_state(f"Issue {issue.id} is already assigned to {member.email}.")
        email, name = member.email, member.name
    return _detail(ctx, ctx.update(issue, assignee_email=email, assignee_name=name, updated_at=ctx.now_iso))


@service.tool("write", intent="transition", phrases=("move {issue_key} to {status}", "mark {issue_key} as {status}"))
def do_transition(
    ctx: ToolContext,
    issue_key: IssueKey,
    status: IssueStatus,
    comment: Text | None = None,
    resolution: Resolution | None = None,
) -> IssueDetail:
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
        raise ToolError.invalid_state(f"Issue {issue.id} is already {status}.")
    allowed = {to: name for name, to in WORKFLOW[issue.status]}
    if status not in allowed:
        moves = ", ".join(f"{to} ({name})" for to, name in allowed.items())
        raise ToolError.invalid_state(
            f"Issue {issue.id} is {issue.status} and cannot move to {status}; from {issue.status} it can "
            f"move to: {moves}."
        )
    if resolution is not None and status != "done":
        raise ToolError.invalid_argument("resolution is only set when moving to done.")
    if status == "in_progress" and issue.assignee_email is None:
        raise ToolError.invalid_state(
            f"Issue {issue.id} has no assignee; assign_issue it to a project member before starting progress."
        )
    changes: dict[str, Any] = {"status": status, "updated_at": ctx.now_iso}
    if status == "done":
        blockers = ctx.query(Issue).compare("status", "!=", "done").where_sql(
            "id IN (SELECT source_key FROM issue_links WHERE target_key = ? AND link_type = 'blocks')", issue.id
        ).order_by("project_key", "number").all()
        if blockers:
            listed = ", ".join(f"{b.id} ({b.status})" for b in blockers)
            raise ToolError.invalid_state(
                f"Issue {issue.id} is blocked by unfinished issue(s) {listed}; finish them or remove the "
                "link (delete_issue_link) before moving it to done."
            )
        changes.update(resolution=resolution or "done", resolved_at=ctx.now_iso)
    elif issue.status == "done":
        changes.update(resolution=None, resolved_at=None)
    issue = ctx.update(issue, **changes)
    if comment is not None:
        issue, _ = _add_comment(ctx, issue, comment)
    return _detail(ctx, issue)


@service.tool(
    "write", intent="note", phrases=("comment on {issue_key} saying {body}", "add a comment to {issue_key}: {body}")
)
def add_comment(ctx: ToolContext, issue_key: IssueKey, body: Text) -> Comment:
    """Comment on an issue as yourself; you start watching it.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        body: The comment text.
    """
    return _add_comment(ctx, _writable_issue(ctx, issue_key), body)[1]


@service.tool(
    "write", intent="invite",
    phrases=("add {email} as a watcher of {issue_key}", "have {email} follow {issue_key}"),
)
def add_watcher(ctx: ToolContext, issue_key: IssueKey, email: EmailAddress) -> WatchersOut:
    """Add a colleague as a watcher of an issue so they are notified of changes.

    Only people on the team can watch issues (customers cannot).

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        email: The colleague's email.
    """
    issue = _writable_issue(ctx, issue_key)
    email = email.strip().lower()
    if all(p.email != email for p in ctx.world.team):
        raise ToolError.permission_denied(
            f"{email} is not on the team, so they cannot watch issues. Watchers must be colleagues "
            f"({ctx.world.home.name})."
        )
    if ctx.fetch(Watcher, f"{issue.id}|{email}") is not None:
        raise ToolError.invalid_state(f"{email} already watches {issue.id}.")
    _watch(ctx, issue, email)
    return WatchersOut(issue_key=issue.id, watchers=_watchers_of(ctx, issue.id))


@service.tool("write", intent="remove", phrases=("stop {email} watching {issue_key}",))
def remove_watcher(ctx: ToolContext, issue_key: IssueKey, email: EmailAddress) -> WatchersOut:
    """Stop someone watching an issue.

    Args:
        issue_key: The issue's key, e.g. OPS-12.
        email: The watcher's email.
    """
    issue = _writable_issue(ctx, issue_key)
    watcher = ctx.fetch(Watcher, f"{issue.id}|{email.strip().lower()}")
    if watcher is None:
        current = ", ".join(_watchers_of(ctx, issue.id))
        raise ToolError.invalid_state(f"{email} does not watch {issue.id}; its watchers are: {current or 'nobody'}.")
    ctx.delete(watcher)
    return WatchersOut(issue_key=issue.id, watchers=_watchers_of(ctx, issue.id))


@service.tool(
    "write",
    intent="link",
    phrases=("note that {issue_key} {link_type} {other_issue_key}", "link {issue_key} to {other_issue_key}"),
)
def link_issues(ctx: ToolContext, issue_key: IssueKey, link_type: LinkType, other_issue_key: IssueKey) -> IssueDetail:
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
    if issue.id == other.id:
        raise ToolError.invalid_argument(f"An issue cannot be linked to itself ({issue.id}).")
    existing = ctx.query(IssueLink).where_sql(
        "(source_key = ? AND target_key = ?) OR (source_key = ? AND target_key = ?)",
        issue.id, other.id, other.id, issue.id,
    ).all()
    for link in existing:
        forward = link.source_key == issue.id
        if link.link_type == link_type and (forward or link_type == "relates to"):
            raise ToolError.conflict(f"{issue.id} already {link_type} {other.id} (link {link.id}).")
        if link_type == "blocks" and link.link_type == "blocks" and not forward:
            raise ToolError.invalid_state(f"{other.id} already blocks {issue.id}; two issues cannot block each other.")
    ctx.insert(
        IssueLink(
            id=ctx.new_id("lnk"), link_type=link_type, source_key=issue.id, target_key=other.id, created_at=ctx.now_iso
        )
    )
    ctx.update(other, updated_at=ctx.now_iso)
    return _detail(ctx, ctx.update(issue, updated_at=ctx.now_iso))


@service.tool("write", intent="delete", phrases=("remove the link {link_id} between the issues",))
def delete_issue_link(ctx: ToolContext, link_id: LinkId) -> IssueDetail:
    """Remove a link between two issues (get_issue lists an issue's links with their ids).

    Args:
        link_id: The link's id, e.g. lnk_0007.
    """
    link = ctx.get(IssueLink, link_id, "issue link", "get_issue lists an issue's links with their ids.")
    source = _writable_issue(ctx, link.source_key)
    other = _writable_issue(ctx, link.target_key)
    ctx.delete(link)
    ctx.update(other, updated_at=ctx.now_iso)
    return _detail(ctx, ctx.update(source, updated_at=ctx.now_iso))
