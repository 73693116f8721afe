//! Questions over HTTP (`POST /v1/questions`): a worker of the model family claims each from
//! the store under a lease, reaches its repository as intake reaches a review's (the
//! operator's policy; a remote one fetched into the tenant's own mirror), runs the ask and
//! keeps the answer with the question. A question whose worker dies is claimed again when
//! its lease ends.

use std::path::Path;

use proven_store::{QuestionRow, StoreError};

use crate::files::Checkout;
use proven_review::core::outcome::blocking;
use proven_review::core::step::StepContext;
use proven_review::core::trace::Trace;

/// How long a claim holds before another worker may take the question.
const LEASE_SECS: i64 = 600;

/// Answers questions for one worker.
#[derive(Clone)]
pub struct QuestionRunner {
    cx: StepContext,
}

impl QuestionRunner {
    /// Answers questions with the store, sources and agents of `steps` (this process's
    /// review steps: intake reaches a question's repository as it reaches a review's).
    pub fn new(steps: &proven_review::pipeline::ReviewSteps) -> QuestionRunner {
        QuestionRunner {
            cx: steps.context().clone(),
        }
    }

    /// Claims and answers the oldest waiting question; false when none waits.
    pub async fn answer_one(&self) -> Result<bool, StoreError> {
        let Some(q) = self.cx.store.claim_question(LEASE_SECS).await? else {
            return Ok(false);
        };
        let outcome = self.answer(&q).await;
        match &outcome {
            Ok(_) => tracing::info!(question = %q.id, "question answered"),
            Err(e) => tracing::warn!(question = %q.id, error = %e, "question failed"),
        }
        self.cx
            .store
            .finish_question(&q.id, outcome.as_deref().map_err(String::as_str))
            .await?;
        Ok(true)
    }

    async fn answer(&self, q: &QuestionRow) -> Result<String, String> {
        let agents = self.cx.agents().map_err(|e| e.to_string())?;
        let (dir, _) = proven_review::control::intake::reach(
            &self.cx,
            Some(&q.tenant_id),
            &q.repository,
            None,
        )
        .await
        .map_err(|e| e.to_string().replacen("intake: ", "", 1))?;
        let rev = q.rev.clone();
        let checkout = blocking(move || Checkout::open(Path::new(&dir), &rev))
            .await
            .map_err(|e| e.to_string())??;
        let mut trace = Trace::new(q.id.clone());
        let mut answer = crate::flow::ask(agents, &checkout, (&q.question, &q.rev), &mut trace)
            .await
            .map_err(|e| e.to_string())?;
        // The caller named the repository; the mirror's directory is this worker's own.
        answer.repository = q.repository.clone();
        serde_json::to_string(&answer).map_err(|e| e.to_string())
    }
}
