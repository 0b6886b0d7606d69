#!/usr/bin/env python3
"""Generates the LiteLLM logs benches/rss.sh measures peak RSS on.

  rsslog.py week                 one request a minute for a week (10,080 lines)
  rsslog.py bigkeys [N] [SIZE]   N lines (default 100) whose model names are SIZE bytes
                                 (default 1 MB), each name different
  rsslog.py minutes BYTES        one request a minute from 2026-01-01 until BYTES of output
                                 (lines padded to ~2 KB), to show memory against log size
"""
import sys

T0 = 1767225600  # 2026-01-01T00:00:00Z


def line(i, t, model, pad=""):
    return (
        '{"id": "req-%d", "call_type": "acompletion", "stream": true, "status": "success", '
        '"startTime": %.6f, "endTime": %.6f, "completionStartTime": %.6f, "model": "%s", '
        '"metadata": {"usage_object": {"completion_tokens": %d, "prompt_tokens": %d, '
        '"total_tokens": %d}}, "completion_tokens": %d, "prompt_tokens": %d, '
        '"total_tokens": %d, "pad": "%s"}\n'
        % (i, t, t + 2.5 + (i % 7) * 0.1, t + 0.3 + (i % 5) * 0.05, model,
           50 + i % 100, 200 + i % 300, 250 + i % 400, 50 + i % 100, 200 + i % 300,
           250 + i % 400, pad)
    )


def main():
    out = sys.stdout
    kind = sys.argv[1] if len(sys.argv) > 1 else "week"
    if kind == "week":
        for i in range(7 * 24 * 60):
            out.write(line(i, T0 + 60 * i + 1, "gpt-4o-mini"))
    elif kind == "bigkeys":
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
        size = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20
        for i in range(n):
            model = ("m%d-" % i) + "x" * (size - 8)
            out.write(line(i, T0 + 60 * i + 1, model))
    elif kind == "minutes":
        total = int(sys.argv[2])
        pad = "p" * 1800
        written, i = 0, 0
        while written < total:
            s = line(i, T0 + 60 * i + 1, "gpt-4o-mini", pad)
            out.write(s)
            written += len(s)
            i += 1
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
