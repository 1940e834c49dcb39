"""Seeded values against the products' documentation (issue 32, cause 6), over every catalog service or those named.

    python bench/bench_seeded.py [NAME ...]

Prints two counts, each as cells and columns in how many services:
- undocumented: a seeded value outside the values the column's parameters document (their enum, examples, or
  the values their descriptions list: 'Acceptable values are: "economy", "business"'), where the World has
  nothing of its own for the column (``generator.documented.seed_values`` says which);
- company-filled: a column whose seeded values are the World's company names though it names no company
  (a cabin class 'Simpson LLC', an HTTP method, a state): what a value maker falls back to when it can read
  nothing in the field's name or description.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.catalog import PACKAGE_CATALOG, Catalog  # noqa: E402
from generator.documented import documented_values, seed_values  # noqa: E402
from generator.naming import singular, words  # noqa: E402
from mcp_services.kernel import Episode  # noqa: E402
from mcp_services.kernel.world import World  # noqa: E402

#: Words of a column that is about a company (its name is then rightly a company's).
COMPANY_WORDS = frozenset({"company", "organization", "organisation", "org", "business", "merchant", "vendor",
                           "supplier", "employer", "firm", "brand", "partner", "enterprise", "tenant", "client",
                           "carrier", "customer", "account", "payee", "payer", "counterparty", "creditor", "debtor",
                           "beneficiary", "shipper", "consignee", "issuer", "bank", "institution", "agency", "owner",
                           "seller", "buyer", "publisher", "manufacturer", "provider", "contact", "workspace", "team"})


def _text(value: object) -> str:
    """A value as compared with documented ones: numbers by their value (0.0 is the documented '0')."""
    try:
        return repr(float(value)) if isinstance(value, (int, float, str)) and not isinstance(value, bool) else str(value)
    except ValueError:
        return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--examples", type=int, default=8, help="cells of each kind to print")
    args = parser.parse_args(argv)
    catalog = Catalog(PACKAGE_CATALOG)
    unknown = sorted(set(args.names) - set(catalog.names()))
    if unknown:
        parser.error(f"no generated service named {', '.join(unknown)} (`generator catalog` lists them)")
    companies = {o.name for o in World.from_seed(0).organisations}
    undocumented: list[str] = []
    filled: list[str] = []
    cells = [0, 0]
    services: list[set[str]] = [set(), set()]
    for name in args.names or catalog.names():
        spec = catalog.spec(name)
        with Episode([catalog.service(name)], 0) as episode:
            dump = episode.dump()[name]
        for entity in spec.entities:
            rows = list(dump.get(entity.table, {}).values())
            natural = {f.name for f in entity.fields if f.unique}
            documented = documented_values(spec, entity.name)
            wanted = seed_values(spec, entity, natural)
            for f in entity.fields:
                values = [r.get(f.name) for r in rows if r.get(f.name) is not None]
                known = wanted.get(f.name)
                allowed = {_text(v) for v in known.values} if known is not None and known.certain else set()
                outside = [v for v in values if allowed and _text(v) not in allowed and not isinstance(v, (dict, list))]
                if outside:
                    cells[0] += len(outside)
                    services[0].add(name)
                    undocumented.append(f"{name}.{entity.table}.{f.name}={outside[0]!r} (documented: {sorted(allowed)[:4]})")
                about = {singular(w) for w in words(f.name)} | set(words(f.name))
                if (f.semantic or "").startswith("company") or about & COMPANY_WORDS or f.name == entity.label:
                    continue
                named = [v for v in values if isinstance(v, str) and v in companies]
                if named and len(named) * 2 >= len(values):
                    cells[1] += len(named)
                    services[1].add(name)
                    filled.append(f"{name}.{entity.table}.{f.name}={named[0]!r}")
    for title, found, count, where in (("undocumented", undocumented, cells[0], services[0]),
                                       ("company-filled", filled, cells[1], services[1])):
        print(f"{title}: {count} cells in {len(found)} columns of {len(where)} services")
        for line in found[: args.examples]:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
