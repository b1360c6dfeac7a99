//! The Memory provider: put, delete and put_kit, seen by the next query.

use skillkit::{Catalog, Kit, KitProvider, Memory, Skill};

#[tokio::test(flavor = "multi_thread")]
async fn changes_are_seen_by_the_very_next_query() {
    let memory = Memory::new();
    let catalog = Catalog::builder().provider(memory.clone()).build();
    assert!(catalog.list_kits().await.is_empty());
    memory.put(Skill::new("greet:hello", "Say hello.").with_body("Hello $ARGUMENTS"));
    assert_eq!(
        catalog
            .get_skill("greet:hello")
            .await
            .unwrap()
            .render("Ada", None)
            .unwrap(),
        "Hello Ada"
    );
    memory.put(Skill::new("greet:hello", "Say hello, again."));
    assert_eq!(
        catalog.get_skill("greet:hello").await.unwrap().description,
        "Say hello, again."
    );
    assert!(memory.delete("greet:hello"));
    assert!(catalog.get_skill("greet:hello").await.is_none());
    assert!(catalog.list_kits().await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn namespaces_group_into_kits_and_bare_names_into_their_own() {
    let memory = Memory::new();
    memory.put(Skill::new("files:read", "Read."));
    memory.put(Skill::new("files:write", "Write."));
    memory.put(Skill::new("standalone", "Alone."));
    let kits = memory.list_kits().await.unwrap();
    let summary: Vec<(String, Vec<String>)> = kits
        .iter()
        .map(|k| {
            (
                k.name.to_string(),
                k.skills.iter().map(|s| s.name.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "files".to_owned(),
                vec!["files:read".to_owned(), "files:write".to_owned()]
            ),
            (
                "standalone".to_owned(),
                vec!["standalone:standalone".to_owned()]
            ),
        ]
    );
    assert!(memory.delete("standalone"));
}

#[tokio::test(flavor = "multi_thread")]
async fn put_kit_replaces_a_kit_and_qualifies_bare_names() {
    let memory = Memory::new();
    memory.put(Skill::new("files:old", "Old."));
    memory.put_kit(
        Kit::new("files")
            .with_skill(Skill::new("read", "Read."))
            .with_skill(Skill::new("net:x", "Wrong kit.")),
    );
    let kit = memory.get_kit("files").await.unwrap().unwrap();
    let names: Vec<&str> = kit.skills.iter().map(|s| s.name.as_ref()).collect();
    assert_eq!(names, ["files:read"]);
    assert!(kit.diagnostics[0].message.contains("`net`"));
    assert!(memory.delete_kit("files"));
    assert!(memory.get_kit("files").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_puts_all_land() {
    let memory = Memory::new();
    let tasks: Vec<_> = (0..64)
        .map(|task| {
            let memory = memory.clone();
            tokio::spawn(async move {
                for i in 0..50 {
                    memory.put(Skill::new(format!("k{}:s{task}-{i}", task % 4), "x"));
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let total: usize = memory
        .list_kits()
        .await
        .unwrap()
        .iter()
        .map(|k| k.skills.len())
        .sum();
    assert_eq!(total, 64 * 50);
    assert_eq!(memory.kit_names(), ["k0", "k1", "k2", "k3"]);
}

/// Names follow the rule every provider follows: the whitespace around a
/// name and around each of its parts (a space, a newline, a tab) is not part
/// of it, so `" ws : padded\n"` is served as `ws:padded`, never beside it.
#[tokio::test(flavor = "multi_thread")]
async fn names_are_trimmed_as_files_trim_them() {
    let memory = Memory::new();
    let catalog = Catalog::builder().provider(memory.clone()).build();
    assert_eq!(
        memory.put(Skill::new(" ws : padded\n", "Padded.")),
        "ws:padded"
    );
    assert_eq!(
        memory.put(Skill::new("\ttabbed ", "Tabbed.")),
        "tabbed:tabbed"
    );
    let names: Vec<String> = catalog
        .list_skills()
        .await
        .into_iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(names, ["tabbed:tabbed", "ws:padded"]);
    assert!(memory.delete("ws:padded"));
}
