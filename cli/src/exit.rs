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
/// `proven replay`: a run or an advisory finding replayed does not hold (the output names
/// which, and why).
pub const NOT_HELD: u8 = 9;

/// The table as `--help` shows it (the README holds the same one).
pub const HELP: &str = "Exit codes:
  0  the review (or scan) ran in full and found nothing
  1  it has findings (ran in full, or partial)
  2  command-line usage error
  3  incomplete: a service failed or an input could not be read
  4  an input does not exist or cannot be read (repository, revision, file, review id)
  5  the store cannot be reached
  6  anything else stopped the command
  7  a wrong setting: the message names the key and the values allowed
  8  partial and no finding: code changed, no model configured, agents: off not chosen
  9  replay: some evidence does not hold when run again (the output names it and why)";

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

#[cfg(test)]
mod tests {
    /// Every code of the table is in `--help`, with the meaning the README gives it.
    #[test]
    fn help_lists_every_exit_code() {
        for (code, words) in [
            (0, "found nothing"),
            (super::FINDINGS, "has findings"),
            (super::USAGE, "usage"),
            (super::INCOMPLETE, "incomplete"),
            (super::INPUT, "does not exist"),
            (super::STORE, "store"),
            (super::INTERNAL, "anything else"),
            (super::CONFIG, "wrong setting"),
            (super::PARTIAL, "partial"),
            (super::NOT_HELD, "does not hold"),
        ] {
            let line = super::HELP
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{code} ")))
                .unwrap_or_else(|| panic!("exit code {code} is not in --help"));
            assert!(line.contains(words), "{line}");
        }
        let readme = include_str!("../../README.md");
        assert!(
            readme.contains("| 8 | partial and no finding")
                && readme.contains("| 9 | `proven replay`: some evidence does not hold"),
            "the README's table"
        );
    }
}
