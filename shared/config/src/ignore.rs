//! The `ignore` setting: advisories a repository has accepted, each with a reason and, as
//! osv-scanner's ignore entries have, an expiry. In `proven.yaml`:
//!
//! ```yaml
//! ignore:
//!   - id: PYSEC-2023-62          # the advisory's id or one of its aliases (CVE, GHSA)
//!     package: flask             # optional: only this package
//!     path: requirements.txt     # optional: only this file
//!     reason: send_file is never called with user input
//!     expires: 2027-06-30        # optional: from this day on the entry ignores nothing
//! ```
//!
//! An ignored finding is shown apart with its reason and never fails a check; an expired
//! entry, or one that matches nothing, is named in the review (the review crate applies
//! them).

/// One accepted advisory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoreEntry {
    /// An advisory id or alias, compared without regard to case.
    pub id: String,
    pub package: Option<String>,
    pub path: Option<String>,
    pub reason: String,
    /// `YYYY-MM-DD`: the entry ignores nothing on and after this day.
    pub expires: Option<String>,
}

/// Reads the setting's value: the YAML list as JSON text (how `proven.yaml`'s lists reach
/// the settings), or the same JSON in `PROVEN_IGNORE`; empty is no entry. Each error names
/// the entry and its field.
pub fn parse_ignore(raw: &str) -> Result<Vec<IgnoreEntry>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    let value: serde_json::Value = serde_json::from_str(raw).map_err(|_| {
        "expected a list of entries, each with id, reason and optionally package, path and \
         expires (YYYY-MM-DD)"
            .to_string()
    })?;
    let list = value.as_array().ok_or_else(|| {
        "expected a list of entries (id, reason, package, path, expires)".to_string()
    })?;
    list.iter()
        .enumerate()
        .map(|(i, entry)| entry_of(i, entry))
        .collect()
}

fn entry_of(i: usize, entry: &serde_json::Value) -> Result<IgnoreEntry, String> {
    let map = entry
        .as_object()
        .ok_or_else(|| format!("entry {i}: expected a mapping with id and reason"))?;
    if let Some(unknown) = map
        .keys()
        .find(|k| !["id", "package", "path", "reason", "expires"].contains(&k.as_str()))
    {
        return Err(format!(
            "entry {i}: unknown field {unknown:?} (allowed: id, package, path, reason, expires)"
        ));
    }
    let text = |field: &str| -> Result<Option<String>, String> {
        match map.get(field) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(serde_json::Value::String(s)) if s.chars().any(char::is_control) => {
                Err(format!("entry {i}: {field} holds a control character"))
            }
            Some(serde_json::Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(format!("entry {i}: {field} must be text")),
        }
    };
    let id = text("id")?
        .ok_or_else(|| format!("entry {i}: id is required (an advisory id or alias)"))?;
    let reason = text("reason")?
        .ok_or_else(|| format!("entry {i} ({id}): reason is required: say why it is accepted"))?;
    let expires = text("expires")?;
    if let Some(day) = &expires
        && !is_day(day)
    {
        return Err(format!(
            "entry {i} ({id}): expires {day:?} is not a date as YYYY-MM-DD"
        ));
    }
    Ok(IgnoreEntry {
        id,
        package: text("package")?,
        path: text("path")?,
        reason,
        expires,
    })
}

/// `YYYY-MM-DD` with a month 1–12 and a day 1–31 (compared as text, which orders such dates).
fn is_day(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        s.get(r)
            .filter(|t| t.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|t| t.parse().ok())
    };
    matches!(
        (digits(0..4), digits(5..7), digits(8..10)),
        (Some(_), Some(1..=12), Some(1..=31))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_with_their_fields_and_errors_name_the_entry() {
        let list = parse_ignore(
            r#"[{"id": "PYSEC-2023-62", "package": "flask", "reason": "not reached", "expires": "2027-06-30"},
                {"id": "CVE-2020-1747", "path": "requirements.txt", "reason": "test only"}]"#,
        )
        .expect("reads");
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].package.as_deref(), Some("flask"));
        assert_eq!(list[0].expires.as_deref(), Some("2027-06-30"));
        assert_eq!(list[1].path.as_deref(), Some("requirements.txt"));
        assert!(parse_ignore("").expect("empty").is_empty());
        let no_reason = parse_ignore(r#"[{"id": "X-1"}]"#).expect_err("reason");
        assert!(
            no_reason.contains("entry 0 (X-1): reason is required"),
            "{no_reason}"
        );
        let bad_day = parse_ignore(r#"[{"id": "X-1", "reason": "r", "expires": "next year"}]"#)
            .expect_err("day");
        assert!(bad_day.contains("not a date as YYYY-MM-DD"), "{bad_day}");
        let unknown = parse_ignore(r#"[{"id": "X-1", "reason": "r", "until": "2027-01-01"}]"#)
            .expect_err("field");
        assert!(unknown.contains("unknown field \"until\""), "{unknown}");
        assert!(parse_ignore(r#"{"id": "X"}"#).is_err());
        assert!(!is_day("2027-13-01") && is_day("2027-12-31"));
    }
}
