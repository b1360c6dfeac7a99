//! Listing a server's skills: through the skills extension when the server
//! declares it, else from its `skill://…/SKILL.md` resources.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rmcp::model::{Skill as Entry, SkillResources, SkillValidationError, skill_name_from_uri};
use rmcp::service::{Peer, RoleClient, ServiceError};
use skillkit_parser::{Diagnostic, Severity, SkillDocument, kit as kit_rule};

use super::fetch::{self, Folder, Server, SkillFile};
use crate::kit::{Kit, Origin};
use crate::skill::{Body, Skill};

/// Kit `kit` of the server's skills and how long the listing holds (its
/// `ttlMs`, when the server gave one).
pub(super) async fn list(
    peer: &Peer<RoleClient>,
    kit: &str,
    server: &Arc<Server>,
) -> Result<(Kit, Option<u64>), ServiceError> {
    let mut listing = Listing::default();
    let extension = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.supports_skills());
    let how = if extension {
        "skills-extension"
    } else {
        "skill-resources"
    };
    let ttl_ms = if extension {
        let merged = peer.list_all_skills_with_cache_hint().await?;
        for entry in merged.items {
            listing.entry(kit, entry, server);
        }
        merged.ttl_ms
    } else {
        let merged = peer.list_all_resources_with_cache_hint().await?;
        for resource in merged.items {
            if resource.uri.starts_with("skill://") && skill_name_from_uri(&resource.uri).is_some()
            {
                listing.resource(kit, peer, &resource.uri).await;
            }
        }
        merged.ttl_ms
    };
    server.files.keep(&listing.digests);
    let mut skills = listing.skills;
    let mut diagnostics = listing.diagnostics;
    diagnostics.extend(kit_rule::dedup(
        &mut skills,
        "skill",
        Severity::Warning,
        |s: &Skill| kit_rule::Declared::new(&s.name),
    ));
    let mut built = Kit::new(kit.to_owned()).with_origin(Origin::Mcp);
    built
        .skills
        .make_mut()
        .extend(skills.into_iter().map(Arc::new));
    built.diagnostics = diagnostics;
    built.metadata.insert("provider".into(), "mcp".into());
    // `skills/list`, or an older server's `skill://` resources.
    built.metadata.insert("listing".into(), how.into());
    let source = server.connection.endpoint().to_string();
    built.metadata.insert("source".into(), source.into());
    if let Some(info) = peer.peer_info() {
        // The revision the connection speaks (`2026-07-28`, `2025-11-25`, …).
        let revision = info.protocol_version.to_string();
        built.metadata.insert("revision".into(), revision.into());
        if let Some(server) = &info.server_info {
            built
                .metadata
                .insert("server".into(), server.name.clone().into());
        }
    }
    Ok((built, ttl_ms))
}

#[derive(Default)]
struct Listing {
    skills: Vec<Skill>,
    diagnostics: Vec<Diagnostic>,
    /// The digests the manifests list, whose files are worth keeping.
    digests: HashSet<String>,
}

impl Listing {
    /// A `skills/list` entry: its frontmatter read with the file rules, its
    /// body left on the server with the digest it must have.
    fn entry(&mut self, kit: &str, entry: Entry, server: &Arc<Server>) {
        let uri = entry.uri.clone();
        let at = |d: Diagnostic| d.with_path(&uri);
        match entry.validate() {
            Ok(()) => {}
            // Loading is lenient about names, as for files: the parser warns.
            Err(
                SkillValidationError::InvalidName(_) | SkillValidationError::NameMismatch { .. },
            ) => {}
            Err(problem) => {
                self.diagnostics.push(at(Diagnostic::error(
                    0,
                    0,
                    format!("{problem}: the skill is skipped; the server's listing breaks the skills extension"),
                )));
                return;
            }
        }
        let folder = skill_name_from_uri(&uri)
            .and_then(|name| percent_decode_str(name).decode_utf8().ok())
            .map(|name| name.into_owned());
        let map = match serde_json::to_value(&entry.frontmatter) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let files = match entry.resources {
            SkillResources::Files(files) => files,
            _ => Vec::new(),
        };
        self.digests
            .extend(files.iter().map(|file| file.digest.clone()));
        let manifest = files.iter().find(|file| file.uri == uri).cloned();
        // The folder the files are written into on activation: known now,
        // so the skill has a location like a skill on disk.
        let source = server.connection.endpoint().to_string();
        let files_folder = match (&manifest, server.folders.root()) {
            (Some(_), Some(root)) => Folder::plan(root, &source, &uri, &files),
            _ => None,
        };
        let parsed = SkillDocument::from_frontmatter(map, folder.as_deref())
            .and_then(|doc| self.skill(kit, doc, &uri));
        match parsed {
            Ok(mut skill) => {
                if let Some(files_folder) = &files_folder {
                    skill = skill.with_location(files_folder.dir.join("SKILL.md"));
                }
                let file = SkillFile::new(server, uri.clone(), manifest, files_folder);
                self.skills
                    .push(skill.with_body(Body::remote(Arc::new(file))));
            }
            Err(d) => self.diagnostics.push(at(d)),
        }
    }

    /// An older server's `skill://…/SKILL.md` resource, read now (there is
    /// no listing of its frontmatter without it).
    async fn resource(&mut self, kit: &str, peer: &Peer<RoleClient>, uri: &str) {
        let parsed = match fetch::read(peer, uri).await {
            Ok(bytes) => SkillDocument::parse_file(Path::new(uri), &bytes)
                .and_then(|doc| self.skill(kit, doc, uri)),
            Err(why) => {
                Err(Diagnostic::error(0, 0, format!("{why}; the skill is skipped")).with_path(uri))
            }
        };
        match parsed {
            Ok(skill) => self.skills.push(skill),
            Err(d) => self.diagnostics.push(d),
        }
    }

    /// The skill of a parsed document, its warnings kept as the kit's.
    fn skill(&mut self, kit: &str, mut doc: SkillDocument, uri: &str) -> Result<Skill, Diagnostic> {
        self.diagnostics
            .extend(doc.warnings.drain(..).map(|d| d.with_path(uri)));
        Skill::from_document(kit, doc, None).map_err(|d| d.with_path(uri))
    }
}
