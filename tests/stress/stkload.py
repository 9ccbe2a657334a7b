#!/usr/bin/env python3
"""HTTP load from many loopback source addresses, for the stick-table flood
test (test_stick_flood.sh).

  stkload.py close <port> <sources> <conns_per_source> <concurrency> <timeout_s>
      every connection sends one request with "Connection: close"; the
      connections of a source follow each other, <concurrency> sources at
      a time (two requests of one source at once could both read the
      count after both increments: the rate-limit rules count a request,
      then read the count, as HAProxy does)
  stkload.py keepalive <port> <sources> <reqs_per_source> <concurrency> <timeout_s>
      one connection per source carries all its requests

Source i (0-based) is 127.0.(1 + i // 250).(1 + i % 250): every client
socket is bound to its source before connecting. Prints one line
"status <code> <count>" per status seen, then "errors <n>" (connections
that failed or got no complete response), and exits 1 if the whole run did
not finish within <timeout_s>.
"""
import asyncio
import collections
import sys


def source(i):
    return "127.0.%d.%d" % (1 + i // 250, 1 + i % 250)


async def one_response(reader):
    """Reads one response (Content-Length framed, or to the close); returns
    its status code."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is not None:
        await reader.readexactly(length)
    return status


async def client(port, src, nreq, keepalive, counts, sem):
    async with sem:
        try:
            if keepalive:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", port, local_addr=(src, 0))
                for _ in range(nreq):
                    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    counts[await one_response(reader)] += 1
                writer.close()
            else:
                for _ in range(nreq):
                    reader, writer = await asyncio.open_connection(
                        "127.0.0.1", port, local_addr=(src, 0))
                    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    counts[await one_response(reader)] += 1
                    writer.close()
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            counts["errors"] += 1


async def main():
    mode, port, sources, n, conc, timeout = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    counts = collections.Counter()
    sem = asyncio.Semaphore(conc)
    tasks = [client(port, source(i), n, mode == "keepalive", counts, sem)
             for i in range(sources)]
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), timeout)
    except asyncio.TimeoutError:
        print("timeout after %.0f s" % timeout)
        return 1
    for code in sorted(k for k in counts if k != "errors"):
        print("status %d %d" % (code, counts[code]))
    print("errors %d" % counts["errors"])
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
