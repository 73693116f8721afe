//! Proven on GitHub: a webhook delivery verified before it is read and typed into the
//! events Proven acts on (`webhook`), the App's credentials (`app`: RS256 JWT, installation
//! tokens cached until shortly before they expire), the REST calls and what each failure
//! means for a retry (`client`), and the publishing of a review (`publish`: the PR review
//! found again by its marker, the check run and its annotations, SARIF).
//!
//! Invariants:
//! - Nothing in a delivery is read before its signature is checked (constant time).
//! - A token is never stored, printed or logged (`SecretString`); it goes only to GitHub
//!   and, for a clone, to git's environment for the repository's host.
//! - A rate limit waits and spends no attempt; a 404/403 is named and never retried.

pub mod app;
pub mod client;
pub mod publish;
pub mod webhook;

pub use app::{App, KeyError};
pub use client::{Client, GitHubError};
pub use publish::{CheckOptions, Publisher, SarifUpload, Target, check_updates};
pub use webhook::{Event, PullRequest, SignatureError};

/// The App as a worker holds it: its key and the REST client, handing out installation
/// tokens (cached).
#[derive(Debug)]
pub struct AppClient {
    pub app: App,
    pub client: Client,
}

impl AppClient {
    /// From the operator's settings: the app's id, its private key's file, the API's URL.
    pub fn new(id: u64, private_key: &std::path::Path, api_url: &str) -> Result<AppClient, String> {
        let pem = std::fs::read(private_key).map_err(|e| {
            format!(
                "the GitHub App's private key {} (PROVEN_GITHUB_PRIVATE_KEY): {e}",
                private_key.display()
            )
        })?;
        let app = App::from_pem(id, &pem).map_err(|e| e.to_string())?;
        let client = Client::new(api_url).map_err(|e| e.to_string())?;
        Ok(AppClient { app, client })
    }

    /// An access token of the installation for one repository (`owner/name`), cached until
    /// shortly before it expires.
    pub async fn token(
        &self,
        installation: u64,
        repository: &str,
    ) -> Result<secrecy::SecretString, GitHubError> {
        self.app.token(&self.client, installation, repository).await
    }
}
