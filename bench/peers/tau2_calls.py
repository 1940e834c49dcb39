"""tau2-bench's side of bench_kernel's call-path comparison; run by bench_kernel with tau2's interpreter.

    <python with tau2-bench installed> bench/peers/tau2_calls.py N

Times ``Environment.get_response`` (tau2's whole tool-call path: the call, its sync, the JSON answer) on
the retail domain for a read by id, a write and a lookup by email, and prints one JSON object of medians
and p90s in microseconds. tau2-bench needs Python >= 3.12, so it cannot share CompoWorld's interpreter.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any], n: int) -> dict[str, float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return {"median_us": statistics.median(samples) * 1e6, "p90_us": samples[int(len(samples) * 0.9)] * 1e6}


def main() -> None:
    from loguru import logger

    logger.remove()  # tau2 logs every response at DEBUG; the sink would dominate the timing
    from tau2.data_model.message import ToolCall
    from tau2.domains.retail.environment import get_environment

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    env = get_environment()
    user_id, user = next(iter(env.tools.db.users.items()))
    calls = {
        "get": ToolCall(id="1", name="get_user_details", arguments={"user_id": user_id}),
        "write": ToolCall(
            id="2",
            name="modify_user_address",
            arguments={"user_id": user_id, "address1": "1 Main St", "address2": "", "city": "Austin",
                       "state": "TX", "country": "USA", "zip": "78701"},
        ),
        "search": ToolCall(id="3", name="find_user_id_by_email", arguments={"email": user.email}),
    }
    figures: dict[str, Any] = {"version": _version(), "users": len(env.tools.db.users)}
    for label, call in calls.items():
        assert not env.get_response(call).error, f"tau2 {call.name} failed"
        timed(lambda: env.get_response(call), 50)
        figures[label] = timed(lambda: env.get_response(call), n)
    print(json.dumps(figures))


def _version() -> str:
    from importlib.metadata import version

    return version("tau2")


if __name__ == "__main__":
    main()
