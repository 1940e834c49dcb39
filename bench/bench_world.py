"""The seeded world (issue 22): how varied its texts are, whether it holds together, how long a large one takes.

    python bench/bench_world.py [--seeds 10] [--large-seeds 1] [--skip-large] [--generated]

Prints figures, asserts nothing:
1. per table of human-written text, the share of distinct texts once names and numbers are masked, in
   world 0 and across worlds 0-4 (``mcp_services.worldcheck.texts.distinctness``);
2. the invariant violations of worlds 0..N-1 at the default size (``mcp-services world check``), per invariant;
3. a large world (500 organisations): the time to build the World and its plans, then to seed every library
   service from it (a cold start in a fresh process's caches), its rows, and its violations.

With ``--generated``, only: the ``durations`` invariant on each generated service with start and end fields.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp_services.kernel.world import World, WorldShape  # noqa: E402
from mcp_services.worldcheck.invariants import INVARIANTS, check  # noqa: E402
from mcp_services.worldcheck.seeded import seeded_world  # noqa: E402
from mcp_services.worldcheck.texts import distinctness  # noqa: E402


def texts() -> None:
    one = {d.table: d for d in distinctness([0])}
    five = {d.table: d for d in distinctness(range(5))}
    print("[texts] distinct once names and numbers are masked (target: >= 80% in world 0, >= 50% over worlds 0-4)")
    width = max(len(t) for t in one)
    for table, d in one.items():
        f = five[table]
        print(f"  {table:<{width}}  world 0 {d.share:6.1%} ({d.distinct}/{d.total})   "
              f"worlds 0-4 {f.share:6.1%} ({f.distinct}/{f.total})")
    print(f"  lowest: world 0 {min(d.share for d in one.values()):.1%}, worlds 0-4 {min(d.share for d in five.values()):.1%}")
    channels = {"email": "mailbox.messages.body", "chat": "chat.messages.text", "sms": "sms.messages.body",
                "voice": "voice.calls.transcript"}
    print("  people's messages by channel, worlds 0-4: " + ", ".join(f"{c} {five[t].share:.1%}" for c, t in channels.items()))


def invariants(seeds: int, shape: WorldShape | None, label: str) -> None:
    total: Counter[str] = Counter()
    for seed in range(seeds):
        start = time.perf_counter()
        found = check(seeded_world(seed, shape))
        counts = {name: len(v) for name, v in found.items()}
        total.update(counts)
        print(f"  world {seed}: {sum(counts.values())} violations ({time.perf_counter() - start:.1f} s)")
    per = ", ".join(f"{inv.name} {total[inv.name]}" for inv in INVARIANTS)
    print(f"  {label}, worlds 0-{seeds - 1}: {sum(total.values())} violations ({per})")


def large(seeds: int) -> None:
    shape = WorldShape.sized("large")
    print(f"[large] {shape.organisations} organisations, {shape.people} people, {shape.months} months")
    for seed in range(seeds):
        start = time.perf_counter()
        world = World.from_seed(seed, shape)
        world.plan  # noqa: B018 - the business plan, built once per world
        planned = time.perf_counter() - start
        start = time.perf_counter()
        seeded = seeded_world(seed, shape)
        seeded_s = time.perf_counter() - start
        rows = sum(len(t.rows) for t in seeded)
        print(f"  world {seed}: World and plan {planned:.2f} s, every library service seeded {seeded_s:.2f} s "
              f"({rows} rows in {len(seeded.tables)} tables)")
    invariants(seeds, shape, "large")


def generated() -> None:
    """The ``durations`` invariant on every generated service whose records have a start and an end (seed 0)."""
    from generator.catalog import generated_names, generated_service
    from mcp_services.worldcheck.invariants import Facts
    from mcp_services.worldcheck.story import SPANS, durations

    spanned = []
    for name in generated_names():
        service = generated_service(name)
        fields = [{f.name for f in rt.definition.stored_fields} for rt in service.entities.values()] if service else []
        if any(a in f and b in f for f in fields for a, b in SPANS):
            spanned.append(name)
    broken = 0
    for name in spanned:
        found = list(durations(Facts(seeded_world(0, services=[name]))))
        broken += bool(found)
        print(f"  {name}: {len(found)} violations" + (f" (first: {found[0]})" if found else ""))
    print(f"  generated services with start/end fields: {len(spanned)}, breaking durations: {broken}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10, help="default-size worlds to check (default 10)")
    parser.add_argument("--large-seeds", type=int, default=1, help="large worlds to build and check (default 1)")
    parser.add_argument("--skip-large", action="store_true", help="skip the large world (minutes)")
    parser.add_argument("--generated", action="store_true",
                        help="only check the generated services' start and end times (the durations invariant)")
    args = parser.parse_args()
    if args.generated:
        print("[generated] records that end before they start, meetings longer than a day (world 0)")
        generated()
        return
    texts()
    print("[invariants] violations per world at the default size")
    invariants(args.seeds, None, "default size")
    if not args.skip_large:
        large(args.large_seeds)


if __name__ == "__main__":
    main()
