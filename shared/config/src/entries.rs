//! A setting's comma-separated list.

/// The non-empty entries of a comma-separated list.
pub fn list_entries(raw: &str) -> impl Iterator<Item = &str> {
    raw.split(',').map(str::trim).filter(|e| !e.is_empty())
}
