//! The conformance suite every [`SessionStore`] passes: ordering, versions
//! (a stale writer refused, nothing written), the last N, pop, fork, clear,
//! list, and ids that are not paths.

use std::process::Command;

use skillkit::agent::session::{FileSessionStore, SessionError, SessionMeta, SessionStore};
use skillkit::llm::Message;

fn user(text: &str) -> Message {
    Message::user(text)
}

/// What every store must do (on an empty store).
pub async fn conformance(store: &dyn SessionStore) {
    // An unknown session is empty at version 0.
    let empty = store.load("s1", None).await.unwrap();
    assert_eq!((empty.items.len(), empty.version), (0, 0));
    assert_eq!(
        store
            .append("s1", 0, &[user("a"), user("b")])
            .await
            .unwrap(),
        2
    );
    assert_eq!(store.append("s1", 2, &[user("c")]).await.unwrap(), 3);
    let loaded = store.load("s1", None).await.unwrap();
    let seqs: Vec<u64> = loaded.items.iter().map(|i| i.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(loaded.items[2].message, user("c"));
    assert_eq!(loaded.version, 3);
    // The last N.
    let last = store.load("s1", Some(2)).await.unwrap();
    assert_eq!(last.items.iter().map(|i| i.seq).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(last.version, 3);
    // A stale writer is refused, and nothing is written.
    let stale = store.append("s1", 2, &[user("late")]).await;
    assert!(
        matches!(
            stale,
            Err(SessionError::Stale {
                expected: 2,
                found: 3,
                ..
            })
        ),
        "{stale:?}"
    );
    assert_eq!(store.load("s1", None).await.unwrap().version, 3);
    // Pop, at the version expected only.
    assert!(matches!(
        store.pop("s1", 1).await,
        Err(SessionError::Stale { .. })
    ));
    let popped = store.pop("s1", 3).await.unwrap().unwrap();
    assert_eq!((popped.seq, popped.message), (3, user("c")));
    assert_eq!(store.append("s1", 2, &[user("d")]).await.unwrap(), 3);
    // A fork shares the prefix; later writes leave the other.
    store.fork("s1", 2, "s2").await.unwrap();
    assert_eq!(store.append("s2", 2, &[user("e")]).await.unwrap(), 3);
    let forked = store.load("s2", None).await.unwrap();
    let texts: Vec<&Message> = forked.items.iter().map(|i| &i.message).collect();
    assert_eq!(texts, [&user("a"), &user("b"), &user("e")]);
    assert_eq!(
        store.load("s1", None).await.unwrap().items[2].message,
        user("d")
    );
    assert!(matches!(
        store.fork("s1", 1, "s2").await,
        Err(SessionError::Exists(_))
    ));
    assert!(matches!(
        store.fork("nobody", 1, "s3").await,
        Err(SessionError::NotFound(_))
    ));
    // Listing, clearing.
    let ids: Vec<String> = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["s1", "s2"]);
    store.clear("s2").await.unwrap();
    store.clear("s2").await.unwrap();
    assert_eq!(store.load("s2", None).await.unwrap().version, 0);
    // A title and an agent; a field left out keeps the one set before.
    store
        .describe("s1", &SessionMeta::default().title("Greetings"))
        .await
        .unwrap();
    store
        .describe("s1", &SessionMeta::default().agent("helper"))
        .await
        .unwrap();
    let s1 = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.id == "s1")
        .unwrap();
    assert_eq!(s1.meta.title.as_deref(), Some("Greetings"));
    assert_eq!(s1.meta.agent.as_deref(), Some("helper"));
    assert_eq!(s1.version, 3, "describing writes no item");
    // A session described before its first item is listed, at version 0,
    // and cleared like any other.
    store
        .describe("s3", &SessionMeta::default().title("Not started"))
        .await
        .unwrap();
    let s3 = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.id == "s3");
    let s3 = s3.expect("a described session is listed before its first item");
    assert_eq!(
        (s3.version, s3.meta.title.as_deref()),
        (0, Some("Not started"))
    );
    assert_eq!(store.load("s3", None).await.unwrap().version, 0);
    // It can be forked, and forked onto it cannot be.
    store.fork("s3", 0, "s3-copy").await.unwrap();
    assert_eq!(store.load("s3-copy", None).await.unwrap().version, 0);
    assert!(matches!(
        store.fork("s1", 1, "s3").await,
        Err(SessionError::Exists(_))
    ));
    store.clear("s3-copy").await.unwrap();
    store.clear("s3").await.unwrap();
    let ids: Vec<String> = store
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["s1"]);
    // A time to live: nothing is that old yet; everything idle for no
    // time at all is.
    let infos = store.list().await.unwrap();
    assert!(infos.iter().all(|s| s.updated.is_some()), "{infos:?}");
    assert!(
        store
            .expire(std::time::Duration::from_secs(3600))
            .await
            .unwrap()
            .is_empty()
    );
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(
        store.expire(std::time::Duration::ZERO).await.unwrap(),
        ["s1"]
    );
    assert!(store.list().await.unwrap().is_empty());
    // An id is never a path.
    for id in ["../x", "a/b", ".hidden", "", &"x".repeat(129)] {
        assert!(
            matches!(
                store.append(id, 0, &[user("x")]).await,
                Err(SessionError::InvalidId(_))
            ),
            "{id:?}"
        );
    }
}

/// Set in the child processes of a two-process test: where the store is (a
/// folder, or a `sqlite://` or `postgres://` URL).
const CHILD_AT: &str = "SKILLKIT_SESSIONS_CHILD_AT";
/// Set in the child processes: the child's name, which starts its items.
const CHILD_NAME: &str = "SKILLKIT_SESSIONS_CHILD_NAME";
/// How many items each child appends.
const EACH: usize = 40;

/// The store at `at`: a SQL database by URL, else a folder of files.
pub fn open(at: &str) -> Box<dyn SessionStore> {
    match at.starts_with("sqlite:") || at.starts_with("postgres:") {
        true => Box::new(skillkit::Sql::open(at).unwrap()),
        false => Box::new(FileSessionStore::new(at)),
    }
}

/// A child's work, called by a test named `child_appends` in the test
/// binary (a no-op unless that binary runs as a child): appends `EACH` items
/// to session `shared` one at a time, reloading when refused as stale.
pub async fn child_appends() {
    let Ok(at) = std::env::var(CHILD_AT) else {
        return;
    };
    let name = std::env::var(CHILD_NAME).unwrap();
    let store = open(&at);
    for i in 0..EACH {
        loop {
            let version = store.load("shared", Some(0)).await.unwrap().version;
            match store
                .append("shared", version, &[user(&format!("{name} {i}"))])
                .await
            {
                Ok(_) => break,
                Err(SessionError::Stale { .. }) => continue,
                Err(other) => panic!("{other}"),
            }
        }
    }
}

/// Two processes (this test binary again, running its `child_appends`
/// test) append to session `shared` of the store at `at` at once: every
/// item is kept, numbered without a gap, each process's in its own order.
pub fn two_processes_keep_every_item(at: &str) {
    let children: Vec<_> = ["one", "two"]
        .iter()
        .map(|name| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_appends", "--test-threads", "1"])
                .env(CHILD_AT, at)
                .env(CHILD_NAME, name)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let loaded = runtime.block_on(open(at).load("shared", None)).unwrap();
    assert_eq!(loaded.version, 2 * EACH as u64);
    let seqs: Vec<u64> = loaded.items.iter().map(|i| i.seq).collect();
    assert_eq!(seqs, (1..=2 * EACH as u64).collect::<Vec<_>>());
    for name in ["one", "two"] {
        let mine: Vec<String> = loaded
            .items
            .iter()
            .filter_map(|i| match &i.message {
                Message::User { text } if text.starts_with(name) => Some(text.clone()),
                _ => None,
            })
            .collect();
        let expected: Vec<String> = (0..EACH).map(|i| format!("{name} {i}")).collect();
        assert_eq!(mine, expected);
    }
}
