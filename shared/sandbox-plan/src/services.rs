//! The services a project's CI starts beside its tests: Travis' `services:` list, a GitHub
//! workflow's `services:` containers (by their image). Those the sandbox images carry
//! ([`STARTED`]) are started in the run's own container on the loopback, nothing kept on
//! disk, before the tests (`proven-entry`, told by `PROVEN_SERVICES`); the others are named
//! in the run's record as not started, so a test failing for want of its database says so.
//! Read as text, as [`crate::ci_matrix`] reads matrices.

use std::path::Path;

/// The services the sandbox images carry and the entry starts: the name `PROVEN_SERVICES`
/// gives, and the address the tests find it at.
pub const STARTED: &[(&str, &str)] = &[
    ("redis", "127.0.0.1:6379"),
    ("postgresql", "127.0.0.1:5432"),
    ("mysql", "127.0.0.1:3306"),
];

/// The variables of a service container (a workflow's `services: db: env:`) the entry
/// reads to make the server as that image would: its superuser and its first database.
/// Only these, and only values the entry can pass on as they are ([`plain_value`]).
const SERVICE_ENV: &[(&str, &str)] = &[
    ("postgresql", "POSTGRES_USER"),
    ("postgresql", "POSTGRES_DB"),
    ("mysql", "MYSQL_ROOT_PASSWORD"),
    ("mysql", "MYSQL_DATABASE"),
    ("mysql", "MYSQL_USER"),
    ("mysql", "MYSQL_PASSWORD"),
];

/// A service the project's CI starts, and where it says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiService {
    /// The service's usual name (`redis`, `mongodb`, `postgresql`, ...).
    pub name: String,
    /// The file that declares it.
    pub from: String,
    /// What the service container's `env:` sets of [`SERVICE_ENV`] (`POSTGRES_DB: app`).
    pub env: Vec<(String, String)>,
}

impl CiService {
    /// Whether the sandbox starts it.
    pub fn started(&self) -> Option<&'static str> {
        STARTED
            .iter()
            .find(|(n, _)| *n == self.name)
            .map(|(_, at)| *at)
    }

    /// The variables that tell the entry how to make it (`PROVEN_POSTGRES_DB=app`): the
    /// container's own names, prefixed.
    pub fn run_env(&self) -> Vec<String> {
        self.env
            .iter()
            .map(|(k, v)| format!("PROVEN_{k}={v}"))
            .collect()
    }

    /// What the run's record says of it.
    pub fn words(&self) -> String {
        let made = if self.env.is_empty() {
            String::new()
        } else {
            // A password is the workflow's own, in the tree; the record names it, not its value.
            let set: Vec<String> = self
                .env
                .iter()
                .map(|(k, v)| {
                    if k.contains("PASSWORD") {
                        format!("{k} as given")
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect();
            format!(" with {}", set.join(", "))
        };
        match self.started() {
            Some(at) => format!(
                "{} started on {at}{made} before the tests: the project's CI starts it ({})",
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
    workflow_containers(text)
        .into_iter()
        .map(|(image, _)| image)
        .collect()
}

/// The containers a workflow's `services:` blocks start: each one's image and the
/// `KEY: value` lines of its `env:` block, in order.
fn workflow_containers(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut found: Vec<(String, Vec<(String, String)>)> = Vec::new();
    // The indentation of the `services:` block being read, if one is; of the container
    // (its name's line) within it; of its `env:` block.
    let mut inside: Option<usize> = None;
    let mut container: Option<usize> = None;
    let mut env: Option<usize> = None;
    // The container being read: its image and env, pushed when it ends.
    let mut image: Option<String> = None;
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut end = |image: &mut Option<String>, vars: &mut Vec<(String, String)>| {
        if let Some(i) = image.take() {
            found.push((i, std::mem::take(vars)));
        }
        vars.clear();
    };
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or_default();
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if env.is_some_and(|at| indent <= at) {
            env = None;
        }
        if container.is_some_and(|at| indent <= at) {
            end(&mut image, &mut vars);
            container = None;
        }
        if inside.is_some_and(|at| indent <= at) {
            inside = None;
        }
        let body = line.trim();
        if body == "services:" {
            inside = Some(indent);
            continue;
        }
        let Some(at) = inside else { continue };
        if container.is_none() && indent > at {
            container = Some(indent);
            continue;
        }
        if let Some(i) = body.strip_prefix("image:") {
            image = Some(i.trim().to_string());
        } else if body == "env:" {
            env = Some(indent);
        } else if env.is_some()
            && let Some((k, v)) = body.split_once(':')
        {
            let v = v.trim().trim_matches(['"', '\'']);
            vars.push((k.trim().to_string(), v.to_string()));
        }
    }
    end(&mut image, &mut vars);
    found
}

/// A value the entry passes on as it is, in a name or a quoted password: letters, digits
/// and `_ - . @ ! # % + = : , / ~`, at most 63 (no quote, backslash, `$`, backtick or
/// space; a workflow's `${{ … }}` expression is none either).
fn plain_value(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.@!#%+=:,/~".contains(c))
}

/// The actions that start a service on the runner itself (no container), with the service
/// and the inputs that say how to make it, as the variables of [`SERVICE_ENV`] name them.
/// An input left out has the action's default, which is the container's too (root with no
/// password; the superuser `postgres`).
const SETUP_ACTIONS: &[(&str, &str, Inputs)] = &[
    (
        "shogo82148/actions-setup-mysql",
        "mysql",
        &[
            ("root-password", "MYSQL_ROOT_PASSWORD"),
            ("user", "MYSQL_USER"),
            ("password", "MYSQL_PASSWORD"),
        ],
    ),
    (
        "ankane/setup-mysql",
        "mysql",
        &[("database", "MYSQL_DATABASE")],
    ),
    (
        "ankane/setup-mariadb",
        "mysql",
        &[("database", "MYSQL_DATABASE")],
    ),
    ("mirromutth/mysql-action", "mysql", MYSQL_ACTION_INPUTS),
    ("getong/mariadb-action", "mysql", MYSQL_ACTION_INPUTS),
    (
        "ankane/setup-postgres",
        "postgresql",
        &[("database", "POSTGRES_DB")],
    ),
    (
        "harmon758/postgresql-action",
        "postgresql",
        &[
            ("postgresql db", "POSTGRES_DB"),
            ("postgresql user", "POSTGRES_USER"),
        ],
    ),
    (
        "ikalnytskyi/action-setup-postgres",
        "postgresql",
        &[("username", "POSTGRES_USER"), ("database", "POSTGRES_DB")],
    ),
    ("supercharge/redis-github-action", "redis", &[]),
    ("shogo82148/actions-setup-redis", "redis", &[]),
    ("zhulik/redis-action", "redis", &[]),
    ("supercharge/mongodb-github-action", "mongodb", &[]),
    ("niden/actions-memcached", "memcached", &[]),
];

/// Pairs of names: an action's input and the variable it gives, or a variable and its value.
type Inputs = &'static [(&'static str, &'static str)];

/// A service a step starts: its name, where, and the variables that make it.
struct StepService {
    service: &'static str,
    from: String,
    env: Vec<(String, String)>,
}

/// The inputs of the MySQL and MariaDB actions that run the container in a step.
const MYSQL_ACTION_INPUTS: &[(&str, &str)] = &[
    ("mysql root password", "MYSQL_ROOT_PASSWORD"),
    ("mysql database", "MYSQL_DATABASE"),
    ("mysql user", "MYSQL_USER"),
    ("mysql password", "MYSQL_PASSWORD"),
];

/// The servers an Ubuntu runner has installed and stopped, which a step starts with
/// `systemctl start mysql` (or `service mysql start`, `/etc/init.d/mysql start`), and how
/// the runner has them made: MySQL's root has the password `root`.
const RUNNER_SERVERS: &[(&str, &str, Inputs)] = &[
    ("mysql", "mysql", &[("MYSQL_ROOT_PASSWORD", "root")]),
    ("postgresql", "postgresql", &[]),
];

/// The server a command starts of those the runner has ([`RUNNER_SERVERS`]).
fn starts_runner_server(command: &str) -> Option<usize> {
    let words: Vec<&str> = command
        .split_whitespace()
        .filter(|w| *w != "sudo")
        .collect();
    let unit = match words.as_slice() {
        ["systemctl", "start", unit, ..] | ["service", unit, "start", ..] => *unit,
        [init, "start", ..] => init.strip_prefix("/etc/init.d/")?,
        _ => return None,
    };
    let unit = unit.strip_suffix(".service").unwrap_or(unit);
    RUNNER_SERVERS.iter().position(|(name, _, _)| *name == unit)
}

/// The database a command creates (`mysql -e 'create database gotest;'`, `psql -c "CREATE
/// DATABASE app"`, `createdb app`), if it creates one whose name is plain.
fn created_database(command: &str) -> Option<String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let name = if let Some(at) = words.iter().position(|w| *w == "createdb") {
        words[at + 1..]
            .iter()
            .find(|w| !w.starts_with('-') && !w.contains('='))
            .copied()
    } else {
        let lower = command.to_ascii_lowercase();
        let at = lower.find("create database ")? + "create database ".len();
        let rest = command[at..].trim_start();
        let rest = if rest.to_ascii_lowercase().starts_with("if not exists ") {
            rest["if not exists ".len()..].trim_start()
        } else {
            rest
        };
        rest.split(|c: char| c.is_whitespace() || c == ';').next()
    }?;
    let name = name.trim_matches(['"', '\'', '`', ';']);
    (plain_value(name) && !name.contains(['/', ':'])).then(|| name.to_string())
}

/// An input's value, with `${{ env.NAME }}` read from the job's and the workflow's
/// variables; None for another expression or a value the entry cannot pass on.
fn input_value(value: &str, env: &[(String, String)]) -> Option<String> {
    let value = value.trim();
    let value = match value.strip_prefix("${{") {
        Some(expr) => {
            let name = expr.strip_suffix("}}")?.trim().strip_prefix("env.")?;
            env.iter().rev().find(|(k, _)| k == name)?.1.as_str()
        }
        None => value,
    };
    plain_value(value).then(|| value.to_string())
}

/// The services a workflow's steps start on the runner itself: a setup action
/// ([`SETUP_ACTIONS`]) or a command that starts a server the runner has
/// ([`RUNNER_SERVERS`]), each with the variables that make it as the step does; a database
/// a later command of the job creates is the first database, where none is given.
fn step_services(file: &str, text: &str) -> Vec<StepService> {
    let workflow_env = crate::ci_steps::workflow_env(text);
    let mut found = Vec::new();
    for job in crate::ci_steps::jobs(text) {
        let mut env = workflow_env.clone();
        env.extend(job.env.iter().cloned());
        let mut started: Vec<StepService> = Vec::new();
        for action in &job.actions {
            let Some((name, service, inputs)) = SETUP_ACTIONS
                .iter()
                .find(|(name, _, _)| action.name.eq_ignore_ascii_case(name))
            else {
                continue;
            };
            let vars = inputs
                .iter()
                .filter_map(|(input, var)| {
                    let (_, value) = action.with.iter().find(|(k, _)| k == input)?;
                    Some((var.to_string(), input_value(value, &env)?))
                })
                .collect();
            started.push(StepService {
                service,
                from: format!("{file} job {} step {name}", job.name),
                env: vars,
            });
        }
        for command in &job.commands {
            if let Some(at) = starts_runner_server(command) {
                let (unit, service, vars) = RUNNER_SERVERS[at];
                let vars = vars
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                started.push(StepService {
                    service,
                    from: format!("{file} job {} step `… start {unit}`", job.name),
                    env: vars,
                });
            }
        }
        if let Some(db) = job.commands.iter().find_map(|c| created_database(c)) {
            for StepService { service, env, .. } in &mut started {
                let key = match *service {
                    "mysql" => "MYSQL_DATABASE",
                    "postgresql" => "POSTGRES_DB",
                    _ => continue,
                };
                if !env.iter().any(|(k, _)| k == key) {
                    env.push((key.to_string(), db.clone()));
                }
            }
        }
        found.extend(started);
    }
    found
}

/// The services the tree's CI starts (Travis, then its workflows), each once.
pub fn ci_services(src: &Path) -> Vec<CiService> {
    let mut out: Vec<CiService> = Vec::new();
    let mut add = |word: &str, from: &str, env: &[(String, String)]| {
        if let Some(name) = canonical(word)
            && !out.iter().any(|s| s.name == name)
        {
            let env = env
                .iter()
                .filter(|(k, v)| {
                    SERVICE_ENV.iter().any(|(s, key)| *s == name && key == k) && plain_value(v)
                })
                .cloned()
                .collect();
            out.push(CiService {
                name: name.to_string(),
                from: from.to_string(),
                env,
            });
        }
    };
    if let Ok(text) = std::fs::read_to_string(src.join(".travis.yml")) {
        for item in crate::ci_matrix::items(&text, &["services"]) {
            add(&item, ".travis.yml services", &[]);
        }
        // `addons: postgresql: "9.6"`, `addons: mariadb: "10.3"`: Travis starts those too.
        for addon in ["postgresql", "mariadb"] {
            if !crate::ci_matrix::items(&text, &[addon]).is_empty() {
                add(addon, ".travis.yml addons", &[]);
            }
        }
    }
    for file in crate::ci_matrix::workflows(src) {
        if let Ok(text) = std::fs::read_to_string(src.join(&file)) {
            for (image, env) in workflow_containers(&text) {
                add(&image, &format!("{file} services"), &env);
            }
            for step in step_services(&file, &text) {
                add(step.service, &step.from, &step.env);
            }
        }
    }
    out
}

/// The Redis servers the images carry beside Debian's (built by `deploy/sandbox/era-redis`
/// at `/opt/redis/VERSION`), one of each series, with the day that series was first
/// released.
pub const ERA_REDIS: &[(&str, &str)] = &[
    ("3.0.5", "2015-04-01"),
    ("3.2.6", "2016-05-06"),
    ("5.0.6", "2018-10-17"),
    ("6.2.14", "2021-02-22"),
];

/// The day the series of the images' own Redis (Debian's 7.0) was first released: a tree
/// of that day or later runs that one.
const IMAGE_REDIS_SINCE: &str = "2022-04-27";

/// The Redis of a project's era, put first on the run's PATH by the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EraRedis {
    pub version: &'static str,
    /// Why this one: the declaration or the date, and what in the tree needs a Redis.
    pub because: String,
}

impl EraRedis {
    /// Where the images hold it.
    pub fn dir(&self) -> String {
        format!("/opt/redis/{}", self.version)
    }

    /// The variable that tells the entry (`PROVEN_REDIS`).
    pub fn env(&self) -> String {
        format!("PROVEN_REDIS={}", self.dir())
    }

    /// What the run's record says of it.
    pub fn words(&self) -> String {
        format!(
            "redis-server of the project's era first on PATH: Redis {} ({}), {}",
            self.version,
            self.dir(),
            self.because
        )
    }
}

/// The Redis a tree's tests should meet, where it is not the images' own: a tree whose CI
/// starts Redis, or whose own files start `redis-server` (node_redis' test helper, a
/// conftest's fixture), gets the series its CI names (`image: redis:5`), else the newest
/// series the images carry that was out on the base's date (`as_of`, RFC 3339). A tree of
/// today, or one that starts no Redis, runs with the images' own (None).
pub fn era_redis(src: &Path, services: &[CiService], as_of: Option<&str>) -> Option<EraRedis> {
    let needs = match services.iter().find(|s| s.name == "redis") {
        Some(service) => format!("the project's CI starts it ({})", service.from),
        // The tree is read only where the date would choose another Redis than the images'.
        None if as_of.is_none_or(|at| at.get(..10).is_none_or(|day| day >= IMAGE_REDIS_SINCE)) => {
            return None;
        }
        None => format!("the tests start redis-server ({})", starts_redis(src)?),
    };
    if let Some((tag, file)) = declared_redis(src) {
        let wanted: Vec<&str> = tag.split('.').take(2).collect();
        let series = |v: &str| v.split('.').take(wanted.len()).eq(wanted.iter().copied());
        return match ERA_REDIS.iter().find(|(v, _)| series(v)) {
            Some((version, _)) => Some(EraRedis {
                version,
                because: format!("the series {file} names (redis:{tag}); {needs}"),
            }),
            // 7 and later: the images' own; a series the sandbox lacks: by the date below.
            None if wanted[0].parse::<u32>().is_ok_and(|m| m >= 7) => None,
            None => by_date(as_of?, &needs),
        };
    }
    by_date(as_of?, &needs)
}

fn by_date(as_of: &str, needs: &str) -> Option<EraRedis> {
    let day = as_of.get(..10)?;
    if day >= IMAGE_REDIS_SINCE {
        return None;
    }
    let (version, since) = ERA_REDIS
        .iter()
        .rev()
        .find(|(_, since)| *since <= day)
        .unwrap_or(&ERA_REDIS[0]);
    let which = if *since <= day {
        "the newest series the sandbox carries that was out on the base's date"
    } else {
        "the oldest series the sandbox carries, the base's date being older still"
    };
    Some(EraRedis {
        version,
        because: format!("{which} ({day}); {needs}"),
    })
}

/// The tag of the Redis image a workflow's `services:` names (`redis:5.0-alpine` gives
/// `5.0`), with its file; None for no tag or `latest`.
fn declared_redis(src: &Path) -> Option<(String, String)> {
    crate::ci_matrix::workflows(src)
        .into_iter()
        .find_map(|file| {
            let text = std::fs::read_to_string(src.join(&file)).ok()?;
            workflow_images(&text).into_iter().find_map(|image| {
                (canonical(&image)? == "redis").then_some(())?;
                let image = image.trim().trim_matches(['"', '\'']);
                let tag = image.rsplit('/').next()?.split_once(':')?.1;
                let version: String = tag
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let version = version.trim_end_matches('.');
                (!version.is_empty()).then(|| (version.to_string(), file.clone()))
            })
        })
}

/// The first file of the tree's own code that starts `redis-server` (a test helper that
/// spawns it, a fixture, a script of the suite); documentation, dependencies and files
/// over 256 KiB are not read, and at most 5000 files are.
fn starts_redis(src: &Path) -> Option<String> {
    const CODE: &[&str] = &[
        "js", "mjs", "cjs", "ts", "py", "rb", "go", "rs", "sh", "json", "yml", "yaml", "toml",
        "cfg", "ini", "conf",
    ];
    const NOT_OURS: &[&str] = &[
        ".git",
        "node_modules",
        "vendor",
        "third_party",
        ".tox",
        "target",
        "dist",
    ];
    let walk = walkdir::WalkDir::new(src).into_iter().filter_entry(|e| {
        !(e.file_type().is_dir() && NOT_OURS.contains(&&*e.file_name().to_string_lossy()))
    });
    for entry in walk
        .flatten()
        .filter(|e| e.file_type().is_file())
        .take(5000)
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        let code = name == "Makefile"
            || path
                .extension()
                .is_some_and(|x| CODE.contains(&&*x.to_string_lossy()));
        if !code || entry.metadata().map_or(true, |m| m.len() > 256 * 1024) {
            continue;
        }
        if let Ok(text) = std::fs::read(path)
            && memchr::memmem::find(&text, b"redis-server").is_some()
        {
            let rel = path.strip_prefix(src).unwrap_or(path);
            return Some(rel.to_string_lossy().into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::tree;

    #[test]
    fn travis_and_workflow_services_are_read_and_those_the_images_carry_are_started() {
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
        // The database's container is made as its image would: the env the entry reads,
        // and only that (POSTGRES_PASSWORD: trust takes any).
        assert_eq!(found[2].started(), Some("127.0.0.1:5432"));
        assert_eq!(found[2].env, []);
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
        // Travis' addons start a database too.
        let addons = tree(&[(
            ".travis.yml",
            "language: python\naddons:\n  postgresql: \"9.6\"\n  mariadb: '10.3'\n",
        )]);
        let names: Vec<(String, String)> = ci_services(addons.path())
            .into_iter()
            .map(|s| (s.name, s.from))
            .collect();
        assert_eq!(
            names,
            [
                ("postgresql".to_string(), ".travis.yml addons".to_string()),
                ("mysql".to_string(), ".travis.yml addons".to_string()),
            ]
        );
    }

    /// A database a workflow starts in a step rather than as a container: go-sql-driver's
    /// `shogo82148/actions-setup-mysql` with its user from the workflow's `env:`, then a
    /// step that creates the tests' database; a job that starts the runner's own
    /// PostgreSQL with `systemctl`; another action's expression input left to the default.
    #[test]
    fn a_database_a_setup_step_starts_is_made_as_the_step_makes_it() {
        let mysql = "env:\n  MYSQL_TEST_USER: gotest\n  MYSQL_TEST_PASS: secret\njobs:\n  test:\n    runs-on: ${{ matrix.os }}\n    steps:\n      - uses: actions/checkout@v4\n      - uses: shogo82148/actions-setup-mysql@076e636c # v1.52.1\n        with:\n          mysql-version: ${{ matrix.mysql }}\n          user: ${{ env.MYSQL_TEST_USER }}\n          password: ${{ env.MYSQL_TEST_PASS }}\n          my-cnf: |\n            local_infile=1\n      - name: setup database\n        run: |\n          mysql --user 'root' --host '127.0.0.1' -e 'create database gotest;'\n      - name: test\n        run: go test -v ./...\n";
        let postgres = "jobs:\n  unit:\n    runs-on: ubuntu-22.04\n    steps:\n      - name: database\n        run: |\n          sudo systemctl start postgresql.service\n          sudo -u postgres createdb shop_test\n      - uses: supercharge/redis-github-action@1.8.0\n        with:\n          redis-version: ${{ matrix.redis }}\n      - run: pytest\n";
        let dir = tree(&[
            (".github/workflows/test.yml", mysql),
            (".github/workflows/unit.yml", postgres),
        ]);
        let found = ci_services(dir.path());
        let seen: Vec<(&str, &str)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.from.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "mysql",
                    ".github/workflows/test.yml job test step shogo82148/actions-setup-mysql"
                ),
                (
                    "redis",
                    ".github/workflows/unit.yml job unit step supercharge/redis-github-action"
                ),
                (
                    "postgresql",
                    ".github/workflows/unit.yml job unit step `… start postgresql`"
                ),
            ]
        );
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            found[0].env,
            env(&[
                ("MYSQL_USER", "gotest"),
                ("MYSQL_PASSWORD", "secret"),
                ("MYSQL_DATABASE", "gotest"),
            ])
        );
        assert_eq!(found[0].started(), Some("127.0.0.1:3306"));
        assert_eq!(found[1].env, []);
        assert_eq!(found[2].env, env(&[("POSTGRES_DB", "shop_test")]));
        // The runner's own MySQL has root's password `root`.
        let runner = tree(&[(
            ".github/workflows/ci.yml",
            "jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sudo /etc/init.d/mysql start\n      - run: mysql -uroot -proot -e \"CREATE DATABASE IF NOT EXISTS `app`\"\n",
        )]);
        let made = ci_services(runner.path());
        assert_eq!(made.len(), 1, "{made:?}");
        assert_eq!(
            made[0].env,
            env(&[("MYSQL_ROOT_PASSWORD", "root"), ("MYSQL_DATABASE", "app")])
        );
    }

    /// A workflow's PostgreSQL container names its superuser and database (`env:`); the
    /// entry makes the server with those, and a value the entry could not pass on as it is
    /// (an expression, a space) is left to the default.
    #[test]
    fn a_database_containers_user_and_database_are_read_from_its_env() {
        let dir = tree(&[(
            ".github/workflows/test.yml",
            "jobs:\n  test:\n    services:\n      postgres:\n        image: postgres:16\n        ports:\n          - 5432:5432\n        env:\n          POSTGRES_USER: app_user\n          POSTGRES_PASSWORD: secret\n          POSTGRES_DB: \"app_test\"\n        options: >-\n          --health-cmd pg_isready\n      other:\n        image: memcached\n        env:\n          POSTGRES_DB: ${{ matrix.db }}\n    env:\n      POSTGRES_USER: not-the-containers\n    steps:\n      - run: pytest\n",
        )]);
        let found = ci_services(dir.path());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0].env,
            [
                ("POSTGRES_USER".to_string(), "app_user".to_string()),
                ("POSTGRES_DB".to_string(), "app_test".to_string()),
            ]
        );
        assert_eq!(
            found[0].run_env(),
            [
                "PROVEN_POSTGRES_USER=app_user",
                "PROVEN_POSTGRES_DB=app_test"
            ]
        );
        assert!(
            found[0].words().starts_with(
                "postgresql started on 127.0.0.1:5432 with POSTGRES_USER=app_user, POSTGRES_DB=app_test before the tests"
            ),
            "{}",
            found[0].words()
        );
        assert_eq!(
            (found[1].name.as_str(), found[1].env.len()),
            ("memcached", 0)
        );
        assert!(!plain_value("a b") && !plain_value("${{ x }}") && !plain_value("it's"));
        assert!(plain_value("db-1_x") && plain_value("P@ss.w0rd!"));
    }

    /// node_redis of 2015 spawns `redis-server` from its test helper and asserts the replies
    /// of Redis 3.0; its CI names no service. The tree's own file is what asks for a Redis,
    /// and the base's date chooses the series.
    #[test]
    fn the_redis_a_tree_starts_is_the_one_of_its_date() {
        let helper = (
            "test/lib/redis-process.js",
            "var rp = spawn('redis-server', [confFile], {});\n",
        );
        let dir = tree(&[helper, ("package.json", "{}")]);
        let chosen = era_redis(dir.path(), &[], Some("2015-10-17T20:07:34Z")).expect("chosen");
        assert_eq!(chosen.version, "3.0.5");
        assert_eq!(chosen.env(), "PROVEN_REDIS=/opt/redis/3.0.5");
        assert!(
            chosen
                .words()
                .contains("out on the base's date (2015-10-17)")
                && chosen
                    .words()
                    .contains("the tests start redis-server (test/lib/redis-process.js)"),
            "{}",
            chosen.words()
        );
        let dated = |at| era_redis(dir.path(), &[], Some(at)).map(|c| c.version);
        assert_eq!(dated("2017-01-15T12:20:00Z"), Some("3.2.6"));
        assert_eq!(dated("2019-06-01T00:00:00Z"), Some("5.0.6"));
        assert_eq!(dated("2021-02-22T00:00:00Z"), Some("6.2.14"));
        assert_eq!(dated("2014-01-01T00:00:00Z"), Some("3.0.5"));
        // Of today's date: the images' own.
        assert_eq!(dated("2023-01-01T00:00:00Z"), None);
        // No date known: the images' own.
        assert_eq!(era_redis(dir.path(), &[], None), None);
        // A tree that starts no Redis is left alone, whatever its date; the server's name
        // in its documentation or in a dependency is not its own code starting it.
        let other = tree(&[
            ("README.md", "run redis-server first"),
            ("node_modules/redis-mock/index.js", "spawn('redis-server')"),
            ("index.js", "module.exports = 1;\n"),
        ]);
        assert_eq!(
            era_redis(other.path(), &[], Some("2015-10-17T00:00:00Z")),
            None
        );
    }

    /// A CI that starts Redis asks for one; the series its workflow's service names wins
    /// over the date, and a series of today is the images' own.
    #[test]
    fn the_redis_a_ci_names_is_chosen_over_the_date() {
        let workflow = |image: &str| {
            tree(&[(
                ".github/workflows/ci.yml",
                &format!(
                    "jobs:\n  test:\n    services:\n      cache:\n        image: {image}\n    steps:\n      - run: npm test\n"
                ),
            )])
        };
        let dir = workflow("redis:5.0-alpine");
        let services = ci_services(dir.path());
        let chosen =
            era_redis(dir.path(), &services, Some("2021-06-01T00:00:00Z")).expect("chosen");
        assert_eq!(chosen.version, "5.0.6");
        assert!(
            chosen
                .words()
                .contains("the series .github/workflows/ci.yml names (redis:5.0)"),
            "{}",
            chosen.words()
        );
        let dir = workflow("redis:7");
        let services = ci_services(dir.path());
        assert_eq!(
            era_redis(dir.path(), &services, Some("2016-01-01T00:00:00Z")),
            None
        );
        // No tag: the date chooses; the CI's service is what asks for it.
        let dir = workflow("redis");
        let services = ci_services(dir.path());
        let chosen =
            era_redis(dir.path(), &services, Some("2016-06-01T00:00:00Z")).expect("chosen");
        assert_eq!(chosen.version, "3.2.6");
        assert!(
            chosen
                .words()
                .contains("the project's CI starts it (.github/workflows/ci.yml services)")
        );
        // Travis' `services: redis-server` names no series.
        let dir = tree(&[(
            ".travis.yml",
            "language: python\nservices:\n  - redis-server\n",
        )]);
        let services = ci_services(dir.path());
        let chosen =
            era_redis(dir.path(), &services, Some("2019-01-01T00:00:00Z")).expect("chosen");
        assert_eq!(chosen.version, "5.0.6");
    }
}
