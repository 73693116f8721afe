//! The store against both backends: every test body runs once on a temporary SQLite file
//! and once on a fresh Postgres database.

macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
              async fn $name() { super::$name(proven_store::testing::Backend::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
              async fn $name() { super::$name(proven_store::testing::Backend::Postgres).await })*
        }
    };
}

mod advisories;
mod pipeline;
