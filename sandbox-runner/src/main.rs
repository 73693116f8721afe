//! `proven-sandbox`: the sandbox commands as a process of their own (the same code as
//! `proven sandbox …`). The runner pool grows from here once it consumes its queue.

use std::process::ExitCode;

use clap::Parser;
use proven_sandbox::command::{SandboxCommand, execute};

#[derive(Parser)]
#[command(
    name = "proven-sandbox",
    version,
    about = "Runs tests in Docker containers with no network and no secrets."
)]
struct Cli {
    #[command(subcommand)]
    command: SandboxCommand,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
        .with_writer(std::io::stderr)
        .try_init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("proven-sandbox: start the async runtime: {e}");
            return ExitCode::from(6);
        }
    };
    let mut out = std::io::stdout();
    match runtime.block_on(execute(cli.command, &mut out)) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("proven-sandbox: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
