use std::collections::HashMap;

use serde::Deserialize;

/// The CISA Known Exploited Vulnerabilities catalogue.
#[derive(Debug, Clone, Deserialize)]
pub struct KevCatalog {
    #[serde(rename = "catalogVersion", default)]
    pub catalog_version: Option<String>,
    #[serde(rename = "dateReleased", default)]
    pub date_released: Option<String>,
    pub vulnerabilities: Vec<KevEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KevEntry {
    #[serde(rename = "cveID")]
    pub cve_id: String,
    #[serde(rename = "vendorProject", default)]
    pub vendor_project: Option<String>,
    #[serde(default)]
    pub product: Option<String>,
    #[serde(rename = "vulnerabilityName", default)]
    pub vulnerability_name: Option<String>,
    #[serde(rename = "dateAdded", default)]
    pub date_added: Option<String>,
    #[serde(rename = "knownRansomwareCampaignUse", default)]
    pub known_ransomware_campaign_use: Option<String>,
    /// Everything else in the row, kept so a reader sees the catalogue's own words.
    #[serde(flatten)]
    pub rest: HashMap<String, serde_json::Value>,
}

pub fn read_kev(bytes: &[u8]) -> Result<KevCatalog, serde_json::Error> {
    serde_json::from_slice(bytes)
}
