"""The gate worker: ``python -m generator.gate.worker`` reads jobs on stdin, writes one verdict per line.

It is the only place generated specs and custom code run before they are trusted, and it runs in
its own process under the runner's time limit. Input: ``{"jobs": [{"spec": {...}, "custom_code":
"..."|null}], "world_seed": 0, "demote": true}``. Output: one JSON line per job with the verdict
(every check) and the spec to keep.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from generator.catalog import load_custom_functions
from generator.gate.contracts import gate_service
from generator.gate.report import ServiceVerdict, ToolVerdict
from generator.spec import SpecError, load_spec


def run_job(job: dict[str, Any], world_seed: int, demote: bool) -> dict[str, Any]:
    name = str(job.get("spec", {}).get("name", "?"))
    try:
        spec = load_spec(job["spec"])
    except SpecError as exc:
        return {"verdict": verdict_json(ServiceVerdict(name=name, reason=str(exc)[:400])), "spec": None}
    try:
        custom = load_custom_functions(spec.name, job.get("custom_code"))  # untrusted: runs here, in the worker
    except Exception as exc:  # noqa: BLE001 - broken generated code rejects its tools, not the run
        reason = f"custom code does not load: {type(exc).__name__}: {str(exc)[:200]}"
        verdict = ServiceVerdict(name=spec.name, reason=reason,
                                 tools=[ToolVerdict(t.name, "rejected", reason) for t in spec.tools])
        return {"verdict": verdict_json(verdict), "spec": None}
    verdict, final = gate_service(spec, custom=custom, world_seed=world_seed, demote=demote)
    return {"verdict": verdict_json(verdict), "spec": final.model_dump(mode="json", exclude_none=True) if final else None}


def verdict_json(verdict: ServiceVerdict) -> dict[str, Any]:
    return {
        "name": verdict.name,
        "reason": verdict.reason,
        "source": verdict.source,
        "seconds": round(verdict.seconds, 3),
        "tools": [
            {"name": t.name, "status": t.status, "reason": t.reason,
             "checks": [[c.name, c.passed, c.detail] for c in t.checks]}
            for t in verdict.tools
        ],
    }


def main() -> None:
    logging.disable(logging.CRITICAL)  # tool failures are reported in the verdict, not logged
    request = json.load(sys.stdin)
    world_seed = int(request.get("world_seed", 0))
    demote = bool(request.get("demote", True))
    for job in request["jobs"]:
        print(json.dumps(run_job(job, world_seed, demote), ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
