"""Seams in requests (issue 32, point 5): prints figures, asserts nothing.

    python bench/bench_phrases.py TASKS.jsonl [--examples 8]

Reads a task file (``composer generate ... --out TASKS.jsonl``) and counts the tasks whose request, or the
message that carries it (an email, a chat message in the task's setup), shows a seam: the opening words of a
tool phrase that ``composer/phrases.py`` refuses (over the services the tasks mount), or a seam left in filled
text (``seams``: doubled articles or words, an unfilled placeholder). Run it on the same ``composer generate``
arguments before and after a phrase change.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from composer.catalog import load_catalog  # noqa: E402
from composer.phrases import seams, whole_phrases  # noqa: E402
from mcp_services.registry import LIBRARY  # noqa: E402


def _strings(node: Any) -> Iterator[str]:
    """Every text (with a space: words, not ids) held anywhere in ``node``."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and " " in item:
            yield item
        elif isinstance(item, (dict, list)):
            stack.extend(reversed(list(item.values() if isinstance(item, dict) else item)))


def _opening(phrase: str) -> str | None:
    """The words before a phrase's first placeholder, when there are four or more of them."""
    words = re.sub(r"\{\w+\}.*$", "", phrase).split()
    return " ".join(words[:4]).lower() if len(words) >= 4 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--examples", type=int, default=8)
    args = parser.parse_args()
    tasks = [json.loads(line) for line in args.tasks.read_text().splitlines() if line.strip()]
    catalog = load_catalog(sorted(set(LIBRARY) | {s for t in tasks for s in t.get("services", [])}))
    refused, whole = set(), set()
    for tool in catalog.tools.values():
        kept = whole_phrases(tool)
        for phrase in tool.phrases:
            opening = _opening(phrase)
            if opening is not None:
                (whole if phrase in kept else refused).add(opening)
    refused -= whole  # an opening a whole phrase also has is no seam
    hits = []
    for task in tasks:
        text = "\n".join([task["instruction"], *(s for r in task.get("setup", []) for s in _strings(r.get("row", {})))])
        found = [o for o in sorted(refused) if o in text.lower()] + seams(text)
        if found:
            hits.append((found, text))
    print(f"{len(tasks)} tasks, {len(hits)} with a seam in the request or the message that carries it "
          f"({len(refused)} refused phrase openings over {len(catalog.services)} services)")
    for found, text in hits[:args.examples]:
        at = max(0, text.lower().find(found[0]) - 40) if found[0] in text.lower() else 0
        print(f"  {found[:2]}: ...{' '.join(text[at:at + 160].split())}...")


if __name__ == "__main__":
    main()
