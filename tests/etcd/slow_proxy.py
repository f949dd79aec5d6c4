#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A deliberately slow etcd member for the fault tests: a TCP proxy on
127.0.0.1 that holds every chunk a client sends for DELAY seconds before
passing it on, so every request takes at least DELAY; replies pass at once.

Usage: slow_proxy.py LISTEN_PORT TARGET_PORT DELAY
"""
import asyncio
import sys


async def pump_delayed(reader, writer, delay):
    """Client to server: each chunk waits `delay`, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def feed():
        while True:
            data = await reader.read(65536)
            await queue.put((loop.time() + delay, data))
            if not data:
                return

    async def drain():
        while True:
            due, data = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not data:
                writer.write_eof()
                return
            writer.write(data)
            await writer.drain()

    await asyncio.gather(feed(), drain())


async def pump(reader, writer):
    while True:
        data = await reader.read(65536)
        if not data:
            writer.close()
            return
        writer.write(data)
        await writer.drain()


async def handle(client_r, client_w, target, delay):
    try:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
    except OSError:
        client_w.close()
        return
    try:
        await asyncio.gather(pump_delayed(client_r, server_w, delay), pump(server_r, client_w))
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        client_w.close()
        server_w.close()


async def main():
    listen, target, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    server = await asyncio.start_server(lambda r, w: handle(r, w, target, delay),
                                        "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
