"""Client folders in the shared drive: an NDA put in place from the template, unless the client has one already.

An account executive needs an NDA ready for a client. The filing guide says a client's documents live in their folder
under Clients, named "<Company> - <Document>", and that a template is copied, never moved out of Templates. Where the
client's folder holds a mutual NDA already, nothing is copied and the colleague hears which file it is.
"""

from __future__ import annotations

from composer.archetypes.common import rule_author, teammate
from composer.plan import Lit
from composer.scenario import Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult

_TEMPLATE = "NDA template.docx"


@archetype(
    "client-nda-ready",
    family="sales",
    title="A colleague needs an NDA ready for a client: copy the template into their folder, named as the filing guide says, "
          "unless they have one",
    services=("files",),
    fits=can_arrive(COLLEAGUE),
)
def client_nda_ready(s: Scenario) -> None:
    folders = {f["name"]: f for f in s.records("files", "folder", where={"trashed": False})}
    clients = folders.get("Clients")
    templates = [f for f in s.records("files", "file", where={"name": _TEMPLATE, "trashed": False})]
    if clients is None or len(templates) != 1:
        raise Skip("no Clients folder or no single NDA template")
    template = templates[0]
    orgs = {o.name: o for o in s.world.organisations}
    options = [f for f in s.records("files", "folder", where={"parent_id": clients.key, "trashed": False}) if f["name"] in orgs]
    folder = s.pick(options, "no client folder")
    org = orgs[folder["name"]]
    inside = s.records("files", "file", where={"parent_id": folder.key, "trashed": False})
    signed = next((f for f in inside if "NDA" in str(f["name"])), None)
    sender = teammate(s)
    trigger = arrive(s, sender, Ask(
        subject=f"NDA for {org.name}",
        text=s.rng.choice((
            f"{org.name} want to share their roadmap with us, so we need an NDA in place first. Could you get one ready in "
            "their folder on the drive? I'll send it for signature.",
            f"Can you set up an NDA for {org.name} in the shared drive? Legal wants one before the technical deep dive.",
        )),
        team="sales",
    ), channels=COLLEAGUE)
    name = f"{org.name} - Mutual NDA.docx"
    rule = consult(s, "Filing guide",
                   "- Each client's documents live in their own folder under Clients.\n"
                   "- Files are named \"<Company> - <Document>\", for example \"Acme Corp - Mutual NDA.docx\".\n"
                   "- Templates stay in Templates: copy a template into the client's folder, never move it.\n"
                   "- A client has one NDA: if their folder holds one already, use that one.",
                   author_role=rule_author(s, "operations manager"))
    place = lookup(s, folder, {"query": org.name, "name": org.name, "parent_id": clients.key}, say=f"find {org.name}'s folder")
    listed = s.call("files", "list_folder_items", {"folder_id": place.ref("id")}, say="see what is in it", stage="decide",
                    select=signed) if signed is not None else None
    s.decide("premise", f"{org.name} has no NDA yet", default=signed is None)
    s.brief.intro = f"{trigger.intro} about an NDA for {org.name}"
    s.brief.goal = f"Get an NDA ready for {org.name} as our filing guide says and {reply_clause(trigger, 'the file to send')}"
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [sender.name, org.name]
    if signed is not None and listed is not None:
        s.literal_writes.append(s.spec("files", "copy_file", {"file_id": template.key, "folder_id": folder.key, "new_name": name}))
        reply(s, trigger, [f"{org.name} has an NDA with us already: \"", listed.ref("name"), f"\" in their folder, so I haven't "
                           "made a second one. Use that one."],
              say=reply_clause(trigger, "the file to send"),
              facts=[Said("that they have one already", Lit("already"), "premise"), Said("the file", listed.ref("name"))],
              subject=f"NDA for {org.name}")
        return
    found = lookup(s, template, {"name": _TEMPLATE}, say="find the NDA template")
    if not inside:
        raise Skip("the client's folder is empty")
    s.call("files", "list_folder_items", {"folder_id": place.ref("id")}, say="see what is in it", stage="decide",
           select=inside[0])
    s.call("files", "copy_file", {"file_id": found.ref("id"), "folder_id": place.ref("id"), "new_name": name},
                    say=f"copy the NDA template into {org.name}'s folder, named as the filing guide says")
    reply(s, trigger, [f"Done: \"{name}\" is ready in {org.name}'s folder, copied from our NDA template."],
          say=reply_clause(trigger, "the file to send"), facts=[Said("the file", Lit(name))], subject=f"NDA for {org.name}")
