#!/usr/bin/env python3
"""The peer of plumb's serving client in bench/serve_client: a Python asyncio client using aiohttp
the way vLLM's `vllm bench serve` does (vllm/benchmarks/serve.py and
vllm/benchmarks/lib/endpoint_request_func.py, read in 2026; mirrored, not copied):

* one shared aiohttp.ClientSession over a TCPConnector(limit=max_concurrency or 0,
  limit_per_host=max_concurrency or 0, ttl_dns_cache=300, use_dns_cache=True,
  keepalive_timeout=60, enable_cleanup_closed=True, force_close=False), total timeout 6 h;
* arrivals from precomputed cumulative delays: the generator sleeps until start + delay[i] with
  asyncio.sleep, then creates the request's task (an asyncio.Semaphore caps concurrency);
* the request: POST /v1/completions with stream and stream_options.include_usage; st =
  time.perf_counter() just before session.post; the body read with response.content.iter_any()
  and split into SSE messages on blank lines; a message with choices is a token (its time
  time.perf_counter()), the usage message gives completion_tokens.

What it adds, for the comparison: each request's *scheduled* time (start + delay, on the same
perf_counter clock), so that its dispatch delay (sent - scheduled) is measured as plumb measures
its own (vLLM's own report starts latency at st, the issue's point). perf_counter is
CLOCK_MONOTONIC on Linux, the clock of the reference server's truth.

Usage: serve_aiohttp.py --url URL --schedule FILE [--max-concurrency N] [--output-len N]
                        --out FILE
  FILE: one arrival offset in seconds a line; request i's prompt is "req-<i> ...".
  Writes a JSON object {"start": s, "requests": [{"i", "scheduled", "sent", "tokens": [t...],
  "end", "ok", "error"}]} with absolute perf_counter seconds.
"""

import argparse
import asyncio
import contextlib
import json
import sys
import time

import aiohttp


class SseSplitter:
    """Accumulates bytes and returns complete SSE messages (blank-line separated)."""

    def __init__(self):
        self.buffer = ""

    def add(self, chunk: bytes):
        self.buffer += chunk.decode("utf-8", errors="replace")
        messages = []
        while "\n\n" in self.buffer:
            message, self.buffer = self.buffer.split("\n\n", 1)
            message = message.strip()
            if message:
                messages.append(message)
        return messages


async def one_request(session, url, model, index, output_len, record):
    payload = {
        "model": model,
        "prompt": f"req-{index} hello",
        "repetition_penalty": 1.0,
        "max_tokens": output_len,
        "logprobs": None,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    st = time.perf_counter()
    record["sent"] = st
    try:
        async with session.post(url=url, json=payload, headers={}) as response:
            if response.status != 200:
                record["error"] = f"HTTP {response.status}"
                return
            splitter = SseSplitter()
            async for chunk in response.content.iter_any():
                chunk = chunk.strip()
                if not chunk:
                    continue
                # iter_any may end a read right after "\n\n": strip() removed it, so put one back
                for message in splitter.add(chunk + b"\n\n"):
                    if message.startswith(":"):
                        continue
                    data = message.removeprefix("data: ")
                    if data == "[DONE]":
                        continue
                    parsed = json.loads(data)
                    if parsed.get("choices"):
                        record["tokens"].append(time.perf_counter())
            record["ok"] = bool(record["tokens"])
            record["end"] = record["tokens"][-1] if record["tokens"] else time.perf_counter()
    except Exception as e:  # as vLLM: any failure is the request's, never the run's
        record["error"] = repr(e)


async def run(args):
    with open(args.schedule) as f:
        delays = [float(line) for line in f if line.strip()]
    connector = aiohttp.TCPConnector(
        limit=args.max_concurrency or 0,
        limit_per_host=args.max_concurrency or 0,
        ttl_dns_cache=300,
        use_dns_cache=True,
        keepalive_timeout=60,
        enable_cleanup_closed=True,
        force_close=False,
    )
    session = aiohttp.ClientSession(
        connector=connector, trust_env=True, timeout=aiohttp.ClientTimeout(total=6 * 60 * 60)
    )
    semaphore = (
        asyncio.Semaphore(args.max_concurrency) if args.max_concurrency else contextlib.nullcontext()
    )
    records = []
    tasks = []

    async def limited(index, record):
        async with semaphore:
            await one_request(session, args.url, args.model, index, args.output_len, record)

    # As vLLM's bench: one request first ("Starting initial single prompt test run..."), so that
    # the schedule does not pay for the first connection and the interpreter's warm-up.
    await one_request(session, args.url, args.model, -1, 1,
                      {"tokens": [], "sent": None, "end": None, "ok": False, "error": ""})
    start_ts = time.time()
    start_pc = time.perf_counter()
    for i, delay in enumerate(delays):
        if delay > 0:
            sleep_s = start_ts + delay - time.time()
            if sleep_s > 0:
                await asyncio.sleep(sleep_s)
        record = {"i": i, "scheduled": start_pc + delay, "sent": None, "tokens": [], "end": None,
                  "ok": False, "error": ""}
        records.append(record)
        tasks.append(asyncio.create_task(limited(i, record)))
    await asyncio.gather(*tasks)
    await session.close()
    return {"start": start_pc, "requests": records}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--schedule", required=True)
    parser.add_argument("--model", default="mock")
    parser.add_argument("--max-concurrency", type=int, default=0)
    parser.add_argument("--output-len", type=int, default=4)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
