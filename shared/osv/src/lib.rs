//! The advisory formats Proven reads, as they are on the wire.
//!
//! Owns: the OSV record schema (the subset Proven uses, read leniently so one odd field
//! does not lose a whole advisory), the CISA KEV catalogue, FIRST EPSS scores, and the
//! readers that walk an OSV export (a `.json` file, a `.jsonl` file, a directory of them or
//! a `.zip`), and RustSec's advisory database for the vulnerable functions its OSV export
//! loses in the data kit. These types derive serde because they *are* the published formats.
//! Storing them is the store's job; deciding whether a version is affected is the
//! version crate's.

mod epss;
mod kev;
mod record;
mod rustsec;
mod source;

pub use epss::{EpssScore, EpssScores, read_epss};
pub use kev::{KevCatalog, KevEntry, read_kev};
pub use record::{Affected, Event, Package, Range, RangeType, Record, Severity};
pub use rustsec::{RustsecFunctions, is_rustsec_advisory, read_rustsec_advisory};
pub use source::{OsvSource, SourceError, SourceItem, read_osv_source};
