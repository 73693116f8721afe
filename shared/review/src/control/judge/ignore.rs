//! The repository's `ignore` list applied to a review's findings (plain code): a finding
//! whose advisory an unexpired entry names (by id or alias; and by package and path where
//! the entry says) moves to `ignored`, with the entry's reason; an expired entry ignores
//! nothing and is named, and so is an entry that matched no finding. A finding without an
//! advisory (a test proved it) is never ignored by an advisory entry.

use proven_report::{Finding, IgnoreNote, Ignored};

pub use crate::core::wire::IgnoreRule;

impl IgnoreRule {
    /// Expired on `today` (`YYYY-MM-DD`): from its expiry day on, it ignores nothing.
    fn expired(&self, today: &str) -> bool {
        self.expires.as_deref().is_some_and(|day| day <= today)
    }

    fn matches(&self, f: &Finding) -> bool {
        let Some(advisory) = &f.advisory else {
            return false;
        };
        let id = self.id.to_ascii_lowercase();
        let named = advisory.id.to_ascii_lowercase() == id
            || advisory
                .aliases
                .iter()
                .any(|a| a.to_ascii_lowercase() == id);
        let package = self.package.as_deref().is_none_or(|p| {
            f.package
                .as_ref()
                .is_some_and(|pkg| same_package(&pkg.name, p))
        });
        let path = self
            .path
            .as_deref()
            .is_none_or(|p| p.trim_start_matches("./") == f.location.path);
        named && package && path
    }
}

/// Package names compared as the registries do for the common cases: case, and `-`, `_`
/// and `.` as one (PyPI's normalisation; harmless elsewhere, where names differing only so
/// do not coexist).
fn same_package(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        s.to_ascii_lowercase()
            .chars()
            .map(|c| if c == '_' || c == '.' { '-' } else { c })
            .collect()
    };
    norm(a) == norm(b)
}

/// What the list made of the findings.
#[derive(Debug, Default)]
pub struct Applied {
    pub kept: Vec<Finding>,
    pub ignored: Vec<Ignored>,
    pub notes: Vec<IgnoreNote>,
}

/// Applies `rules` to `findings` on `today` (`YYYY-MM-DD`).
pub fn apply(findings: Vec<Finding>, rules: &[IgnoreRule], today: &str) -> Applied {
    let mut applied = Applied::default();
    let mut used = vec![false; rules.len()];
    for f in findings {
        let mut hit = None;
        for (i, rule) in rules.iter().enumerate() {
            if rule.matches(&f) {
                used[i] = true;
                if !rule.expired(today) && hit.is_none() {
                    hit = Some(rule);
                }
            }
        }
        match hit {
            Some(rule) => applied.ignored.push(Ignored {
                finding: f,
                entry: rule.id.clone(),
                reason: rule.reason.clone(),
                expires: rule.expires.clone(),
            }),
            None => applied.kept.push(f),
        }
    }
    for (rule, used) in rules.iter().zip(used) {
        if rule.expired(today) {
            applied.notes.push(IgnoreNote {
                entry: rule.id.clone(),
                status: "expired".into(),
                detail: format!(
                    "expired on {}: it ignores nothing{}",
                    rule.expires.as_deref().unwrap_or_default(),
                    if used {
                        "; the findings it matched are findings again"
                    } else {
                        ", and it matched no finding of this review"
                    }
                ),
            });
        } else if !used {
            let scope = [
                rule.package.as_deref().map(|p| format!("package {p}")),
                rule.path.as_deref().map(|p| format!("path {p}")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
            applied.notes.push(IgnoreNote {
                entry: rule.id.clone(),
                status: "unmatched".into(),
                detail: format!(
                    "matches no finding of this review{}",
                    if scope.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", scope.join(", "))
                    }
                ),
            });
        }
    }
    applied
}

#[cfg(test)]
mod tests {
    use super::*;
    use proven_report::{AdvisoryRef, Level, Location, PackageChange};

    fn finding(id: &str, alias: &str, name: &str, path: &str) -> Finding {
        Finding {
            id: format!("dependency:{path}:PyPI:{name}:{id}"),
            proof_level: Level::Advisory,
            kind: proven_report::FindingKind::Vulnerability,
            title: format!("{name} 0.12 is affected by {id}"),
            package: Some(PackageChange {
                ecosystem: "PyPI".into(),
                name: name.into(),
                old_version: None,
                new_version: "0.12".into(),
                dependency: "direct".into(),
                dev: false,
            }),
            location: Location {
                path: path.into(),
                line: Some(1),
            },
            advisory: Some(AdvisoryRef {
                id: id.into(),
                aliases: vec![alias.into()],
                summary: None,
                severity: Vec::new(),
                published: None,
                modified: None,
            }),
            exploited: None,
            epss: None,
            fix: None,
            claim: None,
            skeptic: None,
            patch: None,
            fix_not_proved: None,
            reachability: None,
            evidence: Vec::new(),
        }
    }

    fn rule(id: &str, expires: Option<&str>) -> IgnoreRule {
        IgnoreRule {
            id: id.into(),
            package: None,
            path: None,
            reason: "accepted".into(),
            expires: expires.map(str::to_string),
        }
    }

    #[test]
    fn an_entry_ignores_by_id_or_alias_within_its_package_and_path() {
        let findings = vec![
            finding("PYSEC-1", "CVE-1", "Flask", "requirements.txt"),
            finding("PYSEC-2", "CVE-2", "flask", "requirements.txt"),
            finding("PYSEC-3", "CVE-3", "jinja2", "web/requirements.txt"),
        ];
        let mut by_alias = rule("cve-2", None);
        by_alias.package = Some("flask".into());
        let mut other_path = rule("PYSEC-3", None);
        other_path.path = Some("requirements.txt".into());
        let applied = apply(
            findings,
            &[rule("PYSEC-1", Some("2027-01-01")), by_alias, other_path],
            "2026-12-03",
        );
        let ignored: Vec<&str> = applied
            .ignored
            .iter()
            .map(|i| i.finding.advisory.as_ref().map_or("", |a| a.id.as_str()))
            .collect();
        assert_eq!(ignored, ["PYSEC-1", "PYSEC-2"]);
        assert_eq!(applied.ignored[1].entry, "cve-2");
        assert_eq!(applied.kept.len(), 1, "another path is not ignored");
        assert_eq!(applied.notes.len(), 1);
        assert_eq!(applied.notes[0].status, "unmatched");
        assert!(applied.notes[0].detail.contains("path requirements.txt"));
    }

    #[test]
    fn an_expired_entry_ignores_nothing_and_says_so() {
        let applied = apply(
            vec![finding("PYSEC-1", "CVE-1", "flask", "requirements.txt")],
            &[
                rule("PYSEC-1", Some("2026-12-03")),
                rule("GHSA-none", Some("2020-01-01")),
            ],
            "2026-12-03",
        );
        assert_eq!(applied.kept.len(), 1);
        assert!(applied.ignored.is_empty());
        assert_eq!(applied.notes.len(), 2);
        assert!(applied.notes.iter().all(|n| n.status == "expired"));
        assert!(
            applied.notes[0].detail.contains("findings again"),
            "{:?}",
            applied.notes
        );
    }

    #[test]
    fn a_finding_a_test_proved_is_never_ignored() {
        let mut f = finding("PYSEC-1", "CVE-1", "flask", "app.py");
        f.advisory = None;
        let applied = apply(vec![f], &[rule("PYSEC-1", None)], "2026-12-03");
        assert_eq!(applied.kept.len(), 1);
        assert_eq!(applied.notes[0].status, "unmatched");
    }
}
