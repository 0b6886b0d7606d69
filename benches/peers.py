"""The summary job of benches/throughput.sh done by DuckDB and Polars, for the peer rows.

    peers.py ENGINE THREADS FILE

ENGINE is one of duckdb-typed, duckdb-auto, polars. The job is the one a user would write for
a LiteLLM log: p50, p90 and p99 of TTFT (completionStartTime - startTime, in ms) per
`cache_hit` value. The result goes to stdout; the seconds spent inside the engine (from the
query's start to its result, import and interpreter start-up excluded) go to stderr as
`inside SECONDS`, so the script can show both that and the whole process's time.

Polars' scan_ndjson stops at the first line that is not JSON, even with ignore_errors; on such
a file (a generated gateway log holds access-log lines) the query reads the file as text lines
instead and decodes the lines that open an object (the failed first attempt is in its time).
"""

import os
import sys
import time

engine, threads, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]

if engine.startswith("duckdb"):
    import duckdb

    con = duckdb.connect(config={"threads": threads})
    if engine == "duckdb-typed":
        source = (
            f"read_json('{path}', format = 'newline_delimited', ignore_errors = true, "
            "columns = {startTime: 'DOUBLE', completionStartTime: 'DOUBLE', cache_hit: 'BOOLEAN'})"
        )
    elif engine == "duckdb-auto":
        source = f"read_json_auto('{path}', format = 'newline_delimited', ignore_errors = true)"
    else:
        sys.exit(f"unknown engine {engine}")
    query = f"""
        SELECT cache_hit,
               count(*) AS n,
               quantile_cont((completionStartTime - startTime) * 1000, [0.5, 0.9, 0.99]) AS ttft_ms
        FROM {source}
        WHERE completionStartTime IS NOT NULL AND startTime IS NOT NULL
        GROUP BY cache_hit ORDER BY cache_hit"""
    t0 = time.perf_counter()
    rows = con.execute(query).fetchall()
    inside = time.perf_counter() - t0
elif engine == "polars":
    os.environ["POLARS_MAX_THREADS"] = str(threads)
    import polars as pl

    schema = {"startTime": pl.Float64, "completionStartTime": pl.Float64, "cache_hit": pl.Boolean}
    t0 = time.perf_counter()
    ttft = (pl.col("completionStartTime") - pl.col("startTime")) * 1000

    def query(frame):
        return (
            frame.drop_nulls(["startTime", "completionStartTime"])
            .group_by("cache_hit")
            .agg(
                pl.len().alias("n"),
                ttft.quantile(0.5, "linear").alias("p50"),
                ttft.quantile(0.9, "linear").alias("p90"),
                ttft.quantile(0.99, "linear").alias("p99"),
            )
            .sort("cache_hit")
            .collect()
            .rows()
        )

    try:
        rows = query(pl.scan_ndjson(path, schema=schema, ignore_errors=True))
    except pl.exceptions.ComputeError:
        # scan_ndjson stops at a line that is not JSON (a server's access-log line in the
        # gateway's output) even with ignore_errors: read the lines as text, keep those that
        # open an object, and decode them with the same schema.
        lines = pl.scan_csv(
            path, has_header=False, separator="\x1f", quote_char=None, schema={"line": pl.String}
        )
        decoded = lines.filter(pl.col("line").str.starts_with("{")).select(
            pl.col("line").str.json_decode(pl.Struct(schema)).alias("r")
        )
        rows = query(decoded.unnest("r"))
        print("polars: scan_ndjson refused a non-JSON line; read as text lines", file=sys.stderr)
    inside = time.perf_counter() - t0
else:
    sys.exit(f"unknown engine {engine}")

for row in rows:
    print(*row)
print(f"inside {inside:.3f}", file=sys.stderr)
