"""Another process that binds and releases ports on 127.0.0.1 all the while (the port-race test).

    python port_churner.py COUNT_FILE PARENT_PID

It keeps 32 listeners open, each on a free port it gets from the kernel, and every 10
milliseconds closes the oldest and opens another; a connection to any of them is answered with an
HTTP 200 that is not MCP, then closed: a decoy on whatever port it holds. It ends with its parent
(or after an hour), writing how many ports it bound to COUNT_FILE as it goes.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from pathlib import Path

from harness.lifeline import die_with_parent

_DECOY = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"


async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        await asyncio.wait_for(reader.read(65536), 1)
        writer.write(_DECOY)
        await writer.drain()
    except (OSError, TimeoutError):
        pass
    finally:
        writer.close()


async def churn(count_file: Path) -> None:
    open_now: deque[asyncio.Server] = deque()
    bound = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 3600
    while loop.time() < deadline:
        open_now.append(await asyncio.start_server(answer, "127.0.0.1", 0))
        bound += 1
        if len(open_now) > 32:
            open_now.popleft().close()
        if bound % 50 == 0:
            count_file.write_text(str(bound))
        await asyncio.sleep(0.01)


if __name__ == "__main__":
    die_with_parent(int(sys.argv[2]))
    asyncio.run(churn(Path(sys.argv[1])))
