//! Exit codes, one table (documented in the README).

/// Complete, with findings.
pub const FINDINGS: u8 = 1;
/// Command-line usage error.
pub const USAGE: u8 = 2;
/// The review ran but part of it did not (a service failed or an input could not be read).
pub const INCOMPLETE: u8 = 3;
/// An input (repository, revision, file) does not exist or cannot be read.
pub const INPUT: u8 = 4;
/// The store cannot be reached.
pub const STORE: u8 = 5;
/// Anything else that stopped the command.
pub const INTERNAL: u8 = 6;
/// A wrong setting (environment, `proven.yaml`, flag).
pub const CONFIG: u8 = 7;
/// The review ran its plan, but the plan lacked the model agents the change needed (none
/// configured, and `agents: off` not chosen): only dependency files were examined, and no
/// finding was proved there. Never the clean 0.
pub const PARTIAL: u8 = 8;

pub struct Exit {
    pub code: u8,
    pub message: String,
}

impl Exit {
    pub fn config(e: proven_config::ConfigError) -> Exit {
        Exit {
            code: CONFIG,
            message: format!("configuration: {e}"),
        }
    }
    /// A setting out of range found after the settings were read (the sandbox's, say).
    pub fn config_message(message: String) -> Exit {
        Exit {
            code: CONFIG,
            message,
        }
    }

    pub fn usage(message: String) -> Exit {
        Exit {
            code: USAGE,
            message,
        }
    }
    pub fn input(message: String) -> Exit {
        Exit {
            code: INPUT,
            message,
        }
    }
    pub fn store(message: String) -> Exit {
        Exit {
            code: STORE,
            message,
        }
    }
    pub fn internal(message: String) -> Exit {
        Exit {
            code: INTERNAL,
            message,
        }
    }
}
