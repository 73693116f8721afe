//! The intake step: the request read back, its repository reached (checked by the policy
//! again), the change read from git.

use proven_pipeline::{Lease, Outcome, StepError};
use proven_report::{InputError, LeftOutEntry, RevisionRef};

use proven_store::ReviewRequest;

use crate::core::outcome::FailureKind;
use crate::core::outcome::Next;
use crate::core::outcome::retryable;
use crate::core::outcome::{blocking, outcome, to_json};
use crate::core::review::resolve_before;
use crate::core::step::StepContext;
use crate::core::step_name::StepName;
use crate::core::trace::Trace;
use crate::core::wire::IntakeResult;
pub mod read;

use read as intake;

pub async fn run(cx: &StepContext, lease: &Lease) -> Result<Outcome, StepError> {
    let request: ReviewRequest = {
        let text = cx
            .store
            .review_request(&lease.id.review_id)
            .await
            .map_err(retryable)?
            .unwrap_or_default();
        serde_json::from_str(&text)
            .map_err(|e| StepError::Permanent(format!("intake: the request does not read: {e}")))?
    };
    let tenant = cx
        .store
        .review_tenant(&lease.id.review_id)
        .await
        .map_err(retryable)?;
    let token = match &request.github {
        Some(pull) => Some(installation_token(cx, pull).await?),
        None => None,
    };
    let (dir, fetched) = reach(cx, tenant.as_deref(), &request.repository, token.as_ref()).await?;
    let input = intake::IntakeInput {
        repository: dir.clone(),
        base: request.base.clone(),
        head: request.head.clone(),
        diff: request.diff,
        layers: cx.layers.clone(),
    };
    let read = blocking(move || intake::run(&input))
        .await?
        .map_err(|e| match e {
            crate::core::error::ReviewError::Config(c) => FailureKind::Configuration.error(c),
            other => StepError::Permanent(format!("intake: {other}")),
        })?;
    let mut trace = Trace::new(uuid::Uuid::now_v7().to_string());
    if let Some(line) = fetched {
        trace.push("repository", line);
    }
    intake::trace(&read, &mut trace);
    let result = IntakeResult {
        repository_dir: dir.display().to_string(),
        base: RevisionRef {
            rev: read.base.spec.clone(),
            commit: read.base.commit.clone(),
            diff: Some(read.diff.as_str().into()),
            tip: read.tip.as_ref().map(|t| t.commit.clone()),
        },
        head: RevisionRef::new(read.head.spec.clone(), read.head.commit.clone()),
        facts: read.facts.clone(),
        changed_paths: read
            .change
            .files
            .iter()
            .flat_map(|f| [f.old_path.as_ref(), f.new_path.as_ref()])
            .flatten()
            .map(|p| hex::encode(p.as_bytes()))
            .collect(),
        left_out: read
            .change
            .left_out
            .iter()
            .map(|l| LeftOutEntry {
                path: l.path.display(),
                reason: l.reason.as_str().into(),
            })
            .collect(),
        truncated: read.change.truncated,
        resolve_before: resolve_before(
            read.base.committed_at,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
        ),
        head_committed_at: Some(read.head.committed_at),
        config: read.config.clone(),
        input_errors: read
            .change
            .left_out
            .iter()
            .filter_map(|l| match l.reason {
                proven_change::LeftOutReason::TooLarge { size, head } => Some(InputError {
                    path: l.path.display(),
                    line: None,
                    side: Some(if head { "head" } else { "base" }.into()),
                    message: intake::too_large_message(&l.path.display(), size, &read.limits),
                }),
                _ => None,
            })
            .collect(),
    };
    Ok(outcome(
        trace,
        to_json(&result)?,
        vec![Next::first(StepName::Plan)],
        false,
    ))
}

/// A GitHub installation's access token for the clone (minted by the App, never stored).
async fn installation_token(
    cx: &StepContext,
    pull: &proven_store::GitHubPull,
) -> Result<secrecy::SecretString, StepError> {
    use proven_github::GitHubError;
    let github = cx.github.as_ref().ok_or_else(|| {
        StepError::Permanent(
            "intake: a GitHub pull request needs the App's credentials in this worker \
             (PROVEN_GITHUB_APP_ID, PROVEN_GITHUB_PRIVATE_KEY)"
                .into(),
        )
    })?;
    github
        .token(pull.installation_id, &pull.repository)
        .await
        .map_err(|e| match e {
            GitHubError::RateLimited { retry_after, .. } => StepError::Retryable {
                message: format!("intake: {e}"),
                after: retry_after,
            },
            GitHubError::Transient { .. } => StepError::Retryable {
                message: format!("intake: {e}"),
                after: std::time::Duration::from_secs(5),
            },
            other => StepError::Permanent(format!("intake: {other}")),
        })
}

/// The review's repository, checked again by the policy (a request stored before it, or
/// a name that resolves elsewhere now, is refused here too): a local path as it really
/// is, or the tenant's mirror fetched from the checked addresses. Returns the directory
/// and, for a mirror, its trace line (the URL is credential-free by the policy).
pub async fn reach(
    cx: &StepContext,
    tenant: Option<&str>,
    repository: &str,
    token: Option<&secrecy::SecretString>,
) -> Result<(std::path::PathBuf, Option<serde_json::Value>), StepError> {
    use proven_source::{CheckError, Target};
    let target = cx
        .sources
        .policy
        .check(repository)
        .await
        .map_err(|e| match e {
            CheckError::Unresolved { .. } => StepError::Retryable {
                message: format!("intake: {e}"),
                after: std::time::Duration::from_secs(5),
            },
            other => StepError::Permanent(format!("intake: {other}")),
        })?;
    match target {
        Target::Local(path) => {
            let sources = cx.sources.clone();
            let dir = blocking(move || sources.policy.open_local(&path))
                .await?
                .map_err(|e| StepError::Permanent(format!("intake: {e}")))?;
            Ok((dir, None))
        }
        Target::Remote(checked) => {
            let dir = cx.sources.mirrors.dir(tenant, &checked.remote);
            let mut fetch = cx.sources.fetch.clone();
            if let Some(token) = token {
                use secrecy::ExposeSecret;
                // GitHub's form for an installation token over https.
                fetch.credentials.insert(
                    0,
                    proven_config::RepoCredential {
                        host: checked.remote.host.clone(),
                        port: Some(checked.remote.port),
                        user: "x-access-token".into(),
                        secret: token.expose_secret().to_string(),
                    },
                );
            }
            let fetched = proven_source::mirror(&checked, &dir, &fetch)
                .await
                .map_err(|e| {
                    if e.is_transient() {
                        StepError::Retryable {
                            message: format!("intake: {e}"),
                            after: std::time::Duration::from_secs(5),
                        }
                    } else {
                        StepError::Permanent(format!("intake: {e}"))
                    }
                })?;
            let line = serde_json::json!({
                "url": checked.remote.url(),
                "address": fetched.address.map(|a| a.to_string()),
                "bytes": fetched.bytes,
                "cloned": fetched.cloned,
            });
            Ok((fetched.dir, Some(line)))
        }
    }
}
