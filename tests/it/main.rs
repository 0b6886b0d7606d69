//! The integration tests, in one test binary (`cargo test --test it`; one module per former
//! `tests/*.rs` file): the crate is linked once, not once per file. Tests are named by module,
//! e.g. `robustness::random_bytes_exit_0_and_pass_through`. `cases` runs the end-to-end
//! scenarios written as data, `testdata/cases/*.toml`.

mod alloc;
mod analysis;
mod buckets;
mod cases;
mod common;
mod custom;
mod diff;
mod differential;
mod digest_accuracy;
mod digest_stream;
mod digest_windows;
mod documents;
mod enrich_props;
mod enrich_then_summary;
mod fuzz_regressions;
mod golden;
mod inferred;
mod inputs;
mod lab;
mod live;
mod messages;
mod mistakes;
mod nothing_lost;
mod parallel;
mod parser;
mod partial_runs;
mod pitfalls;
mod prometheus;
mod range;
mod readme;
mod realdata;
mod realdata_loadtest;
mod realdata_nvidia;
mod reasons;
mod report;
mod reports;
mod robustness;
mod roundtrip;
mod rules;
mod samples;
mod screen;
mod unknown_values;
mod wrappers;
