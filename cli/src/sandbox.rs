//! `proven sandbox …`: glue to the sandbox-runner's commands (proven_sandbox::command),
//! which the `proven-sandbox` binary shares, so both take the same code path.

pub use proven_sandbox::command::SandboxCommand;

use crate::exit::Exit;

pub async fn run(command: SandboxCommand, config: &proven_config::Config) -> Result<u8, Exit> {
    let mut out = std::io::stdout();
    let sandbox = proven_sandbox::SandboxConfig::from_settings(&config.sandbox)
        .map_err(|e| Exit::config_message(e.to_string()))?;
    proven_sandbox::command::execute(command, sandbox, &mut out)
        .await
        .map_err(|failure| Exit {
            code: failure.code,
            message: failure.message,
        })
}
