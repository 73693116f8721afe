//! The anchor a query finding needs: a line the change adds that names the package and
//! the version (a query proves only what such a line names).

use std::collections::HashSet;

use proven_pipeline::StepError;

use crate::core::git_tree::text_at;
use crate::core::pin::has_token;
use crate::core::wire::ReviewView;

/// The lines the change adds to and removes from one file (1-based line numbers of the
/// side they are on).
#[derive(Debug, Default)]
pub(crate) struct Anchors {
    pub(crate) added: Vec<(u32, String)>,
    pub(crate) removed: Vec<(u32, String)>,
}

impl Anchors {
    pub(crate) fn of(base: &str, head: &str) -> Anchors {
        let base_lines: HashSet<&str> = base.lines().map(str::trim).collect();
        let head_lines: HashSet<&str> = head.lines().map(str::trim).collect();
        let number = |text: &str, other: &HashSet<&str>| {
            text.lines()
                .enumerate()
                .filter(|(_, l)| !other.contains(l.trim()))
                .map(|(i, l)| (i as u32 + 1, l.to_string()))
                .collect::<Vec<_>>()
        };
        Anchors {
            added: number(head, &base_lines),
            removed: number(base, &head_lines),
        }
    }

    pub(crate) fn find(lines: &[(u32, String)], name: &str, version: &str) -> Option<u32> {
        lines
            .iter()
            .find(|(_, l)| has_token(l, name) && has_token(l, version))
            .map(|(n, _)| *n)
    }
}

/// The lines the change adds to and removes from `path`.
pub(crate) async fn read(view: &ReviewView<'_>, path: &str) -> Result<Anchors, StepError> {
    let (base, head) = read_sides(view, path).await?;
    Ok(Anchors::of(&base, &head))
}

/// `path` on the base and at the change (empty where it is not there or not text).
async fn read_sides(view: &ReviewView<'_>, path: &str) -> Result<(String, String), StepError> {
    let (base, head, path) = (
        view.base.to_string(),
        view.head.to_string(),
        path.to_string(),
    );
    view.with_repo("investigator", move |repo| {
        let max = crate::core::test_runs::MAX_FILE_BYTES * 8;
        Ok((
            text_at(repo, &base, &path, max)?,
            text_at(repo, &head, &path, max)?,
        ))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anchor_is_an_added_line_naming_the_package_and_the_version() {
        let base = "FROM python:3.12\nRUN pip install flask==2.0.0\n";
        let head = "FROM python:3.12\nRUN pip install flask==2.0.0 django==3.2.0\n# django 3.2.10 later.\n";
        let a = Anchors::of(base, head);
        assert_eq!(Anchors::find(&a.added, "django", "3.2.0"), Some(2));
        assert_eq!(
            Anchors::find(&a.added, "Django", "3.2.0"),
            Some(2),
            "names fold case"
        );
        assert_eq!(
            Anchors::find(&a.added, "django", "3.2"),
            None,
            "not a prefix of a version"
        );
        assert_eq!(Anchors::find(&a.added, "django", "3.2.1"), None);
        assert_eq!(
            Anchors::find(&a.added, "django", "3.2.10"),
            Some(3),
            "a sentence's full stop"
        );
        assert_eq!(Anchors::find(&a.removed, "flask", "2.0.0"), Some(2));
        assert_eq!(
            Anchors::find(&a.added, "go", "3.2.0"),
            None,
            "not inside django"
        );
    }
}
