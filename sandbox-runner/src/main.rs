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
    proven_sandbox::Forwarder::register(&["forward"]);
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
    // The same settings as `proven sandbox …` (PROVEN_SANDBOX_*), checked the same way.
    let config = match proven_config::Layers::from_env(std::env::vars())
        .and_then(|l| l.resolve())
        .map_err(|e| e.to_string())
        .and_then(|c| {
            proven_sandbox::SandboxConfig::from_settings(&c.sandbox).map_err(|e| e.to_string())
        }) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("proven-sandbox: {e}");
            return ExitCode::from(7);
        }
    };
    match runtime.block_on(execute(cli.command, config, &mut out)) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            eprintln!("proven-sandbox: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
