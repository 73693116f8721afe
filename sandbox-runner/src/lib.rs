//! The sandbox-runner: tests written by the Prover and the Fixer run only here, in Docker
//! containers (through bollard) with no network and no secrets, and every run leaves a
//! record a reader can run again (DESIGN.md section 6).
//!
//! What this crate owns:
//! - materialising a tree (base, change, or change plus a patch) from git objects into a
//!   fresh directory per run, adding the test files ([`tree`]);
//! - preparing dependencies before the no-network run, cached by the lock file's hash
//!   ([`deps`]);
//! - which Python a tree runs on, from its own declarations (`interpreter`);
//! - the container of one run: its hardening, limits, timeout, output cap, and removal
//!   ([`container`]); the sweep of leftovers ([`sweep`]);
//! - the record of a run and its outcome ([`record`]), and the proof rule over records
//!   ([`proof`]); recording a job's result once ([`ledger`]);
//! - the `proven sandbox` commands ([`command`]) and the local image build ([`images`]).
//!
//! Invariants:
//! - A tree comes from git objects only, never from the author's working copy; patch
//!   edits and added files change that run's copy only.
//! - Every container runs with `network_mode: none` (only `localhost`, in a read-only
//!   /etc/hosts, names its loopback interface), a read-only root filesystem,
//!   size-limited tmpfs scratch, `cap_drop: ALL`, `no-new-privileges`, pids, memory and
//!   CPU limits, a non-root user, an environment made only of the image's and the run's
//!   own variables (nothing from the runner's), a wall-clock timeout that kills, and an
//!   output cap; it carries a name derived from its run key and the `proven.sandbox`
//!   labels, so a sweep can find it after a crash.
//! - A run's container is removed before `run` returns, whatever happened inside; a
//!   runner that dies leaves a container the next sweep removes.
//! - An outcome is `TestFailed` only when the test itself failed, as the test runner's own
//!   summary says ([`tally`]): a run that was killed (timeout, memory, output limit),
//!   reached the pids limit, ran out of scratch space, lost its output, or could not build
//!   or collect is an `EnvironmentError`, never evidence ([`record::classify`]). `Passed`
//!   needs at least one test that ran and passed: all skipped or none collected is not a
//!   pass.
//! - `reproduced` needs every run of the base to pass and every run of the change to fail,
//!   with at least two runs a side ([`proof::prove`]).
//! - Dependency preparation reads only lock files and manifests (never the code under
//!   review), never runs install scripts, and never builds from source.

pub mod command;
pub mod config;
pub mod container;
pub mod deps;
pub mod error;
mod gopath;
pub mod images;
mod interpreter;
pub mod language;
pub mod ledger;
pub mod metrics;
mod output;
mod pool;
pub mod proof;
pub mod record;
mod runner;
pub mod suite;
pub mod sweep;
pub mod tally;
mod toolchain;
mod tools;
mod tox;
pub mod tree;
pub mod written;

pub use config::{Forwarder, Limits, OutputLimits, SandboxConfig};
pub use error::{RequestError, SandboxError};
pub use language::{Language, Selection, TestRun};
pub use ledger::{FileLedger, LedgerError, Recorded, RunLedger};
pub use proof::{NotProved, Proof, Side, prove};
pub use record::{
    DependencyRecord, InterpreterChoice, KillReason, NotPrepared, Outcome, RunKind, RunRecord,
};
pub use runner::{Reproduction, RunKey, RunRequest, Sandbox};
pub use tally::TestCounts;
pub use tree::{AddFile, Edit};
