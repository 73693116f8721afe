//! The refuter: shown the claims Proven's citation check left standing and the lines
//! they cite, nothing else; refuted by default; a concession counts only naming a cited
//! artifact it opened, and is recorded conceded, never validated.

use serde_json::json;

use super::answer::{Answer, ClaimRecord, ClaimStatus, NotSeenRow, REFUTER, RefuterAnswer};
use super::files::{self, Checkout};
use proven_review::core::citation::Citation;
use proven_review::core::model::{Agents, Role, quoted};
use proven_review::core::trace::Trace;

/// The refuter on every claim Proven's check left standing: claims and cited lines only.
pub(super) async fn refute(
    agents: &Agents,
    checkout: &Checkout,
    claims: &mut [ClaimRecord],
    answer: &mut Answer,
    trace: &mut Trace,
) {
    let standing: Vec<usize> = (0..claims.len())
        .filter(|&i| claims[i].status == ClaimStatus::Unresolved)
        .collect();
    if standing.is_empty() {
        return;
    }
    let shown: Vec<serde_json::Value> = standing
        .iter()
        .map(|&i| {
            let c = &claims[i];
            json!({"claim": i, "text": c.claim, "citations": c.citations.iter().map(|cite| json!({
                "artifact": cite.place(), "lines": files::lines(checkout, cite)})).collect::<Vec<_>>()})
        })
        .collect();
    let user = format!("<claims>{}</claims>", quoted(&shown));
    let said: RefuterAnswer = match agents.ask(Role::Skeptic, REFUTER, &user, trace).await {
        Ok(a) => a,
        Err(e) => {
            answer.failed_services.push(NotSeenRow {
                what: "refuter".into(),
                needs: e.to_string(),
            });
            for &i in &standing {
                claims[i].reason = format!("the refuter's service failed: {e}");
            }
            return;
        }
    };
    for &i in &standing {
        let c = &mut claims[i];
        let Some(v) = said.verdicts.iter().find(|v| v.claim == i) else {
            c.status = ClaimStatus::Refuted;
            c.reason = "refuted by default: the refuter gave no verdict on it".into();
            continue;
        };
        match v.verdict.trim().to_ascii_lowercase().as_str() {
            "conceded" => match v.artifact.as_deref().and_then(|a| named(c, a)) {
                Some(place) => {
                    c.status = ClaimStatus::Conceded;
                    c.reason = format!("conceded (not validated): {}", v.showed);
                    c.artifact = Some(place);
                }
                None => {
                    c.status = ClaimStatus::Refuted;
                    c.reason = format!(
                        "refuted by default: the refuter conceded without naming an artifact it was given \
                         (named {:?})",
                        v.artifact.as_deref().unwrap_or("nothing")
                    );
                }
            },
            "unresolved" => {
                c.status = ClaimStatus::Unresolved;
                c.reason = v
                    .needs
                    .clone()
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| "an artifact neither side had".into());
            }
            _ => {
                c.status = ClaimStatus::Refuted;
                c.reason = format!("the refuter: {}", v.reason);
            }
        }
    }
}

/// The citation of `claim` the refuter named as the artifact it opened, as the citation's
/// place: its own path and line range exactly (`PATH:A-B`, or `PATH:A` for one line). A
/// path alone, or other lines of the same file, name nothing the refuter was shown.
fn named(claim: &ClaimRecord, artifact: &str) -> Option<String> {
    let (path, lines) = artifact.trim().rsplit_once(':')?;
    let (a, b) = match lines.split_once('-') {
        Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
        None => {
            let line = lines.trim().parse::<u32>().ok()?;
            (line, line)
        }
    };
    claim
        .citations
        .iter()
        .find(|c| c.path == path && c.line_start == a && c.line_end == b)
        .map(Citation::place)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(citations: &[(&str, u32)]) -> ClaimRecord {
        ClaimRecord {
            round: 1,
            claim: "c".into(),
            citations: citations
                .iter()
                .map(|(p, l)| Citation {
                    path: p.to_string(),
                    line_start: *l,
                    line_end: *l + 1,
                    quote: "q".into(),
                })
                .collect(),
            status: ClaimStatus::Unresolved,
            by: "refuter".into(),
            reason: String::new(),
            artifact: None,
            surface: None,
        }
    }

    #[test]
    fn a_concession_counts_only_naming_one_of_the_claims_citations() {
        let c = record(&[("src/a.py", 3)]);
        assert_eq!(named(&c, "src/a.py:3-4").as_deref(), Some("src/a.py:3-4"));
        assert_eq!(named(&c, " src/a.py:3-4 ").as_deref(), Some("src/a.py:3-4"));
        assert_eq!(named(&c, "src/b.py:3"), None);
        assert_eq!(named(&c, "it looks right"), None);
    }

    #[test]
    fn a_concession_names_the_claims_own_lines_exactly() {
        let c = record(&[("src/a.py", 19)]);
        assert_eq!(
            named(&c, "src/a.py:19-20").as_deref(),
            Some("src/a.py:19-20")
        );
        assert_eq!(named(&c, "src/a.py:999"), None, "other lines of the file");
        assert_eq!(named(&c, "src/a.py:999-1000"), None);
        assert_eq!(named(&c, "src/a.py:19"), None, "part of the range");
        assert_eq!(named(&c, "src/a.py"), None, "the path alone");
        assert_eq!(named(&c, "src/a.py:19-20x"), None);
        let one = ClaimRecord {
            citations: vec![Citation {
                path: "src/b.py".into(),
                line_start: 7,
                line_end: 7,
                quote: "q".into(),
            }],
            ..record(&[])
        };
        assert_eq!(named(&one, "src/b.py:7").as_deref(), Some("src/b.py:7"));
        assert_eq!(named(&one, "src/b.py:7-7").as_deref(), Some("src/b.py:7"));
    }
}
