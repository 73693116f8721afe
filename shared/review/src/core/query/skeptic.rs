//! A Skeptic of query evidence (a query finding's or a dependency finding's), settled by
//! Proven: a refutation counts only by a query from the closed list whose rows Proven
//! judges; a concession only when it named what it was shown.

use proven_pipeline::StepError;
use proven_report::Finding;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::anchors::{self, Anchors};
use super::{QueryRefutation, judge_refutation, read_query};
use crate::core::outcome::retryable;
use crate::core::step_name::Name;
use crate::core::trace::Trace;
use crate::core::wire::{ReviewView, SkepticResult, SkepticSays, SkepticVerdict};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkepticQueryResult {
    pub skeptic: SkepticResult,
    pub refutation: Option<QueryRefutation>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SkepticQueryAnswer {
    #[serde(flatten)]
    pub(crate) said: SkepticSays,
    #[serde(default)]
    pub(crate) query: Option<Value>,
}

/// What a Skeptic may refute with a query: the findings, the file their anchors are in, and
/// whether its concession named what it was shown.
pub(crate) struct Refutable<'a> {
    pub(crate) findings: &'a [Finding],
    pub(crate) path: &'a str,
    pub(crate) conceded: bool,
}

/// A Skeptic's verdict on query evidence as Proven settles it.
pub(crate) enum Settled {
    /// A refutation query ran: refuted when its rows show the claim false.
    Judged(SkepticVerdict, QueryRefutation),
    /// The refutation's query is not one Proven runs (why).
    QueryRefused(String),
    /// No query to judge: what the answer stands for.
    Said(SkepticVerdict),
}

/// Settles a Skeptic's answer over query evidence: a refutation counts only by a query from
/// the closed list whose rows Proven judges; a concession only when it named what it saw.
/// The anchors of `asked.path` are read when a query is to run and none are given.
pub(crate) async fn settle(
    view: &ReviewView<'_>,
    said: String,
    query: Option<Value>,
    asked: &Refutable<'_>,
    anchors: Option<&Anchors>,
    trace: &mut Trace,
) -> Result<Settled, StepError> {
    Ok(match (SkepticVerdict::parse(&said), query) {
        (Some(SkepticVerdict::Refuted), Some(value)) => match read_query(value) {
            Ok(query) => {
                let read;
                let anchors = match anchors {
                    Some(given) => given,
                    None => {
                        read = anchors::read(view, asked.path).await?;
                        &read
                    }
                };
                let r = judge_refutation(
                    view.store,
                    &query,
                    asked.findings,
                    asked.path,
                    anchors,
                    trace,
                )
                .await
                .map_err(retryable)?;
                let verdict = if r.evidenced {
                    SkepticVerdict::Refuted
                } else {
                    SkepticVerdict::RefutedWithoutEvidence
                };
                Settled::Judged(verdict, r)
            }
            Err(why) => Settled::QueryRefused(why),
        },
        (Some(SkepticVerdict::Refuted), None) => {
            Settled::Said(SkepticVerdict::RefutedWithoutEvidence)
        }
        (Some(SkepticVerdict::Conceded), _) if asked.conceded => {
            Settled::Said(SkepticVerdict::Conceded)
        }
        _ => Settled::Said(SkepticVerdict::Unresolved),
    })
}

/// What a Skeptic of query evidence said, as Proven settled it.
pub(crate) struct Said {
    pub(crate) verdict: SkepticVerdict,
    pub(crate) reason: String,
    pub(crate) artifact: Option<String>,
    pub(crate) needs: Option<String>,
}

impl SkepticQueryResult {
    /// The result of a Skeptic of query evidence: its reason says why its refutation did
    /// not count when it did not.
    pub(crate) fn of(said: Said, refutation: Option<QueryRefutation>) -> SkepticQueryResult {
        let reason = match refutation.as_ref().filter(|r| !r.evidenced) {
            Some(r) => format!("{} ({})", said.reason, r.reason),
            None => said.reason,
        };
        SkepticQueryResult {
            skeptic: SkepticResult {
                verdict: said.verdict,
                reason,
                artifact: said.artifact,
                test: None,
                refutation: refutation.as_ref().map(|_| "query".to_string()),
                needs: said.needs,
            },
            refutation,
        }
    }
}
