//! The tool evidence flow: deterministic analyzers (pyflakes, `go vet`, clippy, the
//! project's own ESLint where it has its configuration and eslint installed; which ones
//! is the `tool_analyzers` setting) run in the sandbox on the base and on the change, with
//! the same preparation and isolation as tests, each pinned by its image and asked its
//! version in the same container. A `tool` finding is a diagnostic on a line the change adds
//! that the same analyzer, at the same version, does not report on the base (matched by
//! file, code, message and the line's text, never its number: lines move).
//!
//! ```text
//! plan ─┬─ sandbox.tool pyflakes ─ [skeptic.tool pyflakes] ─┐   one pipeline per analyzer
//!       ├─ sandbox.tool go-vet ─── [skeptic.tool go-vet] ───┤   whose language the change
//!       ├─ sandbox.tool clippy ─── [skeptic.tool clippy] ───┤   touches
//!       └─ sandbox.tool eslint ─── [skeptic.tool eslint] ───┴─ judge
//! ```
//!
//! Invariants:
//! - A finding needs both runs finished at one version; a run that did not (killed, cut
//!   off, a tree that does not build for clippy, a tree without ESLint's configuration or
//!   eslint installed) is named in "what this review could not
//!   see", never a finding and never a clean bill.
//! - Nothing a model says makes or keeps a tool finding. The Skeptic (when the plan runs
//!   it, on an analyzer with findings) may refute one as `intended` or `false_positive`;
//!   Proven settles either only by the analyzer's own suppression on the finding's line
//!   (`# noqa`, `//nolint`, ESLint's `eslint-disable-line` or the line before's
//!   `eslint-disable-next-line`; clippy applies `#[allow]` itself, so never), else the finding
//!   stays with the Skeptic's word shown as refuted without evidence.

pub mod judge;
pub mod run;
pub mod skeptic;
pub mod suppress;
pub mod wire;

use crate::core::step_name::StepName;

pub const TOOL: &str = StepName::Tool.as_str();
pub const SKEPTIC_TOOL: &str = StepName::SkepticTool.as_str();
