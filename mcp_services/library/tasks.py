"""Tasks: the team's projects (lists or boards) with sections, tasks with assignees and due dates, comments,
and completing work (modelled on the Asana API; a board's sections are Trello's lists).

The workspace is the home organisation and its members are the team (``world.team``); the agent works
as the world's user. A task lives in one project and one of that project's sections; it can be
assigned to a workspace member and have a due date. Completing a task records when; a completed task
can be reopened. Archived projects are read-only: unarchive them (``update_project``) to change their
tasks. Comments (Asana's stories) are the conversation on a task.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Literal

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.prose import write
from mcp_services.kernel.semantic import (
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    ShortText,
    Subject,
    Tag,
    Text,
)

WorkspaceId = EntityId("tasks.workspace")
UserId = EntityId("tasks.user")
ProjectId = EntityId("tasks.project")
SectionId = EntityId("tasks.section")
TaskId = EntityId("tasks.task")
CommentId = EntityId("tasks.comment")

Layout = Literal["list", "board"]

service = Service(
    "tasks",
    "Team task management: projects (lists or boards) with sections, tasks with assignees and due dates, "
    "comments, moving work between sections and completing it.",
    title="Tasks",
)


# -- entities --------------------------------------------------------------------------------------


@service.entity(table="workspaces", prefix="ws", label="name")
class Workspace:
    """The company's workspace."""

    id: WorkspaceId
    name: str
    email_domain: str


@service.entity(table="users", prefix="usr", label="name", search=("name", "email"))
class User:
    """A member of the workspace."""

    id: UserId
    workspace_id: WorkspaceId
    name: PersonName = field(role="self")
    email: EmailAddress = field(unique=True, role="self")
    job_title: str


def _open_counts(db: RecordAccess, projects: Sequence[Project]) -> list[int]:
    ids = [p.id for p in projects]
    marks = ", ".join("?" for _ in ids)
    found = dict(db.sql(f"SELECT project_id, COUNT(*) FROM tasks WHERE completed = 0 AND project_id IN ({marks}) GROUP BY 1", *ids))
    return [int(found.get(i, 0)) for i in ids]


@service.entity(table="projects", prefix="prj", label="name", search=("name", "notes"))
class Project:
    """A project: a list or a board of tasks, owned by a colleague."""

    id: ProjectId
    workspace_id: WorkspaceId
    name: str = field(unique=True)
    notes: Text | None = None
    layout: Layout
    owner_email: EmailAddress = field(role="owner")
    archived: bool = False
    created_at: DateTime

    open_task_count = derived(int, batch=_open_counts, description="Tasks not completed")


@service.entity(table="sections", prefix="sec", label="name")
class Section:
    """A section of a project (a column of a board)."""

    id: SectionId
    project_id: ProjectId = field(index=True)
    name: str
    position: int

    project_name = joined(str, via="project_id", field="name")


def _comment_counts(db: RecordAccess, tasks: Sequence[Task]) -> list[int]:
    ids = [t.id for t in tasks]
    marks = ", ".join("?" for _ in ids)
    found = dict(db.sql(f"SELECT task_id, COUNT(*) FROM comments WHERE task_id IN ({marks}) GROUP BY 1", *ids))
    return [int(found.get(i, 0)) for i in ids]


def _assignee_names(db: RecordAccess, tasks: Sequence[Task]) -> list[str | None]:
    users = {u.email: u.name for u in db.query(User).where_in("email", {t.assignee_email for t in tasks if t.assignee_email}).all()}
    return [users.get(t.assignee_email or "") for t in tasks]


@service.entity(table="tasks", prefix="tsk", label="name", search=("name", "notes"))
class Task:
    """A piece of work in a project's section: who does it and by when."""

    id: TaskId
    project_id: ProjectId = field(index=True)
    section_id: SectionId = field(index=True)
    name: Subject
    notes: Text | None = None
    assignee_email: EmailAddress | None = field(None, index=True, role="assignee")
    due_on: Date | None = field(None, index=True, mention="the due date")
    tags: list[Tag] = field(default_factory=list, incidental=True)
    completed: bool = False
    completed_at: DateTime | None = None
    created_by: EmailAddress = field(role="author")
    created_at: DateTime
    modified_at: DateTime

    project_name = joined(str, via="project_id", field="name")
    section_name = joined(str, via="section_id", field="name")
    assignee_name = derived(PersonName | None, batch=_assignee_names)
    comment_count = derived(int, batch=_comment_counts)


@service.entity(table="comments", prefix="cmt", search=("text",))
class Comment:
    """A comment on a task."""

    id: CommentId
    task_id: TaskId = field(index=True)
    text: Text
    author_email: EmailAddress = field(role="author")
    created_at: DateTime


# -- rules -----------------------------------------------------------------------------------------

_TASK_HINT = "Use search_tasks to find task ids."


def _project(ctx: ToolContext, project_id: str, action: str | None = None) -> Project:
    project = ctx.get(Project, project_id, hint="Use list_projects to find project ids.")
    if action and project.archived:
        raise ToolError.invalid_state(
            f"Project {project.name!r} ({project_id}) is archived; update_project it with archived=false before you {action}."
        )
    return project


def _task(ctx: ToolContext, task_id: str, action: str | None = None) -> Task:
    task = ctx.get(Task, task_id, hint=_TASK_HINT)
    if action:
        _project(ctx, task.project_id, action)
    return task


def _member(ctx: ToolContext, email: str) -> User:
    user = ctx.find(User, email=email.strip().lower())
    if user is None:
        raise ToolError.invalid_argument(f"{email} is not a member of the workspace; see list_users for who can be assigned.")
    return user


def _section_in(ctx: ToolContext, project: Project, section_id: str | None) -> Section:
    if section_id is None:
        first = ctx.query(Section).where(project_id=project.id).order_by("position").first()
        if first is None:
            raise ToolError.invalid_state(f"Project {project.name!r} has no sections; create_section one first.")
        return first
    section = ctx.get(Section, section_id, hint="Use list_sections to find a project's sections.")
    if section.project_id != project.id:
        raise ToolError.invalid_argument(f"Section {section_id} belongs to another project, not {project.name!r} ({project.id}).")
    return section


def _comment(ctx: ToolContext, task: Task, text: str, author: str, at: str) -> Comment:
    return ctx.insert(Comment(id=ctx.new_id("cmt"), task_id=task.id, text=text, author_email=author, created_at=at))


def _clean_tags(tags: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(" ".join(t.split()) for t in tags if t.strip()))


# -- seed ------------------------------------------------------------------------------------------

#: (project, layout, owner role, notes, sections, tasks: (title, assignee role, due in days or None, done, tags)).
_PROJECTS: tuple[tuple[str, Layout, str, str, tuple[str, ...], tuple[tuple[str, str, int | None, bool, tuple[str, ...]], ...]], ...] = (
    ("Customer follow-ups", "list", "sales lead", "Calls, emails and check-ins we owe customers. One task per customer follow-up.",
     ("This week", "Later", "Waiting on customer"),
     (("Send {org} the renewal quote", "account executive", 2, False, ("renewal",)),
      ("Check in with {person} after onboarding", "account executive", -1, False, ()),
      ("Call {person} about the seat increase", "sales lead", 4, False, ()),
      ("Share the security pack with {org}", "sales lead", -6, True, ("security",)),
      ("Follow up with {person} on the pilot results", "account executive", 9, False, ("pilot",)),
      ("Book the quarterly review with {org}", "sales lead", None, False, ()))),
    ("Customer onboarding", "board", "support lead", "Every new customer goes from kickoff to live in these columns.",
     ("Kickoff", "Setup", "Training", "Live"),
     (("{org}: kickoff call", "support lead", 3, False, ("onboarding",)),
      ("{org}: import their user list", "support agent", 6, False, ("onboarding",)),
      ("{org}: admin training session", "support agent", 12, False, ("training",)),
      ("{org}: go-live checklist", "support lead", -3, True, ("onboarding",)))),
    ("Marketing calendar", "board", "product manager", "Newsletters, webinars and announcements, from idea to published.",
     ("Ideas", "In progress", "Scheduled", "Published"),
     (("Customer story: {org}", "product manager", 14, False, ("content",)),
      ("Write the next newsletter", "product manager", 8, False, ("newsletter",)),
      ("Webinar follow-up email", "sales lead", 5, False, ("webinar",)),
      ("Update the pricing page", "product manager", -10, True, ("website",)))),
    ("Office operations", "list", "office manager", "Supplies, facilities and vendors for the office.",
     ("To do", "Doing", "Done"),
     (("Order printer paper and toner", "office manager", 1, False, ("supplies",)),
      ("Renew the cleaning contract", "operations manager", 15, False, ("vendor",)),
      ("Fix the meeting room screen", "office manager", -2, False, ("facilities",)),
      ("Plan the team offsite", "operations manager", 30, False, ()),
      ("Replace the kitchen coffee machine", "office manager", -12, True, ("facilities",)))),
    ("Month-end close", "list", "finance lead", "The close checklist, due by the third working day of the month.",
     ("Reconciliations", "Reporting"),
     (("Reconcile the bank accounts", "accountant", 5, False, ("close",)),
      ("Chase the open expense reports", "accountant", 3, False, ("close",)),
      ("Prepare the management report", "finance lead", 7, False, ("reporting",)))),
)
#: What people comment on a task (one of each kind, worded as they like).
_COMMENTS = (
    "[I left a voicemail for {first}|Left {first} a voicemail|Called {first}, no answer][; trying again tomorrow|, will "
    "try again {weekday}|; I'll email instead].",
    "[Waiting for {first}'s reply|Waiting to hear back from {org}|Still waiting on {first}] before I move this on[.| - "
    "nudged them {weekday}.|.]",
    "[Done for the most part|Nearly there|Mostly done]; [one item left|only the sign-off left|just {org}'s part left][.|, "
    "finishing {weekday}.]",
    "[Can you take this one?|Could someone pick this up?|Can I hand this over?] I'm out on {weekday}[.|; notes are in "
    "the task.| - {colleague} knows the background.]",
    "[Added the details to the CRM|Logged the call in the CRM|Updated {first}'s CRM record][.|; summary sent to "
    "{colleague}.| - see the notes there.]",
)


_OPENERS = ("", "", "Update:", "FYI:", "Quick note:", "Heads up:", "Status:")
_CLOSERS = ("", "", "Thanks!", "Shout if you need me.", "Will update here.", "Ping me with questions.", "Cheers.")


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The workspace of the home organisation, the team as its members, five projects with sections, tasks and comments."""
    world, rng = ctx.world, ctx.rng("seed")
    words = ctx.rng("words")  # the comments' wording, apart from who wrote what when
    workspace = Workspace(id=ctx.new_id("ws"), name=world.home.name, email_domain=world.home.domain)
    ctx.insert(workspace)
    ctx.insert_many([
        User(id=ctx.new_id("usr"), workspace_id=workspace.id, name=p.name, email=p.email, job_title=p.job_title)
        for p in world.team
    ])
    today = ctx.now.date()
    customers = list(world.customers)
    # Onboarding is for customers who signed in the last eight weeks (the plan's won deals, as the CRM holds them).
    since = (today - timedelta(weeks=8)).isoformat()
    signed: dict[str, str] = {}  # organisation -> the day its latest deal was won
    for deal in commerce_plan(world).deals:
        if deal.stage == "won" and since <= deal.close_date <= today.isoformat():
            signed[deal.organisation_id] = max(deal.close_date, signed.get(deal.organisation_id, ""))
    onboarding = [p for p in customers if p.organisation_id in signed]
    for name, layout, owner_role, notes, sections, tasks in _PROJECTS:
        created = ctx.days_from_now(-rng.randint(90, 400))
        project = Project(id=ctx.new_id("prj"), workspace_id=workspace.id, name=name, notes=notes, layout=layout,
                          owner_email=world.team_member(owner_role).email, created_at=created)
        ctx.insert(project)
        made = [Section(id=ctx.new_id("sec"), project_id=project.id, name=s, position=i) for i, s in enumerate(sections)]
        ctx.insert_many(made)
        for title, role, due, done, tags in tasks:
            if name == "Customer onboarding" and not onboarding:
                continue  # nobody signed lately: the onboarding board is empty
            person = rng.choice(onboarding if name == "Customer onboarding" else customers)
            org = world.organisation(person.organisation_id)
            section = made[-1] if done and layout == "board" else rng.choice(made[: max(1, len(made) - 1)])
            made_at = ctx.days_from_now(-rng.randint(3, 30))
            if due is not None and made_at[:10] > (today + timedelta(days=due)).isoformat():
                made_at = ctx.days_from_now(due - 7)  # a task is set before it falls due: a week before
            if name == "Customer onboarding" and org.id in signed:  # set up once the customer signed
                made_at = max(made_at, min(f"{signed[org.id]}T15:00:00Z", ctx.days_from_now(-1 / 24)))
            # Ticked off during a working day before now (never at the frozen instant itself).
            finished = ctx.days_from_now(-rng.randint(0, 2) - 0.1) if done else None
            task = Task(
                id=ctx.new_id("tsk"), project_id=project.id, section_id=section.id,
                name=title.format(org=org.name, person=person.name), notes=None,
                assignee_email=world.team_member(role).email,
                due_on=(today + timedelta(days=due)).isoformat() if due is not None else None, tags=list(tags),
                completed=done, completed_at=finished, created_by=project.owner_email, created_at=made_at,
                modified_at=finished or made_at,
            )
            ctx.insert(task)
            for _ in range(rng.choice((0, 0, 1, 2))):
                facts = {"first": person.first_name, "org": org.name, "colleague": words.choice(world.team).first_name,
                         "weekday": words.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))}
                text = f"{words.choice(_OPENERS)} {rng.choice(_COMMENTS)} {words.choice(_CLOSERS)}"
                _comment(ctx, task, write(words, text, facts), task.assignee_email or project.owner_email,
                         ctx.days_from_now(-rng.uniform(0.2, 2.5)))


# -- people and projects ---------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check who is in the workspace", "look {query} up in Asana"))
def list_users(ctx: ToolContext, query: str | None = None, limit: Limit = 50, cursor: Cursor = None) -> Page[User]:
    """List the workspace's members (the people tasks can be assigned to).

    Args:
        query: Words to match in the name or email.
        limit: Maximum number of users to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(User).search(query).order_by("name").page(limit, cursor)


@service.tool("read", intent="find", phrases=("check our projects in Asana", "find the project {query}"))
def list_projects(
    ctx: ToolContext, query: str | None = None, owner_email: EmailAddress | None = None, archived: bool = False,
    limit: Limit = 20, cursor: Cursor = None,
) -> Page[Project]:
    """List projects by name, owner, and whether they are archived, with their open task counts.

    Args:
        query: Words to match in the project's name or notes.
        owner_email: Only projects this colleague owns.
        archived: List archived projects instead of active ones.
        limit: Maximum number of projects to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Project).search(query).where(archived=archived)
    if owner_email:
        q.where(owner_email=owner_email.strip().lower())
    return q.order_by("name").page(limit, cursor)


@service.tool("write", intent="create", phrases=("start a project called {name}", "set up a board {name} in Asana"))
def create_project(
    ctx: ToolContext, name: ShortText, layout: Layout = "list", notes: Text | None = None,
    sections: list[ShortText] | None = None,
) -> Project:
    """Create a project owned by you, as a list or a board, with its sections (default: one called Untitled section).

    Args:
        name: The project's name (unique).
        layout: list (default) or board.
        notes: What the project is for.
        sections: Section (column) names in order, e.g. ["To do", "Doing", "Done"].
    """
    label = " ".join(name.split())
    if not label:
        raise ToolError.invalid_argument("name must not be empty.")
    clash = ctx.query(Project).where_sql("lower(name) = lower(?)", label).first()
    if clash is not None:
        raise ToolError.conflict(f"A project called {clash.name!r} already exists ({clash.id}).")
    names = [" ".join(s.split()) for s in sections or ["Untitled section"] if s.strip()]
    if not names:
        raise ToolError.invalid_argument("sections must name at least one section.")
    workspace = ctx.query(Workspace).first()
    assert workspace is not None
    project = ctx.insert(Project(id=ctx.new_id("prj"), workspace_id=workspace.id, name=label, notes=notes, layout=layout,
                                 owner_email=ctx.world.user.email, created_at=ctx.now_iso))
    ctx.insert_many([Section(id=ctx.new_id("sec"), project_id=project.id, name=s, position=i) for i, s in enumerate(names)])
    return project


@service.tool("write", intent="update", phrases=("rename the project {project_id} to {name}", "archive the project {project_id}"))
def update_project(
    ctx: ToolContext, project_id: ProjectId, name: ShortText | None = None, notes: Text | None = None,
    archived: bool | None = None, owner_email: EmailAddress | None = None,
) -> Project:
    """Rename a project, change its notes or owner, or archive and unarchive it (archived projects are read-only).

    Args:
        project_id: The project.
        name: A new name.
        notes: New notes.
        archived: Archive (true) or unarchive (false).
        owner_email: The new owner (a workspace member).
    """
    project = _project(ctx, project_id)
    changes: dict[str, object] = {}
    if name is not None:
        label = " ".join(name.split())
        clash = ctx.query(Project).where_sql("lower(name) = lower(?) AND id != ?", label, project.id).first()
        if not label or clash is not None:
            raise ToolError.conflict(f"A project called {label!r} already exists.") if clash else ToolError.invalid_argument("name must not be empty.")
        changes["name"] = label
    if notes is not None:
        changes["notes"] = notes.strip()
    if archived is not None:
        changes["archived"] = archived
    if owner_email is not None:
        changes["owner_email"] = _member(ctx, owner_email).email
    changes = {k: v for k, v in changes.items() if getattr(project, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value to change.")
    return ctx.update(project, **changes)


@service.tool("read", intent="find", phrases=("check the sections of {project_id}", "look at the columns of the board {project_id}"))
def list_sections(ctx: ToolContext, project_id: ProjectId) -> list[Section]:
    """The sections (board columns) of a project, in order.

    Args:
        project_id: The project.
    """
    project = _project(ctx, project_id)
    return ctx.query(Section).where(project_id=project.id).order_by("position").all()


@service.tool("write", intent="create", phrases=("add a section {name} to {project_id}",))
def create_section(ctx: ToolContext, project_id: ProjectId, name: ShortText) -> Section:
    """Add a section (a board column) at the end of a project.

    Args:
        project_id: The project.
        name: The section's name (unique within the project).
    """
    project = _project(ctx, project_id, "add sections")
    label = " ".join(name.split())
    if not label:
        raise ToolError.invalid_argument("name must not be empty.")
    existing = ctx.query(Section).where(project_id=project.id).all()
    if any(s.name.lower() == label.lower() for s in existing):
        raise ToolError.conflict(f"Project {project.name!r} already has a section called {label!r}.")
    return ctx.insert(Section(id=ctx.new_id("sec"), project_id=project.id, name=label, position=len(existing)))


# -- tasks -----------------------------------------------------------------------------------------


@service.tool(
    "read", intent="find",
    phrases=("check the tasks of {assignee_email}", "look for the task {query}", "see what is due in {project_id}"),
)
def search_tasks(
    ctx: ToolContext,
    query: str | None = None,
    project_id: ProjectId | None = None,
    section_id: SectionId | None = None,
    assignee_email: EmailAddress | None = None,
    completed: bool | None = None,
    due_before: Date | None = None,
    due_after: Date | None = None,
    tag: Tag | None = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Task]:
    """Search tasks by words in the name or notes, project, section, assignee, completion, due dates and tag,
    ordered by due date (tasks without a due date come first).

    Args:
        query: Words to match in the task's name or notes (every word must match).
        project_id: Only tasks of this project.
        section_id: Only tasks in this section.
        assignee_email: Only tasks assigned to this colleague.
        completed: Only completed (true) or open (false) tasks.
        due_before: Only tasks due on or before this date (YYYY-MM-DD).
        due_after: Only tasks due on or after this date (YYYY-MM-DD).
        tag: Only tasks with this tag.
        limit: Maximum number of tasks to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Task).search(query).filter(project_id=project_id, section_id=section_id, completed=completed)
    if assignee_email:
        q.where(assignee_email=assignee_email.strip().lower())
    q.compare("due_on", "<=", due_before).compare("due_on", ">=", due_after)
    if tag:
        # The tag's JSON text, matched with LIKE (json_each crashes SQLite 3.40 after a snapshot is restored).
        q.where_sql("tags LIKE ? ESCAPE '\\'", like_pattern(json_text(" ".join(tag.split()))))
    return q.order_by("due_on", "created_at").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the task {task_id}",))
def get_task(ctx: ToolContext, task_id: TaskId) -> Task:
    """Get one task: project, section, assignee, due date, tags, whether it is done, and its comment count.

    Args:
        task_id: The task's id, e.g. tsk_0014 (see search_tasks).
    """
    return _task(ctx, task_id)


@service.tool(
    "write", intent="create",
    phrases=("add a task {name} to {project_id} for {assignee_email}", "create a task {name} due {due_on}"),
)
def create_task(
    ctx: ToolContext,
    project_id: ProjectId,
    name: Subject,
    assignee_email: EmailAddress | None = None,
    due_on: Date | None = None,
    notes: Text | None = None,
    section_id: SectionId | None = None,
    tags: list[Tag] | None = None,
) -> Task:
    """Create a task in a project (in its first section unless you name one), optionally assigned to a workspace
    member and with a due date.

    Args:
        project_id: The project (see list_projects).
        name: What needs doing, e.g. Call back Ana Ruiz.
        assignee_email: Who does it (a workspace member's email).
        due_on: When it is due (YYYY-MM-DD).
        notes: Details: who, what, links.
        section_id: The section to put it in (see list_sections).
        tags: Tags, e.g. ["callback"].
    """
    project = _project(ctx, project_id, "add tasks")
    section = _section_in(ctx, project, section_id)
    if not name.strip():
        raise ToolError.invalid_argument("name must not be empty.")
    assignee = _member(ctx, assignee_email).email if assignee_email else None
    return ctx.insert(Task(
        id=ctx.new_id("tsk"), project_id=project.id, section_id=section.id, name=name.strip(),
        notes=notes.strip() if notes and notes.strip() else None, assignee_email=assignee, due_on=due_on,
        tags=_clean_tags(tags or []), created_by=ctx.world.user.email, created_at=ctx.now_iso, modified_at=ctx.now_iso,
    ))


@service.tool(
    "write", intent="update",
    phrases=("change the due date of {task_id} to {due_on}", "give {task_id} to {assignee_email}", "update the task {task_id}"),
)
def update_task(
    ctx: ToolContext,
    task_id: TaskId,
    name: Subject | None = None,
    notes: Text | None = None,
    assignee_email: EmailAddress | None = None,
    due_on: Date | None = None,
    unassign: bool = False,
    clear_due_date: bool = False,
) -> Task:
    """Change a task's name, notes, assignee or due date (only what you pass changes), or clear its assignee or due date.

    Args:
        task_id: The task.
        name: A new name.
        notes: New notes (replace the old ones).
        assignee_email: The new assignee (a workspace member's email).
        due_on: The new due date (YYYY-MM-DD).
        unassign: Remove the assignee.
        clear_due_date: Remove the due date.
    """
    task = _task(ctx, task_id, "change its tasks")
    if unassign and assignee_email:
        raise ToolError.invalid_argument("Pass assignee_email or unassign, not both.")
    if clear_due_date and due_on:
        raise ToolError.invalid_argument("Pass due_on or clear_due_date, not both.")
    changes: dict[str, object] = {}
    if name is not None:
        if not name.strip():
            raise ToolError.invalid_argument("name must not be empty.")
        changes["name"] = name.strip()
    if notes is not None:
        changes["notes"] = notes.strip() or None
    if assignee_email is not None:
        changes["assignee_email"] = _member(ctx, assignee_email).email
    if unassign:
        changes["assignee_email"] = None
    if due_on is not None:
        changes["due_on"] = due_on
    if clear_due_date:
        changes["due_on"] = None
    changes = {k: v for k, v in changes.items() if getattr(task, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass at least one field with a new value to change.")
    return ctx.update(task, **changes, modified_at=ctx.now_iso)


@service.tool("write", intent="transition", phrases=("move {task_id} to the section {section_id}", "move the card {task_id} on the board"))
def move_task(ctx: ToolContext, task_id: TaskId, section_id: SectionId) -> Task:
    """Move a task to another section of its project (a card to another column of its board).

    Args:
        task_id: The task.
        section_id: The section to move it to (see list_sections).
    """
    task = _task(ctx, task_id, "move its tasks")
    section = _section_in(ctx, _project(ctx, task.project_id), section_id)
    if section.id == task.section_id:
        raise ToolError.invalid_state(f"Task {task_id} is already in {section.name!r}.")
    return ctx.update(task, section_id=section.id, modified_at=ctx.now_iso)


@service.tool("write", intent="close", phrases=("mark {task_id} as done", "complete the task {task_id}", "tick off {task_id}"))
def complete_task(ctx: ToolContext, task_id: TaskId) -> Task:
    """Mark a task complete.

    Args:
        task_id: The task.
    """
    task = _task(ctx, task_id, "complete its tasks")
    if task.completed:
        raise ToolError.invalid_state(f"Task {task_id} was already completed at {task.completed_at}.")
    return ctx.update(task, completed=True, completed_at=ctx.now_iso, modified_at=ctx.now_iso)


@service.tool("write", intent="reopen", phrases=("reopen the task {task_id}", "mark {task_id} as not done"))
def reopen_task(ctx: ToolContext, task_id: TaskId) -> Task:
    """Mark a completed task as not done again.

    Args:
        task_id: The completed task.
    """
    task = _task(ctx, task_id, "reopen its tasks")
    if not task.completed:
        raise ToolError.invalid_state(f"Task {task_id} is not completed.")
    return ctx.update(task, completed=False, completed_at=None, modified_at=ctx.now_iso)


@service.tool("write", intent="delete", phrases=("delete the task {task_id}",))
def delete_task(ctx: ToolContext, task_id: TaskId) -> Task:
    """Delete a task and its comments.

    Args:
        task_id: The task.
    """
    task = _task(ctx, task_id, "delete its tasks")
    for comment in ctx.query(Comment).where(task_id=task.id).all():
        ctx.delete(comment)
    ctx.delete(task)
    return task


# -- comments --------------------------------------------------------------------------------------


@service.tool("write", intent="note", phrases=("comment on {task_id}: {text}", "leave a comment on {task_id} saying {text}"))
def add_comment(ctx: ToolContext, task_id: TaskId, text: Text) -> Comment:
    """Comment on a task (as you).

    Args:
        task_id: The task.
        text: The comment.
    """
    task = _task(ctx, task_id, "comment on its tasks")
    if not text.strip():
        raise ToolError.invalid_argument("text must not be empty.")
    return _comment(ctx, task, text.strip(), ctx.world.user.email, ctx.now_iso)


@service.tool("read", intent="find", phrases=("read the comments on {task_id}",))
def list_comments(ctx: ToolContext, task_id: TaskId, limit: Limit = 20, cursor: Cursor = None) -> Page[Comment]:
    """The comments on a task, oldest first.

    Args:
        task_id: The task.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    task = _task(ctx, task_id)
    return ctx.query(Comment).where(task_id=task.id).order_by("created_at").page(limit, cursor)


# -- world events ----------------------------------------------------------------------------------


@service.event("task_assigned")
def task_assigned(
    ctx: ToolContext, project: str, title: str, author_email: str, assignee_email: str | None = None,
    notes: str | None = None, due_on: str | None = None, hours_ago: float = 1.0,
) -> str:
    """A colleague adds a task called ``title`` to a project (by name or id) ``hours_ago``, usually assigned to someone;
    returns its id."""
    if not title.strip():
        raise ToolError.invalid_argument("A task needs a title.")
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    found = ctx.fetch(Project, project) or ctx.find(Project, name=project)
    if found is None:
        raise ToolError.invalid_argument(f"No project is called or has the id {project!r}.")
    if due_on is not None:
        try:
            date.fromisoformat(due_on)
        except ValueError:
            raise ToolError.invalid_argument(f"due_on {due_on!r} is not a date (YYYY-MM-DD).") from None
    author = _member(ctx, author_email)
    at = ctx.days_from_now(-hours_ago / 24)
    return ctx.insert(Task(
        id=ctx.new_id("tsk"), project_id=found.id, section_id=_section_in(ctx, found, None).id, name=title.strip(), notes=notes,
        assignee_email=_member(ctx, assignee_email).email if assignee_email else None, due_on=due_on,
        created_by=author.email, created_at=at, modified_at=at,
    )).id
