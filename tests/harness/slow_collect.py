"""A collection run that is slow enough to be killed in the middle (used by the kill -9 test).

    python slow_collect.py TASKS_FILE OUT_DIR ROLLOUTS
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from harness.agents import AgentTurn, Message, ReferenceAgent, ToolSchema, TurnContext
from harness.collect import CollectConfig, collect
from mcp_services.tasks.spec import load_tasks


class SlowReference(ReferenceAgent):
    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        await asyncio.sleep(0.01)
        return await super().respond(messages, tools, context)


if __name__ == "__main__":
    tasks_file, out, rollouts = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    config = CollectConfig(out=out, tasks_file=tasks_file, rollouts=rollouts, concurrency=4, progress=False)
    collect(config, agent=SlowReference(load_tasks(tasks_file)))
