"""TaskSpec: a task as frozen data with a content-hash id, and its JSON Lines file format (``tasks.jsonl``)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from mcp_services.command_line import InputError
from mcp_services.files import atomic_writer
from mcp_services.kernel.world import WorldShape
from mcp_services.tasks.checks import AnswerCheck, Check, Diff
from mcp_services.tasks.grading import Grade, RubricItem, grade

SCHEMA_VERSION = 3
#: Task files of these versions load (version 1 has no ``scenario`` and no ``traps``; version 2 no stages,
#: channels or counterfactual criteria).
SUPPORTED_VERSIONS = (1, 2, 3)

CAPABILITIES = (
    "sequential-dependency",
    "cross-service-constraint",
    "distractor-avoidance",
    "information-question",
    "policy",
)


class PlanStep(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    service: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class SetupRecord(BaseModel):
    """A row inserted into a service's table before the episode starts."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    service: str
    table: str
    row: dict[str, Any]


def _without_empty(model: BaseModel, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
    """The model's JSON without the fields newer versions added, where empty: older files read back byte for byte."""
    body: dict[str, Any] = handler(model)
    for name in getattr(model, "_omit_when_empty", ()):
        if body.get(name) in (None, [], {}, ""):
            body.pop(name, None)
    return body


class Counterfactual(BaseModel):
    """A plan that must fail the task's grading: following a distractor, or ignoring a house rule.

    ``composer verify`` replays it (failed calls are skipped, as an agent would move on) and checks
    that the task does not pass; it proves the checks tell the right plan from a near miss.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    description: str = ""
    plan: list[PlanStep]
    answer: str | None = None
    #: The rubric criteria this near miss must fail (the check that catches it), beyond failing the task.
    criteria: list[str] = Field(default_factory=list)

    _omit_when_empty: ClassVar[tuple[str, ...]] = ("criteria",)

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_empty(self, handler)


class RecordRef(BaseModel):
    """One record of one service's table, by primary key."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    service: str
    table: str
    key: str


class Reference(RecordRef):
    """A referring expression of the instruction, the record it names, and how it picks that record out."""

    text: str
    relation: str
    where: dict[str, Any] = Field(default_factory=dict)
    latest: str | None = None


class ScenarioInfo(BaseModel):
    """The workflow a task comes from: its archetype and family, the phrasing, what started it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    archetype: str
    family: Literal["support", "sales", "finance", "operations", "hr", "marketing"]
    phrasing: Literal["guided", "goal"]
    trigger: RecordRef | None = None
    policy_in_data: bool = False
    references: list[Reference] = Field(default_factory=list)
    #: The channel the work arrived on (email, chat, sms, voice, ticket, form), when it came from a message.
    channel: str | None = None
    #: The stages of the plan, in order (trigger, identify, consult, decide, act, report, follow-up), one per step.
    stages: list[str] = Field(default_factory=list)
    #: Steps a random walk added after the workflow (follow-ups), and the workflow chained from the same trigger.
    walk: list[str] = Field(default_factory=list)
    chained: str | None = None

    _omit_when_empty: ClassVar[tuple[str, ...]] = ("channel", "stages", "walk", "chained")

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_empty(self, handler)


class TrapInfo(RecordRef):
    """A record that looks like the target (or a rule a careless agent breaks); the checks keep it untouched."""

    kind: str
    description: str = ""


class TaskSpec(BaseModel):
    """One task. ``id`` is the sha256 of the task's canonical JSON without the id."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    schema_version: int = SCHEMA_VERSION
    instruction: str = Field(min_length=1)
    services: list[str] = Field(min_length=1)
    distractor_services: list[str] = Field(default_factory=list)
    world_seed: int
    #: The size and industry of the task's world (left out of the file and the id when it is the default).
    world_shape: WorldShape = Field(default_factory=WorldShape)
    setup: list[SetupRecord] = Field(default_factory=list)
    plan: list[PlanStep]
    checks: list[Check]
    rubric: list[RubricItem]
    answer: Any | None = None
    capabilities: list[str] = Field(default_factory=list)
    stats: dict[str, Any] = Field(default_factory=dict)
    counterfactuals: list[Counterfactual] = Field(default_factory=list)
    scenario: ScenarioInfo | None = None
    traps: list[TrapInfo] = Field(default_factory=list)

    @classmethod
    def build(cls, **fields: Any) -> TaskSpec:
        """A task from its fields; the id is computed from the content."""
        fields.pop("id", None)
        fields.setdefault("schema_version", SCHEMA_VERSION)
        draft = cls(id="pending", **fields)
        return draft.model_copy(update={"id": content_id(draft)})

    @property
    def mounted_services(self) -> list[str]:
        """The needed services, then the distractor services."""
        return list(self.services) + [s for s in self.distractor_services if s not in self.services]

    @property
    def expected_answer(self) -> Any | None:
        """What a correct final answer states: ``answer``, else the first answer check's value (None: no question)."""
        if self.answer is not None:
            return self.answer
        return next((c.expected for c in self.checks if isinstance(c, AnswerCheck)), None)

    def grade(self, diff: Diff, answer: str | None) -> Grade:
        """The grade of a run with this state diff and final answer."""
        return grade(self.checks, self.rubric, diff, answer)

    def to_json(self) -> str:
        body = self.model_dump(mode="json", exclude=_unset_fields(self))
        return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _unset_fields(task: TaskSpec) -> set[str]:
    """Fields added after version 1 that a task leaves empty: left out, so old files read back byte for byte."""
    empty: set[str] = set()
    if task.scenario is None:
        empty.add("scenario")
    if not task.traps:
        empty.add("traps")
    if task.world_shape.is_default:
        empty.add("world_shape")
    return empty


def content_id(task: TaskSpec) -> str:
    # An empty optional field leaves the hash as it was before the field existed.
    exclude = {"id"} | _unset_fields(task)
    if not task.counterfactuals:
        exclude.add("counterfactuals")
    body = task.model_dump(mode="json", exclude=exclude)
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


class TaskFileError(InputError):
    """A task file that cannot be read: says which file and line, and why."""


class TaskLookupError(InputError):
    """A task id (or id prefix) that names no task of a file, or more than one."""


def load_tasks(path: str | os.PathLike[str]) -> list[TaskSpec]:
    """Read a ``tasks.jsonl`` file, rejecting empty files, corrupt lines and other schema versions."""
    path = Path(path)
    if not path.exists():
        raise TaskFileError(f"task file {path} does not exist; create one with `composer generate --out {path}`")
    tasks: list[TaskSpec] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TaskFileError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(raw, dict):
                raise TaskFileError(f"{path}:{number}: a task must be a JSON object")
            version = raw.get("schema_version")
            if version not in SUPPORTED_VERSIONS:
                raise TaskFileError(
                    f"{path}:{number}: task schema_version {version!r} is not supported (this version reads "
                    f"{', '.join(map(str, SUPPORTED_VERSIONS))}); regenerate the tasks with this version of `composer generate`"
                )
            try:
                task = TaskSpec.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"])
                raise TaskFileError(f"{path}:{number}: invalid task ({where}: {first['msg']})") from exc
            if task.id in seen:
                raise TaskFileError(f"{path}:{number}: duplicate task id {task.id}")
            seen.add(task.id)
            tasks.append(task)
    if not tasks:
        raise TaskFileError(f"task file {path} holds no tasks")
    return tasks


def write_tasks(path: str | os.PathLike[str], tasks: Iterable[TaskSpec]) -> int:
    """Write tasks atomically (a temporary file renamed into place): never a half-written file.

    The file gets the mode ``open`` would give it (the umask's), not a temporary file's 0600.
    """
    count = 0
    with atomic_writer(path) as handle:
        for task in tasks:
            handle.write((task.to_json() + "\n").encode("utf-8"))
            count += 1
    return count


def find_task(tasks: list[TaskSpec], task_id: str, where: str = "the task file") -> TaskSpec:
    """The task whose id is ``task_id`` or, failing that, the one task whose id starts with it.

    ``TaskLookupError`` when none matches, or several do (naming them, so a longer prefix can be given).
    """
    for task in tasks:
        if task.id == task_id:
            return task
    matches = [t for t in tasks if task_id and t.id.startswith(task_id)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(t.id[:12] for t in matches[:5]) + (f" and {len(matches) - 5} more" if len(matches) > 5 else "")
        raise TaskLookupError(
            f"task id {task_id!r} is ambiguous in {where}: {len(matches)} task ids start with it ({shown})",
            "give more characters of the id",
        )
    raise TaskLookupError(
        f"no task with id {task_id!r} in {where} ({len(tasks)} tasks)", "`composer audit FILE` shows each task with its id"
    )
