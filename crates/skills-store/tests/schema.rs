//! Schema versions: a fresh database is migrated to the current version, a
//! reopened one is left alone, and one written by a newer version of the
//! code is refused with a clear error.

use skills_agent::StoreErrorKind;
use skills_store::{
    POSTGRES_SCHEMA_VERSION, PostgresStore, SQLITE_SCHEMA_VERSION, SqliteStore, StoreUrl,
    open_store,
};

use crate::fixture::{postgres_url, unique_schema};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_migrates_once_and_refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), SQLITE_SCHEMA_VERSION);
    drop(store);
    let again = SqliteStore::open(&path).await.unwrap();
    assert_eq!(again.schema_version().await.unwrap(), SQLITE_SCHEMA_VERSION);
    drop(again);

    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(conn);
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Schema, "{err}");
    assert!(
        err.message()
            .contains("version 99, newer than this program knows (1)"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_refuses_a_file_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "just some text, long enough to be a header ....................",
    )
    .unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Backend, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_migrates_once_and_refuses_a_newer_schema() {
    let url = postgres_url();
    let schema = unique_schema();
    let store = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    assert_eq!(
        store.schema_version().await.unwrap(),
        POSTGRES_SCHEMA_VERSION
    );
    let again = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap();
    assert_eq!(
        again.schema_version().await.unwrap(),
        POSTGRES_SCHEMA_VERSION
    );

    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute(
            &format!("INSERT INTO \"{schema}\".skills_schema (version) VALUES (99)"),
            &[],
        )
        .await
        .unwrap();
    let err = PostgresStore::connect_in_schema(&url, &schema)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Schema, "{err}");
    assert!(
        err.message()
            .contains("version 99, newer than this program knows (1)"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_starting_together_migrate_one_schema_once() {
    let url = postgres_url();
    let schema = unique_schema();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (url, schema) = (url.clone(), schema.clone());
            tokio::spawn(async move { PostgresStore::connect_in_schema(&url, &schema).await })
        })
        .collect();
    for task in tasks {
        let store = task.await.unwrap().unwrap();
        assert_eq!(
            store.schema_version().await.unwrap(),
            POSTGRES_SCHEMA_VERSION
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_urls() {
    assert_eq!(
        StoreUrl::parse("sqlite:///tmp/a.db").unwrap(),
        StoreUrl::Sqlite("/tmp/a.db".into())
    );
    assert_eq!(
        StoreUrl::parse("sqlite://rel/a.db").unwrap(),
        StoreUrl::Sqlite("rel/a.db".into())
    );
    assert!(matches!(
        StoreUrl::parse("postgresql://u@h/db").unwrap(),
        StoreUrl::Postgres(_)
    ));
    for bad in ["sqlite://", "mysql://x", "sessions.db", ""] {
        let err = StoreUrl::parse(bad).unwrap_err();
        assert_eq!(err.kind(), StoreErrorKind::Invalid, "{bad}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("u.db").display());
    let store = open_store(&url).await.unwrap();
    assert_eq!(store.kind(), "sqlite");
    let err = PostgresStore::connect_in_schema("postgres://u@127.0.0.1/db", "Bad-Name")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), StoreErrorKind::Invalid, "{err}");
}
