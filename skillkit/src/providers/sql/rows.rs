//! Rows and values: a skill or agent as the columns of its row, checked with
//! the rules of `SKILL.md` when written (strictly) and when read (leniently,
//! as files are loaded: what cannot be served is a diagnostic naming the row).

use std::borrow::Cow;
use std::path::PathBuf;

use skillkit_parser::{Diagnostic, SkillDocument, name};

use super::SqlError;
use crate::agent_definition::AgentDefinition;
use crate::skill::{Maps, Metadata, More, Skill};

/// The table of skill rows.
pub(super) const SKILLS: &str = "skillkit_skills";
/// The table of agent rows.
pub(super) const AGENTS: &str = "skillkit_agents";

/// A row of `skillkit_skills`. `description` is `NULL` when `body` holds a
/// whole `SKILL.md` (a file pasted into the table as it is).
#[derive(Debug, Clone, sqlx::FromRow)]
pub(super) struct SkillRow {
    pub(super) kit: String,
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) body: String,
    pub(super) license: Option<String>,
    pub(super) compatibility: Option<String>,
    pub(super) allowed_tools: String,
    pub(super) metadata: String,
    pub(super) model: Option<String>,
    pub(super) required_scope: Option<String>,
    pub(super) extra: String,
    pub(super) deleted: bool,
}

/// A row of `skillkit_agents`: the kit's root agent or one of its sub-agents.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(super) struct AgentRow {
    pub(super) kit: String,
    pub(super) root: bool,
    pub(super) name: String,
    pub(super) description: String,
    pub(super) model: Option<String>,
    pub(super) system_prompt: String,
    pub(super) tools: String,
    pub(super) max_turns: Option<i64>,
    pub(super) max_agent_depth: Option<i64>,
    pub(super) metadata: String,
    pub(super) extra: String,
    pub(super) deleted: bool,
}

/// Where a row is, for diagnostics: `<table>/<kit>/<name>`.
pub(super) fn address(table: &str, kit: &str, name: &str) -> PathBuf {
    PathBuf::from(format!("{table}/{kit}/{name}"))
}

/// The text of `skill`'s body: the one place this module reads it (from its
/// file, for a skill a file provider left there).
pub(super) fn body_text(skill: &Skill) -> Result<Cow<'_, str>, SqlError> {
    skill
        .body
        .read()
        .map_err(|e| SqlError::Refused(format!("skill `{}`: {e}", skill.name)))
}

/// Refuses a kit name that cannot be the `<kit>` of `<kit>:<skill>`.
pub(super) fn check_kit(kit: &str) -> Result<(), SqlError> {
    if kit.trim().is_empty() || kit.contains(name::SEPARATOR) || kit.trim() != kit {
        return Err(SqlError::Refused(format!(
            "kit name `{kit}` is not a kit name: it must be non-empty, without `{}` and without \
             surrounding spaces",
            name::SEPARATOR
        )));
    }
    Ok(())
}

/// The bare part of `name` in kit `kit` under the naming rule (`<kit>:<skill>`:
/// a bare name, or one prefixed with this kit; the whitespace around it not
/// part of it, as in a file), or the rule it breaks.
pub(super) fn bare_name(kit: &str, name: &str) -> Result<String, SqlError> {
    check_kit(kit)?;
    let full = name::qualify(kit, name).map_err(SqlError::Refused)?;
    Ok(name::split(&full).1.to_owned())
}

/// Refuses a description that is empty (`SKILL.md` requires one).
fn check_description(what: &str, full: &str, description: &str) -> Result<(), SqlError> {
    if description.trim().is_empty() {
        return Err(SqlError::Refused(format!(
            "{what} `{full}` has an empty description; say what it does and when to use it"
        )));
    }
    Ok(())
}

fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // Maps and lists of strings always serialise.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

impl SkillRow {
    /// The row of `skill` in kit `kit`, refused when its name breaks the
    /// naming rule (`<kit>:<skill>`, the Agent Skills charset) or its
    /// description is empty.
    pub(super) fn of(kit: &str, skill: &Skill) -> Result<SkillRow, SqlError> {
        let bare = bare_name(kit, &skill.name)?;
        let full = format!("{kit}{}{bare}", name::SEPARATOR);
        let problems = name::problems(&bare, None);
        if !problems.is_empty() {
            return Err(SqlError::Refused(format!(
                "skill name `{full}` breaks the naming rule: {}",
                problems.join("; ")
            )));
        }
        check_description("skill", &full, &skill.description)?;
        Ok(SkillRow {
            kit: kit.to_owned(),
            name: bare,
            description: Some(skill.description.to_string()),
            body: body_text(skill)?.into_owned(),
            license: skill.license().map(str::to_owned),
            compatibility: skill.compatibility().map(str::to_owned),
            allowed_tools: json(skill.allowed_tools()),
            metadata: json(skill.metadata()),
            model: skill.model().map(str::to_owned),
            required_scope: skill.required_scope().map(str::to_owned),
            extra: json(skill.extra()),
            deleted: false,
        })
    }

    /// The skill this row holds and the warnings about it, or why it cannot
    /// be served. Every diagnostic names the row.
    pub(super) fn skill(&self) -> Result<(Skill, Vec<Diagnostic>), Diagnostic> {
        let at = address(SKILLS, &self.kit, &self.name);
        let fail = |message: String| Diagnostic::error(0, 0, message).with_path(&at);
        let Some(description) = &self.description else {
            return self.document(&at);
        };
        let full = name::qualify(&self.kit, &self.name).map_err(fail)?;
        if description.trim().is_empty() {
            return Err(fail(
                "the description is empty; say what the skill does and when to use it".into(),
            ));
        }
        let skill = Skill::new(full, description.clone())
            .with_body(self.body.clone())
            .with_more(More {
                license: self.license.clone().map(Cow::Owned),
                compatibility: self.compatibility.clone().map(Cow::Owned),
                allowed_tools: strings("allowed_tools", &self.allowed_tools).map_err(fail)?,
                model: self.model.clone().map(Cow::Owned),
                required_scope: self.required_scope.clone().map(Cow::Owned),
                maps: Maps::new(
                    object("metadata", &self.metadata).map_err(fail)?,
                    object("extra", &self.extra).map_err(fail)?,
                ),
            });
        let warnings = name::problems(name::split(&skill.name).1, None)
            .into_iter()
            .map(|problem| Diagnostic::warning(0, 0, problem).with_path(&at))
            .collect();
        Ok((skill, warnings))
    }

    /// A row whose `body` is a whole `SKILL.md`, read by the one parser.
    fn document(&self, at: &std::path::Path) -> Result<(Skill, Vec<Diagnostic>), Diagnostic> {
        let named = |mut d: Diagnostic| {
            d.path = Some(at.to_path_buf());
            d
        };
        let mut doc = SkillDocument::parse(&self.body).map_err(named)?;
        let warnings = std::mem::take(&mut doc.warnings)
            .into_iter()
            .map(named)
            .collect();
        let column = name::qualify(&self.kit, &self.name)
            .map_err(|m| Diagnostic::error(0, 0, m).with_path(at))?;
        let skill = Skill::from_document(&self.kit, doc, None).map_err(named)?;
        if skill.name != column {
            return Err(Diagnostic::error(
                2,
                1,
                format!(
                    "the frontmatter names the skill `{}`, but the row's `name` column makes it \
                     `{column}`; make them agree",
                    skill.name
                ),
            )
            .with_path(at));
        }
        Ok((skill, warnings))
    }
}

impl AgentRow {
    /// The row of `agent` in kit `kit`: its root agent when `root`, else a
    /// sub-agent (whose name follows the naming rule). Refused when the name
    /// breaks the rule or the description is empty.
    pub(super) fn of(kit: &str, root: bool, agent: &AgentDefinition) -> Result<AgentRow, SqlError> {
        check_kit(kit)?;
        let name = match root {
            true if agent.name.trim().is_empty() => {
                return Err(SqlError::Refused(format!(
                    "the root agent of kit `{kit}` has no name; name it (usually `{kit}`)"
                )));
            }
            true => agent.name.trim().to_owned(),
            false => bare_name(kit, &agent.name)?,
        };
        check_description("agent", &agent.name, &agent.description)?;
        Ok(AgentRow {
            kit: kit.to_owned(),
            root,
            name,
            description: agent.description.to_string(),
            model: agent.model.as_deref().map(str::to_owned),
            system_prompt: agent.system_prompt.to_string(),
            tools: json(&agent.tools),
            max_turns: agent.max_turns.map(i64::from),
            max_agent_depth: agent.max_agent_depth.map(i64::from),
            metadata: json(&agent.metadata),
            extra: json(&agent.extra),
            deleted: false,
        })
    }

    /// The agent this row holds, or why it cannot be served (naming the row).
    pub(super) fn agent(&self) -> Result<AgentDefinition, Diagnostic> {
        let at = address(AGENTS, &self.kit, &self.name);
        let fail = |message: String| Diagnostic::error(0, 0, message).with_path(&at);
        let name = match self.root {
            true => self.name.trim().to_owned(),
            false => name::qualify(&self.kit, &self.name).map_err(fail)?,
        };
        if self.description.trim().is_empty() || name.trim().is_empty() {
            return Err(fail(
                "the name or the description is empty; an agent needs both".into(),
            ));
        }
        let limit = |column: &str, value: Option<i64>| {
            value
                .map(|v| u32::try_from(v).map_err(|_| format!("`{column}` is {v}, not a count")))
                .transpose()
        };
        let mut agent = AgentDefinition::new(name, self.description.clone())
            .with_system_prompt(self.system_prompt.clone());
        agent.model = self.model.clone().map(Cow::Owned);
        agent.tools = strings("tools", &self.tools).map_err(fail)?;
        agent.max_turns = limit("max_turns", self.max_turns).map_err(fail)?;
        agent.max_agent_depth = limit("max_agent_depth", self.max_agent_depth).map_err(fail)?;
        agent.metadata = object("metadata", &self.metadata).map_err(fail)?;
        agent.extra = object("extra", &self.extra).map_err(fail)?;
        Ok(agent)
    }
}

/// A JSON column that must hold an array of strings.
fn strings(column: &str, text: &str) -> Result<Vec<Cow<'static, str>>, String> {
    serde_json::from_str::<Vec<String>>(text)
        .map(|list| list.into_iter().map(Cow::Owned).collect())
        .map_err(|e| format!("`{column}` is not a JSON array of strings ({e}): `{text}`"))
}

/// A JSON column that must hold an object.
fn object(column: &str, text: &str) -> Result<Metadata, String> {
    serde_json::from_str::<Metadata>(text)
        .map_err(|e| format!("`{column}` is not a JSON object ({e}): `{text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kit: &str, name: &str) -> SkillRow {
        SkillRow::of(kit, &Skill::new(name.to_owned(), "Does a thing.")).unwrap()
    }

    #[test]
    fn a_skill_round_trips_through_its_row() {
        let mut skill = Skill::new("files:read", "Read a file.")
            .with_body("Read $ARGUMENTS.")
            .with_allowed_tools(["Read"])
            .with_license("MIT");
        skill.metadata_mut().insert("author".into(), "me".into());
        skill
            .extra_mut()
            .insert("argument-hint".into(), "<path>".into());
        let row = SkillRow::of("files", &skill).unwrap();
        assert_eq!(row.name, "read");
        let (back, warnings) = row.skill().unwrap();
        assert!(warnings.is_empty());
        assert_eq!(back.name, "files:read");
        assert_eq!(back.body.as_text(), Some("Read $ARGUMENTS."));
        assert_eq!(back.allowed_tools(), ["Read"]);
        assert_eq!(back.metadata()["author"], "me");
        assert_eq!(back.extra()["argument-hint"], "<path>");
        assert_eq!(back.license(), Some("MIT"));
    }

    #[test]
    fn names_are_refused_with_the_rule() {
        let other = SkillRow::of("files", &Skill::new("net:fetch", "d")).unwrap_err();
        assert!(other.to_string().contains("names kit `net`"), "{other}");
        let charset = SkillRow::of("files", &Skill::new("Read It", "d")).unwrap_err();
        assert!(charset.to_string().contains("lowercase"), "{charset}");
        assert!(SkillRow::of("a:b", &Skill::new("x", "d")).is_err());
        assert!(SkillRow::of("files", &Skill::new("read", " ")).is_err());
        assert_eq!(row("files", "files:read").name, "read");
    }

    #[test]
    fn a_corrupt_row_is_a_diagnostic_naming_it() {
        let mut bad = row("files", "read");
        bad.metadata = "[1, 2".into();
        let d = bad.skill().unwrap_err();
        assert!(
            d.to_string()
                .starts_with("skillkit_skills/files/read: error: `metadata`")
        );
        let mut pasted = row("files", "read");
        pasted.description = None;
        pasted.body = "---\nname: [oops\n---\nBody".into();
        let d = pasted.skill().unwrap_err();
        assert!(
            d.to_string().starts_with("skillkit_skills/files/read:"),
            "{d}"
        );
        pasted.body = "---\nname: read\ndescription: Read.\n---\nBody".into();
        assert_eq!(pasted.skill().unwrap().0.description, "Read.");
    }
}
