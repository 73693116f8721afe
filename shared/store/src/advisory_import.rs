//! What an import run adds per item of a walked source, and the vulnerable functions read
//! from RustSec's own advisory database: kept beside the advisories (`advisory_functions`)
//! and added to the affected entries the match query returns. An enrichment: no change-set
//! row, the advisory's record and digest untouched.

use proven_domain::Ecosystem;
use proven_osv::{RustsecFunctions, SourceItem};
use serde_json::Value;

use super::AdvisoryImport;
use crate::StoreError;

impl AdvisoryImport<'_> {
    /// Stores one item of a walked source (`proven_osv::read_osv_source`), whatever it is.
    pub async fn add_item(&mut self, item: SourceItem) -> Result<(), StoreError> {
        match item {
            SourceItem::Record {
                origin,
                record,
                raw,
            } => self.add_record(&origin, &record, &raw).await,
            SourceItem::Kev { catalog, .. } => self.add_kev(&catalog).await,
            SourceItem::Epss { scores, .. } => self.add_epss(&scores).await,
            SourceItem::Functions { origin, functions } => {
                self.add_functions(&origin, &functions).await
            }
            SourceItem::Invalid { origin, message } => {
                self.invalid(&origin, &message);
                Ok(())
            }
            SourceItem::Skipped { .. } => {
                self.skipped_file();
                Ok(())
            }
        }
    }

    /// Stores the functions one RustSec advisory names (replacing what an earlier import
    /// read for the same advisory and crate).
    pub async fn add_functions(
        &mut self,
        origin: &str,
        read: &RustsecFunctions,
    ) -> Result<(), StoreError> {
        let functions = serde_json::to_string(&read.functions)
            .map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        sqlx::query(
            "INSERT INTO advisory_functions (advisory_id, ecosystem, normalized_name, functions, origin) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (advisory_id, ecosystem, normalized_name) \
             DO UPDATE SET functions = excluded.functions, origin = excluded.origin",
        )
        .bind(read.id.as_str())
        .bind(Ecosystem::CratesIo.osv_name())
        .bind(Ecosystem::CratesIo.normalize_name(&read.package))
        .bind(functions)
        .bind(origin)
        .execute(&self.store.pool)
        .await?;
        self.counts.functions += 1;
        Ok(())
    }
}

/// The affected entry `affected` with `functions` (a JSON array, as stored) set as
/// `ecosystem_specific.affects.functions` when the entry names none of its own: the
/// upstream record, when it has them, is what it says.
pub(super) fn with_functions(affected: String, functions: Option<&str>) -> String {
    let Some(functions) = functions else {
        return affected;
    };
    let (Ok(mut entry), Ok(functions)) = (
        serde_json::from_str::<Value>(&affected),
        serde_json::from_str::<Value>(functions),
    ) else {
        return affected;
    };
    let has_own = entry
        .pointer("/ecosystem_specific/affects/functions")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    let Some(map) = entry.as_object_mut() else {
        return affected;
    };
    if has_own {
        return affected;
    }
    let specific = map
        .entry("ecosystem_specific")
        .or_insert_with(|| Value::Object(Default::default()));
    if !specific.is_object() {
        *specific = Value::Object(Default::default());
    }
    let affects = specific.as_object_mut().map(|s| {
        s.entry("affects")
            .or_insert_with(|| Value::Object(Default::default()))
    });
    match affects.and_then(Value::as_object_mut) {
        Some(affects) => {
            affects.insert("functions".into(), functions);
        }
        None => return affected,
    }
    entry.to_string()
}

#[cfg(test)]
mod tests {
    use super::with_functions;

    #[test]
    fn functions_are_added_where_the_record_names_none_and_never_replace_its_own() {
        let plain = r#"{"package":{"ecosystem":"crates.io","name":"a"},"ecosystem_specific":{"affects":{"os":[]}}}"#;
        let out = with_functions(plain.into(), Some(r#"["a::f"]"#));
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["ecosystem_specific"]["affects"]["functions"][0], "a::f");
        assert!(v["ecosystem_specific"]["affects"]["os"].is_array());
        let own = r#"{"ecosystem_specific":{"affects":{"functions":["a::g"]}}}"#;
        assert_eq!(with_functions(own.into(), Some(r#"["a::f"]"#)), own);
        assert_eq!(with_functions(plain.into(), None), plain);
    }
}
