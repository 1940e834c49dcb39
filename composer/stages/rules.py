"""Consult: the rules a workflow follows, kept where companies keep them, and the step that reads them.

A rule lives in the shared drive's Policies folder, in a manager's email to the team, or on a wiki
page; ``consult`` plants it in one of the places the mounted services offer (seeded choice), adds
the step that reads it (found through any read that reaches it) and returns how the request points
at it ("Follow our refund policy (in the Policies folder of the shared drive)"), never what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from mcp_services.kernel.world import Person

from composer.decisions import near_threshold
from composer.plan import StepSpec
from composer.scenario import Rec, Scenario, Skip, Step
from composer.stages.lookup import lookup


@dataclass(frozen=True)
class Rule:
    """A written rule the task follows: where it lives, the step that reads it, how the request names it."""

    rec: Rec
    step: Step | None
    pointer: str  # "Follow our refund policy (in the Policies folder of the shared drive)"
    where: str  # "drive", "email" or "wiki"


def colleague(s: Scenario, role: str) -> Person:
    """The teammate with this role (never the user the agent works for: they do not write to themselves)."""
    try:
        person = s.world.team_member(role)
    except KeyError:
        raise Skip(f"the team has no {role}") from None
    if person.email == s.world.user.email:
        raise Skip(f"the {role} is the user")
    return person


def policy_document(s: Scenario, title: str, text: str) -> Rec:
    """A policy written down in the shared drive (the Policies folder), owned by the operations manager."""
    owner = s.world.team_member("operations manager")
    return s.event(
        "files", "document_added", "file", name=f"{title}.md", content=f"# {title}\n\n{text}\n", folder="Policies",
        owner_email=owner.email, days_ago=s.rng.randint(20, 200),
    )


def policy_email(s: Scenario, sender: Person, subject: str, text: str) -> Rec:
    """A rule a manager sent the team by email some days ago (to everyone on the team, the user among them)."""
    team = [p.email for p in s.world.team]
    return s.event(
        "mailbox", "email_received", "message", from_email=sender.email, from_name=sender.name, subject=subject, body=text,
        hours_ago=24.0 * s.rng.randint(3, 40), to=team,
    )


def consult(
    s: Scenario, title: str, text: str, *, author_role: str = "operations manager", read: bool = True
) -> Rule:
    """Where a rule the task must follow lives (a document in the shared drive, or an email a manager sent the team),
    with the step that reads it when ``read``. The pointer says where it is, never what it says."""
    if s.has("files") and (not s.has("mailbox") or s.rng.random() < 0.6):
        rec = policy_document(s, title, text)
        pointer = f"Follow our {title.lower()} (in the Policies folder of the shared drive)"
        known = {"query": title, "name": f"{title}.md"}
        where = "drive"
    elif s.has("mailbox"):
        manager = colleague(s, author_role)
        body = f"Hi all,\n\nA reminder of our {title.lower()}:\n\n{text}\n\nThanks,\n{manager.name}"
        rec = policy_email(s, manager, title, body)
        pointer = f"Stick to the {title.lower()} {manager.first_name} emailed the team"
        known = {"query": title, "subject": title, "from_email": manager.email}
        where = "email"
    else:
        raise Skip("no place for a written rule")
    step = lookup(s, rec, known, say=f"check our {title.lower()}", stage="consult") if read else None
    s.read_rule(title)
    return Rule(rec, step, pointer, where)


#: How often a threshold a rule states lies within 10% of the value it decides (the rule bites by a little).
NEAR_SHARE = 0.9


def limit_near(s: Scenario, amount: float, steps: tuple[int, ...] = (5, 10, 20, 25, 50, 100, 250, 500)) -> float:
    """A round limit a rule might state near ``amount``, on either side and never on it: within 10% of it most of the
    time (``NEAR_SHARE``), else a coarser round figure up to half as much again away."""
    options: dict[bool, set[float]] = {True: set(), False: set()}
    for step in steps:
        for value in (amount // step * step, (amount // step + 1) * step):
            if value > 0 and abs(value - amount) >= 0.01 and 0.6 * amount <= value <= 1.5 * amount:
                options[abs(value - amount) <= 0.1 * value].add(float(value))
    near = s.rng.random() < NEAR_SHARE
    pool = options[near] or options[not near]
    if not pool:
        raise Skip(f"no round limit near {amount}")
    return float(s.rng.choice(sorted(pool)))


T = TypeVar("T")


def near_first(s: Scenario, candidates: Sequence[T], value: Callable[[T], float], threshold: Callable[[T], float] | float,
               reason: str) -> T:
    """One of ``candidates`` whose deciding value lies within 10% of its threshold most of the time (``NEAR_SHARE``),
    else one further off; the other kind when a draw finds none (``Skip`` with ``reason`` when there is no candidate).
    A rule bites by a little where the world has such a value: the agent must read both figures, not eyeball them."""
    limit = threshold if callable(threshold) else (lambda _: float(threshold))
    near = [c for c in candidates if near_threshold(value(c), limit(c))]
    far = [c for c in candidates if not near_threshold(value(c), limit(c))]
    pools = (near, far) if s.rng.random() < NEAR_SHARE else (far, near)
    return s.pick(pools[0] or pools[1], reason)


def instead(s: Scenario, step: Step, careless: StepSpec) -> list[StepSpec]:
    """The plan of an agent that ignores the rule: ``careless`` (the write the rule forbids) where the plan has ``step``
    (what the rule asks instead), everything else as the plan has it so far."""
    return [*s.specs[:step.index], careless, *s.specs[step.index + 1:]]


__all__ = ["NEAR_SHARE", "Rule", "colleague", "consult", "instead", "limit_near", "near_first", "policy_document", "policy_email"]
