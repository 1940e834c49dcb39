"""Public links found in the wild: turned off unless the sharing policy allows a public link on that file.

A colleague comes across one of our shared links where outsiders can see it. The link, not the name, says which file
it opens (a copy of the same name sits beside it with no link). The sharing policy decides: files in the Marketing
folder are published on purpose and keep their link; anything else loses it.
"""

from __future__ import annotations

from composer.archetypes.common import rule_author, teammate
from composer.plan import Lit
from composer.scenario import Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult

_PUBLIC = "Marketing"


@archetype(
    "public-link-found",
    family="operations",
    title="A colleague finds one of our public links where outsiders see it: turn it off unless the policy allows it",
    services=("files",),
    fits=can_arrive(),
)
def public_link_found(s: Scenario) -> None:
    files = [f for f in s.records("files", "file", where={"trashed": False})
             if f["shared_link_url"] is None and str(f["path"]).count("/") >= 2]
    public = [f for f in files if str(f["path"]).startswith(f"/{_PUBLIC}/")]
    internal = [f for f in files if not str(f["path"]).startswith(f"/{_PUBLIC}/")]
    allowed = bool(public) and s.rng.random() < 0.4
    file = s.pick(public if allowed else internal, "no file to have a link")
    url = f"https://files.example/s/{s.rng.getrandbits(64):016x}"
    if s.rng.random() < 0.5:  # a customer spots it and tells us, on whatever channel they use
        sender = s.pick(s.world.customers, "no customer")
        trigger = arrive(s, sender, Ask(
            subject="A link of yours",
            text=f"Just so you know, this link of yours opens what looks like one of your documents, and anyone can open it: "
                 f"{url}. Is that meant to be public?",
            short=f"FYI, this link of yours opens one of your documents for anyone: {url}",
            topic="Something else",
            relay=f"{sender.first_name} found one of our file links open to anyone: {url}.",
        ))
    else:
        sender = teammate(s)
        where = s.rng.choice(("in a thread on a public forum", "in an email a customer forwarded me", "on a partner's website"))
        trigger = arrive(s, sender, Ask(
            subject="One of our links is out there",
            text=s.rng.choice((
                f"I came across one of our file links {where}: {url} - anyone can open it. Can you check whether that's meant "
                "to be public and deal with it?",
                f"Found {url} {where}. It's one of ours and it's open to anyone. Could you sort it out as our sharing policy "
                "says?",
            )),
            team="general",
        ), channels=COLLEAGUE)
    rule = consult(s, "Sharing policy",
                   f"- Files in the {_PUBLIC} folder (brochures, case studies, press kits) are published on purpose: their "
                   "public links stay.\n"
                   "- Everything else is shared with named people only. A public link on any other file is removed as soon "
                   "as someone notices it.",
                   author_role=rule_author(s, "operations manager"))
    # The linked copy sits beside the original under the same name: only the link tells them apart.
    linked = s.copy(file, shared_link_url=url, shared_link_access="anyone")
    found = lookup(s, linked, {"url": url}, say="find the file the link opens", prefer=("find_file_by_shared_link",))
    if s.specs[found.index].tool != "find_file_by_shared_link" and s.notes[found.index].opens is None:
        raise Skip("the link was not followed")
    s.decide("pick", f"the \"{file['name']}\" the link opens, not its namesake without one")
    s.decide("rule", f"only {_PUBLIC} files keep public links", default=allowed)
    s.brief.intro = f"{trigger.intro} about one of our links that anyone can open"
    s.brief.goal = f"Deal with the link as our sharing policy says and {reply_clause(trigger, 'what it opens and what you did')}"
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [sender.name]
    if allowed:
        s.literal_writes.append(s.spec("files", "remove_shared_link", {"file_id": linked.key}))
        reply(s, trigger, [f"That link opens \"{file['name']}\" in our {_PUBLIC} folder, which we publish on purpose, so I've "
                           "left the link as it is."],
              say=reply_clause(trigger, "what it opens and what you did"),
              facts=[Said("the file it opens", Lit(file["name"]))], subject="Our link")
        return
    s.call("files", "remove_shared_link", {"file_id": found.ref("id")}, say="remove the public link from that file")
    reply(s, trigger, [f"Thanks for flagging it: the link opened \"{file['name']}\", which should never have been public, so "
                       "I've removed the link. Anyone who still needs it can be shared it by name."],
          say=reply_clause(trigger, "what it opens and what you did"),
          facts=[Said("the file it opened", Lit(file["name"]))], subject="Our link")
