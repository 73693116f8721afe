//! The sandbox-runner: tests run in Docker containers with no network and no secrets.
