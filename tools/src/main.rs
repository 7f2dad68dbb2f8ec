//! `supple`: the command-line tool (devices, benchmarks, mesh tools, runs, viewer, sweeps);
//! the commands live in the `supple_tools` library.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(supple_tools::cli_main(std::env::args_os()))
}
