"""A worker process of ``ProcessBackend``: jobs in on stdin, trajectory lines out on stdout."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from harness.lifeline import PARENT_PID_FLAG, die_with_parent, die_with_parent_named_in

if __name__ == "__main__":  # before the imports below: a parent killed while they load ends this process now
    die_with_parent_named_in(sys.argv)

from harness.agents import make_agent
from harness.backends import LocalBackend
from harness.runner import RolloutJob
from harness.tools import make_transport
from harness.workers import ProcessBackend, error_line
from mcp_services.tasks.spec import TaskSpec


async def _run(lines: list[str]) -> None:
    agent_config, runner, transport_name, concurrency = ProcessBackend.parse_header(json.loads(lines[0]))
    tasks: dict[str, TaskSpec] = {}
    jobs: list[RolloutJob] = []
    for line in lines[1:]:
        message = json.loads(line)
        if "task" in message:
            task = TaskSpec.model_validate(message["task"])
            tasks[task.id] = task
        else:
            task_id, rollout, seed = message["job"]
            jobs.append(RolloutJob(tasks[task_id], rollout, seed))
    agent = make_agent(agent_config, tasks)
    transport = make_transport(transport_name)
    out = sys.stdout.buffer
    try:
        async for trajectory in LocalBackend(agent, transport, runner, concurrency).run(jobs):
            out.write(trajectory.to_line().encode() + b"\n")
            out.flush()
    finally:
        transport.close()
        await agent.aclose()


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(prog="python -m harness.worker")
    args.add_argument(PARENT_PID_FLAG, type=int, required=True, help="exit when this process ends")
    # A parent killed with -9 cannot stop its workers: they stop themselves instead of running
    # episodes nobody will record (the restarted run collects those rollouts again).
    die_with_parent(args.parse_args(argv).parent_pid)
    lines = [line for line in sys.stdin.read().splitlines() if line.strip()]
    try:
        asyncio.run(_run(lines))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it
        try:
            sys.stdout.buffer.write(error_line(exc).encode() + b"\n")
            sys.stdout.buffer.flush()
        except OSError:
            pass  # the parent is gone (e.g. killed): nobody to tell
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
