//! Session stores at 10,000 items in one session among 1,000 sessions, each
//! beside its floor in the same run:
//!
//! * `file/append`: one item appended (`FileSessionStore`: the last line
//!   read for the version, the line appended and synced) vs.
//!   `file/floor_append`: open, write one line, `fdatasync`;
//! * `file/load`: the whole session read vs. `file/floor_decode`: the file
//!   read and each line decoded into a `Message` (what any store of JSON
//!   items must do), and `file/floor_read`: the bytes alone;
//! * `sqlite/append`: one item appended through `Sql` (a compare-and-set
//!   of the version, the row, a commit) vs. `sqlite/floor_insert`: one
//!   `INSERT` (autocommit) on a pool of its own, with the store's journal
//!   (WAL, `synchronous = NORMAL`);
//! * `sqlite/load`: the whole session read vs. `sqlite/floor_select`: one
//!   `SELECT` of the same rows, each decoded into a `Message`.
//!
//! Run: `cargo bench -p skill-kit --features sql --bench sessions`.

use std::hint::black_box;
use std::io::Write;

use criterion::{Criterion, criterion_group, criterion_main};
use skillkit::agent::session::{FileSessionStore, SessionItem, SessionStore};
use skillkit::llm::Message;

const ITEMS: usize = 10_000;
const SESSIONS: usize = 1_000;
/// Items of each of the other sessions.
const OTHERS: usize = 10;

fn message(i: usize) -> Message {
    Message::user(format!(
        "Message number {i}: please look at the report and sum it up."
    ))
}

/// Fills `store`: session `big` with `ITEMS` items, and `SESSIONS - 1` others.
async fn fill(store: &dyn SessionStore) -> u64 {
    let batch: Vec<Message> = (0..ITEMS).map(message).collect();
    let mut version = 0;
    for chunk in batch.chunks(500) {
        version = store.append("big", version, chunk).await.expect("append");
    }
    let others: Vec<Message> = (0..OTHERS).map(message).collect();
    for s in 1..SESSIONS {
        store
            .append(&format!("s{s:04}"), 0, &others)
            .await
            .expect("append");
    }
    version
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");

    // The file store.
    let files = FileSessionStore::new(dir.path().join("files"));
    let mut version = rt.block_on(fill(&files));
    let mut group = c.benchmark_group("sessions/file");
    group.sample_size(30);
    group.bench_function("append", |b| {
        b.iter(|| {
            version = rt
                .block_on(files.append("big", version, &[message(0)]))
                .expect("append");
        })
    });
    let floor = dir.path().join("floor.jsonl");
    let line = serde_json::to_vec(&message(0)).expect("json");
    group.bench_function("floor_append", |b| {
        b.iter(|| {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&floor)
                .expect("open");
            file.write_all(&line).expect("write");
            file.write_all(b"\n").expect("write");
            file.sync_data().expect("sync");
        })
    });
    group.bench_function("load", |b| {
        b.iter(|| black_box(rt.block_on(files.load("big", None)).expect("load")))
    });
    let path = dir.path().join("files").join("big.jsonl");
    group.bench_function("floor_decode", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&path).expect("read");
            let items: Vec<SessionItem> = bytes
                .split(|&b| b == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| serde_json::from_slice(line).expect("a line"))
                .collect();
            black_box(items)
        })
    });
    group.bench_function("floor_read", |b| {
        b.iter(|| black_box(std::fs::read(&path).expect("read")))
    });
    group.finish();

    // SQLite through the SQL provider.
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("sessions.db").display()
    );
    let sql = skillkit::Sql::open(&url).expect("open");
    let mut version = rt.block_on(fill(&sql));
    let floor_options = <sqlx::sqlite::SqliteConnectOptions as std::str::FromStr>::from_str(&url)
        .expect("the floor's URL")
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Normal);
    let pool = rt
        .block_on(sqlx::SqlitePool::connect_with(floor_options))
        .expect("the floor's pool");
    rt.block_on(
        sqlx::query("CREATE TABLE IF NOT EXISTS floor (session TEXT, seq BIGINT, message TEXT)")
            .execute(&pool),
    )
    .expect("floor table");
    let text = String::from_utf8(line).expect("utf-8");
    let mut group = c.benchmark_group("sessions/sqlite");
    group.sample_size(30);
    group.bench_function("append", |b| {
        b.iter(|| {
            version = rt
                .block_on(sql.append("big", version, &[message(0)]))
                .expect("append");
        })
    });
    let mut seq = 0i64;
    group.bench_function("floor_insert", |b| {
        b.iter(|| {
            seq += 1;
            rt.block_on(
                sqlx::query("INSERT INTO floor (session, seq, message) VALUES ($1, $2, $3)")
                    .bind("big")
                    .bind(seq)
                    .bind(&text)
                    .execute(&pool),
            )
            .expect("insert")
        })
    });
    group.bench_function("load", |b| {
        b.iter(|| black_box(rt.block_on(sql.load("big", None)).expect("load")))
    });
    group.bench_function("floor_select", |b| {
        b.iter(|| {
            let rows: Vec<(i64, String)> = rt
                .block_on(
                    sqlx::query_as(
                        "SELECT seq, message FROM skillkit_session_items WHERE session = $1 ORDER BY seq",
                    )
                    .bind("big")
                    .fetch_all(&pool),
                )
                .expect("select");
            let items: Vec<Message> = rows
                .iter()
                .map(|(_, text)| serde_json::from_str(text).expect("a row"))
                .collect();
            black_box(items)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
