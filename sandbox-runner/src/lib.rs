//! The sandbox-runner: tests written by the Prover and the Fixer run only here, in Docker
//! containers (through bollard) with no network and no secrets, and every run leaves a
//! record a reader can run again (DESIGN.md section 6).
//!
//! What this crate owns (the Docker half; what a tree needs and what a run's output says
//! are `proven-sandbox-plan`'s, re-exported here: [`language`], [`suite`], [`tally`],
//! [`record`], [`proof`], [`written`]):
//! - materialising a tree (base, change, or change plus a patch) from git objects into a
//!   fresh directory per run, adding the test files ([`tree`]);
//! - preparing dependencies before the no-network run, in a preparation container, into
//!   layers cached on disk by the plan's key ([`deps`]);
//! - the container of one run: its hardening, limits, timeout, output cap, and removal
//!   ([`container`]); the warm pool (`pool`); the sweep of leftovers ([`sweep`]);
//! - the run itself (`runner`), the toolchain an image has, asked of it (`toolchain`);
//!   recording a job's result once ([`ledger`]);
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
pub mod images;
pub mod ledger;
pub mod metrics;
mod pool;
mod runner;
pub mod sweep;
mod toolchain;
pub mod tree;

// The pure half (planning a run, reading its output), re-exported under the paths callers
// have always used.
pub use proven_sandbox_plan::{analyzer, language, proof, record, suite, tally, written};

pub use config::{Forwarder, Limits, OutputLimits, SandboxConfig};
pub use error::SandboxError;
pub use ledger::{FileLedger, LedgerError, Recorded, RunLedger};
pub use proven_sandbox_plan::{
    AddFile, DependencyRecord, Edit, InterpreterChoice, KillReason, Language, NotPrepared,
    NotProved, Outcome, Proof, RequestError, RunKey, RunKind, RunRecord, Selection, Side,
    TestCounts, TestRun, prove,
};
pub use runner::{Reproduction, RunRequest, Sandbox};
