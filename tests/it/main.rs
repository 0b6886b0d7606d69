//! The integration tests, in one test binary (`cargo test --test it`; one module per former
//! `tests/*.rs` file): the crate is linked once, not once per file. Tests are named by module,
//! e.g. `robustness::empty_input_exits_0`.

mod alloc;
mod analysis;
mod common;
mod custom;
mod digest_accuracy;
mod enrich_props;
mod fuzz_regressions;
mod golden;
mod inputs;
mod lab;
mod live;
mod parallel;
mod parser;
mod pitfalls;
mod readme;
mod realdata;
mod reports;
mod robustness;
mod roundtrip;
mod samples;
mod wrappers;
