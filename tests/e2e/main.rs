//! The `proven` binary end to end: real advisory data from ../shared/data, real git
//! repositories, real stores (an embedded SQLite file, and a fresh Postgres database).

mod action;
mod agents;
mod ask;
mod autofix;
mod chaos;
mod common;
mod conformance;
mod depfix;
mod evidence;
mod expected;
mod fixer;
mod github;
mod github_standin;
mod markovian;
mod metrics;
mod operating;
mod projects;
mod pull_request;
mod readme;
mod replay;
mod repository;
mod rereview;
mod review;
mod sandbox_jobs;
mod scout;
mod secrets;
mod service;
mod service_exposure;
mod service_limits;
mod service_schema;
mod settings;
mod ui;
mod vectors;
