"""The held-out check (issue 32): generated services nobody tuned, played as a user of each product.

    python bench/bench_heldout.py --seed 1 --services 15 --draft   # draw, plan the calls, run them: an unrated file
    python bench/bench_heldout.py --seed 1                          # replay the rated file, print the table

The ratings file (bench/heldout/<seed>.json) holds each call, its response when it was rated, and a person's
rating (plausible / weak / nonsense) with the reason, judged against the product's public API. Replaying runs
every call again on a fresh episode and marks the responses that changed since they were rated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout import RATINGS, draft_calls, excluded, load, replay, sample, save, shares  # noqa: E402

from generator.catalog import generated_entry  # noqa: E402

HERE = Path(__file__).resolve().parent / "heldout"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--services", type=int, default=15)
    parser.add_argument("--avoid", default="", help="comma-separated services never drawn (those fixed since)")
    parser.add_argument("--file", type=Path, help="the ratings file (default bench/heldout/<seed>.json)")
    parser.add_argument("--draft", action="store_true", help="draw and write the unrated calls (never over a rated file)")
    parser.add_argument("--quiet", action="store_true", help="the table only")
    args = parser.parse_args(argv)
    path = args.file or HERE / f"{args.seed}.json"
    if args.draft:
        if path.exists() and any(c.rating for s in load(path)["services"] for c in s["calls"]):
            print(f"bench_heldout: error: {path} holds ratings already (rate in it, or pass another --file)", file=sys.stderr)
            return 2
        avoid = tuple(a for a in args.avoid.split(",") if a)
        services = []
        for name in sample(args.seed, args.services, avoid):
            calls = draft_calls(name)
            for call, text in zip(calls, replay(name, calls)):
                call.response = text
            entry = generated_entry(name)
            services.append({"name": name, "title": entry.title if entry else name, "calls": calls})
        save(path, {"seed": args.seed, "avoid": list(avoid), "services": services})
        print(f"wrote {sum(len(s['calls']) for s in services)} calls over {len(services)} services to {path}")
        return 0
    if not path.exists():
        print(f"bench_heldout: error: no ratings file {path} (write one with --draft)", file=sys.stderr)
        return 2
    data = load(path)
    everything = []
    print(f"held-out check, seed {data['seed']}: {len(data['services'])} services, none named by an issue or a commit")
    for service in data["services"]:
        name, calls = service["name"], service["calls"]
        assert not excluded(name), f"{name} is excluded from the held-out check"
        now = replay(name, calls)
        s = shares(calls)
        print(f"\n== {name}: {service['title']}  ({len(calls)} calls: "
              + " / ".join(f"{s[r]:.0%} {r}" for r in RATINGS) + ")")
        for i, (call, text) in enumerate(zip(calls, now)):
            everything.append(call)
            if args.quiet:
                continue
            changed = "" if text == call.response else "  [response changed since rated]"
            print(f"  {i:2} {call.rating or 'UNRATED':9} {call.tool} {call.arguments}{changed}")
            print(f"       -> {text[:240]}")
            if call.reason:
                print(f"       {call.reason}")
    total = shares(everything)
    print(f"\n| seed {data['seed']} | calls | plausible | weak | nonsense |\n|---|---|---|---|---|")
    for service in data["services"]:
        s = shares(service["calls"])
        print(f"| {service['name']} | {len(service['calls'])} | " + " | ".join(f"{s[r]:.1%}" for r in RATINGS) + " |")
    print(f"| **all {len(data['services'])}** | {len(everything)} | " + " | ".join(f"{total[r]:.1%}" for r in RATINGS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
