//! The REST calls Proven makes, over reqwest (already in the tree), each answer classified
//! by what the caller should do: wait without spending an attempt (a rate limit), retry
//! (5xx, a network failure), or stop by name (404/403: the app was removed or lost access;
//! 422: GitHub refused the content).
//!
//! Why not octocrab: its typed models cover neither updating a review nor the check-run
//! output Proven sends, so every call here would be its raw `_post`/`_patch` anyway, and it
//! brings a second HMAC/SHA-2 stack, chrono, jsonwebtoken and its own retry layer (which
//! would spend attempts on rate limits) into a build already holding reqwest.

use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use time::OffsetDateTime;

/// The REST API version every call asks for.
pub const API_VERSION: &str = "2022-11-28";

/// What a call to GitHub ended in, when it did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitHubError {
    /// A primary or secondary rate limit: wait `retry_after`, spend no attempt.
    #[error("{what}: GitHub's rate limit; retry in {} s", retry_after.as_secs())]
    RateLimited { what: String, retry_after: Duration },
    /// The app no longer reaches this resource (uninstalled, repository removed from the
    /// installation, permission withdrawn): retrying cannot help.
    #[error(
        "{what}: GitHub answered {status} ({message}); the app was removed from the repository or lost its permission, so this is not retried"
    )]
    Gone {
        what: String,
        status: u16,
        message: String,
    },
    /// GitHub refused the content (422).
    #[error("{what}: GitHub refused it ({status}: {message})")]
    Rejected {
        what: String,
        status: u16,
        message: String,
    },
    /// A 5xx, a 401 or a network failure: worth another attempt.
    #[error("{what}: {message}")]
    Transient { what: String, message: String },
    /// The app's own credentials cannot be used.
    #[error("{0}")]
    Credentials(String),
}

impl GitHubError {
    pub fn is_gone(&self) -> bool {
        matches!(self, GitHubError::Gone { .. })
    }

    /// GitHub did not take the token (expired early, or revoked): the cached one is to be
    /// forgotten and a new one minted for the next attempt.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, GitHubError::Transient { message, .. } if message.starts_with("GitHub answered 401"))
    }
}

/// A review already on a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExistingReview {
    pub id: u64,
    pub body: String,
    /// Written by an app (`user.type` is `Bot`): a person on the pull request cannot write
    /// one, so a marker a person copies into their own review is never taken for Proven's.
    pub by_bot: bool,
}

/// GitHub's REST API at one base URL (`https://api.github.com`, an Enterprise server's
/// `/api/v3`, or a test's stand-in).
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    api: String,
}

/// Waits named by `retry-after`, else by `x-ratelimit-reset` when none remain, else a
/// minute (GitHub: "wait at least one minute" on a secondary limit without headers).
fn rate_limit_wait(status: StatusCode, headers: &HeaderMap, message: &str) -> Option<Duration> {
    if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
        return None;
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i64>().ok())
    };
    if let Some(secs) = header("retry-after") {
        return Some(Duration::from_secs(secs.clamp(1, 3600) as u64));
    }
    if header("x-ratelimit-remaining") == Some(0)
        && let Some(reset) = header("x-ratelimit-reset")
    {
        let wait = reset - OffsetDateTime::now_utc().unix_timestamp();
        return Some(Duration::from_secs(wait.clamp(1, 3600) as u64));
    }
    (status == StatusCode::TOO_MANY_REQUESTS || message.to_lowercase().contains("rate limit"))
        .then_some(Duration::from_secs(60))
}

fn classify(what: &str, status: StatusCode, headers: &HeaderMap, body: &Value) -> GitHubError {
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .chars()
        .take(300)
        .collect::<String>();
    if let Some(retry_after) = rate_limit_wait(status, headers, &message) {
        return GitHubError::RateLimited {
            what: what.into(),
            retry_after,
        };
    }
    let code = status.as_u16();
    match code {
        403 | 404 | 410 => GitHubError::Gone {
            what: what.into(),
            status: code,
            message,
        },
        400 | 409 | 422 => GitHubError::Rejected {
            what: what.into(),
            status: code,
            message,
        },
        _ => GitHubError::Transient {
            what: what.into(),
            message: format!("GitHub answered {code} ({message})"),
        },
    }
}

fn id_of(what: &str, body: &Value) -> Result<u64, GitHubError> {
    body.get("id")
        .and_then(Value::as_u64)
        .ok_or_else(|| GitHubError::Transient {
            what: what.into(),
            message: "the answer carries no id".into(),
        })
}

impl Client {
    pub fn new(api_url: &str) -> Result<Client, GitHubError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(concat!("proven/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| GitHubError::Credentials(format!("the HTTP client: {e}")))?;
        Ok(Client {
            http,
            api: api_url.trim_end_matches('/').to_string(),
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        auth: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<(HeaderMap, Value), GitHubError> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.api))
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", API_VERSION)
            .header("authorization", auth);
        if let Some(b) = body {
            request = request.json(b);
        }
        let response = request.send().await.map_err(|e| GitHubError::Transient {
            what: what.into(),
            message: format!("GitHub cannot be reached: {e}"),
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(|e| GitHubError::Transient {
            what: what.into(),
            message: format!("the answer was cut: {e}"),
        })?;
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if status.is_success() {
            Ok((headers, value))
        } else {
            Err(classify(what, status, &headers, &value))
        }
    }

    fn token(token: &SecretString) -> String {
        format!("Bearer {}", token.expose_secret())
    }

    /// `POST /app/installations/{id}/access_tokens` with the app's JWT, for the one
    /// repository `name` (of the installation's account).
    pub async fn installation_token(
        &self,
        jwt: &str,
        installation: u64,
        name: &str,
    ) -> Result<(SecretString, OffsetDateTime), GitHubError> {
        let what = format!("the access token of installation {installation}");
        let (_, body) = self
            .call(
                Method::POST,
                &format!("/app/installations/{installation}/access_tokens"),
                &format!("Bearer {jwt}"),
                Some(&serde_json::json!({ "repositories": [name] })),
                &what,
            )
            .await?;
        let token = body.get("token").and_then(Value::as_str);
        let expires = body
            .get("expires_at")
            .and_then(Value::as_str)
            .and_then(|s| {
                OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
            });
        match (token, expires) {
            (Some(t), Some(e)) => Ok((SecretString::from(t.to_string()), e)),
            _ => Err(GitHubError::Transient {
                what,
                message: "the answer holds no token and expiry".into(),
            }),
        }
    }

    /// Every review on the pull request (all pages).
    pub async fn reviews(
        &self,
        token: &SecretString,
        repo: &str,
        pull: u64,
    ) -> Result<Vec<ExistingReview>, GitHubError> {
        let what = format!("the reviews of {repo}#{pull}");
        let mut out = Vec::new();
        for page in 1..=50 {
            let (_, body) = self
                .call(
                    Method::GET,
                    &format!("/repos/{repo}/pulls/{pull}/reviews?per_page=100&page={page}"),
                    &Self::token(token),
                    None,
                    &what,
                )
                .await?;
            let items = body.as_array().cloned().unwrap_or_default();
            let n = items.len();
            out.extend(items.iter().filter_map(|r| {
                Some(ExistingReview {
                    id: r.get("id")?.as_u64()?,
                    body: r.get("body")?.as_str().unwrap_or_default().to_string(),
                    by_bot: r.pointer("/user/type").and_then(Value::as_str) == Some("Bot"),
                })
            }));
            if n < 100 {
                break;
            }
        }
        Ok(out)
    }

    pub async fn create_review(
        &self,
        token: &SecretString,
        repo: &str,
        pull: u64,
        review: &Value,
    ) -> Result<u64, GitHubError> {
        let what = format!("posting the review on {repo}#{pull}");
        let (_, body) = self
            .call(
                Method::POST,
                &format!("/repos/{repo}/pulls/{pull}/reviews"),
                &Self::token(token),
                Some(review),
                &what,
            )
            .await?;
        id_of(&what, &body)
    }

    pub async fn update_review(
        &self,
        token: &SecretString,
        repo: &str,
        pull: u64,
        id: u64,
        text: &str,
    ) -> Result<(), GitHubError> {
        let what = format!("updating review {id} on {repo}#{pull}");
        self.call(
            Method::PUT,
            &format!("/repos/{repo}/pulls/{pull}/reviews/{id}"),
            &Self::token(token),
            Some(&serde_json::json!({ "body": text })),
            &what,
        )
        .await?;
        Ok(())
    }

    /// The check runs named `name` on a commit, as (id, external id): how a check run
    /// created by a publish that died before recording it is found again.
    pub async fn check_runs_named(
        &self,
        token: &SecretString,
        repo: &str,
        head_sha: &str,
        name: &str,
    ) -> Result<Vec<(u64, Option<String>)>, GitHubError> {
        let what = format!("the check runs of {repo}@{head_sha}");
        let name: String = url::form_urlencoded::byte_serialize(name.as_bytes()).collect();
        let mut out = Vec::new();
        for page in 1..=10 {
            let (_, body) = self
                .call(
                    Method::GET,
                    &format!(
                        "/repos/{repo}/commits/{head_sha}/check-runs?check_name={name}&filter=all&per_page=100&page={page}"
                    ),
                    &Self::token(token),
                    None,
                    &what,
                )
                .await?;
            let runs = body
                .get("check_runs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            out.extend(runs.iter().filter_map(|r| {
                Some((
                    r.get("id")?.as_u64()?,
                    r.get("external_id")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                ))
            }));
            if runs.len() < 100 {
                break;
            }
        }
        Ok(out)
    }

    pub async fn create_check_run(
        &self,
        token: &SecretString,
        repo: &str,
        run: &Value,
    ) -> Result<u64, GitHubError> {
        let what = format!("creating the check run on {repo}");
        let (_, body) = self
            .call(
                Method::POST,
                &format!("/repos/{repo}/check-runs"),
                &Self::token(token),
                Some(run),
                &what,
            )
            .await?;
        id_of(&what, &body)
    }

    pub async fn update_check_run(
        &self,
        token: &SecretString,
        repo: &str,
        id: u64,
        run: &Value,
    ) -> Result<(), GitHubError> {
        let what = format!("updating check run {id} on {repo}");
        self.call(
            Method::PATCH,
            &format!("/repos/{repo}/check-runs/{id}"),
            &Self::token(token),
            Some(run),
            &what,
        )
        .await?;
        Ok(())
    }

    pub async fn upload_sarif(
        &self,
        token: &SecretString,
        repo: &str,
        upload: &Value,
    ) -> Result<(), GitHubError> {
        let what = format!("uploading SARIF to {repo}'s code scanning");
        self.call(
            Method::POST,
            &format!("/repos/{repo}/code-scanning/sarifs"),
            &Self::token(token),
            Some(upload),
            &what,
        )
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().expect("header"));
        }
        h
    }

    #[test]
    fn rate_limits_wait_without_being_mistaken_for_a_removed_app() {
        let body = serde_json::json!({"message": "You have exceeded a secondary rate limit"});
        let e = classify(
            "x",
            StatusCode::FORBIDDEN,
            &headers(&[("retry-after", "7")]),
            &body,
        );
        assert_eq!(
            e,
            GitHubError::RateLimited {
                what: "x".into(),
                retry_after: Duration::from_secs(7)
            }
        );
        let reset = (OffsetDateTime::now_utc().unix_timestamp() + 30).to_string();
        let e = classify(
            "x",
            StatusCode::FORBIDDEN,
            &headers(&[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", &reset),
            ]),
            &serde_json::json!({"message": "API rate limit exceeded"}),
        );
        let GitHubError::RateLimited { retry_after, .. } = e else {
            panic!("{e:?}")
        };
        assert!(
            (28..=31).contains(&retry_after.as_secs()),
            "{retry_after:?}"
        );
        let e = classify("x", StatusCode::FORBIDDEN, &HeaderMap::new(), &body);
        assert!(
            matches!(e, GitHubError::RateLimited { retry_after, .. } if retry_after.as_secs() == 60)
        );
        let gone = classify(
            "x",
            StatusCode::FORBIDDEN,
            &HeaderMap::new(),
            &serde_json::json!({"message": "Resource not accessible by integration"}),
        );
        assert!(gone.is_gone(), "{gone:?}");
        assert!(classify("x", StatusCode::NOT_FOUND, &HeaderMap::new(), &Value::Null).is_gone());
        assert!(matches!(
            classify(
                "x",
                StatusCode::BAD_GATEWAY,
                &HeaderMap::new(),
                &Value::Null
            ),
            GitHubError::Transient { .. }
        ));
    }
}
