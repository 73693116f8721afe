//! A webhook delivery: its signature checked before anything reads the body, then the
//! events Proven acts on, typed. Everything else GitHub sends is `Event::Other` (answered,
//! counted, never acted on).

use hmac::{KeyInit, Mac};
use serde::Deserialize;
use sha2::Sha256;

/// Why a delivery was refused before its body was read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the delivery carries no X-Hub-Signature-256 header")]
    Unsigned,
    #[error("X-Hub-Signature-256 is not `sha256=` and 64 hex digits")]
    Malformed,
    #[error("X-Hub-Signature-256 does not match the body under the app's webhook secret")]
    Mismatch,
}

impl SignatureError {
    /// The outcome label a refused delivery is counted under.
    pub fn outcome(&self) -> &'static str {
        match self {
            SignatureError::Unsigned => "unsigned",
            SignatureError::Malformed | SignatureError::Mismatch => "bad_signature",
        }
    }
}

/// Checks `X-Hub-Signature-256` (`sha256=` + hex HMAC-SHA256 of the raw body under the
/// webhook secret), compared in constant time (`Mac::verify_slice`).
pub fn verify(secret: &[u8], body: &[u8], header: Option<&str>) -> Result<(), SignatureError> {
    let mut verifier = Verifier::new(secret, header)?;
    verifier.update(body);
    verifier.finish()
}

/// The signature check as the body streams in: the header is read (and a missing or
/// malformed one refused) before a byte of the body is, each chunk goes into the HMAC as it
/// arrives, and [`Verifier::finish`] compares in constant time. The server never has to
/// hold an unverified body whole to check it.
pub struct Verifier {
    mac: hmac::Hmac<Sha256>,
    expected: Vec<u8>,
}

impl Verifier {
    pub fn new(secret: &[u8], header: Option<&str>) -> Result<Verifier, SignatureError> {
        let header = header.ok_or(SignatureError::Unsigned)?;
        let hex_sig = header
            .trim()
            .strip_prefix("sha256=")
            .ok_or(SignatureError::Malformed)?;
        let expected = hex::decode(hex_sig).map_err(|_| SignatureError::Malformed)?;
        if expected.len() != 32 {
            return Err(SignatureError::Malformed);
        }
        let mac =
            hmac::Hmac::<Sha256>::new_from_slice(secret).map_err(|_| SignatureError::Mismatch)?;
        Ok(Verifier { mac, expected })
    }

    pub fn update(&mut self, chunk: &[u8]) {
        self.mac.update(chunk);
    }

    pub fn finish(self) -> Result<(), SignatureError> {
        self.mac
            .verify_slice(&self.expected)
            .map_err(|_| SignatureError::Mismatch)
    }
}

/// The signature header GitHub would send for `body` (for tests and the Action's own
/// checks).
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// A pull request as a review needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub installation_id: u64,
    /// `owner/name` of the base repository.
    pub repository: String,
    /// The organisation or user that owns it (the installation's account): its login, and
    /// its numeric id (the tenant's key; a login can change hands).
    pub owner: String,
    pub owner_id: u64,
    pub clone_url: String,
    pub number: u64,
    pub base_sha: String,
    pub head_sha: String,
    pub draft: bool,
    /// When GitHub last updated the pull request (seconds since the epoch): orders
    /// deliveries that arrive out of order.
    pub updated_at: Option<i64>,
}

/// What a delivery asks of Proven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// opened, synchronize, reopened, ready_for_review: review this head.
    Review(PullRequest),
    /// Another `pull_request` action (closed, edited, labeled, ...), or a draft.
    PullRequestIgnored {
        action: String,
    },
    /// The app installed, or its repositories changed: the account is the tenant.
    Installation {
        installation_id: u64,
        account: String,
        account_id: u64,
        action: String,
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// A check run's "Re-run" button: review that head again.
    Rerequested {
        installation_id: u64,
        repository: String,
        /// The check run whose "Re-run" was pressed: the publication it belongs to.
        check_run_id: u64,
        head_sha: String,
        pull_numbers: Vec<u64>,
    },
    Ping,
    Other(String),
}

/// A payload that does not hold what its event needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the `{event}` payload cannot be read: {message}")]
pub struct EventError {
    pub event: String,
    pub message: String,
}

#[derive(Deserialize)]
struct Id {
    id: u64,
}

#[derive(Deserialize)]
struct Account {
    login: String,
    id: u64,
}

#[derive(Deserialize)]
struct Repo {
    full_name: String,
    #[serde(default)]
    clone_url: Option<String>,
    owner: Account,
}

#[derive(Deserialize)]
struct Sha {
    sha: String,
}

#[derive(Deserialize)]
struct PrBody {
    number: u64,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    updated_at: Option<String>,
    base: Sha,
    head: Sha,
}

#[derive(Deserialize)]
struct PrEvent {
    action: String,
    installation: Id,
    repository: Repo,
    pull_request: PrBody,
}

#[derive(Deserialize)]
struct RepoName {
    full_name: String,
}

#[derive(Deserialize)]
struct InstallationBody {
    id: u64,
    account: Account,
}

#[derive(Deserialize)]
struct InstallationEvent {
    action: String,
    installation: InstallationBody,
    #[serde(default)]
    repositories: Vec<RepoName>,
    #[serde(default)]
    repositories_added: Vec<RepoName>,
    #[serde(default)]
    repositories_removed: Vec<RepoName>,
}

#[derive(Deserialize)]
struct Number {
    number: u64,
}

#[derive(Deserialize)]
struct CheckRunBody {
    id: u64,
    head_sha: String,
    #[serde(default)]
    pull_requests: Vec<Number>,
}

#[derive(Deserialize)]
struct CheckRunEvent {
    action: String,
    installation: Id,
    repository: RepoName,
    check_run: CheckRunBody,
}

fn read<T: serde::de::DeserializeOwned>(event: &str, body: &[u8]) -> Result<T, EventError> {
    serde_json::from_slice(body).map_err(|e| EventError {
        event: event.to_string(),
        message: e.to_string(),
    })
}

fn sha(event: &str, field: &str, s: String) -> Result<String, EventError> {
    if s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(EventError {
            event: event.to_string(),
            message: format!("{field} is not a 40-digit commit id"),
        })
    }
}

/// Reads a (verified) delivery of `event` (`X-GitHub-Event`).
pub fn parse(event: &str, body: &[u8]) -> Result<Event, EventError> {
    match event {
        "ping" => Ok(Event::Ping),
        "pull_request" => {
            let e: PrEvent = read(event, body)?;
            let wanted = matches!(
                e.action.as_str(),
                "opened" | "synchronize" | "reopened" | "ready_for_review"
            );
            if !wanted || e.pull_request.draft {
                return Ok(Event::PullRequestIgnored { action: e.action });
            }
            let clone_url = e.repository.clone_url.ok_or_else(|| EventError {
                event: event.into(),
                message: "repository.clone_url is missing".into(),
            })?;
            let updated_at = match e.pull_request.updated_at.as_deref() {
                None => None,
                Some(at) => Some(
                    time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
                        .map_err(|err| EventError {
                            event: event.into(),
                            message: format!("pull_request.updated_at {at:?}: {err}"),
                        })?
                        .unix_timestamp(),
                ),
            };
            Ok(Event::Review(PullRequest {
                installation_id: e.installation.id,
                repository: e.repository.full_name,
                owner: e.repository.owner.login,
                owner_id: e.repository.owner.id,
                updated_at,
                clone_url,
                number: e.pull_request.number,
                base_sha: sha(event, "pull_request.base.sha", e.pull_request.base.sha)?,
                head_sha: sha(event, "pull_request.head.sha", e.pull_request.head.sha)?,
                draft: e.pull_request.draft,
            }))
        }
        "installation" | "installation_repositories" => {
            let e: InstallationEvent = read(event, body)?;
            let names = |v: Vec<RepoName>| v.into_iter().map(|r| r.full_name).collect();
            let mut added: Vec<String> = names(e.repositories_added);
            added.extend(names(e.repositories));
            Ok(Event::Installation {
                installation_id: e.installation.id,
                account: e.installation.account.login,
                account_id: e.installation.account.id,
                action: e.action,
                added,
                removed: names(e.repositories_removed),
            })
        }
        "check_run" => {
            let e: CheckRunEvent = read(event, body)?;
            if e.action != "rerequested" {
                return Ok(Event::Other(format!("check_run.{}", e.action)));
            }
            Ok(Event::Rerequested {
                installation_id: e.installation.id,
                repository: e.repository.full_name,
                check_run_id: e.check_run.id,
                head_sha: sha(event, "check_run.head_sha", e.check_run.head_sha)?,
                pull_numbers: e.check_run.pull_requests.iter().map(|p| p.number).collect(),
            })
        }
        other => Ok(Event::Other(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streaming_check_equals_the_whole_one_and_refuses_a_bad_header_before_any_byte() {
        let body = br#"{"zen":"Design for failure."}"#;
        let good = sign(b"s3cret", body);
        let mut v = Verifier::new(b"s3cret", Some(&good)).expect("a well-formed header");
        for chunk in body.chunks(5) {
            v.update(chunk);
        }
        assert_eq!(v.finish(), Ok(()));
        let mut v = Verifier::new(b"s3cret", Some(&good)).expect("a well-formed header");
        v.update(&body[..body.len() - 1]);
        assert_eq!(v.finish(), Err(SignatureError::Mismatch));
        assert_eq!(
            Verifier::new(b"s3cret", None).err(),
            Some(SignatureError::Unsigned)
        );
        assert_eq!(
            Verifier::new(b"s3cret", Some("sha1=00")).err(),
            Some(SignatureError::Malformed)
        );
    }

    #[test]
    fn only_the_secrets_signature_of_these_exact_bytes_passes() {
        let body = br#"{"zen":"Keep it logically awesome."}"#;
        let good = sign(b"s3cret", body);
        assert_eq!(verify(b"s3cret", body, Some(&good)), Ok(()));
        assert_eq!(
            verify(b"other", body, Some(&good)),
            Err(SignatureError::Mismatch)
        );
        let mut tampered = body.to_vec();
        tampered[3] ^= 1;
        assert_eq!(
            verify(b"s3cret", &tampered, Some(&good)),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(verify(b"s3cret", body, None), Err(SignatureError::Unsigned));
        for bad in ["sha1=abc", "sha256=zz", "sha256=abcd", ""] {
            assert_eq!(
                verify(b"s3cret", body, Some(bad)),
                Err(SignatureError::Malformed),
                "{bad}"
            );
        }
        // GitHub's documented example (docs: "Validating webhook deliveries").
        assert_eq!(
            sign(b"It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    fn pr(action: &str, draft: bool) -> Vec<u8> {
        serde_json::json!({
            "action": action,
            "installation": {"id": 7},
            "repository": {"full_name": "acme/app", "clone_url": "https://github.com/acme/app.git", "owner": {"login": "acme", "id": 9}},
            "pull_request": {"number": 3, "draft": draft, "updated_at": "2026-12-02T10:00:00Z",
                "base": {"sha": "a".repeat(40)}, "head": {"sha": "B".repeat(40)}}
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn pull_request_actions_that_change_the_head_are_reviewed_others_are_not() {
        for action in ["opened", "synchronize", "reopened", "ready_for_review"] {
            let Ok(Event::Review(p)) = parse("pull_request", &pr(action, false)) else {
                panic!("{action} is reviewed");
            };
            assert_eq!(p.head_sha, "b".repeat(40));
            assert_eq!((p.installation_id, p.number, p.owner_id), (7, 3, 9));
            assert_eq!(p.updated_at, Some(1_796_205_600));
        }
        assert!(matches!(
            parse("pull_request", &pr("closed", false)),
            Ok(Event::PullRequestIgnored { .. })
        ));
        assert!(matches!(
            parse("pull_request", &pr("opened", true)),
            Ok(Event::PullRequestIgnored { .. })
        ));
        let err = parse("pull_request", b"{\"action\":\"opened\"}").expect_err("refused");
        assert!(err.to_string().contains("pull_request"), "{err}");
        assert_eq!(parse("star", b"{}"), Ok(Event::Other("star".into())));
    }
}
