//! The `tokentime` binary: parse arguments, resolve the configuration, run, map the outcome to
//! an exit code. Nothing else lives here.

use clap::Parser;
use std::io::Write as _;
use std::process::ExitCode as ProcessExit;
use tokentime::Cli;
use tokentime::ExitCode;

fn main() -> ProcessExit {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if e.use_stderr() {
                match tokentime::args_hint(&e) {
                    Some(hint) => tokentime::diag!("tokentime: {hint}"),
                    None => drop(e.print()),
                }
                return ProcessExit::from(ExitCode::Usage as u8);
            }
            // `--help`, `--version`: on stdout, whose failure (a full disk) is an error, but
            // for a closed pipe (`--help | head`), as for every command.
            let printed = e.print().and_then(|()| std::io::stdout().flush());
            if let Err(e) = printed
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                tokentime::diag!("tokentime: {}", tokentime::Error::Output(e));
                return ProcessExit::from(ExitCode::Usage as u8);
            }
            return ProcessExit::from(ExitCode::Ok as u8);
        }
    };
    let config = match cli.resolve() {
        Ok(c) => c,
        // A `ConfigError`, printed as tokentime always has.
        Err(err) => {
            tokentime::diag!("tokentime: {err}");
            return ProcessExit::from(ExitCode::Usage as u8);
        }
    };
    // `Stdout`, not its lock: the enrich output may be written by any of the threads reading a
    // file, each in its turn (the lock is taken per write of the 256 KiB buffer above it).
    let code = match tokentime::run(&config, std::io::stdout()) {
        Ok(code) => code,
        Err(e) => {
            tokentime::diag!("tokentime: {e}");
            ExitCode::Usage
        }
    };
    ProcessExit::from(code as u8)
}
