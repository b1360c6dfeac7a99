//! Session stores: the conformance every store passes (order, versions, a
//! stale writer refused, pop, fork, clear, list, last N, ids that are not
//! paths), concurrent appenders in two processes, and an agent whose
//! conversation outlives it: a new agent over the same session goes on
//! with it, and two agents writing one session keep every item.

use skillkit::agent::session::{FileSessionStore, SessionError, SessionStore};
use skillkit::agent::start_agent;
use skillkit::llm::{Message, Scripted};
use skillkit::{Catalog, Memory};
use skillkit_tests::agent::{ask, lead, options, users_in};
use skillkit_tests::sessions::{conformance, two_processes_keep_every_item};

fn user(text: &str) -> Message {
    Message::user(text)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_file_store_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path().join("sessions"));
    conformance(&store).await;
    // Nothing but the sessions and their locks is left.
    for entry in std::fs::read_dir(store.dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            name.ends_with(".jsonl") || name.ends_with(".lock"),
            "{name}"
        );
    }
}

/// The SQL provider is a session store too, on SQLite (a file: the items
/// outlive the handle); PostgreSQL's run in `sql_postgres.rs`.
#[tokio::test(flavor = "multi_thread")]
async fn the_sql_store_on_sqlite_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("sessions.db").display()
    );
    let sql = skillkit::Sql::open(&url).unwrap();
    conformance(&sql).await;
    // Another handle on the same file reads what the first wrote.
    sql.append("after", 0, &[user("kept")]).await.unwrap();
    let again = skillkit::Sql::open(&url).unwrap();
    assert_eq!(again.load("after", None).await.unwrap().version, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_session_file_is_an_error_that_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path());
    store.append("s", 0, &[user("a")]).await.unwrap();
    let path = dir.path().join("s.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{not json\n");
    std::fs::write(&path, text).unwrap();
    let error = store.load("s", None).await.unwrap_err();
    assert!(matches!(error, SessionError::Corrupt { .. }));
    assert!(error.to_string().contains("line 2"), "{error}");
    // Nothing is written over it.
    assert!(store.append("s", 1, &[user("b")]).await.is_err());
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("{not json")
    );
}

/// A write cut short by a crash leaves a last line without its end: readers
/// leave it out, and the next write cuts it off and numbers on.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_cut_short_is_left_out_and_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path());
    store.append("s", 0, &[user("a"), user("b")]).await.unwrap();
    let path = dir.path().join("s.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(br#"{"seq":3,"message":{"role":"user","te"#);
    std::fs::write(&path, &bytes).unwrap();
    let loaded = store.load("s", None).await.unwrap();
    assert_eq!((loaded.items.len(), loaded.version), (2, 2));
    assert_eq!(store.load("s", Some(0)).await.unwrap().version, 2);
    assert_eq!(store.append("s", 2, &[user("c")]).await.unwrap(), 3);
    let texts: Vec<Message> = store
        .load("s", None)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|i| i.message)
        .collect();
    assert_eq!(texts, [user("a"), user("b"), user("c")]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
}

/// A session longer than the block its last line is read in (the version is
/// read from that line alone).
#[tokio::test(flavor = "multi_thread")]
async fn the_version_of_a_long_session_is_read_from_its_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path());
    let long = "x".repeat(100_000);
    let mut version = 0;
    for _ in 0..5 {
        version = store.append("s", version, &[user(&long)]).await.unwrap();
    }
    assert_eq!(store.load("s", Some(0)).await.unwrap().version, 5);
    assert_eq!(store.load("s", Some(2)).await.unwrap().items.len(), 2);
    assert!(matches!(
        store.append("s", 4, &[user("late")]).await,
        Err(SessionError::Stale { found: 5, .. })
    ));
}

/// The child's work in the two-process tests (a no-op unless run as one).
#[tokio::test(flavor = "multi_thread")]
async fn child_appends() {
    skillkit_tests::sessions::child_appends().await;
}

/// Two processes appending to one session of a file store keep every item.
#[test]
fn two_processes_appending_to_one_session_keep_every_item() {
    let dir = tempfile::tempdir().unwrap();
    two_processes_keep_every_item(&dir.path().display().to_string());
}

/// The same with two processes on one SQLite file.
#[test]
fn two_processes_appending_to_one_sqlite_session_keep_every_item() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("sessions.db").display()
    );
    two_processes_keep_every_item(&url);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_agent_goes_on_with_the_session_of_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path());
    let catalog = Catalog::builder().provider(Memory::new()).build();

    let first = Scripted::new().text("Noted: blue.");
    let mut agent = start_agent(
        lead(),
        options(catalog.clone(), &first).session(store.clone(), "chat-1"),
    )
    .unwrap();
    let (answer, _) = ask(&mut agent, "My favourite colour is blue.").await;
    assert_eq!(answer.unwrap(), "Noted: blue.");
    drop(agent);
    let saved = store.load("chat-1", None).await.unwrap();
    assert_eq!(saved.version, 2, "the question and the answer");

    // Another agent (another process, as far as the store knows).
    let second = Scripted::new().text("Blue.");
    let mut agent = start_agent(
        lead(),
        options(catalog.clone(), &second).session(store.clone(), "chat-1"),
    )
    .unwrap();
    let (answer, _) = ask(&mut agent, "What is my favourite colour?").await;
    assert_eq!(answer.unwrap(), "Blue.");
    let request = &second.requests()[0];
    assert_eq!(
        users_in(request),
        [
            "My favourite colour is blue.",
            "What is my favourite colour?"
        ]
    );
    assert_eq!(agent.history().session_id, "chat-1");
    assert_eq!(store.load("chat-1", None).await.unwrap().version, 4);
    // The agent named itself at its first write.
    let listed = store.list().await.unwrap();
    assert_eq!(listed[0].meta.agent.as_deref(), Some("lead"));
}

/// Two agents on one session: each reads what the other wrote before it
/// answers, and a write that races another's (the store moved on during
/// the turn) is refused, the other's items read, and its own written after
/// them: every item is kept.
#[tokio::test(flavor = "multi_thread")]
async fn two_agents_writing_one_session_keep_every_item() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileSessionStore::new(dir.path());
    let catalog = Catalog::builder().provider(Memory::new()).build();
    let (a, b) = (
        Scripted::new().text("A1").text("A2"),
        Scripted::new().text("B1"),
    );
    let mut one = start_agent(
        lead(),
        options(catalog.clone(), &a).session(store.clone(), "s"),
    )
    .unwrap();
    let mut two = start_agent(
        lead(),
        options(catalog.clone(), &b).session(store.clone(), "s"),
    )
    .unwrap();
    ask(&mut one, "first").await.0.unwrap();
    ask(&mut two, "second").await.0.unwrap();
    assert_eq!(users_in(&b.requests()[0]), ["first", "second"]);
    // A writer outside the agents adds an item while `one` answers: `one`
    // read the session before it (its request has no "aside"), so its
    // write is refused as stale, and it writes after the aside.
    let store_in_hook = store.clone();
    let aside = a.clone().on_request(move |_| {
        let store = store_in_hook.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async {
                let version = store.load("s", Some(0)).await.unwrap().version;
                store.append("s", version, &[user("aside")]).await.unwrap();
            });
        })
        .join()
        .unwrap();
    });
    drop(aside);
    ask(&mut one, "third").await.0.unwrap();
    assert_eq!(users_in(&a.requests()[1]), ["first", "second", "third"]);
    let texts: Vec<String> = store
        .load("s", None)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|i| match i.message {
            Message::User { text } => text,
            Message::Assistant(a) => a.text,
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        ["first", "A1", "second", "B1", "aside", "third", "A2"]
    );
    let users: Vec<String> = one
        .history()
        .messages
        .into_iter()
        .filter_map(|m| match m {
            Message::User { text } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["first", "second", "aside", "third"]);
}
