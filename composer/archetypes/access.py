"""Who can reach our files: a client contact who left their company loses the access we gave them.

A colleague hears that a client contact has left: every share of ours with that person goes, file by file, while
their former colleague's access to the same file (the look-alike share beside it, same company, same file) stays.
No tool knows who left: the shares look alike but for the person.
"""

from __future__ import annotations

from composer.archetypes.common import teammate
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup, shows
from mcp_services.kernel.world import Person


def _shared_files(s: Scenario) -> dict[str, list[tuple[Rec, Rec]]]:
    """Customers of the world by email, with each (share, file) of a file shared with them."""
    customers = {p.email for p in s.world.customers}
    files = {f.key: f for f in s.records("files", "file", where={"trashed": False})}
    found: dict[str, list[tuple[Rec, Rec]]] = {}
    for share in s.records("files", "share"):
        if share["email"] in customers and share["item_id"] in files:
            found.setdefault(share["email"], []).append((share, files[share["item_id"]]))
    return found


@archetype(
    "client-contact-left",
    family="operations",
    title="A client contact has left their company: remove every share of ours with them, and only theirs",
    services=("files",),
    fits=can_arrive(),
)
def client_contact_left(s: Scenario) -> None:
    every = _shared_files(s)
    shared = {e: pairs for e, pairs in every.items() if 1 <= len(pairs) <= 2}
    email = s.pick(sorted(shared), "no client contact with files shared")
    person = s.person(email)
    org = s.world.organisation(person.organisation_id)
    others = [p for p in s.world.customers if p.organisation_id == person.organisation_id and p.email != email]
    successor: Person = s.pick(others, "nobody else at the company")
    sender = teammate(s)
    s.subject = person
    pairs = shared[email]
    # Their colleague at the company was given the same file: a share that looks the same but for the person.
    first_share, first_file = pairs[0]
    if any(f.key == first_file.key for _, f in every.get(successor.email, [])):
        raise Skip("their colleague has the file already")
    kept = s.copy(first_share, email=successor.email, person_name=successor.name)
    if s.rng.random() < 0.6:  # their former colleague tells us themselves, on whatever channel they use
        trigger = arrive(s, successor, Ask(
            subject=f"{person.name} has left",
            text=s.rng.choice((
                f"Just to let you know, {person.name} has left {org.name}. Could you remove {person.first_name}'s access to the "
                "files you've shared with us? I'm your contact from now on.",
                f"{person.first_name} {person.last_name} is no longer with us. Please make sure they can't open any of your "
                "files any more.",
            )),
            short=f"{person.name} has left {org.name}. Please remove {person.first_name}'s access to your shared files.",
            topic="Account and users",
            relay=f"{person.name} has left {org.name}, and {successor.first_name} asks us to remove {person.first_name}'s "
                  "access to our shared files.",
        ))
    else:
        trigger = arrive(s, sender, Ask(
            subject=f"{person.name} has left {org.name}",
            text=s.rng.choice((
                f"Heads up: {person.name} has left {org.name}, {successor.first_name} told me on a call today. Could you take "
                f"away {person.first_name}'s access to our files? They shouldn't be able to open anything of ours now.",
                f"{successor.name} says {person.first_name} {person.last_name} is no longer at {org.name}. Can you remove "
                f"{person.first_name}'s access to everything we've shared with them?",
            )),
            team="sales",
        ), channels=COLLEAGUE)
    s.brief.intro = f"{trigger.intro} about {person.name}, who has left {org.name}"
    s.brief.goal = (f"Make sure {person.first_name} can no longer open any of our files and "
                    f"{reply_clause(trigger, 'which files they had')}")
    s.brief.anchors += [person.name]
    facts: list[Said] = []
    names: list[str] = []
    for n, (share, file) in enumerate(pairs):
        found = lookup(s, file, {"shared_with_email": email}, say=f"find the files shared with {person.first_name}")
        access = lookup(s, share, {"file_id": found.ref("id")}, say=f"see who has access to {file['name']}")
        if n == 0 and shows(s, access, kept):
            s.trap("successor-share", kept, f"{successor.first_name}'s access to {first_file['name']}", step=access)
        s.call("files", "remove_share", {"share_id": access.ref("id")}, say=f"remove {person.first_name}'s access to it")
        facts.append(Said("a file they had", Lit(file["name"])))
        names.append(f"\"{file['name']}\"")
    reply(s, trigger, [f"Done: {person.first_name} no longer has access to {' or '.join(names)}. "
                       f"{successor.first_name}'s access is as it was."],
          say=reply_clause(trigger, "which files they had"), facts=facts, subject=f"{person.name} has left {org.name}")
