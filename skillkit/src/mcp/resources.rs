//! The server's resources: each skill's `SKILL.md` as
//! `skill://<kit>/<skill>/SKILL.md`, and the files beside it as
//! `skill://<kit>/<skill>/<path>` (path segments percent-encoded), as in
//! MCP's skills extension draft. `resources/list` is paginated by URI; a
//! page walks the folders of only the skills it reaches.

use std::sync::Arc;

use base64::Engine;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::ErrorData;
use rmcp::model::{JsonObject, ReadResourceResult, Resource, ResourceContents};
use serde_json::json;

use crate::catalog::Snapshot;
use crate::dispatch::files::files_beside;
use crate::skill::Skill;

use super::files::{self, Contents};

/// The scheme of the server's resources.
const SCHEME: &str = "skill://";
/// The name of a skill's own file.
pub(super) const SKILL_MD: &str = "SKILL.md";

/// What is escaped in a URI segment: all but unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

fn encode(segment: &str) -> String {
    utf8_percent_encode(segment, SEGMENT).to_string()
}

/// The kit part of `skill`'s URIs: its name's prefix.
fn kit_of(skill: &Skill) -> &str {
    skill.kit().unwrap_or("_")
}

/// `skill://<kit>/<skill>/`: the prefix of all of `skill`'s URIs.
fn base(skill: &Skill) -> String {
    format!(
        "{SCHEME}{}/{}/",
        encode(kit_of(skill)),
        encode(skill.bare_name())
    )
}

/// The URI of file `path` (relative, `/`-separated) of `skill`.
pub(super) fn file_uri(skill: &Skill, path: &str) -> String {
    let encoded: Vec<String> = path.split('/').map(encode).collect();
    format!("{}{}", base(skill), encoded.join("/"))
}

/// The resources of one skill, sorted by URI.
fn of_skill(skill: &Skill) -> Vec<Resource> {
    let mut resources = vec![
        Resource::new(file_uri(skill, SKILL_MD), skill.name.to_string())
            .with_title(format!("{} ({SKILL_MD})", skill.name))
            .with_description(crate::prompt::shown_description(&skill.description).into_owned())
            .with_mime_type(files::mime_type(SKILL_MD, None)),
    ];
    if let Some(dir) = skill.dir() {
        for path in files_beside(dir).files.iter() {
            let path = path.replace(std::path::MAIN_SEPARATOR, "/");
            resources.push(
                Resource::new(file_uri(skill, &path), format!("{}/{path}", skill.name))
                    .with_mime_type(files::mime_type(&path, None)),
            );
        }
    }
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    resources
}

/// The resources of `snapshot` after `cursor`, at most `size` and one more
/// (to tell whether another page follows), sorted by URI.
///
/// All URIs of a skill share its [`base`], and no base is the prefix of
/// another, so the skills sorted by base give the resources sorted by URI;
/// the skills whose URIs all come before the cursor are skipped unread.
pub(super) fn after(snapshot: &Snapshot, cursor: Option<&str>, size: usize) -> Vec<Resource> {
    let mut skills: Vec<(String, &Arc<Skill>)> = snapshot.skills().map(|s| (base(s), s)).collect();
    skills.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::new();
    for (base, skill) in skills {
        if cursor.is_some_and(|c| base.as_str() < c && !c.starts_with(&base)) {
            continue;
        }
        out.extend(
            of_skill(skill)
                .into_iter()
                .filter(|r| cursor.is_none_or(|c| r.uri.as_str() > c)),
        );
        if out.len() > size {
            break;
        }
    }
    out
}

/// The skill whose URIs `uri` is one of, and the path it names inside the
/// skill's folder (`""` for the folder itself); `None` when no skill has
/// it; `Err` when it is not a `skill://` URI.
pub(super) fn locate<'a>(
    snapshot: &'a Snapshot,
    uri: &str,
) -> Result<Option<(&'a Arc<Skill>, String)>, ErrorData> {
    let rest = uri.strip_prefix(SCHEME).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("`{uri}` is not a {SCHEME} URI; resources/list gives the resources"),
            None,
        )
    })?;
    let mut parts = rest.splitn(3, '/');
    let (Some(kit), Some(bare)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let path = parts.next().unwrap_or("");
    let decode = |s: &str| percent_decode_str(s).decode_utf8().map(|s| s.into_owned());
    let (Ok(kit), Ok(bare), Ok(path)) = (decode(kit), decode(bare), decode(path)) else {
        return Ok(None);
    };
    let is_it = |s: &&Arc<Skill>| kit_of(s) == kit && s.bare_name() == bare;
    // By its full name (the snapshot's lookup: a binary search per kit, so
    // a URI of no skill scans no skill list); `_` is a skill of no kit, or
    // of a kit named so.
    let named = match kit.as_str() {
        "_" => snapshot
            .skill(&bare)
            .filter(is_it)
            .or_else(|| snapshot.skill(&format!("_:{bare}"))),
        kit => snapshot.skill(&format!("{kit}:{bare}")),
    };
    Ok(named.filter(is_it).map(|skill| (skill, path)))
}

/// The contents of the resource at `uri`.
pub(super) fn read(snapshot: &Snapshot, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let not_found = || {
        ErrorData::resource_not_found(
            format!("there is no resource `{uri}`; resources/list gives the resources"),
            None,
        )
    };
    let (skill, path) = locate(snapshot, uri)?.ok_or_else(not_found)?;
    let contents = match (path.as_str(), skill.location.as_deref(), skill.dir()) {
        (SKILL_MD, Some(location), _) => {
            files::read(location, SKILL_MD).map_err(|e| ErrorData::internal_error(e, None))?
        }
        (SKILL_MD, None, _) => Contents::Text(synthesized(skill)?),
        (_, _, Some(dir)) => {
            let file = files::resolve(dir, &path).map_err(|e| {
                ErrorData::resource_not_found(format!("{e} (resource `{uri}`)"), None)
            })?;
            files::read(&file, &path).map_err(|e| ErrorData::internal_error(e, None))?
        }
        (_, _, None) => return Err(not_found()),
    };
    let mime = files::mime_type(&path, Some(&contents));
    let contents = match contents {
        Contents::Text(text) => ResourceContents::text(text, uri),
        Contents::Binary(bytes) => {
            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
        }
    };
    Ok(ReadResourceResult::new(vec![contents.with_mime_type(mime)]))
}

/// The `SKILL.md` of a skill that has no file (put in memory, built in
/// code): its name and description as frontmatter, then its body.
fn synthesized(skill: &Skill) -> Result<String, ErrorData> {
    let body = skill
        .body
        .read()
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    // JSON is YAML (a string a double-quoted scalar, a list or map a flow
    // collection), so each field is written as its JSON.
    let mut text = String::from("---\n");
    let fields = frontmatter_of(skill);
    let first = ["name", "description"];
    let rest = fields.keys().filter(|k| !first.contains(&k.as_str()));
    for key in first.iter().copied().chain(rest.map(String::as_str)) {
        let Some(value) = fields.get(key) else {
            continue;
        };
        let plain = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        match plain {
            true => text.push_str(key),
            false => text.push_str(&serde_json::Value::from(key).to_string()),
        }
        text.push_str(&format!(": {value}\n"));
    }
    text.push_str("---\n");
    text.push_str(&body);
    Ok(text)
}

/// The frontmatter of a skill that has no file: the fields it has, as a
/// `SKILL.md` would hold them.
pub(super) fn frontmatter_of(skill: &Skill) -> JsonObject {
    let mut fields = JsonObject::new();
    fields.insert("name".into(), json!(skill.bare_name()));
    fields.insert("description".into(), json!(skill.description));
    if let Some(license) = skill.license() {
        fields.insert("license".into(), json!(license));
    }
    if let Some(compatibility) = skill.compatibility() {
        fields.insert("compatibility".into(), json!(compatibility));
    }
    if !skill.allowed_tools().is_empty() {
        fields.insert(
            "allowed-tools".into(),
            json!(skill.allowed_tools().join(" ")),
        );
    }
    if !skill.metadata().is_empty() {
        fields.insert("metadata".into(), json!(skill.metadata()));
    }
    if let Some(model) = skill.model() {
        fields.insert("model".into(), json!(model));
    }
    if let Some(scope) = skill.required_scope() {
        fields.insert("required_scope".into(), json!(scope));
    }
    for (key, value) in skill.extra() {
        fields.entry(key.clone()).or_insert_with(|| json!(value));
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_what_is_not_unreserved() {
        let skill = Skill::new("files:read", "d");
        assert_eq!(file_uri(&skill, "SKILL.md"), "skill://files/read/SKILL.md");
        assert_eq!(
            file_uri(&skill, "docs/a b#1.md"),
            "skill://files/read/docs/a%20b%231.md"
        );
    }

    #[tokio::test]
    async fn a_uri_finds_its_skill() {
        let memory = crate::Memory::new();
        memory.put(Skill::new("greet:hello", "d"));
        memory.put(Skill::new("greet:bye", "d"));
        memory.put(Skill::new("solo", "d"));
        let snapshot = crate::Catalog::builder()
            .provider(memory)
            .build()
            .snapshot()
            .await;
        let found = |uri: &str| {
            locate(&snapshot, uri)
                .unwrap()
                .map(|(skill, path)| (skill.name.to_string(), path))
        };
        let hello = found("skill://greet/hello/docs/a%20b.md");
        assert_eq!(hello, Some(("greet:hello".into(), "docs/a b.md".into())));
        assert_eq!(
            found("skill://greet/bye/"),
            Some(("greet:bye".into(), "".into()))
        );
        // A skill put without a kit is its own kit's.
        assert_eq!(
            found("skill://solo/solo/SKILL.md"),
            Some(("solo:solo".into(), "SKILL.md".into()))
        );
        assert_eq!(found("skill://_/solo/"), None);
        assert_eq!(found("skill://greet/solo/"), None);
        assert_eq!(found("skill://_/hello/"), None);
        assert_eq!(found("skill://other/hello/"), None);
        assert!(locate(&snapshot, "file:///etc/passwd").is_err());
    }

    #[tokio::test]
    async fn a_skill_without_a_file_gets_a_synthesized_skill_md() {
        let memory = crate::Memory::new();
        memory.put(Skill::new("greet:hello", "Say \"hello\".").with_body("Hello!"));
        let snapshot = crate::Catalog::builder()
            .provider(memory)
            .build()
            .snapshot()
            .await;
        let result = read(&snapshot, "skill://greet/hello/SKILL.md").unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &result.contents[0] else {
            panic!("not text: {result:?}");
        };
        assert_eq!(
            text,
            "---\nname: \"hello\"\ndescription: \"Say \\\"hello\\\".\"\n---\nHello!"
        );
        let doc = skillkit_parser::SkillDocument::parse(text).unwrap();
        assert_eq!(doc.description, "Say \"hello\".");
        assert!(read(&snapshot, "skill://greet/hello/other.md").is_err());
    }
}
