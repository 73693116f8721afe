//! The change's two trees, opened for a dependency evidence step (`deps.collect`,
//! `deps.file` and its fixes).

use proven_pipeline::StepError;

use crate::core::git_tree::{GitTree, Side};
use crate::core::outcome::blocking;
use crate::core::trace::Trace;
use crate::core::wire::IntakeResult;

/// Runs `f` over the change's two trees (base, head) on the blocking pool (git2 blocks),
/// with a trace of its own; a repository that does not open fails `step` by name.
pub(super) async fn on_trees<T: Send + 'static>(
    intake: IntakeResult,
    step: &'static str,
    f: impl FnOnce(&[(Side, GitTree<'_>); 2], &mut Trace) -> T + Send + 'static,
) -> Result<(T, Trace), StepError> {
    let run_id = uuid::Uuid::now_v7().to_string();
    blocking(move || {
        let mut trace = Trace::new(run_id);
        let repo = proven_change::Repo::open(std::path::Path::new(&intake.repository_dir))
            .map_err(|e| e.to_string())?;
        let sides = GitTree::sides(&repo, &intake.base.commit, &intake.head.commit);
        let out = f(&sides, &mut trace);
        Ok::<_, String>((out, trace))
    })
    .await?
    .map_err(|e| StepError::Permanent(format!("{step}: {e}")))
}
