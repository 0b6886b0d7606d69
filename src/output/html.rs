//! `tokentime report`: one self-contained HTML page rendered from the documents other commands
//! print: the summary's JSON (`summary --hist -o json`), its `--bucket` windows (`summary
//! --bucket W -o json`) and, with a baseline, the comparison (`diff A B -o json`). The
//! documents are embedded in the page as they are (`<script type="application/json">`), and
//! every number shown is one of theirs, in a cell that names it by JSON pointer (`data-src`,
//! `data-k`) and shows it as the JSON writes it. No network: no URL, no external script, the
//! charts inline SVG ([`crate::output::charts`]).

use crate::output::charts::{self, Bars, Bins, Line};
use crate::summary::key_text;
use serde_json::Value as Json;
use std::fmt::Write as _;

/// What the page shows.
pub(crate) struct Page<'a> {
    /// The inputs' names.
    pub inputs: &'a [String],
    /// The summary's JSON document, as `summary -o json` wrote it.
    pub summary_text: &'a str,
    /// The same, parsed.
    pub summary: &'a Json,
    /// The `--bucket` windows, one JSON line each, as `summary --bucket -o json` wrote them.
    pub windows_text: &'a str,
    /// The same, parsed.
    pub windows: &'a [Json],
    /// The width of the windows, as given (`1m`).
    pub bucket: &'a str,
    /// The comparison with the baseline, as `diff -o json` wrote it, and parsed.
    pub diff: Option<(&'a str, &'a Json)>,
}

/// HTML text: `&`, `<`, `>` and `"` escaped.
pub(crate) fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

/// JSON text embedded in a `<script>` element: `<`, `>` and `&` written as `\u003c`, `\u003e`,
/// `\u0026` (they occur only inside strings, where JSON reads them back the same), so no
/// `</script>` can end it.
fn embed(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A JSON pointer's token: `~` and `/` escaped (RFC 6901).
fn token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// A number of document `src` at `ptr`, shown as the JSON writes it (`-` for null), in a
/// `tag` element that names it.
fn num(tag: &str, src: &str, ptr: &str, doc: &Json) -> String {
    let v = doc.pointer(ptr).unwrap_or(&Json::Null);
    let text = match v {
        Json::Null => "-".to_owned(),
        v => escape(&v.to_string()),
    };
    format!(
        "<{tag} class=\"n\" data-src=\"{src}\" data-k=\"{}\">{text}</{tag}>",
        escape(ptr)
    )
}

/// A group's label from its JSON key: `cache=hit model=a`, or `all requests`.
fn label(key: &Json) -> String {
    match key.as_object() {
        Some(m) if !m.is_empty() => key_text(m.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        _ => "all requests".to_owned(),
    }
}

/// What TTFT was measured from, by the origins of a group's values (its `origins` counts):
/// the server's arrival, a gateway's or client's call start, or the server's schedule (the
/// queue left out), or a mix of them, counted.
fn ttft_from(origins: &Json) -> String {
    let seen: Vec<(&str, u64)> = origins
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_u64().filter(|&n| n > 0)?)))
        .collect();
    let words = |origin: &str| match origin {
        "gateway" => {
            "the call's start at the gateway or client, network and the server's queue included"
        }
        "scheduled" => "scheduled, the server's prefill: its queue time left out",
        _ => "arrival",
    };
    match seen.as_slice() {
        [] => format!("first token − {}", words("arrival")),
        [(o, _)] => format!("first token − {}", words(o)),
        _ => {
            let short = |o: &str| match o {
                "gateway" => "a gateway's or client's call start",
                "scheduled" => "scheduled",
                _ => "arrival",
            };
            let from: Vec<&str> = seen.iter().map(|(o, _)| short(o)).collect();
            let counts: Vec<String> = seen.iter().map(|(o, n)| format!("{o} {n}")).collect();
            format!(
                "first token − {}: mixed origins ({}), compare like with like",
                from.join(" or "),
                counts.join(", ")
            )
        }
    }
}

/// The TTFT origins of a group's metric `mv`, or those of the group of all requests `all`
/// when it has none (a group of non-streamed calls: its TTFT would be measured as theirs).
fn origins_of<'a>(mv: &'a Json, all: &'a Json) -> &'a Json {
    match mv["origins"].as_object() {
        Some(o) if !o.is_empty() => &mv["origins"],
        _ => &all["metrics"]["ttft_ms"]["origins"],
    }
}

/// What each metric is, in the words of the spec (milliseconds for durations); TTFT as its
/// values' `origins` say ([`ttft_from`]).
fn definition(metric: &str, origins: &Json) -> std::borrow::Cow<'static, str> {
    if metric == "ttft_ms" {
        return format!("time to first token: {}", ttft_from(origins)).into();
    }
    match metric {
        "tpot_ms" => "time per output token: decode ÷ (output tokens − 1)",
        "itl_ms" => {
            "inter-token latency: every gap between consecutive streamed chunks (token times where \
             a chunk is a token)"
        }
        "e2e_ms" => "end-to-end latency: end − arrival",
        "queue_ms" => "queue time: scheduled − arrival",
        "prefill_ms" => "prefill: first token − scheduled",
        "decode_ms" => "decode: end − first token",
        "ttfot_ms" => {
            "time to first output token: the first answer token after a reasoning model's reasoning"
        }
        "input_tokens" => "prompt tokens per request, cached ones included",
        "cached_tokens" => "prompt tokens served from the prefix cache",
        "output_tokens" => "generated tokens per request",
        _ => "",
    }
    .into()
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;color:#222;max-width:1240px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:0 0 4px}
.inputs{color:#555;margin:0 0 8px}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:16px}
figure{margin:0;border:1px solid #e3e3e3;border-radius:6px;padding:10px;background:#fff}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:12.5px;color:#444;margin-top:6px}
.none{color:#777;font-style:italic;padding:40px 0;text-align:center}
table{border-collapse:collapse;font-size:13px;margin:6px 0 14px}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{background:#f6f6f6;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.def{color:#555;font-size:12px}
.met{color:#1a7f37;font-weight:600}.broken{color:#c62828;font-weight:600}.unjudged{color:#8a6d00;font-weight:600}
.worse{color:#c62828}.better{color:#1a7f37}
footer{color:#666;font-size:12px;margin-top:24px}
";

/// The whole page.
pub(crate) fn page(p: &Page) -> String {
    let mut h = String::with_capacity(256 * 1024);
    let inputs = p.inputs.join(", ");
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width\">\n\
         <title>tokentime report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&inputs)
    );
    let s = p.summary;
    // The requests and errors of the group of all requests, as the tables count them: those
    // set aside as duplicates are not in it (said after the lines read).
    let all = s
        .pointer("/groups")
        .and_then(Json::as_array)
        .and_then(|g| {
            g.iter()
                .position(|g| g["key"].as_object().is_some_and(|k| k.is_empty()))
        })
        .map_or("/coverage".to_owned(), |i| format!("/groups/{i}"));
    let duplicates = match s.pointer("/coverage/duplicates").and_then(Json::as_u64) {
        Some(n) if n > 0 => format!(
            ", duplicates set aside {}",
            num("span", "summary", "/coverage/duplicates", s)
        ),
        _ => String::new(),
    };
    let _ = write!(
        h,
        "<header>\n<h1>tokentime report</h1>\n<p class=\"inputs\">{}</p>\n\
         <p>requests {}, errors {}, lines read {}{duplicates}</p>\n</header>\n",
        escape(&inputs),
        num("span", "summary", &format!("{all}/requests"), s),
        num("span", "summary", &format!("{all}/errors"), s),
        num("span", "summary", "/coverage/lines", s),
    );
    charts_section(&mut h, p);
    slo_section(&mut h, s);
    if let Some((_, d)) = p.diff {
        diff_section(&mut h, d);
    }
    percentiles_section(&mut h, s);
    coverage_section(&mut h, s);
    let _ = writeln!(
        h,
        "<footer>Durations in milliseconds. Every number on this page is one of the documents \
         below, shown as they write it: the summary (<code>tokentime summary --hist -o json</code>), \
         its windows (<code>--bucket {}</code>){}.</footer>",
        escape(p.bucket),
        if p.diff.is_some() {
            " and the comparison with the baseline (<code>tokentime diff -o json</code>)"
        } else {
            ""
        }
    );
    let _ = write!(
        h,
        "<script type=\"application/json\" id=\"tokentime-summary\">\n{}</script>\n\
         <script type=\"application/x-ndjson\" id=\"tokentime-windows\">\n{}</script>\n",
        embed(p.summary_text),
        embed(p.windows_text)
    );
    if let Some((text, _)) = p.diff {
        let _ = write!(
            h,
            "<script type=\"application/json\" id=\"tokentime-diff\">\n{}</script>\n",
            embed(text)
        );
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// A figure: the chart, or why there is none, and its caption.
fn figure(h: &mut String, title: &str, chart: Option<String>, none: &str, caption: &str) {
    let _ = write!(h, "<figure>\n<h3>{}</h3>\n", escape(title));
    match chart {
        Some(svg) => h.push_str(&svg),
        None => {
            let _ = write!(h, "<div class=\"none\">{}</div>", escape(none));
        }
    }
    let _ = write!(h, "\n<figcaption>{caption}</figcaption>\n</figure>\n");
}

/// The groups of the summary with their index.
fn groups(s: &Json) -> impl Iterator<Item = (usize, &Json)> {
    s["groups"].as_array().into_iter().flatten().enumerate()
}

/// A metric's histogram bins in a group, when it has any.
fn bins(g: &Json, metric: &str) -> Vec<(f64, f64, f64)> {
    g["metrics"][metric]["histogram"]["bins"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| Some((b["lo"].as_f64()?, b["hi"].as_f64()?, b["count"].as_f64()?)))
        .collect()
}

/// Why a metric of a group has no values: `not_streamed 27, error 9`.
fn nulls_text(g: &Json, metric: &str) -> String {
    g["metrics"][metric]["nulls"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn charts_section(h: &mut String, p: &Page) {
    let s = p.summary;
    h.push_str("<h2 id=\"charts\">Charts</h2>\n<div class=\"grid\">\n");
    // TTFT by cache class: the groups keyed by the cache alone, each request once whatever the
    // --by keys (a series per cache class and model would be five times as many bars of the
    // same colours); where there are none, those keyed by the cache and every --by key.
    let keys = |g: &Json| g["key"].as_object().map_or(0, serde_json::Map::len);
    let cached = || groups(s).filter(|(_, g)| g["key"].get("cache").is_some());
    let level = if cached().any(|(_, g)| keys(g) == 1) {
        1
    } else {
        cached().map(|(_, g)| keys(g)).max().unwrap_or(0)
    };
    let by_cache: Vec<(String, &Json)> = cached()
        .filter(|(_, g)| keys(g) == level)
        .map(|(_, g)| (label(&g["key"]), g))
        .collect();
    let series: Vec<Bins> = by_cache
        .iter()
        .map(|(l, g)| Bins {
            label: l.clone(),
            bins: bins(g, "ttft_ms"),
        })
        .filter(|b| !b.bins.is_empty())
        .collect();
    let missing: Vec<String> = by_cache
        .iter()
        .filter(|(_, g)| bins(g, "ttft_ms").is_empty())
        .map(|(l, g)| format!("{l} has no TTFT ({})", nulls_text(g, "ttft_ms")))
        .collect();
    figure(
        h,
        "TTFT by cache class",
        charts::histogram(
            "chart-ttft-hist",
            "TTFT histogram by cache class",
            "TTFT (ms, log scale)",
            &series,
            true,
        ),
        "no TTFT values",
        &format!(
            "Requests per bin of time to first token ({}), stacked by prefix-cache class (hit \
             when at least the --cache-hit-ratio share of the prompt was cached). {}",
            escape(&ttft_from(&all_group(s)["metrics"]["ttft_ms"]["origins"])),
            escape(&missing.join("; "))
        ),
    );
    tpot_in_flight(h, s);
    queue_prefill(h, s);
    over_time(h, p, "ttft_ms", "chart-ttft-time", "TTFT");
    over_time(h, p, "tpot_ms", "chart-tpot-time", "TPOT");
    h.push_str("</div>\n");
}

/// The group of all requests (empty key), or the first.
fn all_group(s: &Json) -> &Json {
    groups(s)
        .find(|(_, g)| g["key"].as_object().is_some_and(serde_json::Map::is_empty))
        .or_else(|| groups(s).next())
        .map_or(&Json::Null, |(_, g)| g)
}

/// The quantiles to draw: p50 and p99 when reported, else the first and the last.
fn two_quantiles(q: &serde_json::Map<String, Json>) -> Vec<String> {
    let names: Vec<&String> = q.keys().collect();
    let pick: Vec<String> = ["p50", "p99"]
        .iter()
        .filter(|n| q.contains_key(**n))
        .map(|n| (*n).to_owned())
        .collect();
    if pick.len() == 2 || names.len() < 2 {
        return pick;
    }
    vec![names[0].clone(), names[names.len() - 1].clone()]
}

fn tpot_in_flight(h: &mut String, s: &Json) {
    let t = &all_group(s)["analysis"]["tpot_by_in_flight"];
    let rule = t["rule"]
        .as_str()
        .filter(|r| !r.is_empty())
        .map(|r| format!(" ({})", escape(r)))
        .unwrap_or_default();
    // A log out of time order: the counts are not to be read, and the chart says so first.
    let warning = all_group(s)["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["kind"] == "tpot_under_load" && f["reliable"] == Json::Bool(false))
        .and_then(|f| f["text"].as_str())
        .map(|text| format!("<strong>{}.</strong> ", escape(text)))
        .unwrap_or_default();
    let buckets: Vec<&Json> = t["buckets"].as_array().into_iter().flatten().collect();
    let cats: Vec<String> = buckets
        .iter()
        .map(|b| b["in_flight"].as_str().unwrap_or("?").to_owned())
        .collect();
    let qs = buckets
        .first()
        .and_then(|b| b["quantiles"].as_object())
        .map(|q| {
            let mut v: Vec<String> = q.keys().cloned().collect();
            v.retain(|k| ["p50", "p90", "p99"].contains(&k.as_str()));
            if v.is_empty() {
                v = two_quantiles(q);
            }
            v
        })
        .unwrap_or_default();
    let series: Vec<Bars> = qs
        .iter()
        .map(|q| Bars {
            label: q.clone(),
            values: buckets
                .iter()
                .map(|b| charts::number(&b["quantiles"][q]))
                .collect(),
        })
        .collect();
    figure(
        h,
        "TPOT by requests in flight",
        charts::bars(
            "chart-tpot-inflight",
            "TPOT by requests in flight",
            "requests in flight",
            "TPOT (ms)",
            &cats,
            &series,
        ),
        "no TPOT with a decode placed in time",
        &format!(
            "{warning}Time per output token (decode ÷ (output tokens − 1)) of all requests by \
             the requests in flight during its decode{rule}."
        ),
    );
}

fn queue_prefill(h: &mut String, s: &Json) {
    let g = all_group(s);
    let series: Vec<Bins> = ["queue_ms", "prefill_ms"]
        .iter()
        .map(|m| Bins {
            label: (*m).to_owned(),
            bins: bins(g, m),
        })
        .filter(|b| !b.bins.is_empty())
        .collect();
    let missing: Vec<String> = ["queue_ms", "prefill_ms"]
        .iter()
        .filter(|m| bins(g, m).is_empty())
        .map(|m| match nulls_text(g, m) {
            n if n.is_empty() => format!("{m} has no values"),
            n => format!("{m} has no values ({n})"),
        })
        .collect();
    figure(
        h,
        "Queue and prefill",
        charts::histogram(
            "chart-queue-prefill",
            "Queue and prefill histograms",
            "ms (log scale)",
            &series,
            false,
        ),
        "neither queue nor prefill is logged",
        &format!(
            "Requests per bin of queue time (scheduled − arrival) and prefill (first token − scheduled), \
             where the log has the scheduling time. {}",
            escape(&missing.join("; "))
        ),
    );
}

/// p50 and p99 of `metric` for all requests, per `--bucket` window.
fn over_time(h: &mut String, p: &Page, metric: &str, id: &str, name: &str) {
    let all: Vec<&Json> = p
        .windows
        .iter()
        .filter(|w| w["key"].as_object().is_some_and(serde_json::Map::is_empty))
        .collect();
    let qs = all
        .first()
        .and_then(|w| w["metrics"][metric]["quantiles"].as_object())
        .map(two_quantiles)
        .unwrap_or_default();
    let width = all
        .first()
        .and_then(|w| w["width_s"].as_f64())
        .unwrap_or(60.0);
    let series: Vec<Line> = qs
        .iter()
        .map(|q| {
            let mut points = vec![];
            let mut last: Option<f64> = None;
            for w in &all {
                let x = w["start_ns"].as_f64().unwrap_or(0.0) / 1e9;
                // A window without requests breaks the line.
                if last.is_some_and(|l| x - l > width * 1.5) {
                    points.push((x, None));
                }
                last = Some(x);
                points.push((x, charts::number(&w["metrics"][metric]["quantiles"][q])));
            }
            Line {
                label: q.clone(),
                points,
            }
        })
        .collect();
    figure(
        h,
        &format!("{name} p50 and p99 over log time"),
        charts::lines(
            id,
            &format!("{name} over log time"),
            &format!("{name} (ms, log scale)"),
            &series,
            width,
        ),
        &if all.is_empty() {
            "no window: no request has a time it ended at to place it in one (a benchmark's \
             result file of durations)"
                .to_owned()
        } else {
            format!("no {name} values in any window")
        },
        &format!(
            "{} of all requests per window of {} of log time (by request end), as <code>summary --bucket {}</code> \
             writes them.",
            if qs.is_empty() {
                "p50 and p99".to_owned()
            } else {
                qs.join(" and ")
            },
            escape(p.bucket),
            escape(p.bucket)
        ),
    );
}

fn slo_section(h: &mut String, s: &Json) {
    let slos = s["slos"].as_array().filter(|a| !a.is_empty());
    let goodput: Vec<(usize, &Json)> = groups(s)
        .filter(|(_, g)| g.get("goodput").is_some())
        .collect();
    if slos.is_none() && goodput.is_empty() {
        return;
    }
    h.push_str("<h2 id=\"slo\">SLOs and goodput</h2>\n");
    if let Some(slos) = slos {
        h.push_str(
            "<table id=\"slos\">\n<tr><th>SLO</th><th>group</th><th class=\"n\">value (ms)</th>\
             <th class=\"n\">bound (ms)</th><th class=\"n\">values</th><th>verdict</th></tr>\n",
        );
        for (i, v) in slos.iter().enumerate() {
            let at = |k: &str| format!("/slos/{i}/{k}");
            let (class, verdict) = match v["met"].as_bool() {
                Some(true) => ("met", "met"),
                Some(false) => ("broken", "BROKEN"),
                None => ("unjudged", "not judged"),
            };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td>{}{}{}<td class=\"{}\">{}</td></tr>",
                escape(v["slo"].as_str().unwrap_or("")),
                escape(&label(&v["group"])),
                num("td", "summary", &at("value"), s),
                num("td", "summary", &at("bound"), s),
                num("td", "summary", &at("count"), s),
                class,
                verdict,
            );
        }
        h.push_str("</table>\n");
    }
    if !goodput.is_empty() {
        let targets = goodput[0].1["goodput"]["targets"]
            .as_object()
            .map(|t| t.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        h.push_str("<table id=\"goodput\">\n<tr><th>group</th>");
        for t in &targets {
            let _ = write!(h, "<th class=\"n\">target {} (ms)</th>", escape(t));
        }
        h.push_str(
            "<th class=\"n\">met</th><th class=\"n\">missed</th><th class=\"n\">unknown</th>\
             <th class=\"n\">share met</th><th class=\"n\">requests/s</th>\
             <th class=\"n\">output tokens/s</th><th class=\"n\">span (s)</th></tr>\n",
        );
        for (i, g) in goodput {
            let _ = write!(h, "<tr><td>{}</td>", escape(&label(&g["key"])));
            for t in &targets {
                h.push_str(&num(
                    "td",
                    "summary",
                    &format!("/groups/{i}/goodput/targets/{}", token(t)),
                    s,
                ));
            }
            for k in [
                "met",
                "missed",
                "unknown",
                "share",
                "requests_per_s",
                "output_tokens_per_s",
                "span_s",
            ] {
                h.push_str(&num(
                    "td",
                    "summary",
                    &format!("/groups/{i}/goodput/{k}"),
                    s,
                ));
            }
            h.push_str("</tr>\n");
        }
        h.push_str(
            "</table>\n<p class=\"def\">Goodput: the requests that met every target (a failed \
             request is not good; one missing a metric a target needs is unknown, but a \
             one-token answer meets a TPOT target: it had no decode to be late), and the rates \
             of those requests and their output tokens over the log's time span.</p>\n",
        );
    }
}

fn diff_section(h: &mut String, d: &Json) {
    let side = |k: &str| {
        format!(
            "{}{} ({} requests)",
            escape(d[k]["input"].as_str().unwrap_or("")),
            if d[k]["digest_file"].as_bool() == Some(true) {
                ", digest file"
            } else {
                ""
            },
            num("span", "diff", &format!("/{k}/requests"), d)
        )
    };
    let _ = write!(
        h,
        "<h2 id=\"baseline\">Against the baseline</h2>\n<p>A (baseline): {}<br>B (this report): {}</p>\n\
         <table id=\"diff\">\n<tr><th>group</th><th>metric</th><th>q</th><th class=\"n\">A</th>\
         <th class=\"n\">B</th><th class=\"n\">change (ms)</th><th class=\"n\">change %</th><th>verdict</th></tr>\n",
        side("a"),
        side("b")
    );
    for (i, r) in d["rows"].as_array().into_iter().flatten().enumerate() {
        let verdict = r["verdict"].as_str().unwrap_or("");
        let class = if verdict.contains("worse") {
            "worse"
        } else if verdict.contains("better") {
            "better"
        } else {
            ""
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td>{}{}{}{}<td class=\"{class}\">{}</td></tr>",
            escape(&label(&r["group"])),
            escape(r["metric"].as_str().unwrap_or("")),
            escape(r["quantile"].as_str().unwrap_or("")),
            num("td", "diff", &format!("/rows/{i}/a/value"), d),
            num("td", "diff", &format!("/rows/{i}/b/value"), d),
            num("td", "diff", &format!("/rows/{i}/change_ms"), d),
            num("td", "diff", &format!("/rows/{i}/change_pct"), d),
            // As the text diff words it: overlapping intervals cannot tell a change, however
            // large, from noise (not "the same").
            escape(if verdict == "same" {
                "within noise"
            } else {
                verdict
            }),
        );
    }
    let _ = writeln!(
        h,
        "</table>\n<p class=\"def\">{}</p>",
        escape(d["method"]["text"].as_str().unwrap_or(""))
    );
}

fn percentiles_section(h: &mut String, s: &Json) {
    h.push_str("<h2 id=\"percentiles\">Percentiles</h2>\n");
    let all = all_group(s);
    for (i, g) in groups(s) {
        let metrics = crate::metrics::Metric::ALL.map(crate::metrics::Metric::json_name);
        let qs: Vec<String> = metrics
            .iter()
            .find_map(|m| g["metrics"][m]["quantiles"].as_object())
            .map(|q| q.keys().cloned().collect())
            .unwrap_or_default();
        let word = |k: &str, one: &'static str, many: &'static str| {
            if g[k].as_u64() == Some(1) { one } else { many }
        };
        let _ = write!(
            h,
            "<h3>{}: {} {}, {} {}</h3>\n<table class=\"percentiles\">\n<tr><th>metric</th>\
             <th class=\"n\">count</th><th class=\"n\">min</th>",
            escape(&label(&g["key"])),
            num("span", "summary", &format!("/groups/{i}/requests"), s),
            word("requests", "request", "requests"),
            num("span", "summary", &format!("/groups/{i}/errors"), s),
            word("errors", "error", "errors"),
        );
        for q in &qs {
            let _ = write!(h, "<th class=\"n\">{}</th>", escape(q));
        }
        h.push_str("<th class=\"n\">max</th><th class=\"n\">mean</th><th>nulls</th><th>definition</th></tr>\n");
        for m in metrics {
            let Some(mv) = g["metrics"].get(m) else {
                continue;
            };
            let at = |k: &str| format!("/groups/{i}/metrics/{m}/{k}");
            // As in the text report: `~` marks percentiles a t-digest estimates.
            let mark = if mv["exact"] == Json::Bool(false) {
                "<span title=\"t-digest estimates\">~</span>"
            } else {
                ""
            };
            let _ = write!(
                h,
                "<tr><td>{m}{mark}</td>{}{}",
                num("td", "summary", &at("count"), s),
                num("td", "summary", &at("min"), s)
            );
            for q in &qs {
                h.push_str(&num(
                    "td",
                    "summary",
                    &at(&format!("quantiles/{}", token(q))),
                    s,
                ));
            }
            let _ = write!(
                h,
                "{}{}<td>",
                num("td", "summary", &at("max"), s),
                num("td", "summary", &at("mean"), s)
            );
            let nulls: Vec<String> = mv["nulls"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, _)| {
                    format!(
                        "{} {}",
                        escape(k),
                        num("span", "summary", &at(&format!("nulls/{}", token(k))), s)
                    )
                })
                .collect();
            h.push_str(&nulls.join(", "));
            let _ = writeln!(
                h,
                "</td><td class=\"def\">{}</td></tr>",
                escape(&definition(m, origins_of(mv, all)))
            );
        }
        h.push_str("</table>\n");
        let estimated = metrics
            .iter()
            .any(|m| g["metrics"][m]["exact"] == Json::Bool(false));
        if estimated {
            h.push_str("<p class=\"note\">~ marks t-digest estimates</p>\n");
        }
    }
}

fn coverage_section(h: &mut String, s: &Json) {
    h.push_str(
        "<h2 id=\"coverage\">Coverage</h2>\n<table id=\"coverage-table\">\n\
         <tr><th>what</th><th class=\"n\">count</th></tr>\n",
    );
    fn rows(h: &mut String, s: &Json, v: &Json, path: &str, name: &str) {
        match v.as_object() {
            Some(m) => {
                for (k, x) in m {
                    let n = if name.is_empty() {
                        k.clone()
                    } else {
                        format!("{name}.{k}")
                    };
                    rows(h, s, x, &format!("{path}/{}", token(k)), &n);
                }
            }
            None => {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td>{}</tr>",
                    escape(name),
                    num("td", "summary", path, s)
                );
            }
        }
    }
    rows(h, s, &s["coverage"], "/coverage", "");
    h.push_str(
        "</table>\n<p class=\"def\">Lines read, requests recognised, and every line or request \
         not counted in the percentiles, by reason (docs/bad-input.md).</p>\n",
    );
}
