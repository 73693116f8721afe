//! Where a review's repository comes from.
//!
//! Owns the `repository` policy ([`RepoPolicy`]: https/ssh URLs on the operator's host
//! allow-list, local paths under the operator's roots, never Proven's own data directory),
//! the address check that pins each clone to the addresses it checked, and mirrors
//! ([`mirror`]) fetched with the `git` command under limits, one directory per tenant.
//!
//! Invariants:
//! - A refusal names the field (`repository`) and the setting that decides it, and never
//!   repeats a credential the value carried.
//! - git never resolves a remote's name: it reaches the remote only through this crate's
//!   proxy, which connects to the checked addresses and nothing else (no DNS-rebinding gap)
//!   and holds the connect and read timeouts and the byte cap.
//! - Credentials reach git only as configuration in its environment, for their host; never
//!   in a URL, an argument, the store, a trace or a log line.
//! - A tenant's mirrors are its own ([`Mirrors::dir`]).

mod address;
mod fetch;
mod policy;
mod proxy;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use address::non_public;
pub use fetch::{FetchError, FetchSettings, Fetched, Mirrors, mirror};
pub use policy::{
    CREDENTIALS, CheckError, Checked, DATA_DIR, FIELD, HOSTS, LocalPaths, PRIVATE_NETS, ROOTS,
    Refusal, Remote, RepoPolicy, Scheme, Source, Target,
};

/// Everything intake needs to reach a repository: the policy, how to fetch, where mirrors
/// live.
#[derive(Debug, Clone)]
pub struct Sources {
    pub policy: RepoPolicy,
    pub fetch: FetchSettings,
    pub mirrors: Mirrors,
}

impl Sources {
    /// The service's (API and workers): local paths only under `PROVEN_REPO_ROOTS`.
    pub fn service(config: &proven_config::Config) -> Sources {
        Sources {
            policy: RepoPolicy::service(config),
            fetch: FetchSettings::new(&config.repository),
            mirrors: Mirrors::new(config.data_dir.join("repos")),
        }
    }

    /// `proven review`'s: any local repository.
    pub fn cli(config: &proven_config::Config) -> Sources {
        Sources {
            policy: RepoPolicy::cli(config),
            fetch: FetchSettings::new(&config.repository),
            mirrors: Mirrors::new(config.data_dir.join("repos")),
        }
    }
}
