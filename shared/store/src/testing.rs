//! Fresh stores for tests: a temporary SQLite file, or a new Postgres database per test.
//!
//! Postgres is reached at `PROVEN_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`); each test creates `proven_t_<uuid>` and
//! drops it in [`TestStore::cleanup`]. Databases left by a crashed run are swept by
//! `scripts/test` before the suite starts. A Postgres that cannot be reached fails the
//! test with a message naming what to start: tests never skip quietly.

use crate::{NewPipelineReview, Store};

/// A review of `/repo` from `a` to `b`, of no tenant, at priority 0, with an empty request:
/// what a test submits when the review's content does not matter (override fields with
/// `NewPipelineReview { priority: 2, ..pipeline_review("r1") }`).
pub fn pipeline_review(id: &str) -> NewPipelineReview {
    NewPipelineReview {
        id: id.into(),
        tenant_id: None,
        repository: "/repo".into(),
        base_rev: "a".into(),
        head_rev: "b".into(),
        priority: 0,
        batch_id: None,
        pr_key: None,
        request: "{}".into(),
        deadline_us: None,
        trace_id: None,
    }
}

/// Which backend a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub struct TestStore {
    pub store: Store,
    /// The URL the store was opened with (for child processes: `PROVEN_DATABASE_URL`).
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg_name: Option<String>,
}

pub fn postgres_admin_url() -> String {
    std::env::var("PROVEN_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

impl TestStore {
    pub async fn new(backend: Backend) -> TestStore {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temporary directory");
                let path = dir.path().join("proven.db");
                let url = format!("sqlite://{}?mode=rwc", path.display());
                let store = Store::open_sqlite(&path).await.expect("open SQLite store");
                TestStore {
                    store,
                    url,
                    _dir: Some(dir),
                    pg_name: None,
                }
            }
            Backend::Postgres => {
                let name = format!("proven_t_{}", uuid::Uuid::now_v7().simple());
                let admin = postgres_admin_url();
                sqlx::any::install_default_drivers();
                let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&admin)
                    .await
                    .unwrap_or_else(|e| {
                        panic!(
                            "Postgres is needed for this test and is not reachable at {admin}: {e}. \
                             Start it (scripts/test does) or set PROVEN_TEST_POSTGRES_URL."
                        )
                    });
                sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&mut conn)
                    .await
                    .expect("create test database");
                let url = match admin.rfind('/') {
                    Some(i) => format!("{}/{name}", &admin[..i]),
                    None => panic!("PROVEN_TEST_POSTGRES_URL {admin:?} has no database path"),
                };
                let store = Store::open_url(&url).await.expect("open Postgres store");
                TestStore {
                    store,
                    url,
                    _dir: None,
                    pg_name: Some(name),
                }
            }
        }
    }

    /// Drops the Postgres database (SQLite files go with the temporary directory).
    pub async fn cleanup(self) {
        self.store.close().await;
        let Some(name) = self.pg_name else { return };
        if let Ok(mut conn) =
            <sqlx::AnyConnection as sqlx::Connection>::connect(&postgres_admin_url()).await
        {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut conn)
            .await;
        }
    }
}

/// Runs each named test body (an `async fn(Backend)` in the calling module) twice: once on
/// a temporary SQLite file, once on a fresh Postgres database. Expands to the modules
/// `sqlite` and `postgres`, one `#[tokio::test]` per body in each; the caller depends on
/// tokio.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
              async fn $name() { super::$name($crate::testing::Backend::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
              async fn $name() { super::$name($crate::testing::Backend::Postgres).await })*
        }
    };
}
