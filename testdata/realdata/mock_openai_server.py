"""A mock OpenAI-compatible streaming server for running load testers over loopback.

Serves GET /v1/models and POST /v1/completions, /v1/chat/completions (streamed as SSE
`data: {...}` lines ending with `data: [DONE]`, or one JSON body). No model: the text is
words drawn at random, the timings are the mock's own:
  - time to the first token: uniform 50-300 ms;
  - each further token: uniform 10-30 ms; a chunk holds 1 token, or 2-4 (15 % of chunks);
  - `max_tokens` (or `max_completion_tokens`) tokens are generated;
  - ERROR_RATE of the requests (default 3 %) are answered HTTP 503 with an OpenAI error body.
`stream_options.include_usage` adds a usage-only chunk (`choices: []`) before [DONE];
`stream_options.continuous_usage_stats` puts the running usage in every chunk (as vLLM does).
Prompt tokens are counted as whitespace-separated words. A chat stream opens with a role
chunk (empty content), as vLLM and SGLang do.

Usage: python mock_openai_server.py [PORT] [SEED]   (aiohttp)
"""

import asyncio
import json
import os
import random
import sys
import time
import uuid

from aiohttp import web

MODEL = "mock-model"
WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when "
    "if so no will can more other its into time only some could new these two may first "
    "then do any like my now over such our man me even most made after also did many"
).split()
ERROR_RATE = float(os.environ.get("ERROR_RATE", "0.03"))
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1234)


async def models(_request):
    return web.json_response(
        {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "mock"}]}
    )


def prompt_tokens(body):
    if "messages" in body:
        text = " ".join(
            m["content"] if isinstance(m.get("content"), str) else "" for m in body["messages"]
        )
    else:
        p = body.get("prompt", "")
        if isinstance(p, list):
            p = " ".join(x if isinstance(x, str) else " ".join(map(str, x)) for x in p)
        text = p
    return len(str(text).split())


def usage(n_prompt, n_out):
    return {"prompt_tokens": n_prompt, "completion_tokens": n_out, "total_tokens": n_prompt + n_out}


def chunk_obj(chat, rid, text, finish, role=False):
    if chat:
        delta = {"role": "assistant", "content": ""} if role else {"content": text}
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        obj = "chat.completion.chunk"
    else:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        obj = "text_completion"
    return {"id": rid, "object": obj, "created": int(time.time()), "model": MODEL, "choices": [choice]}


async def complete(request):
    chat = request.path.endswith("chat/completions")
    body = await request.json()
    n_out = int(body.get("max_completion_tokens") or body.get("max_tokens") or 16)
    n_prompt = prompt_tokens(body)
    ttft = rng.uniform(0.050, 0.300)
    fail = rng.random() < ERROR_RATE
    # the plan of chunks: sizes summing to n_out, each with its delay
    sizes, left = [], n_out
    while left > 0:
        k = rng.randint(2, 4) if rng.random() < 0.15 else 1
        k = min(k, left)
        sizes.append(k)
        left -= k
    gaps = [ttft] + [sum(rng.uniform(0.010, 0.030) for _ in range(k)) for k in sizes[1:]]
    if fail:
        await asyncio.sleep(rng.uniform(0.005, 0.050))
        return web.json_response(
            {"object": "error", "message": "mock: server overloaded", "type": "ServiceUnavailable", "code": 503},
            status=503,
        )
    rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:16]
    opts = body.get("stream_options") or {}
    continuous = bool(opts.get("continuous_usage_stats"))
    if not body.get("stream"):
        await asyncio.sleep(sum(gaps))
        text = "".join(" " + rng.choice(WORDS) for _ in range(n_out))
        choice = (
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
            if chat
            else {"index": 0, "text": text, "finish_reason": "length"}
        )
        return web.json_response(
            {
                "id": rid,
                "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()),
                "model": MODEL,
                "choices": [choice],
                "usage": usage(n_prompt, n_out),
            }
        )
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await resp.prepare(request)

    async def send(obj):
        await resp.write(b"data: " + json.dumps(obj).encode() + b"\n\n")

    if chat:
        c = chunk_obj(True, rid, "", None, role=True)
        if continuous:
            c["usage"] = usage(n_prompt, 0)
        await send(c)
    done = 0
    for i, (k, gap) in enumerate(zip(sizes, gaps)):
        await asyncio.sleep(gap)
        done += k
        text = "".join(" " + rng.choice(WORDS) for _ in range(k))
        c = chunk_obj(chat, rid, text, "length" if i == len(sizes) - 1 else None)
        if continuous:
            c["usage"] = usage(n_prompt, done)
        await send(c)
    if opts.get("include_usage"):
        await send({"id": rid, "object": "chat.completion.chunk" if chat else "text_completion",
                    "created": int(time.time()), "model": MODEL, "choices": [], "usage": usage(n_prompt, n_out)})
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/completions", complete)
    app.router.add_post("/v1/chat/completions", complete)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None)


if __name__ == "__main__":
    main()
