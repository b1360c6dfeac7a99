//! MCP's skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! `skills/list`, `skills/get` and `resources/directory/read`.
//!
//! A skill's entry is named by the URI of its `SKILL.md`,
//! `skill://<kit>/<skill>/SKILL.md` (the resource mapping of the
//! extension: the kit is the prefix, the final segment the skill's bare
//! name), and carries:
//!
//! * `frontmatter`: for a skill read from a file, the frontmatter exactly as
//!   written (every key and value of the YAML, as JSON), except `name`,
//!   which is the skill's bare name (the extension requires the name to be
//!   the URI's final segment: a name written `kit:skill` or left out, as
//!   lenient loading allows, is given as `skill`); for a skill without a
//!   file (put in [`Memory`](crate::Memory), embedded by `#[derive(Kit)]`, a
//!   database row) the fields it has, which its synthesized `SKILL.md`
//!   holds too;
//! * `resources`: for a skill read from a file, every file of its folder
//!   (hidden ones excepted, as everywhere) with `sha256:<hex>` and size,
//!   computed once per file version (see `digests`); for a skill without a
//!   file, `"dynamic"`: its `SKILL.md` is generated from the skill, so there
//!   are no stable bytes to digest.
//!
//! A skill whose bare name is not a name the extension allows (lowercase
//! letters, digits and single inner hyphens, 1–64 characters), which lenient
//! loading accepts, is served as a tool, a prompt and resources but is not
//! listed by `skills/list`; `skills/get` says why.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{
    DIRECTORY_MIME_TYPE, GetSkillResult, ListSkillsResult, ReadResourceDirectoryResult, Resource,
    Skill as Entry, SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::Value;

use crate::catalog::Snapshot;
use crate::dispatch::files::files_beside;
use crate::kit::Skills;
use crate::skill::Skill;

use super::digests::Digests;
use super::files;
use super::pages;
use super::resources::{self, SKILL_MD};

/// The entry of `skill`, or why it has none.
fn entry(skill: &Skill, digests: &Digests) -> Result<Entry, String> {
    let uri = resources::file_uri(skill, SKILL_MD);
    let (written, manifest) = match (skill.location.as_deref(), skill.dir()) {
        // On disk: read from its file, or (a skill from another server) its
        // files fetched. One not fetched yet is given as generated.
        (Some(location), Some(dir)) if skill.body.file().is_some() || location.is_file() => {
            let read = |path: &std::path::Path, shown: &str, frontmatter: bool| {
                digests.of(path, frontmatter).map_err(|e| {
                    format!("`{shown}` of skill `{}` cannot be read ({e})", skill.name)
                })
            };
            let main = read(location, SKILL_MD, true)?;
            let mut files = vec![SkillResource::new(uri.clone(), &main.digest, main.size)];
            let beside = files_beside(dir);
            // A manifest is the whole skill or none: with more files than
            // are read beside a skill, or one larger than `resources/read`
            // sends, the skill is `"dynamic"` (its client reads what it
            // needs, one file at a time).
            let mut whole = beside.whole && main.size <= files::MAX_FILE_BYTES;
            for path in beside.files.iter() {
                if !whole {
                    break;
                }
                let path = path.replace(std::path::MAIN_SEPARATOR, "/");
                let facts = read(&dir.join(&path), &path, false)?;
                whole = facts.size <= files::MAX_FILE_BYTES;
                files.push(SkillResource::new(
                    resources::file_uri(skill, &path),
                    &facts.digest,
                    facts.size,
                ));
            }
            match whole {
                true => (main.frontmatter.clone(), SkillResources::Files(files)),
                false => (main.frontmatter.clone(), SkillResources::Dynamic),
            }
        }
        _ => (None, SkillResources::Dynamic),
    };
    let mut fields = written.unwrap_or_else(|| resources::frontmatter_of(skill));
    fields.remove("name");
    let description = match fields.remove("description") {
        Some(Value::String(text)) => text,
        _ => skill.description.to_string(),
    };
    let mut frontmatter = SkillFrontmatter::new(skill.bare_name(), description);
    frontmatter.extra = fields;
    let entry = Entry::new(uri, frontmatter, manifest);
    entry
        .validate()
        .map_err(|e| format!("skill `{}` is not served by skills/list: {e}", skill.name))?;
    Ok(entry)
}

/// Skills with their URIs, sorted by URI.
pub(super) type ByUri = Arc<Vec<(String, Arc<Skill>)>>;

/// The skills of the last snapshot sorted by URI, kept while the catalog
/// holds the same kit lists (compared by [`Skills::ptr_eq`]: a kit that
/// changed is a new list), so paging through `skills/list` sorts once per
/// change, not once per page. Shared by a server's connections.
#[derive(Default)]
pub(super) struct Sorted(Mutex<Option<(Vec<Skills>, ByUri)>>);

impl std::fmt::Debug for Sorted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sorted")
    }
}

impl Sorted {
    /// The skills of `snapshot`, sorted by URI.
    pub(super) fn of(&self, snapshot: &Snapshot) -> ByUri {
        let kits = snapshot.kits();
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((lists, sorted)) = held.as_ref()
            && lists.len() == kits.len()
            && lists
                .iter()
                .zip(kits)
                .all(|(list, kit)| Skills::ptr_eq(list, &kit.skills))
        {
            return Arc::clone(sorted);
        }
        let mut skills: Vec<(String, Arc<Skill>)> = snapshot
            .skills()
            .map(|s| (resources::file_uri(s, SKILL_MD), Arc::clone(s)))
            .collect();
        skills.sort_by(|a, b| a.0.cmp(&b.0));
        let sorted = Arc::new(skills);
        let lists = kits.iter().map(|kit| kit.skills.clone()).collect();
        *held = Some((lists, Arc::clone(&sorted)));
        sorted
    }
}

/// The page of `skills/list` after `cursor` (a URI) among `skills` (sorted
/// by URI), at most `size` entries; only the skills of the page are read.
pub(super) fn list(
    skills: &[(String, Arc<Skill>)],
    digests: &Digests,
    cursor: Option<&str>,
    size: usize,
) -> ListSkillsResult {
    let start = cursor.map_or(0, |c| skills.partition_point(|(uri, _)| uri.as_str() <= c));
    let mut page = Vec::new();
    let mut last = start;
    for (i, (_, skill)) in skills.iter().enumerate().skip(start) {
        if page.len() == size {
            break;
        }
        last = i + 1;
        match entry(skill, digests) {
            Ok(entry) => page.push(entry),
            Err(why) => tracing::debug!(skill = %skill.name, "{why}"),
        }
    }
    let next = (last > start && last < skills.len()).then(|| pages::after(&skills[last - 1].0));
    let mut result = ListSkillsResult::with_all_items(page);
    result.next_cursor = next;
    result
}

/// The answer to `skills/get` for `uri`.
pub(super) fn get(
    snapshot: &Snapshot,
    digests: &Digests,
    uri: &str,
) -> Result<GetSkillResult, ErrorData> {
    let not_found = || {
        ErrorData::invalid_params(
            format!("there is no skill `{uri}`; skills/list gives the skills' URIs"),
            None,
        )
    };
    let (skill, path) = resources::locate(snapshot, uri)?.ok_or_else(not_found)?;
    if path != SKILL_MD {
        return Err(not_found());
    }
    let entry = entry(skill, digests).map_err(|why| ErrorData::invalid_params(why, None))?;
    Ok(GetSkillResult::new(entry))
}

/// The answer to `resources/directory/read`: the direct children of the
/// skill folder (or a folder in it) at `uri`, sorted by URI, a page after
/// `cursor`.
pub(super) fn directory(
    snapshot: &Snapshot,
    uri: &str,
    cursor: Option<&str>,
    size: usize,
) -> Result<ReadResourceDirectoryResult, ErrorData> {
    let not_a_directory = |why: String| {
        ErrorData::invalid_params(
            format!(
                "`{uri}` is not a directory of a skill ({why}); a skill's directory is the URI of its SKILL.md without `/SKILL.md`"
            ),
            None,
        )
    };
    let (skill, path) = resources::locate(snapshot, uri)?
        .ok_or_else(|| not_a_directory("no skill has it".into()))?;
    let path = path.trim_end_matches('/');
    let child = |name: &str| match path {
        "" => resources::file_uri(skill, name),
        _ => resources::file_uri(skill, &format!("{path}/{name}")),
    };
    let mut children = Vec::new();
    match skill.dir() {
        None if path.is_empty() => children.push(
            Resource::new(child(SKILL_MD), SKILL_MD)
                .with_mime_type(files::mime_type(SKILL_MD, None)),
        ),
        None => return Err(not_a_directory("the skill has no folder".into())),
        Some(dir) => {
            let folder = match path {
                "" => dir.to_owned(),
                _ => files::resolve_folder(dir, path).map_err(not_a_directory)?,
            };
            let entries = std::fs::read_dir(&folder)
                .map_err(|e| not_a_directory(format!("it cannot be read: {e}")))?;
            for entry in entries.filter_map(Result::ok) {
                let Ok(name) = entry.file_name().into_string() else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                match entry.file_type() {
                    Ok(kind) if kind.is_dir() => children.push(
                        Resource::new(child(&name), name).with_mime_type(DIRECTORY_MIME_TYPE),
                    ),
                    Ok(kind) if kind.is_file() => {
                        let size = entry.metadata().map_or(0, |m| m.len());
                        let mime = files::mime_type(&name, None);
                        children.push(
                            Resource::new(child(&name), name)
                                .with_mime_type(mime)
                                .with_size(size),
                        );
                    }
                    // Links and special files are not served.
                    _ => {}
                }
            }
        }
    }
    children.sort_by(|a, b| a.uri.cmp(&b.uri));
    let (page, next) = pages::page(children, |r| &r.uri, cursor, size);
    let mut result = ReadResourceDirectoryResult::with_all_items(page);
    result.next_cursor = next;
    Ok(result)
}
