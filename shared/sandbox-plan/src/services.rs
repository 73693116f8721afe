//! The services a project's CI starts beside its tests: Travis' `services:` list, a GitHub
//! workflow's `services:` containers (by their image). Those the sandbox images carry
//! ([`STARTED`]) are started in the run's own container on the loopback, nothing kept on
//! disk, before the tests (`proven-entry`, told by `PROVEN_SERVICES`); the others are named
//! in the run's record as not started, so a test failing for want of its database says so.
//! Read as text, as [`crate::ci_matrix`] reads matrices.

use std::path::Path;

/// The services the sandbox images carry and the entry starts: the name `PROVEN_SERVICES`
/// gives, and the address the tests find it at.
pub const STARTED: &[(&str, &str)] = &[("redis", "127.0.0.1:6379")];

/// A service the project's CI starts, and where it says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiService {
    /// The service's usual name (`redis`, `mongodb`, `postgresql`, ...).
    pub name: String,
    /// The file that declares it.
    pub from: String,
}

impl CiService {
    /// Whether the sandbox starts it.
    pub fn started(&self) -> Option<&'static str> {
        STARTED
            .iter()
            .find(|(n, _)| *n == self.name)
            .map(|(_, at)| *at)
    }

    /// What the run's record says of it.
    pub fn words(&self) -> String {
        match self.started() {
            Some(at) => format!(
                "{} started on {at} before the tests: the project's CI starts it ({})",
                self.name, self.from
            ),
            None => format!(
                "{} not started: the project's CI starts it ({}), the sandbox has no {}; tests that need it cannot pass here",
                self.name, self.from, self.name
            ),
        }
    }
}

/// A service's usual name from what a CI file calls it (Travis' names, a container
/// image's name without its registry, owner or tag); None for what is no service of the
/// tests (Travis' `docker`, `xvfb`).
fn canonical(word: &str) -> Option<&'static str> {
    let word = word.trim().trim_matches(['"', '\'']);
    let image = word.rsplit('/').next().unwrap_or(word);
    let name = image
        .split([':', '@'])
        .next()
        .unwrap_or(image)
        .to_ascii_lowercase();
    Some(match name.as_str() {
        "redis" | "redis-server" | "redis-stack" | "valkey" => "redis",
        "mongodb" | "mongo" => "mongodb",
        "mysql" | "mariadb" => "mysql",
        "postgresql" | "postgres" | "postgis" => "postgresql",
        "memcached" => "memcached",
        "rabbitmq" => "rabbitmq",
        "elasticsearch" => "elasticsearch",
        "cassandra" => "cassandra",
        "couchdb" => "couchdb",
        "riak" => "riak",
        "neo4j" => "neo4j",
        _ => return None,
    })
}

/// The images a workflow's `services:` blocks name (`image: redis:7`), in order.
fn workflow_images(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    // The indentation of the `services:` block being read, if one is.
    let mut inside: Option<usize> = None;
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or_default();
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if inside.is_some_and(|at| indent <= at) {
            inside = None;
        }
        let body = line.trim();
        if body == "services:" {
            inside = Some(indent);
            continue;
        }
        if inside.is_some()
            && let Some(image) = body.strip_prefix("image:")
        {
            found.push(image.trim().to_string());
        }
    }
    found
}

/// The services the tree's CI starts (Travis, then its workflows), each once.
pub fn ci_services(src: &Path) -> Vec<CiService> {
    let mut out: Vec<CiService> = Vec::new();
    let mut add = |word: &str, from: &str| {
        if let Some(name) = canonical(word)
            && !out.iter().any(|s| s.name == name)
        {
            out.push(CiService {
                name: name.to_string(),
                from: from.to_string(),
            });
        }
    };
    if let Ok(text) = std::fs::read_to_string(src.join(".travis.yml")) {
        for item in crate::ci_matrix::items(&text, &["services"]) {
            add(&item, ".travis.yml services");
        }
    }
    for file in crate::ci_matrix::workflows(src) {
        if let Ok(text) = std::fs::read_to_string(src.join(&file)) {
            for image in workflow_images(&text) {
                add(&image, &format!("{file} services"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::tree;

    #[test]
    fn travis_and_workflow_services_are_read_and_only_redis_is_started() {
        let dir = tree(&[
            (
                ".travis.yml",
                "language: node_js\nnode_js:\n  - '0.10'\nservices:\n  - redis-server\n  - mongodb\n  - xvfb\n",
            ),
            (
                ".github/workflows/ci.yml",
                "jobs:\n  test:\n    runs-on: ubuntu-latest\n    services:\n      db:\n        image: postgres:15 # the database\n        env:\n          POSTGRES_PASSWORD: x\n      cache:\n        image: docker.io/library/redis:7-alpine\n    steps:\n      - uses: actions/checkout@v4\n      - run: docker run image: mysql\n",
            ),
        ]);
        let found = ci_services(dir.path());
        let names: Vec<(&str, &str)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.from.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("redis", ".travis.yml services"),
                ("mongodb", ".travis.yml services"),
                ("postgresql", ".github/workflows/ci.yml services"),
            ]
        );
        assert_eq!(found[0].started(), Some("127.0.0.1:6379"));
        assert!(
            found[0]
                .words()
                .starts_with("redis started on 127.0.0.1:6379")
        );
        assert_eq!(found[1].started(), None);
        assert!(
            found[1].words().contains("the sandbox has no mongodb"),
            "{}",
            found[1].words()
        );
        assert!(ci_services(tree(&[("README.md", "services: redis")]).path()).is_empty());
    }
}
