//! Semantic search through `HttpEmbedder` against a stand-in for an
//! OpenAI-compatible embeddings endpoint on 127.0.0.1: a skill found by
//! meaning alone, requests batched, vectors kept on disk so a restart
//! embeds only what changed, a failing endpoint leaving the lexical
//! ranking, and the key sent only when named.

use skillkit::search::HttpEmbedder;
use skillkit::search::SearchHit;
use skillkit::{Catalog, Memory, Skill};
use skillkit_tests::embeddings::Embeddings;

fn names(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.skill.name.as_ref()).collect()
}

fn skills() -> Memory {
    let memory = Memory::new();
    memory.put(Skill::new(
        "fin:billing",
        "Send an invoice and track the payment.",
    ));
    memory.put(Skill::new("art:sketch", "Make a drawing."));
    memory.put(Skill::new("sky:outlook", "Tell tomorrow's forecast."));
    memory
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_is_found_by_meaning_and_embedded_once_per_version() {
    let endpoint = Embeddings::start().await;
    let cache = tempfile::tempdir().unwrap();
    let embedder = || HttpEmbedder::new(endpoint.url()).cache_dir(cache.path());
    let memory = skills();
    let catalog = Catalog::builder()
        .provider(memory.clone())
        .embedder(embedder())
        .build();
    // No word of the query is in any skill: by meaning ("photo").
    assert_eq!(
        names(&catalog.search("photos of my cat", 5).await),
        ["art:sketch"]
    );
    // Lexical alone finds nothing.
    let words = Catalog::builder().provider(memory.clone()).build();
    assert!(words.search("photos of my cat", 5).await.is_empty());
    let requests = endpoint.requests();
    assert_eq!(
        requests.len(),
        2,
        "the skills, then the query: {requests:?}"
    );
    assert_eq!(requests[0].len(), 3);
    assert_eq!(requests[1], ["photos of my cat"]);

    // Unchanged: only the query is embedded.
    catalog.search("rain tomorrow", 5).await;
    assert_eq!(endpoint.requests().len(), 3);
    assert_eq!(endpoint.requests()[2], ["rain tomorrow"]);

    // A restart (a new catalog, a new embedder over the same cache): the
    // skills' vectors are read from disk; a changed skill is embedded again.
    memory.put(Skill::new("art:sketch", "Make a drawing or a picture."));
    let restarted = Catalog::builder()
        .provider(memory.clone())
        .embedder(embedder())
        .build();
    let hits = restarted.search("an image please", 5).await;
    assert_eq!(names(&hits)[0], "art:sketch");
    let after = endpoint.requests();
    assert_eq!(after.len(), 5);
    assert_eq!(after[3], ["art:sketch: Make a drawing or a picture."]);
    assert_eq!(after[4], ["an image please"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn texts_are_sent_in_batches() {
    let endpoint = Embeddings::start().await;
    let memory = Memory::new();
    for i in 0..150 {
        memory.put(Skill::new(
            format!("k:s{i:03}"),
            format!("Skill number {i}."),
        ));
    }
    let catalog = Catalog::builder()
        .provider(memory)
        .embedder(HttpEmbedder::new(endpoint.url()).no_cache().batch(64))
        .build();
    catalog.search("number", 5).await;
    let sizes: Vec<usize> = endpoint.requests().iter().map(Vec::len).collect();
    assert_eq!(sizes, [64, 64, 22, 1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_endpoint_leaves_the_lexical_ranking() {
    let endpoint = Embeddings::start().await;
    endpoint.fail();
    let catalog = Catalog::builder()
        .provider(skills())
        .embedder(HttpEmbedder::new(endpoint.url()).no_cache())
        .build();
    assert_eq!(names(&catalog.search("invoice", 5).await), ["fin:billing"]);
    let unreachable = Catalog::builder()
        .provider(skills())
        .embedder(HttpEmbedder::new("http://127.0.0.1:9/v1").no_cache())
        .build();
    assert_eq!(
        names(&unreachable.search("forecast", 5).await),
        ["sky:outlook"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_sent_only_when_named() {
    let endpoint = Embeddings::start().await;
    let catalog = Catalog::builder()
        .provider(skills())
        .embedder(HttpEmbedder::new(endpoint.url()).no_cache())
        .build();
    catalog.search("invoice", 5).await;
    let named = Catalog::builder()
        .provider(skills())
        .embedder(
            HttpEmbedder::new(endpoint.url())
                .no_cache()
                .api_key_env("PATH"),
        )
        .build();
    named.search("invoice", 5).await;
    let tokens = endpoint.tokens();
    assert!(tokens[..2].iter().all(Option::is_none), "{tokens:?}");
    let path = std::env::var("PATH").unwrap();
    assert!(
        tokens[2..]
            .iter()
            .all(|t| t.as_deref() == Some(path.as_str()))
    );
}

/// The MCP server's `list_skills {query}` ranks through the catalog's
/// embedder: a query no skill's words match finds the skill it means.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_list_skills_with_a_query_ranks_by_meaning() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use skillkit::mcp::McpServer;

    let endpoint = Embeddings::start().await;
    let catalog = Catalog::builder()
        .provider(skills())
        .embedder(HttpEmbedder::new(endpoint.url()).no_cache())
        .build();
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = McpServer::new(catalog).serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_end).await.unwrap();
    let mut params = CallToolRequestParams::new("list_skills");
    params.arguments = serde_json::json!({"query": "will it storm"})
        .as_object()
        .cloned();
    let result = client.call_tool(params).await.unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    let listed: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(listed[0]["name"], "sky:outlook", "{text}");
    let _ = client.cancel().await;
}
