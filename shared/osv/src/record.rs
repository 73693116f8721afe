use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One OSV advisory (schema 1.x). Unknown fields are ignored; the full original JSON is
/// kept by the importer beside these fields so nothing is lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    #[serde(default)]
    pub modified: Option<String>,
    #[serde(default)]
    pub published: Option<String>,
    #[serde(default)]
    pub withdrawn: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub details: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub severity: Vec<Severity>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub affected: Vec<Affected>,
    #[serde(default)]
    pub database_specific: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Severity {
    #[serde(rename = "type")]
    pub kind: String,
    pub score: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Affected {
    #[serde(default)]
    pub package: Option<Package>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub ranges: Vec<Range>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub versions: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub severity: Vec<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecosystem_specific: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_specific: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Package {
    pub ecosystem: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purl: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Range {
    #[serde(rename = "type")]
    pub kind: RangeType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub events: Vec<Event>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_specific: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RangeType {
    Semver,
    Ecosystem,
    Git,
    /// A range type this build does not know; it is kept and never evaluated.
    #[serde(other)]
    Unknown,
}

/// One OSV range event. Exactly one of the four keys is set in a valid record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    Introduced(String),
    Fixed(String),
    LastAffected(String),
    Limit(String),
}

impl Event {
    pub fn version(&self) -> &str {
        match self {
            Event::Introduced(v) | Event::Fixed(v) | Event::LastAffected(v) | Event::Limit(v) => v,
        }
    }
}

impl Record {
    pub fn is_withdrawn(&self) -> bool {
        self.withdrawn
            .as_deref()
            .is_some_and(|w| !w.trim().is_empty())
    }

    /// The CVE ids among the record's id and aliases.
    pub fn cves(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.id.as_str())
            .chain(self.aliases.iter().map(String::as_str))
            .filter(|a| a.starts_with("CVE-"))
    }
}

impl Affected {
    /// RustSec's `informational` kind (`unmaintained`, `unsound`, `notice`), carried in
    /// the OSV export's `affected[].database_specific`. `None` for a vulnerability.
    pub fn informational(&self) -> Option<&str> {
        self.database_specific
            .as_ref()?
            .get("informational")?
            .as_str()
            .filter(|s| !s.is_empty())
    }
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_events_and_informational() {
        let json = r#"{"id":"RUSTSEC-1","aliases":null,"affected":[{"package":{"ecosystem":"crates.io","name":"x"},
            "ranges":[{"type":"SEMVER","events":[{"introduced":"0.0.0-0"},{"fixed":"1.0.0"},{"last_affected":"0.5"},{"limit":"2"}]}],
            "database_specific":{"informational":"unsound"}}]}"#;
        let r: Record = serde_json::from_str(json).expect("valid record");
        let a = &r.affected[0];
        assert_eq!(
            a.ranges[0].events,
            vec![
                Event::Introduced("0.0.0-0".into()),
                Event::Fixed("1.0.0".into()),
                Event::LastAffected("0.5".into()),
                Event::Limit("2".into())
            ]
        );
        assert_eq!(a.informational(), Some("unsound"));
        assert!(!r.is_withdrawn());
    }

    #[test]
    fn unknown_range_types_are_kept_not_rejected() {
        let r: Range = serde_json::from_str(r#"{"type":"NEW_THING","events":[]}"#).expect("range");
        assert_eq!(r.kind, RangeType::Unknown);
    }
}
