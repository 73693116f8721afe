//! `proven sandbox …`: glue to the sandbox-runner's commands (proven_sandbox::command),
//! which the `proven-sandbox` binary shares, so both take the same code path.

pub use proven_sandbox::command::SandboxCommand;

use crate::exit::Exit;

pub async fn run(command: SandboxCommand) -> Result<u8, Exit> {
    let mut out = std::io::stdout();
    proven_sandbox::command::execute(command, &mut out)
        .await
        .map_err(|failure| Exit {
            code: failure.code,
            message: failure.message,
        })
}
